//! Sorting: `sort`, `argsort` (the Array API's and numpy's), and the set functions built on them,
//! `unique_values`, `unique_counts`, `unique_inverse`, `unique_all`.
//!
//! A sort is a [`NodeKind::Sort`](pytato_core::NodeKind::Sort) node, a host step (see `pytato_runtime::phases`
//! and `pytato_runtime::sort` for the order: stable, NaN last, numpy's complex order). The set functions
//! sort once (an `argsort` of the flattened array), mark the first element of each run of equal
//! values, and select those: their length is a *count* the data decides, as `nonzero`'s is (see
//! [`selection`](super::selection)). NaNs are all distinct, as in numpy 2 and the Array API; `-0.0`
//! and `0.0` are one value (the first of them in the array is the one kept).
//!
//! ```
//! use pytato_core::DType;
//! use pytato_frontend as pt;
//! let x = pt::placeholder("x", [4, 5], DType::F64).unwrap();
//! let sorted = pt::sort(&x, pt::SortOptions::axis(0).descending(true)).unwrap();
//! assert_eq!(sorted.shape(), x.shape());
//! let u = pt::unique_counts(&x).unwrap();
//! assert_eq!(u.values.shape(), u.counts.shape()); // (count,): a length the data decides
//! ```

use pytato_core::array::{Array, ScatterMode, SortResult};
use pytato_core::dtype::DType;
use pytato_core::error::{Error, Result};
use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, UnaryOp};
use pytato_core::scalar::Scalar;
use pytato_core::shape::Shape;

use super::scans::{ScanOptions, cumulative_sum};
use super::selection::nonzero_positions;
use super::shape_ops::{normalize_axis, ravel, reshape};
use pytato_core::indexing::{Idx, take};
use pytato_core::operand::LambdaBuilder;

/// Options of [`sort`] and [`argsort`]: the Array API's keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortOptions {
    /// The axis sorted along (negative counts from the end); `None` sorts the flattened array
    /// (numpy's `axis=None`). By default the last axis.
    pub axis: Option<i64>,
    /// Largest first. Equal elements keep their order (the sort stays stable) and NaNs come first.
    pub descending: bool,
}

impl Default for SortOptions {
    fn default() -> SortOptions {
        SortOptions { axis: Some(-1), descending: false }
    }
}

impl SortOptions {
    /// Sort along `axis`.
    pub fn axis(axis: i64) -> SortOptions {
        SortOptions { axis: Some(axis), ..SortOptions::default() }
    }

    /// Sort the flattened array (numpy's `axis=None`).
    pub fn flattened() -> SortOptions {
        SortOptions { axis: None, ..SortOptions::default() }
    }

    /// Largest first.
    pub fn descending(mut self, descending: bool) -> SortOptions {
        self.descending = descending;
        self
    }
}

/// `a` sorted along an axis (the Array API's `sort`, numpy's `sort` with `stable=True`): stable,
/// NaN after every number (before, when descending), complex numbers in numpy's lexicographic
/// order. Every dtype; the result has `a`'s shape and dtype.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::I32).unwrap();
/// assert_eq!(pt::sort(&a, pt::SortOptions::default()).unwrap().shape().to_string(), "(3, 4)");
/// assert_eq!(pt::sort(&a, pt::SortOptions::flattened()).unwrap().shape().to_string(), "(12,)");
/// ```
#[track_caller]
pub fn sort(a: &Array, options: SortOptions) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    sorted("sort", a, options, SortResult::Values)
}

/// The `int64` indices along an axis that sort `a` (the Array API's `argsort`, numpy's `argsort`
/// with `stable=True`); see [`sort`] for the order. Of equal elements, the first comes first,
/// also when descending.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [5], DType::F64).unwrap();
/// let order = pt::argsort(&a, pt::SortOptions::default().descending(true)).unwrap();
/// assert_eq!(order.dtype(), DType::I64);
/// ```
#[track_caller]
pub fn argsort(a: &Array, options: SortOptions) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    sorted("argsort", a, options, SortResult::Indices)
}

