//! Transformations preserve meaning: every conformance case, transformed, still gives numpy's
//! values (or the same error kind) on the reference interpreter.

use pytato_backend_interp::Interpreter;
use pytato_conformance::{Outcome, load_cases, run_transformed_case};
use pytato_runtime::backend::Outputs;
use pytato_transform::einsum::{apply_distributive_law, remove_broadcasts_in_einsums};
use pytato_transform::materialize::{Mpms, materialize};
use pytato_transform::unify_tags::unify_axes_tags;
use pytato_transform::{
    analysis::is_lowered, cse::deduplicate, dce::eliminate_dead_code, lower::lower_to_index_lambdas,
};

fn check_all(name: &str, transform: impl Fn(&Outputs) -> pytato_core::Result<Outputs>) {
    let cases = load_cases();
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| match run_transformed_case(case, &Interpreter, &transform) {
            Outcome::Pass => None,
            other => Some(format!("{}: {other:?}", case.name)),
        })
        .collect();
    assert!(cases.len() >= 200);
    assert!(failures.is_empty(), "{name}: {} of {} cases fail:\n{}", failures.len(), cases.len(), failures.join("\n"));
}

#[test]
fn lowered_dags_match_numpy() {
    check_all("lowering", |o| {
        let lowered = lower_to_index_lambdas(o)?;
        assert!(is_lowered(&lowered), "lowering left a non-IndexLambda node");
        Ok(lowered)
    });
}

#[test]
fn deduplicated_and_dead_code_eliminated_dags_match_numpy() {
    check_all("cse + dce", |o| eliminate_dead_code(&deduplicate(o)?));
}

#[test]
fn fully_transformed_dags_match_numpy() {
    check_all("dce + cse + lowering + cse", |o| {
        deduplicate(&lower_to_index_lambdas(&deduplicate(&eliminate_dead_code(o)?)?)?)
    });
}

#[test]
fn einsum_rewrites_materialization_and_tag_unification_keep_values() {
    check_all("einsum rewrites + mpms + unify", |o| {
        let o = apply_distributive_law(&remove_broadcasts_in_einsums(o)?, |_| true)?;
        let o = unify_axes_tags(&materialize(&o, &mut Mpms)?, |_| true)?;
        lower_to_index_lambdas(&o)
    });
}
