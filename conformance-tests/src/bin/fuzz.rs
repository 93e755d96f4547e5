//! The differential fuzzer's driver (`cargo xtask fuzz`): see `pytato_conformance::fuzz`.
//!
//! ```text
//! fuzz campaign [--seconds S | --dags N] [--start SEED] [--jobs J] [--backend NAME]... [--timeout S]
//!               [--no-numpy] [--report DIR]
//! fuzz repro SEED|FILE [--backend NAME]...    one case, its program and every verdict
//! fuzz case SEED                               the case of SEED as JSON
//! ```
//!
//! A campaign runs cases in worker processes (`fuzz worker`, one per job) and watches them: a
//! worker that dies in a case is a crash, one that spends longer than the timeout on a case a
//! hang; either way the worker is restarted after that case. Every failure (a mismatch, crash or
//! hang) is shrunk, each attempt in a process of its own (`fuzz check`), and written with its
//! reproducer to the report directory. The exit status is 1 when anything failed.
//!
//! Without `--backend`, every linked backend is judged against the interpreter, and so is
//! `passes`: the interpreter after the DAG passes (`pytato_conformance::fuzz::PassesThenInterp`).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pytato_conformance::fuzz::{FuzzCase, Oracle, Verdict, check, generate, shrink};
use serde_json::{Value, json};

struct Options {
    seconds: Option<u64>,
    dags: Option<u64>,
    start: u64,
    jobs: usize,
    backends: Vec<String>,
    timeout: u64,
    numpy: bool,
    report: PathBuf,
    step: u64,
}

fn parse(args: &[String]) -> Result<(Options, Vec<String>), String> {
    let mut o = Options {
        seconds: None,
        dags: None,
        start: 0,
        jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
        backends: Vec::new(),
        timeout: 120,
        numpy: true,
        report: PathBuf::from("target/fuzz"),
        step: 1,
    };
    let mut rest = Vec::new();
    let mut it = args.iter();
    let num = |v: Option<&String>, flag: &str| -> Result<u64, String> {
        v.ok_or(format!("{flag} needs a value"))?.parse().map_err(|e| format!("{flag}: {e}"))
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--seconds" => o.seconds = Some(num(it.next(), a)?),
            "--minutes" => o.seconds = Some(60 * num(it.next(), a)?),
            "--dags" => o.dags = Some(num(it.next(), a)?),
            "--start" => o.start = num(it.next(), a)?,
            "--step" => o.step = num(it.next(), a)?,
            "--jobs" => o.jobs = num(it.next(), a)?.max(1) as usize,
            "--timeout" => o.timeout = num(it.next(), a)?,
            "--backend" => o.backends.push(it.next().ok_or("--backend needs a name")?.clone()),
            "--no-numpy" => o.numpy = false,
            "--report" => o.report = PathBuf::from(it.next().ok_or("--report needs a directory")?),
            _ => rest.push(a.clone()),
        }
    }
    Ok((o, rest))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first().cloned() else {
        eprintln!("usage: fuzz campaign|repro|case ... (see the module docs)");
        return ExitCode::from(2);
    };
    let (options, rest) = match parse(&args[1..]) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    let result = match command.as_str() {
        "campaign" => campaign(&options),
        "worker" => worker(&options),
        "check" => check_file(&options, &rest),
        "case" => print_case(&rest),
        "repro" => repro(&options, &rest),
        other => Err(format!("unknown command {other}")),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("fuzz: {e}");
            ExitCode::from(2)
        }
    }
}

type Backends = Vec<(String, Box<dyn pytato_runtime::backend::Backend>)>;

/// The compiled backends to test (every linked one but the interpreter, unless named), the
/// interpreter, and a message for each backend left out.
struct Sides {
    compiled: Backends,
    interp: Box<dyn pytato_runtime::backend::Backend>,
    skipped: Vec<String>,
}

