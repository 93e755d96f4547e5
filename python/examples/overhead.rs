//! The Rust half of `python/bench/overhead.py`: the same small DAG built, compiled (a cache hit)
//! and run through the Rust API, timed the same way, printed as JSON for the script to compare
//! with the Python bindings and upstream pytato.
//!
//! Run: `cargo run --release -p pytato-python --example overhead` (the script does).

use std::time::Instant;

use ndarray::{Array1, ArrayD};
use pytato as pt;
use pytato::backend::{NamedViews, NamedViewsMut, Outputs};
use pytato::{DType, DictOfNamedArrays};

const STEPS: usize = 10;
const REPEATS: usize = 200;

/// Ten heat-equation steps and the energy of arrays of length `n`, two outputs (as the Python
/// script builds it).
fn build(n: usize) -> pt::Result<Outputs> {
    let x = pt::placeholder("x", &[n][..], DType::F64)?;
    let mut u = x;
    for _ in 0..STEPS {
        let laplacian = pt::roll(&u, 1, Some(0))? - 2.0 * &u + pt::roll(&u, -1, Some(0))?;
        u = &u + 0.25 * &laplacian;
    }
    let energy = pt::sum(&(&u * &u), None)?;
    Ok(DictOfNamedArrays::new([("u", u), ("energy", energy)])?.into())
}

/// The median of `REPEATS` timings of `f`, in microseconds.
fn median_us(mut f: impl FnMut()) -> f64 {
    let mut times: Vec<f64> = (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[REPEATS / 2]
}

fn main() -> pt::Result<()> {
    let backend = pt::default_backend()?;
    let start = Instant::now();
    drop(backend.compile(&build(16)?)?);
    let first_compile = start.elapsed().as_secs_f64() * 1e6;

    let mut results = vec![("first_compile".to_string(), first_compile)];
    let build_time = median_us(|| drop(build(16).unwrap()));
    results.push(("build".into(), build_time));
    results.push((
        "compile_cached".into(),
        median_us(|| drop(backend.compile(&build(16).unwrap()).unwrap())) - build_time,
    ));
    for n in [16usize, 100_000] {
        let program = backend.compile(&build(n)?)?;
        let data: ArrayD<f64> = Array1::linspace(0.0, 1.0, n).into_dyn();
        let inputs = NamedViews::from([("x", data.view().into())]);
        results.push((format!("call_{n}"), median_us(|| drop(program.run_views(&inputs).unwrap()))));
        let mut u = ArrayD::<f64>::zeros(data.shape());
        let mut energy = ArrayD::<f64>::zeros(ndarray::IxDyn(&[]));
        results.push((
            format!("run_into_{n}"),
            median_us(|| {
                let mut outputs =
                    NamedViewsMut::from([("u", u.view_mut().into()), ("energy", energy.view_mut().into())]);
                program.run_into(&inputs, &mut outputs).unwrap();
            }),
        ));
    }
    let fields: Vec<String> = results.iter().map(|(k, v)| format!("\"{k}\": {v:.3}")).collect();
    println!("{{\"backend\": \"{}\", {}}}", backend.name(), fields.join(", "));
    Ok(())
}
