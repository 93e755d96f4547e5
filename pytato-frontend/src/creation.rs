//! Inputs and array creation: `placeholder`, `size_param`, `data_wrapper`, `zeros`, `ones`, `full`,
//! `eye`, `arange`, `linspace`, the `*_like` functions and `pad`.

use pytato_core::array::{Array, DataRef};
use pytato_core::dtype::{DType, WeakScalar, result_type_many};
use pytato_core::error::{Error, Result};
use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func};
use pytato_core::scalar::Scalar;
use pytato_core::shape::{Dim, Shape};

use pytato_core::operand::LambdaBuilder;

// Constructors `pytato-core` holds (the operators and indexing use them), as this module's own.
pub(crate) use pytato_core::basic::{full, zeros};

/// A named input of the given shape and dtype, bound when the program runs.
///
/// ```
/// use pytato_core::{DType, Dim, Shape};
/// use pytato_frontend as pt;
/// let u = pt::placeholder("u", [Dim::param("n"), Dim::new(3)], DType::F64).unwrap();
/// assert_eq!(u.shape().to_string(), "(n, 3)");
/// ```
#[track_caller]
pub fn placeholder(name: &str, shape: impl Into<Shape>, dtype: DType) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    Array::new_placeholder(Some(name), shape.into(), dtype)
}

/// A named size parameter: a 0-d `int64` input. Shapes refer to it as `Dim::param(name)`, and
/// arithmetic can use it as an array.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let n = pt::size_param("n").unwrap();
/// assert_eq!((n.ndim(), n.dtype()), (0, DType::I64));
/// ```
#[track_caller]
pub fn size_param(name: &str) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    Array::new_size_param(name)
}

/// Wraps data known now (numpy's `asarray` for a constant); `name` is optional.
///
/// ```
/// use pytato_core::{ArrayData, DType};
/// use pytato_frontend as pt;
/// let d = pt::data_wrapper(ArrayData::from(ndarray::arr1(&[1.0f32, 2.0]).into_dyn()), None).unwrap();
/// assert_eq!(d.dtype(), DType::F32);
/// ```
#[track_caller]
pub fn data_wrapper(data: impl Into<DataRef>, name: Option<&str>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    Array::new_data_wrapper(data, name)
}

/// An array of ones (numpy `ones`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::ones([2, 2], DType::Bool).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn ones(shape: impl Into<Shape>, dtype: DType) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    full(shape, 1, dtype)
}

/// An `n × m` array (`m` defaults to `n`) with ones on diagonal `k` (numpy `eye`): `k > 0` above the
/// main diagonal, `k < 0` below.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let e = pt::eye(3, Some(4.into()), 1, DType::F64).unwrap();
/// assert_eq!(e.shape().to_string(), "(3, 4)");
/// ```
#[track_caller]
pub fn eye(n: impl Into<Dim>, m: Option<Dim>, k: i64, dtype: DType) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let n = n.into();
    let m = m.unwrap_or_else(|| n.clone());
    let shape = Shape::from(vec![n, m]);
    shape.validate("eye")?;
    let on_diagonal = Expr::iname(1).compare(CompareOp::Eq, Expr::iname(0).binary(BinaryOp::Add, Expr::i64(k)));
    let expr = Expr::if_then_else(on_diagonal, Expr::Const(Scalar::one(dtype)), Expr::Const(Scalar::zero(dtype)));
    LambdaBuilder::new(shape).finish(expr)
}

