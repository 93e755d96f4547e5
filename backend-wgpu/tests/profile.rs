//! `PYTATO_PROFILE=gpu`: every dispatch is timed on the GPU and reported by shader. The device
//! reads the variable when it opens, once per process, so the test runs its profiled half in a
//! child process of this binary.

mod support;
use support::gpu;

use ndarray::ArrayD;
use pytato_backend_wgpu::profile::{PROFILE_VAR, take_report};
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, Outputs};

const TEST: &str = "dispatches_are_timed_by_shader_when_asked";

#[test]
fn dispatches_are_timed_by_shader_when_asked() {
    if std::env::var_os(PROFILE_VAR).is_none() {
        let Some(_) = gpu() else { return };
        assert!(take_report().is_none(), "no profile unless {PROFILE_VAR}=gpu");
        let (passed, text) = support::run_test_in_child(TEST, PROFILE_VAR, "gpu");
        assert!(passed, "the profiled run failed:\n{text}");
        return;
    }
    let Some(w) = gpu() else { return };
    let Some(empty) = take_report() else {
        eprintln!("skipped: this adapter has no timestamp queries");
        return;
    };
    assert_eq!(empty.lines().count(), 1, "a header and no shader before any run:\n{empty}");

    let n = Dim::param("n");
    let x = pt::placeholder("x", [n.clone(), Dim::new(3)], DType::F64).unwrap();
    let total = pt::sum(&(&x * 2.0), None).unwrap();
    let y = &x + 1.0;
    let outputs = Outputs::from(DictOfNamedArrays::new([("total", total), ("y", y)]).unwrap());
    let program = w.compile(&outputs).unwrap();
    let rows = 200_000;
    let inputs = NamedData::from([(
        "x".to_string(),
        ArrayData::from(ArrayD::from_shape_vec(vec![rows, 3], (0..3 * rows).map(|i| i as f64).collect()).unwrap()),
    )]);
    for _ in 0..3 {
        program.run(&inputs).unwrap();
    }
    let report = take_report().expect("profiling is on");
    println!("{report}");
    // The sum is long enough to be split: its block sums, their tree and the kernels that
    // write `total` and `y`, each timed on every run.
    for shader in
        ["block sums of total (float64", "tree of total (float64", "kernel y (float64", "kernel total (float64"]
    {
        let line = report.lines().find(|l| l.contains(shader)).unwrap_or_else(|| panic!("{shader} in:\n{report}"));
        let fields: Vec<&str> = line.split_whitespace().collect();
        let passes: u64 = fields[0].parse().unwrap();
        let total_us: f64 = fields[1].parse().unwrap();
        assert!(passes >= 3 && passes.is_multiple_of(3), "{shader}: {passes} passes in three runs:\n{report}");
        assert!(total_us > 0.0, "{shader}: some GPU time:\n{report}");
    }
    assert_eq!(take_report().expect("profiling is on").lines().count(), 1, "a report empties the table");
}
