//! Linear algebra: `einsum`, `matmul`, `dot`, `vdot`, `tensordot` (all build an `Einsum` node),
//! `vecdot`, and `diagonal` and `trace`.

use std::collections::BTreeMap;

use pytato_core::array::{Array, EinsumAxis};
use pytato_core::dtype::DType;
use pytato_core::error::{Error, Result};
use pytato_core::expr::{BinaryOp, Expr};
use pytato_core::operand::LambdaBuilder;
use pytato_core::shape::{Dim, Shape, broadcast_shapes};

use super::elementwise::{conj, multiply};
use super::shape_ops::{normalize_axis, ravel};

/// A subscript label: a letter, or one of the axes an ellipsis stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Label {
    /// An ellipsis axis, numbered from the left of the broadcast ellipsis shape.
    Ellipsis(usize),
    Letter(char),
}

/// The einsum of `operands` with labels per axis and the output labels. Labels on the output are
/// elementwise axes in that order; the others are summed, in order of first appearance. Lengths
/// of one label must agree or be 1.
fn einsum_labels(op: &str, operands: &[(&Array, Vec<Label>)], output: &[Label]) -> Result<Array> {
    let mut lengths: BTreeMap<Label, (Dim, usize)> = BTreeMap::new();
    let mut reduction_order: Vec<Label> = Vec::new();
    for (k, (array, labels)) in operands.iter().enumerate() {
        for (a, (label, len)) in labels.iter().zip(array.shape().dims()).enumerate() {
            if !output.contains(label) && !reduction_order.contains(label) {
                reduction_order.push(*label);
            }
            // A label repeated in one operand (a diagonal) needs equal lengths: numpy broadcasts
            // a length 1 between operands only.
            if let Some(b) = labels[..a].iter().position(|l| l == label)
                && array.shape()[b] != *len
            {
                return Err(Error::invalid(
                    op,
                    format!(
                        "{} is repeated in operand {k} with lengths {} and {len} (shape {})",
                        describe(label),
                        array.shape()[b],
                        array.shape()
                    ),
                ));
            }
            match lengths.get(label) {
                Some((l, first)) if l != len && *len != Dim::new(1) && *l != Dim::new(1) => {
                    return Err(Error::invalid(
                        op,
                        format!(
                            "{} has length {l} in operand {first} (shape {}) but {len} in operand {k} (shape {})",
                            describe(label),
                            operands[*first].0.shape(),
                            array.shape()
                        ),
                    ));
                }
                Some((l, _)) if *l != Dim::new(1) => {}
                _ => {
                    lengths.insert(*label, (len.clone(), k));
                }
            }
        }
    }
    let access = operands
        .iter()
        .map(|(_, labels)| {
            labels
                .iter()
                .map(|l| match output.iter().position(|o| o == l) {
                    Some(i) => EinsumAxis::Elementwise(i),
                    None => EinsumAxis::Reduction(reduction_order.iter().position(|r| r == l).expect("recorded")),
                })
                .collect()
        })
        .collect();
    let args = operands.iter().map(|(a, _)| (*a).clone()).collect();
    Array::new_einsum(access, args, BTreeMap::new())
}

fn describe(label: &Label) -> String {
    match label {
        Label::Letter(c) => format!("index '{c}'"),
        Label::Ellipsis(i) => format!("broadcast axis {i} of '...'"),
    }
}

/// Parses one term (`"ij"`, `"...k"`) for an operand of `ndim` axes; the ellipsis covers the axes
/// the letters leave, right-aligned against `ellipsis_ndim` broadcast axes.
fn parse_term(op: &str, term: &str, ndim: usize, ellipsis_ndim: usize, which: &str) -> Result<Vec<Label>> {
    let (before, after, has_ellipsis) = match term.split_once("...") {
        Some((b, a)) => (b, a, true),
        None => (term, "", false),
    };
    let letters = |s: &str| -> Result<Vec<Label>> {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphabetic() {
                    Ok(Label::Letter(c))
                } else {
                    Err(Error::invalid(op, format!("invalid character {c:?} in subscripts {term:?} of {which}")))
                }
            })
            .collect()
    };
    let (before, after) = (letters(before)?, letters(after)?);
    let named = before.len() + after.len();
    let covered = if has_ellipsis { ndim.checked_sub(named) } else { (named == ndim).then_some(0) };
    let covered = covered
        .ok_or_else(|| Error::invalid(op, format!("subscripts {term:?} of {which} do not match its {ndim} axes")))?;
    let mut labels = before;
    labels.extend((ellipsis_ndim - covered..ellipsis_ndim).map(Label::Ellipsis));
    labels.extend(after);
    Ok(labels)
}

