//! Elementwise functions: arithmetic, comparisons, logic, bitwise operations, `where`,
//! `maximum`/`minimum`, casts and the math functions, with numpy 2's broadcasting and dtype rules.
//!
//! Each function takes arrays or Rust scalars ([`Operand`]) and returns the array expression for the
//! result, or an error naming the operation and the operands' shapes and dtypes. Every result is an
//! `IndexLambda`: these operations are exactly index lambdas.

use pytato_core::array::Array;
use pytato_core::dtype::{DType, DTypeKind, WeakScalar, result_type};
use pytato_core::error::{Error, Result};
use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, UnaryOp};
use pytato_core::scalar::Scalar;

use pytato_core::operand::{LambdaBuilder, Operand, broadcast_operands, dtype_error, elementwise, promote};

use crate::creation::zeros_like;

// Constructors `pytato-core` holds (the operators and indexing use them), as this module's own.
pub(crate) use pytato_core::arith::{
    astype, divide, equal, greater, less, logical_and, logical_not, logical_or, multiply, not_equal, subtract, unary,
};

// ---------------------------------------------------------------------------------------------
// Selection.

/// `where(cond, x, y)`: `x` where `cond` is true, else `y`; all three broadcast together, `cond` is
/// taken by truth value, `x` and `y` promote.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4], DType::F32).unwrap();
/// let positive = pt::greater(&a, 0).unwrap();
/// assert_eq!(pt::where_(&positive, &a, 0).unwrap().dtype(), DType::F32);
/// ```
#[doc(alias = "where")]
#[track_caller]
pub fn where_(cond: impl Into<Operand>, x: impl Into<Operand>, y: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (cond, x, y) = (cond.into(), x.into(), y.into());
    let dtype = promote(&[&x, &y])?;
    let shape = broadcast_operands("where", &[&cond, &x, &y])?;
    let mut builder = LambdaBuilder::new(shape);
    // The condition is read by truth value (a cast to bool), the values as their common dtype.
    let c = builder.operand_at(0, &cond, DType::Bool)?;
    let (xe, ye) = (builder.operand_at(1, &x, dtype)?, builder.operand_at(2, &y, dtype)?);
    builder.finish(Expr::if_then_else(c, xe, ye))
}

fn extremum(op: &str, a: Operand, b: Operand, func: Func, cmp: CompareOp) -> Result<Array> {
    let dtype = promote(&[&a, &b])?;
    elementwise(op, &[&a, &b], dtype, |mut e| {
        let y = e.pop().expect("two operands");
        let x = e.pop().expect("two operands");
        let isnan = |v: &Expr| Expr::call(Func::IsNan, vec![v.clone()]);
        // numpy's float16 loops take `x` where it is NaN or wins or ties (`-0.0` of
        // `maximum(-0.0, 0.0)`); its float32 and float64 loops the second of a tie, as `func`.
        if dtype == DType::F16 {
            let first = isnan(&x).binary(BinaryOp::LogicalOr, x.clone().compare(cmp, y.clone()));
            return Ok(Expr::if_then_else(first, x, y));
        }
        if !dtype.is_complex() {
            return Ok(Expr::call(func, vec![x, y]));
        }
        // Complex: numpy orders lexicographically and propagates NaN from either side.
        let pick = Expr::if_then_else(x.clone().compare(cmp, y.clone()), x.clone(), y.clone());
        Ok(Expr::if_then_else(isnan(&x), x.clone(), Expr::if_then_else(isnan(&y), y, pick)))
    })
}

/// Elementwise maximum (numpy `maximum`): NaN in either operand gives NaN.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F64).unwrap();
/// assert_eq!(pt::maximum(&a, 0).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn maximum(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    extremum("maximum", a.into(), b.into(), Func::Maximum, CompareOp::Ge)
}

/// Elementwise minimum (numpy `minimum`): NaN in either operand gives NaN.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I32).unwrap();
/// assert_eq!(pt::minimum(&a, 7).unwrap().dtype(), DType::I32);
/// ```
#[track_caller]
pub fn minimum(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    extremum("minimum", a.into(), b.into(), Func::Minimum, CompareOp::Le)
}

// ---------------------------------------------------------------------------------------------
// Casts and complex parts.

/// The real part (numpy `real`): the component dtype for complex input, `a` itself otherwise.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::C64).unwrap();
/// assert_eq!(pt::real(&a).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn real(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if !a.dtype().is_complex() {
        return Ok(a.clone());
    }
    unary("real", a, a.dtype(), |e| Expr::call(Func::Real, vec![e]))
}

/// The imaginary part (numpy `imag`): zeros of `a`'s dtype for real input.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::C128).unwrap();
/// assert_eq!(pt::imag(&a).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn imag(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    unary("imag", a, a.dtype(), |e| Expr::call(Func::Imag, vec![e]))
}

/// The complex conjugate (numpy `conj`); real input is unchanged, bools become `int8` as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::C128).unwrap();
/// assert_eq!(pt::conj(&a).unwrap().dtype(), DType::C128);
/// ```
#[track_caller]
pub fn conj(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype() == DType::Bool {
        return astype(a, DType::I8);
    }
    unary("conj", a, a.dtype(), |e| Expr::call(Func::Conj, vec![e]))
}

/// The absolute value (numpy `abs`): the magnitude's real dtype for complex input; bools unchanged.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::C64).unwrap();
/// assert_eq!(pt::abs(&a).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn abs(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype() == DType::Bool {
        return Ok(a.clone());
    }
    unary("abs", a, a.dtype(), |e| Expr::call(Func::Abs, vec![e]))
}

// ---------------------------------------------------------------------------------------------
// Math functions.

/// A math function of one inexact argument; integers and bools compute in
/// [`DType::float_for_math`], as numpy does.
fn math(func: Func, a: &Array) -> Result<Array> {
    let dtype = a.dtype().float_for_math();
    unary(func.name(), a, dtype, |e| Expr::call(func, vec![e]))
}

