//! A stop requested while a run is in progress (`pytato_runtime::interrupt`, Ctrl-C) ends it
//! with `Error::Interrupted` on every backend, and the next run after the request is withdrawn
//! gives its values.
//!
//! The request is process-wide, so this binary holds only these tests, and they take turns
//! (`TURN`). The long runs would take minutes (seconds on a GPU) uninterrupted; a test that stops
//! failing to stop them fails by its run returning `Ok`, not by a time limit.

use std::sync::Mutex;
use std::time::Duration;

use pytato_core::{ArrayData, DType, Dim, Error};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, Outputs};
use pytato_runtime::interrupt;

static TURN: Mutex<()> = Mutex::new(());

fn backends() -> Vec<(String, Box<dyn Backend>)> {
    let mut instances = pytato_conformance::linked_backends();
    // Launches split over threads check between their rows too.
    instances
        .push(("cranelift on 2 threads".into(), Box::new(pytato_backend_cranelift::Cranelift::new().with_threads(2))));
    instances
}

/// `sum(sin(x[:, None] * x[None, :]), axis=1)`: n² sines, n outputs (rows between checks).
fn quadratic(n: usize) -> (Outputs, NamedData) {
    let x = pt::placeholder("x", [Dim::from(n)], DType::F64).unwrap();
    let column = pt::expand_dims(&x, 1).unwrap();
    let row = pt::expand_dims(&x, 0).unwrap();
    let y = pt::sum(&pt::sin(&(&column * &row)).unwrap(), 1).unwrap();
    let values = (0..n).map(|i| i as f64 / n as f64).collect::<Vec<_>>();
    let inputs = NamedData::from([("x".to_string(), ArrayData::F64(ndarray::arr1(&values).into_dyn()))]);
    ((&y).into(), inputs)
}

/// A short run after the request is withdrawn gives numpy's values (computed here by hand).
fn runs_again(name: &str, backend: &dyn Backend) {
    let (outputs, inputs) = quadratic(3);
    let got = backend.compile(&outputs).unwrap().run(&inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
    let ArrayData::F64(y) = &got[pytato_runtime::backend::SINGLE_OUTPUT_NAME] else { panic!("{name}: not float64") };
    let x: [f64; 3] = [0.0, 1.0 / 3.0, 2.0 / 3.0];
    for (i, &got) in y.iter().enumerate() {
        let want: f64 = x.iter().map(|&xj| (x[i] * xj).sin()).sum();
        assert!((got - want).abs() <= 1e-15, "{name}: row {i}: {got} != {want}");
    }
}

fn assert_interrupted(name: &str, result: pytato_core::Result<NamedData>) {
    match result {
        Err(Error::Interrupted { op }) => assert!(!op.is_empty(), "{name}"),
        Err(e) => panic!("{name}: {e} (expected an interruption)"),
        Ok(_) => panic!("{name}: the run ran to its end"),
    }
}

#[test]
fn a_stop_requested_before_a_run_ends_it_at_its_first_check() {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    for (name, backend) in backends() {
        let (outputs, inputs) = quadratic(64);
        let program = backend.compile(&outputs).unwrap();
        interrupt::request();
        assert_interrupted(&name, program.run(&inputs));
        assert_interrupted(&name, program.run(&inputs));
        interrupt::clear();
        program.run(&inputs).unwrap_or_else(|e| panic!("{name}: {e}"));
        runs_again(&name, &*backend);
    }
}

#[test]
fn a_stop_requested_during_a_long_run_ends_it() {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    for (name, backend) in backends() {
        let n = match name.as_str() {
            // Minutes on the interpreter even at 4,000 (and memory for n² values).
            "interp" => 4_000,
            // One dispatch the GPU finishes after the stop (the wait ends, the work does not):
            // seconds on lavapipe, and too short to stop on a real GPU.
            "wgpu" => {
                let adapter = pytato_backend_wgpu::Wgpu::new().unwrap().adapter();
                if !adapter.contains("llvmpipe") {
                    eprintln!("wgpu: the long run is too short on {adapter}: skipped");
                    continue;
                }
                20_000
            }
            _ => 200_000,
        };
        let (outputs, inputs) = quadratic(n);
        let program = backend.compile(&outputs).unwrap();
        interrupt::clear();
        std::thread::scope(|s| {
            let run = s.spawn(|| program.run(&inputs));
            std::thread::sleep(Duration::from_millis(300));
            interrupt::request();
            assert_interrupted(&name, run.join().unwrap());
        });
        interrupt::clear();
        runs_again(&name, &*backend);
    }
}

/// A launch of few rows that each take long: 20 sums of `2^28` terms each (more outputs than a
/// split reduction takes), and their total, one output whose reduction the threads share in 64
/// parts. Cranelift checked for a stop only every 1024 rows, so neither checked at all and both
/// ran to their end after the request; now each checks after every row.
#[test]
fn a_stop_ends_a_run_of_few_long_rows_at_the_next_row() {
    let _turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
    let a = pt::placeholder("a", [20], DType::F64).unwrap();
    let terms = pt::arange(0, 1i64 << 28, 1, DType::F64).unwrap();
    let product = &pt::expand_dims(&a, 1).unwrap() * &pt::expand_dims(&terms, 0).unwrap();
    let rows = pt::sum(&product, 1).unwrap();
    let total = pt::sum(&product, pt::Axes::All).unwrap();
    let values = (0..20).map(|i| 1.0 / (i + 1) as f64).collect::<Vec<_>>();
    let inputs = NamedData::from([("a".to_string(), ArrayData::F64(ndarray::arr1(&values).into_dyn()))]);
    let cranelift = pytato_backend_cranelift::Cranelift::new();
    let cases: [(&str, &pytato_core::Array, usize); 3] =
        [("20 rows, 1 thread", &rows, 1), ("20 rows, 2 threads", &rows, 2), ("a split total, 2 threads", &total, 2)];
    for (name, output, threads) in cases {
        let program = cranelift.clone().with_threads(threads).compile(&output.into()).unwrap();
        interrupt::clear();
        std::thread::scope(|s| {
            let run = s.spawn(|| program.run(&inputs));
            std::thread::sleep(Duration::from_millis(300));
            interrupt::request();
            assert_interrupted(name, run.join().unwrap());
        });
        interrupt::clear();
    }
}