/// The operands' terms and the output's term (if the spec has `->`) of a spec without whitespace.
fn split_subscripts(spec: &str) -> (Vec<&str>, Option<&str>) {
    let (inputs, output) = match spec.split_once("->") {
        Some((i, o)) => (i, Some(o)),
        None => (spec, None),
    };
    (inputs.split(',').collect(), output)
}

/// The checks of `einsum`'s subscripts that need no operand but their number: one term per
/// operand, letters (and at most one `...`) in each term, an output letter at most once and only
/// where an operand has it. `einsum` makes them first, so that a wrong spec is reported as such
/// whatever the operands are (as numpy does); callers that convert operands first can too.
///
/// ```
/// use pytato_frontend::check_einsum_subscripts;
/// assert!(check_einsum_subscripts("ij,jk->ik", 2).is_ok());
/// assert!(check_einsum_subscripts("ij,j->jj", 2).is_err()); // j twice in the output
/// assert!(check_einsum_subscripts("ij,j->j", 1).is_err()); // two terms, one operand
/// ```
pub fn check_einsum_subscripts(subscripts: &str, operands: usize) -> Result<()> {
    let op = "einsum";
    let spec: String = subscripts.chars().filter(|c| !c.is_whitespace()).collect();
    let (terms, output) = split_subscripts(&spec);
    if terms.len() != operands {
        return Err(Error::invalid(
            op,
            format!("subscripts {subscripts:?} name {} operands, {operands} given", terms.len()),
        ));
    }
    for term in terms.iter().chain(&output) {
        let letters = term.replace("...", "");
        if let Some(c) = letters.chars().find(|c| !c.is_ascii_alphabetic()) {
            return Err(Error::invalid(op, format!("invalid character {c:?} in subscripts {subscripts:?}")));
        }
        if term.matches("...").count() > 1 {
            return Err(Error::invalid(op, format!("more than one ellipsis in {term:?}")));
        }
    }
    if let Some(out) = output {
        let letters: Vec<char> = out.replace("...", "").chars().collect();
        for (i, c) in letters.iter().enumerate() {
            if letters[..i].contains(c) {
                return Err(Error::invalid(op, format!("output subscript {c:?} appears more than once")));
            }
            if !terms.iter().any(|t| t.contains(*c)) {
                return Err(Error::invalid(op, format!("output subscript {c:?} appears in no operand")));
            }
        }
    }
    Ok(())
}

