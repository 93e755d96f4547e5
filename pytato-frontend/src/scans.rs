//! Scans: `cumulative_sum`, `cumulative_prod` (and numpy's `cumsum`, `cumprod`).
//!
//! A scan is a [`NodeKind::Scan`](pytato_core::NodeKind::Scan) node in the accumulation dtype: a host
//! step that every program runs between phases (see `pytato_runtime::phases` and `pytato_runtime::scan`), each
//! row of at most 2048 elements left to right as numpy's loop does, so results match numpy's bit
//! for bit; longer rows in blocks of 1024 (integers still numpy's bits, float sums to rounding;
//! float products left to right at every length). Lengths may be symbolic; `include_initial` is an
//! index lambda around the scan.

use pytato_core::arith::{astype, equal, greater, logical_not};
use pytato_core::array::Array;
use pytato_core::array::ScanOp;
use pytato_core::dtype::{DType, DTypeKind};
use pytato_core::error::{Error, Result};
use pytato_core::expr::{BinaryOp, CompareOp, Expr};
use pytato_core::scalar::Scalar;
use pytato_core::shape::{Dim, Shape};

use super::shape_ops::{normalize_axis, ravel};
use pytato_core::operand::LambdaBuilder;

/// Options of [`cumulative_sum`] and [`cumulative_prod`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScanOptions {
    /// The axis to scan; `None` only for 1-d arrays (the Array API's rule).
    pub axis: Option<i64>,
    /// The dtype to accumulate in and return; by default `sum`'s (integers and bools in 64 bits).
    pub dtype: Option<DType>,
    /// Start with the identity (0 or 1), making the axis one longer (the Array API's
    /// `include_initial`).
    pub include_initial: bool,
}

impl ScanOptions {
    /// Scan along `axis`.
    pub fn axis(axis: i64) -> ScanOptions {
        ScanOptions { axis: Some(axis), ..ScanOptions::default() }
    }

    /// Accumulate in `dtype`.
    pub fn dtype(mut self, dtype: DType) -> ScanOptions {
        self.dtype = Some(dtype);
        self
    }

    /// Start the result with the identity.
    pub fn include_initial(mut self, include: bool) -> ScanOptions {
        self.include_initial = include;
        self
    }
}

/// Running sums along an axis (the Array API's `cumulative_sum`; numpy 2's `cumulative_sum`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_frontend::ScanOptions;
/// let a = pt::placeholder("a", [3, 5], DType::I8).unwrap();
/// let s = pt::cumulative_sum(&a, ScanOptions::axis(1)).unwrap();
/// assert_eq!((s.shape().to_string(), s.dtype()), ("(3, 5)".into(), DType::I64));
/// let t = pt::cumulative_sum(&a, ScanOptions::axis(0).include_initial(true)).unwrap();
/// assert_eq!(t.shape().to_string(), "(4, 5)");
/// ```
#[track_caller]
pub fn cumulative_sum(a: &Array, options: ScanOptions) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    scan("cumulative_sum", ScanOp::Sum, a, options)
}

/// Running products along an axis (the Array API's `cumulative_prod`); see [`cumulative_sum`].
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_frontend::ScanOptions;
/// let a = pt::placeholder("a", [4], DType::F32).unwrap();
/// assert_eq!(pt::cumulative_prod(&a, ScanOptions::default()).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn cumulative_prod(a: &Array, options: ScanOptions) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    scan("cumulative_prod", ScanOp::Product, a, options)
}

/// numpy's `cumsum`: [`cumulative_sum`] of the flattened array when `axis` is `None`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::F64).unwrap();
/// assert_eq!(pt::cumsum(&a, None).unwrap().shape().to_string(), "(6,)");
/// ```
#[track_caller]
pub fn cumsum(a: &Array, axis: Option<i64>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    match axis {
        Some(axis) => cumulative_sum(a, ScanOptions::axis(axis)),
        None => cumulative_sum(&ravel(a)?, ScanOptions::axis(0)),
    }
}

/// numpy's `cumprod`: [`cumulative_prod`] of the flattened array when `axis` is `None`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::I32).unwrap();
/// assert_eq!(pt::cumprod(&a, Some(0)).unwrap().dtype(), DType::I64);
/// ```
#[track_caller]
pub fn cumprod(a: &Array, axis: Option<i64>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    match axis {
        Some(axis) => cumulative_prod(a, ScanOptions::axis(axis)),
        None => cumulative_prod(&ravel(a)?, ScanOptions::axis(0)),
    }
}

