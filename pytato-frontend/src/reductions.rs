//! Reductions: `sum`, `prod`, `max`, `min`, `all`, `any`, `mean`, `var`, `std`, `argmax`,
//! `argmin`.
//!
//! Each is an `IndexLambda` whose expression holds a `Reduce`, as in pytato. The second argument
//! says which axes, and optionally `keepdims` and `initial`:
//!
//! ```
//! use pytato_core::DType;
//! use pytato_frontend as pt;
//! use pytato_frontend::ReduceOptions;
//! let a = pt::placeholder("a", [2, 3, 4], DType::I32).unwrap();
//! assert_eq!(pt::sum(&a, None).unwrap().shape().to_string(), "()");
//! assert_eq!(pt::sum(&a, 1).unwrap().shape().to_string(), "(2, 4)");
//! assert_eq!(pt::sum(&a, [0, -1]).unwrap().shape().to_string(), "(3,)");
//! let kept = pt::max(&a, ReduceOptions::axes(-1).keepdims(true).initial(0)).unwrap();
//! assert_eq!(kept.shape().to_string(), "(2, 3, 1)");
//! ```

use std::sync::Arc;

use pytato_core::array::Array;
use pytato_core::dtype::{DType, DTypeKind, WeakScalar};
use pytato_core::error::{Error, Result, ValueCheck};
use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, ReduceOp, ReductionBounds};
use pytato_core::scalar::Scalar;
use pytato_core::shape::{Dim, Shape};
use pytato_core::size_check::SizeCheck;

use super::shape_ops::normalize_axis;
use pytato_core::operand::LambdaBuilder;

/// Which axes an operation applies to: all of them, or a list (negative counts from the end).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Axes {
    /// Every axis (numpy's `axis=None`).
    #[default]
    All,
    /// These axes.
    List(Vec<i64>),
}

impl From<i64> for Axes {
    fn from(a: i64) -> Axes {
        Axes::List(vec![a])
    }
}
impl From<i32> for Axes {
    fn from(a: i32) -> Axes {
        Axes::List(vec![a.into()])
    }
}
impl From<Option<i64>> for Axes {
    fn from(a: Option<i64>) -> Axes {
        a.map_or(Axes::All, |a| Axes::List(vec![a]))
    }
}
impl From<Vec<i64>> for Axes {
    fn from(a: Vec<i64>) -> Axes {
        Axes::List(a)
    }
}
impl From<&[i64]> for Axes {
    fn from(a: &[i64]) -> Axes {
        Axes::List(a.to_vec())
    }
}
impl<const N: usize> From<[i64; N]> for Axes {
    fn from(a: [i64; N]) -> Axes {
        Axes::List(a.to_vec())
    }
}

impl Axes {
    /// The axes as sorted, distinct indices below `ndim`; an error names `op` and the shape.
    pub(crate) fn resolve(&self, op: &str, shape: &Shape) -> Result<Vec<usize>> {
        match self {
            Axes::All => Ok((0..shape.ndim()).collect()),
            Axes::List(list) => {
                let mut out = Vec::with_capacity(list.len());
                for &a in list {
                    let axis = normalize_axis(op, a, shape.ndim(), shape)?;
                    if out.contains(&axis) {
                        return Err(Error::invalid(op, format!("axis {a} repeated in {list:?}")));
                    }
                    out.push(axis);
                }
                out.sort_unstable();
                Ok(out)
            }
        }
    }
}

/// Axes, `keepdims` and `initial` of a reduction. Anything that converts to [`Axes`] converts to
/// this with `keepdims = false` and no `initial`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReduceOptions {
    /// The reduced axes.
    pub axes: Axes,
    /// Keep reduced axes as length 1.
    pub keepdims: bool,
    /// A value included in every reduction (numpy's `initial`); not for `all`, `any`, `mean`.
    pub initial: Option<WeakScalar>,
    /// The dtype to accumulate in and return (numpy's and the Array API's `dtype=`), for `sum`,
    /// `prod`, `mean`, `var` and `std`; elements are cast to it first, as numpy does.
    pub dtype: Option<DType>,
}

impl ReduceOptions {
    /// Reduce along `axes`.
    #[track_caller]
    pub fn axes(axes: impl Into<Axes>) -> ReduceOptions {
        let _site = pytato_core::created_at::enter();
        ReduceOptions { axes: axes.into(), ..ReduceOptions::default() }
    }

    /// Keep the reduced axes as length 1.
    #[track_caller]
    pub fn keepdims(mut self, keepdims: bool) -> ReduceOptions {
        let _site = pytato_core::created_at::enter();
        self.keepdims = keepdims;
        self
    }

    /// Start every reduction from `initial`.
    #[track_caller]
    pub fn initial(mut self, initial: impl Into<WeakScalar>) -> ReduceOptions {
        let _site = pytato_core::created_at::enter();
        self.initial = Some(initial.into());
        self
    }
}

impl ReduceOptions {
    /// Accumulate in (and return) `dtype`.
    #[track_caller]
    pub fn dtype(mut self, dtype: DType) -> ReduceOptions {
        let _site = pytato_core::created_at::enter();
        self.dtype = Some(dtype);
        self
    }
}

impl<T: Into<Axes>> From<T> for ReduceOptions {
    fn from(axes: T) -> ReduceOptions {
        ReduceOptions::axes(axes)
    }
}

