//! The README's heat equation split over the ranks of a ring: each rank owns a contiguous chunk of
//! the periodic grid and exchanges one value with each neighbour per step (`make_distributed_recv`
//! and `staple_distributed_send`). Ten steps form one DAG, compiled once per rank
//! (`DistributedProgram::compile`) and run repeatedly, each run from the last one's result.
//!
//! The check: the same steps on the whole grid in one process (the unpartitioned program), which
//! every rank also runs for its chunk; the results must agree bit for bit. The one-process run
//! also gives the overhead of partitioning on 1 rank.
//!
//! Run on MPI (build first, then start the ranks):
//!
//! ```text
//! cargo build --release -p pytato-distributed --features mpi --example distributed_heat
//! mpirun -n 4 --oversubscribe target/release/examples/distributed_heat
//! ```
//!
//! or on threads standing in for ranks, without MPI:
//! `cargo run --release -p pytato-distributed --example distributed_heat -- --local 4`.
//!
//! Options: `--points N` (the whole grid, default 1,048,576), `--runs N` (default 20),
//! `--threads N` (Cranelift threads per rank, default 1), `--summary` (a line for scripts).

#[path = "../tests/support/heat.rs"]
mod heat;
#[path = "../tests/support/launch.rs"]
mod launch;

use std::time::{Duration, Instant};

use pytato_core::{Array, ArrayData, Result};
use pytato_distributed::{Communicator, DistributedProgram, RunStats};
use pytato_runtime::backend::{Backend, NamedData, views};

const STEPS_PER_RUN: usize = 10;

struct Options {
    points: usize,
    runs: usize,
    threads: usize,
    local: Option<usize>,
    summary: bool,
}

fn parse_options() -> Options {
    let mut o = Options { points: 1 << 20, runs: 20, threads: 1, local: None, summary: false };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = || args.get(i + 1).and_then(|v| v.parse::<usize>().ok()).unwrap_or_else(|| usage(&args[i]));
        match args[i].as_str() {
            "--points" => o.points = value(),
            "--runs" => o.runs = value(),
            "--threads" => o.threads = value(),
            "--local" => o.local = Some(value()),
            "--summary" => {
                o.summary = true;
                i += 1;
                continue;
            }
            other => usage(other),
        }
        i += 2;
    }
    o
}

fn usage(arg: &str) -> ! {
    eprintln!(
        "distributed_heat: bad argument {arg:?}; options: --points N --runs N --threads N --local RANKS --summary"
    );
    std::process::exit(2)
}

