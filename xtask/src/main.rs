//! Project automation, run as `cargo xtask <command>`.
//!
//! - `ci`: formatting, lints, documentation (warnings denied), every test of the workspace, the conformance suite (and again on
//!   wgpu through the code paths GPUs take, `PYTATO_WGPU_GPU_PATHS=1`, with the wgpu backend's own
//!   tests), the MPI tests, the Python
//!   package's tests and a short fuzzing run: the README's test command.
//! - `conformance [--backend NAME]...`: the case-by-backend matrix; reports in `target/conformance`.
//! - `bench [--quick] [--peers] [WORKLOAD]...`: the benchmark workloads on every linked backend
//!   against `ndarray` and hand-written loops (release build); with `--peers` also numpy and
//!   `jax.jit` (installed into `target/peers-venv` when missing); reports in `target/bench`.
//! - `fuzz [--minutes N] [--backend NAME]... [--start SEED] ...`: a differential fuzzing campaign
//!   (release build): random programs on every backend against the interpreter, and the
//!   interpreter against numpy where Python has it; report and shrunk failures in `target/fuzz`.
//! - `mpi`: the distributed tests under `mpirun -n 2`, `-n 3` and `-n 4` (part of `ci` where MPI
//!   is installed; `PYTATO_REQUIRE_MPI=1` makes a missing MPI a failure, as in CI).
//! - `bench-mpi`: strong scaling of the `distributed_heat` example on 1, 2 and 4 ranks.
//! - `bench-dg [ARGS]`: the DG flagship's timing mode (`dg time ARGS`) with its JAX peer
//!   (`jax.jit` of the same method, installed into `target/peers-venv` when missing).
//! - `python`: builds the Python package (`python/`, with maturin into `target/python-venv`) and
//!   runs its tests (pytest); part of `ci`, skipped with a message where the packages cannot be
//!   installed unless `PYTATO_REQUIRE_PYTHON=1` (CI).
//! - `golden`: regenerates the numpy golden files (needs Python 3 with numpy; the tests do not).

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        Some("golden") => golden(),
        Some("conformance") => conformance(&args[1..], &[]),
        Some("bench") => bench(&args[1..]),
        Some("fuzz") => fuzz(&args[1..]),
        Some("mpi") => mpi_tests(true).map(|_| ()),
        Some("bench-mpi") => bench_mpi(&args[1..]),
        Some("bench-dg") => bench_dg(&args[1..]),
        Some("python") => python_tests(true),
        _ => {
            eprintln!("usage: cargo xtask <ci|conformance|bench|fuzz|mpi|bench-mpi|bench-dg|python|golden>");
            eprintln!(
                "  ci           cargo fmt --check, clippy -D warnings, cargo doc -D warnings, cargo test --workspace, conformance (and it and the \
                 wgpu tests on wgpu's GPU code paths), MPI, Python, a short fuzzing run"
            );
            eprintln!("  conformance  [--backend NAME]... run the conformance suite; reports in target/conformance");
            eprintln!(
                "  bench        [--quick] [--peers] [WORKLOAD]... benchmarks vs ndarray, hand loops (and numpy, jax.jit); reports in target/bench"
            );
            eprintln!("  fuzz         [--minutes N] [--backend NAME]... differential fuzzing; report in target/fuzz");
            eprintln!("  mpi          the distributed tests under mpirun -n 2, 3 and 4 (needs Open MPI)");
            eprintln!(
                "  bench-mpi    [--points N] [--runs N] strong scaling of the distributed heat example on 1, 2, 4 ranks"
            );
            eprintln!(
                "  bench-dg     [P:K]... [--steps N] [--rounds R] the DG flagship per step against jax.jit of the same method"
            );
            eprintln!("  python       build the Python package into target/python-venv and run its tests");
            eprintln!("  golden  regenerate the numpy golden files under */tests/data (needs python3 + numpy)");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace").to_path_buf()
}

fn cargo() -> Command {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(workspace_root());
    cmd
}

/// Runs `cmd`, timing it under `label`; an error if it fails.
fn run(label: &str, mut cmd: Command) -> Result<(), String> {
    eprintln!("==> {label}");
    let start = Instant::now();
    let status = cmd.status().map_err(|e| format!("{label}: could not start: {e}"))?;
    eprintln!(
        "==> {label}: {} in {:.1}s",
        if status.success() { "ok" } else { "FAILED" },
        start.elapsed().as_secs_f64()
    );
    if status.success() { Ok(()) } else { Err(format!("{label} failed ({status})")) }
}

