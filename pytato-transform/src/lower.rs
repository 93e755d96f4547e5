//! Lowering: every node kind becomes an equivalent `IndexLambda`.
//!
//! After [`lower_to_index_lambdas`] a DAG holds only inputs (placeholders, size parameters, data
//! wrappers) and index lambdas, the uniform form the kernel IR is built from. Each node keeps its
//! tags and axis metadata. The rules, per kind (`o` is the output index):
//!
//! - `Einsum`: `sum_{reduction} prod_k cast(arg_k[...])` (logical and/or for bools); operand axes of
//!   length 1 that broadcast are read at 0.
//! - `Reshape`: the flat position of `o` in the result (C or F order) is unravelled in the input;
//!   a reshape that only inserts or removes axes of length 1 reads the kept axes' inames directly.
//! - `Roll`: `a[..., (o_axis + n - s) mod n, ...]` with `s = shift mod n`, so no shift overflows.
//! - `AxisPermutation`: `a[o_{p^-1(0)}, ...]`.
//! - `Stack`, `Concatenate`: a chain of `if`s on `o_axis` choosing the operand (cast to the result
//!   dtype); `if` is lazy, so untaken branches never read out of bounds. More than eight operands
//!   are lowered in groups of eight, a tree of lambdas.
//! - `BasicIndex`: integers are constants, slices `start + step * o_k`; the lambda keeps the
//!   node's [size checks](pytato_core::size_check) (integers and slices inside symbolic axes).
//! - Advanced indexing: each index array becomes a lambda of its own,
//!   `normalize_index(ix[...], n, axis)` (negative values count from the end, values out of range
//!   fail when the program runs, over the whole index array, as numpy checks them), read at the
//!   broadcast part of `o`.
//! - `NamedArray`: a read of the dictionary entry.

use pytato_core::array::{IndexItem, IndexLayout};
use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, ReduceOp, ReductionBounds};
use pytato_core::operand::LambdaBuilder;
use pytato_core::tags::MaskPositions;
use pytato_core::{Array, DType, Dim, EinsumAxis, NodeKind, Order, Result, Scalar, Shape};
use pytato_runtime::backend::Outputs;

use crate::mapper::{CopyMapper, map_copy};

/// Lowers every node of `outputs` to an `IndexLambda` (inputs stay as they are).
///
/// ```
/// use pytato_core::{DType, NodeKind};
/// use pytato_runtime::backend::Outputs;
/// use pytato_frontend as pt;
/// use pytato_transform::{lower::lower_to_index_lambdas, mapper::topological_sort};
/// let a = pt::placeholder("a", [2, 3], DType::F64)?;
/// let b = pt::placeholder("b", [3, 4], DType::F64)?;
/// let c = pt::roll(&pt::matmul(&a, &b)?, 1, Some(0))?;
/// let Outputs::Single(lowered) = lower_to_index_lambdas(&(&c).into())? else { unreachable!() };
/// assert!(topological_sort([&lowered]).iter().all(|n| n.is_input() || matches!(n.kind(), NodeKind::IndexLambda(_))));
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn lower_to_index_lambdas(outputs: &Outputs) -> Result<Outputs> {
    let roots: Vec<Array> = outputs.entries().into_iter().map(|(_, a)| a).collect();
    map_copy(&mut Lowerer::for_dag(&roots)?, outputs)
}

/// `node` alone as an `IndexLambda` reading its children (which stay as they are), as pytato's
/// `to_index_lambda`; inputs, index lambdas, host steps, calls and communication are returned
/// unchanged (they have no index-lambda form).
///
/// ```
/// use pytato_core::{DType, NodeKind};
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [3, 4], DType::F64)?;
/// let rolled = pt::roll(&x, 1, Some(0))?;
/// let lambda = pytato_transform::lower::lower_node(&rolled)?;
/// assert!(matches!(lambda.kind(), NodeKind::IndexLambda(_)) && lambda.children() == vec![&x]);
/// # Ok::<(), pytato_core::Error>(())
/// ```
pub fn lower_node(node: &Array) -> Result<Array> {
    let mut lowerer = Lowerer::for_dag(std::slice::from_ref(node))?;
    let children: Vec<Array> = node.children().into_iter().cloned().collect();
    lowerer.map_node(node, &children)
}