fn backends(names: &[String]) -> Result<Sides, String> {
    // "passes" is the interpreter behind the DAG passes, not a registered backend.
    let registered: Vec<String> = names.iter().filter(|n| *n != "passes").cloned().collect();
    let (mut compiled, skipped) = if names.is_empty() || !registered.is_empty() {
        pytato_conformance::instantiate(&registered)?
    } else {
        (Vec::new(), Vec::new())
    };
    let interp = pytato_runtime::backend::backend("interp").map_err(|e| e.to_string())?;
    compiled.retain(|(n, _)| n != "interp");
    if names.is_empty() || names.iter().any(|n| n == "passes") {
        let passes = pytato_conformance::fuzz::PassesThenInterp::new().map_err(|e| e.to_string())?;
        compiled.push(("passes".into(), Box::new(passes)));
    }
    Ok(Sides { compiled, interp, skipped })
}

fn oracle(enabled: bool) -> Option<Oracle> {
    if !enabled {
        return None;
    }
    match Oracle::start() {
        Ok(o) => Some(o),
        Err(e) => {
            eprintln!("fuzz: numpy comparisons skipped: {e}");
            None
        }
    }
}

fn verdicts_json(v: &BTreeMap<String, Verdict>) -> Value {
    Value::Object(v.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
}

fn is_failure(v: &Verdict) -> bool {
    matches!(v, Verdict::Mismatch(_))
}

/// The test hook of the hang handling (`tests/fuzz_driver.rs`): a worker given this variable
/// stops forever at the beginning of that seed's case.
const STALL_VAR: &str = "PYTATO_FUZZ_STALL_SEED";

/// `fuzz worker`: cases `start, start + step, ...` (`--dags` of them, or forever); one line
/// `begin SEED` before each and `done SEED JSON` after it.
fn worker(o: &Options) -> Result<bool, String> {
    let Sides { compiled, interp, .. } = backends(&o.backends)?;
    let mut oracle = oracle(o.numpy);
    let stdout = std::io::stdout();
    let mut seed = o.start;
    let mut done = 0u64;
    let stall = std::env::var(STALL_VAR).ok().and_then(|s| s.parse::<u64>().ok());
    while o.dags.is_none_or(|n| done < n) {
        writeln!(stdout.lock(), "begin {seed}").map_err(|e| e.to_string())?;
        if stall == Some(seed) {
            loop {
                std::thread::park();
            }
        }
        let case = generate(seed);
        let verdicts = check(&case, interp.as_ref(), &compiled, oracle.as_mut());
        let mut line = json!({"verdicts": verdicts_json(&verdicts), "stmts": case.stmts.len()});
        if verdicts.values().any(is_failure) {
            line["case"] = case.to_json();
        }
        writeln!(stdout.lock(), "done {seed} {line}").map_err(|e| e.to_string())?;
        seed += o.step;
        done += 1;
    }
    Ok(true)
}

/// `fuzz check FILE`: the verdicts on one case, as JSON.
fn check_file(o: &Options, rest: &[String]) -> Result<bool, String> {
    let path = rest.first().ok_or("check needs a case file")?;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let case = FuzzCase::from_json(&serde_json::from_str(&text).map_err(|e| e.to_string())?)?;
    let Sides { compiled, interp, .. } = backends(&o.backends)?;
    let verdicts = check(&case, interp.as_ref(), &compiled, oracle(o.numpy).as_mut());
    println!("{}", verdicts_json(&verdicts));
    Ok(true)
}

fn print_case(rest: &[String]) -> Result<bool, String> {
    let seed: u64 = rest.first().ok_or("case needs a seed")?.parse().map_err(|e| format!("seed: {e}"))?;
    println!("{}", generate(seed).to_json());
    Ok(true)
}

fn load_case(arg: &str) -> Result<FuzzCase, String> {
    match arg.parse::<u64>() {
        Ok(seed) => Ok(generate(seed)),
        Err(_) => {
            let text = std::fs::read_to_string(arg).map_err(|e| format!("{arg}: {e}"))?;
            let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
            FuzzCase::from_json(v.get("shrunk").unwrap_or(&v))
        }
    }
}

fn repro(o: &Options, rest: &[String]) -> Result<bool, String> {
    let case = load_case(rest.first().ok_or("repro needs a seed or a case file")?)?;
    println!("{}", case.describe());
    for run in 0..case.runs.len() {
        for input in &case.inputs {
            println!("# run {run}: {} = {:?}", input.name, case.input_data(input, run).to_scalars());
        }
    }
    let Sides { compiled, interp, skipped } = backends(&o.backends)?;
    for s in skipped {
        println!("# {s}");
    }
    let verdicts = check(&case, interp.as_ref(), &compiled, oracle(o.numpy).as_mut());
    for (side, v) in &verdicts {
        println!("{side}: {} {}", v.label(), v.to_json()["detail"].as_str().unwrap_or(""));
    }
    Ok(!verdicts.values().any(is_failure))
}

// ---------------------------------------------------------------------------------------------
// Campaigns.

/// What a worker's reader thread reports, with the worker's slot and process id: a worker killed
/// for a hang is replaced in its slot, and what its reader still reports afterwards (its exit
/// above all) must not be taken for the replacement's.
enum Event {
    Begin(Source, u64),
    Done(Source, u64, Value),
    Exited(Source),
}

#[derive(Clone, Copy)]
struct Source {
    slot: usize,
    pid: u32,
}

/// The worker in `workers` that `source` speaks for, if it is still the one in its slot.
fn worker_of(workers: &mut [Option<Worker>], source: Source) -> Option<&mut Worker> {
    workers[source.slot].as_mut().filter(|w| w.child.id() == source.pid)
}

struct Worker {
    child: Child,
    /// The case in progress, and since when.
    current: Option<(u64, Instant)>,
    /// The seed after which this worker continues when restarted.
    next: u64,
    /// Cases finished, for `--dags`.
    finished: u64,
    quota: Option<u64>,
}

fn self_exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("locating the fuzz binary: {e}"))
}