macro_rules! math_functions {
    ($($(#[$doc:meta])* $name:ident => $func:ident;)*) => {$(
        $(#[$doc])*
        ///
        /// Integer and bool input computes in floating point, as numpy does (`int32` and wider in
        /// `float64`; `int16` in `float32`; `bool` and 8-bit integers in `float16`).
        #[track_caller]
        pub fn $name(a: &Array) -> Result<Array> {
            let _site = pytato_core::created_at::enter();
            math(Func::$func, a)
        }
    )*};
}

math_functions! {
    /// Square root (numpy `sqrt`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// let a = pt::placeholder("a", [3], DType::I64).unwrap();
    /// assert_eq!(pt::sqrt(&a).unwrap().dtype(), DType::F64);
    /// ```
    sqrt => Sqrt;
    /// Exponential (numpy `exp`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::exp(&pt::placeholder("a", [3], DType::F32).unwrap()).unwrap().dtype(), DType::F32);
    /// ```
    exp => Exp;
    /// Natural logarithm (numpy `log`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::log(&pt::placeholder("a", [3], DType::C64).unwrap()).unwrap().dtype(), DType::C64);
    /// ```
    log => Log;
    /// Base-10 logarithm (numpy `log10`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::log10(&pt::placeholder("a", [3], DType::I16).unwrap()).unwrap().dtype(), DType::F32);
    /// ```
    log10 => Log10;
    /// Sine (numpy `sin`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::sin(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    sin => Sin;
    /// Cosine (numpy `cos`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::cos(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    cos => Cos;
    /// Tangent (numpy `tan`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::tan(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    tan => Tan;
    /// Inverse sine (numpy `arcsin`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::arcsin(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    arcsin => Arcsin;
    /// Inverse cosine (numpy `arccos`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::arccos(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    arccos => Arccos;
    /// Inverse tangent (numpy `arctan`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::arctan(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    arctan => Arctan;
    /// Hyperbolic sine (numpy `sinh`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::sinh(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    sinh => Sinh;
    /// Hyperbolic cosine (numpy `cosh`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::cosh(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    cosh => Cosh;
    /// Hyperbolic tangent (numpy `tanh`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::tanh(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    tanh => Tanh;
    /// Inverse hyperbolic sine (numpy `arcsinh`, the Array API's `asinh`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::arcsinh(&pt::placeholder("a", [3], DType::F32).unwrap()).unwrap().dtype(), DType::F32);
    /// ```
    arcsinh => Arcsinh;
    /// Inverse hyperbolic cosine (numpy `arccosh`, the Array API's `acosh`); NaN below 1.
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::arccosh(&pt::placeholder("a", [3], DType::C128).unwrap()).unwrap().dtype(), DType::C128);
    /// ```
    arccosh => Arccosh;
    /// Inverse hyperbolic tangent (numpy `arctanh`, the Array API's `atanh`); `±inf` at `±1`.
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::arctanh(&pt::placeholder("a", [3], DType::I32).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    arctanh => Arctanh;
    /// `exp(a) - 1`, accurate for `a` near 0 (numpy `expm1`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::expm1(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    expm1 => Expm1;
    /// `log(1 + a)`, accurate for `a` near 0 (numpy `log1p`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::log1p(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
    /// ```
    log1p => Log1p;
    /// Base-2 logarithm (numpy `log2`), exact at powers of two.
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// assert_eq!(pt::log2(&pt::placeholder("a", [3], DType::U8).unwrap()).unwrap().dtype(), DType::F16);
    /// ```
    log2 => Log2;
}

/// The complex array with real part `re` and imaginary part `im`, real floats of one dtype, built
/// exactly ([`Func::MakeComplex`]; `re + im * 1j` would turn an infinite `im` into a NaN real part).
fn from_parts(op: &str, re: &Array, im: &Array) -> Result<Array> {
    elementwise(op, &[&re.into(), &im.into()], re.dtype(), |parts| Ok(Expr::call(Func::MakeComplex, parts)))
}

/// The complex array with real part `re` and imaginary part `im` (real floats, broadcast
/// together; float16 and float32 parts give complex64, float64 complex128), built exactly:
/// `re + im * 1j` is not (an infinite `im` makes a NaN real part, `-0.0` parts lose their sign).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let re = pt::placeholder("re", [3], DType::F32).unwrap();
/// assert_eq!(pt::complex_from_parts(&re, &re).unwrap().dtype(), DType::C64);
/// ```
#[track_caller]
pub fn complex_from_parts(re: &Array, im: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let dtype = result_type(re.dtype(), im.dtype());
    if dtype.kind() != DTypeKind::Float {
        return Err(dtype_error("complex_from_parts", dtype, &[&re.into(), &im.into()], "needs real float parts"));
    }
    let part = if dtype == DType::F16 { DType::F32 } else { dtype };
    elementwise("complex_from_parts", &[&re.into(), &im.into()], part, |parts| Ok(Expr::call(Func::MakeComplex, parts)))
}

fn round_with(func: Func, a: &Array) -> Result<Array> {
    match a.dtype().kind() {
        // numpy 2 keeps integer and bool dtypes; the values are already whole.
        DTypeKind::Bool | DTypeKind::SignedInt | DTypeKind::UnsignedInt => Ok(a.clone()),
        DTypeKind::Complex => {
            Err(dtype_error(func.name(), a.dtype(), &[&a.into()], "complex numbers cannot be rounded"))
        }
        DTypeKind::Float => unary(func.name(), a, a.dtype(), |e| Expr::call(func, vec![e])),
    }
}

/// Round toward negative infinity (numpy `floor`); integer and bool input is returned unchanged, as
/// numpy 2 keeps its dtype.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::floor(&pt::placeholder("a", [3], DType::F32).unwrap()).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn floor(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    round_with(Func::Floor, a)
}

/// Round toward positive infinity (numpy `ceil`); integer and bool input is returned unchanged.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::ceil(&pt::placeholder("a", [3], DType::I8).unwrap()).unwrap().dtype(), DType::I8);
/// ```
#[track_caller]
pub fn ceil(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    round_with(Func::Ceil, a)
}

/// `true` where `a` is NaN (numpy `isnan`); always false for integers and bools, computed as
/// `a != a` so that `a` is still evaluated, as numpy evaluates it (an index error in it counts).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::isnan(&pt::placeholder("a", [3], DType::I32).unwrap()).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn isnan(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype().is_inexact() {
        unary("isnan", a, a.dtype(), |e| Expr::call(Func::IsNan, vec![e]))
    } else {
        // Always false, but the argument is read (numpy evaluates it: an index error in it counts).
        unary("isnan", a, a.dtype(), |e| e.clone().compare(CompareOp::Ne, e))
    }
}

/// `a` (`int64`) where it is not negative; a negative element makes the program fail, when it
/// runs, with `check`'s error (numpy's `ValueError` of that refusal). The building block of the
/// functions that numpy makes refuse values as it computes them (`nanargmax` of a slice of NaNs,
/// `choose` with an entry out of range): they mark what numpy refuses with -1. The whole array is
/// checked, whatever part of it is used.
///
/// ```
/// use pytato_core::{DType, ValueCheck};
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I64).unwrap();
/// assert_eq!(pt::require_non_negative(&a, ValueCheck::ChoiceOutOfRange).unwrap().dtype(), DType::I64);
/// ```
#[track_caller]
pub fn require_non_negative(a: &Array, check: pytato_core::ValueCheck) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype() != DType::I64 {
        return Err(Error::unsupported_dtype("require_non_negative", a.dtype(), "checks int64 values"));
    }
    unary("require_non_negative", a, DType::I64, |e| {
        Expr::call(Func::RequireNonNegative, vec![e, Expr::i64(check.code())])
    })
}

/// The angle of the point `(b, a)` (numpy `arctan2(a, b)`), for real operands.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let y = pt::placeholder("y", [3], DType::F32).unwrap();
/// assert_eq!(pt::arctan2(&y, 1.0).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn arctan2(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    real_float_binary(Func::Arctan2, a.into(), b.into())
}

/// A function of two real operands computed in floating point (`arctan2`, `hypot`, ...).
/// The float dtype of numpy's loop for a real math function of `a` and `b`, named `op` in errors.
fn real_float_dtype(op: &str, a: &Operand, b: &Operand) -> Result<DType> {
    let promoted = promote(&[a, b])?;
    if promoted.is_complex() {
        return Err(dtype_error(op, promoted, &[a, b], "needs real operands"));
    }
    // numpy picks the first float loop that holds each operand (a weak scalar taking the dtype
    // it promotes to), not the float of the promoted dtype: int8 with uint16 is float32.
    let operand_float = |o: &Operand| match o {
        Operand::Array(x) => x.dtype().float_for_math(),
        Operand::Scalar(_) => promoted.float_for_math(),
    };
    Ok(result_type(operand_float(a), operand_float(b)))
}