/// The copy mapper behind [`lower_to_index_lambdas`].
pub struct Lowerer {
    /// One node per size parameter, shared by every lambda that reads one.
    size_params: Vec<Array>,
}

impl Lowerer {
    /// A lowerer for the DAG below `roots`: it reuses the DAG's own `SizeParam` nodes and makes
    /// one for each parameter that only appears in shapes.
    pub fn for_dag(roots: &[Array]) -> Result<Lowerer> {
        let mut nodes: Vec<Array> = Vec::new();
        let mut names = std::collections::BTreeSet::new();
        crate::mapper::walk(roots, |n| {
            if matches!(n.kind(), NodeKind::SizeParam { .. }) && !nodes.iter().any(|m| m.name() == n.name()) {
                nodes.push(n.clone());
            }
            pytato_runtime::binding::node_size_params(n, &mut names);
        });
        for name in names {
            if !nodes.iter().any(|m| m.name() == Some(&*name)) {
                nodes.push(Array::new_size_param(&name)?);
            }
        }
        Ok(Lowerer { size_params: nodes })
    }
}

fn same_metadata(lowered: Array, node: &Array) -> Result<Array> {
    lowered.with_metadata_of(node)
}

fn cast(e: Expr, from: DType, to: DType) -> Expr {
    if from == to { e } else { e.cast(to) }
}

fn is_one(d: &Dim) -> bool {
    d.as_int() == Some(1)
}

impl CopyMapper for Lowerer {
    fn map_node(&mut self, node: &Array, children: &[Array]) -> Result<Array> {
        // Inputs and index lambdas keep their kind; everything else is lowered.
        let rebuilt = node.with_children(children.to_vec())?;
        let lowered = match rebuilt.kind() {
            NodeKind::Placeholder { .. }
            | NodeKind::SizeParam { .. }
            | NodeKind::DataWrapper { .. }
            | NodeKind::IndexLambda(_) => return Ok(rebuilt),
            // Host steps are no kernel: programs run them between phases (`pytato_runtime::phases`).
            _ if pytato_runtime::phases::is_host_step(&rebuilt) => return Ok(rebuilt),
            // Calls are inlined (`pytato_core::function::inline_calls`) before code generation.
            NodeKind::CallResult { .. } => return Ok(rebuilt),
            // Communication is partitioned away before code generation (`pytato-distributed`).
            NodeKind::DistributedRecv { .. } | NodeKind::DistributedSendRefHolder { .. } => return Ok(rebuilt),
            _ => lower(&rebuilt, &self.size_params)?,
        };
        same_metadata(lowered, node)
    }
}

/// The most operands one lowered `Stack` or `Concatenate` selects among: more are lowered in
/// groups of this many (a tree of lambdas), so that no kernel must read thousands of buffers
/// through a chain of thousands of `if`s (the kernel builder stores groups where a kernel would
/// read more buffers than a backend binds).
const GROUP: usize = 8;

/// `Stack` and `Concatenate` of more than [`GROUP`] arrays as a concatenation of groups (each
/// lowered), lowered; `None` for other nodes.
fn lower_in_groups(node: &Array, size_params: &[Array]) -> Result<Option<Array>> {
    let (arrays, axis, stack) = match node.kind() {
        NodeKind::Stack { arrays, axis } if arrays.len() > GROUP => (arrays, *axis, true),
        NodeKind::Concatenate { arrays, axis } if arrays.len() > GROUP => (arrays, *axis, false),
        _ => return Ok(None),
    };
    let groups = arrays
        .chunks(GROUP)
        .map(|chunk| {
            let group = if stack {
                Array::new_stack(chunk.to_vec(), axis)?
            } else {
                Array::new_concatenate(chunk.to_vec(), axis)?
            };
            lower(&group, size_params)
        })
        .collect::<Result<Vec<_>>>()?;
    let joined = lower(&Array::new_concatenate(groups, axis)?, size_params)?;
    // numpy's dtype of the whole, where a group's own would differ.
    Ok(Some(if joined.dtype() == node.dtype() {
        joined
    } else {
        let mut b = LambdaBuilder::new(node.shape().clone()).with_size_params(size_params);
        let read = b.read_at(&joined, (0..node.ndim()).map(Expr::iname).collect());
        b.finish(cast(read, joined.dtype(), node.dtype()))?
    }))
}

