//! numpy indexing: integers, slices, new axes, ellipsis and integer index arrays, through the
//! [`s!`](crate::s) macro or a list of [`Idx`].
//!
//! ```
//! use pytato_core::{s, DType};
//! use pytato_frontend as pt;
//! use pytato_frontend::{Ellipsis, NewAxis};
//! let a = pt::placeholder("a", [5, 6, 7], DType::F64).unwrap();
//! assert_eq!(a.index(s![1, ..;2, -1]).unwrap().shape().to_string(), "(3,)");
//! assert_eq!(a.index(s![Ellipsis, NewAxis, 5..;-2]).unwrap().shape().to_string(), "(5, 6, 1, 3)");
//! let i = pt::placeholder("i", [2, 3], DType::I64).unwrap();
//! assert_eq!(a.index(s![.., &i, 0]).unwrap().shape().to_string(), "(5, 2, 3)");   // in place
//! assert_eq!(a.index(s![&i, .., 0]).unwrap().shape().to_string(), "(2, 3, 6)");   // in front
//! ```
//!
//! Slices follow numpy, not Rust ranges: `start..stop;step` is numpy's `start:stop:step`, so
//! `5..;-2` runs 5, 3, 1 and `..;-1` reverses. Negative integers count from the end. Integer
//! indices and slice bounds are checked here; the values of index arrays are checked when the
//! program runs (negative values count from the end there too).

use std::ops::{Range, RangeFrom, RangeFull, RangeInclusive, RangeTo, RangeToInclusive};

use crate::array::{Array, IndexItem, NormalizedSlice, Order};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::{Dim, Shape, broadcast_shapes};

use crate::basic::nonzero_positions;
use crate::basic::{broadcast_when_run, insert_unit_axes};
use crate::expr::{BinaryOp, CompareOp, Expr, Func, ReduceOp, ReductionBounds};
use crate::operand::LambdaBuilder;
use crate::size_check::SizeCheck;

/// One item of an index: see the [module docs](self).
#[derive(Clone, Debug)]
pub enum Idx {
    /// A position; negative counts from the end. Removes the axis.
    Int(i64),
    /// numpy's `start:stop:step`; `None` bounds take numpy's defaults for the step's sign.
    Slice {
        /// First index (default: 0, or the last for a negative step).
        start: Option<i64>,
        /// Exclusive bound (default: past the end in the step's direction).
        stop: Option<i64>,
        /// Non-zero step.
        step: i64,
    },
    /// A new axis of length 1 (numpy's `None`/`newaxis`).
    NewAxis,
    /// As many full slices as needed (numpy's `...`); at most one.
    Ellipsis,
    /// An integer index array (advanced indexing), or a boolean mask over as many axes as it has
    /// (numpy's rule: the mask stands for the index arrays of its `nonzero` positions; the
    /// selection's length is a count, see [`selection`](crate::basic)). A 0-d mask is a
    /// [`Idx::Bool`] whose value the data decides.
    Array(Array),
    /// A boolean scalar (numpy's `x[True]`, `x[False]`): a mask over a new axis of length 1, so
    /// it adds an axis of length 1 (`True`) or 0 (`False`), broadcast with any index arrays.
    Bool(bool),
}

/// numpy's `newaxis`, for [`s!`](crate::s).
#[derive(Clone, Copy, Debug)]
pub struct NewAxis;

/// numpy's `...`, for [`s!`](crate::s).
#[derive(Clone, Copy, Debug)]
pub struct Ellipsis;

impl Idx {
    /// The full slice `:`.
    #[track_caller]
    pub fn full() -> Idx {
        let _site = crate::created_at::enter();
        Idx::Slice { start: None, stop: None, step: 1 }
    }

    /// A slice with a step; used by [`s!`](crate::s) for `range;step`.
    #[track_caller]
    pub fn stepped(range: impl Into<Idx>, step: i64) -> Idx {
        let _site = crate::created_at::enter();
        match range.into() {
            Idx::Slice { start, stop, .. } => Idx::Slice { start, stop, step },
            other => other,
        }
    }
}