fn real_float_binary(func: Func, a: Operand, b: Operand) -> Result<Array> {
    let op = func.name();
    let dtype = real_float_dtype(op, &a, &b)?;
    if func == Func::Nextafter && dtype == DType::F16 {
        return elementwise(op, &[&a, &b], dtype, |e| Ok(nextafter_float16(&e[0], &e[1])));
    }
    elementwise(op, &[&a, &b], dtype, |e| Ok(Expr::call(func, e)))
}

/// numpy's `nextafter` of two float16 values (`npy_half_nextafter`: one step of float16's bits
/// toward `y`; `x` where they are equal, so `nextafter(0.0, -0.0)` is `0.0`), computed exactly in
/// float32: computed in float32 and rounded, the next float32 would round back to `x`.
///
/// The step is float16's spacing at `|x|`: `P · 2^-10` for `P` the largest power of two not above
/// `|x|` (at least `2^-14`, below which float16 is subnormal with spacing `2^-24`), halved when
/// stepping down from a power of two above `2^-14`. `P` is a sum of powers of two selected by
/// comparisons, every partial sum exact. Infinities step to the largest finite value; the largest
/// finite value steps up to infinity through the final rounding, as in numpy.
fn nextafter_float16(x: &Expr, y: &Expr) -> Expr {
    let f32c = |v: f64| Expr::Const(Scalar::F32(v as f32));
    let (x, y) = (x.clone().cast(DType::F32), y.clone().cast(DType::F32));
    let magnitude = Expr::call(Func::Abs, vec![x.clone()]);
    let mut power = f32c(2f64.powi(-24));
    for k in -23..=15 {
        let at_least = magnitude.clone().compare(CompareOp::Ge, f32c(2f64.powi(k)));
        power = power.binary(BinaryOp::Add, Expr::if_then_else(at_least, f32c(2f64.powi(k - 1)), f32c(0.0)));
    }
    let normal = Expr::call(Func::Maximum, vec![power.clone(), f32c(2f64.powi(-14))]);
    let away = normal.binary(BinaryOp::Mul, f32c(2f64.powi(-10)));
    let at_power = magnitude
        .clone()
        .compare(CompareOp::Eq, power.clone())
        .binary(BinaryOp::LogicalAnd, power.compare(CompareOp::Gt, f32c(2f64.powi(-14))));
    let toward_zero = Expr::if_then_else(at_power, away.clone().binary(BinaryOp::Mul, f32c(0.5)), away.clone());
    // Away from zero when `y` is beyond `x` on `x`'s side.
    let positive = x.clone().compare(CompareOp::Gt, f32c(0.0));
    let beyond = Expr::if_then_else(
        positive.clone(),
        y.clone().compare(CompareOp::Gt, x.clone()),
        y.clone().compare(CompareOp::Lt, x.clone()),
    );
    let step = Expr::if_then_else(beyond, away, toward_zero.unary(UnaryOp::Neg));
    let signed_step = Expr::if_then_else(positive, step.clone(), step.unary(UnaryOp::Neg));
    // A step never crosses zero: one toward it from the smallest subnormal lands on the zero of
    // `x`'s sign (float16's bits 0x8001 step to 0x8000, -0.0), where `x + step` would be +0.0.
    let finite_step = Expr::call(Func::Copysign, vec![x.clone().binary(BinaryOp::Add, signed_step), x.clone()]);
    let nan = |e: &Expr| Expr::call(Func::IsNan, vec![e.clone()]);
    let result = Expr::if_then_else(
        nan(&x).binary(BinaryOp::LogicalOr, nan(&y)),
        f32c(f64::NAN),
        Expr::if_then_else(
            x.clone().compare(CompareOp::Eq, y.clone()),
            x.clone(),
            Expr::if_then_else(
                x.clone().compare(CompareOp::Eq, f32c(0.0)),
                Expr::call(Func::Copysign, vec![f32c(2f64.powi(-24)), y]),
                Expr::if_then_else(
                    magnitude.compare(CompareOp::Eq, f32c(f64::INFINITY)),
                    Expr::call(Func::Copysign, vec![f32c(65504.0), x]),
                    finite_step,
                ),
            ),
        ),
    );
    result.cast(DType::F16)
}

/// `sqrt(a² + b²)` without overflow or underflow (numpy `hypot`), for real operands; an infinite
/// operand gives `inf` even when the other is NaN, as C's `hypot` does.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [3], DType::F32).unwrap();
/// assert_eq!(pt::hypot(&x, 4).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn hypot(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    real_float_binary(Func::Hypot, a.into(), b.into())
}

/// `log(exp(a) + exp(b))` without overflow (numpy `logaddexp`), for real operands.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [3], DType::F64).unwrap();
/// assert_eq!(pt::logaddexp(&x, &x).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn logaddexp(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    real_float_binary(Func::LogAddExp, a.into(), b.into())
}

/// `|a|` with the sign bit of `b` (numpy `copysign`), for real operands: `copysign(1, -0.0)` is
/// `-1.0`, and NaN's sign bit counts.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [3], DType::F64).unwrap();
/// assert_eq!(pt::copysign(1.0, &x).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn copysign(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    real_float_binary(Func::Copysign, a.into(), b.into())
}

/// The next representable value after `a` toward `b`, in the result dtype's precision (numpy
/// `nextafter`); `b` where they are equal, NaN where either is. float16 steps float16's values as
/// numpy does (where they are equal it gives `a`, numpy's float16 rule).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [3], DType::F32).unwrap();
/// assert_eq!(pt::nextafter(&x, 1.0).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn nextafter(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    real_float_binary(Func::Nextafter, a.into(), b.into())
}

/// Whether the sign bit of `a` is set (numpy `signbit`): `true` for `-0.0` and NaNs with the sign
/// bit. Integers and bools are read as floats, as numpy's loops read them (negative integers).
/// Complex numbers are an error.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::signbit(&pt::placeholder("a", [3], DType::I8).unwrap()).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn signbit(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype().is_complex() {
        return Err(dtype_error("signbit", a.dtype(), &[&a.into()], "complex numbers have no sign bit"));
    }
    let float = a.dtype().float_for_math();
    unary("signbit", a, float, |e| Expr::call(Func::Signbit, vec![e]))
}

/// Round to the nearest integer, halfway cases to even (numpy `rint`; the Array API's `round`):
/// `rint(0.5)` is `0.0`, `rint(-0.5)` is `-0.0`. Complex numbers are rounded part by part;
/// integers and bools compute in floating point as numpy's `rint` does (see [`round`] for the
/// dtype-keeping version).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::rint(&pt::placeholder("a", [3], DType::I32).unwrap()).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn rint(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    math(Func::Rint, a)
}

/// Round to the nearest integer, halfway cases to even (numpy `round` with `decimals=0`, the
/// Array API's `round`): floats and complex numbers as [`rint`]; integers are returned unchanged,
/// in their dtype; bools are rounded as numpy rounds them, through `rint`, to `float16`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::round(&pt::placeholder("a", [3], DType::I32).unwrap()).unwrap().dtype(), DType::I32);
/// assert_eq!(pt::round(&pt::placeholder("b", [3], DType::Bool).unwrap()).unwrap().dtype(), DType::F16);
/// ```
#[track_caller]
pub fn round(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    match a.dtype().kind() {
        DTypeKind::Float | DTypeKind::Complex => unary("round", a, a.dtype(), |e| Expr::call(Func::Rint, vec![e])),
        // numpy's `PyArray_Round` treats only integers as whole; a bool goes to `rint`.
        DTypeKind::Bool => rint(a).map_err(|e| e.renamed("rint", "round")),
        DTypeKind::SignedInt | DTypeKind::UnsignedInt => Ok(a.clone()),
    }
}