fn ci() -> Result<(), String> {
    let mut fmt = cargo();
    fmt.args(["fmt", "--all", "--", "--check"]);
    run("cargo fmt --check", fmt)?;

    // The MPI code is linted, built and tested where MPI is installed. Every step builds with the
    // same features, and names binaries rather than `--package`: a different selection resolves
    // the dependencies' features anew and builds them all again (minutes on two cores; the `mpi`
    // crate's build dependencies alone change `syn`'s, and with it every derive macro's).
    let mpi = mpi_available()?;
    let features: &[&str] = if mpi { &["--features", "pytato-distributed/mpi"] } else { &[] };
    let mut clippy = cargo();
    clippy.args(["clippy", "--workspace", "--all-targets"]).args(features);
    clippy.args(["--", "-D", "warnings"]);
    run("cargo clippy", clippy)?;

    // Public items are documented and every doc link resolves.
    let mut doc = cargo();
    doc.args(["doc", "--no-deps", "--workspace"]).env("RUSTDOCFLAGS", "-D warnings");
    run("cargo doc (warnings denied)", doc)?;

    // The conformance matrix runs once, in the next step, which also writes its reports: its
    // test (`all_backends.rs`, for `cargo test` on its own) is the same run.
    let mut test = cargo();
    test.args(["test", "--workspace"]).args(features).args(["--", "--skip", CONFORMANCE_MATRIX_TEST]);
    run("cargo test", test)?;

    conformance(&[], features)?;
    gpu_paths_tests(features)?;

    if mpi {
        mpi_tests(false)?;
    }

    python_tests(false)?;

    // A short, deterministic fuzzing run (the same seeds every time): a failure here is a new
    // disagreement between backends, or with numpy.
    let mut fuzz = cargo();
    fuzz.args(["run", "--quiet", "--bin", "fuzz"]).args(features).args(["--", "campaign"]);
    fuzz.args(["--dags", CI_FUZZ_DAGS, "--start", "0", "--report"]);
    fuzz.arg(workspace_root().join("target/fuzz-ci"));
    run("fuzz (short run)", fuzz)
}

/// The test in `conformance-tests/tests/all_backends.rs` that runs the conformance matrix.
const CONFORMANCE_MATRIX_TEST: &str = "every_case_passes_on_every_linked_backend";

/// DAGs in the fuzzing run of `cargo xtask ci`.
const CI_FUZZ_DAGS: &str = "3000";

/// A fuzzing campaign in a release build: `--minutes N` (default 5) and the fuzz binary's options.
fn fuzz(args: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["run", "--release", "--quiet", "--package", "pytato-conformance", "--bin", "fuzz", "--", "campaign"]);
    if !args.iter().any(|a| a == "--minutes" || a == "--seconds" || a == "--dags") {
        cmd.args(["--minutes", "5"]);
    }
    cmd.args(args);
    if !args.iter().any(|a| a == "--report") {
        cmd.arg("--report").arg(workspace_root().join("target/fuzz"));
    }
    run("fuzz", cmd)
}

/// Runs the benchmark workloads (`pytato/benches/workloads.rs`), which print the table and write
/// `target/bench/report.{json,md}`.
fn bench(args: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["bench", "--package", "pytato", "--features", "wgpu", "--bench", "workloads", "--"]);
    for arg in args {
        if arg != "--peers" {
            cmd.arg(arg);
        } else {
            match peers_python() {
                Ok(python) => {
                    cmd.arg("--peers").arg(python);
                }
                Err(e) => eprintln!("bench: peers skipped: {e}"),
            }
        }
    }
    run("bench", cmd)
}

/// The DG flagship's timing mode against its JAX peer (see `pytato/examples/dg/timing.rs`).
fn bench_dg(args: &[String]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["run", "--release", "--package", "pytato", "--example", "dg", "--", "time"]).args(args);
    match peers_python() {
        Ok(python) => {
            cmd.arg("--peers").arg(python);
        }
        Err(e) => eprintln!("bench-dg: the JAX peer is skipped: {e}"),
    }
    run("bench-dg", cmd)
}

/// The Python of `target/peers-venv`, with numpy and jax installed there first if missing.
fn peers_python() -> Result<PathBuf, String> {
    python_venv("peers-venv", &["numpy>=2", "jax"], "import numpy, jax")
}