impl From<i64> for Idx {
    fn from(i: i64) -> Idx {
        Idx::Int(i)
    }
}
impl From<i32> for Idx {
    fn from(i: i32) -> Idx {
        Idx::Int(i.into())
    }
}
impl From<usize> for Idx {
    fn from(i: usize) -> Idx {
        Idx::Int(i64::try_from(i).unwrap_or(i64::MAX))
    }
}
impl From<bool> for Idx {
    fn from(b: bool) -> Idx {
        Idx::Bool(b)
    }
}
impl From<NewAxis> for Idx {
    fn from(_: NewAxis) -> Idx {
        Idx::NewAxis
    }
}
impl From<Ellipsis> for Idx {
    fn from(_: Ellipsis) -> Idx {
        Idx::Ellipsis
    }
}
impl From<&Array> for Idx {
    fn from(a: &Array) -> Idx {
        Idx::Array(a.clone())
    }
}
impl From<Array> for Idx {
    fn from(a: Array) -> Idx {
        Idx::Array(a)
    }
}
impl From<RangeFull> for Idx {
    fn from(_: RangeFull) -> Idx {
        Idx::Slice { start: None, stop: None, step: 1 }
    }
}
macro_rules! idx_from_ranges {
    ($($t:ty),*) => {$(
        impl From<Range<$t>> for Idx {
            fn from(r: Range<$t>) -> Idx {
                Idx::Slice { start: Some(r.start as i64), stop: Some(r.end as i64), step: 1 }
            }
        }
        impl From<RangeFrom<$t>> for Idx {
            fn from(r: RangeFrom<$t>) -> Idx {
                Idx::Slice { start: Some(r.start as i64), stop: None, step: 1 }
            }
        }
        impl From<RangeTo<$t>> for Idx {
            fn from(r: RangeTo<$t>) -> Idx {
                Idx::Slice { start: None, stop: Some(r.end as i64), step: 1 }
            }
        }
        impl From<RangeInclusive<$t>> for Idx {
            fn from(r: RangeInclusive<$t>) -> Idx {
                // `a..=b` is `a:b+1`; `a..=-1` reaches the end.
                let end = *r.end() as i64;
                Idx::Slice { start: Some(*r.start() as i64), stop: (end != -1).then_some(end + 1), step: 1 }
            }
        }
        impl From<RangeToInclusive<$t>> for Idx {
            fn from(r: RangeToInclusive<$t>) -> Idx {
                let end = r.end as i64;
                Idx::Slice { start: None, stop: (end != -1).then_some(end + 1), step: 1 }
            }
        }
    )*};
}
idx_from_ranges!(i32, i64, usize);

/// Builds a `Vec<Idx>` the way ndarray's `s![]` builds a slice: integers, ranges (with `;step`),
/// [`NewAxis`], [`Ellipsis`] and index arrays (`&array`).
///
/// ```
/// use pytato_core::{s, DType};
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 4], DType::F32).unwrap();
/// assert_eq!(a.index(s![..;-1, 1..3]).unwrap().shape().to_string(), "(4, 2)");
/// ```
#[macro_export]
macro_rules! s {
    (@parse [$($acc:expr),*]) => { vec![$($acc),*] };
    (@parse [$($acc:expr),*] $r:expr ; $step:expr) => {
        $crate::s!(@parse [$($acc,)* $crate::indexing::Idx::stepped($r, $step)])
    };
    (@parse [$($acc:expr),*] $r:expr ; $step:expr , $($rest:tt)*) => {
        $crate::s!(@parse [$($acc,)* $crate::indexing::Idx::stepped($r, $step)] $($rest)*)
    };
    (@parse [$($acc:expr),*] $e:expr) => {
        $crate::s!(@parse [$($acc,)* $crate::indexing::Idx::from($e)])
    };
    (@parse [$($acc:expr),*] $e:expr , $($rest:tt)*) => {
        $crate::s!(@parse [$($acc,)* $crate::indexing::Idx::from($e)] $($rest)*)
    };
    ($($t:tt)*) => { $crate::s!(@parse [] $($t)*) };
}

/// Where an output axis of the index comes from, in numpy's order.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Slice,
    New,
    Advanced,
}

/// `a[items]` with numpy's semantics; see the [module docs](self).
///
/// ```
/// use pytato_core::{s, DType};
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::I32).unwrap();
/// assert_eq!(pt::index(&a, &s![-1, ..]).unwrap().shape().to_string(), "(4,)");
/// assert!(pt::index(&a, &s![3, ..]).is_err());
/// ```
#[track_caller]
pub fn index(a: &Array, items: &[Idx]) -> Result<Array> {
    let _site = crate::created_at::enter();
    index_impl(a, items).map_err(|e| {
        ["BasicIndex", "AdvancedIndexInContiguousAxes", "AdvancedIndexInNoncontiguousAxes"]
            .into_iter()
            .fold(e, |e, node| e.renamed(node, "index"))
    })
}