/// numpy's `round(a, decimals)`: to `decimals` places after the point (before it, when negative),
/// halfway cases to even, computed as numpy does: `rint(a * 10^d) / 10^d` in `a`'s dtype (so
/// `round(2.675, 2)` is `2.68` where the product is `267.5`, and a product that overflows gives
/// `inf`); complex numbers part by part, as numpy rounds them (so an infinite part stays
/// infinite); integers are returned unchanged for `d >= 0` and otherwise rounded in float64 and
/// cast back (wrapping, as numpy's cast does); bools only for `d == 0` (numpy's `rint`, to
/// `float16`): numpy refuses to write the scaled values back into a bool array. `10^d` is numpy's
/// `power_of_ten` (exact to `1e8`, then multiplied by ten).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F32).unwrap();
/// assert_eq!(pt::round_decimals(&a, 2).unwrap().dtype(), DType::F32);
/// let i = pt::placeholder("i", [3], DType::I16).unwrap();
/// assert_eq!(pt::round_decimals(&i, -1).unwrap().dtype(), DType::I16);
/// ```
#[track_caller]
pub fn round_decimals(a: &Array, decimals: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "round";
    // numpy's power_of_ten.
    let power_of_ten = |n: u64| -> f64 {
        const EXACT: [f64; 9] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8];
        match usize::try_from(n).ok().and_then(|n| EXACT.get(n)) {
            Some(&p) => p,
            None => {
                let mut p: f64 = 1e9;
                let mut k = 9;
                while k < n && p.is_finite() {
                    p *= 10.0;
                    k += 1;
                }
                p
            }
        }
    };
    let f = power_of_ten(decimals.unsigned_abs());
    let rename = |e: Error| e.renamed("multiply", op).renamed("divide", op);
    if a.dtype().is_complex() && decimals != 0 {
        let (re, im) = (round_decimals(&real(a)?, decimals)?, round_decimals(&imag(a)?, decimals)?);
        return from_parts(op, &re, &im);
    }
    if a.dtype() == DType::Bool && decimals != 0 {
        return Err(dtype_error(
            op,
            a.dtype(),
            &[&a.into()],
            "numpy cannot write values scaled by a power of ten back into a bool array (decimals must be 0)",
        ));
    }
    match (a.dtype().is_inexact(), decimals) {
        (_, 0) => round(a),
        (true, d) if d > 0 => divide(&rint(&multiply(a, f).map_err(rename)?)?, f).map_err(rename),
        (true, _) => multiply(&rint(&divide(a, f).map_err(rename)?)?, f).map_err(rename),
        (false, d) if d > 0 => Ok(a.clone()),
        (false, _) => {
            let x = astype(a, DType::F64)?;
            astype(&multiply(&rint(&divide(&x, f)?)?, f)?, a.dtype())
        }
    }
}

/// `1 / a` (numpy `reciprocal`) in `a`'s dtype. Integers (and bools, as `int8`) follow numpy's
/// loop, which converts `1.0 / a` back to the integer dtype: 0 for `|a| > 1`, and for `a == 0`
/// what the conversion of `inf` gives (the smallest value of 32- and 64-bit signed dtypes, 0 for
/// the others). Complex numbers follow numpy's loop too, Smith's formula, which differs from
/// `1 / a` in signs of zero and where a part is subnormal (see `complex_reciprocal`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::reciprocal(&pt::placeholder("a", [3], DType::F32).unwrap()).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn reciprocal(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype().is_complex() {
        return complex_reciprocal(a);
    }
    if a.dtype().is_inexact() {
        return divide(1, a);
    }
    let int = if a.dtype() == DType::Bool { DType::I8 } else { a.dtype() };
    astype(&divide(1.0, &astype(a, DType::F64)?)?, int)
}

/// numpy's complex `reciprocal`, which is not `1 / z` (numpy's division scales differently): Smith's
/// formula on the parts in their own precision. Where `|im| <= |re|`, `r = im / re`,
/// `d = re + im * r` and the result is `1 / d - (r / d) i`; elsewhere `r = re / im`,
/// `d = re * r + im` and the result is `r / d - (1 / d) i`. So `1 / (x + 0i)` has imaginary part
/// `-0.0`, and a subnormal imaginary unit gives `0 - inf i` where `1 / z` gives a NaN real part.
fn complex_reciprocal(a: &Array) -> Result<Array> {
    let (re, im) = (real(a)?, imag(a)?);
    let real_dtype = re.dtype();
    elementwise("reciprocal", &[&re.into(), &im.into()], real_dtype, |e| {
        let one = || Expr::constant(Scalar::F64(1.0).cast(real_dtype));
        let (re, im) = (&e[0], &e[1]);
        let div = |a: Expr, b: Expr| a.binary(BinaryOp::Div, b);
        let mul = |a: &Expr, b: &Expr| a.clone().binary(BinaryOp::Mul, b.clone());
        let abs = |x: &Expr| Expr::call(Func::Abs, vec![x.clone()]);
        let r1 = div(im.clone(), re.clone());
        let d1 = re.clone().binary(BinaryOp::Add, mul(im, &r1));
        let r2 = div(re.clone(), im.clone());
        let d2 = mul(re, &r2).binary(BinaryOp::Add, im.clone());
        let real_first = abs(im).compare(CompareOp::Le, abs(re));
        let out_re = Expr::if_then_else(real_first.clone(), div(one(), d1.clone()), div(r2, d2.clone()));
        let out_im =
            Expr::if_then_else(real_first, div(r1.unary(UnaryOp::Neg), d1), div(one().unary(UnaryOp::Neg), d2));
        Ok(Expr::call(Func::MakeComplex, vec![out_re, out_im]))
    })
}

/// numpy's shifts, composed from wrapping integer arithmetic (the same bits on every backend):
/// `a << s` is `a * 2**s` and `a >> s` is `a // 2**s` for `0 <= s` below the width (the top bit
/// of a signed dtype aside: `2**(bits-1)` is negative there); a shift by the width or more, or by a
/// negative amount, gives 0 (left) or the sign fill, `-1` for negative `a` (right), as numpy's
/// `npy_lshift`/`npy_rshift` do. Bools shift as `int8`, as in numpy.
fn shift(op: &str, a: Operand, b: Operand, left: bool) -> Result<Array> {
    use pytato_core::scalar::Scalar;
    let operands = [&a, &b];
    let promoted = promote(&operands)?;
    let dtype = match promoted.kind() {
        DTypeKind::Bool => DType::I8,
        DTypeKind::SignedInt | DTypeKind::UnsignedInt => promoted,
        _ => return Err(dtype_error(op, promoted, &operands, "shifts take integers")),
    };
    let bits = 8 * dtype.itemsize() as i64;
    let signed = dtype.kind() == DTypeKind::SignedInt;
    let int = |v: i64| Expr::constant(Scalar::I64(v).cast(dtype));
    elementwise(op, &operands, dtype, |mut e| {
        let s = e.pop().expect("two operands");
        let x = e.pop().expect("two operands");
        // Shifts by the full width of a signed right shift are sign fills too: 2**(bits-1) < 0.
        let limit = if signed && !left { bits - 1 } else { bits };
        let mut in_range = s.clone().compare(CompareOp::Lt, int(limit));
        if signed {
            in_range = s.clone().compare(CompareOp::Ge, int(0)).binary(BinaryOp::LogicalAnd, in_range);
        }
        let power = int(2).binary(BinaryOp::Pow, s);
        let (shifted, outside) = if left {
            (x.binary(BinaryOp::Mul, power), int(0))
        } else if signed {
            let fill = Expr::if_then_else(x.clone().compare(CompareOp::Lt, int(0)), int(-1), int(0));
            (x.binary(BinaryOp::FloorDiv, power), fill)
        } else {
            (x.binary(BinaryOp::FloorDiv, power), int(0))
        };
        Ok(Expr::if_then_else(in_range, shifted, outside))
    })
}

