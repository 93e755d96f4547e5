//! A driver compiles every pipeline when it is created (tens of milliseconds each for a kernel
//! of DG on NVIDIA's), so a compile creates only the pipelines runs take: a kernel that may run
//! with 32-bit indices gets its 64-bit form when a run's sizes first need it.
//!
//! One test function, run alone in this binary: the count of pipelines is the process's.

mod support;
use support::gpu;

use pytato_core::{ArrayData, DType, Scalar};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

#[test]
fn the_64_bit_form_of_a_kernel_is_compiled_by_the_first_run_that_needs_it() {
    let Some(w) = gpu() else { return };
    if !w.int64() {
        return;
    }
    // x * m + 0.375: the size parameter m is a value here, and a run with m >= 2^31 needs
    // 64-bit integers (the constant keeps the DAG apart from those of other tests).
    let x = pt::placeholder("x", [3], DType::F64).unwrap();
    let m = pt::size_param("m").unwrap();
    let y = pt::add(pt::multiply(&x, &m).unwrap(), 0.375).unwrap();
    let before = w.pipelines_created();
    let program = w.compile(&(&y).into()).unwrap();
    assert_eq!(w.pipelines_created() - before, 1, "compiled: the 32-bit form only");
    let run = |m: i64| {
        let inputs = NamedData::from([
            ("x".to_string(), ArrayData::from(ndarray::Array1::from(vec![1.0, -2.0, 0.5]).into_dyn())),
            ("m".to_string(), ArrayData::from_scalars(DType::I64, &[], [Scalar::I64(m)]).unwrap()),
        ]);
        let out = program.run(&inputs).unwrap();
        out["_pt_out"].to_scalars().iter().map(Scalar::to_f64).collect::<Vec<_>>()
    };
    let small = run(3);
    assert_eq!(small, vec![3.375, -5.625, 1.875]);
    assert_eq!(w.pipelines_created() - before, 1, "a run with small sizes compiles nothing");
    let big = (1i64 << 33) + 1;
    let want: Vec<f64> = [1.0, -2.0, 0.5].iter().map(|v| v * big as f64 + 0.375).collect();
    assert_eq!(run(big), want);
    assert_eq!(w.pipelines_created() - before, 2, "the first run with 64-bit sizes compiles that form");
    assert_eq!(run(big), want);
    assert_eq!(run(3), small);
    assert_eq!(w.pipelines_created() - before, 2, "once");
}