/// numpy's accumulator for `sum` and `prod`: small integers and bools widen to 64 bits.
fn accumulator_dtype(d: DType) -> DType {
    match d.kind() {
        DTypeKind::Bool | DTypeKind::SignedInt => DType::I64,
        DTypeKind::UnsignedInt => DType::U64,
        _ => d,
    }
}

/// `opts`, for a reduction that takes no `dtype=`.
fn no_dtype(name: &str, opts: ReduceOptions) -> Result<ReduceOptions> {
    match opts.dtype {
        Some(d) => Err(Error::invalid(name, format!("`dtype` ({d}) is not accepted"))),
        None => Ok(opts),
    }
}

fn reduction(name: &str, op: ReduceOp, a: &Array, opts: ReduceOptions, dtype: DType) -> Result<Array> {
    if !op.accepts(dtype) {
        return Err(Error::unsupported_dtype(name, a.dtype(), format!("array of shape {}", a.shape())));
    }
    let axes = opts.axes.resolve(name, a.shape())?;
    if matches!(op, ReduceOp::Max | ReduceOp::Min)
        && opts.initial.is_none()
        && let Some(&axis) = axes.iter().find(|&&ax| a.shape()[ax].as_int() == Some(0))
    {
        return Err(Error::invalid(
            name,
            format!(
                "zero-size reduction along axis {axis} of an array of shape {} has no identity; pass `initial`",
                a.shape()
            ),
        ));
    }
    let (out_shape, out_axis_of) = reduced_shape(a.shape(), &axes, opts.keepdims);
    let mut builder = LambdaBuilder::new(out_shape);
    // numpy's float16 `maximum` and `minimum` loops keep the first of equal values (`-0.0` and
    // `0.0`), its float32 and float64 loops, and `Func::Maximum`, which reductions combine with,
    // the last: a float16 extremum reads its terms in reverse (each reduced axis backwards, which
    // reverses their row-major order), so that the last it meets is numpy's first.
    let reversed = matches!(op, ReduceOp::Max | ReduceOp::Min) && dtype == DType::F16;
    let mut bounds = Vec::new();
    let mut indices = Vec::with_capacity(a.ndim());
    for (axis, len) in a.shape().dims().iter().enumerate() {
        match out_axis_of[axis] {
            Some(out) if !axes.contains(&axis) => indices.push(Expr::iname(out)),
            _ => {
                let iname: Arc<str> = builder.reduction_iname();
                bounds.push(ReductionBounds { iname: iname.clone(), lower: Dim::new(0), upper: len.clone() });
                indices.push(if reversed {
                    let last = builder.dim(len)?.binary(BinaryOp::Sub, Expr::i64(1));
                    last.binary(BinaryOp::Sub, Expr::Var(iname))
                } else {
                    Expr::Var(iname)
                });
            }
        }
    }
    let read = builder.read_at(a, indices);
    let body = if a.dtype() == dtype { read } else { read.cast(dtype) };
    let Some(initial) = &opts.initial else {
        if bounds.is_empty() && op == ReduceOp::Sum && dtype.is_inexact() {
            // A sum over no axes is numpy's identity plus the element: `sum(-0.0)` is `0.0`.
            return builder.finish(body.binary(BinaryOp::Add, Expr::Const(Scalar::zero(dtype))));
        }
        if bounds.is_empty() && op == ReduceOp::Product && dtype.is_complex() {
            // numpy multiplies the element by the identity: `prod(1 + inf j)` is `nan + inf j`.
            return builder.finish(Expr::call(Func::TextbookProduct, vec![Expr::Const(Scalar::one(dtype)), body]));
        }
        return builder.finish(if bounds.is_empty() { body } else { Expr::reduce(op, bounds, body) });
    };
    let initial = Scalar::assign_weak(name, initial, dtype)?;
    let c = Expr::Const(initial);
    if op == ReduceOp::Product && dtype.is_complex() {
        // numpy multiplies `initial` in first, by the textbook formula, as every later term: the
        // accumulator starts there (seeding the first term would multiply it by `1 + 0j`, which
        // is not exact where it has an infinite part).
        let product = match bounds.is_empty() {
            true => Expr::call(Func::TextbookProduct, vec![c, body]),
            false => Expr::product_from(initial, bounds, body),
        };
        return builder.finish(product);
    }
    if reversed && !bounds.is_empty() {
        // numpy's accumulator starts at `initial`, which keeps a tie with the terms: `initial`
        // where it is NaN or at least (at most) their extremum, or where there are no terms.
        let empty = bounds.iter().try_fold(Expr::Const(Scalar::Bool(false)), |any, b| -> Result<Expr> {
            let no_trips = builder.dim(&b.upper)?.compare(CompareOp::Le, builder.dim(&b.lower)?);
            Ok(any.binary(BinaryOp::LogicalOr, no_trips))
        })?;
        let terms = Expr::reduce(op, bounds, body);
        let cmp = if op == ReduceOp::Max { CompareOp::Ge } else { CompareOp::Le };
        let keeps_initial = Expr::call(Func::IsNan, vec![c.clone()])
            .binary(BinaryOp::LogicalOr, c.clone().compare(cmp, terms.clone()))
            .binary(BinaryOp::LogicalOr, empty);
        return builder.finish(Expr::if_then_else(keeps_initial, c, terms));
    }
    // numpy starts the accumulator at `initial`: `c * x0 * x1 ...`, `max(max(c, x0), x1) ...`;
    // the order matters where a product overflows or a maximum ties -0.0 and 0.0.
    let with_initial = |x: Expr| -> Result<Expr> {
        Ok(match op {
            ReduceOp::Sum => c.clone().binary(BinaryOp::Add, x),
            ReduceOp::Product => c.clone().binary(BinaryOp::Mul, x),
            ReduceOp::Max => Expr::call(Func::Maximum, vec![c.clone(), x]),
            ReduceOp::Min => Expr::call(Func::Minimum, vec![c.clone(), x]),
            ReduceOp::All | ReduceOp::Any => return Err(Error::invalid(name, "`initial` is not accepted")),
        })
    };
    if bounds.is_empty() {
        return builder.finish(with_initial(body)?);
    }
    if op == ReduceOp::Sum {
        // initial + sum: numpy adds the (pairwise) sum of the terms to it.
        let sum = Expr::reduce(op, bounds.clone(), body.clone());
        let initial_value = initial.to_f64();
        if dtype.is_inexact() && !dtype.is_complex() && initial_value == 0.0 && initial_value.is_sign_negative() {
            // numpy's sum keeps `-0.0` where its terms are all `-0.0` (or there are none), and
            // starts from `initial`: then the result is `-0.0`, where the summation scheme's
            // `+0.0` would make `-0.0 + 0.0 = 0.0`.
            let negative_zero = Expr::call(Func::Signbit, vec![body.clone()])
                .binary(BinaryOp::LogicalAnd, body.compare(CompareOp::Eq, Expr::Const(Scalar::zero(dtype))));
            let all_negative_zeros = Expr::reduce(ReduceOp::All, bounds, negative_zero);
            return builder.finish(Expr::if_then_else(all_negative_zeros, c.clone(), with_initial(sum)?));
        }
        return builder.finish(with_initial(sum)?);
    }
    // The first term carries `initial`; an empty range gives `initial` itself.
    let mut first: Option<Expr> = None;
    let mut empty: Option<Expr> = None;
    for b in &bounds {
        let (lo, hi) = (builder.dim(&b.lower)?, builder.dim(&b.upper)?);
        let at_start = Expr::Var(b.iname.clone()).compare(CompareOp::Eq, lo.clone());
        let no_trips = hi.compare(CompareOp::Le, lo);
        first = Some(first.map_or(at_start.clone(), |f| f.binary(BinaryOp::LogicalAnd, at_start)));
        empty = Some(empty.map_or(no_trips.clone(), |e| e.binary(BinaryOp::LogicalOr, no_trips)));
    }
    let (first, empty) = (first.expect("bounds"), empty.expect("bounds"));
    let seeded = Expr::if_then_else(first, with_initial(body.clone())?, body);
    builder.finish(Expr::if_then_else(empty, c.clone(), Expr::reduce(op, bounds, seeded)))
}