/// Evenly spaced values in `[start, stop)` (numpy `arange`): `int64` when all three are integers,
/// `float64` when one is a float, `complex128` when one is complex, unless `dtype` says. The
/// length is `ceil((stop - start) / step)`, or 0; with complex bounds or step, numpy's
/// `min(ceil(re q), ceil(im q))` of `q = (stop - start) / step` (so `arange(2+2j)` has 2 values
/// and `arange(5j)` none), and the dtype must be complex.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::arange(0, 10, 3, None).unwrap();
/// assert_eq!((a.shape().to_string(), a.dtype()), ("(4,)".into(), DType::I64));
/// assert_eq!(pt::arange(0.0, 1.0, 0.25, None).unwrap().shape().to_string(), "(4,)");
/// ```
#[track_caller]
pub fn arange(
    start: impl Into<WeakScalar>,
    stop: impl Into<WeakScalar>,
    step: impl Into<WeakScalar>,
    dtype: impl Into<Option<DType>>,
) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (start, stop, step) = (start.into(), stop.into(), step.into());
    let natural = result_type_many([&start, &stop, &step].map(|s| s.default_dtype())).expect("three values");
    let dtype = dtype.into().unwrap_or(natural);
    if natural.is_complex() && !dtype.is_complex() {
        return Err(Error::unsupported_dtype("arange", dtype, "complex bounds or step need a complex dtype"));
    }
    let length = match (start, stop, step) {
        _ if natural.is_complex() => complex_arange_length(start, stop, step)?,
        (WeakScalar::Int(a), WeakScalar::Int(b), WeakScalar::Int(s)) => {
            if s == 0 {
                return Err(Error::invalid("arange", "step must not be zero"));
            }
            let span = b - a;
            // ceil(span / s) for either sign of s.
            let n = if (span > 0) == (s > 0) && span != 0 { (span.abs() + s.abs() - 1) / s.abs() } else { 0 };
            i64::try_from(n).map_err(|_| Error::Overflow { op: "arange".into(), what: "the length".into() })?
        }
        _ => {
            let [a, b, s] = [start, stop, step].map(|v| Scalar::from_weak(&v, DType::F64).map(|x| x.to_f64()));
            let (a, b, s) = (a?, b?, s?);
            if s == 0.0 {
                return Err(Error::invalid("arange", "step must not be zero"));
            }
            let n = ((b - a) / s).ceil();
            if !n.is_finite() || n > i64::MAX as f64 {
                return Err(Error::invalid(
                    "arange",
                    format!("length of arange({a}, {b}, {s}) is not a finite integer"),
                ));
            }
            n.max(0.0) as i64
        }
    };
    // numpy writes the first two elements, `start` and `start + step` (added as Python adds
    // them), into the array, and fills the rest from those two: `first + i * (second - first)`
    // in the dtype's arithmetic (float16's in float32). So the spacing is the rounded
    // difference, not `step`: `arange(1e10, 1e10 + 1, 0.1)` steps by 0.10000038...
    let first = Scalar::assign_weak("arange", &start, dtype)?;
    let second = Scalar::assign_weak("arange", &weak_sum(start, step), dtype)?;
    if dtype == DType::Bool {
        if length > 2 {
            return Err(Error::unsupported_dtype(
                "arange",
                dtype,
                format!("a bool arange has at most 2 elements (numpy's rule), not {length}"),
            ));
        }
        let expr = Expr::if_then_else(
            Expr::iname(0).compare(CompareOp::Eq, Expr::i64(0)),
            Expr::Const(first),
            Expr::Const(second),
        );
        return LambdaBuilder::new(Shape::from([length])).finish(expr);
    }
    let compute = if dtype == DType::F16 { DType::F32 } else { dtype };
    let (first, second) = (Expr::Const(first.cast(compute)), Expr::Const(second.cast(compute)));
    let delta = second.clone().binary(BinaryOp::Sub, first.clone());
    let filled = first.clone().binary(BinaryOp::Add, Expr::iname(0).cast(compute).binary(BinaryOp::Mul, delta));
    let at = |k: i64| Expr::iname(0).compare(CompareOp::Eq, Expr::i64(k));
    let mut expr = Expr::if_then_else(at(0), first, Expr::if_then_else(at(1), second, filled));
    if compute != dtype {
        expr = expr.cast(dtype);
    }
    LambdaBuilder::new(Shape::from([length])).finish(expr)
}

