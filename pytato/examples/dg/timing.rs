//! The flagship's timing mode: time per step on large meshes, against the memory traffic a step
//! cannot avoid.
//!
//! A low-storage Runge–Kutta stage must read `u` and `k` and write them back: four fields of
//! float64 per stage, plus the inflow faces' neighbour tables (two `int64` per element). That is
//! the *bytes a step must move*, `5 · (4 · 8 · DOFs + 2 · 8 · elements)`. The bandwidth it is
//! measured against is that of a hand-written loop with the same access pattern (two float64 arrays
//! read, two written, `u ← u + b·k`, `k ← a·k + u`) on every core, over arrays as large as the
//! largest mesh's fields (at least 32 MiB each, beyond the caches), timed in the same run: the
//! fraction printed is how close a step comes to streaming its fields once at that speed. Meshes
//! whose fields fit in the caches can exceed 1.

use std::time::{Duration, Instant};

use crate::solver::{Mesh, RK_ALPHA, RK_BETA, Reference, Solver, VELOCITY, max_time_step, time_steps};

/// The (order, elements per direction) pairs timed when none are given.
const DEFAULT_CASES: [(usize, usize); 7] = [(1, 64), (2, 64), (3, 64), (4, 64), (4, 128), (4, 256), (4, 512)];

/// Steps timed per case when `--steps` is not given.
const DEFAULT_STEPS: usize = 20;

/// Rounds per case when `--rounds` is not given: each times ours and then the peer, and the
/// fastest round of each is reported.
const DEFAULT_ROUNDS: usize = 2;

/// One timed case.
struct Row {
    order: usize,
    k: usize,
    dofs: usize,
    steps: usize,
    dt: f64,
    median: Duration,
    mean: Duration,
    bytes: f64,
    error: f64,
}

/// What the peer measured for one case: the median time per step, the L2 error and which way of
/// writing the right-hand side was faster.
struct PeerRow {
    median_ms: f64,
    error: f64,
    form: String,
}

/// Runs the timing mode with the arguments after `time`.
pub(crate) fn main(args: &[String]) -> pytato::Result<()> {
    let usage = || -> ! {
        eprintln!(
            "usage: dg time [P:K]... [--steps N] [--rounds R] [--peers PYTHON]   (order P on K x K squares; default {DEFAULT_CASES:?})"
        );
        std::process::exit(2)
    };
    let mut cases = Vec::new();
    let mut steps = DEFAULT_STEPS;
    let mut peers = None;
    let mut rounds = DEFAULT_ROUNDS;
    let mut child_case = None;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--steps" {
            match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 1 => steps = n,
                _ => usage(),
            }
        } else if arg == "--rounds" {
            match args.next().and_then(|n| n.parse().ok()) {
                Some(n) if n > 0 => rounds = n,
                _ => usage(),
            }
        } else if arg == "--case" {
            match args.next().and_then(|c| parse_case(c)) {
                Some(case) => child_case = Some(case),
                None => usage(),
            }
        } else if arg == "--peers" {
            peers = Some(args.next().unwrap_or_else(|| usage()).clone());
        } else if let Some(case) = parse_case(arg) {
            cases.push(case);
        } else {
            usage();
        }
    }
    if cases.is_empty() {
        cases = DEFAULT_CASES.to_vec();
    }

    if let Some(case) = child_case {
        return time_case_here(case, steps);
    }
    let backend = pytato::default_backend()?;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let largest = cases.iter().map(|&(p, k)| (p + 1) * (p + 1) * k * k).max().unwrap_or(0);
    let bandwidth = stream_bandwidth(largest.max(STREAM_MIN_LEN), threads);
    let mut rows = Vec::new();
    let mut peer_rows = Vec::new();
    for &(order, k) in &cases {
        // Rounds of ours then the peer's, on the same case, keeping the fastest of each: this
        // machine's speed drifts over minutes, and alternating exposes both to the same drift.
        // Each runs in a fresh process: where a case's arrays land depends on what the process
        // allocated and freed before (order 3 on 64² squares ran 1.6 times slower after a 512²
        // mesh's fields had been freed in the same process), and the peer starts afresh too.
        let (mut row, mut peer): (Option<Row>, Option<PeerRow>) = (None, None);
        for _ in 0..rounds {
            let timed = time_case_in_child(order, k, steps)?;
            if row.as_ref().is_none_or(|r| timed.median < r.median) {
                row = Some(timed);
            }
            if let Some(python) = &peers {
                let timed = run_peer(python, std::slice::from_ref(row.as_ref().expect("timed")), steps).pop();
                if let Some(timed) = timed.filter(|t| peer.as_ref().is_none_or(|p| t.median_ms < p.median_ms)) {
                    peer = Some(timed);
                }
            }
        }
        peer_rows.extend(peer);
        rows.push(row.expect("one round or more"));
    }

    println!(
        "backend {:?}; {threads} threads; hand loop (2 float64 arrays read, 2 written) on every core: {:.2} GB/s",
        backend.name(),
        bandwidth / 1e9
    );
    print!(
        "{:>5} {:>9} {:>9} {:>6} {:>11} {:>11} {:>10} {:>9} {:>8} {:>10}",
        "order", "mesh", "DOFs", "steps", "median/step", "mean/step", "DOFs/s", "MB/step", "of peak", "L2 error"
    );
    let peer_rows = if peer_rows.len() == rows.len() { peer_rows } else { Vec::new() };
    if !peer_rows.is_empty() {
        print!(" {:>11} {:>7} {:>9} {:>10}", "jax.jit", "form", "jax/ours", "jax L2");
    }
    println!();
    for (i, row) in rows.iter().enumerate() {
        print!(
            "{:>5} {:>9} {:>9} {:>6} {:>11.2?} {:>11.2?} {:>10.3e} {:>9.1} {:>8.2} {:>10.3e}",
            row.order,
            format!("{0}x{0}", row.k),
            row.dofs,
            row.steps,
            row.median,
            row.mean,
            row.dofs as f64 / row.median.as_secs_f64(),
            row.bytes / 1e6,
            row.bytes / row.median.as_secs_f64() / bandwidth,
            row.error,
        );
        if let Some(peer) = peer_rows.get(i) {
            let ours_ms = row.median.as_secs_f64() * 1e3;
            let ratio = peer.median_ms / ours_ms;
            print!(" {:>9.3}ms {:>7} {ratio:>9.2} {:>10.3e}", peer.median_ms, peer.form, peer.error);
        }
        println!();
    }
    // Both integrate the same problem with the same steps: their errors agree to rounding, or
    // one of the two computes something else and its time means nothing. (The finest meshes'
    // errors, 1e-13 to 1e-15, are themselves near the rounding of fields of size 1, hence the
    // absolute floor; ours and JAX's differ by about 1e-19 there.)
    let disagree: Vec<String> = rows
        .iter()
        .zip(&peer_rows)
        .filter(|(row, peer)| (row.error - peer.error).abs() > 1e-6 * row.error.abs().max(peer.error.abs()) + 1e-16)
        .map(|(row, peer)| format!("p = {} on {}²: {:e} vs jax {:e}", row.order, row.k, row.error, peer.error))
        .collect();
    println!(
        "median/step: the median of the steps' times, the fastest of {rounds} rounds (on a device backend steps only enqueue: read mean/step);"
    );
    println!("of peak: the bytes a step must move per second, over the hand loop's bandwidth");
    if !peer_rows.is_empty() {
        println!(
            "jax.jit: the same method in jax.numpy, one stage jitted (peer.py; the faster of two ways to write it), median of {} steps, the fastest of {rounds} rounds",
            steps - 1
        );
    }
    if !disagree.is_empty() {
        eprintln!("error: the L2 errors of ours and the JAX peer differ: {}", disagree.join("; "));
        std::process::exit(1);
    }
    Ok(())
}