/// `reduced`, an index lambda that reduces `axes` of `a` with an operation that has no identity
/// (`max`, `argmax`, ...), with numpy's requirement that there be something to reduce: every
/// symbolic axis among them is checked non-empty once the sizes are known (a zero length known
/// now is refused when the reduction is built).
fn nonempty(name: &str, a: &Array, axes: &[usize], reduced: Array) -> Result<Array> {
    let symbolic = axes.iter().filter(|&&ax| a.shape()[ax].as_int().is_none());
    reduced.with_size_checks(symbolic.map(|&axis| SizeCheck::NonEmpty {
        op: name.into(),
        shape: a.shape().clone(),
        axis,
    }))
}

/// A maximum or minimum of real values (see [`max`]).
fn real_extremum(name: &str, op: ReduceOp, a: &Array, options: ReduceOptions) -> Result<Array> {
    let axes = options.axes.resolve(name, a.shape())?;
    let initial = options.initial.is_some();
    let reduced = reduction(name, op, a, options, a.dtype())?;
    if initial { Ok(reduced) } else { nonempty(name, a, &axes, reduced) }
}

/// The result shape of reducing `axes`, and for each input axis its output axis (reduced axes
/// have one only with `keepdims`).
fn reduced_shape(shape: &Shape, axes: &[usize], keepdims: bool) -> (Shape, Vec<Option<usize>>) {
    let mut dims = Vec::new();
    let mut map = Vec::with_capacity(shape.ndim());
    for (axis, len) in shape.dims().iter().enumerate() {
        if axes.contains(&axis) {
            if keepdims {
                map.push(Some(dims.len()));
                dims.push(Dim::new(1));
            } else {
                map.push(None);
            }
        } else {
            map.push(Some(dims.len()));
            dims.push(len.clone());
        }
    }
    (Shape::from(dims), map)
}

/// Sum over axes (numpy `sum`): integers and bools accumulate in 64 bits (`int64`, or `uint64` for
/// unsigned input), as numpy does.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::U8).unwrap();
/// assert_eq!(pt::sum(&a, 0).unwrap().dtype(), DType::U64);
/// ```
#[track_caller]
pub fn sum(a: &Array, options: impl Into<ReduceOptions>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let opts = options.into();
    let dtype = opts.dtype.unwrap_or(accumulator_dtype(a.dtype()));
    reduction("sum", in_dtype(ReduceOp::Sum, dtype, &opts), a, opts, dtype)
}

/// Product over axes (numpy `prod`), with `sum`'s accumulator dtypes.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::F32).unwrap();
/// assert_eq!(pt::prod(&a, None).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn prod(a: &Array, options: impl Into<ReduceOptions>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let opts = options.into();
    let dtype = opts.dtype.unwrap_or(accumulator_dtype(a.dtype()));
    reduction("prod", in_dtype(ReduceOp::Product, dtype, &opts), a, opts, dtype)
}