/// numpy's `einsum`: explicit (`"ij,jk->ik"`) and implicit (`"ij,jk"`, output letters are those
/// used once, in alphabetical order) modes, repeated letters in one operand (`"ii->i"`, a
/// diagonal), `...` broadcasting, any number of operands, symbolic lengths.
///
/// ```
/// use pytato_core::{DType, Dim};
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [Dim::param("n"), Dim::new(3)], DType::F64).unwrap();
/// let b = pt::placeholder("b", [3, 5], DType::F64).unwrap();
/// assert_eq!(pt::einsum("ij,jk->ik", &[&a, &b]).unwrap().shape().to_string(), "(n, 5)");
/// assert_eq!(pt::einsum("ij,jk", &[&a, &b]).unwrap().shape().to_string(), "(n, 5)");
/// let m = pt::placeholder("m", [2, 4, 4], DType::F64).unwrap();
/// assert_eq!(pt::einsum("...ii->...i", &[&m]).unwrap().shape().to_string(), "(2, 4)");
/// ```
#[track_caller]
pub fn einsum(subscripts: &str, operands: &[&Array]) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "einsum";
    check_einsum_subscripts(subscripts, operands.len())?;
    let spec: String = subscripts.chars().filter(|c| !c.is_whitespace()).collect();
    let (terms, output) = split_subscripts(&spec);
    // The number of axes the ellipses stand for: the most any operand's ellipsis covers.
    let mut ellipsis_ndim = 0;
    for (term, a) in terms.iter().zip(operands) {
        if term.contains("...") {
            let named = term.replace("...", "").chars().count();
            ellipsis_ndim = ellipsis_ndim.max(a.ndim().saturating_sub(named));
        }
    }
    let mut labelled = Vec::with_capacity(operands.len());
    for (k, (term, a)) in terms.iter().zip(operands).enumerate() {
        labelled.push((*a, parse_term(op, term, a.ndim(), ellipsis_ndim, &format!("operand {k}"))?));
    }
    let output_labels = match output {
        Some(out) if ellipsis_ndim > 0 && !out.contains("...") => {
            return Err(Error::invalid(
                op,
                format!(
                    "'...' stands for {ellipsis_ndim} of the operands' axes, which the output {out:?} of \
                     {subscripts:?} does not name (a '...' in the output keeps them, as in numpy)"
                ),
            ));
        }
        Some(out) => {
            let named = out.replace("...", "").chars().count();
            let ndim = named + if out.contains("...") { ellipsis_ndim } else { 0 };
            // Its letters are distinct and each an operand's (checked first); its broadcast axes are
            // those of the operand whose ellipsis covers the most.
            parse_term(op, out, ndim, ellipsis_ndim, "the output")?
        }
        None => {
            let mut counts: BTreeMap<Label, usize> = BTreeMap::new();
            for (_, labels) in &labelled {
                for l in labels {
                    *counts.entry(*l).or_default() += 1;
                }
            }
            // Ellipsis axes first (they sort before letters), then letters used once, in ASCII order.
            counts.into_iter().filter(|(l, c)| matches!(l, Label::Ellipsis(_)) || *c == 1).map(|(l, _)| l).collect()
        }
    };
    einsum_labels(op, &labelled, &output_labels)
}

fn letters(range: std::ops::Range<usize>) -> Vec<Label> {
    // Labels for generated specs; any distinct labels do, so use ellipsis numbers far apart.
    range.map(Label::Ellipsis).collect()
}

/// numpy's `matmul` (`@`): matrix product over the last two axes, with batch axes broadcast; a 1-D
/// operand is a vector (a row on the left, a column on the right) and its axis is dropped.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [7, 1, 2, 3], DType::F32).unwrap();
/// let b = pt::placeholder("b", [5, 3, 4], DType::F32).unwrap();
/// assert_eq!(pt::matmul(&a, &b).unwrap().shape().to_string(), "(7, 5, 2, 4)");
/// let v = pt::placeholder("v", [3], DType::F32).unwrap();
/// assert_eq!(pt::matmul(&a, &v).unwrap().shape().to_string(), "(7, 1, 2)");
/// ```
#[track_caller]
pub fn matmul(a: &Array, b: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "matmul";
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::invalid(
            op,
            format!("operands must have at least one axis, got shapes {} and {}", a.shape(), b.shape()),
        ));
    }
    let k_a = &a.shape()[a.ndim() - 1];
    let k_b = &b.shape()[if b.ndim() == 1 { 0 } else { b.ndim() - 2 }];
    if k_a != k_b {
        return Err(Error::invalid(
            op,
            format!("contracted axes differ: {k_a} in shape {} and {k_b} in shape {}", a.shape(), b.shape()),
        ));
    }
    let batch = |s: &Shape| -> Shape { Shape::from(s.dims()[..s.ndim().saturating_sub(2)].to_vec()) };
    let (batch_a, batch_b) = (batch(a.shape()), batch(b.shape()));
    let nb = broadcast_shapes(op, &[&batch_a, &batch_b])
        .map_err(|_| Error::BroadcastMismatch { op: op.into(), shapes: vec![a.shape().clone(), b.shape().clone()] })?
        .ndim();
    // Batch labels 0..nb (right-aligned), then i = nb, j = nb + 1, k = nb + 2.
    let (i, j, k) = (Label::Ellipsis(nb), Label::Ellipsis(nb + 1), Label::Ellipsis(nb + 2));
    let labels_of = |nbatch: usize| letters(nb - nbatch..nb);
    let (mut la, mut lb, mut out) = (labels_of(batch_a.ndim()), labels_of(batch_b.ndim()), letters(0..nb));
    if a.ndim() == 1 {
        la = vec![j];
    } else {
        la.extend([i, j]);
        out.push(i);
    }
    if b.ndim() == 1 {
        lb = vec![j];
    } else {
        lb.extend([j, k]);
        out.push(k);
    }
    einsum_labels(op, &[(a, la), (b, lb)], &out)
}