/// `arange(stop)` for a length `stop` not known until the program runs (`x.shape[0]` of a
/// symbolic shape): `0, 1, …, stop - 1` in `dtype` (`int64` unless it says), as numpy's
/// `arange(stop, dtype=dtype)` gives them for every `stop`. A `bool` dtype is refused: numpy
/// allows it for at most two elements, which a symbolic length cannot promise.
///
/// ```
/// use pytato_core::{DType, Dim};
/// use pytato_frontend as pt;
/// let a = pt::arange_symbolic(Dim::param("n"), None).unwrap();
/// assert_eq!((a.shape().to_string(), a.dtype()), ("(n,)".into(), DType::I64));
/// ```
#[track_caller]
pub fn arange_symbolic(stop: Dim, dtype: impl Into<Option<DType>>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let dtype = dtype.into().unwrap_or(DType::I64);
    if dtype == DType::Bool {
        return Err(Error::unsupported_dtype(
            "arange",
            dtype,
            format!("a bool arange has at most 2 elements (numpy's rule), which the length {stop} does not promise"),
        ));
    }
    // numpy fills `first + i * (second - first)` with first 0 and second 1: `i` itself, exact
    // in every dtype up to its integer range (float16 rounds `i` once, as numpy's float32
    // computation followed by the cast does for lengths below 2^24).
    LambdaBuilder::new(Shape::from(vec![stop])).finish(Expr::iname(0).cast(dtype))
}

/// `a + b` as Python adds numbers: exactly for integers (and bools), in float64 or complex128
/// otherwise.
fn weak_sum(a: WeakScalar, b: WeakScalar) -> WeakScalar {
    let int = |v: WeakScalar| match v {
        WeakScalar::Bool(b) => Some(i128::from(b)),
        WeakScalar::Int(i) => Some(i),
        _ => None,
    };
    let complex = |v: WeakScalar| match v {
        WeakScalar::Bool(b) => num_complex::Complex64::new(f64::from(u8::from(b)), 0.0),
        WeakScalar::Int(i) => num_complex::Complex64::new(i as f64, 0.0),
        WeakScalar::Float(x) => num_complex::Complex64::new(x, 0.0),
        WeakScalar::Complex(c) => c,
    };
    if let (Some(x), Some(y)) = (int(a), int(b)) {
        return WeakScalar::Int(x + y);
    }
    let sum = complex(a) + complex(b);
    if matches!(a, WeakScalar::Complex(_)) || matches!(b, WeakScalar::Complex(_)) {
        WeakScalar::Complex(sum)
    } else {
        WeakScalar::Float(sum.re)
    }
}

/// numpy's length of a complex `arange`: `q = (stop - start) / step` (divided as Python divides
/// complex numbers, Smith's algorithm, which numpy calls), then `min(ceil(re q), ceil(im q))`, at
/// least 0.
fn complex_arange_length(start: WeakScalar, stop: WeakScalar, step: WeakScalar) -> Result<i64> {
    let [a, b, s] = [start, stop, step].map(|v| Scalar::from_weak(&v, DType::C128).map(|x| x.to_complex64()));
    let (a, b, s) = (a?, b?, s?);
    if s.re == 0.0 && s.im == 0.0 {
        return Err(Error::invalid("arange", "step must not be zero"));
    }
    let (re, im) = ((b - a).re, (b - a).im);
    let q = if s.re.abs() >= s.im.abs() {
        let (ratio, scale) = (s.im / s.re, s.re + s.im * (s.im / s.re));
        ((re + im * ratio) / scale, (im - re * ratio) / scale)
    } else {
        let (ratio, scale) = (s.re / s.im, s.re * (s.re / s.im) + s.im);
        ((re * ratio + im) / scale, (im * ratio - re) / scale)
    };
    let n = q.0.ceil().min(q.1.ceil());
    if !n.is_finite() || n > i64::MAX as f64 {
        return Err(Error::invalid("arange", format!("length of arange({a}, {b}, {s}) is not a finite integer")));
    }
    Ok(n.max(0.0) as i64)
}