/// The reduction that sums (`Sum`) or multiplies (`Product`) in `dtype`: numpy's boolean `add`
/// and `multiply` are `or` and `and` (`sum(a, dtype=bool)` is whether any element is nonzero),
/// which `Any` and `All` compute, or, with an `initial` to start from, `Max` and `Min`.
fn in_dtype(op: ReduceOp, dtype: DType, opts: &ReduceOptions) -> ReduceOp {
    match (op, dtype == DType::Bool, opts.initial.is_some()) {
        (ReduceOp::Sum, true, false) => ReduceOp::Any,
        (ReduceOp::Sum, true, true) => ReduceOp::Max,
        (ReduceOp::Product, true, false) => ReduceOp::All,
        (ReduceOp::Product, true, true) => ReduceOp::Min,
        _ => op,
    }
}

/// Maximum over axes (numpy `max`); NaN propagates. Over a zero-length axis this needs `initial`.
/// Complex values compare as numpy's do (real part first, then imaginary; the first value with a
/// NaN part wins); `initial` is not accepted for them.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [0, 4], DType::F64).unwrap();
/// assert!(pt::max(&a, 0).is_err());
/// assert_eq!(pt::max(&a, 1).unwrap().shape().to_string(), "(0,)");
/// ```
#[track_caller]
pub fn max(a: &Array, options: impl Into<ReduceOptions>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let options = no_dtype("max", options.into())?;
    if a.dtype().is_complex() {
        return complex_extremum("max", ReduceOp::Max, a, options);
    }
    real_extremum("max", ReduceOp::Max, a, options)
}

/// Minimum over axes (numpy `min`); see [`max`].
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [5], DType::I8).unwrap();
/// assert_eq!(pt::min(&a, None).unwrap().dtype(), DType::I8);
/// ```
#[track_caller]
pub fn min(a: &Array, options: impl Into<ReduceOptions>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let options = no_dtype("min", options.into())?;
    if a.dtype().is_complex() {
        return complex_extremum("min", ReduceOp::Min, a, options);
    }
    real_extremum("min", ReduceOp::Min, a, options)
}

/// `true` where every element along the axes is true (numpy `all`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [5], DType::F64).unwrap();
/// assert_eq!(pt::all(&a, None).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn all(a: &Array, options: impl Into<ReduceOptions>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    reduction("all", ReduceOp::All, a, no_dtype("all", options.into())?, DType::Bool)
}

/// `true` where any element along the axes is true (numpy `any`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [5, 2], DType::I32).unwrap();
/// assert_eq!(pt::any(&a, -1).unwrap().shape().to_string(), "(5,)");
/// ```
#[track_caller]
pub fn any(a: &Array, options: impl Into<ReduceOptions>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    reduction("any", ReduceOp::Any, a, no_dtype("any", options.into())?, DType::Bool)
}

/// Mean over axes (numpy `mean`): integers and bools average in `float64`, `float16` in `float32`
/// (rounded to `float16` once, as numpy does). The count may be
/// symbolic (a product of size parameters). An integer or bool `options.dtype` sums in that
/// dtype and casts the float64 quotient back to it, as numpy does.
///
/// ```
/// use pytato_core::{DType, Dim};
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [Dim::param("n"), Dim::new(3)], DType::I32).unwrap();
/// assert_eq!(pt::mean(&a, 0).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn mean(a: &Array, options: impl Into<ReduceOptions>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let opts = options.into();
    if opts.initial.is_some() {
        return Err(Error::invalid("mean", "`initial` is not accepted"));
    }
    if a.dtype() == DType::F16 && opts.dtype.is_none() {
        // numpy's `_mean`: a float16 mean is computed in float32 and rounded once.
        let wide = mean(a, ReduceOptions { dtype: Some(DType::F32), ..opts })?;
        return super::elementwise::astype(&wide, DType::F16);
    }
    let dtype = opts.dtype.unwrap_or(if a.dtype().is_inexact() { a.dtype() } else { DType::F64 });
    let axes = opts.axes.resolve("mean", a.shape())?;
    let total = reduction("mean", in_dtype(ReduceOp::Sum, dtype, &opts), a, opts, dtype)?;
    divide_by_count(&total, a.shape(), &axes, 0.0, dtype)
}

/// `total / max(count - correction, 0)` in `dtype`, where `count` is the number of elements of
/// `shape` along `axes` (an expression in the size parameters where they are symbolic).
fn divide_by_count(total: &Array, shape: &Shape, axes: &[usize], correction: f64, dtype: DType) -> Result<Array> {
    let mut builder = LambdaBuilder::new(total.shape().clone());
    let mut count: Option<Expr> = None;
    for &axis in axes {
        let len = builder.dim(&shape[axis])?;
        count = Some(match count {
            None => len,
            Some(c) => c.binary(BinaryOp::Mul, len),
        });
    }
    let count = count.unwrap_or_else(|| Expr::i64(1)).cast(DType::F64);
    // numpy divides by its count, an `intp` (`max(count - ddof, 0)` in float64 with a `ddof`),
    // which promotes any total to float64 or complex128: the quotient is computed there and cast
    // back unsafely (`true_divide(total, count, out=total, casting='unsafe')`). For float32 that
    // is the float32 quotient; complex64's division is not correctly rounded, and an integer
    // total is truncated.
    let count = if correction == 0.0 {
        count
    } else {
        let c = count.binary(BinaryOp::Sub, Expr::Const(Scalar::F64(correction)));
        Expr::call(Func::Maximum, vec![c, Expr::Const(Scalar::F64(0.0))])
    };
    let wide = if dtype.is_complex() { DType::C128 } else { DType::F64 };
    let read = builder.read_broadcast(total);
    builder.finish(read.cast(wide).binary(BinaryOp::Div, count.cast(wide)).cast(dtype))
}