fn sorted(op: &str, a: &Array, options: SortOptions, result: SortResult) -> Result<Array> {
    let (a, axis) = match options.axis {
        None => (ravel(a).map_err(|e| e.renamed("reshape", op))?, 0),
        Some(axis) => (a.clone(), normalize_axis(op, axis, a.ndim(), a.shape())?),
    };
    Array::new_sort(&a, axis, options.descending, result).map_err(|e| e.renamed("Sort", op))
}

/// The result of [`unique_counts`].
#[derive(Clone, Debug)]
pub struct UniqueCounts {
    /// The distinct values, sorted (1-d, of the input's dtype).
    pub values: Array,
    /// How often each occurs (`int64`).
    pub counts: Array,
}

/// The result of [`unique_inverse`].
#[derive(Clone, Debug)]
pub struct UniqueInverse {
    /// The distinct values, sorted (1-d).
    pub values: Array,
    /// For each element of the input (the input's shape), the index of its value in `values`.
    pub inverse_indices: Array,
}

/// The result of [`unique_all`].
#[derive(Clone, Debug)]
pub struct UniqueAll {
    /// The distinct values, sorted (1-d).
    pub values: Array,
    /// The flat index in the input of each value's first occurrence (`int64`).
    pub indices: Array,
    /// For each element of the input (the input's shape), the index of its value in `values`.
    pub inverse_indices: Array,
    /// How often each value occurs (`int64`).
    pub counts: Array,
}

/// The pieces every set function shares: the sorted flattened array, the order that sorts it
/// and the positions in it where a run of equal values starts.
struct Runs {
    /// The input flattened.
    flat: Array,
    /// `argsort(flat)`, stable.
    order: Array,
    /// `flat[order]`.
    sorted: Array,
    /// Positions in `sorted` where a new value starts (`int64`, length: a count).
    starts: Array,
    /// `true` at those positions.
    is_start: Array,
}

impl Runs {
    /// The runs of `x`'s values; NaNs are all distinct unless `equal_nan`, which makes every value
    /// with a NaN (in either part, for complex numbers) one value, as numpy's `unique` does.
    fn of(op: &str, x: &Array, equal_nan: bool) -> Result<Runs> {
        let flat = ravel(x).map_err(|e| e.renamed("reshape", op))?;
        let order = Array::new_sort(&flat, 0, false, SortResult::Indices)?;
        let sorted = take(&flat, &order, None)?;
        // is_start[i] = i == 0 || sorted[i] != sorted[i - 1]: NaN != NaN, so NaNs are distinct.
        // The sort puts every value with a NaN last, so with `equal_nan` they are one run, whose
        // first value (in the sort's order) stands for it, as in numpy.
        let mut builder = LambdaBuilder::new(sorted.shape().clone());
        let here = builder.read_broadcast(&sorted);
        let previous = builder.read_at(&sorted, vec![Expr::iname(0).binary(BinaryOp::Sub, Expr::i64(1))]);
        let has_previous = Expr::iname(0).compare(CompareOp::Ge, Expr::i64(1));
        let mut differs = here.clone().compare(CompareOp::Ne, previous.clone());
        if equal_nan && x.dtype().is_inexact() {
            let both_nan = Expr::call(Func::IsNan, vec![here])
                .binary(BinaryOp::LogicalAnd, Expr::call(Func::IsNan, vec![previous]));
            differs = differs.binary(BinaryOp::LogicalAnd, both_nan.unary(UnaryOp::LogicalNot));
        }
        let is_start = builder.finish(Expr::if_then_else(has_previous, differs, Expr::Const(Scalar::Bool(true))))?;
        let starts = nonzero_positions(op, &is_start)?.index([Idx::Int(0), Idx::full()])?;
        Ok(Runs { flat, order, sorted, starts, is_start })
    }

    fn values(&self) -> Result<Array> {
        take(&self.sorted, &self.starts, None)
    }

