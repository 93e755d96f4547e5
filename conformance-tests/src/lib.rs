//! The conformance suite: one set of cases, expected values from numpy, run against every linked
//! backend.
//!
//! Cases are defined once, as numpy expressions, in `golden/gen_conformance.py`; that script
//! evaluates them with numpy and writes `data/cases.json` (run it through `cargo xtask golden`).
//! This crate parses each expression into pytato frontend calls ([`numpy_expr`]), compiles the
//! result on each backend, runs it on the same inputs and compares with numpy within the
//! tolerances of [`tolerance`]. Error cases must fail with the same [`Error::kind`] on every backend.
//!
//! `cargo xtask conformance [--backend NAME]` prints the case-by-backend matrix and writes
//! `target/conformance/report.{md,json}`; `cargo test -p pytato-conformance` runs the same cases.

pub mod coverage;
pub mod fuzz;
pub mod golden;
pub mod kernel_expr;
pub mod numpy_expr;
pub mod report;
pub mod tolerance;

use std::collections::BTreeMap;

use pytato_core::{Array, DictOfNamedArrays, Error};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, Outputs};

pub use golden::{Case, load_cases};

// Link every backend this crate is built with, so that `inventory` registers it.
use pytato_backend_cranelift as _;
use pytato_backend_interp as _;
use pytato_backend_wgpu as _;

/// Backend instances by name, and one message per backend left out.
pub type Instances = (Vec<(String, Box<dyn Backend>)>, Vec<String>);

/// Instances of the backends called `names` (every linked backend when empty).
///
/// A backend that cannot start here (the wgpu backend without a GPU driver) is left out with a
/// message saying why, unless the environment variable `PYTATO_REQUIRE_<NAME>` (for example
/// `PYTATO_REQUIRE_WGPU=1`, which CI sets) asks for it: then, as for an unknown name, the error
/// is returned.
pub fn instantiate(names: &[String]) -> Result<Instances, String> {
    let names: Vec<String> = if names.is_empty() {
        pytato_runtime::backend::backends().iter().map(|b| b.name.to_string()).collect()
    } else {
        names.to_vec()
    };
    let (mut instances, mut skipped) = (Vec::new(), Vec::new());
    for name in names {
        match pytato_runtime::backend::backend(&name) {
            Ok(b) => instances.push((name, b)),
            Err(e @ Error::UnknownBackend { .. }) => return Err(e.to_string()),
            Err(e) => {
                let var = format!("PYTATO_REQUIRE_{}", name.to_uppercase());
                if std::env::var(&var).is_ok_and(|v| !v.is_empty() && v != "0") {
                    return Err(format!("{var} is set, but backend {name} cannot start: {e}"));
                }
                skipped.push(format!("{name}: skipped, it cannot start here: {e} (set {var}=1 to make this an error)"));
            }
        }
    }
    Ok((instances, skipped))
}

/// For tests: every linked backend that starts here ([`instantiate`] with no names), each one
/// left out said on standard error. Panics where a backend that must start cannot (see
/// [`instantiate`]).
pub fn linked_backends() -> Vec<(String, Box<dyn Backend>)> {
    let (instances, skipped) = instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    instances
}

/// What happened when a backend ran a case.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Matched numpy (or failed with the expected error kind).
    Pass,
    /// Did not; the message says how.
    Fail(String),
    /// The backend reported that it cannot run this case here, and why.
    Unsupported(String),
}

/// The DAG of a case: placeholders (or data wrappers) for its inputs, size parameters for its
/// symbolic lengths, and the expression(s) evaluated with the frontend.
pub fn build_outputs(case: &Case) -> Result<Outputs, String> {
    let mut names: BTreeMap<String, Array> = BTreeMap::new();
    for (name, input) in &case.inputs {
        let array = if input.is_data {
            pt::data_wrapper(input.data.clone(), Some(name))
        } else {
            pt::placeholder(name, input.shape.clone(), input.dtype)
        };
        names.insert(name.clone(), array.map_err(|e| e.to_string())?);
    }
    for size in case.sizes.keys() {
        names.entry(size.clone()).or_insert(pt::size_param(size).map_err(|e| e.to_string())?);
    }
    let mut outputs = Vec::new();
    for (out, expr) in &case.exprs {
        let array =
            numpy_expr::evaluate_with(expr, &names, &case.functions).map_err(|e| format!("building {expr:?}: {e}"))?;
        outputs.push((out.clone(), array));
    }
    if outputs.len() == 1 && outputs[0].0 == pytato_runtime::backend::SINGLE_OUTPUT_NAME {
        return Ok(Outputs::Single(outputs.pop().expect("one output").1));
    }
    let dict =
        DictOfNamedArrays::new(outputs.iter().map(|(n, a)| (n.as_str(), a.clone()))).map_err(|e| e.to_string())?;
    Ok(Outputs::Named(dict))
}