/// The Python of a virtual environment `target/<name>` with `packages` installed, made and
/// installed into when `ready` (a Python statement) fails there.
fn python_venv(name: &str, packages: &[&str], ready: &str) -> Result<PathBuf, String> {
    let venv = workspace_root().join("target").join(name);
    let python = venv.join("bin/python");
    let is_ready = |python: &Path| Command::new(python).args(["-c", ready]).output().is_ok_and(|o| o.status.success());
    if is_ready(&python) {
        return Ok(python);
    }
    eprintln!("==> installing {} into {}", packages.join(", "), venv.display());
    let status = Command::new("python3").arg("-m").arg("venv").arg(&venv).status();
    if !status.is_ok_and(|s| s.success()) {
        return Err("python3 -m venv failed (Debian: apt-get install python3-venv)".into());
    }
    let status = Command::new(venv.join("bin/pip")).args(["install", "--quiet"]).args(packages).status();
    if !status.is_ok_and(|s| s.success()) || !is_ready(&python) {
        return Err(format!("pip could not install {} (offline?)", packages.join(", ")));
    }
    Ok(python)
}

/// Builds the Python package with `maturin develop` into `target/python-venv` and runs its
/// tests. Where Python, pip or the packages are missing the tests are skipped with a message,
/// unless `required` (the `python` command) or `PYTATO_REQUIRE_PYTHON=1` (CI).
fn python_tests(required: bool) -> Result<(), String> {
    let required = required || env::var("PYTATO_REQUIRE_PYTHON").is_ok_and(|v| v == "1");
    // pymbolic: IndexLambda.expr is a pymbolic expression (pytato_rs.scalar_expr). loopy:
    // call_loopy reads loopy kernels (pytato_rs.loopy); 2025.1 is the last release that runs on
    // Python 3.11 (Debian's), and islpy 2026 dropped what it calls.
    // pytest-xdist: the tests run in one process per core.
    let packages =
        ["maturin>=1.16,<2", "numpy>=2", "pytest>=8", "pytest-xdist>=3", "pymbolic", "loopy==2025.1", "islpy<2026"];
    let python = match python_venv("python-venv", &packages, "import maturin, numpy, pytest, xdist, pymbolic, loopy") {
        Ok(python) => python,
        Err(e) if !required => {
            eprintln!("==> Python tests SKIPPED: {e}");
            return Ok(());
        }
        Err(e) => return Err(format!("the Python tests need Python 3 with venv and pip: {e}")),
    };
    let bin = python.parent().expect("a venv's python is in its bin").to_path_buf();
    let venv = bin.parent().expect("a venv's bin is in the venv").to_path_buf();
    // mpi4py: the distributed tests run over it (it builds against the system's MPI). jax: the
    // tests of `generate_jax` run it. Without them those tests are skipped with a message.
    install_optional(&bin, "mpi4py", "PYTATO_REQUIRE_MPI", "install openmpi-bin libopenmpi-dev")?;
    install_optional(&bin, "jax", "PYTATO_REQUIRE_PYTHON", "offline?")?;
    let path =
        env::join_paths(std::iter::once(bin.clone()).chain(env::split_paths(&env::var_os("PATH").unwrap_or_default())))
            .map_err(|e| format!("PATH: {e}"))?;
    let package = workspace_root().join("python");
    let mut develop = Command::new(bin.join("maturin"));
    develop.args(["develop", "--quiet"]).current_dir(&package).env("VIRTUAL_ENV", &venv).env("PATH", &path);
    run("maturin develop (the pytato_rs package)", develop)?;
    let mut pytest = Command::new(&python);
    pytest.args(["-m", "pytest", "-q", "-n", "auto", "tests"]).current_dir(&package).env("PATH", &path);
    run("pytest (python/tests)", pytest)
}

/// Installs the optional `package` into the venv of `bin` where it is missing. A failed
/// install is an error where the environment variable `required_by` is `1` (CI), and otherwise
/// a message: the tests that need the package skip themselves. `hint` says what may be missing.
fn install_optional(bin: &Path, package: &str, required_by: &str, hint: &str) -> Result<(), String> {
    let python = bin.join("python");
    let import = format!("import {package}");
    let has = || Command::new(&python).args(["-c", &import]).output().is_ok_and(|o| o.status.success());
    if has() {
        return Ok(());
    }
    eprintln!("==> installing {package}");
    let installed = Command::new(bin.join("pip")).args(["install", "--quiet", package]).status();
    if installed.is_ok_and(|s| s.success()) && has() {
        return Ok(());
    }
    if env::var(required_by).is_ok_and(|v| v == "1") {
        return Err(format!("{required_by}=1 but pip could not install {package} ({hint})"));
    }
    eprintln!("==> {package} could not be installed ({hint}): the Python tests that need it will be skipped");
    Ok(())
}

