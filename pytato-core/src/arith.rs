//! Arithmetic, bitwise operations, comparisons and logic on arrays and scalars, with numpy 2's
//! broadcasting and dtype rules, and `astype`: the elementwise constructors the operators
//! ([`crate::ops`]), indexing and assignment rest on. The rest of numpy's elementwise functions are
//! in `pytato-frontend`, built from [`binary`], [`unary`] and [`LambdaBuilder`].
//!
//! Each function takes arrays or Rust scalars ([`Operand`]) and returns the array expression for the
//! result, or an error naming the operation and the operands' shapes and dtypes. Every result is an
//! `IndexLambda`.

use crate::array::Array;
use crate::dtype::{DType, DTypeKind, WeakScalar};
use crate::error::{Error, Result};
use crate::expr::{BinaryOp, CompareOp, Expr, Func, UnaryOp};
use crate::scalar::Scalar;

use crate::operand::{LambdaBuilder, Operand, cast_expr, dtype_error, elementwise, promote};

// ---------------------------------------------------------------------------------------------
// Arithmetic.

/// Applies `rule` (promoted dtype → computation dtype and operator, or why the dtype is refused)
/// to two operands: the building block of numpy's binary ufuncs.
pub fn binary(
    op: &str,
    a: Operand,
    b: Operand,
    rule: impl FnOnce(DType) -> std::result::Result<(DType, BinaryOp), &'static str>,
) -> Result<Array> {
    let operands = [&a, &b];
    let promoted = promote(&operands)?;
    let (dtype, bin) = rule(promoted).map_err(|why| dtype_error(op, promoted, &operands, why))?;
    elementwise(op, &operands, dtype, |mut e| {
        let rhs = e.pop().expect("two operands");
        let lhs = e.pop().expect("two operands");
        Ok(lhs.binary(bin, rhs))
    })
}

/// `a + b` (numpy `add`); on bools this is logical or.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::U8).unwrap();
/// assert_eq!(pt::add(&a, 1).unwrap().dtype(), DType::U8);       // a weak scalar keeps uint8
/// assert_eq!(pt::add(&a, 1.5).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn add(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    binary("add", a.into(), b.into(), |d| Ok((d, if d == DType::Bool { BinaryOp::LogicalOr } else { BinaryOp::Add })))
}

/// `a - b` (numpy `subtract`); bools are an error, as in numpy.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I32).unwrap();
/// assert_eq!(pt::subtract(1, &a).unwrap().dtype(), DType::I32);
/// ```
#[track_caller]
pub fn subtract(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    binary("subtract", a.into(), b.into(), |d| {
        if d == DType::Bool {
            Err("boolean subtract is not supported; use logical_xor or bitwise_xor")
        } else {
            Ok((d, BinaryOp::Sub))
        }
    })
}

/// `a * b` (numpy `multiply`); on bools this is logical and.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 1], DType::F32).unwrap();
/// let b = pt::placeholder("b", [3], DType::F32).unwrap();
/// assert_eq!(pt::multiply(&a, &b).unwrap().shape().to_string(), "(2, 3)");
/// ```
#[track_caller]
pub fn multiply(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    binary("multiply", a.into(), b.into(), |d| {
        Ok((d, if d == DType::Bool { BinaryOp::LogicalAnd } else { BinaryOp::Mul }))
    })
}

/// `a / b` (numpy `true_divide`): integers and bools divide in `float64`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I8).unwrap();
/// assert_eq!(pt::divide(&a, &a).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn divide(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    let (a, b) = (a.into(), b.into());
    let (a, b) = (integer_operand_as_float(a.clone(), &b), integer_operand_as_float(b, &a));
    binary("divide", a, b, |d| Ok((if d.is_inexact() { d } else { DType::F64 }, BinaryOp::Div)))
}

/// numpy divides integers and bools in float64 and converts a Python integer operand straight to
/// float64 there (rounded to nearest), so `int8_array / 300` and `uint8_array / -1` are defined,
/// though neither scalar fits the array's dtype. A weak integer next to an exact operand is
/// therefore a weak float: the same dtype (float64) and, in range, the same value.
fn integer_operand_as_float(o: Operand, other: &Operand) -> Operand {
    match o {
        Operand::Scalar(WeakScalar::Int(v)) if !matches!(other, Operand::Scalar(_)) && !other.dtype().is_inexact() => {
            Operand::Scalar(WeakScalar::Float(v as f64))
        }
        o => o,
    }
}