/// `items` for an array `a`, the ellipsis (or the end) expanded into full slices: one item per
/// axis of `a`, plus the new axes.
pub fn expand_items(op: &str, items: &[Idx], a: &Array) -> Result<Vec<Idx>> {
    let consumed = items.iter().filter(|i| !matches!(i, Idx::NewAxis | Idx::Ellipsis)).count();
    let ellipses = items.iter().filter(|i| matches!(i, Idx::Ellipsis)).count();
    if ellipses > 1 {
        return Err(Error::invalid(op, "an index can only have a single ellipsis"));
    }
    if consumed > a.ndim() {
        return Err(Error::invalid(
            op,
            format!(
                "too many indices: array of shape {} has {} axes, but {consumed} were indexed",
                a.shape(),
                a.ndim()
            ),
        ));
    }
    let full = || Idx::Slice { start: None, stop: None, step: 1 };
    let mut expanded: Vec<Idx> = Vec::with_capacity(items.len() + a.ndim());
    for item in items {
        match item {
            Idx::Ellipsis => expanded.extend((0..a.ndim() - consumed).map(|_| full())),
            other => expanded.push(other.clone()),
        }
    }
    if ellipses == 0 {
        expanded.extend((0..a.ndim() - consumed).map(|_| full()));
    }
    Ok(expanded)
}

/// `items` with each boolean mask replaced by the index arrays of its nonzero positions (numpy's
/// rule), after checking that the mask's shape is that of the axes it indexes.
pub fn expand_masks(op: &str, items: &[Idx], a: &Array) -> Result<Vec<Idx>> {
    let is_mask = |i: &Idx| matches!(i, Idx::Array(m) if m.dtype() == DType::Bool);
    if !items.iter().any(is_mask) {
        return Ok(items.to_vec());
    }
    let consumed: usize = items
        .iter()
        .map(|i| match i {
            Idx::NewAxis | Idx::Ellipsis => 0,
            Idx::Array(m) if m.dtype() == DType::Bool => m.ndim(),
            _ => 1,
        })
        .sum();
    if consumed > a.ndim() {
        return Err(Error::invalid(
            op,
            format!(
                "too many indices: array of shape {} has {} axes, but {consumed} were indexed (a mask indexes as many \
                 axes as it has)",
                a.shape(),
                a.ndim()
            ),
        ));
    }
    let mut expanded = Vec::with_capacity(items.len() + 1);
    let mut mask_positions = Vec::new();
    let mut masks = Vec::new();
    let mut axis = 0;
    for item in items {
        match item {
            Idx::Ellipsis => {
                axis += a.ndim().saturating_sub(consumed);
                expanded.push(Idx::Ellipsis);
            }
            Idx::NewAxis => expanded.push(Idx::NewAxis),
            Idx::Array(mask) if mask.dtype() == DType::Bool => {
                // numpy lets a mask axis of length 0 index an axis of any length (its positions
                // are empty either way); every other length must be the axis's.
                let indexed = a.shape().dims().get(axis..axis + mask.ndim());
                let matches = indexed.is_some_and(|dims| {
                    dims.iter().zip(mask.shape().dims()).all(|(d, m)| d == m || m.as_int() == Some(0))
                });
                if !matches {
                    return Err(Error::ShapeMismatch {
                        op: op.into(),
                        expected: format!(
                            "a boolean mask matching axes {axis}..{} of an array of shape {}",
                            axis + mask.ndim(),
                            a.shape()
                        ),
                        got: mask.shape().clone(),
                    });
                }
                let positions = nonzero_positions(op, mask)?;
                masks.push(mask.clone());
                for k in 0..mask.ndim() {
                    mask_positions.push(expanded.len());
                    expanded.push(Idx::Array(positions.index([Idx::Int(k as i64), Idx::full()])?));
                }
                axis += mask.ndim();
            }
            other => {
                expanded.push(other.clone());
                axis += 1;
            }
        }
    }
    fit_counts(op, &mut expanded, &mask_positions, &masks)?;
    Ok(expanded)
}