/// `num` evenly spaced values from `start` to `stop` (numpy `linspace`), computed as numpy
/// computes them: in float64, or complex128 where a bound is complex, element `i` is
/// `i * step + start` for `step = (stop - start) / div` (`div` is `num - 1` with `endpoint`, else
/// `num`), or `i / div * (stop - start) + start` where that step is zero (the bounds are equal, or
/// their difference is too small to divide); where `div` is 0 (`num` 0, or 1 with `endpoint`),
/// `i * (stop - start) + start`. With `endpoint` and `num > 1` the last value is exactly `stop`.
/// The result is converted to `dtype` (default the computing dtype); to an integer dtype after
/// rounding toward negative infinity, as numpy does (complex bounds cannot be, as in numpy).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::linspace(0.0, 1.0, 5, true, None).unwrap();
/// assert_eq!((x.shape().to_string(), x.dtype()), ("(5,)".into(), DType::F64));
/// assert_eq!(pt::linspace(0, 10, 4, false, DType::I32).unwrap().dtype(), DType::I32);
/// ```
#[track_caller]
pub fn linspace(
    start: impl Into<WeakScalar>,
    stop: impl Into<WeakScalar>,
    num: usize,
    endpoint: bool,
    dtype: impl Into<Option<DType>>,
) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (start, stop) = (start.into(), stop.into());
    let complex = start.default_dtype().is_complex() || stop.default_dtype().is_complex();
    linspace_computed_in(start, stop, num, endpoint, if complex { DType::C128 } else { DType::F64 }, dtype)
}

/// [`linspace`] computed in `compute`, the dtype numpy computes in for bounds of that dtype
/// (numpy's `float32` scalars give `float32`; `float16` is computed in `float32` and rounded
/// once, where numpy rounds every operation); the result in `dtype`, `compute` by default.
#[track_caller]
pub fn linspace_computed_in(
    start: impl Into<WeakScalar>,
    stop: impl Into<WeakScalar>,
    num: usize,
    endpoint: bool,
    compute: DType,
    dtype: impl Into<Option<DType>>,
) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "linspace";
    let (start, stop) = (start.into(), stop.into());
    let length =
        i64::try_from(num).map_err(|_| Error::Overflow { op: op.into(), what: format!("the length {num}") })?;
    let dtype = dtype.into().unwrap_or(compute);
    let compute = match compute {
        DType::F16 => DType::F32,
        other if other.is_inexact() => other,
        other => {
            return Err(Error::unsupported_dtype(op, other, "the values are computed in a float or complex dtype"));
        }
    };
    let complex = compute.is_complex();
    if complex && dtype.is_integer() {
        return Err(Error::unsupported_dtype(
            op,
            dtype,
            "complex values cannot be rounded down to integers (numpy's floor of them fails too)",
        ));
    }
    let constant = |v: &WeakScalar| Scalar::from_weak(v, compute).map(Expr::Const);
    let (first, last) = (constant(&start)?, constant(&stop)?);
    let div = if endpoint { num.saturating_sub(1) } else { num };
    let div = Expr::Const(Scalar::from_weak(&WeakScalar::Int(div as i128), compute)?);
    let i = Expr::iname(0).cast(compute);
    // The step and the difference are constants; they stay expressions so that the backends'
    // arithmetic, which is numpy's (complex division included), computes them.
    let delta = last.clone().binary(BinaryOp::Sub, first.clone());
    let offset = if num > 0 && (!endpoint || num > 1) {
        let step = delta.clone().binary(BinaryOp::Div, div.clone());
        let zero = Expr::Const(Scalar::from_weak(&WeakScalar::Int(0), compute)?);
        Expr::if_then_else(
            step.clone().compare(CompareOp::Eq, zero),
            i.clone().binary(BinaryOp::Div, div).binary(BinaryOp::Mul, delta),
            i.binary(BinaryOp::Mul, step),
        )
    } else {
        i.binary(BinaryOp::Mul, delta)
    };
    let mut value = offset.binary(BinaryOp::Add, first);
    if endpoint && num > 1 {
        let at_end = Expr::iname(0).compare(CompareOp::Eq, Expr::i64(length - 1));
        value = Expr::if_then_else(at_end, last, value);
    }
    if dtype.is_integer() && !complex {
        value = Expr::call(Func::Floor, vec![value]);
    }
    let samples = LambdaBuilder::new(Shape::from([length])).finish(value)?;
    if dtype == compute { Ok(samples) } else { super::elementwise::astype(&samples, dtype) }
}

