//! Evaluation of each node kind from the values of its children.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use pytato_core::array::{Einsum, IndexItem, IndexLambdaTypes, IndexLayout};
use pytato_core::expr::ReduceOp;
use pytato_core::{Array, ArrayData, DType, EinsumAxis, Error, NodeKind, Order, Result, Scalar};
use pytato_runtime::ArrayDataView;
use pytato_runtime::binding::{Bound, data_bindings};

use crate::index::{build, for_each_index, gather, ravel, unravel};
use crate::lambda;
use crate::scalar_ops::{self, Accumulator};

/// A node's value: data the interpreter computed (or a data wrapper holds), or an input as the
/// caller passed it, read where it lies (a broadcast input of `2**59` elements is never copied
/// to read a few of them).
#[derive(Clone)]
pub(crate) enum Value<'a, 'i> {
    Data(Cow<'a, ArrayData>),
    Input(&'a ArrayDataView<'i>),
}

impl Value<'_, '_> {
    pub(crate) fn shape(&self) -> &[usize] {
        match self {
            Value::Data(d) => d.shape(),
            Value::Input(v) => v.shape(),
        }
    }

    /// The element at a multi-index; `None` outside the array.
    pub(crate) fn get(&self, index: &[usize]) -> Option<Scalar> {
        match self {
            Value::Data(d) => d.get(index),
            Value::Input(v) => v.get(index),
        }
    }

    fn to_scalars(&self) -> Vec<Scalar> {
        match self {
            Value::Data(d) => d.to_scalars(),
            Value::Input(v) => v.to_scalars(),
        }
    }

    /// The value as owned data (an input is copied, fallibly).
    pub(crate) fn into_data(self) -> Result<ArrayData> {
        match self {
            Value::Data(d) => Ok(d.into_owned()),
            Value::Input(v) => v.try_to_owned("interp"),
        }
    }
}

/// Values of evaluated nodes, by node id.
pub(crate) type Values<'a, 'i> = HashMap<usize, Value<'a, 'i>>;

fn internal(message: impl Into<String>) -> Error {
    Error::Internal { backend: "interp".into(), message: message.into() }
}

fn value<'v, 'a, 'i>(values: &'v Values<'a, 'i>, a: &Array) -> Result<&'v Value<'a, 'i>> {
    values.get(&a.id()).ok_or_else(|| internal(format!("{} used before it was evaluated", a.summary())))
}

/// The most element steps the interpreter takes for one node (about a day at its speed): a node
/// beyond it (a sum over a broadcast input of `2**59` elements, say) is refused up front rather
/// than run for years. The compiled backends are for large work.
pub(crate) const MAX_STEPS: u128 = 1 << 40;

/// Refuses `node` where evaluating it would take more than [`MAX_STEPS`] element steps: its
/// elements times the trips of its reductions (or of an einsum's reduced indices).
fn check_work(node: &Array, shape: &[usize], bound: &Bound<'_>) -> Result<()> {
    // Only reductions do more than one step per element; an output too large for memory is an
    // `OutOfMemory` error when it is allocated.
    let elements: u128 = shape.iter().fold(1u128, |n, &d| n.saturating_mul(d as u128));
    let mut steps = elements;
    match node.kind() {
        NodeKind::IndexLambda(il) => {
            let mut trips: Vec<Result<u128>> = Vec::new();
            il.expr.walk(&mut |e| {
                if let pytato_core::expr::Expr::Reduce(r) = e {
                    for b in &r.inames {
                        trips.push((|| Ok((bound.eval(&b.upper)? - bound.eval(&b.lower)?).max(1) as u128))());
                    }
                }
            });
            for t in trips {
                steps = steps.saturating_mul(t?);
            }
        }
        NodeKind::Einsum(e) => {
            let mut reduced = std::collections::BTreeMap::new();
            for (access, arg) in e.access.iter().zip(&e.args) {
                for (axis, len) in access.iter().zip(arg.shape().dims()) {
                    if let EinsumAxis::Reduction(r) = axis {
                        let len = bound.eval(len)?.max(1) as u128;
                        reduced.entry(*r).and_modify(|l: &mut u128| *l = (*l).max(len)).or_insert(len);
                    }
                }
            }
            steps = reduced.values().fold(steps, |s, &l| s.saturating_mul(l));
        }
        _ => {}
    }
    if steps <= MAX_STEPS || steps == elements {
        return Ok(());
    }
    Err(Error::Unsupported {
        backend: "interp".into(),
        reason: format!(
            "{} of shape {shape:?} would take about {steps:.3e} element steps, beyond the reference \
             interpreter's {MAX_STEPS:.3e} (it is for small data: compile with a compiled backend)",
            node.summary()
        ),
    })
}