/// Runs the conformance binary, which prints the matrix and the per-backend summary lines and
/// writes `target/conformance/report.{md,json}`; built with cargo's `features` arguments.
fn conformance(args: &[String], features: &[&str]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--bin", "conformance"]).args(features).arg("--");
    cmd.args(args);
    cmd.args(["--report-dir", &workspace_root().join("target/conformance").to_string_lossy()]);
    run("conformance", cmd)
}

/// The conformance suite and the wgpu backend's own tests through the code paths only GPUs take
/// (tiled matrix products, workgroup sorts), on whatever adapter there is: lavapipe in CI, so that
/// a test that holds only on a CPU adapter fails here rather than on a GPU. Skipped with a message
/// where wgpu cannot start (unless `PYTATO_REQUIRE_WGPU` is set, when the suite itself fails).
fn gpu_paths_tests(features: &[&str]) -> Result<(), String> {
    let mut cmd = cargo();
    cmd.args(["run", "--quiet", "--bin", "conformance"]).args(features).arg("--");
    cmd.args(["--backend", "wgpu", "--report-dir"]);
    cmd.arg(workspace_root().join("target/conformance-gpu-paths"));
    cmd.env("PYTATO_WGPU_GPU_PATHS", "1");
    run("conformance (wgpu, GPU code paths)", cmd)?;
    // The wgpu crate's unit and integration tests as `cargo test --workspace` built them (not
    // `cargo test --package`, which would build their dependencies again), run as cargo runs
    // them: from the crate's directory. Its doc tests run in `cargo test` only.
    let package = workspace_root().join("backend-wgpu");
    let selection: Vec<&str> = ["--workspace"].iter().chain(features).copied().collect();
    for executable in test_executables(&selection, &package)? {
        let mut tests = Command::new(&executable);
        tests.current_dir(&package).env("PYTATO_WGPU_GPU_PATHS", "1");
        let name = Path::new(&executable).file_name().map_or(executable.clone(), |n| n.to_string_lossy().into_owned());
        run(&format!("wgpu tests (GPU code paths): {name}"), tests)?;
    }
    Ok(())
}

/// The test executables that `cargo test <selection> --no-run` builds for the package in
/// `package_dir` (its unit tests and each integration test), building what is not built yet.
fn test_executables(selection: &[&str], package_dir: &Path) -> Result<Vec<String>, String> {
    let output = cargo()
        .args(["test", "--no-run", "--message-format", "json-render-diagnostics"])
        .args(selection)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("building the tests of {}: {e}", package_dir.display()))?;
    if !output.status.success() {
        return Err(format!("building the tests of {} failed", package_dir.display()));
    }
    // One JSON object a line; cargo writes paths without escapes on the systems CI runs on.
    let manifest = format!("\"manifest_path\":\"{}\"", package_dir.join("Cargo.toml").display());
    let executables: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter(|l| l.contains("\"reason\":\"compiler-artifact\"") && l.contains(&manifest))
        .filter_map(|l| l.split("\"executable\":\"").nth(1).and_then(|rest| rest.split('"').next()))
        .map(str::to_string)
        .collect();
    if executables.is_empty() {
        return Err(format!("cargo reported no test executable for {}", package_dir.display()));
    }
    Ok(executables)
}

fn golden() -> Result<(), String> {
    let dir = workspace_root().join("golden");
    let mut scripts: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|e| e == "py")
                && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("gen_"))
        })
        .collect();
    scripts.sort();
    for script in scripts {
        let mut cmd = Command::new("python3");
        cmd.arg(&script).current_dir(workspace_root());
        run(&format!("python3 {}", script.display()), cmd)?;
    }
    Ok(())
}

/// Whether MPI (`mpirun` and the `mpicc` the `mpi` crate builds with) is installed. Without it the
/// MPI tests are skipped with a message, unless `PYTATO_REQUIRE_MPI=1` (CI) makes that an error.
fn mpi_available() -> Result<bool, String> {
    let found = |tool: &str| Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success());
    if found("mpirun") && found("mpicc") {
        return Ok(true);
    }
    if env::var("PYTATO_REQUIRE_MPI").is_ok_and(|v| v == "1") {
        return Err("PYTATO_REQUIRE_MPI=1 but mpirun/mpicc were not found (install openmpi-bin libopenmpi-dev)".into());
    }
    eprintln!("==> MPI tests SKIPPED: mpirun/mpicc not found (install openmpi-bin, libopenmpi-dev and libclang-dev)");
    Ok(false)
}

