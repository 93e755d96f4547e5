//! Selections whose length the data decides: `nonzero`, `flatnonzero`, `argwhere`,
//! `count_nonzero`, `extract`, `compress`, and boolean masks as indices (`a.index(s![&mask])`).
//!
//! Each selection is counted by a *count*, a size variable that the program binds when it runs
//! (see `pytato_runtime::phases`). A count is named `_pt_shp` followed by the mask's structural hash, so
//! the same mask built twice has one count and selections by it have equal shapes; tag the mask
//! with [`CountNamed`](pytato_core::tags::CountNamed) to choose the name. Two different masks with one name are
//! [`Error::DuplicateName`] when the program is compiled.
//!
//! ```
//! use pytato_core::{s, DType};
//! use pytato_core::tags::CountNamed;
//! use pytato_frontend as pt;
//! let a = pt::placeholder("A", [4, 5], DType::F64).unwrap();
//! let mask = pt::greater(&a, 0.0).unwrap().tagged(CountNamed("mycount".into())).unwrap();
//! let positive = a.index(s![&mask]).unwrap();
//! assert_eq!(positive.shape().to_string(), "(mycount,)");
//! // Selections flow into everything else: a sum of an empty selection is 0.
//! assert_eq!(pt::sum(&positive, None).unwrap().shape().to_string(), "()");
//! ```

use pytato_core::array::Array;
use pytato_core::dtype::DType;
use pytato_core::error::{Error, Result};

use super::elementwise::{astype, not_equal};
use super::reductions::{ReduceOptions, sum};
use super::shape_ops::{ravel, reshape, transpose};
use pytato_core::indexing::Idx;
use pytato_core::operand::Operand;

// Constructors `pytato-core` holds (the operators and indexing use them), as this module's own.
pub(crate) use pytato_core::basic::nonzero_positions;

pub use pytato_core::names::COUNT_PREFIX;

/// The indices of the nonzero elements, one `int64` array of length `count` per axis (numpy
/// `nonzero`), in row-major order.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::I32).unwrap();
/// let [rows, cols] = <[_; 2]>::try_from(pt::nonzero(&a).unwrap()).unwrap();
/// assert_eq!(rows.shape(), cols.shape());
/// assert_eq!(rows.dtype(), DType::I64);
/// ```
#[track_caller]
pub fn nonzero(a: &Array) -> Result<Vec<Array>> {
    let _site = pytato_core::created_at::enter();
    let positions = nonzero_positions("nonzero", a)?;
    (0..a.ndim()).map(|axis| positions.index([Idx::Int(axis as i64), Idx::full()])).collect()
}

/// The indices of the nonzero elements of `a` flattened (numpy `flatnonzero`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::F64).unwrap();
/// assert_eq!(pt::flatnonzero(&a).unwrap().ndim(), 1);
/// ```
#[track_caller]
pub fn flatnonzero(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let flat = ravel(a).map_err(|e| e.renamed("reshape", "flatnonzero"))?;
    let positions = nonzero_positions("flatnonzero", &flat)?;
    positions.index([Idx::Int(0), Idx::full()])
}

/// The indices of the nonzero elements as rows, shape `(count, a.ndim)` (numpy `argwhere`); a 0-d
/// `a` gives shape `(count, 0)` as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::Bool).unwrap();
/// assert_eq!(pt::argwhere(&a).unwrap().shape().dims()[1], 2.into());
/// ```
#[track_caller]
pub fn argwhere(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.ndim() == 0 {
        let one = reshape(a, [1], pytato_core::array::Order::C)?;
        let rows = transpose(&nonzero_positions("argwhere", &one)?, None)?;
        return rows.index([Idx::full(), Idx::Slice { start: Some(0), stop: Some(0), step: 1 }]);
    }
    transpose(&nonzero_positions("argwhere", a)?, None)
}

/// The number of nonzero elements along the axes of `options` (numpy `count_nonzero`, with its
/// `keepdims`), as `int64`. An ordinary reduction: its value is data, not a length. `initial` and
/// `dtype` are refused, as numpy has neither.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::F64).unwrap();
/// assert_eq!(pt::count_nonzero(&a, 0).unwrap().shape().to_string(), "(4,)");
/// assert_eq!(pt::count_nonzero(&a, None).unwrap().dtype(), DType::I64);
/// let kept = pt::count_nonzero(&a, pt::ReduceOptions::axes(1).keepdims(true)).unwrap();
/// assert_eq!(kept.shape().to_string(), "(3, 1)");
/// ```
#[track_caller]
pub fn count_nonzero(a: &Array, options: impl Into<ReduceOptions>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let options = options.into();
    if options.initial.is_some() || options.dtype.is_some() {
        return Err(Error::invalid("count_nonzero", "`initial` and `dtype` are not accepted"));
    }
    let nonzero = if a.dtype() == DType::Bool { a.clone() } else { not_equal(a, 0)? };
    let counts = sum(&nonzero, options).map_err(|e| e.renamed("sum", "count_nonzero"))?;
    astype(&counts, DType::I64)
}