/// One node (whose children are already lowered) as an index lambda.
fn lower(node: &Array, size_params: &[Array]) -> Result<Array> {
    if let Some(grouped) = lower_in_groups(node, size_params)? {
        return Ok(grouped);
    }
    let shape = node.shape().clone();
    let dtype = node.dtype();
    let mut b = LambdaBuilder::new(shape.clone()).with_size_params(size_params);
    let inames = |n: usize| (0..n).map(Expr::iname).collect::<Vec<_>>();
    let expr = match node.kind() {
        NodeKind::Einsum(e) => {
            // Reduction lengths: the non-1 length among the operand axes of each index.
            let mut red_len: Vec<Dim> = vec![Dim::new(1); e.reduction_descriptors.len()];
            for (acc, arg) in e.access.iter().zip(&e.args) {
                for (ax, len) in acc.iter().zip(arg.shape().dims()) {
                    if let EinsumAxis::Reduction(r) = ax
                        && !is_one(len)
                    {
                        red_len[*r] = len.clone();
                    }
                }
            }
            let red_names: Vec<_> = red_len.iter().map(|_| b.reduction_iname()).collect();
            let mut product: Option<Expr> = None;
            for (acc, arg) in e.access.iter().zip(&e.args) {
                let idx = acc
                    .iter()
                    .zip(arg.shape().dims())
                    .map(|(ax, len)| match ax {
                        EinsumAxis::Elementwise(o) if is_one(len) && !is_one(&shape[*o]) => Expr::i64(0),
                        EinsumAxis::Elementwise(o) => Expr::iname(*o),
                        EinsumAxis::Reduction(r) if is_one(len) && !is_one(&red_len[*r]) => Expr::i64(0),
                        EinsumAxis::Reduction(r) => Expr::Var(red_names[*r].clone()),
                    })
                    .collect();
                let factor = cast(b.read_at(arg, idx), arg.dtype(), dtype);
                let op = if dtype == DType::Bool { BinaryOp::LogicalAnd } else { BinaryOp::Mul };
                product = Some(match product {
                    None => factor,
                    // numpy's einsum multiplies complex numbers by the textbook formula.
                    Some(p) if dtype.is_complex() => Expr::call(Func::TextbookProduct, vec![p, factor]),
                    Some(p) => p.binary(op, factor),
                });
            }
            let body = product.expect("an einsum has operands");
            if red_names.is_empty() {
                // numpy adds each product into a zeroed output, even with nothing to sum: a -0.0
                // product comes out +0.0 (and `x / einsum('i,i->i', x, 0 * x)` is +-inf by that
                // sign). One operand is numpy's view of it (a transpose, a diagonal): -0.0 stays.
                if dtype.is_inexact() && e.args.len() > 1 {
                    body.binary(BinaryOp::Add, Expr::constant(Scalar::zero(dtype)))
                } else {
                    body
                }
            } else {
                let bounds = red_names
                    .iter()
                    .zip(&red_len)
                    .map(|(n, len)| ReductionBounds { iname: n.clone(), lower: Dim::new(0), upper: len.clone() })
                    .collect();
                let op = if dtype == DType::Bool { ReduceOp::Any } else { ReduceOp::Sum };
                Expr::reduce(op, bounds, body)
            }
        }
        NodeKind::Reshape { array, order } => match unit_axes_reshape(array.shape(), &shape) {
            Some(idx) => b.read_at(array, idx),
            None => {
                let fortran = *order == Order::F;
                let flat = flat_index(&mut b, &inames(shape.ndim()), &shape, fortran)?;
                let idx = unravel(&mut b, flat, array.shape(), fortran)?;
                b.read_at(array, idx)
            }
        },
        NodeKind::Roll { array, shift, axis } => {
            // (o + n - s) % n with s = shift mod n in [0, n): no overflow for any i64 shift.
            let mut idx = inames(shape.ndim());
            let len = &shape[*axis];
            let n = b.dim(len)?;
            let back = match len.as_int() {
                Some(0) => None,
                Some(n) => Some(Expr::i64(n - shift.rem_euclid(n))).filter(|_| shift.rem_euclid(n) != 0),
                None => Some(n.clone().binary(BinaryOp::Sub, Expr::i64(*shift).binary(BinaryOp::Rem, n.clone()))),
            };
            if let Some(back) = back {
                idx[*axis] = Expr::iname(*axis).binary(BinaryOp::Add, back).binary(BinaryOp::Rem, n);
            }
            b.read_at(array, idx)
        }
        NodeKind::AxisPermutation { array, axes } => {
            let mut idx = vec![Expr::i64(0); axes.len()];
            for (out_axis, &in_axis) in axes.iter().enumerate() {
                idx[in_axis] = Expr::iname(out_axis);
            }
            b.read_at(array, idx)
        }
        NodeKind::Stack { arrays, axis } => {
            let reads: Vec<Expr> = arrays
                .iter()
                .map(|a| {
                    let idx = (0..shape.ndim()).filter(|k| k != axis).map(Expr::iname).collect();
                    cast(b.read_at(a, idx), a.dtype(), dtype)
                })
                .collect();
            select_part(&reads, &|k| Ok(Expr::iname(*axis).compare(CompareOp::Lt, Expr::i64(k as i64))))?
        }
        NodeKind::Concatenate { arrays, axis } => {
            // starts[k]: where part k starts along the axis
            let mut offset = Dim::new(0);
            let mut reads = Vec::new();
            let mut starts = Vec::new();
            for a in arrays {
                let mut idx = inames(shape.ndim());
                let start = b.dim(&offset)?;
                idx[*axis] = Expr::iname(*axis).binary(BinaryOp::Sub, start.clone());
                reads.push(cast(b.read_at(a, idx), a.dtype(), dtype));
                starts.push(start);
                offset = offset.add(&a.shape()[*axis])?;
            }
            select_part(&reads, &|k| Ok(Expr::iname(*axis).compare(CompareOp::Lt, starts[k].clone())))?
        }
        NodeKind::BasicIndex { array, indices }
        | NodeKind::AdvancedIndexInContiguousAxes { array, indices }
        | NodeKind::AdvancedIndexInNoncontiguousAxes { array, indices } => {
            let layout = IndexLayout::of(node).expect("an indexing node");
            let unread = layout.index_arrays_unread(&shape);
            let idx = index_expressions(&mut b, array, indices, &layout, unread, size_params)?;
            b.read_at(array, idx)
        }
        NodeKind::NamedArray { container, name } => {
            let entry = container.get(name).expect("validated when built").clone();
            b.read_at(&entry, inames(shape.ndim()))
        }
        NodeKind::Placeholder { .. }
        | NodeKind::SizeParam { .. }
        | NodeKind::DataWrapper { .. }
        | NodeKind::IndexLambda(_)
        | NodeKind::Nonzero { .. }
        | NodeKind::Scatter { .. }
        | NodeKind::Sort { .. }
        | NodeKind::Scan { .. }
        | NodeKind::SearchSorted { .. }
        | NodeKind::DistributedRecv { .. }
        | NodeKind::DistributedSendRefHolder { .. }
        | NodeKind::CallResult { .. } => {
            unreachable!("not lowered")
        }
    };
    // An index into symbolic axes keeps its conditions on the sizes (`x[4]` needs `n > 4`).
    b.finish(expr)?.with_size_checks(node.size_checks())
}