/// An array like `a` (same shape; `a`'s dtype unless `dtype` says) filled with `value`.
///
/// Built on `zero(a)` (seed: "zeros_like (and similar)"): the result keeps a dependency on `a`, so
/// metadata later added to `a`'s axes can still reach it, until dead-code elimination cuts the link.
/// A NaN in `a` does not leak into the result.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::F32).unwrap();
/// let f = pt::full_like(&a, 2.5, None).unwrap();
/// assert_eq!((f.shape(), f.dtype()), (a.shape(), DType::F32));
/// assert_eq!(f.children().len(), 1, "the link to `a` survives");
/// ```
#[track_caller]
pub fn full_like(a: &Array, value: impl Into<WeakScalar>, dtype: impl Into<Option<DType>>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let dtype = dtype.into().unwrap_or(a.dtype());
    let value = Expr::Const(Scalar::from_weak(&value.into(), dtype)?);
    let mut builder = LambdaBuilder::new(a.shape().clone());
    let read = builder.read_broadcast(a);
    let zero = Expr::call(Func::Zero, vec![read]);
    let zero = if a.dtype() == dtype { zero } else { zero.cast(dtype) };
    // `value - 0`, not `0 + value`: that would turn -0.0 into +0.0.
    if dtype == DType::Bool {
        builder.finish(zero.binary(BinaryOp::BitOr, value))
    } else {
        builder.finish(value.binary(BinaryOp::Sub, zero))
    }
}

/// Zeros like `a` (numpy `zeros_like`); see [`full_like`] for how the link to `a` is kept.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I16).unwrap();
/// assert_eq!(pt::zeros_like(&a, None).unwrap().dtype(), DType::I16);
/// ```
#[track_caller]
pub fn zeros_like(a: &Array, dtype: impl Into<Option<DType>>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    full_like(a, 0, dtype)
}

/// Ones like `a` (numpy `ones_like`); see [`full_like`].
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::Bool).unwrap();
/// assert_eq!(pt::ones_like(&a, DType::F64).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn ones_like(a: &Array, dtype: impl Into<Option<DType>>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    full_like(a, 1, dtype)
}

/// How much [`pad`] adds before and after each axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PadWidth {
    /// The same amount before and after every axis.
    Same(usize),
    /// `(before, after)` for every axis.
    BeforeAfter(usize, usize),
    /// `(before, after)` per axis.
    PerAxis(Vec<(usize, usize)>),
}

impl From<usize> for PadWidth {
    fn from(w: usize) -> PadWidth {
        PadWidth::Same(w)
    }
}
impl From<(usize, usize)> for PadWidth {
    fn from((b, a): (usize, usize)) -> PadWidth {
        PadWidth::BeforeAfter(b, a)
    }
}
impl From<Vec<(usize, usize)>> for PadWidth {
    fn from(w: Vec<(usize, usize)>) -> PadWidth {
        PadWidth::PerAxis(w)
    }
}
impl<const N: usize> From<[(usize, usize); N]> for PadWidth {
    fn from(w: [(usize, usize); N]) -> PadWidth {
        PadWidth::PerAxis(w.to_vec())
    }
}