    /// `starts[j + 1] - starts[j]`, the last run ending at the array's end.
    fn counts(&self) -> Result<Array> {
        let mut builder = LambdaBuilder::new(self.starts.shape().clone());
        let runs = builder.dim(&self.starts.shape()[0])?;
        let length = builder.dim(&self.flat.shape()[0])?;
        let start = builder.read_broadcast(&self.starts);
        let next = Expr::iname(0).binary(BinaryOp::Add, Expr::i64(1));
        let next_start = builder.read_at(&self.starts, vec![next.clone()]);
        let end = Expr::if_then_else(next.compare(CompareOp::Lt, runs), next_start, length);
        builder.finish(end.binary(BinaryOp::Sub, start))
    }

    /// For each input element, the index of its run, in the input's shape.
    fn inverse(&self, op: &str, shape: &Shape) -> Result<Array> {
        // The run of sorted[i] is the number of starts up to i, less one; element order[i] of
        // the input is sorted[i].
        let running = cumulative_sum(&self.is_start, ScanOptions::axis(0))
            .map_err(|e| Error::invalid(op, format!("the inverse indices need a running count over the input: {e}")))?;
        let run = super::elementwise::subtract(&running, 1)?;
        let zeros = super::creation::zeros(self.flat.shape().clone(), DType::I64)?;
        let inverse = Array::new_scatter(&zeros, &self.order, &run, ScatterMode::Set)?;
        reshape(&inverse, shape.clone(), pytato_core::array::Order::C)
    }
}

/// The distinct values of `x` (flattened), sorted: the Array API's `unique_values`. Its length is
/// a count the data decides. NaNs are all distinct.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [2, 3], DType::I8).unwrap();
/// let u = pt::unique_values(&x).unwrap();
/// assert_eq!((u.ndim(), u.dtype()), (1, DType::I8));
/// ```
#[track_caller]
pub fn unique_values(x: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    Runs::of("unique_values", x, false)?.values()
}

/// The distinct values of `x` and how often each occurs: the Array API's `unique_counts`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [6], DType::F32).unwrap();
/// let u = pt::unique_counts(&x).unwrap();
/// assert_eq!(u.counts.dtype(), DType::I64);
/// ```
#[track_caller]
pub fn unique_counts(x: &Array) -> Result<UniqueCounts> {
    let _site = pytato_core::created_at::enter();
    let runs = Runs::of("unique_counts", x, false)?;
    Ok(UniqueCounts { values: runs.values()?, counts: runs.counts()? })
}

/// The distinct values of `x` and, for each element of `x`, the index of its value: the Array
/// API's `unique_inverse`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [2, 3], DType::I64).unwrap();
/// let u = pt::unique_inverse(&x).unwrap();
/// assert_eq!(u.inverse_indices.shape(), x.shape());
/// ```
#[track_caller]
pub fn unique_inverse(x: &Array) -> Result<UniqueInverse> {
    let _site = pytato_core::created_at::enter();
    let op = "unique_inverse";
    let runs = Runs::of(op, x, false)?;
    Ok(UniqueInverse { values: runs.values()?, inverse_indices: runs.inverse(op, x.shape())? })
}

/// Everything the set functions give: the Array API's `unique_all` (values, first indices,
/// inverse indices, counts).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [7], DType::U16).unwrap();
/// let u = pt::unique_all(&x).unwrap();
/// assert_eq!(u.indices.shape(), u.values.shape());
/// ```
#[track_caller]
pub fn unique_all(x: &Array) -> Result<UniqueAll> {
    let _site = pytato_core::created_at::enter();
    unique_parts("unique_all", x, false)
}

/// numpy's `unique` of the flattened `x` (its `axis=None`): the same parts as [`unique_all`],
/// with numpy's `equal_nan` (its default, `true`, makes all NaNs one value, standing for every
/// value with a NaN; the Array API's functions keep NaNs apart). Take the parts you need: what
/// no output depends on is not computed.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [2, 3], DType::F64).unwrap();
/// let u = pt::unique(&x, true).unwrap();
/// assert_eq!(u.inverse_indices.shape(), x.shape());
/// ```
#[track_caller]
pub fn unique(x: &Array, equal_nan: bool) -> Result<UniqueAll> {
    let _site = pytato_core::created_at::enter();
    unique_parts("unique", x, equal_nan)
}

