//! Dead-code elimination: cuts the links that `zero(…)` keeps (seed: "zeros_like (and similar)").
//!
//! `zeros_like(x)` is `zero(x[...])`: it keeps `x` in the DAG, so metadata added to `x` can still
//! reach the result, without reading `x`. This pass replaces every `zero(e)` by the constant zero of
//! `e`'s dtype (and `full_like`'s `v - 0` by `v`) and drops the bindings no longer read, after
//! which `x` (and anything only it needed) is gone: `zeros_like(x)` becomes what `zeros` builds. Nodes that no output reaches are never part of a result in the first place.
//!
//! ```
//! use pytato_core::DType;
//! use pytato_frontend as pt;
//! use pytato_transform::{dce::eliminate_dead_code, mapper::inputs};
//! let x = pt::placeholder("x", [3], DType::F64)?;
//! let y = pt::placeholder("y", [3], DType::F64)?;
//! let z = &pt::zeros_like(&x, None)? + &y;
//! let cleaned = eliminate_dead_code(&(&z).into())?;
//! let pytato_runtime::backend::Outputs::Single(c) = cleaned else { unreachable!() };
//! let names: Vec<_> = inputs([&c]).iter().filter_map(|a| a.name().map(str::to_string)).collect();
//! assert_eq!(names, ["y"]);
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use pytato_core::array::IndexLambdaTypes;
use pytato_core::expr::{BinaryOp, Expr, Func};
use pytato_core::{Array, NodeKind, Result, Scalar};
use pytato_runtime::backend::Outputs;
use pytato_runtime::binding::data_bindings;

use crate::mapper::{CopyMapper, map_copy, walk};

/// Removes the `zero(…)` links and whatever only they kept alive, but for links of an array
/// whose shape holds a count (a length the data decide, such as `zeros_like(x[x > 0])`'s): the
/// count is bound by the step that finds it, which the link keeps in the DAG.
pub fn eliminate_dead_code(outputs: &Outputs) -> Result<Outputs> {
    let roots: Vec<Array> = outputs.entries().into_iter().map(|(_, a)| a).collect();
    let mut counts = BTreeSet::new();
    walk(&roots, |node| {
        if let NodeKind::Nonzero { count, .. } = node.kind() {
            counts.insert(count.to_string());
        }
    });
    map_copy(&mut DeadCodeEliminator { counts }, outputs)
}

struct DeadCodeEliminator {
    /// The counts the DAG's `Nonzero` steps bind.
    counts: BTreeSet<String>,
}

impl CopyMapper for DeadCodeEliminator {
    fn map_index_lambda(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
        let NodeKind::IndexLambda(il) = node.kind() else { unreachable!("dispatched by kind") };
        if node.shape().params().any(|p| self.counts.contains(p)) {
            // Cutting the link could drop the step that binds the count (found by fuzzing the
            // passes, seed 9612185: the program then asked for the count as an input).
            return node.with_children(children.to_vec());
        }
        let bindings: BTreeMap<Arc<str>, Array> = il.bindings.keys().cloned().zip(children.iter().cloned()).collect();
        let mut has_zero = false;
        il.expr.walk(&mut |e| has_zero |= matches!(e, Expr::Call(Func::Zero, _)));
        if !has_zero {
            return node.with_children(children.to_vec());
        }
        let types = IndexLambdaTypes::new(node.ndim(), &bindings);
        let inames = il.reduction_descriptors.keys().map(|k| &**k).collect::<Vec<_>>();
        let mut failure = None;
        let is_zero = |e: &Expr| matches!(e, Expr::Const(c) if *c == Scalar::zero(c.dtype()));
        let expr = il.expr.rewrite(&mut |e| match e {
            // `full_like`'s `v - zero(x)` and `zero(x) | v` are `v` once the zero is a constant:
            // `v - (+0)` is `v` bit for bit (even `-0.0` and NaN), `false | v` is `v`.
            Expr::Binary(BinaryOp::Sub, v, zero) if is_zero(zero) => Some((**v).clone()),
            Expr::Binary(BinaryOp::BitOr, zero, v) if is_zero(zero) => Some((**v).clone()),
            // Typed with no reduction in scope first; an argument inside a reduction needs its
            // inames (binding them all at once is harmless for typing).
            Expr::Call(Func::Zero, args) => {
                match args[0].dtype(&types).or_else(|_| args[0].dtype_with_reduction_inames(&types, &inames)) {
                    Ok(d) => Some(Expr::Const(Scalar::zero(d))),
                    Err(err) => {
                        failure = Some(err);
                        None
                    }
                }
            }
            _ => None,
        });
        if let Some(err) = failure {
            return Err(err);
        }
        let used = data_bindings(&expr);
        let kept = bindings.into_iter().filter(|(name, _)| used.contains(&**name)).collect();
        let lambda = Array::new_index_lambda(expr, node.shape().clone(), kept, il.reduction_descriptors.clone())?
            .with_size_checks(il.checks.clone())?;
        lambda.with_metadata_of(node)
    }
}
