//! The DG flagship (`pytato/examples/dg`) split over ranks: the mesh's rows of elements in strips,
//! one per rank, the faces of neighbouring strips exchanged at every Runge–Kutta stage
//! (`tests/support/dg.rs`). Each rank also runs the whole mesh in one process and compares its
//! rows: they must agree bit for bit. Rank 0 prints each rank's strip, its run time split into
//! compiling and the time loop (computing, waiting for the neighbour's faces, the rest), the
//! one-process time, and the difference.
//!
//! Run on MPI (build first, then start the ranks):
//!
//! ```text
//! cargo build --release -p pytato-distributed --features mpi --example distributed_dg
//! mpirun -n 4 --oversubscribe target/release/examples/distributed_dg
//! ```
//!
//! or on threads standing in for ranks, without MPI:
//! `cargo run --release -p pytato-distributed --example distributed_dg -- --local 4`.
//!
//! Options: `--order P` (default 3), `--mesh K` (K×K elements, default 32), `--t T` (final
//! time, default 0.1), `--local RANKS`, and with it `--latency MS` (messages between the threads
//! arrive that many milliseconds after they are sent, as over a network; default 0).

#[path = "../tests/support/dg.rs"]
mod dg;
#[path = "../tests/support/launch.rs"]
mod launch;
#[path = "../../pytato/examples/dg/solver.rs"]
mod solver;

use std::time::{Duration, Instant};

use pytato_distributed::Communicator;

struct Options {
    order: usize,
    mesh: usize,
    t_final: f64,
    local: Option<usize>,
    latency_ms: f64,
}

fn parse_options() -> Options {
    let mut o = Options { order: 3, mesh: 32, t_final: 0.1, local: None, latency_ms: 0.0 };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = pair.get(1).map(String::as_str).unwrap_or("");
        let bad = || -> ! {
            eprintln!(
                "distributed_dg: bad argument {pair:?}; options: --order P --mesh K --t T --local RANKS --latency MS"
            );
            std::process::exit(2)
        };
        match pair[0].as_str() {
            "--order" => o.order = value.parse().unwrap_or_else(|_| bad()),
            "--mesh" => o.mesh = value.parse().unwrap_or_else(|_| bad()),
            "--t" => o.t_final = value.parse().unwrap_or_else(|_| bad()),
            "--local" => o.local = Some(value.parse().unwrap_or_else(|_| bad())),
            "--latency" => o.latency_ms = value.parse().ok().filter(|ms: &f64| *ms >= 0.0).unwrap_or_else(|| bad()),
            _ => bad(),
        }
    }
    o
}

/// What one rank measured: `[rank, first row, rows, run seconds, one-process seconds, difference,
/// compile, steps, compute, waiting seconds]`.
fn run_rank(comm: &dyn Communicator, o: &Options) -> pytato_core::Result<Vec<f64>> {
    let backend = pytato_backend_cranelift::Cranelift::new();
    let start = Instant::now();
    let (strip, times) = dg::run_rank_timed(comm, &backend, o.order, o.mesh, o.t_final, 0.5)?;
    let run = start.elapsed();
    let start = Instant::now();
    let single =
        solver::Solver::new(&backend, o.order)?.run(&solver::Mesh { k: o.mesh }, o.t_final, 0.5, &mut |_, _| {})?;
    let one_process = start.elapsed();
    let (first_row, rows) = dg::strip(o.mesh, comm.size(), comm.rank());
    let difference = dg::max_difference(&strip, &single.u, o.mesh, first_row);
    Ok(vec![
        comm.rank() as f64,
        first_row as f64,
        rows as f64,
        run.as_secs_f64(),
        one_process.as_secs_f64(),
        difference,
        times.compile.as_secs_f64(),
        times.steps.as_secs_f64(),
        times.compute.as_secs_f64(),
        times.waiting.as_secs_f64(),
    ])
}

fn encode(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Prints the reports; `false` if a rank's rows differ from the one-process run.
fn print_reports(size: usize, o: &Options, all: &[Vec<u8>]) -> bool {
    let (order, mesh, t_final) = (o.order, o.mesh, o.t_final);
    println!("DG (order {order}) on {mesh}x{mesh} elements to t = {t_final}, split into {size} strips of rows");
    println!(
        "rank  rows     run (incl. compile)     compile       steps    (compute     waiting       other)  one process   \
         max |difference|"
    );
    let mut worst = 0.0f64;
    let time = |s: f64| format!("{:.2?}", Duration::from_secs_f64(s));
    for bytes in all {
        let r: Vec<f64> = bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        let other = (r[7] - r[8] - r[9]).max(0.0);
        println!(
            "{:>4}  {:>3}..{:<3}   {:>12}      {:>10}  {:>10}   ({:>10}  {:>10}  {:>10})  {:>10}   {:e}",
            r[0],
            r[1],
            r[1] + r[2],
            time(r[3]),
            time(r[6]),
            time(r[7]),
            time(r[8]),
            time(r[9]),
            time(other),
            time(r[4]),
            r[5]
        );
        worst = worst.max(r[5]);
    }
    println!(
        "compile: the stage built, partitioned and compiled; steps: the time loop, of which compute (the \
         program's parts), waiting (for the neighbour's faces) and other (binding, sending, the loop's inputs)"
    );
    worst == 0.0
}

fn main() {
    let o = std::sync::Arc::new(parse_options());
    let latency = Duration::from_secs_f64(o.latency_ms / 1e3);
    let local = o.local.map(|ranks| launch::LocalRanks { ranks, latency });
    let for_ranks = o.clone();
    launch::launch(
        "distributed_dg",
        local,
        move |comm| run_rank(comm, &for_ranks).map(|report| encode(&report)).map_err(|e| e.to_string()),
        |size, all| print_reports(size, &o, all),
    );
}