/// numpy's `unique(x)` with its defaults (no `return_*`, NaNs merged): the sorted distinct
/// values of the flattened `x`, [`unique`]'s `values` with `equal_nan`, except which complex value
/// with a NaN part stands for them all. numpy finds these values with a hash table, which keeps
/// the first such value in `x`'s order; its sorting path (taken with `return_*`, as [`unique`]
/// computes) keeps the first in sorted order.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [2, 3], DType::C128).unwrap();
/// assert_eq!(pt::unique_values_equal_nan(&x).unwrap().ndim(), 1);
/// ```
#[track_caller]
pub fn unique_values_equal_nan(x: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "unique";
    let values = Runs::of(op, x, true)?.values()?;
    if !x.dtype().is_complex() {
        return Ok(values); // a real NaN is NaN whichever is kept
    }
    // The first element with a NaN part, of `x` with one NaN after its end (`x` may be empty).
    let flat = ravel(x).map_err(|e| e.renamed("reshape", op))?;
    let nan = pytato_core::basic::full([1], f64::NAN, x.dtype())?;
    let padded = super::shape_ops::concatenate(&[flat, nan], 0)?;
    let first = take(&padded, &super::reductions::argmax(&super::elementwise::isnan(&padded)?, None, false)?, None)?;
    super::elementwise::where_(&super::elementwise::isnan(&values)?, &first, &values)
}

fn unique_parts(op: &str, x: &Array, equal_nan: bool) -> Result<UniqueAll> {
    let runs = Runs::of(op, x, equal_nan)?;
    Ok(UniqueAll {
        values: runs.values()?,
        // The sort is stable: the first of a run is the value's first occurrence.
        indices: take(&runs.order, &runs.starts, None)?,
        inverse_indices: runs.inverse(op, x.shape())?,
        counts: runs.counts()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate as pt;

    #[test]
    fn sort_checks_its_axis_and_names_itself() {
        let a = pt::placeholder("a", [3, 4], DType::F64).unwrap();
        let err = pt::sort(&a, SortOptions::axis(2)).unwrap_err();
        assert!(matches!(err, Error::AxisOutOfRange { axis: 2, .. }), "{err}");
        assert!(err.to_string().starts_with("sort:"), "{err}");
        let scalar = pt::placeholder("s", Shape::scalar(), DType::F64).unwrap();
        assert!(pt::argsort(&scalar, SortOptions::default()).unwrap_err().to_string().starts_with("argsort:"));
        assert_eq!(pt::argsort(&scalar, SortOptions::flattened()).unwrap().shape().to_string(), "(1,)");
    }

    #[test]
    fn equal_sorts_are_one_node_and_differing_options_are_not() {
        let a = pt::placeholder("a", [5], DType::I16).unwrap();
        assert_eq!(pt::sort(&a, SortOptions::default()).unwrap(), pt::sort(&a, SortOptions::axis(0)).unwrap());
        assert_ne!(
            pt::sort(&a, SortOptions::default()).unwrap(),
            pt::sort(&a, SortOptions::default().descending(true)).unwrap()
        );
        assert_ne!(pt::sort(&a, SortOptions::default()).unwrap(), pt::argsort(&a, SortOptions::default()).unwrap());
    }

    #[test]
    fn inverse_indices_of_an_input_of_symbolic_size_have_its_shape() {
        let x = pt::placeholder("x", [pytato_core::Dim::param("n"), pytato_core::Dim::new(2)], DType::F64).unwrap();
        let u = pt::unique_all(&x).unwrap();
        assert_eq!(u.inverse_indices.shape(), x.shape());
        assert_eq!(u.values.shape(), u.counts.shape());
    }
}