/// Variance over axes (numpy `var`, the Array API's `var`): the mean of `|a - mean(a)|²`, with the
/// sum divided by `max(count - correction, 0)` (numpy's `ddof`; 0 is the population variance,
/// 1 the unbiased sample variance). Integers and bools compute in `float64`; complex input gives a
/// real result. `options.initial` is not accepted; `options.dtype` is the dtype numpy sums in and
/// returns (an integer one truncates the mean and the result, a complex one is complex).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 3], DType::C64).unwrap();
/// assert_eq!(pt::var(&a, 0, 1.0).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn var(a: &Array, options: impl Into<ReduceOptions>, correction: f64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    variance("var", a, None, options.into(), correction)
}

/// [`var`] about a mean the caller computed (numpy's `var(a, mean=...)`), so that it is not
/// computed again; `mean` broadcasts against `a` (numpy asks for the shape `mean` has with
/// `keepdims=True`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 3], DType::F32).unwrap();
/// let m = pt::mean(&a, pt::ReduceOptions::axes(0).keepdims(true)).unwrap();
/// assert_eq!(pt::var_about(&a, &m, 0, 0.0).unwrap().shape().to_string(), "(3,)");
/// ```
#[track_caller]
pub fn var_about(a: &Array, mean: &Array, options: impl Into<ReduceOptions>, correction: f64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    variance("var", a, Some(mean), options.into(), correction)
}

/// [`std()`] about a mean the caller computed (numpy's `std(a, mean=...)`); see [`var_about`].
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4], DType::F64).unwrap();
/// assert_eq!(pt::std_about(&a, &pt::mean(&a, None).unwrap(), None, 1.0).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn std_about(a: &Array, mean: &Array, options: impl Into<ReduceOptions>, correction: f64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    standard_deviation(variance("std", a, Some(mean), options.into(), correction)?)
}

/// Standard deviation over axes (numpy `std`): `sqrt(var(a, options, correction))`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 3], DType::I32).unwrap();
/// assert_eq!(pt::std(&a, None, 0.0).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn std(a: &Array, options: impl Into<ReduceOptions>, correction: f64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    standard_deviation(variance("std", a, None, options.into(), correction)?)
}

/// The square root of a variance, in its dtype. numpy's `std` converts the root of an integer
/// variance (computed with an integer `dtype=`) back to it, truncated, where the variance is a
/// scalar; an array it takes the root into, and its `same_kind` rule refuses that.
fn standard_deviation(variance: Array) -> Result<Array> {
    let root = super::elementwise::sqrt(&variance)?;
    if variance.dtype().is_inexact() {
        return Ok(root);
    }
    if variance.ndim() > 0 {
        return Err(Error::unsupported_dtype(
            "std",
            variance.dtype(),
            format!(
                "the {} square root of a variance of shape {} cannot be stored in its dtype (numpy's 'same_kind'                  rule; only a 0-d variance is converted)",
                root.dtype(),
                variance.shape()
            ),
        ));
    }
    super::elementwise::astype(&root, variance.dtype())
}

/// numpy's `_var`, step by step: the mean (kept dims, summed in the dtype `D` asked for and
/// divided into it, so an integer `D` truncates; or the caller's) subtracted in the promoted
/// dtype, squared (`x * x` for real input, the real part of `x * conj(x)` for complex), the
/// squares summed in `D` (cast to it first) and divided by the corrected count into it. Without
/// `D`: the input's dtype where inexact (complex input gives its real dtype), else `float64`.
fn variance(name: &str, a: &Array, given_mean: Option<&Array>, opts: ReduceOptions, correction: f64) -> Result<Array> {
    if opts.initial.is_some() {
        return Err(Error::invalid(name, "`initial` is not accepted"));
    }
    if !correction.is_finite() {
        return Err(Error::invalid(name, format!("correction must be finite, got {correction}")));
    }
    let mean_dtype = opts.dtype.unwrap_or(if a.dtype().is_inexact() { a.dtype() } else { DType::F64 });
    let axes = opts.axes.resolve(name, a.shape())?;
    let centred = match given_mean {
        Some(m) => super::elementwise::subtract(a, m)?,
        None => {
            let keep =
                ReduceOptions { axes: opts.axes.clone(), keepdims: true, initial: None, dtype: Some(mean_dtype) };
            super::elementwise::subtract(a, &mean(a, keep)?)?
        }
    };
    let squares = if a.dtype().is_complex() {
        super::elementwise::real(&super::elementwise::multiply(&centred, &super::elementwise::conj(&centred)?)?)?
    } else {
        super::elementwise::multiply(&centred, &centred)?
    };
    let sum_dtype = opts.dtype.unwrap_or(if squares.dtype().is_inexact() { squares.dtype() } else { DType::F64 });
    let opts = ReduceOptions { dtype: None, ..opts };
    let summed = reduction(name, in_dtype(ReduceOp::Sum, sum_dtype, &opts), &squares, opts, sum_dtype)?;
    divide_by_count(&summed, a.shape(), &axes, correction, sum_dtype)
}

