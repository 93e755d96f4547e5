//! The 1-D heat equation on a periodic grid, advanced many steps with one compiled program.
//!
//! The update `u ← u + ν (roll(u, 1) − 2u + roll(u, −1))` is built once as a lazy DAG (ten steps
//! fused into one program), compiled once on the default backend, and run repeatedly, feeding each
//! result back in: `run_into` reads one of two buffers and writes the other, so the loop allocates
//! nothing. The grid length is a size parameter, so the same program runs any grid.
//!
//! The check: `sin(2πx)` is an eigenvector of the discrete Laplacian, so after `S` steps the exact
//! discrete solution is `λ^S sin(2πx)` with `λ = 1 − 4ν sin²(π/N)`. The program prints both.
//!
//! Run: `cargo run --release --example heat` (set `PYTATO_BACKEND` to pick a backend).

use std::f64::consts::PI;
use std::time::Instant;

use ndarray::{Array1, ArrayD};
use pytato as pt;
use pytato::backend::{NamedViews, NamedViewsMut};
use pytato::{DType, Dim};

const NU: f64 = 0.25;
const STEPS_PER_RUN: usize = 10;

fn main() -> pytato::Result<()> {
    let n_points: usize = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(512);
    let runs: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(200);
    let steps = runs * STEPS_PER_RUN;

    // Build the DAG: STEPS_PER_RUN explicit Euler steps of the periodic heat equation.
    let start = Instant::now();
    let u0 = pt::placeholder("u", [Dim::param("n")], DType::F64)?;
    let mut u = u0.clone();
    for _ in 0..STEPS_PER_RUN {
        let laplacian = pt::roll(&u, 1, Some(0))? - 2.0 * &u + pt::roll(&u, -1, Some(0))?;
        u = &u + NU * &laplacian;
    }
    let build_time = start.elapsed();

    let backend = pt::default_backend()?;
    let start = Instant::now();
    let program = backend.compile(&(&u).into())?;
    let compile_time = start.elapsed();

    // Initial condition sin(2πx) on x = i/N.
    let x = Array1::from_shape_fn(n_points, |i| i as f64 / n_points as f64);
    let mut state: ArrayD<f64> = x.mapv(|x| (2.0 * PI * x).sin()).into_dyn();

    // Two buffers, swapped every run: the program reads one (borrowed) and writes the other in
    // place, so the loop allocates nothing.
    let mut next: ArrayD<f64> = ArrayD::zeros(state.shape());
    let start = Instant::now();
    for _ in 0..runs {
        let inputs = NamedViews::from([("u", state.view().into())]);
        let mut outputs = NamedViewsMut::from([("_pt_out", next.view_mut().into())]);
        program.run_into(&inputs, &mut outputs)?;
        std::mem::swap(&mut state, &mut next);
    }
    let run_time = start.elapsed();

    let lambda = 1.0 - 4.0 * NU * (PI / n_points as f64).sin().powi(2);
    let exact_amplitude = lambda.powi(steps as i32);
    let max_error =
        state.iter().zip(x.iter()).map(|(u, x)| (u - exact_amplitude * (2.0 * PI * x).sin()).abs()).fold(0.0, f64::max);
    let amplitude = state.iter().fold(0.0_f64, |m, v| m.max(v.abs()));

    println!("1-D periodic heat equation, nu = {NU}, {n_points} points, {steps} steps on backend {:?}", backend.name());
    let nodes = pytato::array::unique_nodes([&u]).len();
    println!("  DAG: {nodes} nodes for {STEPS_PER_RUN} steps per program run, built in {build_time:.2?}");
    println!("  amplitude after {steps} steps: {amplitude:.12}");
    println!("  exact (lambda^steps):          {exact_amplitude:.12}");
    println!("  max |u - exact| over the grid: {max_error:.3e}");
    println!("  compile {:.2?}, run {:.2?} ({:.2?} per step)", compile_time, run_time, run_time / steps as u32);
    if max_error > 1e-9 {
        eprintln!("error: the result does not match the exact discrete solution");
        std::process::exit(1);
    }
    Ok(())
}