/// Runs `peer.py` with `python` on the cases of `rows` (the same reference elements and time
/// steps); an empty list, after a message, where it cannot run.
fn run_peer(python: &str, rows: &[Row], steps: usize) -> Vec<PeerRow> {
    use std::io::Write;
    let cases: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| {
            let r = Reference::new(row.order);
            let matrix = |m: &ndarray::Array2<f64>| m.outer_iter().map(|r| r.to_vec()).collect::<Vec<_>>();
            serde_json::json!({
                "order": row.order, "k": row.k, "dt": row.dt, "nodes": r.nodes,
                "diff": matrix(&r.diff), "mass": matrix(&r.mass),
                "lift_left": r.lift_left.to_vec(), "lift_right": r.lift_right.to_vec(),
            })
        })
        .collect();
    let spec = serde_json::json!({
        "velocity": [VELOCITY.0, VELOCITY.1], "rk_alpha": RK_ALPHA, "rk_beta": RK_BETA, "steps": steps, "cases": cases,
    });
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/dg/peer.py");
    let child = std::process::Command::new(python)
        .arg(&script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn();
    let output = child.and_then(|mut child| {
        child.stdin.take().expect("piped").write_all(spec.to_string().as_bytes())?;
        child.wait_with_output()
    });
    let parsed = output.ok().filter(|o| o.status.success()).and_then(|o| {
        let list: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).ok()?;
        list.iter()
            .map(|v| {
                let (median_ms, error) = (v["median_ms"].as_f64()?, v["error"].as_f64()?);
                Some(PeerRow { median_ms, error, form: v["form"].as_str()?.to_string() })
            })
            .collect::<Option<Vec<_>>>()
    });
    parsed.unwrap_or_else(|| {
        eprintln!("peers: {python} {} failed (is jax installed there?); no jax column", script.display());
        Vec::new()
    })
}

/// `P:K`, both at least 1.
fn parse_case(arg: &str) -> Option<(usize, usize)> {
    let (p, k) = arg.split_once(':')?;
    let (p, k) = (p.parse().ok()?, k.parse().ok()?);
    (p > 0 && k > 0).then_some((p, k))
}