/// Evaluates `node`, whose data children are all in `values`.
pub(crate) fn evaluate<'a, 'i>(
    node: &'a Array,
    values: &Values<'a, 'i>,
    bound: &'a Bound<'i>,
) -> Result<Value<'a, 'i>> {
    let shape = bound.shape(node.shape())?;
    check_work(node, &shape, bound)?;
    let dtype = node.dtype();
    Ok(Value::Data(Cow::Owned(match node.kind() {
        NodeKind::Nonzero { .. }
        | NodeKind::Scatter { .. }
        | NodeKind::Sort { .. }
        | NodeKind::Scan { .. }
        | NodeKind::SearchSorted { .. } => {
            return Err(internal(format!("{} is a host step, run between phases", node.summary())));
        }
        NodeKind::CallResult { .. } => {
            return Err(internal(format!("{} is a call, inlined when compiling", node.summary())));
        }
        NodeKind::DistributedRecv { .. } | NodeKind::DistributedSendRefHolder { .. } => {
            return Err(pytato_core::distributed::unpartitioned_error("interp", node));
        }
        NodeKind::Placeholder { .. } => {
            // Inputs are views of any layout, read where they lie.
            let data = bound.placeholders.get(&node.id()).ok_or_else(|| internal("placeholder not bound"))?;
            return Ok(Value::Input(data));
        }
        NodeKind::DataWrapper { data, .. } => {
            // Data a device holds is copied to the host, where this backend computes.
            return Ok(Value::Data(match data.as_host() {
                Some(host) => Cow::Borrowed(&**host),
                None => Cow::Owned(Arc::unwrap_or_clone(data.to_host()?)),
            }));
        }
        NodeKind::SizeParam { name } => {
            ArrayData::from_scalar(Scalar::I64(*bound.sizes.get(&**name).ok_or_else(|| internal("size not bound"))?))
        }
        NodeKind::IndexLambda(il) => {
            let used = data_bindings(&il.expr);
            let inputs = lambda::LambdaInputs {
                names: il.bindings.keys().map(|k| &**k).collect(),
                values: il
                    .bindings
                    .iter()
                    .map(|(name, a)| if used.contains(&**name) { values.get(&a.id()) } else { None })
                    .collect(),
                types: IndexLambdaTypes::new(shape.len(), &il.bindings),
            };
            lambda::evaluate(&il.expr, dtype, &shape, &inputs, bound)?
        }
        NodeKind::Einsum(e) => einsum(e, dtype, &shape, values)?,
        NodeKind::Reshape { array, order } => {
            let src = value(values, array)?;
            let fortran = *order == Order::F;
            let src_shape = src.shape().to_vec();
            gather(dtype, &shape, &[src], |i, at| {
                unravel(ravel(i, &shape, fortran), &src_shape, fortran, at);
                Ok(0)
            })?
        }
        NodeKind::Roll { array, shift, axis } => {
            let src = value(values, array)?;
            // The shift reduced modulo the length first: any i64 shift, no overflow.
            let n = shape[*axis].max(1) as i64;
            let s = shift.rem_euclid(n);
            gather(dtype, &shape, &[src], |i, at| {
                at.extend_from_slice(i);
                at[*axis] = (i[*axis] as i64 + n - s).rem_euclid(n) as usize;
                Ok(0)
            })?
        }
        NodeKind::AxisPermutation { array, axes } => {
            let src = value(values, array)?;
            gather(dtype, &shape, &[src], |i, at| {
                at.resize(i.len(), 0);
                for (out_axis, &in_axis) in axes.iter().enumerate() {
                    at[in_axis] = i[out_axis];
                }
                Ok(0)
            })?
        }
        NodeKind::Stack { arrays, axis } => {
            let srcs = arrays.iter().map(|a| value(values, a)).collect::<Result<Vec<_>>>()?;
            gather(dtype, &shape, &srcs, |i, at| {
                at.extend(i.iter().enumerate().filter(|(k, _)| k != axis).map(|(_, v)| *v));
                Ok(i[*axis])
            })?
        }
        NodeKind::Concatenate { arrays, axis } => {
            let srcs = arrays.iter().map(|a| value(values, a)).collect::<Result<Vec<_>>>()?;
            let lengths: Vec<usize> = srcs.iter().map(|s| s.shape()[*axis]).collect();
            gather(dtype, &shape, &srcs, |i, at| {
                let (mut k, mut pos) = (0, i[*axis]);
                while pos >= lengths[k] {
                    pos -= lengths[k];
                    k += 1;
                }
                at.extend_from_slice(i);
                at[*axis] = pos;
                Ok(k)
            })?
        }
        NodeKind::BasicIndex { array, indices }
        | NodeKind::AdvancedIndexInContiguousAxes { array, indices }
        | NodeKind::AdvancedIndexInNoncontiguousAxes { array, indices } => {
            let layout = IndexLayout::of(node).ok_or_else(|| internal("an indexing node"))?;
            let checked = !layout.index_arrays_unread(node.shape());
            let src = value(values, array)?;
            index(node.kind_name(), src, indices, &layout, checked, dtype, &shape, values, bound)?
        }
        NodeKind::NamedArray { container, name } => {
            let entry = container.get(name).ok_or_else(|| internal("named array entry"))?;
            return Ok(value(values, entry)?.clone());
        }
    })))
}