/// `a << b` (numpy `left_shift`, the Array API's `bitwise_left_shift`) for integers: bits shifted
/// out are lost (wrapping), shifts by the width or more, or by negative amounts, give 0.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::U8).unwrap();
/// assert_eq!(pt::left_shift(&a, 3).unwrap().dtype(), DType::U8);
/// ```
#[track_caller]
pub fn left_shift(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    shift("left_shift", a.into(), b.into(), true)
}

/// `a >> b` (numpy `right_shift`, the Array API's `bitwise_right_shift`) for integers: arithmetic
/// for signed dtypes (rounding toward -inf); shifts by the width or more, or by negative amounts,
/// give the sign fill (`-1` for negative `a`, else 0).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I16).unwrap();
/// assert_eq!(pt::right_shift(&a, 1).unwrap().dtype(), DType::I16);
/// ```
#[track_caller]
pub fn right_shift(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    shift("right_shift", a.into(), b.into(), false)
}

// ---------------------------------------------------------------------------------------------
// More of the Array API's element-wise functions, composed from the ones above (numpy 2 semantics).

/// `true` where `a` is neither infinite nor NaN (numpy `isfinite`); always true for integers and
/// bools. A complex number is finite when both parts are.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::isfinite(&pt::placeholder("a", [3], DType::F32).unwrap()).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn isfinite(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype().is_inexact() {
        // `a - a` is NaN exactly where `a` is infinite or NaN (in either part).
        logical_not(&isnan(&subtract(a, a)?)?)
    } else {
        equal(a, a)
    }
}

/// `true` where `a` is positive or negative infinity (numpy `isinf`); always false for integers and
/// bools. A complex number is infinite when either part is.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::isinf(&pt::placeholder("a", [3], DType::C64).unwrap()).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn isinf(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    match a.dtype().kind() {
        DTypeKind::Complex => logical_or(&isinf(&real(a)?)?, &isinf(&imag(a)?)?),
        DTypeKind::Float => logical_and(&logical_not(&isnan(a)?)?, &isnan(&subtract(a, a)?)?),
        _ => not_equal(a, a),
    }
}

/// Exclusive or of the truth values of `a` and `b` (numpy `logical_xor`); the result is bool.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F64).unwrap();
/// assert_eq!(pt::logical_xor(&a, true).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn logical_xor(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (a, b) = (a.into(), b.into());
    let either = logical_or(a.clone(), b.clone())?;
    let both = logical_and(a, b)?;
    logical_and(&either, &logical_not(&both)?)
}

/// `a * a` (numpy `square`); bools square as `int8`, as numpy's does.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::square(&pt::placeholder("a", [3], DType::Bool).unwrap()).unwrap().dtype(), DType::I8);
/// ```
#[track_caller]
pub fn square(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let a = if a.dtype() == DType::Bool { astype(a, DType::I8)? } else { a.clone() };
    multiply(&a, &a)
}

/// `+a` (numpy `positive`): the same values; bools are an error, as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert!(pt::positive(&pt::placeholder("a", [3], DType::Bool).unwrap()).is_err());
/// ```
#[track_caller]
pub fn positive(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype() == DType::Bool {
        return Err(dtype_error("positive", a.dtype(), &[&a.into()], "bools have no unary +"));
    }
    Ok(a.clone())
}

/// Round toward zero (numpy `trunc`); integer and bool input is returned unchanged, as numpy 2
/// keeps its dtype; `-0.5` truncates to `-0.0`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::trunc(&pt::placeholder("a", [3], DType::F64).unwrap()).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn trunc(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    match a.dtype().kind() {
        DTypeKind::Float => where_(&less(a, 0)?, &ceil(a)?, &floor(a)?),
        _ => round_with(Func::Floor, a)
            .map_err(|_| dtype_error("trunc", a.dtype(), &[&a.into()], "complex numbers cannot be rounded")),
    }
}

/// The sign of `a` (numpy `sign`): `-1`, `0` or `1` in `a`'s dtype, NaN for NaN, `0.0` for `-0.0`.
/// Bools are an error, as in numpy. For complex numbers numpy 2's `z / |z|` (0 for 0): a part that
/// is infinite (the other finite or NaN) gives `±1` along it, both infinite give NaN.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::sign(&pt::placeholder("a", [3], DType::U8).unwrap()).unwrap().dtype(), DType::U8);
/// ```
#[track_caller]
pub fn sign(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    match a.dtype().kind() {
        DTypeKind::Bool => Err(dtype_error("sign", a.dtype(), &[&a.into()], "bools have no sign")),
        DTypeKind::UnsignedInt => astype(&where_(&greater(a, 0)?, 1, 0)?, a.dtype()),
        DTypeKind::SignedInt => astype(&where_(&greater(a, 0)?, 1, where_(&less(a, 0)?, -1, 0)?)?, a.dtype()),
        // NaN compares false everywhere and passes through; -0.0 == 0 becomes +0.0.
        DTypeKind::Float => where_(&greater(a, 0)?, 1, where_(&less(a, 0)?, -1, where_(&equal(a, 0)?, 0, a)?)?),
        DTypeKind::Complex => complex_sign(a),
    }
}

/// numpy 2's complex sign, part by part: `|z|` zero, infinite (which part is) or neither.
fn complex_sign(z: &Array) -> Result<Array> {
    // numpy's sign divides by C's `hypot`, not by its own `absolute` (`abs`).
    let (re, im) = (real(z)?, imag(z)?);
    let modulus = hypot(&re, &im)?;
    let (re_inf, im_inf) = (isinf(&re)?, isinf(&im)?);
    let zero = equal(&modulus, 0)?;
    let infinite = isinf(&modulus)?;
    // |z| infinite: numpy's loop asks the real part first. An infinite one gives ±1 (NaN where
    // both parts are infinite); a finite one gives ±i, whether the imaginary part is infinite or
    // |z| overflowed (`sign(-1e308 - 1.6e308j)` is -1j in numpy, and was 0 here).
    let re_inf_part = where_(&re_inf, &where_(&im_inf, f64::NAN, &sign(&re)?)?, 0)?;
    let nan_or_zero = astype(&where_(&im_inf, f64::NAN, 0)?, im.dtype())?;
    let im_inf_part = where_(&re_inf, &nan_or_zero, &sign(&im)?)?;
    let re_out = where_(&zero, 0, &where_(&infinite, &re_inf_part, &divide(&re, &modulus)?)?)?;
    let im_out = where_(&zero, 0, &where_(&infinite, &im_inf_part, &divide(&im, &modulus)?)?)?;
    // Put together part by part: `re + im·i` would turn a real part of -0.0 into +0.0.
    complex_from_parts(&re_out, &im_out)
}

