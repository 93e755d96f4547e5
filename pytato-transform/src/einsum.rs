//! Einsum rewrites.
//!
//! - [`remove_broadcasts_in_einsums`]: an operand axis of length 1 that broadcasts against a longer
//!   axis of the same index is squeezed out of the operand, so that every einsum reads each operand
//!   axis at full length (what code generators prefer).
//! - [`apply_distributive_law`]: an einsum with an operand that is a sum (or difference) of two
//!   arrays, `E(…, a ± b, …)`, becomes `E(…, a, …) ± E(…, b, …)`, for the einsums a callback
//!   accepts.
//!
//! ```
//! use pytato_core::{DType, NodeKind};
//! use pytato_runtime::backend::Outputs;
//! use pytato_frontend as pt;
//! use pytato_transform::einsum::remove_broadcasts_in_einsums;
//! let a = pt::placeholder("a", [1, 4], DType::F64)?;
//! let b = pt::placeholder("b", [3, 4], DType::F64)?;
//! let e = pt::einsum("ij,ij->i", &[&a, &b])?;
//! let Outputs::Single(r) = remove_broadcasts_in_einsums(&(&e).into())? else { unreachable!() };
//! let NodeKind::Einsum(es) = r.kind() else { unreachable!() };
//! assert_eq!(es.args[0].shape().to_string(), "(4,)");
//! assert_eq!(r.shape(), e.shape());
//! # Ok::<(), pytato_core::Error>(())
//! ```

use std::collections::BTreeMap;

use pytato_core::arith as pt;
use pytato_core::expr::{BinaryOp, Expr};
use pytato_core::names::{Reserved, classify};
use pytato_core::{Array, Dim, EinsumAxis, NodeKind, Order, Result, Shape};
use pytato_runtime::backend::Outputs;

use crate::mapper::{CopyMapper, map_copy};

/// Squeezes broadcast (length-1) operand axes out of every einsum.
pub fn remove_broadcasts_in_einsums(outputs: &Outputs) -> Result<Outputs> {
    map_copy(&mut BroadcastRemover, outputs)
}

struct BroadcastRemover;

impl CopyMapper for BroadcastRemover {
    fn map_einsum(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
        let NodeKind::Einsum(e) = node.kind() else { unreachable!("dispatched by kind") };
        // The full length of each index.
        let mut length: BTreeMap<EinsumAxis, Dim> = BTreeMap::new();
        for (acc, arg) in e.access.iter().zip(children) {
            for (ax, len) in acc.iter().zip(arg.shape().dims()) {
                if len.as_int() != Some(1) {
                    length.insert(*ax, len.clone());
                }
            }
        }
        let is_broadcast = |ax: &EinsumAxis, len: &Dim| len.as_int() == Some(1) && length.contains_key(ax);
        let mut access = Vec::with_capacity(e.access.len());
        let mut args = Vec::with_capacity(children.len());
        for (acc, arg) in e.access.iter().zip(children) {
            let keep: Vec<usize> = (0..acc.len()).filter(|&j| !is_broadcast(&acc[j], &arg.shape()[j])).collect();
            if keep.len() == acc.len() {
                access.push(acc.clone());
                args.push(arg.clone());
            } else {
                let shape: Shape = keep.iter().map(|&j| arg.shape()[j].clone()).collect();
                args.push(Array::new_reshape(arg, shape, Order::C)?);
                access.push(keep.iter().map(|&j| acc[j]).collect());
            }
        }
        if args.iter().zip(children).all(|(a, c)| a.ptr_eq(c)) {
            return node.with_children(children.to_vec());
        }
        let rewritten = Array::new_einsum(access, args, e.reduction_descriptors.clone())?;
        rewritten.with_metadata_of(node)
    }
}

/// Distributes every einsum that `decide` accepts over operands that are elementwise sums or
/// differences of two arrays of the operand's shape and dtype.
///
/// ```
/// use pytato_core::DType;
/// use pytato_runtime::backend::Outputs;
/// use pytato_frontend as pt;
/// use pytato_transform::{einsum::apply_distributive_law, analysis::node_type_counts};
/// let m = pt::placeholder("m", [3, 3], DType::F64)?;
/// let (u, v) = (pt::placeholder("u", [3], DType::F64)?, pt::placeholder("v", [3], DType::F64)?);
/// let e = pt::einsum("ij,j->i", &[&m, &(&u + &v)])?;
/// let out = apply_distributive_law(&(&e).into(), |_| true)?;
/// assert_eq!(node_type_counts(&out)["Einsum"], 2);     // m·u + m·v
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn apply_distributive_law(outputs: &Outputs, decide: impl FnMut(&Array) -> bool) -> Result<Outputs> {
    map_copy(&mut Distributor { decide }, outputs)
}

struct Distributor<F> {
    decide: F,
}

/// `a ± b` when `array` is an index lambda computing exactly that elementwise, with both operands
/// of its shape and dtype.
fn as_sum(array: &Array) -> Option<(Array, BinaryOp, Array)> {
    let NodeKind::IndexLambda(il) = array.kind() else { return None };
    let Expr::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), lhs, rhs) = &il.expr else { return None };
    let operand = |e: &Expr| -> Option<Array> {
        let Expr::Subscript(name, idx) = e else { return None };
        let identity = idx.len() == array.ndim()
            && idx
                .iter()
                .enumerate()
                .all(|(k, i)| matches!(i, Expr::Var(v) if classify(v) == Some(Reserved::Iname(k))));
        let a = il.bindings.get(name)?;
        (identity && a.shape() == array.shape() && a.dtype() == array.dtype()).then(|| a.clone())
    };
    Some((operand(lhs)?, *op, operand(rhs)?))
}

impl<F: FnMut(&Array) -> bool> CopyMapper for Distributor<F> {
    fn map_einsum(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
        let rebuilt = node.with_children(children.to_vec())?;
        let Some((k, (a, op, b))) = children.iter().enumerate().find_map(|(k, c)| as_sum(c).map(|s| (k, s))) else {
            return Ok(rebuilt);
        };
        if !(self.decide)(&rebuilt) {
            return Ok(rebuilt);
        }
        let mut with = |x: &Array| -> Result<Array> {
            let mut args = children.to_vec();
            args[k] = x.clone();
            // Distribute over the remaining operands too.
            self.map_einsum(node, &args)
        };
        let (ea, eb) = (with(&a)?, with(&b)?);
        let combined = if op == BinaryOp::Add { pt::add(&ea, &eb)? } else { pt::subtract(&ea, &eb)? };
        combined.with_metadata_of(node)
    }
}
