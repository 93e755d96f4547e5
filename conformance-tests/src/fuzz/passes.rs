//! The interpreter behind the library's DAG passes: a [`Backend`] that runs dead-code
//! elimination, common-subexpression elimination, the einsum broadcast rewrite, lowering to
//! index lambdas, pytato's materialization rule and tag unification, then compiles the result on
//! the interpreter. The passes must keep every value; the fuzzer judges this backend against
//! the plain interpreter like any other, so a pass that changes a value is a mismatch.

use pytato_core::Result;
use pytato_runtime::backend::{Backend, Outputs, Program};
use pytato_transform::{cse, dce, einsum, lower, materialize, unify_tags};

/// The interpreter with the DAG passes ([`run_passes`]) run first: the passes must keep every
/// value, so this backend must agree with the plain interpreter.
pub struct PassesThenInterp {
    interp: Box<dyn Backend>,
}

impl PassesThenInterp {
    /// Wraps the registered interpreter.
    pub fn new() -> Result<PassesThenInterp> {
        Ok(PassesThenInterp { interp: pytato_runtime::backend::backend("interp")? })
    }
}

/// The passes, in the order a user's pipeline would run them.
pub fn run_passes(outputs: &Outputs) -> Result<Outputs> {
    let outputs = dce::eliminate_dead_code(outputs)?;
    let outputs = cse::deduplicate(&outputs)?;
    let outputs = einsum::remove_broadcasts_in_einsums(&outputs)?;
    let outputs = lower::lower_to_index_lambdas(&outputs)?;
    let outputs = materialize::materialize(&outputs, &mut materialize::Mpms)?;
    unify_tags::unify_axes_tags(&outputs, |_| true)
}

impl Backend for PassesThenInterp {
    fn name(&self) -> &str {
        "passes"
    }

    fn compile(&self, outputs: &Outputs) -> Result<Box<dyn Program>> {
        self.interp.compile(&run_passes(outputs)?)
    }
}