fn common_args(o: &Options) -> Vec<String> {
    let mut args = Vec::new();
    for b in &o.backends {
        args.extend(["--backend".to_string(), b.clone()]);
    }
    if !o.numpy {
        args.push("--no-numpy".into());
    }
    args
}

fn spawn_worker(
    o: &Options,
    id: usize,
    start: u64,
    quota: Option<u64>,
    events: &mpsc::Sender<Event>,
) -> Result<Worker, String> {
    let mut cmd = Command::new(self_exe()?);
    cmd.args(["worker", "--start", &start.to_string(), "--step", &o.jobs.to_string()]);
    if let Some(q) = quota {
        cmd.args(["--dags", &q.to_string()]);
    }
    cmd.args(common_args(o)).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("starting a worker: {e}"))?;
    let stdout = child.stdout.take().ok_or("worker without stdout")?;
    let source = Source { slot: id, pid: child.id() };
    let tx = events.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let mut parts = line.splitn(3, ' ');
            match (parts.next(), parts.next().and_then(|s| s.parse().ok()), parts.next()) {
                (Some("begin"), Some(seed), _) => {
                    let _ = tx.send(Event::Begin(source, seed));
                }
                (Some("done"), Some(seed), Some(json)) => {
                    let _ = tx.send(Event::Done(source, seed, serde_json::from_str(json).unwrap_or(Value::Null)));
                }
                _ => {}
            }
        }
        let _ = tx.send(Event::Exited(source));
    });
    Ok(Worker { child, current: None, next: start, finished: 0, quota })
}

#[derive(Default)]
struct Totals {
    dags: u64,
    /// Per side (backend name or numpy), per verdict label.
    verdicts: BTreeMap<String, BTreeMap<String, u64>>,
    crashes: Vec<u64>,
    hangs: Vec<u64>,
    /// (seed, side, detail, case)
    failures: Vec<(u64, String, String, Value)>,
    /// Side → reason → count, for unsupported and numpy-refused verdicts.
    reasons: BTreeMap<String, BTreeMap<String, u64>>,
}