/// `a` padded with the constant `value` (numpy `pad(a, width, mode="constant", constant_values=value)`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::F64).unwrap();
/// let p = pt::pad(&a, [(1, 0), (2, 2)], 0.0).unwrap();
/// assert_eq!(p.shape().to_string(), "(3, 7)");
/// ```
#[track_caller]
pub fn pad(a: &Array, width: impl Into<PadWidth>, value: impl Into<WeakScalar>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    pad_with(a, width, PadMode::Constant(value.into()))
}

/// What [`pad_with`] fills the new elements with (numpy's `mode`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PadMode {
    /// A constant (`mode="constant"`).
    Constant(WeakScalar),
    /// The nearest edge element (`mode="edge"`).
    Edge,
    /// The mirror image without the edge element (`mode="reflect"`): `[1, 2, 3]` → `… 3 2 | 1 2 3 | 2 1 …`.
    Reflect,
    /// The mirror image with the edge element (`mode="symmetric"`): `… 2 1 | 1 2 3 | 3 2 …`.
    Symmetric,
    /// The array repeated periodically (`mode="wrap"`).
    Wrap,
}

/// `a` padded by `width` with `mode` (numpy `pad`); widths larger than the axis repeat the mirror
/// or period as numpy does. Modes other than `Constant` need a non-empty axis where they pad; an
/// axis whose length is symbolic and turns out 0 fails with an index error when the program runs.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_frontend::PadMode;
/// let a = pt::placeholder("a", [3], DType::I32).unwrap();
/// assert_eq!(pt::pad_with(&a, 4, PadMode::Reflect).unwrap().shape().to_string(), "(11,)");
/// ```
#[track_caller]
pub fn pad_with(a: &Array, width: impl Into<PadWidth>, mode: PadMode) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let ndim = a.ndim();
    let widths = match width.into() {
        PadWidth::Same(w) => vec![(w, w); ndim],
        PadWidth::BeforeAfter(b, e) => vec![(b, e); ndim],
        PadWidth::PerAxis(w) if w.len() == ndim => w,
        PadWidth::PerAxis(w) => {
            return Err(Error::invalid("pad", format!("{} pad widths for an array of shape {}", w.len(), a.shape())));
        }
    };
    if let Some(&w) = widths.iter().flat_map(|(b, e)| [b, e]).find(|&&w| i64::try_from(w).is_err()) {
        return Err(Error::Overflow { op: "pad".into(), what: format!("the pad width {w}") });
    }
    let mut dims = Vec::with_capacity(ndim);
    for (axis, (len, (b, e))) in a.shape().dims().iter().zip(&widths).enumerate() {
        if !matches!(mode, PadMode::Constant(_)) && len.as_int() == Some(0) && (*b, *e) != (0, 0) {
            return Err(Error::invalid(
                "pad",
                format!("cannot extend the empty axis {axis} of an array of shape {} with {mode:?}", a.shape()),
            ));
        }
        dims.push(len.add(&Dim::from(*b))?.add(&Dim::from(*e))?);
    }
    let mut builder = LambdaBuilder::new(Shape::from(dims));
    let mut inside: Option<Expr> = None;
    let mut indices = Vec::with_capacity(ndim);
    for (axis, (len, (b, _))) in a.shape().dims().iter().zip(&widths).enumerate() {
        // The position in `a` the output position stands for, before the mode maps it into range.
        let shifted =
            if *b == 0 { Expr::iname(axis) } else { Expr::iname(axis).binary(BinaryOp::Sub, Expr::i64(*b as i64)) };
        let n = builder.dim(len)?;
        let index = match mode {
            PadMode::Constant(_) => {
                let (lo, hi) = (
                    Expr::iname(axis).compare(CompareOp::Ge, Expr::i64(*b as i64)),
                    shifted.clone().compare(CompareOp::Lt, n),
                );
                for cond in [lo, hi] {
                    inside = Some(match inside {
                        None => cond,
                        Some(c) => c.binary(BinaryOp::LogicalAnd, cond),
                    });
                }
                shifted
            }
            PadMode::Edge => {
                let last = n.binary(BinaryOp::Sub, Expr::i64(1));
                Expr::call(Func::Minimum, vec![Expr::call(Func::Maximum, vec![shifted, Expr::i64(0)]), last])
            }
            PadMode::Wrap => shifted.binary(BinaryOp::Rem, n),
            // Periodic with period 2n - 2 (reflect) or 2n (symmetric), mirrored in the second half;
            // `x % 0` is 0, which is right for reflecting a single element.
            PadMode::Reflect | PadMode::Symmetric => {
                let twice = n.clone().binary(BinaryOp::Mul, Expr::i64(2));
                let (period, mirror) = if mode == PadMode::Reflect {
                    let p = twice.binary(BinaryOp::Sub, Expr::i64(2));
                    (p.clone(), p)
                } else {
                    (twice.clone(), twice.binary(BinaryOp::Sub, Expr::i64(1)))
                };
                let t = shifted.binary(BinaryOp::Rem, period);
                let second_half = t.clone().compare(CompareOp::Ge, n);
                Expr::if_then_else(second_half, mirror.binary(BinaryOp::Sub, t.clone()), t)
            }
        };
        indices.push(index);
    }
    let read = builder.read_at(a, indices);
    let expr = match (inside, mode) {
        (Some(cond), PadMode::Constant(value)) => {
            Expr::if_then_else(cond, read, Expr::Const(Scalar::assign_weak("pad", &value, a.dtype())?))
        }
        _ => read,
    };
    builder.finish(expr)
}

