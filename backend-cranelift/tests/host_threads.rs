//! Host steps run on the threads the backend was told to use. One test in its own binary: it
//! reads a process-wide diagnostic that other tests running at the same time would move.

use ndarray::ArrayD;
use pytato_backend_cranelift::Cranelift;
use pytato_core::function::InlineRule;
use pytato_core::{ArrayData, DType, Dim};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, Outputs, WithInlineRule};
use pytato_runtime::host_threads::latest_host_step_threads;

#[test]
fn host_steps_run_on_the_threads_asked_for() {
    let n = Dim::param("n");
    let x = pt::placeholder("x", [n], DType::F64).unwrap();
    // A sort and a compaction, whose operands and consumers are kernels.
    let sorted = pt::sort(&(&x * 2.0), pt::SortOptions::default()).unwrap();
    let positive = pt::greater(&sorted, 0.0).unwrap();
    let outputs = Outputs::from(pt::sum(&pt::extract(&positive, &sorted).unwrap(), None).unwrap());
    let values: Vec<f64> = (0..200_000).map(|i| ((i * 7919) % 1013) as f64 - 500.5).collect();
    let inputs =
        NamedData::from([("x".into(), ArrayData::from(ArrayD::from_shape_vec(vec![values.len()], values).unwrap()))]);
    let mut results = Vec::new();
    for threads in [1, 2, 3] {
        let program = Cranelift::new().with_threads(threads).compile(&outputs).unwrap();
        results.push(program.run(&inputs).unwrap());
        assert_eq!(latest_host_step_threads(), threads, "with_threads({threads})");
        // The same backend under another rule for calls: its host steps still on its threads.
        let ruled = WithInlineRule::new(Box::new(Cranelift::new().with_threads(threads)), InlineRule::Never);
        results.push(ruled.compile(&outputs).unwrap().run(&inputs).unwrap());
        assert_eq!(latest_host_step_threads(), threads, "WithInlineRule of with_threads({threads})");
    }
    assert!(results.windows(2).all(|w| w[0] == w[1]), "the same bits on any number of threads");
    if std::env::var_os("PYTATO_NUM_THREADS").is_none() {
        // Nothing asked for: rayon's global pool, which RAYON_NUM_THREADS sizes.
        Cranelift::new().compile(&outputs).unwrap().run(&inputs).unwrap();
        assert_eq!(latest_host_step_threads(), rayon::current_num_threads());
    }
}