fn scan(name: &str, op: ScanOp, a: &Array, options: ScanOptions) -> Result<Array> {
    let axis = match (options.axis, a.ndim()) {
        (Some(axis), _) => normalize_axis(name, axis, a.ndim(), a.shape())?,
        (None, 1) => 0,
        (None, _) => {
            return Err(Error::invalid(
                name,
                format!("an array of shape {} needs an axis (only 1-d arrays scan without one)", a.shape()),
            ));
        }
    };
    let dtype = options.dtype.unwrap_or(match a.dtype().kind() {
        DTypeKind::Bool | DTypeKind::SignedInt => DType::I64,
        DTypeKind::UnsignedInt => DType::U64,
        _ => a.dtype(),
    });
    if dtype == DType::Bool {
        return boolean_scan(name, op, a, ScanOptions { axis: Some(axis as i64), ..options });
    }
    let terms = astype(a, dtype)?;
    let mut current = Array::new_scan(&terms, axis, op)?;
    if op == ScanOp::Product && dtype.is_complex() {
        current = fused_product_of_two(&terms, current, axis)?;
    }
    if !options.include_initial {
        return Ok(current);
    }
    // The identity first, then the scan shifted by one.
    let mut dims = current.shape().dims().to_vec();
    dims[axis] = dims[axis].add(&Dim::new(1))?;
    let identity = if op == ScanOp::Sum { Scalar::zero(dtype) } else { Scalar::one(dtype) };
    let mut builder = LambdaBuilder::new(Shape::from(dims));
    let mut at: Vec<Expr> = (0..current.ndim()).map(Expr::iname).collect();
    at[axis] = Expr::iname(axis).binary(BinaryOp::Sub, Expr::i64(1));
    let read = builder.read_at(&current, at);
    let first = Expr::iname(axis).compare(CompareOp::Eq, Expr::i64(0));
    builder.finish(Expr::if_then_else(first, Expr::Const(identity), read))
}

/// `running`, the complex running products of `terms` along `axis`, with numpy's one step that
/// is not the textbook formula: along an axis of two elements numpy's accumulate runs a single
/// step, which its elementwise loop computes as `*` does (fused multiply-adds), so the second
/// element is `terms[0] * terms[1]` there (`(1e300-inf j) * (1e300-inf j)` is `-inf-inf j`, where the
/// textbook formula gives `nan-inf j`). Longer axes are textbook products from the first element
/// on, as the scan computes them.
fn fused_product_of_two(terms: &Array, running: Array, axis: usize) -> Result<Array> {
    let len = &terms.shape()[axis];
    if len.as_int().is_some_and(|n| n != 2) {
        return Ok(running);
    }
    let mut builder = LambdaBuilder::new(running.shape().clone());
    let at = |k: i64| -> Vec<Expr> {
        (0..terms.ndim()).map(|d| if d == axis { Expr::i64(k) } else { Expr::iname(d) }).collect()
    };
    let (first, second) = (builder.read_at(terms, at(0)), builder.read_at(terms, at(1)));
    let fused = first.binary(BinaryOp::Mul, second);
    let mut second_of_two = Expr::iname(axis).compare(CompareOp::Eq, Expr::i64(1));
    if len.as_int().is_none() {
        let two = builder.dim(len)?.compare(CompareOp::Eq, Expr::i64(2));
        second_of_two = two.binary(BinaryOp::LogicalAnd, second_of_two);
    }
    let scanned = builder.read_at(&running, (0..running.ndim()).map(Expr::iname).collect());
    builder.finish(Expr::if_then_else(second_of_two, fused, scanned))
}

/// A scan in `bool` (numpy's `cumsum(a, dtype=bool)`): numpy's boolean `add` and `multiply` are
/// `or` and `and`, so a running sum is "a true element so far" and a running product "no false
/// element so far", each read off a running count in `int64` (the identity, with
/// `include_initial`, is a count of 0: `false` and `true`).
fn boolean_scan(name: &str, op: ScanOp, a: &Array, options: ScanOptions) -> Result<Array> {
    let truth = astype(a, DType::Bool)?;
    let counted = if op == ScanOp::Sum { truth } else { logical_not(&truth)? };
    let counts = scan(name, ScanOp::Sum, &counted, ScanOptions { dtype: Some(DType::I64), ..options })?;
    if op == ScanOp::Sum { greater(&counts, 0) } else { equal(&counts, 0) }
}
