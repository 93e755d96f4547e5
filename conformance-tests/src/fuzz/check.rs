//! Running one case everywhere and judging the results: each compiled backend against the
//! interpreter, and the interpreter against numpy.

use std::collections::BTreeMap;

use pytato_core::array::{NodeKind, post_order};
use pytato_core::{Array, Error, Result};
use pytato_runtime::backend::{Backend, NamedData, Program};
use serde_json::{Value, json};

use super::case::FuzzCase;
use super::oracle::{NumpyAnswer, Oracle};
use crate::tolerance::{self, Precision};

/// How one side compared with its reference on a case.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The same values (within the tolerances), or errors of the same kind, in every run.
    Agree,
    /// A different value, dtype, shape, or error: the details.
    Mismatch(String),
    /// The backend said it cannot run this here (and why): not a wrong answer.
    Unsupported(String),
    /// numpy refused what the library accepts (a different reading of the program): the details.
    NumpyRefused(String),
    /// The library refused what numpy accepts, where it documents that it does: lengths of
    /// symbolic axes that numpy would clip or squeeze at run time (`InvalidForSizes`).
    LibraryRefused(String),
    /// numpy's answer (or the interpreter's error) differs where the library documents why:
    /// `zeros_like` and its kin do not evaluate their argument (seed: `zero(…)`), so numpy's
    /// error there, or one the interpreter still finds in an argument that dead-code elimination
    /// cut, is no mismatch. (numpy's products go through einsum's loops in the oracle, not BLAS,
    /// which is not IEEE with NaN and infinities.)
    NumpyDiffers(String),
    /// Agreement only within [`tolerance::transcendental_tolerance`]: the program went through
    /// transcendental functions (implementations an ulp apart) and an ill-conditioned step.
    Transcendental(String),
    /// Agreement only as [`tolerance::compare_reordered`] judges it: the program has a matrix
    /// product, which a compiled backend may sum in its own order (a GEMM, as numpy's `@` does
    /// through BLAS), so overflow and cancellation may differ there.
    Reordered(String),
    /// Nothing to compare (the case does not build, or numpy is not available).
    Skipped(String),
}

impl Verdict {
    /// A short name for totals.
    pub fn label(&self) -> &'static str {
        match self {
            Verdict::Agree => "agree",
            Verdict::Mismatch(_) => "mismatch",
            Verdict::Unsupported(_) => "unsupported",
            Verdict::NumpyRefused(_) => "numpy-refused",
            Verdict::LibraryRefused(_) => "library-refused",
            Verdict::NumpyDiffers(_) => "numpy-differs",
            Verdict::Transcendental(_) => "transcendental",
            Verdict::Reordered(_) => "reordered",
            Verdict::Skipped(_) => "skipped",
        }
    }

    fn detail(&self) -> &str {
        match self {
            Verdict::Agree => "",
            Verdict::Mismatch(d)
            | Verdict::Unsupported(d)
            | Verdict::NumpyRefused(d)
            | Verdict::LibraryRefused(d)
            | Verdict::NumpyDiffers(d)
            | Verdict::Transcendental(d)
            | Verdict::Reordered(d)
            | Verdict::Skipped(d) => d,
        }
    }

    /// As JSON: `{"verdict", "detail"}`.
    pub fn to_json(&self) -> Value {
        json!({"verdict": self.label(), "detail": self.detail()})
    }

    /// Back from [`Verdict::to_json`].
    pub fn from_json(v: &Value) -> Verdict {
        let detail = v["detail"].as_str().unwrap_or("").to_string();
        match v["verdict"].as_str() {
            Some("agree") => Verdict::Agree,
            Some("mismatch") => Verdict::Mismatch(detail),
            Some("unsupported") => Verdict::Unsupported(detail),
            Some("numpy-refused") => Verdict::NumpyRefused(detail),
            Some("library-refused") => Verdict::LibraryRefused(detail),
            Some("numpy-differs") => Verdict::NumpyDiffers(detail),
            Some("transcendental") => Verdict::Transcendental(detail),
            Some("reordered") => Verdict::Reordered(detail),
            _ => Verdict::Skipped(detail),
        }
    }
}

