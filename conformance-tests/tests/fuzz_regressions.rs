//! Every fuzz case that once failed somewhere, replayed on every backend against the interpreter
//! (and the interpreter against numpy where numpy is installed).
//!
//! `data/fuzz-regressions/<where-when>/SEED.json` holds the cases as `fuzz case SEED` prints them;
//! the directory says where they were found. `h100-2026-11-25` are the 40 programs on which the
//! wgpu backend disagreed with the interpreter on an NVIDIA H100 (subnormals flushed, signed
//! zeros and NaN through driver built-ins, float16 NaN, complex edges, contraction into FMA);
//! `vm-2026-11-29` a float32 matrix product whose products overflow single precision, where
//! Cranelift's double precision GEMM gave a finite value for the loop nest's NaN, and sums whose
//! sign of zero differed from numpy's (over no axes, and from `initial=-0.0`), `np.add.at` of
//! a float16 array with values of another dtype (a panic in the host scatter), and `full_like` of
//! a selection after dead-code elimination (the count's step cut away). The wgpu backend runs
//! each twice: as it runs on this adapter, and with the tiled matrix products GPUs take, so that
//! lavapipe runs the GPU's code paths; `passes` is the interpreter after the DAG passes.

use std::path::{Path, PathBuf};

use pytato_backend_wgpu::Wgpu;
use pytato_conformance::fuzz::{FuzzCase, Oracle, PassesThenInterp, Verdict, check};
use pytato_runtime::backend::Backend;

fn corpus() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fuzz-regressions");
    let mut files = Vec::new();
    for dir in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("{}: {e}", root.display())) {
        let dir = dir.expect("a readable directory entry").path();
        for file in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let file = file.expect("a readable directory entry").path();
            if file.extension().is_some_and(|e| e == "json") {
                files.push(file);
            }
        }
    }
    files.sort();
    files
}

fn load(path: &Path) -> FuzzCase {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    FuzzCase::from_json(value.get("shrunk").unwrap_or(&value)).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_past_fuzz_failure_agrees_everywhere() {
    let files = corpus();
    assert!(files.len() >= 40, "the corpus lost files: {} left", files.len());

    let (mut compiled, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    compiled.retain(|(name, _)| name != "interp");
    if let Ok(wgpu) = Wgpu::new() {
        let tiled: Box<dyn Backend> = Box::new(wgpu.with_tiled_products(true));
        compiled.push(("wgpu (tiled products)".into(), tiled));
    }
    compiled.push(("passes".into(), Box::new(PassesThenInterp::new().expect("the interpreter is always linked"))));
    let interp = pytato_runtime::backend::backend("interp").expect("the interpreter is always linked");
    let mut oracle = match Oracle::start() {
        Ok(o) => Some(o),
        Err(e) => {
            eprintln!("numpy comparisons skipped: {e}");
            None
        }
    };

    let mut failures = Vec::new();
    let mut checked = 0;
    for file in &files {
        let case = load(file);
        for (side, verdict) in check(&case, interp.as_ref(), &compiled, oracle.as_mut()) {
            match verdict {
                Verdict::Mismatch(detail) => failures.push(format!("{}: {side}: {detail}", file.display())),
                // numpy may be missing; the structure check skips programs that wrap data.
                Verdict::Skipped(why) if side != "numpy" && side != "structure" => {
                    failures.push(format!("{}: {side} skipped: {why}", file.display()))
                }
                _ => checked += 1,
            }
        }
    }
    eprintln!("{} cases, {checked} verdicts agree", files.len());
    assert!(failures.is_empty(), "{} disagreements:\n{}", failures.len(), failures.join("\n"));
}