/// `result[out] = Σ_red Π_k args[k][access[k]]`, with length-1 operand axes broadcast.
fn einsum(e: &Einsum, dtype: DType, shape: &[usize], values: &Values<'_, '_>) -> Result<ArrayData> {
    let args = e.args.iter().map(|a| value(values, a)).collect::<Result<Vec<_>>>()?;
    let mut red_lengths = vec![1usize; e.reduction_descriptors.len()];
    for (acc, arg) in e.access.iter().zip(&args) {
        for (ax, len) in acc.iter().zip(arg.shape()) {
            if let EinsumAxis::Reduction(r) = ax
                && *len != 1
            {
                red_lengths[*r] = *len;
            }
        }
    }
    let op = if dtype == DType::Bool { ReduceOp::Any } else { ReduceOp::Sum };
    // float16 is stored, not computed in: products and sums in float32, rounded once at the end
    // (numpy's float16 matmul, dot and tensordot), as `Expr::widen_float16` makes the compiled
    // backends do.
    let compute = if dtype == DType::F16 { DType::F32 } else { dtype };
    // One operand and nothing to sum is numpy's view of it (a transpose, a diagonal): no
    // addition into a zeroed output, so -0.0 stays -0.0.
    let view = e.args.len() == 1 && red_lengths.is_empty();
    let mut at = Vec::new();
    build(dtype, shape, |i| {
        let mut total = Accumulator::new(op, compute);
        let mut viewed = None;
        for_each_index(&red_lengths, |r| {
            // The product of the operands, from the first (no `1 *` that would turn inf into NaN).
            let mut prod: Option<Scalar> = None;
            for (acc, arg) in e.access.iter().zip(&args) {
                at.clear();
                for (ax, len) in acc.iter().zip(arg.shape()) {
                    let v = match ax {
                        EinsumAxis::Elementwise(o) => i[*o],
                        EinsumAxis::Reduction(k) => r[*k],
                    };
                    at.push(if *len == 1 { 0 } else { v });
                }
                let x = arg.get(&at).ok_or_else(|| internal("einsum operand index"))?.cast(compute);
                prod = Some(match prod {
                    None => x,
                    Some(p) => scalar_ops::product(p, x)?,
                });
            }
            let prod = prod.ok_or_else(|| internal("an einsum without operands"))?;
            if view {
                viewed = Some(prod);
            } else {
                total.add(prod)?;
            }
            Ok(())
        })?;
        match viewed {
            Some(x) => Ok(x.cast(dtype)),
            None => Ok(total.finish()?),
        }
    })
}

/// Indexing with integers, slices and index arrays. Index arrays are read, broadcast together and
/// checked (negative values count from the end) before any element is gathered, unless they are
/// not `checked` ([`IndexLayout::index_arrays_unread`]).
#[allow(clippy::too_many_arguments)]
fn index(
    op: &str,
    src: &Value<'_, '_>,
    items: &[IndexItem],
    layout: &IndexLayout,
    checked: bool,
    dtype: DType,
    shape: &[usize],
    values: &Values<'_, '_>,
    bound: &Bound<'_>,
) -> Result<ArrayData> {
    let src_shape = src.shape().to_vec();
    // Index arrays as int64, as numpy reads them as intp (a uint64 value beyond int64 wraps);
    // every value checked once, up front.
    let mut arrays: Vec<Option<ArrayData>> = Vec::with_capacity(items.len());
    for (axis, item) in items.iter().enumerate() {
        arrays.push(match item {
            IndexItem::Array(a) => {
                let data = value(values, a)?;
                let as_i64 = ArrayData::from_scalars(DType::I64, data.shape(), data.to_scalars())
                    .ok_or_else(|| internal("index cast"))?;
                let len = src_shape[axis] as i64;
                let to_check = if checked || data.shape().is_empty() { as_i64.to_scalars() } else { Vec::new() };
                for v in to_check {
                    let v = v.to_i128().expect("int64") as i64;
                    if v < -len || v >= len {
                        return Err(Error::IndexOutOfBounds { op: op.into(), index: v, axis, length: len as usize });
                    }
                }
                Some(as_i64)
            }
            _ => None,
        });
    }
    let block_end = layout.block_start + layout.block_len;
    gather(dtype, shape, &[src], |out, at| {
        for (axis, item) in items.iter().enumerate() {
            let v = match item {
                IndexItem::Int(d) => bound.eval(d)? as usize,
                IndexItem::Slice(s) => {
                    let k = out[layout.slice_axes[axis].expect("a slice has a result axis")] as i64;
                    (bound.eval(&s.start)? + k * s.step) as usize
                }
                IndexItem::Array(_) => {
                    // Index arrays broadcast right-aligned within the block of result axes.
                    let data = arrays[axis].as_ref().expect("index array");
                    let s = data.shape();
                    let local: Vec<usize> = s
                        .iter()
                        .enumerate()
                        .map(|(k, &len)| if len == 1 { 0 } else { out[block_end - s.len() + k] })
                        .collect();
                    let raw =
                        data.get(&local).and_then(|v| v.to_i128()).ok_or_else(|| internal("index array read"))? as i64;
                    let len = src_shape[axis] as i64;
                    (if raw < 0 { raw + len } else { raw }) as usize
                }
            };
            at.push(v);
        }
        Ok(0)
    })
}