/// Times `steps` steps of order `order` on `k × k` squares in a child process (this example
/// run as `dg time --case P:K --steps N`, under the same environment: backend, threads).
fn time_case_in_child(order: usize, k: usize, steps: usize) -> pytato::Result<Row> {
    let failed = |why: String| pytato_core::Error::Internal { backend: "dg time".into(), message: why };
    let exe = std::env::current_exe().map_err(|e| failed(format!("this program's path: {e}")))?;
    let output = std::process::Command::new(exe)
        .args(["time", "--case", &format!("{order}:{k}"), "--steps", &steps.to_string()])
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| failed(format!("starting the case {order}:{k}: {e}")))?;
    let parsed: Option<Row> = serde_json::from_slice::<serde_json::Value>(&output.stdout).ok().and_then(|v| {
        let int = |key: &str| v[key].as_u64().map(|n| n as usize);
        let nanos = |key: &str| v[key].as_u64().map(Duration::from_nanos);
        Some(Row {
            order,
            k,
            dofs: int("dofs")?,
            steps: int("steps")?,
            dt: v["dt"].as_f64()?,
            median: nanos("median_ns")?,
            mean: nanos("mean_ns")?,
            bytes: v["bytes"].as_f64()?,
            error: v["error"].as_f64()?,
        })
    });
    match parsed {
        Some(row) if output.status.success() => Ok(row),
        _ => Err(failed(format!("the case {order}:{k} failed ({})", output.status))),
    }
}

/// The child's side of [`time_case_in_child`]: compiles the stage (a whole step on a device
/// backend: `solver::Unit`), times the case and prints its row as JSON.
fn time_case_here((order, k): (usize, usize), steps: usize) -> pytato::Result<()> {
    let backend = pytato::default_backend()?;
    let solver = Solver::new(backend.as_ref(), order)?;
    let row = time_case(&solver, backend.as_ref(), k, steps)?;
    // On stderr: the parent reads this process's stdout as JSON.
    #[cfg(feature = "wgpu")]
    if let Some(report) = pytato::wgpu::profile::take_report() {
        eprintln!("GPU time per shader, p = {order} on {k}² squares, {steps} steps (PYTATO_PROFILE=gpu):\n{report}");
    }
    let json = serde_json::json!({
        "dofs": row.dofs, "steps": row.steps, "dt": row.dt,
        "median_ns": row.median.as_nanos() as u64, "mean_ns": row.mean.as_nanos() as u64,
        "bytes": row.bytes, "error": row.error,
    });
    println!("{json}");
    Ok(())
}

/// Times `steps` steps of `solver` on `k × k` squares.
fn time_case(solver: &Solver, backend: &dyn pytato::backend::Backend, k: usize, steps: usize) -> pytato::Result<Row> {
    let mesh = Mesh { k };
    let cfl = 0.5;
    // A final time just short of `steps` of the largest stable step: exactly `steps` steps.
    let t_final = (steps as f64 - 0.5) * max_time_step(&solver.reference, &mesh, cfl);
    let mut step_times = Vec::with_capacity(steps);
    let mut last = Instant::now();
    let result = solver.run_on(backend, &mesh, t_final, cfl, &mut |_, _| {
        step_times.push(last.elapsed());
        last = Instant::now();
    })?;
    step_times.sort();
    Ok(Row {
        order: solver.reference.order,
        k,
        dofs: result.dofs,
        steps: result.steps,
        dt: time_steps(&solver.reference, &mesh, t_final, cfl).1,
        median: step_times[step_times.len() / 2],
        mean: result.run_time / result.steps as u32,
        bytes: bytes_per_step(result.dofs, mesh.elements()),
        error: result.error,
    })
}

/// The bytes one step must move: five stages, each reading and writing `u` and `k` (float64) and
/// reading the two inflow neighbour tables (int64).
fn bytes_per_step(dofs: usize, elements: usize) -> f64 {
    5.0 * (4.0 * 8.0 * dofs as f64 + 2.0 * 8.0 * elements as f64)
}

/// The shortest arrays the bandwidth is measured on: 4 Mi float64 (32 MiB), beyond the caches.
const STREAM_MIN_LEN: usize = 4 << 20;

/// Bytes per second of `u ← u + b·k`, `k ← a·k + u` over `len` float64s on `threads` threads
/// (each a contiguous share), counting 32 bytes per element; the median of 11 runs after one
/// untimed run.
fn stream_bandwidth(len: usize, threads: usize) -> f64 {
    let mut u = vec![1.0_f64; len];
    let mut k = vec![0.5_f64; len];
    let (a, b) = (-0.4, 0.15);
    let share = len.div_ceil(threads);
    let mut pass = || {
        let start = Instant::now();
        std::thread::scope(|scope| {
            for (u, k) in u.chunks_mut(share).zip(k.chunks_mut(share)) {
                scope.spawn(move || {
                    for (u, k) in u.iter_mut().zip(k.iter_mut()) {
                        let next = a * *k + *u;
                        *u += b * next;
                        *k = next;
                    }
                });
            }
        });
        start.elapsed()
    };
    pass();
    let mut times: Vec<Duration> = (0..11).map(|_| pass()).collect();
    times.sort();
    std::hint::black_box((&u, &k));
    32.0 * len as f64 / times[times.len() / 2].as_secs_f64()
}