/// numpy's `dot`: a product for 0-d operands, the inner product of vectors, the matrix product of
/// matrices, and in general a sum over the last axis of `a` and the second-to-last of `b` (the only
/// one, for 1-D `b`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3, 4], DType::F64).unwrap();
/// let b = pt::placeholder("b", [5, 4, 6], DType::F64).unwrap();
/// assert_eq!(pt::dot(&a, &b).unwrap().shape().to_string(), "(2, 3, 5, 6)");
/// ```
#[track_caller]
pub fn dot(a: &Array, b: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "dot";
    if a.ndim() == 0 || b.ndim() == 0 {
        return multiply(a, b);
    }
    let contracted_b = if b.ndim() == 1 { 0 } else { b.ndim() - 2 };
    if a.shape()[a.ndim() - 1] != b.shape()[contracted_b] {
        return Err(Error::invalid(op, format!("shapes {} and {} not aligned", a.shape(), b.shape())));
    }
    let sum = Label::Letter('s');
    let mut la = letters(0..a.ndim() - 1);
    let mut out = la.clone();
    la.push(sum);
    let lb: Vec<Label> =
        (0..b.ndim()).map(|i| if i == contracted_b { sum } else { Label::Ellipsis(a.ndim() + i) }).collect();
    out.extend(lb.iter().filter(|l| **l != sum));
    einsum_labels(op, &[(a, la), (b, lb)], &out)
}

/// numpy's `vdot`: the flattened arrays' inner product, conjugating `a`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::C64).unwrap();
/// let b = pt::placeholder("b", [6], DType::C64).unwrap();
/// assert_eq!(pt::vdot(&a, &b).unwrap().shape().to_string(), "()");
/// ```
#[track_caller]
pub fn vdot(a: &Array, b: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (fa, fb) = (ravel(a)?, ravel(b)?);
    if fa.shape() != fb.shape() {
        return Err(Error::invalid("vdot", format!("arrays of shapes {} and {} differ in size", a.shape(), b.shape())));
    }
    let fa = if fa.dtype().is_complex() { conj(&fa)? } else { fa };
    let i = Label::Letter('i');
    einsum_labels("vdot", &[(&fa, vec![i]), (&fb, vec![i])], &[])
}

/// Which axes [`tensordot`] contracts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TensordotAxes {
    /// The last `n` axes of `a` with the first `n` of `b`.
    Count(usize),
    /// These axes of `a` with these of `b`, pairwise.
    Pairs(Vec<i64>, Vec<i64>),
}

impl From<usize> for TensordotAxes {
    fn from(n: usize) -> TensordotAxes {
        TensordotAxes::Count(n)
    }
}
impl From<(Vec<i64>, Vec<i64>)> for TensordotAxes {
    fn from((a, b): (Vec<i64>, Vec<i64>)) -> TensordotAxes {
        TensordotAxes::Pairs(a, b)
    }
}
impl<const N: usize> From<([i64; N], [i64; N])> for TensordotAxes {
    fn from((a, b): ([i64; N], [i64; N])) -> TensordotAxes {
        TensordotAxes::Pairs(a.to_vec(), b.to_vec())
    }
}