/// Makes the positions of masks (`expanded[k]` for `k` in `positions`, each of a length the data
/// decides; `masks` are the masks themselves) broadcast with the other index arrays as numpy
/// broadcasts them when it runs: a count equal to the other arrays' last length, or 1. Shapes
/// are decided when the DAG is built, so the positions take that length (read at 0 where the
/// count is 1) and the count is checked when the sizes are known ([`broadcast_when_run`]).
/// Without other index arrays (or with a last length of 1), the masks' counts broadcast among
/// themselves: to their common count, which the data decides ([`broadcast_counts`]).
fn fit_counts(op: &str, expanded: &mut [Idx], positions: &[usize], masks: &[Array]) -> Result<()> {
    let others: Vec<Shape> = expanded
        .iter()
        .enumerate()
        .filter(|(k, _)| !positions.contains(k))
        .filter_map(|(_, item)| match item {
            Idx::Array(a) => Some(a.shape().clone()),
            _ => None,
        })
        .collect();
    let mask_positions = |expanded: &[Idx], k: usize| match &expanded[k] {
        Idx::Array(p) => p.clone(),
        _ => unreachable!("mask positions"),
    };
    let counts: Vec<Dim> = positions.iter().map(|&k| mask_positions(expanded, k).shape()[0].clone()).collect();
    let Some(first_count) = counts.first() else { return Ok(()) };
    let shape = broadcast_shapes(op, &others.iter().collect::<Vec<_>>())?;
    if let Some(len) = shape.dims().last().filter(|len| len.as_int() != Some(1)) {
        let target = Shape::from(vec![len.clone()]);
        for &k in positions {
            let fitted = broadcast_when_run(op, &mask_positions(expanded, k), &target)?;
            // A count is the data's, never known now: it always fits, if only when the program runs.
            expanded[k] = Idx::Array(fitted.expect("a mask's count fits when the program runs"));
        }
        return Ok(());
    }
    if counts.iter().all(|c| c == first_count) {
        return Ok(());
    }
    // No other index arrays, 0-d ones or a last length of 1, and masks of different counts.
    let Some(common) = broadcast_counts(op, masks)? else {
        // The masks' sizes bound no length: they fit the first count, as the positions of one.
        let target = Shape::from(vec![first_count.clone()]);
        for &k in positions {
            let fitted = broadcast_when_run(op, &mask_positions(expanded, k), &target)?;
            expanded[k] = Idx::Array(fitted.expect("a mask's count fits when the program runs"));
        }
        return Ok(());
    };
    for &k in positions {
        expanded[k] = Idx::Array(read_at_common_positions(op, &mask_positions(expanded, k), &common)?);
    }
    Ok(())
}

/// The positions `0, 1, …, t - 1`, where `t` is the length that the counts of `masks` broadcast to
/// (numpy's rule for any lengths: the count that is not 1, else 1; counts that do not fit are
/// checked when the program runs, see [`read_at_common_positions`]). A count is the data's, so
/// `t` is one too: the count of the mask `arange(L) < t`, where `L`, the masks' sizes summed,
/// bounds every count. `None` where a mask's size is no length (two size parameters multiplied).
fn broadcast_counts(op: &str, masks: &[Array]) -> Result<Option<Array>> {
    let mut bound = Dim::new(0);
    for mask in masks {
        let size = mask.shape().dims().iter().try_fold(Dim::new(1), |size, d| size.mul(d));
        match size.and_then(|size| bound.add(&size)) {
            Ok(sum) => bound = sum,
            Err(_) => return Ok(None),
        }
    }
    let mut counts = Vec::with_capacity(masks.len());
    for mask in masks {
        counts.push(count_of(mask)?);
    }
    let mut builder = LambdaBuilder::new(Shape::from(vec![bound]));
    let mut common = builder.read_at(&counts[0], Vec::new());
    for count in &counts[1..] {
        let count = builder.read_at(count, Vec::new());
        let is_one = common.clone().compare(CompareOp::Eq, Expr::i64(1));
        common = Expr::if_then_else(is_one, count, common);
    }
    let below = builder.finish(Expr::iname(0).compare(CompareOp::Lt, common))?;
    nonzero_positions(op, &below)?.index([Idx::Int(0), Idx::full()]).map(Some)
}

/// The number of `true` elements of a boolean `mask`, as a 0-d `int64` array.
fn count_of(mask: &Array) -> Result<Array> {
    let mut builder = LambdaBuilder::new(Shape::scalar());
    let mut bounds = Vec::with_capacity(mask.ndim());
    let mut at = Vec::with_capacity(mask.ndim());
    for len in mask.shape().dims() {
        let iname = builder.reduction_iname();
        bounds.push(ReductionBounds { iname: iname.clone(), lower: Dim::new(0), upper: len.clone() });
        at.push(Expr::Var(iname));
    }
    let read = builder.read_at(mask, at).cast(DType::I64);
    builder.finish(Expr::reduce(ReduceOp::Sum, bounds, read))
}