/// `a` limited to `[min, max]` (numpy `clip`, the Array API's `clip`): `minimum(maximum(a, min),
/// max)`, so NaN propagates and `max` wins where `min > max`; either bound may be absent. The
/// bounds promote with `a` as numpy's do. On an integer array, a Python-int bound beyond the
/// dtype's range on its own side (`min` at or below the least value, `max` at or above the
/// greatest) bounds nothing and is dropped, as numpy's `clip` does, so `clip(uint8, -1, 300)` is
/// the array itself; one beyond on the other side is out of range (`OverflowError` in numpy).
///
/// Ties differ only in the sign of zero, and numpy's loop decides them by its strides: with both
/// bounds the same for every element (numpy's common case, a scalar or a size-1 array: stride 0)
/// it keeps `a` (`clip(-0.0, 0, 1)` is `-0.0`), otherwise the bound (`maximum`'s rule). Here real
/// floats between two bounds of size 1 keep `a`; every other case takes the bound. Complex
/// numbers between two bounds follow numpy's own clip loop, whose order differs from `maximum`'s
/// (see `complex_clip`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F32).unwrap();
/// assert_eq!(pt::clip(&a, Some(0.into()), Some(1.into())).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn clip(a: &Array, min: Option<Operand>, max: Option<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    // numpy's `_clip`: a Python-int bound beyond an integer dtype on its own side bounds nothing.
    let (min, max) = match a.dtype().int_range().filter(|_| a.dtype().is_integer()) {
        Some((least, greatest)) => (
            min.filter(|m| !matches!(m, Operand::Scalar(WeakScalar::Int(v)) if *v <= least)),
            max.filter(|m| !matches!(m, Operand::Scalar(WeakScalar::Int(v)) if *v >= greatest)),
        ),
        None => (min, max),
    };
    // One dtype for all three, as numpy's three-input ufunc promotes them together (pairwise
    // promotion is not associative: int8, uint16, float32 give float32 together).
    let operand: Operand = a.into();
    let all: Vec<&Operand> = std::iter::once(&operand).chain(min.iter()).chain(max.iter()).collect();
    let dtype = promote(&all)?;
    let a = &astype(a, dtype)?;
    let size_one = |o: &Operand| match o {
        Operand::Scalar(_) => true,
        Operand::Array(b) => b.shape().dims().iter().all(|d| d.as_int() == Some(1)),
    };
    if let (Some(low), Some(high)) = (&min, &max)
        && dtype.kind() == DTypeKind::Float
        && size_one(low)
        && size_one(high)
    {
        let raised = bound_keeping_ties(a, low.clone(), CompareOp::Gt)?;
        return bound_keeping_ties(&raised, high.clone(), CompareOp::Lt);
    }
    if let (Some(low), Some(high)) = (&min, &max)
        && dtype.is_complex()
    {
        return complex_clip(a, low, high);
    }
    let low = match min {
        Some(m) => maximum(a, m)?,
        None => a.clone(),
    };
    match max {
        Some(m) => minimum(&low, m),
        None => Ok(low),
    }
}

/// numpy's clip loop for complex numbers between two bounds, which orders them by its
/// `PyArray_CGT`/`PyArray_CLT` macros (the real parts, or the imaginary parts where the real parts
/// are equal, without the NaN tests of `maximum`'s comparisons) and keeps a value with a NaN part:
/// `raised = a > low || isnan(a) ? a : low`, then `raised < high || isnan(raised) ? raised : high`.
/// Ties take the bound, whatever the strides. (Found by a sweep: `maximum` then `minimum`
/// differed from numpy in 290 of 4,096 triples of signed zeros, NaN parts and ones.) With one bound
/// numpy calls `maximum` or `minimum`, and so does [`clip`].
fn complex_clip(a: &Array, low: &Operand, high: &Operand) -> Result<Array> {
    elementwise("clip", &[&a.into(), low, high], a.dtype(), |mut e| {
        let high = e.pop().expect("three operands");
        let low = e.pop().expect("three operands");
        let x = e.pop().expect("three operands");
        let part = |f: Func, v: &Expr| Expr::call(f, vec![v.clone()]);
        let beyond = |v: &Expr, bound: &Expr, order: CompareOp| {
            Expr::if_then_else(
                part(Func::Real, v).compare(CompareOp::Eq, part(Func::Real, bound)),
                part(Func::Imag, v).compare(order, part(Func::Imag, bound)),
                part(Func::Real, v).compare(order, part(Func::Real, bound)),
            )
        };
        let keeps = |v: &Expr, bound: &Expr, order: CompareOp| {
            part(Func::IsNan, v).binary(BinaryOp::LogicalOr, beyond(v, bound, order))
        };
        let raised = Expr::if_then_else(keeps(&x, &low, CompareOp::Gt), x.clone(), low);
        Ok(Expr::if_then_else(keeps(&raised, &high, CompareOp::Lt), raised, high))
    })
}

/// `bound` where it is NaN or passes `a` under `beyond` (`Gt`: a lower bound above `a`), else
/// `a`: one side of numpy's clip with a constant bound, which keeps `a` at a tie.
fn bound_keeping_ties(a: &Array, bound: Operand, beyond: CompareOp) -> Result<Array> {
    elementwise("clip", &[&a.into(), &bound], a.dtype(), |mut e| {
        let bound = e.pop().expect("two operands");
        let x = e.pop().expect("two operands");
        let wins = Expr::call(Func::IsNan, vec![bound.clone()])
            .binary(BinaryOp::LogicalOr, bound.clone().compare(beyond, x.clone()));
        Ok(Expr::if_then_else(wins, bound, x))
    })
}

// ---------------------------------------------------------------------------------------------
// Functions numpy defines by bits: NaN-ignoring extrema, the spacing of floats, fractional parts.

/// `a` where `b` is NaN or `a` wins under `cmp`, else `b`: numpy's `fmax`/`fmin` loops (a NaN `a`
/// gives `b`; both NaN give NaN). Complex numbers order lexicographically, NaN in either part
/// counting as NaN. Integers and bools have no NaN: `maximum`/`minimum`.
///
/// Ties matter only for the sign of zero (`fmax(-0.0, 0.0)`). numpy's float16 and complex loops
/// keep `a`; its float32 and float64 loops keep `b` in their SIMD body and `a` in their scalar
/// tail, so its sign depends on where an element falls in the array. Here float32 and float64
/// keep `b`, as numpy does for almost every element (and as `maximum` does), the others `a`.
fn nan_ignoring_extremum(op: &str, a: Operand, b: Operand, wins: CompareOp) -> Result<Array> {
    let dtype = promote(&[&a, &b])?;
    if !dtype.is_inexact() {
        return if wins == CompareOp::Gt { maximum(a, b) } else { minimum(a, b) };
    }
    let cmp = match (wins, dtype) {
        (_, DType::F32 | DType::F64) => wins,
        (CompareOp::Gt, _) => CompareOp::Ge,
        _ => CompareOp::Le,
    };
    elementwise(op, &[&a, &b], dtype, |mut e| {
        let y = e.pop().expect("two operands");
        let x = e.pop().expect("two operands");
        let first =
            Expr::call(Func::IsNan, vec![y.clone()]).binary(BinaryOp::LogicalOr, x.clone().compare(cmp, y.clone()));
        Ok(Expr::if_then_else(first, x, y))
    })
}