/// The index of the first maximum along `axis` (numpy `argmax`; the flattened array's when `axis`
/// is `None`), as `int64`; a NaN counts as the maximum (the first NaN's index). Bools and real
/// dtypes; an empty axis is an error, as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 3], DType::F64).unwrap();
/// assert_eq!(pt::argmax(&a, Some(0), false).unwrap().shape().to_string(), "(3,)");
/// assert_eq!(pt::argmax(&a, None, true).unwrap().shape().to_string(), "(1, 1)");
/// ```
#[track_caller]
pub fn argmax(a: &Array, axis: Option<i64>, keepdims: bool) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    arg_extremum("argmax", ReduceOp::Max, a, axis, keepdims)
}

/// The index of the first minimum along `axis` (numpy `argmin`); see [`argmax`].
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4], DType::I8).unwrap();
/// assert_eq!(pt::argmin(&a, None, false).unwrap().dtype(), DType::I64);
/// ```
#[track_caller]
pub fn argmin(a: &Array, axis: Option<i64>, keepdims: bool) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    arg_extremum("argmin", ReduceOp::Min, a, axis, keepdims)
}

/// The index of the first maximum along `axis` with NaNs ignored (numpy `nanargmax`): `argmax`
/// of the array with each NaN replaced by -inf (complex: `-inf + 0j`), as numpy computes it; a
/// slice of NaNs only makes the program fail when it runs with numpy's `ValueError` ("All-NaN
/// slice encountered"), whichever slices are used. Integers and bools: `argmax`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 3], DType::F32).unwrap();
/// assert_eq!(pt::nanargmax(&a, Some(1), false).unwrap().shape().to_string(), "(4,)");
/// ```
#[track_caller]
pub fn nanargmax(a: &Array, axis: Option<i64>, keepdims: bool) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    nan_arg_extremum(ReduceOp::Max, a, axis, keepdims)
}

/// The index of the first minimum along `axis` with NaNs ignored (numpy `nanargmin`); see
/// [`nanargmax`].
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4], DType::F64).unwrap();
/// assert_eq!(pt::nanargmin(&a, None, false).unwrap().dtype(), DType::I64);
/// ```
#[track_caller]
pub fn nanargmin(a: &Array, axis: Option<i64>, keepdims: bool) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    nan_arg_extremum(ReduceOp::Min, a, axis, keepdims)
}

fn nan_arg_extremum(op: ReduceOp, a: &Array, axis: Option<i64>, keepdims: bool) -> Result<Array> {
    let (name, fill, check) = match op {
        ReduceOp::Max => ("argmax", f64::NEG_INFINITY, ValueCheck::AllNanSliceMax),
        _ => ("argmin", f64::INFINITY, ValueCheck::AllNanSliceMin),
    };
    if !a.dtype().is_inexact() {
        return arg_extremum(name, op, a, axis, keepdims);
    }
    let nan = super::elementwise::isnan(a)?;
    let index = arg_extremum(name, op, &super::elementwise::where_(&nan, fill, a)?, axis, keepdims)?;
    let axes = match axis {
        Some(axis) => Axes::List(vec![axis]),
        None => Axes::All,
    };
    let all_nan = all(&nan, ReduceOptions::axes(axes).keepdims(keepdims))?;
    super::elementwise::require_non_negative(&super::elementwise::where_(&all_nan, -1, &index)?, check)
}

/// Two reductions: the extremum `m` along the axis (NaN-propagating), then the smallest index
/// whose element equals `m` (or is NaN where `m` is). Complex values: see [`complex_first_extremum`].
fn arg_extremum(name: &str, op: ReduceOp, a: &Array, axis: Option<i64>, keepdims: bool) -> Result<Array> {
    let flattened = axis.is_none();
    // Without an axis, the index in row-major order over every axis, found by one reduction
    // over all of them: a flattened copy would need the product of symbolic lengths, which is
    // not an affine length. A 0-d array is its own one element.
    let (src, axes) = match axis {
        Some(ax) => (a.clone(), vec![normalize_axis(name, ax, a.ndim(), a.shape())?]),
        None if a.ndim() == 0 => (super::shape_ops::ravel(a)?, vec![0]),
        None => (a.clone(), (0..a.ndim()).collect()),
    };
    let src = stored(&src)?;
    let index = if src.dtype().is_complex() {
        complex_first_extremum(name, op, &src, &axes)?
    } else {
        real_first_extremum(name, op, &src, &axes)?
    };
    let reduced_axes: Vec<usize> = if flattened { (0..a.ndim()).collect() } else { axes.clone() };
    let index = nonempty(name, a, &reduced_axes, index)?;
    if !keepdims {
        return Ok(index);
    }
    if flattened {
        super::shape_ops::reshape(&index, Shape::from(vec![Dim::new(1); a.ndim()]), pytato_core::array::Order::C)
    } else {
        super::shape_ops::insert_unit_axes(&index, &axes)
    }
}

