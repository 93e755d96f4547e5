//! Times CSE, DCE and lowering over DAGs of 10,000, 100,000 and 1,000,000 nodes, deep (a chain)
//! and wide (many independent short branches summed pairwise), and prints the growth per 10x.
//! Run: `cargo bench -p pytato-transform --bench passes`. Timings go in reports, never in tests.

use std::time::{Duration, Instant};

use pytato_core::{Array, DType, Result};
use pytato_frontend as pt;
use pytato_runtime::backend::Outputs;
use pytato_transform::{cse::deduplicate, dce::eliminate_dead_code, lower::lower_to_index_lambdas};

/// A chain of `n` nodes alternating elementwise operations and rolls (half of them to lower).
fn deep(n: usize) -> Result<Array> {
    let mut a = pt::placeholder("x", [64], DType::F64)?;
    for k in 1..n {
        a = if k % 2 == 0 { pt::add(&a, 1.0)? } else { pt::roll(&a, 1, Some(0))? };
    }
    Ok(a)
}

/// About `n` nodes: n/4 branches `roll(sin(x_k))`, half of them duplicates, summed as a tree.
fn wide(n: usize) -> Result<Array> {
    let x = pt::placeholder("x", [64], DType::F64)?;
    let mut level: Vec<Array> =
        (0..n / 4).map(|k| pt::roll(&pt::add(&x, (k / 2) as f64)?, 1, Some(0))).collect::<Result<_>>()?;
    while level.len() > 1 {
        level = level
            .chunks(2)
            .map(|p| if p.len() == 2 { pt::add(&p[0], &p[1]) } else { Ok(p[0].clone()) })
            .collect::<Result<_>>()?;
    }
    Ok(level.pop().expect("one root"))
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut() -> Result<Outputs>) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let start = Instant::now();
                let out = f().expect("pass succeeds");
                let elapsed = start.elapsed();
                drop(out);
                elapsed
            })
            .collect(),
    )
}

fn main() -> Result<()> {
    println!("{:<6} {:>9} {:>8} {:>11} {:>11} {:>11}", "shape", "nodes", "actual", "cse", "dce", "lower");
    for (name, build) in [("deep", deep as fn(usize) -> Result<Array>), ("wide", wide)] {
        let mut previous: Option<[Duration; 3]> = None;
        for n in [10_000, 100_000, 1_000_000] {
            let root = build(n)?;
            let outputs = Outputs::from(&root);
            let actual = pytato_transform::analysis::num_nodes(&outputs);
            let runs = if n >= 1_000_000 { 3 } else { 5 };
            let t = [
                time(runs, || deduplicate(&outputs)),
                time(runs, || eliminate_dead_code(&outputs)),
                time(runs, || lower_to_index_lambdas(&outputs)),
            ];
            let growth = previous.map(|p| {
                let r: Vec<String> =
                    (0..3).map(|i| format!("{:.1}x", t[i].as_secs_f64() / p[i].as_secs_f64())).collect();
                r.join(" ")
            });
            println!(
                "{name:<6} {n:>9} {actual:>8} {:>9.1}ms {:>9.1}ms {:>9.1}ms  {}",
                t[0].as_secs_f64() * 1e3,
                t[1].as_secs_f64() * 1e3,
                t[2].as_secs_f64() * 1e3,
                growth.map(|g| format!("growth per 10x: {g}")).unwrap_or_default()
            );
            previous = Some(t);
        }
    }
    Ok(())
}