/// `reads[k]` where the index falls in part `k` of a stack or concatenation, as a balanced tree
/// of conditionals: `before(k)` is the condition that the index lies in a part before `k`. The
/// depth is logarithmic in the number of parts, so that joining thousands of arrays stays far
/// below [`pytato_core::expr::MAX_DEPTH`].
fn select_part(reads: &[Expr], before: &impl Fn(usize) -> Result<Expr>) -> Result<Expr> {
    fn parts(reads: &[Expr], start: usize, before: &impl Fn(usize) -> Result<Expr>) -> Result<Expr> {
        if let [only] = reads {
            return Ok(only.clone());
        }
        let mid = reads.len() / 2;
        let (first, second) = reads.split_at(mid);
        Ok(Expr::if_then_else(before(start + mid)?, parts(first, start, before)?, parts(second, start + mid, before)?))
    }
    parts(reads, 0, before)
}

/// The position of index `idx` in a `shape`-shaped array laid out in C (last axis fastest) or F
/// order, as an `int64` expression.
fn flat_index(b: &mut LambdaBuilder, idx: &[Expr], shape: &Shape, fortran: bool) -> Result<Expr> {
    let axes: Vec<usize> = if fortran { (0..shape.ndim()).rev().collect() } else { (0..shape.ndim()).collect() };
    let mut flat: Option<Expr> = None;
    for a in axes {
        flat = Some(match flat {
            None => idx[a].clone(),
            Some(f) => f.binary(BinaryOp::Mul, b.dim(&shape[a])?).binary(BinaryOp::Add, idx[a].clone()),
        });
    }
    Ok(flat.unwrap_or_else(|| Expr::i64(0)))
}