/// numpy's `tensordot`: sums products over the given pairs of axes; the result has `a`'s free
/// axes, then `b`'s.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4, 5], DType::F64).unwrap();
/// let b = pt::placeholder("b", [4, 3, 2], DType::F64).unwrap();
/// assert_eq!(pt::tensordot(&a, &b, ([1, 0], [0, 1])).unwrap().shape().to_string(), "(5, 2)");
/// assert_eq!(pt::tensordot(&a, &a, 0).unwrap().ndim(), 6);
/// ```
#[track_caller]
pub fn tensordot(a: &Array, b: &Array, axes: impl Into<TensordotAxes>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "tensordot";
    let (ax_a, ax_b): (Vec<usize>, Vec<usize>) = match axes.into() {
        TensordotAxes::Count(n) => {
            if n > a.ndim() || n > b.ndim() {
                return Err(Error::invalid(
                    op,
                    format!("cannot contract {n} axes of shapes {} and {}", a.shape(), b.shape()),
                ));
            }
            ((a.ndim() - n..a.ndim()).collect(), (0..n).collect())
        }
        TensordotAxes::Pairs(pa, pb) => {
            if pa.len() != pb.len() {
                return Err(Error::invalid(op, format!("axes {pa:?} and {pb:?} differ in length")));
            }
            let na = pa.iter().map(|&x| normalize_axis(op, x, a.ndim(), a.shape())).collect::<Result<Vec<_>>>()?;
            let nb = pb.iter().map(|&x| normalize_axis(op, x, b.ndim(), b.shape())).collect::<Result<Vec<_>>>()?;
            (na, nb)
        }
    };
    for (i, (&x, &y)) in ax_a.iter().zip(&ax_b).enumerate() {
        if ax_a[..i].contains(&x) || ax_b[..i].contains(&y) {
            return Err(Error::invalid(op, "repeated axis"));
        }
        if a.shape()[x] != b.shape()[y] {
            return Err(Error::invalid(
                op,
                format!("shape mismatch for sum: axis {x} of {} and axis {y} of {}", a.shape(), b.shape()),
            ));
        }
    }
    // Contracted pair p gets the label Letter(p); free axes get distinct numbered labels.
    let pair_label = |p: usize| Label::Letter(char::from_u32(0x100 + p as u32).expect("valid char"));
    let la: Vec<Label> = (0..a.ndim())
        .map(|i| match ax_a.iter().position(|&x| x == i) {
            Some(p) => pair_label(p),
            None => Label::Ellipsis(i),
        })
        .collect();
    let lb: Vec<Label> = (0..b.ndim())
        .map(|i| match ax_b.iter().position(|&y| y == i) {
            Some(p) => pair_label(p),
            None => Label::Ellipsis(a.ndim() + i),
        })
        .collect();
    let out: Vec<Label> = la.iter().chain(&lb).filter(|l| matches!(l, Label::Ellipsis(_))).copied().collect();
    einsum_labels(op, &[(a, la), (b, lb)], &out)
}

/// The dot product of vectors along `axis` (the Array API's and numpy's `vecdot`): axis `axis`
/// of each operand (counted in that operand's own axes, as numpy's gufunc counts them) is the
/// vector, the same length in both (a length 1 does not broadcast), and the other axes
/// broadcast; `sum(conj(x1) * x2)` over the vector, in the dtype of `x1 * x2` (integers wrap as
/// numpy's do).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 3], DType::C128).unwrap();
/// let b = pt::placeholder("b", [3], DType::C128).unwrap();
/// assert_eq!(pt::vecdot(&a, &b, -1).unwrap().shape().to_string(), "(4,)");
/// ```
#[track_caller]
pub fn vecdot(x1: &Array, x2: &Array, axis: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    // Only complex numbers are conjugated: `conj` of a bool is an int8, and numpy's vecdot of
    // bools is a bool (any of the ands).
    let op = "vecdot";
    let first = normalize_axis(op, axis, x1.ndim(), x1.shape())?;
    let second = normalize_axis(op, axis, x2.ndim(), x2.shape())?;
    if x1.shape()[first] != x2.shape()[second] {
        return Err(Error::ShapeMismatch {
            op: op.into(),
            expected: format!(
                "axis {second} of the second operand as long as axis {first} of the first (shape {}): {}",
                x1.shape(),
                x1.shape()[first]
            ),
            got: x2.shape().clone(),
        });
    }
    // The vectors last in both, where broadcasting the other axes cannot move them.
    let last = |a: &Array, k: usize| super::moveaxis(a, &[k as i64], &[-1]);
    let (x1, x2) = (last(x1, first)?, last(x2, second)?);
    let x1 = if x1.dtype().is_complex() { super::conj(&x1)? } else { x1 };
    let product = super::multiply(&x1, &x2)?;
    let summed = super::sum(&product, super::ReduceOptions::axes(-1))?;
    super::astype(&summed, product.dtype())
}