/// `a // b` (numpy `floor_divide`): rounds toward negative infinity; integer division by zero gives 0.
/// Bools divide as `int8`, as in numpy; complex numbers are an error.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I64).unwrap();
/// assert_eq!(pt::floor_divide(&a, 2).unwrap().dtype(), DType::I64);
/// ```
#[track_caller]
pub fn floor_divide(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    binary("floor_divide", a.into(), b.into(), |d| integer_or_float_rule(d, BinaryOp::FloorDiv))
}

/// `a % b` (numpy `remainder`): the result has the sign of the divisor; integer remainder by zero gives 0.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F32).unwrap();
/// assert_eq!(pt::remainder(&a, 2).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn remainder(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    binary("remainder", a.into(), b.into(), |d| integer_or_float_rule(d, BinaryOp::Rem))
}

fn integer_or_float_rule(d: DType, op: BinaryOp) -> std::result::Result<(DType, BinaryOp), &'static str> {
    match d.kind() {
        DTypeKind::Bool => Ok((DType::I8, op)),
        DTypeKind::Complex => Err("complex numbers have no floor division or remainder"),
        _ => Ok((d, op)),
    }
}

/// `a ** b` (numpy `power`): an integer exponent keeps an integer base's dtype; bools compute in `int8`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I16).unwrap();
/// assert_eq!(pt::power(&a, 2).unwrap().dtype(), DType::I16);
/// assert_eq!(pt::power(&a, 0.5).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn power(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    let (a, b) = (a.into(), b.into());
    let dtype = promote(&[&a, &b])?;
    // numpy refuses integers to negative integer powers: a literal exponent now, an array's
    // values when the program runs (every value, used or not, as numpy computes them all; none
    // where the broadcast result has no elements, as numpy's loop then runs no step).
    let b = match b {
        Operand::Scalar(WeakScalar::Int(e)) if e < 0 && dtype.is_integer() => {
            negative_constant_exponent(&a, Operand::Scalar(WeakScalar::Int(e)), e, dtype)?
        }
        Operand::Array(e) if dtype.kind() == DTypeKind::SignedInt => {
            match crate::operand::constant_value(&e).map(|v| v.to_i128()) {
                // A numpy scalar exponent is a constant known now: checked now, read in place.
                Some(Some(v)) if v < 0 => negative_constant_exponent(&a, Operand::Array(e), v, dtype)?,
                Some(_) => Operand::Array(e),
                None => {
                    let shape = crate::operand::broadcast_operands("power", &[&a, &Operand::Array(e.clone())])?;
                    let mut builder = LambdaBuilder::new(shape);
                    let read = cast_expr(builder.read_broadcast(&e), e.dtype(), dtype);
                    Operand::Array(builder.finish(Expr::call(Func::IntegerExponent, vec![read]))?)
                }
            }
        }
        other => other,
    };
    if let Some(fast) = float_power_by_scalar(&a, &b, dtype) {
        return fast;
    }
    binary("power", a, b, |d| Ok((if d == DType::Bool { DType::I8 } else { d }, BinaryOp::Pow)))
}

/// A constant negative `exponent` of an integer power of `base` (result `dtype`), which numpy
/// refuses for each element it computes: an error now where the broadcast result surely has
/// elements, the exponent as it is where it surely has none, and otherwise (lengths known only
/// at run time) the exponent over the result's shape through [`Func::IntegerExponent`], which
/// fails the run where it has elements.
fn negative_constant_exponent(base: &Operand, exponent: Operand, value: i128, dtype: DType) -> Result<Operand> {
    let shape = crate::operand::broadcast_operands("power", &[base, &exponent])?;
    if shape.dims().iter().any(|len| len.as_int() == Some(0)) {
        return Ok(exponent);
    }
    if shape.dims().iter().all(|len| len.as_int().is_some()) {
        return Err(Error::invalid("power", format!("integers to negative integer powers are not allowed ({value})")));
    }
    let constant = Expr::Const(Scalar::I64(value as i64).cast(dtype));
    Ok(Operand::Array(LambdaBuilder::new(shape).finish(Expr::call(Func::IntegerExponent, vec![constant]))?))
}