/// `a`, stored where it is computed: an index of an extremum compares the values with their
/// extremum, found by another reduction, so both must read the same values. Recomputed in two
/// places, a value need not come out bit for bit the same on a GPU (a driver may contract or
/// reorder each copy its own way), and `argmax` would find no element equal to the maximum.
fn stored(a: &Array) -> Result<Array> {
    // A rearrangement of an input computes nothing: its values are the input's, read alike.
    let mut source = a;
    while let pytato_core::array::NodeKind::Reshape { array, .. }
    | pytato_core::array::NodeKind::AxisPermutation { array, .. }
    | pytato_core::array::NodeKind::Roll { array, .. } = source.kind()
    {
        source = array;
    }
    if source.is_input() { Ok(a.clone()) } else { a.tagged(pytato_core::tags::ImplStored) }
}

/// The axes of `src` other than `axes` read at the output index, and `axes[k]` at `along[k]`.
fn positions_over(src: &Array, axes: &[usize], along: &[Expr]) -> Vec<Expr> {
    let mut kept = 0;
    (0..src.ndim())
        .map(|d| match axes.iter().position(|&a| a == d) {
            Some(k) => along[k].clone(),
            None => {
                kept += 1;
                Expr::iname(kept - 1)
            }
        })
        .collect()
}

/// One reduction iname per axis of `axes` (`bounds`, for the reduction), and the row-major
/// position over those axes that they index (`flat`) with the number of positions (`count`).
struct FlatPositions {
    inames: Vec<Expr>,
    bounds: Vec<ReductionBounds>,
    flat: Expr,
    count: Expr,
}

fn flat_positions(builder: &mut LambdaBuilder, src: &Array, axes: &[usize]) -> Result<FlatPositions> {
    let (mut inames, mut bounds) = (Vec::new(), Vec::new());
    let mut flat_and_count: Option<(Expr, Expr)> = None;
    for &axis in axes {
        let iname = builder.reduction_iname();
        let (k, len) = (Expr::Var(iname.clone()), builder.dim(&src.shape()[axis])?);
        flat_and_count = Some(match flat_and_count {
            None => (k.clone(), len),
            Some((flat, count)) => (
                flat.binary(BinaryOp::Mul, len.clone()).binary(BinaryOp::Add, k.clone()),
                count.binary(BinaryOp::Mul, len),
            ),
        });
        inames.push(k);
        bounds.push(ReductionBounds { iname, lower: Dim::new(0), upper: src.shape()[axis].clone() });
    }
    let (flat, count) = flat_and_count.expect("at least one axis");
    Ok(FlatPositions { inames, bounds, flat, count })
}

/// [`ReduceOptions`] over `axes`, kept as length 1.
fn kept_axes(axes: &[usize]) -> ReduceOptions {
    ReduceOptions::axes(Axes::List(axes.iter().map(|&a| a as i64).collect())).keepdims(true)
}

/// The index over `axes` (row-major, one axis: its index) of the first complex maximum (or
/// minimum) in numpy's order: real parts first, then imaginary parts; the first element with a
/// NaN part wins outright (numpy's `argmax` loop stops there). Built from real reductions: the
/// extremum `r` of the real parts (NaN elements set aside), the extremum `i` of the imaginary
/// parts where the real part is `r`, then one index reduction that ranks a NaN element at `k` as
/// `k`, an element equal to `(r, i)` as `len + k`, and any other as `2 len`.
fn complex_first_extremum(name: &str, op: ReduceOp, src: &Array, axes: &[usize]) -> Result<Array> {
    use super::elementwise::{equal, imag, isnan, logical_or, real, where_};
    let (re, im) = (real(src)?, imag(src)?);
    let nan = logical_or(&isnan(&re)?, &isnan(&im)?)?;
    // Never the extremum: NaN elements are found apart.
    let fill = if op == ReduceOp::Max { f64::NEG_INFINITY } else { f64::INFINITY };
    let re = where_(&nan, fill, &re)?;
    let im = where_(&nan, fill, &im)?;
    let best_re = reduction(name, op, &re, kept_axes(axes), re.dtype())?;
    let on_best_re = equal(&re, &best_re)?;
    let best_im = reduction(name, op, &where_(&on_best_re, &im, fill)?, kept_axes(axes), im.dtype())?;

    let (out_shape, _) = reduced_shape(src.shape(), axes, false);
    let mut builder = LambdaBuilder::new(out_shape);
    let FlatPositions { inames, bounds, flat: k, count: len } = flat_positions(&mut builder, src, axes)?;
    let at = positions_over(src, axes, &inames);
    let at_best = positions_over(src, axes, &vec![Expr::i64(0); axes.len()]);
    let is_nan = builder.read_at(&nan, at.clone());
    let hit =
        builder.read_at(&re, at.clone()).compare(CompareOp::Eq, builder.read_at(&best_re, at_best.clone())).binary(
            BinaryOp::LogicalAnd,
            builder.read_at(&im, at).compare(CompareOp::Eq, builder.read_at(&best_im, at_best)),
        );
    let rank = Expr::if_then_else(
        is_nan,
        k.clone(),
        Expr::if_then_else(hit, len.clone().binary(BinaryOp::Add, k), len.clone().binary(BinaryOp::Mul, Expr::i64(2))),
    );
    let best = builder.finish(Expr::reduce(ReduceOp::Min, bounds, rank))?;
    // Back from ranks to indices: `len + k` is `k`.
    let mut builder = LambdaBuilder::new(best.shape().clone());
    let mut len = builder.dim(&src.shape()[axes[0]])?;
    for &axis in &axes[1..] {
        len = len.binary(BinaryOp::Mul, builder.dim(&src.shape()[axis])?);
    }
    let r = builder.read_broadcast(&best);
    let index =
        Expr::if_then_else(r.clone().compare(CompareOp::Ge, len.clone()), r.clone().binary(BinaryOp::Sub, len), r);
    builder.finish(index)
}