/// The positions `p` of a mask read at `common`, the positions `0..t` of the count the masks
/// broadcast to ([`broadcast_counts`]): `p[j]`, or `p[0]` where `p` has one element. Reading
/// `common` (rather than the output index, which equals it) links the count `t` to the program,
/// which binds it when its mask's positions are known. The count of `p` must be `t` or 1.
fn read_at_common_positions(op: &str, p: &Array, common: &Array) -> Result<Array> {
    let (length, to) = (p.shape()[0].clone(), common.shape()[0].clone());
    let mut builder = LambdaBuilder::new(common.shape().clone());
    let one = builder.dim(&length)?.compare(CompareOp::Eq, Expr::i64(1));
    let j = builder.read_at(common, vec![Expr::iname(0)]);
    let read = builder.read_at(p, vec![Expr::if_then_else(one, Expr::i64(0), j)]);
    builder.finish(read)?.with_size_checks(vec![SizeCheck::Broadcast { op: op.into(), length, to }])
}

/// Boolean scalars (`x[True]`, and 0-d masks) as masks over new axes of length 1 (numpy's rule):
/// `a` with those axes inserted, the items that index it, and the positions of the new axes in
/// it (so that an assignment can drop them again). A single boolean scalar among no index
/// arrays is a slice of its axis (`0:1` or `0:0`); otherwise a literal is the index array `[0]`
/// (or an empty one) and a 0-d mask the 1-d mask over its axis, so they broadcast with the rest.
pub fn booleans_as_axes(a: &Array, items: &[Idx]) -> Result<(Array, Vec<Idx>, Vec<usize>)> {
    let is_scalar_mask = |i: &Idx| match i {
        Idx::Bool(_) => true,
        Idx::Array(m) => m.dtype() == DType::Bool && m.ndim() == 0,
        _ => false,
    };
    if !items.iter().any(is_scalar_mask) {
        return Ok((a.clone(), items.to_vec(), Vec::new()));
    }
    let advanced = items.iter().filter(|i| matches!(i, Idx::Array(_) | Idx::Bool(_))).count();
    let consumed: usize = items
        .iter()
        .map(|i| match i {
            Idx::NewAxis | Idx::Ellipsis | Idx::Bool(_) => 0,
            Idx::Array(m) if m.dtype() == DType::Bool => m.ndim(),
            _ => 1,
        })
        .sum();
    let mut new_axes = Vec::new();
    let mut replaced = Vec::with_capacity(items.len());
    let mut axis = 0; // axes of `a` (with the new ones) indexed so far
    for item in items {
        match item {
            Idx::Ellipsis => axis += a.ndim().saturating_sub(consumed),
            Idx::NewAxis => {}
            Idx::Array(m) if m.dtype() == DType::Bool && m.ndim() > 0 => axis += m.ndim(),
            i if !is_scalar_mask(i) => axis += 1,
            _ => {}
        }
        if !is_scalar_mask(item) {
            replaced.push(item.clone());
            continue;
        }
        new_axes.push(axis);
        replaced.push(match item {
            Idx::Bool(b) if advanced == 1 => Idx::Slice { start: Some(0), stop: Some(i64::from(*b)), step: 1 },
            Idx::Bool(b) => Idx::Array(crate::basic::zeros([i64::from(*b)], DType::I64)?),
            Idx::Array(m) => Idx::Array(crate::basic::reshape(m, Shape::from(vec![Dim::new(1)]), Order::C)?),
            _ => unreachable!("a boolean scalar"),
        });
        axis += 1;
    }
    Ok((insert_unit_axes(a, &new_axes)?, replaced, new_axes))
}