/// numpy's float32 and float64 `power` loops compute an exponent that is one scalar for the whole
/// call (a Python or numpy scalar, a 0-d constant) of 0.5, 2 or -1 by other operations: `sqrt(x)`,
/// `x * x` and `1 / x`. The square root differs from C's `pow`: `(-0.0) ** 0.5` is -0.0 and
/// `(-inf) ** 0.5` NaN (`pow` gives +0.0 and +inf), so it is taken here; `x * x` and `1 / x` are
/// rounded once, as `pow(x, 2)` and `pow(x, -1)` are, so those stay powers (as pytato writes
/// them). An exponent array whose elements are 0.5 takes `pow`, as in numpy. `None` where the
/// loop is `pow`'s.
fn float_power_by_scalar(a: &Operand, b: &Operand, dtype: DType) -> Option<Result<Array>> {
    let Operand::Array(x) = a else { return None };
    if !matches!(dtype, DType::F32 | DType::F64) {
        return None;
    }
    let exponent = match b {
        Operand::Scalar(WeakScalar::Int(i)) => *i as f64,
        Operand::Scalar(WeakScalar::Float(f)) => *f,
        Operand::Array(e) if !e.dtype().is_complex() => crate::operand::constant_value(e)?.to_f64(),
        _ => return None,
    };
    (exponent == 0.5).then(|| unary("power", x, dtype, |e| Expr::call(Func::Sqrt, vec![e])))
}

fn bitwise_rule(d: DType, op: BinaryOp) -> std::result::Result<(DType, BinaryOp), &'static str> {
    if d == DType::Bool || d.is_integer() {
        Ok((d, op))
    } else {
        Err("bitwise operations need integer or bool operands")
    }
}

/// `a & b` (numpy `bitwise_and`), on integers and bools.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::U16).unwrap();
/// assert_eq!(pt::bitwise_and(&a, 0xff).unwrap().dtype(), DType::U16);
/// assert!(pt::bitwise_and(&a, 1.0).is_err());
/// ```
#[track_caller]
pub fn bitwise_and(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    binary("bitwise_and", a.into(), b.into(), |d| bitwise_rule(d, BinaryOp::BitAnd))
}

/// `a | b` (numpy `bitwise_or`), on integers and bools.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::Bool).unwrap();
/// assert_eq!(pt::bitwise_or(&a, &a).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn bitwise_or(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    binary("bitwise_or", a.into(), b.into(), |d| bitwise_rule(d, BinaryOp::BitOr))
}

/// `a ^ b` (numpy `bitwise_xor`), on integers and bools.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I8).unwrap();
/// assert_eq!(pt::bitwise_xor(&a, -1).unwrap().dtype(), DType::I8);
/// ```
#[track_caller]
pub fn bitwise_xor(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    binary("bitwise_xor", a.into(), b.into(), |d| bitwise_rule(d, BinaryOp::BitXor))
}

/// `build` applied to each element of `a`, read as `dtype`: the building block of numpy's unary
/// ufuncs.
pub fn unary(op: &str, a: &Array, dtype: DType, build: impl FnOnce(Expr) -> Expr) -> Result<Array> {
    let operand = Operand::from(a);
    elementwise(op, &[&operand], dtype, |mut e| Ok(build(e.pop().expect("one operand"))))
}

/// `~a` (numpy `invert`): bitwise not of integers, logical not of bools.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::U8).unwrap();
/// assert_eq!(pt::invert(&a).unwrap().dtype(), DType::U8);
/// ```
#[track_caller]
pub fn invert(a: &Array) -> Result<Array> {
    let _site = crate::created_at::enter();
    let d = a.dtype();
    if d != DType::Bool && !d.is_integer() {
        return Err(dtype_error("invert", d, &[&a.into()], "bitwise operations need integer or bool operands"));
    }
    unary("invert", a, d, |e| e.unary(UnaryOp::BitNot))
}

/// `-a` (numpy `negative`); bools are an error; unsigned integers wrap.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F64).unwrap();
/// assert_eq!(pt::negative(&a).unwrap().dtype(), DType::F64);
/// ```
#[track_caller]
pub fn negative(a: &Array) -> Result<Array> {
    let _site = crate::created_at::enter();
    let d = a.dtype();
    if d == DType::Bool {
        return Err(dtype_error(
            "negative",
            d,
            &[&a.into()],
            "the `-` operator on bools is not supported; use logical_not",
        ));
    }
    unary("negative", a, d, |e| e.unary(UnaryOp::Neg))
}

// ---------------------------------------------------------------------------------------------
// Comparisons and logic.