/// An array of `shape` and `dtype` whose values the program does not define (numpy `empty`): here
/// zeros, so that results never depend on memory left over.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::empty([2, 3], DType::I32).unwrap().shape().to_string(), "(2, 3)");
/// ```
#[track_caller]
pub fn empty(shape: impl Into<Shape>, dtype: DType) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    zeros(shape, dtype)
}

/// [`empty`] with the shape (and by default the dtype) of `a` (numpy `empty_like`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::C64).unwrap();
/// assert_eq!(pt::empty_like(&a, None).unwrap().dtype(), DType::C64);
/// ```
#[track_caller]
pub fn empty_like(a: &Array, dtype: impl Into<Option<DType>>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    zeros_like(a, dtype)
}

/// `a` itself, or `a` cast to `dtype` (numpy and the Array API's `asarray` of an array; wrap host
/// data with [`data_wrapper`]).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I8).unwrap();
/// assert_eq!(pt::asarray(&a, None).unwrap(), a);
/// assert_eq!(pt::asarray(&a, DType::F32).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn asarray(a: &Array, dtype: impl Into<Option<DType>>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    match dtype.into() {
        Some(d) if d != a.dtype() => super::elementwise::astype(a, d),
        _ => Ok(a.clone()),
    }
}

/// How [`meshgrid`] orders its output axes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Indexing {
    /// Cartesian (numpy's default): the first two output axes are swapped, so that for two
    /// inputs of lengths `m`, `n` the grids have shape `(n, m)`.
    #[default]
    Xy,
    /// Matrix: output axis `k` runs along input `k`.
    Ij,
}

/// Coordinate grids from 1-D coordinate arrays (numpy `meshgrid`): output `k` holds input `k`'s
/// values along its axis, broadcast over the others, in its own dtype. Inputs with several axes
/// are flattened, as numpy does.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_frontend::Indexing;
/// let x = pt::placeholder("x", [3], DType::F64).unwrap();
/// let y = pt::placeholder("y", [4], DType::F64).unwrap();
/// let grids = pt::meshgrid(&[x, y], Indexing::Xy).unwrap();
/// assert_eq!(grids[0].shape().to_string(), "(4, 3)");
/// ```
#[track_caller]
pub fn meshgrid(arrays: &[Array], indexing: Indexing) -> Result<Vec<Array>> {
    let _site = pytato_core::created_at::enter();
    let placed = meshgrid_sparse(arrays, indexing)?;
    // Each placed input has its length on its own axis and 1 elsewhere.
    let dims: Vec<Dim> = (0..placed.len())
        .map(|axis| {
            placed.iter().map(|p| &p.shape()[axis]).find(|d| d.as_int() != Some(1)).cloned().unwrap_or(Dim::new(1))
        })
        .collect();
    let shape = Shape::from(dims);
    placed.iter().map(|p| super::shape_ops::broadcast_to(p, shape.clone())).collect()
}