fn index_impl(a: &Array, items: &[Idx]) -> Result<Array> {
    let op = "index";
    let (a, items, _) = booleans_as_axes(a, items)?;
    let a = &a;
    let shape = a.shape();
    let items = expand_masks(op, &items, a)?;
    let expanded = expand_items(op, &items, a)?;

    let has_arrays = expanded.iter().any(|i| matches!(i, Idx::Array(_)));
    let mut node_items: Vec<IndexItem> = Vec::with_capacity(a.ndim());
    let mut slots: Vec<Slot> = Vec::new();
    for item in &expanded {
        let axis = node_items.len();
        match item {
            Idx::NewAxis => slots.push(Slot::New),
            Idx::Int(i) => {
                node_items.push(IndexItem::Int(normalize_int(op, *i, axis, a)?));
                if has_arrays {
                    slots.push(Slot::Advanced);
                }
            }
            Idx::Slice { start, stop, step } => {
                node_items.push(IndexItem::Slice(normalize_slice(op, *start, *stop, *step, axis, a)?));
                slots.push(Slot::Slice);
            }
            Idx::Array(idx) => {
                check_index_array(op, idx, axis, a)?;
                node_items.push(IndexItem::Array(idx.clone()));
                slots.push(Slot::Advanced);
            }
            Idx::Ellipsis | Idx::Bool(_) => unreachable!("expanded above"),
        }
    }

    let is_full_slice = |it: &IndexItem, len: &Dim| matches!(it, IndexItem::Slice(s) if s.step == 1 && s.start == Dim::new(0) && s.stop == *len);
    let untouched = node_items.iter().zip(shape.dims()).all(|(it, len)| is_full_slice(it, len));
    let adjacent = |flags: &[bool]| {
        let pos: Vec<usize> = flags.iter().enumerate().filter(|(_, f)| **f).map(|(p, _)| p).collect();
        pos.windows(2).all(|w| w[1] == w[0] + 1)
    };
    // numpy counts an Ellipsis between index arrays (integers among them) as separating them,
    // even where it stands for no axes: `x[:, 0, ..., [1, 2]]` of a 3-d `x` puts the broadcast
    // axis first.
    let is_advanced = |i: &Idx| matches!(i, Idx::Array(_) | Idx::Int(_));
    let ellipsis_separates = has_arrays
        && items
            .iter()
            .position(|i| matches!(i, Idx::Ellipsis))
            .is_some_and(|e| items[..e].iter().any(is_advanced) && items[e + 1..].iter().any(is_advanced));
    let slots_adjacent =
        !ellipsis_separates && adjacent(&slots.iter().map(|s| *s == Slot::Advanced).collect::<Vec<_>>());
    let items_adjacent = adjacent(&node_items.iter().map(|i| !matches!(i, IndexItem::Slice(_))).collect::<Vec<_>>());

    let mut result = if !has_arrays {
        if untouched { a.clone() } else { Array::new_basic_index(a, node_items)? }
    } else if items_adjacent {
        let r = Array::new_advanced_index_contiguous(a, node_items)?;
        if slots_adjacent {
            r
        } else {
            // Only a new axis or an empty Ellipsis separates the index arrays: numpy then puts
            // the broadcast axes first.
            let first = slots.iter().filter(|s| **s != Slot::New).position(|s| *s == Slot::Advanced).expect("advanced");
            let nb = r.ndim() - slots.iter().filter(|s| **s == Slot::Slice).count();
            let mut perm: Vec<usize> = (first..first + nb).collect();
            perm.extend((0..r.ndim()).filter(|p| !(first..first + nb).contains(p)));
            Array::new_axis_permutation(&r, perm)?
        }
    } else {
        Array::new_advanced_index_noncontiguous(a, node_items)?
    };

    // Output positions of the new axes, in numpy's output order.
    let nb = result.ndim() - slots.iter().filter(|s| **s == Slot::Slice).count();
    let mut out_slots: Vec<Slot> = Vec::new();
    let advanced_first = has_arrays && !slots_adjacent;
    if advanced_first {
        out_slots.extend(std::iter::repeat_n(Slot::Advanced, nb));
    }
    let mut placed = advanced_first;
    for s in &slots {
        match s {
            Slot::Advanced if !placed => {
                out_slots.extend(std::iter::repeat_n(Slot::Advanced, nb));
                placed = true;
            }
            Slot::Advanced => {}
            other => out_slots.push(*other),
        }
    }
    let new_positions: Vec<usize> =
        out_slots.iter().enumerate().filter(|(_, s)| **s == Slot::New).map(|(p, _)| p).collect();
    result = insert_unit_axes(&result, &new_positions)?;
    Ok(result)
}

impl Array {
    /// `self[items]`; see [`index`].
    #[track_caller]
    pub fn index(&self, items: impl AsRef<[Idx]>) -> Result<Array> {
        let _site = crate::created_at::enter();
        index(self, items.as_ref())
    }
}

/// An index array into `axis` of `a` must hold integers; into an axis of length 0 it must be
/// empty, which is decided now where its shape is known (numpy's `IndexError`: every index into
/// such an axis is out of bounds), and when the program runs otherwise.
fn check_index_array(op: &str, idx: &Array, axis: usize, a: &Array) -> Result<()> {
    if !idx.dtype().is_integer() {
        return Err(Error::unsupported_dtype(
            op,
            idx.dtype(),
            format!("index arrays of an array of shape {} must be integers or boolean masks", a.shape()),
        ));
    }
    let elements = idx.shape().dims().iter().try_fold(1i64, |n, d| d.as_int().map(|d| n.saturating_mul(d)));
    if a.shape()[axis].as_int() == Some(0) && elements.is_some_and(|n| n > 0) {
        return Err(Error::invalid(
            op,
            format!(
                "an index array of shape {} into axis {axis} of length 0 (array of shape {}): every index is out of \
                 bounds",
                idx.shape(),
                a.shape()
            ),
        ));
    }
    Ok(())
}