/// A run's result: outputs, or an error (its kind and message).
type RunResult = std::result::Result<NamedData, (String, String)>;

fn outcome(r: Result<NamedData>) -> RunResult {
    r.map_err(|e| (e.kind().to_string(), e.to_string()))
}

/// The results of every run of `case` on `backend` (one compilation, several runs).
fn run_everywhere(case: &FuzzCase, backend: &dyn Backend) -> Vec<RunResult> {
    let program: Result<Box<dyn Program>> = case
        .build()
        .map_err(|e| Error::Internal { backend: "fuzz".into(), message: format!("the case does not build: {e}") })
        .and_then(|o| backend.compile(&o));
    (0..case.runs.len())
        .map(|run| match &program {
            Ok(p) => {
                // Pass what the program takes: size parameters no shape determines, placeholders it
                // reads (inputs the outputs do not need may have been cut from the DAG).
                let accepted = p.input_names();
                let mut inputs = case.run_inputs(run);
                inputs.retain(|k, _| accepted.contains(k));
                outcome(p.run(&inputs))
            }
            Err(e) => Err((e.kind().to_string(), e.to_string())),
        })
        .collect()
}

/// `got` against `expected`: [`tolerance::compare`], or with `reordered = Some(precision)`
/// [`tolerance::compare_reordered`] (numpy's order of operations is not the library's).
fn compare_outputs(
    got: &NamedData,
    expected: &NamedData,
    reordered: Option<Precision>,
) -> std::result::Result<(), String> {
    if got.keys().ne(expected.keys()) {
        return Err(format!("outputs {:?} instead of {:?}", got.keys(), expected.keys()));
    }
    for (name, e) in expected {
        match reordered {
            None => tolerance::compare(&got[name], e),
            Some(precision) => tolerance::compare_reordered(&got[name], e, precision),
        }
        .map_err(|why| format!("output {name}: {why}"))?;
    }
    Ok(())
}

/// Whether the live statements call a transcendental function.
fn transcendental(case: &FuzzCase) -> bool {
    const FUNCTIONS: [&str; 25] = [
        "np.sin(",
        "np.cos(",
        "np.tan(",
        "np.exp(",
        "np.log(",
        "np.log10(",
        "np.arcsin(",
        "np.arccos(",
        "np.arctan(",
        "np.arctan2(",
        "np.sinh(",
        "np.cosh(",
        "np.tanh(",
        "np.power(",
        "np.arcsinh(",
        "np.arccosh(",
        "np.arctanh(",
        "np.expm1(",
        "np.log1p(",
        "np.log2(",
        "np.exp2(",
        "np.cbrt(",
        "np.hypot(",
        "np.logaddexp(",
        "np.logaddexp2(",
    ];
    case.without_dead_code().stmts.iter().any(|(_, e)| e.contains("**") || FUNCTIONS.iter().any(|f| e.contains(f)))
}

/// Whether the live statements have a matrix product (which a backend may run as a GEMM).
fn contraction(case: &FuzzCase) -> bool {
    const PRODUCTS: [&str; 5] = [" @ ", "np.dot(", "np.vdot(", "np.tensordot(", "np.einsum("];
    case.without_dead_code().stmts.iter().any(|(_, e)| PRODUCTS.iter().any(|p| e.contains(p)))
}

/// Outputs that agree only within the transcendental tolerances.
fn within_transcendental(got: &NamedData, expected: &NamedData) -> bool {
    got.keys().eq(expected.keys())
        && expected.iter().all(|(name, e)| tolerance::compare_transcendental(&got[name], e).is_ok())
}