/// numpy's complex `max`/`min` over axes: the element at the first extremum of the reduced axes
/// taken together in row-major order (see [`complex_first_extremum`]). numpy reduces from
/// `initial` where one is given: the first extremum of `initial` and the elements, so `initial`
/// where it ties or is NaN, and `initial` alone over an empty axis (symbolic axes too, which may
/// be empty when the program runs).
fn complex_extremum(name: &str, op: ReduceOp, a: &Array, opts: ReduceOptions) -> Result<Array> {
    if let Some(initial) = opts.initial {
        let opts = ReduceOptions { initial: None, ..opts };
        let axes = opts.axes.resolve(name, a.shape())?;
        if axes.iter().any(|&ax| a.shape()[ax].as_int() == Some(0)) {
            // `initial` alone, linked to `a` as `full_like` links (a stays the program's input)
            let empty_sum = reduction(name, ReduceOp::Sum, a, ReduceOptions { initial: None, ..opts }, a.dtype())?;
            return super::full_like(&empty_sum, initial, a.dtype());
        }
        if axes.iter().any(|&ax| a.shape()[ax].as_int().is_none()) {
            // A symbolic axis may be empty when the program runs, where the search for the first
            // extremum has nothing to find (it was an InvalidForSizes error there). `initial`
            // goes in front of every reduced axis instead: the first padded element in row-major
            // order is `initial`, the others keep their order, so the search finds `initial`
            // where it ties, is NaN or is alone, and never searches an empty axis.
            let widths: Vec<(usize, usize)> = (0..a.ndim()).map(|d| (usize::from(axes.contains(&d)), 0)).collect();
            let padded = super::pad(a, widths, initial)?;
            return complex_extremum(name, op, &padded, opts);
        }
        let (shape, _) = reduced_shape(a.shape(), &axes, opts.keepdims);
        let initial = super::full(shape, initial, a.dtype())?;
        let value = complex_extremum(name, op, a, opts)?;
        // numpy's complex maximum keeps its first operand on a tie and where it is NaN
        return match op {
            ReduceOp::Max => super::elementwise::maximum(&initial, &value),
            _ => super::elementwise::minimum(&initial, &value),
        };
    }
    let axes = opts.axes.resolve(name, a.shape())?;
    if let Some(&axis) = axes.iter().find(|&&ax| a.shape()[ax].as_int() == Some(0)) {
        return Err(Error::invalid(
            name,
            format!("zero-size reduction along axis {axis} of an array of shape {} has no identity", a.shape()),
        ));
    }
    let mut axes = axes;
    axes.sort_unstable();
    if axes.is_empty() {
        return Ok(a.clone());
    }
    let src = stored(a)?;
    let first = nonempty(name, a, &axes, complex_first_extremum(name, op, &src, &axes)?)?;
    // The element at that row-major position over `axes`, each reduced axis's index taken from
    // it (no flattened copy: its length, a product of symbolic lengths, need not be affine).
    let (shape, _) = reduced_shape(a.shape(), &axes, false);
    let mut builder = LambdaBuilder::new(shape);
    let flat = builder.read_broadcast(&first);
    let mut positions: Vec<Expr> = (0..a.ndim()).map(|_| Expr::i64(0)).collect();
    let mut stride: Option<Expr> = None;
    for &axis in axes.iter().rev() {
        let len = builder.dim(&a.shape()[axis])?;
        let quotient = match &stride {
            None => flat.clone(),
            Some(s) => flat.clone().binary(BinaryOp::FloorDiv, s.clone()),
        };
        positions[axis] = quotient.binary(BinaryOp::Rem, len.clone());
        stride = Some(match stride {
            None => len,
            Some(s) => s.binary(BinaryOp::Mul, len),
        });
    }
    for (k, d) in (0..a.ndim()).filter(|d| !axes.contains(d)).enumerate() {
        positions[d] = Expr::iname(k);
    }
    let element = builder.read_at(&src, positions);
    let value = builder.finish(element)?;
    if opts.keepdims { super::shape_ops::insert_unit_axes(&value, &axes) } else { Ok(value) }
}

/// The index over `axes` (row-major, one axis: its index) of the first real maximum (or
/// minimum); NaN wins, as in numpy.
fn real_first_extremum(name: &str, op: ReduceOp, src: &Array, axes: &[usize]) -> Result<Array> {
    let extremum = reduction(name, op, src, kept_axes(axes), src.dtype())?;
    let (out_shape, _) = reduced_shape(src.shape(), axes, false);
    let mut builder = LambdaBuilder::new(out_shape);
    let FlatPositions { inames, bounds, flat, count } = flat_positions(&mut builder, src, axes)?;
    let x = builder.read_at(src, positions_over(src, axes, &inames));
    let m = builder.read_at(&extremum, positions_over(src, axes, &vec![Expr::i64(0); axes.len()]));
    let mut hit = x.clone().compare(CompareOp::Eq, m.clone());
    if src.dtype().is_inexact() {
        let both_nan = Expr::call(Func::IsNan, vec![x]).binary(BinaryOp::LogicalAnd, Expr::call(Func::IsNan, vec![m]));
        hit = hit.binary(BinaryOp::LogicalOr, both_nan);
    }
    builder.finish(Expr::reduce(ReduceOp::Min, bounds, Expr::if_then_else(hit, flat, count)))
}