/// The integer index `i` into `axis` of `a` as a position (negative counts from the end),
/// checked against constant lengths now and symbolic ones when the program runs.
pub fn normalize_int(op: &str, i: i64, axis: usize, a: &Array) -> Result<Dim> {
    let len = &a.shape()[axis];
    let out_of_range =
        || Error::IndexOutOfRange { op: op.into(), index: i, axis, length: len.to_string(), shape: a.shape().clone() };
    // A length is at most `i64::MAX`: the ends of `i64` are outside every axis (and their
    // position arithmetic would overflow).
    if i == i64::MIN || i == i64::MAX {
        return Err(out_of_range());
    }
    let d = if i < 0 { len.add(&Dim::new(i))? } else { Dim::new(i) };
    if let Some(n) = len.as_int()
        && !(-n..n).contains(&i)
    {
        return Err(out_of_range());
    }
    if d.is_provably_negative() || len.sub(&d)?.sub(&Dim::new(1))?.is_provably_negative() {
        return Err(out_of_range());
    }
    Ok(d)
}

/// numpy's slice normalization (`PySlice_AdjustIndices`) for concrete lengths; for symbolic ones
/// negative bounds count from the end and the bounds are assumed to lie within the axis (checked
/// when the program runs), but for bounds at the ends of `i64`, beyond every length, which clamp.
pub fn normalize_slice(
    op: &str,
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    axis: usize,
    a: &Array,
) -> Result<NormalizedSlice> {
    if step == 0 {
        return Err(Error::invalid(op, format!("slice step cannot be zero (axis {axis} of shape {})", a.shape())));
    }
    let len = &a.shape()[axis];
    let (start, stop) = match len.as_int() {
        Some(n) => {
            let adjust = |v: Option<i64>, default: i64| -> i64 {
                match v {
                    None => default,
                    Some(v) => {
                        let v = if v < 0 { v.saturating_add(n) } else { v };
                        if step > 0 { v.clamp(0, n) } else { v.clamp(-1, n - 1) }
                    }
                }
            };
            let (ds, de) = if step > 0 { (0, n) } else { (n - 1, -1) };
            (Dim::new(adjust(start, ds)), Dim::new(adjust(stop, de)))
        }
        None => {
            // A length is at most `i64::MAX`, so the bounds at the ends of `i64` (where Python's
            // slices beyond them are clamped too) lie beyond every length and clamp as numpy
            // clamps them, whatever the length turns out to be.
            let (low, high) =
                if step > 0 { (Dim::new(0), len.clone()) } else { (Dim::new(-1), len.sub(&Dim::new(1))?) };
            let beyond_low = if step > 0 { i64::MIN + 1 } else { i64::MIN };
            let bound = |v: Option<i64>, default: Dim| -> Result<Dim> {
                match v {
                    None => Ok(default),
                    Some(i64::MAX) => Ok(high.clone()),
                    Some(v) if v <= beyond_low => Ok(low.clone()),
                    Some(v) if v < 0 => len.add(&Dim::new(v)),
                    Some(v) => Ok(Dim::new(v)),
                }
            };
            if step > 0 {
                (bound(start, Dim::new(0))?, bound(stop, len.clone())?)
            } else {
                (bound(start, len.sub(&Dim::new(1))?)?, bound(stop, Dim::new(-1))?)
            }
        }
    };
    let slice = NormalizedSlice { start, stop, step };
    // An empty concrete slice is stored in one normal form, whatever its bounds; so is one of a
    // single element (its step, up to `-2**63`, never enters index arithmetic).
    match slice.length(op)?.as_int() {
        Some(0) => Ok(NormalizedSlice { start: Dim::new(0), stop: Dim::new(0), step: 1 }),
        Some(1) => Ok(NormalizedSlice { stop: slice.start.add(&Dim::new(1))?, start: slice.start, step: 1 }),
        _ => Ok(slice),
    }
}