/// What one rank measured.
struct RankReport {
    rank: usize,
    points: usize,
    compile: Duration,
    /// Median time of one run (ten steps).
    run_median: Duration,
    /// The README's one-process program on the whole grid: median run.
    single_run_median: Duration,
    /// The distributed program's operations without messages, on the whole grid: median run.
    unpartitioned_run_median: Duration,
    stats: RunStats,
    /// Largest |distributed - one process| on this rank's chunk.
    max_difference: f64,
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

fn values(data: &ArrayData) -> Vec<f64> {
    data.as_array::<f64>().expect("float64").iter().copied().collect()
}

fn run_rank(comm: &dyn Communicator, backend: &dyn Backend, o: &Options) -> Result<RankReport> {
    let (rank, size) = (comm.rank(), comm.size());
    let (start, len) = heat::chunk(o.points, size, rank);
    let u0 = heat::initial(o.points);

    let t = Instant::now();
    let dag = heat::distributed_heat(rank, size, len, STEPS_PER_RUN)?;
    let program = DistributedProgram::compile(backend, comm, &(&dag).into())?.with_timeout(Duration::from_secs(120));
    let compile = t.elapsed();

    let mut state = f64s(&u0[start..start + len]);
    let mut times = Vec::with_capacity(o.runs);
    let mut stats = RunStats::default();
    for _ in 0..o.runs {
        let t = Instant::now();
        let (mut out, run_stats) = program.run_views(comm, &views(&NamedData::from([("u".to_string(), state)])))?;
        times.push(t.elapsed());
        state = out.remove("_pt_out").expect("the output");
        stats.messages_sent += run_stats.messages_sent;
        stats.bytes_sent += run_stats.bytes_sent;
        stats.messages_received += run_stats.messages_received;
        stats.bytes_received += run_stats.bytes_received;
        stats.compute += run_stats.compute;
        stats.waiting += run_stats.waiting;
        stats.total += run_stats.total;
    }

    // The one-process programs on the whole grid, run as often: the README's (with `roll`), and
    // the distributed program's operations without messages (the unpartitioned program).
    let time_single = |dag: Array| -> Result<(ArrayData, Duration)> {
        let single = backend.compile(&(&dag).into())?;
        let mut state = f64s(&u0);
        let mut times = Vec::with_capacity(o.runs);
        for _ in 0..o.runs {
            let t = Instant::now();
            let mut out = single.run(&NamedData::from([("u".to_string(), state)]))?;
            times.push(t.elapsed());
            state = out.remove("_pt_out").expect("the output");
        }
        Ok((state, median(times)))
    };
    let (reference, single_run_median) = time_single(heat::heat(o.points, STEPS_PER_RUN)?)?;
    let (same_operations, unpartitioned_run_median) =
        time_single(heat::heat_without_messages(o.points, STEPS_PER_RUN)?)?;
    if values(&same_operations) != values(&reference) {
        return Err(pytato_core::Error::invalid("distributed_heat", "the two one-process programs disagree"));
    }
    let mine = values(&state);
    let max_difference =
        mine.iter().zip(&values(&reference)[start..start + len]).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    Ok(RankReport {
        rank,
        points: len,
        compile,
        run_median: median(times),
        single_run_median,
        unpartitioned_run_median,
        stats,
        max_difference,
    })
}

fn encode(r: &RankReport) -> Vec<u8> {
    let fields = [
        r.rank as f64,
        r.points as f64,
        r.compile.as_secs_f64(),
        r.run_median.as_secs_f64(),
        r.single_run_median.as_secs_f64(),
        r.stats.messages_sent as f64,
        r.stats.bytes_sent as f64,
        r.stats.messages_received as f64,
        r.stats.bytes_received as f64,
        r.stats.compute.as_secs_f64(),
        r.stats.waiting.as_secs_f64(),
        r.max_difference,
        r.unpartitioned_run_median.as_secs_f64(),
    ];
    fields.iter().flat_map(|f| f.to_le_bytes()).collect()
}

fn print_reports(size: usize, o: &Options, all: &[Vec<u8>]) -> bool {
    let rows: Vec<Vec<f64>> =
        all.iter().map(|b| b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()).collect();
    println!(
        "1-D periodic heat equation, {} points on {size} rank(s), {} runs of {STEPS_PER_RUN} steps, {} Cranelift thread(s) per rank",
        o.points, o.runs, o.threads
    );
    println!("rank  points    compile   run (median)  compute   waiting   sent (msgs, bytes)   received (msgs, bytes)");
    for r in &rows {
        println!(
            "{:>4}  {:>8}  {:>7.1}ms  {:>9.3}ms  {:>7.1}ms {:>7.1}ms  {:>5} {:>12}      {:>5} {:>12}",
            r[0],
            r[1],
            r[2] * 1e3,
            r[3] * 1e3,
            r[9] * 1e3,
            r[10] * 1e3,
            r[5],
            r[6],
            r[7],
            r[8]
        );
    }
    let slowest = rows.iter().map(|r| r[3]).fold(0.0, f64::max);
    let (single, unpartitioned) = (rows[0][4], rows[0][12]);
    let difference = rows.iter().map(|r| r[11]).fold(0.0, f64::max);
    println!("one run (10 steps), slowest rank: {:.3} ms", slowest * 1e3);
    println!("one process, whole grid (timed on rank 0, alongside the other ranks' reference runs):");
    println!(
        "  the same operations without messages (unpartitioned): {:.3} ms per run; distributed / unpartitioned = {:.2}",
        unpartitioned * 1e3,
        slowest / unpartitioned
    );
    println!(
        "  the README's program (roll):                          {:.3} ms per run; distributed / README = {:.2}",
        single * 1e3,
        slowest / single
    );
    println!(
        "communication per run: {} messages, {} bytes in all",
        rows.iter().map(|r| r[5]).sum::<f64>() / o.runs as f64,
        rows.iter().map(|r| r[6]).sum::<f64>() / o.runs as f64
    );
    println!("max |distributed - one process| over the grid: {difference:e}");
    if o.summary {
        println!(
            "SUMMARY run_seconds={slowest} unpartitioned_seconds={unpartitioned} readme_seconds={single} ranks={size}"
        );
    }
    difference == 0.0
}

fn backend(threads: usize) -> pytato_backend_cranelift::Cranelift {
    pytato_backend_cranelift::Cranelift::new().with_threads(threads)
}

fn main() {
    let o = std::sync::Arc::new(parse_options());
    let local = o.local.map(|ranks| launch::LocalRanks { ranks, latency: std::time::Duration::ZERO });
    let for_ranks = o.clone();
    launch::launch(
        "distributed_heat",
        local,
        move |comm| {
            run_rank(comm, &backend(for_ranks.threads), &for_ranks)
                .map(|report| encode(&report))
                .map_err(|e| e.to_string())
        },
        |size, all| print_reports(size, &o, all),
    );
}