/// The elements of `arr` (flattened) where `condition` (flattened) is nonzero (numpy `extract`).
/// A nonzero `condition` element beyond the end of `arr` is an index error when the program runs.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let arr = pt::placeholder("arr", [2, 3], DType::F64).unwrap();
/// assert_eq!(pt::extract(&pt::greater(&arr, 0.0).unwrap(), &arr).unwrap().ndim(), 1);
/// ```
#[track_caller]
pub fn extract(condition: &Array, arr: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let flat = ravel(arr).map_err(|e| e.renamed("reshape", "extract"))?;
    flat.index([Idx::Array(flatnonzero(condition)?)])
}

/// The slices of `a` along `axis` where the 1-d `condition` is nonzero (numpy `compress`); with no
/// axis, `a` is flattened first. `condition` may be shorter than the axis; a nonzero element
/// beyond its end is an index error when the program runs.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::F64).unwrap();
/// let keep = pt::placeholder("keep", [4], DType::Bool).unwrap();
/// assert_eq!(pt::compress(&keep, &a, Some(1)).unwrap().shape().dims()[0], 3.into());
/// ```
#[track_caller]
pub fn compress(condition: &Array, a: &Array, axis: Option<i64>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "compress";
    if condition.ndim() != 1 {
        return Err(Error::invalid(op, format!("the condition must be 1-d, got shape {}", condition.shape())));
    }
    let (a, axis) = match axis {
        None => (ravel(a).map_err(|e| e.renamed("reshape", op))?, 0),
        Some(axis) => {
            let ndim = a.ndim() as i64;
            if !(-ndim..ndim).contains(&axis) {
                return Err(Error::AxisOutOfRange { op: op.into(), axis, shape: a.shape().clone() });
            }
            (a.clone(), axis.rem_euclid(ndim.max(1)) as usize)
        }
    };
    let positions = nonzero_positions(op, condition)?.index([Idx::Int(0), Idx::full()])?;
    let mut items: Vec<Idx> = (0..axis).map(|_| Idx::full()).collect();
    items.push(Idx::Array(positions));
    a.index(items)
}

pub use pytato_core::array::Side;

/// For each element `v` of `values`, the index at which inserting `v` into the sorted 1-d `sorted`
/// keeps it sorted (numpy `searchsorted`, the Array API's `searchsorted`), as `int64` of
/// `values`'s shape. NaN sorts after everything, as in numpy's sorts. `sorter`, if given, holds the
/// indices that sort `sorted` (`argsort`'s result). Real dtypes and bools.
///
/// A [`SearchSorted`](pytato_core::NodeKind::SearchSorted) node: a binary search per value on the
/// host, between phases (`m log n` for `m` values in `n` sorted elements).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_frontend::Side;
/// let a = pt::placeholder("a", [10], DType::F64).unwrap();
/// let v = pt::placeholder("v", [3, 2], DType::F32).unwrap();
/// let i = pt::searchsorted(&a, &v, Side::Left, None).unwrap();
/// assert_eq!((i.shape().to_string(), i.dtype()), ("(3, 2)".into(), DType::I64));
/// ```
#[track_caller]
pub fn searchsorted(sorted: &Array, values: &Array, side: Side, sorter: Option<&Array>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "searchsorted";
    if sorted.ndim() != 1 {
        return Err(Error::invalid(op, format!("the sorted array must be 1-d, got shape {}", sorted.shape())));
    }
    let sorted = match sorter {
        Some(order) => super::take(sorted, order, Some(0))?,
        None => sorted.clone(),
    };
    let operands = [&Operand::Array(sorted.clone()), &Operand::Array(values.clone())];
    let dtype = super::promote(&operands)?;
    let sorted = super::astype(&sorted, dtype)?;
    let values = super::astype(values, dtype)?;
    Array::new_search_sorted(&sorted, &values, side).map_err(|e| e.renamed("SearchSorted", op))
}