/// The inputs passed to `run`: the placeholders' data, less omitted inputs, with the case's
/// run-time replacements applied.
pub fn run_inputs(case: &Case) -> NamedData {
    let mut inputs: NamedData = case
        .inputs
        .iter()
        .filter(|(name, input)| !input.is_data && !case.omit.contains(name))
        .map(|(name, input)| (name.clone(), input.data.clone()))
        .collect();
    for (name, replacement) in &case.run {
        match replacement {
            Some(data) => inputs.insert(name.clone(), data.clone()),
            None => inputs.remove(name),
        };
    }
    inputs
}

/// Runs `case` on `backend` and judges the result.
pub fn run_case(case: &Case, backend: &dyn Backend) -> Outcome {
    run(case, backend, |o| Ok(o.clone()), false, Run::Host)
}

/// Runs `case` on `backend` with its inputs uploaded first ([`Backend::upload`]), through
/// [`Program::run_device`](pytato_runtime::backend::Program::run_device), and judges the outputs
/// copied back, after [`Backend::synchronize`] (where a run on device data reports its errors).
pub fn run_case_on_device(case: &Case, backend: &dyn Backend) -> Outcome {
    run(case, backend, |o| Ok(o.clone()), false, Run::Device)
}

/// How [`run`] passes the inputs.
#[derive(Clone, Copy)]
enum Run {
    /// `Program::run` on host arrays.
    Host,
    /// Uploaded, then `Program::run_device`.
    Device,
}

/// Runs `case` on `backend` after applying `transform` to its DAG (the lowering checks use this:
/// a transformed DAG must still give numpy's values).
pub fn run_transformed_case(
    case: &Case,
    backend: &dyn Backend,
    transform: impl Fn(&Outputs) -> pytato_core::Result<Outputs>,
) -> Outcome {
    run(case, backend, transform, true, Run::Host)
}

fn run(
    case: &Case,
    backend: &dyn Backend,
    transform: impl Fn(&Outputs) -> pytato_core::Result<Outputs>,
    transformed: bool,
    how: Run,
) -> Outcome {
    let outputs = match build_outputs(case).and_then(|o| transform(&o).map_err(|e| format!("transform: {e}"))) {
        Ok(o) => o,
        // numpy raises some errors while building (a mask of the wrong shape): the frontend does
        // too, and the message leads with the error's kind.
        Err(e) if case.error.as_ref().is_some_and(|kind| e.contains(&format!("[{kind}] "))) => return Outcome::Pass,
        Err(e) => return Outcome::Fail(format!("the case does not build: {e}")),
    };
    let result = backend.compile(&outputs).and_then(|program| {
        // A transform may remove inputs (dead-code elimination drops `x` from `zeros_like(x)`):
        // declared inputs the program no longer has are not passed. Undeclared names still are.
        let accepted = program.input_names();
        let mut inputs = run_inputs(case);
        if transformed {
            inputs.retain(|name, _| accepted.contains(name) || !case.inputs.contains_key(name));
        }
        match how {
            Run::Host => program.run(&inputs),
            Run::Device => {
                use pytato_runtime::device::{DeviceInput, NamedDeviceInputs};
                let held: Vec<(&str, _)> = inputs
                    .iter()
                    .map(|(name, data)| backend.upload(&data.view()).map(|d| (name.as_str(), d)))
                    .collect::<pytato_core::Result<_>>()?;
                let named: NamedDeviceInputs<'_> = held.iter().map(|(n, d)| (*n, DeviceInput::Device(d))).collect();
                let outputs = program.run_device(&named).and_then(|outputs| {
                    outputs
                        .into_iter()
                        .map(|(name, d)| d.to_host().map(|h| (name, h)))
                        .collect::<pytato_core::Result<NamedData>>()
                });
                // A run on device data may report its error only at the next wait.
                let synchronized = backend.synchronize();
                outputs.and_then(|o| synchronized.map(|_| o))
            }
        }
    });
    match (result, &case.error) {
        (Err(Error::Unsupported { reason, .. }), _) => Outcome::Unsupported(reason),
        (Err(e), Some(kind)) if e.kind() == kind => Outcome::Pass,
        (Err(e), Some(kind)) => Outcome::Fail(format!("expected a {kind} error, got {}: {e}", e.kind())),
        (Err(e), None) => Outcome::Fail(format!("{}: {e}", e.kind())),
        (Ok(_), Some(kind)) => Outcome::Fail(format!("expected a {kind} error, but the run succeeded")),
        (Ok(got), None) => {
            for (name, expected) in &case.expected {
                let Some(value) = got.get(name) else { return Outcome::Fail(format!("output {name} missing")) };
                if let Err(why) = tolerance::compare(value, expected) {
                    return Outcome::Fail(format!("output {name}: {why}"));
                }
            }
            Outcome::Pass
        }
    }
}