/// The first line of a reason, without its `run K: ` prefix, for grouping.
fn short_reason(detail: &str) -> String {
    let d = match detail.strip_prefix("run ").and_then(|r| r.split_once(": ")) {
        Some((_, rest)) => rest,
        None => detail,
    };
    d.lines().next().unwrap_or("").chars().take(110).collect()
}

fn record(t: &mut Totals, seed: u64, line: &Value) {
    t.dags += 1;
    let Some(verdicts) = line["verdicts"].as_object() else { return };
    for (side, v) in verdicts {
        let v = Verdict::from_json(v);
        *t.verdicts.entry(side.clone()).or_default().entry(v.label().to_string()).or_default() += 1;
        match &v {
            Verdict::Mismatch(d) => t.failures.push((seed, side.clone(), d.clone(), line["case"].clone())),
            Verdict::Unsupported(d)
            | Verdict::NumpyRefused(d)
            | Verdict::LibraryRefused(d)
            | Verdict::NumpyDiffers(d) => {
                *t.reasons.entry(format!("{side} {}", v.label())).or_default().entry(short_reason(d)).or_default() += 1;
            }
            _ => {}
        }
    }
}

fn campaign(o: &Options) -> Result<bool, String> {
    if o.seconds.is_none() && o.dags.is_none() {
        return Err("campaign needs --seconds/--minutes or --dags".into());
    }
    let Sides { compiled, skipped, .. } = backends(&o.backends)?;
    for s in &skipped {
        eprintln!("fuzz: {s}");
    }
    let sides: Vec<String> = compiled.iter().map(|(n, _)| n.clone()).collect();
    drop(compiled);
    eprintln!(
        "fuzz: {} workers from seed {}, backends {sides:?} against the interpreter{}",
        o.jobs,
        o.start,
        if o.numpy { ", the interpreter against numpy" } else { "" }
    );
    // Failures of an earlier campaign would read as this one's.
    let _ = std::fs::remove_dir_all(o.report.join("failures"));
    let started = Instant::now();
    let deadline = o.seconds.map(|s| started + Duration::from_secs(s));
    let (tx, rx) = mpsc::channel();
    let per_worker = |id: usize| o.dags.map(|n| n / o.jobs as u64 + u64::from((id as u64) < n % o.jobs as u64));
    let mut workers: Vec<Option<Worker>> = Vec::new();
    for id in 0..o.jobs {
        let quota = per_worker(id);
        workers.push(if quota == Some(0) { None } else { Some(spawn_worker(o, id, o.start + id as u64, quota, &tx)?) });
    }
    let mut totals = Totals::default();
    let timeout = Duration::from_secs(o.timeout);
    let mut last_progress = Instant::now();
    while workers.iter().any(Option::is_some) {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        if last_progress.elapsed() > Duration::from_secs(30) {
            eprintln!("fuzz: {} DAGs in {:.0} s", totals.dags, started.elapsed().as_secs_f64());
            last_progress = Instant::now();
        }
        let event = rx.recv_timeout(Duration::from_millis(500));
        match event {
            Ok(Event::Begin(source, seed)) => {
                if let Some(w) = worker_of(&mut workers, source) {
                    w.current = Some((seed, Instant::now()));
                }
            }
            Ok(Event::Done(source, seed, line)) => {
                let Some(w) = worker_of(&mut workers, source) else { continue };
                w.current = None;
                w.next = seed + o.jobs as u64;
                w.finished += 1;
                record(&mut totals, seed, &line);
            }
            Ok(Event::Exited(source)) => {
                // The exit of a worker killed for a hang was handled when it was killed.
                let id = source.slot;
                let Some(mut w) = workers[id].take_if(|w| w.child.id() == source.pid) else { continue };
                let _ = w.child.wait();
                if let Some((seed, _)) = w.current {
                    eprintln!("fuzz: worker crashed on seed {seed}");
                    totals.crashes.push(seed);
                    totals.dags += 1;
                    let left = w.quota.map(|q| q.saturating_sub(w.finished + 1));
                    if left != Some(0) {
                        workers[id] = Some(spawn_worker(o, id, seed + o.jobs as u64, left, &tx)?);
                    }
                }
            }
            Err(_) => {}
        }
        // Hangs: a case running longer than the timeout.
        for (id, slot) in workers.iter_mut().enumerate() {
            let hung = slot.as_ref().and_then(|w| w.current.filter(|(_, t)| t.elapsed() > timeout).map(|c| c.0));
            if let Some(seed) = hung {
                eprintln!("fuzz: seed {seed} hangs (over {} s)", o.timeout);
                let mut w = slot.take().expect("checked");
                let _ = w.child.kill();
                let _ = w.child.wait();
                totals.hangs.push(seed);
                totals.dags += 1;
                let left = w.quota.map(|q| q.saturating_sub(w.finished + 1));
                if left != Some(0) {
                    *slot = Some(spawn_worker(o, id, seed + o.jobs as u64, left, &tx)?);
                }
            }
        }
    }
    for w in workers.iter_mut().flatten() {
        let _ = w.child.kill();
        let _ = w.child.wait();
    }
    let elapsed = started.elapsed().as_secs_f64();
    eprintln!("fuzz: {} DAGs in {elapsed:.0} s; shrinking failures", totals.dags);
    let shrunk = shrink_failures(o, &totals)?;
    write_report(o, &totals, &sides, elapsed, &shrunk)?;
    Ok(totals.failures.is_empty() && totals.crashes.is_empty() && totals.hangs.is_empty())
}

