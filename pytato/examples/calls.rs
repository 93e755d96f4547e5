//! 1,000 calls of one 100-node function against the same computation written inline: build,
//! inline, compile and run times on the default backend. Calls are inlined when compiling (each
//! distinct definition compiled once and called per site is a later step), so both compile to the
//! same kernels: the inline DAG is compiled first, and the DAG with calls then costs its
//! inlining and a hit in the program cache.
//!
//! `cargo run --release -p pytato --example calls`

use std::time::Instant;

use pytato as pt;
use pytato::backend::NamedData;
use pytato::{Array, ArrayData, DType, Dim};

/// 100 nodes: a chain of elementwise steps.
fn body(a: &Array) -> pt::Result<Array> {
    let mut y = a.clone();
    for k in 0..50 {
        y = pt::sin(&(&y * (1.0 + k as f64 * 1e-3)))?;
    }
    Ok(y)
}

fn main() -> pt::Result<()> {
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64)?;
    let (calls, sites) = (1000, 1000);
    let start = Instant::now();
    let mut called = x.clone();
    for _ in 0..calls {
        called = pt::trace_call(|args| Ok(vec![body(&args[0])?]), &[&called])?.remove(0);
    }
    let build_calls = start.elapsed();
    let start = Instant::now();
    let mut inline = x.clone();
    for _ in 0..sites {
        inline = body(&inline)?;
    }
    let build_inline = start.elapsed();
    let start = Instant::now();
    let inlined = pt::function::inline_calls(&(&called).into())?;
    let inlining = start.elapsed();
    let same = matches!(&inlined, pt::backend::Outputs::Single(a) if *a == inline);
    println!("inline_calls {:.1} ms; the inlined DAG equals the inline one: {same}", inlining.as_secs_f64() * 1e3);
    let backend = pt::default_backend()?;
    let data =
        NamedData::from([("x".to_string(), ArrayData::from(ndarray::Array1::linspace(0.0, 1.0, 1000).into_dyn()))]);
    for (what, y, built) in [("inline", &inline, build_inline), ("1000 calls", &called, build_calls)] {
        let start = Instant::now();
        let program = backend.compile(&y.into())?;
        let compiled = start.elapsed();
        let start = Instant::now();
        let out = program.run(&data)?;
        let ran = start.elapsed();
        let first = out["_pt_out"].to_scalars()[1].to_f64();
        println!(
            "{what:<11} build {:>8.1} ms  compile {:>8.1} ms  run {:>8.1} ms  (out[1] = {first:.12})",
            built.as_secs_f64() * 1e3,
            compiled.as_secs_f64() * 1e3,
            ran.as_secs_f64() * 1e3
        );
    }
    Ok(())
}
