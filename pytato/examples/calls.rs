//! 1,000 calls of one 100-node function against the same computation written inline: build,
//! compile and run times on the default backend.
//!
//! The DAG with calls compiles the way the backend's inline rule says; with the default rule
//! (`InlineRule::Size`, 10,000 nodes) a 101-node function called at 1,000 sites is *outlined*: its
//! body is compiled once and each call runs that program. The inline DAG is 100,000 nodes that
//! the backend compiles (and fuses) as one program. `--sizes` picks the lengths of `x` to run
//! (default `1000,100000`).
//!
//! `cargo run --release -p pytato --example calls`

use std::time::{Duration, Instant};

use pytato as pt;
use pytato::backend::{NamedData, Program};
use pytato::{Array, ArrayData, DType, Dim};

/// 100 nodes: a chain of elementwise steps.
fn body(a: &Array) -> pt::Result<Array> {
    let mut y = a.clone();
    for k in 0..50 {
        y = pt::sin(&(&y * (1.0 + k as f64 * 1e-3)))?;
    }
    Ok(y)
}

/// The median of five runs, and the output's last element.
fn time_runs(program: &dyn Program, data: &NamedData) -> pt::Result<(Duration, f64)> {
    let mut times = Vec::new();
    let mut value = 0.0;
    for _ in 0..5 {
        let start = Instant::now();
        let out = program.run(data)?;
        times.push(start.elapsed());
        value = out["_pt_out"].to_scalars().last().expect("n > 0").to_f64();
    }
    times.sort();
    Ok((times[2], value))
}

fn main() -> pt::Result<()> {
    let sizes: Vec<usize> = match std::env::args().skip_while(|a| a != "--sizes").nth(1) {
        Some(list) => list.split(',').map(|s| s.parse().expect("--sizes takes lengths, like 1000,100000")).collect(),
        None => vec![1000, 100_000],
    };
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64)?;
    let sites = 1000;
    let start = Instant::now();
    let mut called = x.clone();
    for _ in 0..sites {
        called = pt::trace_call(|args| Ok(vec![body(&args[0])?]), &[&called])?.remove(0);
    }
    let build_calls = start.elapsed();
    let start = Instant::now();
    let mut inline = x.clone();
    for _ in 0..sites {
        inline = body(&inline)?;
    }
    let build_inline = start.elapsed();
    let backend = pt::default_backend()?;
    println!(
        "{sites} calls of a {}-node function on {} (inline rule {:?})",
        pt::function::call_sites(&(&called).into()).keys().next().expect("one function").body_size(),
        backend.name(),
        backend.inline_rule()
    );
    for (what, y, built) in [("calls", &called, build_calls), ("inline", &inline, build_inline)] {
        let start = Instant::now();
        let program = backend.compile(&y.into())?;
        let compiled = start.elapsed();
        print!(
            "{what:<7} build {:>7.1} ms  compile {:>8.1} ms",
            built.as_secs_f64() * 1e3,
            compiled.as_secs_f64() * 1e3
        );
        for &n in &sizes {
            let data = NamedData::from([(
                "x".to_string(),
                ArrayData::from(ndarray::Array1::linspace(0.0, 1.0, n).into_dyn()),
            )]);
            let (ran, value) = time_runs(&*program, &data)?;
            print!("  run(n={n}) {:>8.2} ms (last = {value:.12})", ran.as_secs_f64() * 1e3);
        }
        println!();
    }
    Ok(())
}