/// `mpirun` with the flags every run here needs: more ranks than cores, and root in containers.
fn mpirun(ranks: usize) -> Command {
    let mut cmd = Command::new("mpirun");
    cmd.args(["-n", &ranks.to_string(), "--oversubscribe"]);
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root {
        cmd.arg("--allow-run-as-root");
    }
    // Loopback only: no network interface probing on build machines.
    cmd.args(["--mca", "btl_tcp_if_include", "lo", "--mca", "oob_tcp_if_include", "lo"]);
    cmd.current_dir(workspace_root());
    cmd
}

/// Runs `cmd`, killing it after `limit` (a hang is a failure, never a stuck CI).
fn run_with_timeout(label: &str, mut cmd: Command, limit: std::time::Duration) -> Result<(), String> {
    eprintln!("==> {label}");
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(|e| format!("{label}: could not start: {e}"))?;
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            eprintln!(
                "==> {label}: {} in {:.1}s",
                if status.success() { "ok" } else { "FAILED" },
                start.elapsed().as_secs_f64()
            );
            return if status.success() { Ok(()) } else { Err(format!("{label} failed ({status})")) };
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{label}: killed after {limit:?} (a hang)"));
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Builds the MPI test harness (`pytato-distributed/tests/mpi.rs`) and runs it on 2, 3 and 4
/// ranks. `check_installed`: say why when MPI is missing (the `mpi` command) instead of skipping.
fn mpi_tests(check_installed: bool) -> Result<(), String> {
    if check_installed && !mpi_available()? {
        return Err("MPI is not installed".into());
    }
    // The selection `cargo xtask ci` tests with, so that it builds nothing again.
    let selection = ["--workspace", "--features", "pytato-distributed/mpi", "--test", "mpi"];
    let executables = test_executables(&selection, &workspace_root().join("pytato-distributed"))?;
    let [executable] = executables.as_slice() else {
        return Err(format!("cargo reported {} MPI test executables, not one", executables.len()));
    };
    for ranks in [2, 3, 4] {
        let mut cmd = mpirun(ranks);
        cmd.arg(executable);
        run_with_timeout(&format!("MPI tests on {ranks} ranks"), cmd, std::time::Duration::from_secs(300))?;
    }
    Ok(())
}

/// Strong scaling of the `distributed_heat` example: one grid on 1, 2 and 4 ranks (release
/// build). The example prints its timings; this prints the speedups of one run.
fn bench_mpi(args: &[String]) -> Result<(), String> {
    if !mpi_available()? {
        return Err("MPI is not installed".into());
    }
    let mut build = cargo();
    build.args([
        "build",
        "--release",
        "--package",
        "pytato-distributed",
        "--features",
        "mpi",
        "--example",
        "distributed_heat",
    ]);
    run("build distributed_heat", build)?;
    let example = workspace_root().join("target/release/examples/distributed_heat");
    let mut times: Vec<(usize, f64, f64)> = Vec::new();
    for ranks in [1, 2, 4] {
        let mut cmd = mpirun(ranks);
        cmd.arg(&example).args(args).arg("--summary");
        eprintln!("==> distributed_heat on {ranks} ranks");
        let out = cmd.output().map_err(|e| format!("mpirun: {e}"))?;
        print!("{}", String::from_utf8_lossy(&out.stdout));
        if !out.status.success() {
            eprint!("{}", String::from_utf8_lossy(&out.stderr));
            return Err(format!("distributed_heat on {ranks} ranks failed"));
        }
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let field = |name: &str| {
            stdout
                .lines()
                .filter(|l| l.starts_with("SUMMARY "))
                .flat_map(str::split_whitespace)
                .find_map(|kv| {
                    kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')).and_then(|v| v.parse::<f64>().ok())
                })
                .ok_or_else(|| format!("the example printed no SUMMARY {name}"))
        };
        times.push((ranks, field("run_seconds")?, field("unpartitioned_seconds")?));
    }
    let (_, one, unpartitioned) = times[0];
    println!("\nstrong scaling (median time of one run of 10 steps, slowest rank; speedup = t(1) / t(n)):");
    for (ranks, t, _) in &times {
        println!(
            "  {ranks} ranks: {:.4} s   speedup {:.2}   efficiency {:.0}%",
            t,
            one / t,
            100.0 * one / t / *ranks as f64
        );
    }
    println!(
        "overhead of the partitioned run on 1 rank: {:.4} s against {:.4} s unpartitioned (ratio {:.2})",
        one,
        unpartitioned,
        one / unpartitioned
    );
    Ok(())
}