/// The diagonal of `a` in the plane of `axis1` and `axis2` (numpy `diagonal`): elements
/// `a[..., i + max(0, -offset), ..., i + max(0, offset), ...]`, the two axes removed and the
/// diagonal appended as the last axis; empty where `offset` is beyond either axis. The lengths of
/// the two axes must be known, unless `offset` is 0 and they are the same length.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4, 5], DType::F64).unwrap();
/// assert_eq!(pt::diagonal(&a, 1, 0, 2).unwrap().shape().to_string(), "(4, 3)");
/// assert_eq!(pt::diagonal(&a, -7, 0, 1).unwrap().shape().to_string(), "(5, 0)");
/// ```
#[track_caller]
pub fn diagonal(a: &Array, offset: i64, axis1: i64, axis2: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "diagonal";
    if a.ndim() < 2 {
        return Err(Error::invalid(op, format!("needs at least 2 axes, got shape {}", a.shape())));
    }
    let (first, second) =
        (normalize_axis(op, axis1, a.ndim(), a.shape())?, normalize_axis(op, axis2, a.ndim(), a.shape())?);
    if first == second {
        return Err(Error::invalid(op, format!("axis1 and axis2 are the same axis, {first}")));
    }
    let (row_start, column_start) = (offset.min(0).unsigned_abs(), offset.max(0).unsigned_abs());
    let (rows, columns) = (&a.shape()[first], &a.shape()[second]);
    let length = match (rows.as_int(), columns.as_int()) {
        (Some(r), Some(c)) => {
            let left = |n: i64, start: u64| i64::try_from(start).map_or(0, |start| n.saturating_sub(start).max(0));
            Dim::new(left(r, row_start).min(left(c, column_start)))
        }
        _ if offset == 0 && rows == columns => rows.clone(),
        _ => {
            return Err(Error::invalid(
                op,
                format!(
                    "the length of the diagonal of axes {first} and {second} of shape {} (offset {offset}) depends on \
                     which is shorter; give their lengths",
                    a.shape()
                ),
            ));
        }
    };
    let kept: Vec<usize> = (0..a.ndim()).filter(|&k| k != first && k != second).collect();
    let mut dims: Vec<Dim> = kept.iter().map(|&k| a.shape()[k].clone()).collect();
    dims.push(length);
    let along = kept.len();
    let mut builder = LambdaBuilder::new(Shape::from(dims));
    let mut out_axis = 0;
    let indices = (0..a.ndim())
        .map(|k| {
            let start = if k == first { row_start } else { column_start };
            if k == first || k == second {
                // `start` is below the axis's length wherever the diagonal is not empty.
                Expr::iname(along).binary(BinaryOp::Add, Expr::i64(start.min(i64::MAX as u64) as i64))
            } else {
                out_axis += 1;
                Expr::iname(out_axis - 1)
            }
        })
        .collect();
    let read = builder.read_at(a, indices);
    builder.finish(read)
}

/// The sum along the diagonal of `a` in the plane of `axis1` and `axis2` (numpy `trace`):
/// `sum(diagonal(a, offset, axis1, axis2), axis=-1)`, in `dtype` or `sum`'s dtype (integers
/// widened as numpy widens them).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 3], DType::I8).unwrap();
/// assert_eq!(pt::trace(&a, 0, 0, 1, None).unwrap().dtype(), DType::I64);
/// ```
#[track_caller]
pub fn trace(a: &Array, offset: i64, axis1: i64, axis2: i64, dtype: impl Into<Option<DType>>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let diagonal = diagonal(a, offset, axis1, axis2).map_err(|e| e.renamed("diagonal", "trace"))?;
    let mut options = super::ReduceOptions::axes(-1);
    if let Some(dtype) = dtype.into() {
        options = options.dtype(dtype);
    }
    super::sum(&diagonal, options).map_err(|e| e.renamed("sum", "trace"))
}