/// What a check of a case in a fresh process gives: the verdicts, or a crash or hang.
enum Checked {
    Verdicts(BTreeMap<String, Verdict>),
    Crashed,
    Hung,
}

fn check_in_child(o: &Options, case: &FuzzCase, scratch: &Path) -> Result<Checked, String> {
    std::fs::write(scratch, case.to_json().to_string()).map_err(|e| e.to_string())?;
    let mut child = Command::new(self_exe()?)
        .arg("check")
        .arg(scratch)
        .args(common_args(o))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting a check: {e}"))?;
    let started = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(status) => {
                let mut out = String::new();
                if let Some(mut s) = child.stdout.take() {
                    let _ = std::io::Read::read_to_string(&mut s, &mut out);
                }
                if !status.success() {
                    return Ok(Checked::Crashed);
                }
                let v: Value = serde_json::from_str(out.trim()).map_err(|e| format!("check printed {out:?}: {e}"))?;
                let verdicts = v.as_object().ok_or("check printed no object")?;
                return Ok(Checked::Verdicts(
                    verdicts.iter().map(|(k, v)| (k.clone(), Verdict::from_json(v))).collect(),
                ));
            }
            None if started.elapsed() > Duration::from_secs(o.timeout) => {
                let _ = child.kill();
                let _ = child.wait();
                return Ok(Checked::Hung);
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// A failure and its reproducer.
struct Shrunk {
    seed: u64,
    /// `crash`, `hang` or `mismatch`.
    kind: String,
    /// The side that mismatched (a backend, or numpy).
    side: String,
    case: FuzzCase,
    small: FuzzCase,
    detail: String,
}

/// Shrinks (at most 12 of) the failures.
fn shrink_failures(o: &Options, t: &Totals) -> Result<Vec<Shrunk>, String> {
    let mut todo: Vec<(u64, String, String, String)> = Vec::new();
    for &s in &t.crashes {
        todo.push((s, "crash".into(), String::new(), String::new()));
    }
    for &s in &t.hangs {
        todo.push((s, "hang".into(), String::new(), String::new()));
    }
    // Backends first: a numpy disagreement is about the interpreter (or numpy).
    let mut failures: Vec<&(u64, String, String, Value)> = t.failures.iter().collect();
    failures.sort_by_key(|(_, side, _, _)| side == "numpy");
    for (s, side, detail, _) in failures {
        todo.push((*s, "mismatch".into(), side.clone(), detail.clone()));
    }
    std::fs::create_dir_all(&o.report).map_err(|e| e.to_string())?;
    let scratch = o.report.join("shrink-candidate.json");
    let mut out = Vec::new();
    for (seed, kind, side, detail) in todo.into_iter().take(12) {
        let case = generate(seed);
        let mut still_fails = |c: &FuzzCase| match check_in_child(o, c, &scratch) {
            Ok(Checked::Crashed) => kind == "crash",
            Ok(Checked::Hung) => kind == "hang",
            Ok(Checked::Verdicts(v)) => kind == "mismatch" && v.get(&side).is_some_and(is_failure),
            Err(_) => false,
        };
        let small = shrink(&case, 150, &mut still_fails);
        out.push(Shrunk { seed, kind, side, case, small, detail });
    }
    let _ = std::fs::remove_file(&scratch);
    Ok(out)
}

fn write_report(o: &Options, t: &Totals, sides: &[String], elapsed: f64, shrunk: &[Shrunk]) -> Result<(), String> {
    let dir = &o.report;
    let failures_dir = dir.join("failures");
    std::fs::create_dir_all(&failures_dir).map_err(|e| e.to_string())?;
    let mut md = String::new();
    md += &format!(
        "# Differential fuzzing\n\n{} DAGs in {elapsed:.0} s (seeds from {}, {} jobs); crashes {}, hangs {}.\n\n",
        t.dags,
        o.start,
        o.jobs,
        t.crashes.len(),
        t.hangs.len()
    );
    md += "| comparison | agree | agree within transcendental tolerance | agree in another summation order | mismatch \
           | unsupported | numpy refused | library refused | numpy differs | skipped |\n";
    md += "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n";
    for (side, counts) in &t.verdicts {
        let label = if side == "numpy" { "interp vs numpy".to_string() } else { format!("{side} vs interp") };
        let c = |k: &str| counts.get(k).copied().unwrap_or(0);
        md += &format!(
            "| {label} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            c("agree"),
            c("transcendental"),
            c("reordered"),
            c("mismatch"),
            c("unsupported"),
            c("numpy-refused"),
            c("library-refused"),
            c("numpy-differs"),
            c("skipped")
        );
    }
    if !t.reasons.is_empty() {
        md += "\n## Unsupported and refused, by reason\n\n";
        for (what, reasons) in &t.reasons {
            let mut list: Vec<(&String, &u64)> = reasons.iter().collect();
            list.sort_by(|a, b| b.1.cmp(a.1));
            for (r, n) in list.into_iter().take(8) {
                md += &format!("- {what}, {n}x: {r}\n");
            }
        }
    }
    if !shrunk.is_empty() {
        md += "\n## Failures (shrunk)\n\n";
    }
    for Shrunk { seed, kind, side, case, small, detail } in shrunk {
        let file = failures_dir.join(format!("seed-{seed}.json"));
        let body = json!({"seed": seed, "kind": kind, "side": side, "detail": detail, "case": case.to_json(), "shrunk": small.to_json()});
        std::fs::write(&file, serde_json::to_string_pretty(&body).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        md += &format!(
            "### seed {seed}: {kind} {side}\n\n{detail}\n\n```python\n{}```\n\nreproduce: `cargo run -p pytato-conformance --bin fuzz -- repro {}`\n\n",
            small.describe(),
            file.display()
        );
    }
    let json = json!({
        "dags": t.dags, "seconds": elapsed, "start": o.start, "sides": sides,
        "verdicts": t.verdicts, "crashes": t.crashes, "hangs": t.hangs,
        "failures": t.failures.iter().map(|(s, side, d, _)| json!({"seed": s, "side": side, "detail": d})).collect::<Vec<_>>(),
    });
    std::fs::write(dir.join("report.md"), &md).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("report.json"), serde_json::to_string_pretty(&json).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    print!("{md}");
    Ok(())
}