/// The input index of a reshape that only inserts or removes axes of length 1 (the other axes
/// keep their lengths and their order, so that C and F order agree): each kept axis reads the
/// iname of its output axis, each removed one 0, with no division. `None` for other reshapes.
fn unit_axes_reshape(input: &Shape, output: &Shape) -> Option<Vec<Expr>> {
    let one = Dim::new(1);
    let mut kept = (0..output.ndim()).filter(|&k| output[k] != one);
    let idx = input
        .dims()
        .iter()
        .map(|len| {
            if *len == one {
                return Some(Expr::i64(0));
            }
            let k = kept.next()?;
            (output[k] == *len).then(|| Expr::iname(k))
        })
        .collect::<Option<Vec<_>>>()?;
    kept.next().is_none().then_some(idx)
}

/// The index in `shape` of flat position `flat` (C or F order).
fn unravel(b: &mut LambdaBuilder, flat: Expr, shape: &Shape, fortran: bool) -> Result<Vec<Expr>> {
    let n = shape.ndim();
    let mut idx = vec![Expr::i64(0); n];
    // Stride of axis a: the product of the lengths of the faster axes.
    let faster = |a: usize| -> Vec<usize> { if fortran { (0..a).collect() } else { (a + 1..n).collect() } };
    let slowest = if fortran { n.saturating_sub(1) } else { 0 };
    for (a, slot) in idx.iter_mut().enumerate() {
        let mut e = flat.clone();
        let mut stride: Option<Expr> = None;
        for f in faster(a) {
            let len = b.dim(&shape[f])?;
            stride = Some(match stride {
                None => len,
                Some(s) => s.binary(BinaryOp::Mul, len),
            });
        }
        if let Some(s) = stride {
            e = e.binary(BinaryOp::FloorDiv, s);
        }
        if a != slowest {
            e = e.binary(BinaryOp::Rem, b.dim(&shape[a])?);
        }
        *slot = e;
    }
    Ok(idx)
}