/// The elements of `a` at `indices` along `axis` (numpy `take`; the flattened `a` when `axis` is
/// `None`): `a[:, ..., indices, ...]`, so the result has `indices`'s axes in place of `axis`.
/// Negative indices count from the end; others out of range are [`Error::IndexOutOfBounds`] when
/// the program runs. numpy checks the indices once per element of the axes before `axis`, so
/// where one of those has length 0 (known when the DAG is built) nothing is checked and the
/// result is empty, as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 5], DType::F64).unwrap();
/// let i = pt::placeholder("i", [2, 3], DType::I64).unwrap();
/// assert_eq!(pt::take(&a, &i, Some(1)).unwrap().shape().to_string(), "(4, 2, 3)");
/// assert_eq!(pt::take(&a, &i, None).unwrap().shape().to_string(), "(2, 3)");
/// ```
#[track_caller]
pub fn take(a: &Array, indices: &Array, axis: Option<i64>) -> Result<Array> {
    let _site = crate::created_at::enter();
    let (a, axis) = match axis {
        Some(axis) => (a.clone(), crate::basic::normalize_axis("take", axis, a.ndim(), a.shape())?),
        None => (crate::basic::ravel(a)?, 0),
    };
    if a.ndim() == 0 {
        return Err(Error::invalid("take", "cannot take from a zero-dimensional array along an axis"));
    }
    // numpy converts take's indices to intp, which a bool array casts to safely: positions 0
    // and 1, never a mask (take_along_axis refuses them).
    let indices = if indices.dtype() == DType::Bool { &crate::arith::astype(indices, DType::I64)? } else { indices };
    check_integer_indices("take", indices)?;
    let dims = a.shape().dims();
    if dims[..axis].iter().any(|d| d.as_int() == Some(0)) {
        return empty_take(&a, indices, axis);
    }
    let mut items = vec![Idx::full(); axis];
    items.push(Idx::Array(indices.clone()));
    index(&a, &items)
}

/// `take(a, indices, axis)` where an axis before `axis` has length 0: an empty array of the
/// result's shape whose (never evaluated) elements read `a` and `indices` through `zero(…)`, so
/// both stay inputs of the program.
fn empty_take(a: &Array, indices: &Array, axis: usize) -> Result<Array> {
    let dims = a.shape().dims();
    let shape: Vec<Dim> = dims[..axis].iter().chain(indices.shape().dims()).chain(&dims[axis + 1..]).cloned().collect();
    let taken = indices.ndim();
    let mut builder = LambdaBuilder::new(shape.into());
    let at_a = (0..axis)
        .map(Expr::iname)
        .chain([Expr::i64(0)])
        .chain((axis + taken..).take(a.ndim() - axis - 1).map(Expr::iname));
    let a_zero = Expr::call(Func::Zero, vec![builder.read_at(a, at_a.collect())]);
    let index_zero =
        Expr::call(Func::Zero, vec![builder.read_at(indices, (axis..axis + taken).map(Expr::iname).collect())]);
    let op = if a.dtype() == DType::Bool { BinaryOp::BitOr } else { BinaryOp::Add };
    builder.finish(a_zero.binary(op, index_zero.cast(a.dtype())))
}

/// The elements of `a` at `indices` along `axis`, matched by position along the other axes (numpy
/// `take_along_axis`): `out[i, j, k] = a[i, indices[i, j, k], k]` for `axis = 1`. `indices` has
/// as many axes as `a`; the other axes broadcast.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 5], DType::F64).unwrap();
/// let i = pt::placeholder("i", [4, 2], DType::I64).unwrap();
/// assert_eq!(pt::take_along_axis(&a, &i, 1).unwrap().shape().to_string(), "(4, 2)");
/// ```
#[track_caller]
pub fn take_along_axis(a: &Array, indices: &Array, axis: i64) -> Result<Array> {
    let _site = crate::created_at::enter();
    let op = "take_along_axis";
    let axis = crate::basic::normalize_axis(op, axis, a.ndim(), a.shape())?;
    check_integer_indices(op, indices)?;
    if indices.ndim() != a.ndim() {
        return Err(Error::invalid(
            op,
            format!("indices of shape {} need as many axes as the array of shape {}", indices.shape(), a.shape()),
        ));
    }
    // Along every other axis k, the positions 0..n_k as an index array that varies along k only.
    let mut items = Vec::with_capacity(a.ndim());
    for (k, len) in a.shape().dims().iter().enumerate() {
        if k == axis {
            items.push(Idx::Array(indices.clone()));
            continue;
        }
        let mut dims = vec![Dim::new(1); a.ndim()];
        dims[k] = len.clone();
        let positions = crate::operand::LambdaBuilder::new(dims.into()).finish(crate::expr::Expr::iname(k))?;
        items.push(Idx::Array(positions));
    }
    index(a, &items)
}

fn check_integer_indices(op: &str, indices: &Array) -> Result<()> {
    if indices.dtype().is_integer() {
        Ok(())
    } else {
        Err(Error::unsupported_dtype(
            op,
            indices.dtype(),
            format!("indices of shape {} must be integers", indices.shape()),
        ))
    }
}