/// [`meshgrid`] without the broadcast (numpy's `meshgrid(..., sparse=True)`): output `k` has
/// input `k`'s length on its axis and 1 on the others.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_frontend::Indexing;
/// let x = pt::placeholder("x", [3], DType::F64).unwrap();
/// let y = pt::placeholder("y", [4], DType::F64).unwrap();
/// let grids = pt::meshgrid_sparse(&[x, y], Indexing::Xy).unwrap();
/// assert_eq!(grids[0].shape().to_string(), "(1, 3)");
/// assert_eq!(grids[1].shape().to_string(), "(4, 1)");
/// ```
#[track_caller]
pub fn meshgrid_sparse(arrays: &[Array], indexing: Indexing) -> Result<Vec<Array>> {
    let _site = pytato_core::created_at::enter();
    let flat = arrays.iter().map(super::shape_ops::ravel).collect::<Result<Vec<_>>>()?;
    // Input k's output axis.
    let axis_of = |k: usize| match (indexing, k) {
        (Indexing::Xy, 0) if flat.len() > 1 => 1,
        (Indexing::Xy, 1) => 0,
        _ => k,
    };
    flat.iter()
        .enumerate()
        .map(|(k, a)| {
            let mut along = vec![Dim::new(1); flat.len()];
            along[axis_of(k)] = a.shape()[0].clone();
            super::shape_ops::reshape(a, Shape::from(along), pytato_core::array::Order::C)
        })
        .collect()
}

/// `a` with the elements above the `k`-th diagonal of its last two axes set to zero (numpy
/// `tril`): `a[..., i, j]` is kept where `j - i <= k`. A vector is the row of a square matrix,
/// as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3, 4], DType::F32).unwrap();
/// assert_eq!(pt::tril(&a, -1).unwrap().shape(), a.shape());
/// ```
#[track_caller]
pub fn tril(a: &Array, k: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    triangle("tril", a, k, CompareOp::Le)
}

/// `a` with the elements below the `k`-th diagonal of its last two axes set to zero (numpy
/// `triu`): `a[..., i, j]` is kept where `j - i >= k`. A vector is the row of a square matrix,
/// as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 3], DType::I64).unwrap();
/// assert_eq!(pt::triu(&a, 1).unwrap().dtype(), DType::I64);
/// ```
#[track_caller]
pub fn triu(a: &Array, k: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    triangle("triu", a, k, CompareOp::Ge)
}

fn triangle(op: &str, a: &Array, k: i64, keep: CompareOp) -> Result<Array> {
    if a.ndim() == 1 {
        // numpy's rule: a vector is the row of a square matrix.
        let length = a.shape()[0].clone();
        let rows = pytato_core::basic::broadcast_to(a, Shape::from(vec![length.clone(), length]))?;
        return triangle(op, &rows, k, keep);
    }
    let n = a.ndim();
    if n < 2 {
        return Err(Error::invalid(op, format!("needs at least one axis, got an array of shape {}", a.shape())));
    }
    let mut builder = LambdaBuilder::new(a.shape().clone());
    let read = builder.read_broadcast(a);
    let offset = Expr::iname(n - 1).binary(BinaryOp::Sub, Expr::iname(n - 2));
    let kept = offset.compare(keep, Expr::i64(k));
    builder.finish(Expr::if_then_else(kept, read, Expr::Const(Scalar::zero(a.dtype()))))
}