/// The index array `ix` for an axis of length `len`, checked and made non-negative by
/// `normalize_index`: a lambda of its own, so that the check covers every value of `ix` (the
/// kernel builder stores such lambdas) whether or not the values read through it are used.
fn normalized_index(ix: &Array, len: &Dim, axis: usize, size_params: &[Array]) -> Result<Array> {
    let mut b = LambdaBuilder::new(ix.shape().clone()).with_size_params(size_params);
    // As numpy converts index arrays to intp: a uint64 value beyond int64 wraps (2^64 - 1 is -1,
    // the last element; 2^63 is out of range), which numpy 2 does too.
    let v = cast(b.read_at(ix, (0..ix.ndim()).map(Expr::iname).collect()), ix.dtype(), DType::I64);
    let n = b.dim(len)?;
    b.finish(Expr::call(Func::NormalizeIndex, vec![v, n, Expr::i64(axis as i64)]))
}

/// Whether index array `ix` holds positions along an axis of length `len` by construction: row
/// `k` (or part of it) of the positions of a mask whose axis `k` has length `len`, as `x[mask]`
/// makes them (the mask's shape checked against `x`'s when the index was made). Its values are in
/// `0..len`, so it needs no `normalize_index` (a pass over all of them into a copy).
fn mask_positions_within(ix: &Array, len: &Dim) -> bool {
    // Lowered already: `positions[k, _i]` of the placeholder that carries the positions.
    let NodeKind::IndexLambda(il) = ix.kind() else { return false };
    let Expr::Subscript(name, idx) = &il.expr else { return false };
    let [Expr::Const(Scalar::I64(row)), Expr::Var(_)] = &idx[..] else { return false };
    let Some(positions) = il.bindings.get(name) else { return false };
    let Some(MaskPositions(mask)) = positions.tags_of_type::<MaskPositions>().next() else { return false };
    let row = usize::try_from(*row).ok();
    ix.dtype() == DType::I64 && row.and_then(|k| mask.dims().get(k)) == Some(len)
}

/// The input index of an indexing node for output index `_0 .. _{ndim-1}`. `unread`: the index
/// arrays broadcast to an empty shape ([`IndexLayout::index_arrays_unread`]), so nothing is
/// read through them and the values of those of one or more axes go unchecked, as in numpy.
fn index_expressions(
    b: &mut LambdaBuilder,
    array: &Array,
    items: &[IndexItem],
    layout: &IndexLayout,
    unread: bool,
    size_params: &[Array],
) -> Result<Vec<Expr>> {
    let block_end = layout.block_start + layout.block_len;
    let mut out = Vec::with_capacity(items.len());
    for (axis, item) in items.iter().enumerate() {
        out.push(match item {
            IndexItem::Int(d) => b.dim(d)?,
            IndexItem::Slice(s) => {
                let o = layout.slice_axes[axis].expect("a slice has a result axis");
                let start = b.dim(&s.start)?;
                let scaled =
                    if s.step == 1 { Expr::iname(o) } else { Expr::iname(o).binary(BinaryOp::Mul, Expr::i64(s.step)) };
                if s.start == Dim::new(0) { scaled } else { start.binary(BinaryOp::Add, scaled) }
            }
            IndexItem::Array(ix) => {
                // Index arrays broadcast right-aligned within the block.
                let k = ix.ndim();
                let idx: Vec<Expr> = ix
                    .shape()
                    .dims()
                    .iter()
                    .enumerate()
                    .map(|(j, len)| if is_one(len) { Expr::i64(0) } else { Expr::iname(block_end - k + j) })
                    .collect();
                let len = &array.shape()[axis];
                // Mask positions are read as they are (each read is still checked), and so are
                // index arrays nothing is read through; subscripts are int64.
                if (unread && ix.ndim() > 0) || mask_positions_within(ix, len) {
                    cast(b.read_at(ix, idx), ix.dtype(), DType::I64)
                } else {
                    b.read_at(&normalized_index(ix, len, axis, size_params)?, idx)
                }
            }
        });
    }
    Ok(out)
}