/// `got` (a compiled backend) against `reference` (the interpreter), run by run.
fn judge(case: &FuzzCase, got: &[RunResult], reference: &[RunResult]) -> Verdict {
    let mut verdict = Verdict::Agree;
    for (run, (g, r)) in got.iter().zip(reference).enumerate() {
        match (g, r) {
            (Ok(g), Ok(r)) => {
                if let Err(why) = compare_outputs(g, r, None) {
                    if transcendental(case) && within_transcendental(g, r) {
                        verdict = Verdict::Transcendental(format!("run {run}: {why}"));
                        continue;
                    }
                    if contraction(case) && compare_outputs(g, r, Some(Precision::Double)).is_ok() {
                        verdict = Verdict::Reordered(format!("run {run}: {why}"));
                        continue;
                    }
                    return Verdict::Mismatch(format!("run {run}: {why}"));
                }
            }
            (Err((kind, message)), _) if kind == "Unsupported" => return Verdict::Unsupported(message.clone()),
            (Err((k, m)), Err((rk, rm))) if k != rk && calls_a_like_function(case) => {
                // Another of the run's errors comes first where DCE cut an argument's: documented.
                verdict = Verdict::NumpyDiffers(format!(
                    "run {run}: {k} error ({m}) where the interpreter gives {rk} ({rm}) in the argument of a \
                     *_like function, which the library does not evaluate (seed: zero(...))"
                ));
            }
            (Err((k, m)), Err((rk, rm))) if k != rk => {
                return Verdict::Mismatch(format!("run {run}: {k} error ({m}), the interpreter gives {rk} ({rm})"));
            }
            (Err(_), Err(_)) => {}
            (Err((k, m)), Ok(_)) => {
                return Verdict::Mismatch(format!("run {run}: {k} error ({m}); the interpreter succeeds"));
            }
            (Ok(_), Err((rk, rm))) if calls_a_like_function(case) => {
                // Dead-code elimination (the `passes` side) cuts a `*_like` function's argument,
                // whose checks the interpreter still runs: documented, as for numpy.
                verdict = Verdict::NumpyDiffers(format!(
                    "run {run}: succeeds where the interpreter gives {rk} ({rm}) in the argument of a *_like \
                     function, which the library does not evaluate (seed: zero(...))"
                ));
            }
            (Ok(_), Err((rk, rm))) => {
                return Verdict::Mismatch(format!("run {run}: succeeds; the interpreter gives {rk} ({rm})"));
            }
        }
    }
    verdict
}

/// Whether the live statements call `zeros_like` or one of its kin.
fn calls_a_like_function(case: &FuzzCase) -> bool {
    case.without_dead_code().stmts.iter().any(|(_, e)| e.contains("_like("))
}