/// Elementwise maximum ignoring NaN (numpy `fmax`): NaN only where both operands are NaN.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F32).unwrap();
/// assert_eq!(pt::fmax(&a, 0).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn fmax(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    nan_ignoring_extremum("fmax", a.into(), b.into(), CompareOp::Gt)
}

/// Elementwise minimum ignoring NaN (numpy `fmin`): NaN only where both operands are NaN.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::C128).unwrap();
/// assert_eq!(pt::fmin(&a, &a).unwrap().dtype(), DType::C128);
/// ```
#[track_caller]
pub fn fmin(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    nan_ignoring_extremum("fmin", a.into(), b.into(), CompareOp::Lt)
}

/// `a` as the float dtype numpy's math loops read it in (`int8` as `float16`, `int32` as
/// `float64`); complex numbers are an error naming `op`.
fn real_float_operand(op: &str, a: &Array) -> Result<Array> {
    if a.dtype().is_complex() {
        return Err(dtype_error(op, a.dtype(), &[&a.into()], "needs a real operand"));
    }
    astype(a, a.dtype().float_for_math())
}

/// The distance from `a` to the next float of larger magnitude, with `a`'s sign (numpy
/// `spacing`): the smallest subnormal for `±0.0` (positive), NaN for infinities and NaN,
/// infinity for the largest finite value. Integers and bools are read as numpy's loops read them
/// (`int8` as `float16`). numpy's float16 loop differs: its spacing is never negative, and for a
/// negative value it is the step toward zero (`spacing(-1.0)` is `2^-11`, `spacing(-65504)` is 32).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::spacing(&pt::placeholder("a", [3], DType::I8).unwrap()).unwrap().dtype(), DType::F16);
/// ```
#[track_caller]
pub fn spacing(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let x = real_float_operand("spacing", a)?;
    let smallest = nextafter(&zeros_like(&x, None)?, 1.0)?;
    let step = if x.dtype() == DType::F16 {
        let magnitude = abs(&x)?;
        let toward_zero = subtract(&magnitude, &nextafter(&magnitude, 0.0)?)?;
        where_(&less(&x, 0)?, &toward_zero, &subtract(&nextafter(&x, f64::INFINITY)?, &x)?)?
    } else {
        subtract(&nextafter(&x, &copysign(f64::INFINITY, &x)?)?, &x)?
    };
    where_(&isinf(&x)?, f64::NAN, &where_(&equal(&x, 0)?, &smallest, &step)?)
}

/// The fractional and integral parts of `a`, both with `a`'s sign (numpy `modf`): `modf(-3.0)`
/// is `(-0.0, -3.0)`, `modf(-inf)` is `(-0.0, -inf)`, NaN gives NaNs. Integers and bools are read
/// as numpy's loops read them (`int8` as `float16`); complex numbers are an error.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let (fraction, integral) = pt::modf(&pt::placeholder("a", [3], DType::F32).unwrap()).unwrap();
/// assert_eq!((fraction.dtype(), integral.dtype()), (DType::F32, DType::F32));
/// ```
#[track_caller]
pub fn modf(a: &Array) -> Result<(Array, Array)> {
    let _site = pytato_core::created_at::enter();
    let x = real_float_operand("modf", a)?;
    let integral = trunc(&x)?;
    // `x - trunc(x)` is exact; its sign is lost where it is zero, and it is NaN for infinities.
    let fraction = where_(&isinf(&x)?, &copysign(0.0, &x)?, &copysign(&subtract(&x, &integral)?, &x)?)?;
    Ok((fraction, integral))
}

/// The remainder of `a / b` truncated toward zero, with the sign of `a` (numpy `fmod`, C's `%`
/// and `fmod`; [`remainder`](pytato_core::arith::remainder) has the sign of `b`). Exact for floats:
/// NaN where `b` is 0 or `a` infinite, `a` where `b` is infinite. Integers by zero give 0, as in
/// numpy; bools compute as `int8`; complex numbers are an error.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I16).unwrap();
/// assert_eq!(pt::fmod(&a, 3).unwrap().dtype(), DType::I16);
/// assert_eq!(pt::fmod(&a, 2.5).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn fmod(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (a, b) = (a.into(), b.into());
    let promoted = promote(&[&a, &b])?;
    match promoted.kind() {
        DTypeKind::Complex => Err(dtype_error("fmod", promoted, &[&a, &b], "needs real operands")),
        DTypeKind::Float => elementwise("fmod", &[&a, &b], promoted, |e| {
            // float16's fmod is float32's, rounded: exact, so the float16 value itself.
            Ok(if promoted == DType::F16 {
                let wide: Vec<Expr> = e.into_iter().map(|x| x.cast(DType::F32)).collect();
                Expr::call(Func::Fmod, wide).cast(DType::F16)
            } else {
                Expr::call(Func::Fmod, e)
            })
        }),
        _ => {
            // The floor remainder (sign of `b`, 0 for `b == 0`) moved by `b` where its sign is
            // not `a`'s: `|r| < |b|` with `r` and `b` of one sign, so `r - b` cannot overflow.
            // (Bools: `remainder`'s int8.)
            let r = pytato_core::arith::remainder(a.clone(), b.clone())?;
            let signs_differ = not_equal(&less(&r, 0)?, &less(a.clone(), 0)?)?;
            let moved = logical_and(&not_equal(&r, 0)?, &signs_differ)?;
            where_(&moved, &subtract(&r, b)?, &r)
        }
    }
}

/// numpy's `gcd` or `lcm` of two integer operands, promoted together (numpy has no loop for bools
/// alone, floats or complex numbers).
fn gcd_lcm(func: Func, a: Operand, b: Operand) -> Result<Array> {
    let op = func.name();
    let dtype = promote(&[&a, &b])?;
    if !dtype.is_integer() {
        return Err(dtype_error(op, dtype, &[&a, &b], "needs integer operands"));
    }
    elementwise(op, &[&a, &b], dtype, |e| Ok(Expr::call(func, e)))
}

/// The greatest common divisor of `|a|` and `|b|` (numpy `gcd`), for integers of the promoted
/// dtype; `gcd(0, 0)` is 0. As in numpy, the smallest value of a signed dtype, whose magnitude the
/// dtype cannot hold, gives itself where its magnitude is the answer (`gcd(-128, 0)` in `int8`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I8).unwrap();
/// assert_eq!(pt::gcd(&a, 6).unwrap().dtype(), DType::I8);
/// assert!(pt::gcd(&pt::placeholder("x", [3], DType::F64).unwrap(), 6).is_err());
/// ```
#[track_caller]
pub fn gcd(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    gcd_lcm(Func::Gcd, a.into(), b.into())
}

/// The least common multiple of `|a|` and `|b|` (numpy `lcm`), for integers of the promoted dtype:
/// 0 if either is 0; a multiple beyond the dtype wraps, as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::U16).unwrap();
/// assert_eq!(pt::lcm(&a, 4).unwrap().dtype(), DType::U16);
/// ```
#[track_caller]
pub fn lcm(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    gcd_lcm(Func::Lcm, a.into(), b.into())
}