/// The known outcome of comparing an integer or bool array with a Python integer outside its
/// dtype's range (`uint8_array < 300`, `int64_array < 2**63`): numpy 2 compares such pairs exactly,
/// so every element is on the same side of the scalar. Comparing in a wider dtype would not do:
/// no integer dtype holds both `int64` and `2**63`, and float64 rounds them. `None` for any other
/// pair (in range, the scalar takes the array's dtype as numpy's promotion gives it).
fn comparison_beyond_range(cmp: CompareOp, a: &Operand, b: &Operand) -> Option<bool> {
    use std::cmp::Ordering;
    // The integer scalar `s` and the range of the exact array `x` compared with it.
    let beyond = |s: &Operand, x: &Operand| {
        let (Operand::Scalar(WeakScalar::Int(v)), Operand::Array(x)) = (s, x) else { return None };
        let (lo, hi) = if x.dtype() == DType::Bool { (0, 1) } else { x.dtype().int_range()? };
        (*v < lo || *v > hi).then_some(*v)
    };
    // How the left operand orders against the right one.
    let order = match (beyond(a, b), beyond(b, a)) {
        (Some(v), None) => {
            if v > 0 {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (None, Some(v)) => {
            if v > 0 {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        _ => return None,
    };
    Some(match cmp {
        CompareOp::Eq => false,
        CompareOp::Ne => true,
        CompareOp::Lt => order == Ordering::Less,
        CompareOp::Le => order != Ordering::Greater,
        CompareOp::Gt => order == Ordering::Greater,
        CompareOp::Ge => order != Ordering::Less,
    })
}

/// `uint64` against a signed integer array compared exactly, as numpy 2 compares them (their
/// promotion, float64, rounds above 2^53: `uint64(2**53 + 1) == int64(2**53)` would be true).
/// Both are read as int64 (the `uint64` one wrapping): an unsigned value at or above 2^63 reads
/// negative and is above every signed one; below, the two int64 values compare exactly. `None`
/// for any other pair.
fn unsigned_against_signed(op: &str, cmp: CompareOp, a: &Operand, b: &Operand) -> Result<Option<Array>> {
    let (Operand::Array(x), Operand::Array(y)) = (a, b) else { return Ok(None) };
    let unsigned_first = match (x.dtype(), y.dtype()) {
        (DType::U64, d) if d.kind() == DTypeKind::SignedInt => true,
        (d, DType::U64) if d.kind() == DTypeKind::SignedInt => false,
        _ => return Ok(None),
    };
    // How the comparison comes out where the unsigned operand is at or above 2^63.
    let unsigned_greater = |cmp: CompareOp| match cmp {
        CompareOp::Eq => false,
        CompareOp::Ne => true,
        CompareOp::Gt | CompareOp::Ge => unsigned_first,
        CompareOp::Lt | CompareOp::Le => !unsigned_first,
    };
    elementwise(op, &[a, b], DType::I64, |mut e| {
        let rhs = e.pop().expect("two operands");
        let lhs = e.pop().expect("two operands");
        let unsigned = if unsigned_first { lhs.clone() } else { rhs.clone() };
        let huge = unsigned.compare(CompareOp::Lt, Expr::i64(0));
        let outcome = Expr::Const(Scalar::Bool(unsigned_greater(cmp)));
        Ok(Expr::if_then_else(huge, outcome, lhs.compare(cmp, rhs)))
    })
    .map(Some)
}

fn compare(op: &str, cmp: CompareOp, a: Operand, b: Operand) -> Result<Array> {
    if let Some(exact) = unsigned_against_signed(op, cmp, &a, &b)? {
        return Ok(exact);
    }
    if let Some(outcome) = comparison_beyond_range(cmp, &a, &b) {
        let array = if matches!(a, Operand::Array(_)) { &a } else { &b };
        // Written as `x == x` (true) or `x != x` (false), exact for integers and bools, so that
        // the array stays read: a program of it still takes its input, as numpy's call does.
        let same = if outcome { CompareOp::Eq } else { CompareOp::Ne };
        return elementwise(op, &[array], array.dtype(), |mut e| {
            let x = e.pop().expect("one operand");
            Ok(x.clone().compare(same, x))
        });
    }
    let dtype = promote(&[&a, &b])?;
    elementwise(op, &[&a, &b], dtype, |mut e| {
        let rhs = e.pop().expect("two operands");
        Ok(e.pop().expect("two operands").compare(cmp, rhs))
    })
}

macro_rules! comparison {
    ($(#[$doc:meta])* $name:ident, $cmp:ident) => {
        $(#[$doc])*
        #[track_caller]
        pub fn $name(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
            let _site = crate::created_at::enter();
            compare(stringify!($name), CompareOp::$cmp, a.into(), b.into())
        }
    };
}

comparison!(
    /// `a == b` elementwise (numpy `equal`); the result is bool. Structural equality of two DAGs
    /// is `==` on [`Array`], a different thing.
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// let a = pt::placeholder("a", [3], DType::F64).unwrap();
    /// assert_eq!(pt::equal(&a, 0.0).unwrap().dtype(), DType::Bool);
    /// ```
    equal, Eq
);
comparison!(
    /// `a != b` elementwise (numpy `not_equal`); the result is bool.
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// let a = pt::placeholder("a", [3], DType::I32).unwrap();
    /// assert_eq!(pt::not_equal(&a, 1).unwrap().dtype(), DType::Bool);
    /// ```
    not_equal, Ne
);
comparison!(
    /// `a < b` elementwise (numpy `less`); complex numbers order lexicographically.
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// let a = pt::placeholder("a", [3], DType::U8).unwrap();
    /// assert_eq!(pt::less(&a, 300).unwrap().dtype(), DType::Bool);
    /// ```
    less, Lt
);
comparison!(
    /// `a <= b` elementwise (numpy `less_equal`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// let a = pt::placeholder("a", [3], DType::F32).unwrap();
    /// assert_eq!(pt::less_equal(&a, &a).unwrap().shape().to_string(), "(3,)");
    /// ```
    less_equal, Le
);
comparison!(
    /// `a > b` elementwise (numpy `greater`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// let a = pt::placeholder("a", [3], DType::I64).unwrap();
    /// assert_eq!(pt::greater(0, &a).unwrap().dtype(), DType::Bool);
    /// ```
    greater, Gt
);
comparison!(
    /// `a >= b` elementwise (numpy `greater_equal`).
    ///
    /// ```
    /// use pytato_core::DType;
    /// use pytato_frontend as pt;
    /// let a = pt::placeholder("a", [2, 3], DType::F64).unwrap();
    /// let b = pt::placeholder("b", [3], DType::F64).unwrap();
    /// assert_eq!(pt::greater_equal(&a, &b).unwrap().shape().to_string(), "(2, 3)");
    /// ```
    greater_equal, Ge
);

/// The logical operation `bin` on the truth values of `a` and `b`; the result is bool.
pub fn logical(op: &str, a: Operand, b: Operand, bin: BinaryOp) -> Result<Array> {
    elementwise(op, &[&a, &b], DType::Bool, |mut e| {
        let rhs = e.pop().expect("two operands");
        Ok(e.pop().expect("two operands").binary(bin, rhs))
    })
}

/// Logical and of the truth values (`x != 0`) of `a` and `b`; the result is bool.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F64).unwrap();
/// assert_eq!(pt::logical_and(&a, true).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn logical_and(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    logical("logical_and", a.into(), b.into(), BinaryOp::LogicalAnd)
}

/// Logical or of the truth values of `a` and `b`; the result is bool.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::I8).unwrap();
/// assert_eq!(pt::logical_or(&a, &a).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn logical_or(a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    logical("logical_or", a.into(), b.into(), BinaryOp::LogicalOr)
}

/// Logical not of the truth value of `a`; the result is bool.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::C64).unwrap();
/// assert_eq!(pt::logical_not(&a).unwrap().dtype(), DType::Bool);
/// ```
#[track_caller]
pub fn logical_not(a: &Array) -> Result<Array> {
    let _site = crate::created_at::enter();
    unary("logical_not", a, DType::Bool, |e| e.unary(UnaryOp::LogicalNot))
}

// ---------------------------------------------------------------------------------------------
// Casts.

/// `a` converted to `dtype` (numpy `astype`): integers wrap, floats truncate toward zero, complex to
/// real drops the imaginary part, anything to bool is `!= 0`. Returns `a` itself when the dtype
/// already matches.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F64).unwrap();
/// assert_eq!(pt::astype(&a, DType::I32).unwrap().dtype(), DType::I32);
/// ```
#[track_caller]
pub fn astype(a: &Array, dtype: DType) -> Result<Array> {
    let _site = crate::created_at::enter();
    if a.dtype() == dtype {
        return Ok(a.clone());
    }
    unary("astype", a, a.dtype(), |e| e.cast(dtype))
}