/// The interpreter's results against numpy's, run by run.
fn judge_numpy(case: &FuzzCase, reference: &[RunResult], oracle: &mut Oracle) -> Verdict {
    let live = case.without_dead_code();
    // Anything computed in single or half precision on the way: numpy's float32 math is a few
    // ulp off, and float16 roundings can go the other way.
    let precision =
        live.names().map_or(Precision::Double, |names| Precision::lowest(names.values().map(|a| a.dtype())));

    let mut verdict = Verdict::Agree;
    for (run, r) in reference.iter().enumerate() {
        let answer = match oracle.ask(case, run) {
            Ok(a) => a,
            Err(e) => return Verdict::Skipped(e),
        };
        match (r, answer) {
            // The library's own naming rules have no numpy counterpart.
            (Err((k, _)), _) if k == "DuplicateName" => {}
            (Ok(r), NumpyAnswer::Outputs(n)) => {
                if let Err(why) = compare_outputs(r, &n, Some(precision)) {
                    if transcendental(case) && within_transcendental(r, &n) {
                        verdict = Verdict::Transcendental(format!("run {run}: {why}"));
                        continue;
                    }
                    return Verdict::Mismatch(format!("run {run}: interp vs numpy: {why}"));
                }
            }
            // An index out of range: the library says so when it binds sizes or when it reads.
            (Err((k, _)), NumpyAnswer::IndexError) if k == "IndexOutOfBounds" || k == "InvalidForSizes" => {}
            (Err((k, m)), NumpyAnswer::Outputs(_)) if k == "InvalidForSizes" => {
                return Verdict::LibraryRefused(format!("run {run}: {m}"));
            }
            (Err(_), NumpyAnswer::Refused(_)) => {}
            (Ok(_), NumpyAnswer::Refused(why)) => return Verdict::NumpyRefused(format!("run {run}: {why}")),
            (Ok(_), NumpyAnswer::IndexError) if calls_a_like_function(case) => {
                return Verdict::NumpyDiffers(format!(
                    "run {run}: numpy raises IndexError in the argument of a *_like function, which the library does \
                     not evaluate (seed: zero(...))"
                ));
            }
            (Ok(_), NumpyAnswer::IndexError) => {
                return Verdict::Mismatch(format!("run {run}: numpy raises IndexError; the interpreter succeeds"));
            }
            (Err((k, m)), _) => {
                return Verdict::Mismatch(format!("run {run}: the interpreter gives {k} ({m}); numpy disagrees"));
            }
        }
    }
    verdict
}

/// Whether `case` built twice gives two DAGs that are structurally equal and hash alike, output
/// by output (equal DAGs are one input to CSE, to `==` and to the count names of equal masks).
fn judge_structure(case: &FuzzCase) -> Verdict {
    let (Ok(first), Ok(second)) = (case.build(), case.build()) else {
        return Verdict::Mismatch("the case builds once and not twice".into());
    };
    let entries = first.entries();
    let nodes = post_order(entries.iter().map(|(_, a)| a), Array::children);
    if nodes.iter().any(|n| matches!(n.kind(), NodeKind::DataWrapper { .. })) {
        // Each build wraps new buffers, and wrapped data is equal only over one buffer.
        return Verdict::Skipped("wrapped data is equal only over one buffer".into());
    }
    if first.structural_hash() != second.structural_hash() {
        return Verdict::Mismatch("the DAG built twice hashes differently".into());
    }
    for ((name, a), (_, b)) in entries.iter().zip(second.entries()) {
        if *a != b {
            return Verdict::Mismatch(format!("output {name} built twice is not equal to itself: {}", a.summary()));
        }
    }
    Verdict::Agree
}

/// Every verdict on `case`: `"structure"` for the DAG built twice (structurally equal, equal hashes),
/// `"<backend>"` for each compiled backend against the interpreter, and
/// `"numpy"` for the interpreter against numpy (skipped without an oracle).
pub fn check(
    case: &FuzzCase,
    interp: &dyn Backend,
    backends: &[(String, Box<dyn Backend>)],
    oracle: Option<&mut Oracle>,
) -> BTreeMap<String, Verdict> {
    let mut verdicts = BTreeMap::new();
    if let Err(e) = case.build() {
        // A shrinking step can make a case the frontend rejects: nothing to compare.
        for (name, _) in backends {
            verdicts.insert(name.clone(), Verdict::Skipped(format!("the case does not build: {e}")));
        }
        verdicts.insert("numpy".into(), Verdict::Skipped(format!("the case does not build: {e}")));
        return verdicts;
    }
    verdicts.insert("structure".into(), judge_structure(case));
    let reference = run_everywhere(case, interp);
    for (name, backend) in backends {
        verdicts.insert(name.clone(), judge(case, &run_everywhere(case, backend.as_ref()), &reference));
    }
    let numpy = match oracle {
        Some(o) => judge_numpy(case, &reference, o),
        None => Verdict::Skipped("no numpy".into()),
    };
    verdicts.insert("numpy".into(), numpy);
    verdicts
}