/// `x · 2ⁿ` (numpy `ldexp`), rounded once: exact unless the result is subnormal, `±inf` where it
/// overflows, `±0`, `±inf` and NaN unchanged. `x` is read as numpy's loops read it (`int8` as
/// `float16`; a Python float as `float64`, a bool as `float16`, an int as `float16` against an
/// integer array `n` and as `float64` otherwise), and the result has that float dtype. `n` is an
/// integer or bool array other than `uint64` (which numpy's `int64` loop cannot take), or a
/// Python integer within `int32` (numpy's loop for it).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [3], DType::F32).unwrap();
/// let n = pt::placeholder("n", [3], DType::I64).unwrap();
/// assert_eq!(pt::ldexp(&x, &n).unwrap().dtype(), DType::F32);
/// assert!(pt::ldexp(&x, 2.0).is_err());
/// ```
#[track_caller]
pub fn ldexp(x: impl Into<Operand>, n: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (x, n) = (x.into(), n.into());
    let integer_exponent = matches!(&n, Operand::Array(e) if e.dtype().is_integer());
    let dtype = match &x {
        Operand::Array(a) => a.dtype().float_for_math(),
        // numpy's loops for a Python number: a float reads as float64 and a bool as float16; an
        // int as float16 against an integer array (the first loop, `ei`, takes it: 70000 is inf
        // there), as float64 otherwise.
        Operand::Scalar(WeakScalar::Float(_)) => DType::F64,
        Operand::Scalar(WeakScalar::Bool(_)) => DType::F16,
        Operand::Scalar(WeakScalar::Int(_)) if integer_exponent => DType::F16,
        Operand::Scalar(WeakScalar::Int(_)) => DType::F64,
        Operand::Scalar(WeakScalar::Complex(_)) => DType::C128,
    };
    if dtype.is_complex() {
        return Err(dtype_error("ldexp", dtype, &[&x, &n], "needs a real mantissa"));
    }
    let mantissa: Operand = match &x {
        Operand::Array(a) => astype(a, dtype)?.into(),
        Operand::Scalar(v) => pytato_core::basic::full(Vec::<i64>::new(), *v, dtype)?.into(),
    };
    // Beyond ±2200 every result has saturated (to 0 or infinity): the exponent is clamped there,
    // where the mantissa's float dtype holds it exactly.
    const SATURATED: i128 = 2200;
    let exponent: Operand = match &n {
        Operand::Array(e) if (e.dtype().is_integer() && e.dtype() != DType::U64) || e.dtype() == DType::Bool => {
            clip(&astype(e, DType::I64)?, Some((-SATURATED as i64).into()), Some((SATURATED as i64).into()))?.into()
        }
        Operand::Scalar(WeakScalar::Int(v)) => {
            if i32::try_from(*v).is_err() {
                return Err(Error::ScalarOutOfRange { value: v.to_string(), dtype: DType::I32 });
            }
            Operand::Scalar(WeakScalar::Int((*v).clamp(-SATURATED, SATURATED)))
        }
        Operand::Scalar(WeakScalar::Bool(b)) => Operand::Scalar(WeakScalar::Int((*b).into())),
        _ => {
            let dtype = promote(&[&n])?;
            return Err(dtype_error("ldexp", dtype, &[&x, &n], "needs an integer exponent other than uint64"));
        }
    };
    // float16 computes in float32 and rounds once: the float32 result is exact down to where the
    // float16 result is 0.
    let compute = if dtype == DType::F16 { DType::F32 } else { dtype };
    let scaled = elementwise("ldexp", &[&mantissa, &exponent], compute, |e| Ok(Expr::call(Func::Ldexp, e)))?;
    astype(&scaled, dtype)
}

/// `(m, e)` with `x = m · 2^e` and `0.5 <= |m| < 1` (numpy `frexp`): `m` in `x`'s float dtype
/// as numpy's loops read it (`int8` as `float16`), `e` as `int32`; `(x, 0)` for `±0`, `±inf` and
/// NaN. Complex numbers are an error.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let (m, e) = pt::frexp(&pt::placeholder("x", [3], DType::I16).unwrap()).unwrap();
/// assert_eq!((m.dtype(), e.dtype()), (DType::F32, DType::I32));
/// ```
#[track_caller]
pub fn frexp(x: &Array) -> Result<(Array, Array)> {
    let _site = pytato_core::created_at::enter();
    let x = real_float_operand("frexp", x)?;
    let dtype = x.dtype();
    // float16 in float32: both parts are exact there.
    let wide = if dtype == DType::F16 { astype(&x, DType::F32)? } else { x };
    let part = |func: Func| elementwise("frexp", &[&(&wide).into()], wide.dtype(), |e| Ok(Expr::call(func, e)));
    Ok((astype(&part(Func::FrexpMantissa)?, dtype)?, part(Func::FrexpExponent)?))
}

/// The real cube root (numpy `cbrt`): `cbrt(-8.0)` is `-2.0`. Integers and bools compute in
/// floating point as numpy's loops do; complex numbers are an error (numpy has no complex loop).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::cbrt(&pt::placeholder("a", [3], DType::I32).unwrap()).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn cbrt(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype().is_complex() {
        return Err(dtype_error("cbrt", a.dtype(), &[&a.into()], "needs a real operand"));
    }
    math(Func::Cbrt, a)
}

/// `2 ** a` (numpy `exp2`). Integers and bools compute in floating point as numpy's loops do;
/// for complex numbers numpy's `exp(a · ln 2)`, both parts scaled (so an infinite part stays one).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::exp2(&pt::placeholder("a", [3], DType::C64).unwrap()).unwrap().dtype(), DType::C64);
/// ```
#[track_caller]
pub fn exp2(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.dtype().is_complex() {
        let ln2 = std::f64::consts::LN_2;
        return exp(&from_parts("exp2", &multiply(&real(a)?, ln2)?, &multiply(&imag(a)?, ln2)?)?);
    }
    math(Func::Exp2, a)
}

/// `log2(2 ** a + 2 ** b)` without overflow (numpy `logaddexp2`), by numpy's formula: `a + 1`
/// where `a == b`, else the larger plus `log2(1 + 2 ** -|a - b|)` (as `log1p(...) · log2 e`);
/// NaN where either is. float16 computes in float32 and rounds once, as numpy's loop.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let x = pt::placeholder("x", [3], DType::F32).unwrap();
/// assert_eq!(pt::logaddexp2(&x, 1.0).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn logaddexp2(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (a, b) = (a.into(), b.into());
    let dtype = real_float_dtype("logaddexp2", &a, &b)?;
    let compute = if dtype == DType::F16 { DType::F32 } else { dtype };
    elementwise("logaddexp2", &[&a, &b], dtype, |mut e| {
        let y = e.pop().expect("two operands").cast(compute);
        let x = e.pop().expect("two operands").cast(compute);
        let c = |v: f64| Expr::Const(Scalar::F64(v).cast(compute));
        let log2_1p = |v: Expr| c(std::f64::consts::LOG2_E).binary(BinaryOp::Mul, Expr::call(Func::Log1p, vec![v]));
        let exp2 = |v: Expr| Expr::call(Func::Exp2, vec![v]);
        let d = x.clone().binary(BinaryOp::Sub, y.clone());
        let above = x.clone().binary(BinaryOp::Add, log2_1p(exp2(d.clone().unary(UnaryOp::Neg))));
        let below = y.clone().binary(BinaryOp::Add, log2_1p(exp2(d.clone())));
        let zero = c(0.0);
        let unequal = Expr::if_then_else(
            d.clone().compare(CompareOp::Gt, zero.clone()),
            above,
            Expr::if_then_else(d.clone().compare(CompareOp::Le, zero), below, d),
        );
        let value = Expr::if_then_else(x.clone().compare(CompareOp::Eq, y), x.binary(BinaryOp::Add, c(1.0)), unequal);
        Ok(if compute == dtype { value } else { value.cast(dtype) })
    })
}
