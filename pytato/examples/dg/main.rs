//! The flagship: a discontinuous Galerkin solver for 2-D linear advection, checked against theory.
//!
//! For each polynomial order 1 to 4, one right-hand side is built as a lazy DAG (element-local
//! einsums with the reference matrices, neighbour faces gathered with index arrays, the upwind
//! flux, the lift) inside one low-storage Runge–Kutta stage, compiled once on the default backend,
//! and run on meshes of 8², 16², 32² and 64² squares (the number of elements is a size parameter).
//! The L2 error against the exact solution and the observed order `log2(e_h / e_{h/2})`, which
//! must approach `p + 1` for upwind DG and a smooth solution (Hesthaven and Warburton, 2008), are
//! printed for every mesh, with the compile time, the time per step and the DOFs per second.
//!
//! Run: `cargo run --release --example dg [-- MESHES T_FINAL]` (`MESHES` meshes from 8² up,
//! default 4; `T_FINAL` default 0.25; set `PYTATO_BACKEND` to pick a backend). It exits with an
//! error if an observed order on the finest pair of meshes is below `p + 1 − 0.3`.
//!
//! Timing mode: `cargo run --release --example dg -- time [P:K]... [--steps N] [--rounds R]
//! [--peers PYTHON]` times `N` steps (default 20) of order `P` on `K²` squares for each pair given
//! (default `1:64 2:64 3:64 4:64 4:128 4:256 4:512`), the fastest of `R` rounds (default 2), and
//! prints the median time per step, the bytes a step must move and the fraction of the machine's
//! memory bandwidth that reaches; with `--peers`, the same method in JAX (`peer.py`, run with
//! `PYTHON`) timed in alternation with ours, and the ratio (see [`timing`]). Each round of a case
//! runs in a process of its own (this example with `time --case P:K`), as the peer's do.
//!
//! With `PYTATO_PROFILE=gpu` on the wgpu backend, both modes also print the GPU time of each
//! shader (`pytato::wgpu::profile`): at the end, and in timing mode per case (on stderr).

mod solver;
mod timing;

use std::time::Instant;

use solver::{Mesh, Solver, VELOCITY, observed_orders};

/// Observed orders on the finest pair of meshes must be at least `p + 1 - MARGIN`.
const MARGIN: f64 = 0.3;

fn main() -> pytato::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "time") {
        return timing::main(&args[1..]);
    }
    let meshes: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(4).max(2);
    let t_final: f64 = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(0.25);
    let backend = pytato::default_backend()?;
    println!(
        "DG for u_t + a·∇u = 0, a = ({}, {}), on [0,1]² periodic, u(x, y, 0) = sin(2πx) sin(2πy), to t = {t_final}",
        VELOCITY.0, VELOCITY.1
    );
    println!("backend {:?}; upwind flux, GLL nodes, 5-stage 4th-order low-storage Runge–Kutta\n", backend.name());
    println!(
        "{:>5} {:>9} {:>9} {:>7} {:>12} {:>12} {:>10} {:>6}",
        "order", "mesh", "DOFs", "steps", "time/step", "DOFs/s", "L2 error", "order"
    );
    let total = Instant::now();
    let mut failures = Vec::new();
    for order in 1..=4 {
        let solver = Solver::new(backend.as_ref(), order)?;
        println!("p = {order}: {} program compiled in {:.2?}", solver.unit.name(), solver.compile_time);
        let mut errors = Vec::new();
        for level in 0..meshes {
            let mesh = Mesh { k: 8 << level };
            let label = format!("{0}x{0}", mesh.k);
            let mut last_print = Instant::now();
            let result = solver.run_on(backend.as_ref(), &mesh, t_final, 0.5, &mut |step, steps| {
                if last_print.elapsed().as_secs_f64() > 2.0 {
                    eprintln!("      ... {label}: step {step} of {steps}");
                    last_print = Instant::now();
                }
            })?;
            errors.push(result.error);
            let per_step = result.run_time / result.steps as u32;
            let dofs_per_second = result.dofs as f64 * result.steps as f64 / result.run_time.as_secs_f64();
            let observed = observed_orders(&errors).last().map_or("-".to_string(), |o| format!("{o:.2}"));
            println!(
                "{order:>5} {label:>9} {:>9} {:>7} {:>12.2?} {:>12.3e} {:>10.3e} {:>6}",
                result.dofs, result.steps, per_step, dofs_per_second, result.error, observed
            );
        }
        let finest = *observed_orders(&errors).last().expect("two meshes or more");
        if finest < (order + 1) as f64 - MARGIN {
            failures.push(format!("order {order}: observed {finest:.2}, expected about {}", order + 1));
        }
    }
    println!("\ntotal {:.2?}", total.elapsed());
    #[cfg(feature = "wgpu")]
    if let Some(report) = pytato::wgpu::profile::take_report() {
        println!("\nGPU time per shader, all orders and meshes (PYTATO_PROFILE=gpu):\n{report}");
    }
    if !failures.is_empty() {
        eprintln!("error: convergence below theory: {}", failures.join("; "));
        std::process::exit(1);
    }
    println!("observed orders approach p + 1 for every order (margin {MARGIN})");
    Ok(())
}
