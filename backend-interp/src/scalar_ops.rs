//! numpy's semantics for one value at a time: what each operation of the scalar expression
//! language means (see `pytato_core::expr` for the rules every backend follows). Float `//`, `%`,
//! casts and complex functions come from `pytato_runtime::math`, which the Cranelift backend calls
//! too; float32 and complex64 functions are computed in double precision and rounded once.
//!
//! The typing rules guarantee that both operands of a binary operation have one dtype, so every
//! function here matches on pairs of equal variants; any other pair is an internal error.

use num_complex::{Complex, Complex32, Complex64};
use num_traits::{Float, PrimInt, WrappingAdd, WrappingMul, WrappingNeg, WrappingSub};
use pytato_core::expr::{BinaryOp, CompareOp, Func, ReduceOp, UnaryOp};
use pytato_core::{DType, Scalar};
use pytato_runtime::math::{self, complex};

/// An operation applied to operands it was not typed for: a bug in whoever built the expression.
#[derive(Debug)]
pub(crate) struct TypeBug(pub(crate) String);

type R<T> = std::result::Result<T, TypeBug>;

fn bug<T>(what: impl std::fmt::Display) -> R<T> {
    Err(TypeBug(what.to_string()))
}

/// Integer `//` and `%` with Python's rounding; division by zero gives 0 and `MIN // -1` wraps.
trait IntSemantics: PrimInt + WrappingAdd + WrappingSub + WrappingMul + WrappingNeg {
    fn wrapping_div_(self, rhs: Self) -> Self;
    fn wrapping_rem_(self, rhs: Self) -> Self;
    fn wrapping_abs_(self) -> Self;

    fn floor_div(self, rhs: Self) -> Self {
        if rhs == Self::zero() {
            return Self::zero();
        }
        let q = self.wrapping_div_(rhs);
        let r = self.wrapping_rem_(rhs);
        if r != Self::zero() && ((r < Self::zero()) != (rhs < Self::zero())) { q.wrapping_sub(&Self::one()) } else { q }
    }

    fn py_rem(self, rhs: Self) -> Self {
        if rhs == Self::zero() {
            return Self::zero();
        }
        let r = self.wrapping_rem_(rhs);
        if r != Self::zero() && ((r < Self::zero()) != (rhs < Self::zero())) { r.wrapping_add(&rhs) } else { r }
    }

    /// `self ** exp` with wrapping; negative exponents truncate (0 unless the base is ±1).
    fn int_pow(self, exp: Self) -> Self {
        let (zero, one) = (Self::zero(), Self::one());
        if exp < zero {
            return if self == one {
                one
            } else if self == zero.wrapping_sub(&one) {
                // (-1) ** e: odd e gives -1.
                if exp.py_rem(one + one) == zero { one } else { self }
            } else {
                zero
            };
        }
        let (mut base, mut e, mut acc) = (self, exp, one);
        while e > zero {
            if e & one == one {
                acc = acc.wrapping_mul(&base);
            }
            base = base.wrapping_mul(&base);
            e = e >> 1;
        }
        acc
    }
}

macro_rules! int_semantics {
    ($($t:ty),*) => {$(
        impl IntSemantics for $t {
            fn wrapping_div_(self, rhs: Self) -> Self { self.wrapping_div(rhs) }
            fn wrapping_rem_(self, rhs: Self) -> Self { self.wrapping_rem(rhs) }
            fn wrapping_abs_(self) -> Self { self.wrapping_abs() }
        }
    )*};
}
int_semantics!(i8, i16, i32, i64);
macro_rules! uint_semantics {
    ($($t:ty),*) => {$(
        impl IntSemantics for $t {
            fn wrapping_div_(self, rhs: Self) -> Self { self.wrapping_div(rhs) }
            fn wrapping_rem_(self, rhs: Self) -> Self { self.wrapping_rem(rhs) }
            fn wrapping_abs_(self) -> Self { self }
        }
    )*};
}
uint_semantics!(u8, u16, u32, u64);

fn int_binary<T: IntSemantics>(op: BinaryOp, x: T, y: T) -> R<T> {
    use BinaryOp::*;
    Ok(match op {
        Add => x.wrapping_add(&y),
        Sub => x.wrapping_sub(&y),
        Mul => x.wrapping_mul(&y),
        FloorDiv => x.floor_div(y),
        Rem => x.py_rem(y),
        Pow => x.int_pow(y),
        BitAnd => x & y,
        BitOr => x | y,
        BitXor => x ^ y,
        Div | LogicalAnd | LogicalOr => return bug(format!("{op:?} on integers")),
    })
}

/// `x op y` for floats, in `f64` (float32 values are widened and the result rounded once, as the
/// compiled backends do; `+ - * /` give the same bits either way).
fn float_binary(op: BinaryOp, x: f64, y: f64) -> R<f64> {
    use BinaryOp::*;
    Ok(match op {
        Add => x + y,
        Sub => x - y,
        Mul => x * y,
        Div => x / y,
        FloorDiv => math::floor_divide(x, y),
        Rem => math::remainder(x, y),
        Pow => x.powf(y),
        _ => return bug(format!("{op:?} on floats")),
    })
}

fn f32_binary(op: BinaryOp, x: f32, y: f32) -> R<f32> {
    use BinaryOp::*;
    Ok(match op {
        // Native single precision: correctly rounded, like the compiled backends' instructions.
        Add => x + y,
        Sub => x - y,
        Mul => x * y,
        Div => x / y,
        // numpy's float32 `//` and `%` step in float32.
        FloorDiv => math::floor_divide(x, y),
        Rem => math::remainder(x, y),
        _ => float_binary(op, x.into(), y.into())? as f32,
    })
}

fn complex_binary(op: BinaryOp, x: Complex64, y: Complex64) -> R<Complex64> {
    use BinaryOp::*;
    Ok(match op {
        Add => x + y,
        Sub => x - y,
        Mul => complex::multiply(x, y),
        Div => complex::div(x, y),
        Pow => complex::pow(x, y),
        _ => return bug(format!("{op:?} on complex numbers")),
    })
}

fn c64_binary(op: BinaryOp, x: Complex32, y: Complex32) -> R<Complex32> {
    Ok(match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => complex::multiply(x, y),
        BinaryOp::Div => complex::div(x, y),
        _ => narrow(complex_binary(op, widen(x), widen(y))?),
    })
}

fn widen(z: Complex32) -> Complex64 {
    Complex64::new(z.re.into(), z.im.into())
}

fn narrow(z: Complex64) -> Complex32 {
    Complex32::new(z.re as f32, z.im as f32)
}

/// `x op y` for two values of one dtype.
pub(crate) fn binary(op: BinaryOp, x: Scalar, y: Scalar) -> R<Scalar> {
    use Scalar as S;
    Ok(match (x, y) {
        (S::Bool(a), S::Bool(b)) => S::Bool(match op {
            BinaryOp::LogicalAnd | BinaryOp::BitAnd => a & b,
            BinaryOp::LogicalOr | BinaryOp::BitOr => a | b,
            BinaryOp::BitXor => a ^ b,
            _ => return bug(format!("{op:?} on bools")),
        }),
        (S::I8(a), S::I8(b)) => S::I8(int_binary(op, a, b)?),
        (S::I16(a), S::I16(b)) => S::I16(int_binary(op, a, b)?),
        (S::I32(a), S::I32(b)) => S::I32(int_binary(op, a, b)?),
        (S::I64(a), S::I64(b)) => S::I64(int_binary(op, a, b)?),
        (S::U8(a), S::U8(b)) => S::U8(int_binary(op, a, b)?),
        (S::U16(a), S::U16(b)) => S::U16(int_binary(op, a, b)?),
        (S::U32(a), S::U32(b)) => S::U32(int_binary(op, a, b)?),
        (S::U64(a), S::U64(b)) => S::U64(int_binary(op, a, b)?),
        (S::F32(a), S::F32(b)) => S::F32(f32_binary(op, a, b)?),
        (S::F64(a), S::F64(b)) => S::F64(float_binary(op, a, b)?),
        (S::C64(a), S::C64(b)) => S::C64(c64_binary(op, a, b)?),
        (S::C128(a), S::C128(b)) => S::C128(complex_binary(op, a, b)?),
        _ => return bug(format!("{op:?} on {} and {}", x.dtype(), y.dtype())),
    })
}

fn ordering<T: PartialOrd>(op: CompareOp, a: T, b: T) -> bool {
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
    }
}

fn complex_ordering<T: Float>(op: CompareOp, a: Complex<T>, b: Complex<T>) -> bool {
    // numpy orders complex numbers lexicographically: real parts, then imaginary parts; a NaN
    // imaginary part makes the real parts' order count for nothing (numpy's CLT, CGT, ...).
    let no_nan = !a.im.is_nan() && !b.im.is_nan();
    match op {
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
        CompareOp::Lt => (a.re < b.re && no_nan) || (a.re == b.re && a.im < b.im),
        CompareOp::Le => (a.re < b.re && no_nan) || (a.re == b.re && a.im <= b.im),
        CompareOp::Gt => (a.re > b.re && no_nan) || (a.re == b.re && a.im > b.im),
        CompareOp::Ge => (a.re > b.re && no_nan) || (a.re == b.re && a.im >= b.im),
    }
}

/// `x op y` for a comparison.
pub(crate) fn compare(op: CompareOp, x: Scalar, y: Scalar) -> R<bool> {
    use Scalar as S;
    Ok(match (x, y) {
        (S::Bool(a), S::Bool(b)) => ordering(op, a, b),
        (S::I8(a), S::I8(b)) => ordering(op, a, b),
        (S::I16(a), S::I16(b)) => ordering(op, a, b),
        (S::I32(a), S::I32(b)) => ordering(op, a, b),
        (S::I64(a), S::I64(b)) => ordering(op, a, b),
        (S::U8(a), S::U8(b)) => ordering(op, a, b),
        (S::U16(a), S::U16(b)) => ordering(op, a, b),
        (S::U32(a), S::U32(b)) => ordering(op, a, b),
        (S::U64(a), S::U64(b)) => ordering(op, a, b),
        (S::F32(a), S::F32(b)) => ordering(op, a, b),
        (S::F64(a), S::F64(b)) => ordering(op, a, b),
        (S::C64(a), S::C64(b)) => complex_ordering(op, a, b),
        (S::C128(a), S::C128(b)) => complex_ordering(op, a, b),
        _ => return bug(format!("{op:?} on {} and {}", x.dtype(), y.dtype())),
    })
}

/// `op x`.
pub(crate) fn unary(op: UnaryOp, x: Scalar) -> R<Scalar> {
    use Scalar as S;
    Ok(match (op, x) {
        (UnaryOp::LogicalNot | UnaryOp::BitNot, S::Bool(b)) => S::Bool(!b),
        (UnaryOp::BitNot, S::I8(v)) => S::I8(!v),
        (UnaryOp::BitNot, S::I16(v)) => S::I16(!v),
        (UnaryOp::BitNot, S::I32(v)) => S::I32(!v),
        (UnaryOp::BitNot, S::I64(v)) => S::I64(!v),
        (UnaryOp::BitNot, S::U8(v)) => S::U8(!v),
        (UnaryOp::BitNot, S::U16(v)) => S::U16(!v),
        (UnaryOp::BitNot, S::U32(v)) => S::U32(!v),
        (UnaryOp::BitNot, S::U64(v)) => S::U64(!v),
        (UnaryOp::Neg, S::I8(v)) => S::I8(v.wrapping_neg()),
        (UnaryOp::Neg, S::I16(v)) => S::I16(v.wrapping_neg()),
        (UnaryOp::Neg, S::I32(v)) => S::I32(v.wrapping_neg()),
        (UnaryOp::Neg, S::I64(v)) => S::I64(v.wrapping_neg()),
        (UnaryOp::Neg, S::U8(v)) => S::U8(v.wrapping_neg()),
        (UnaryOp::Neg, S::U16(v)) => S::U16(v.wrapping_neg()),
        (UnaryOp::Neg, S::U32(v)) => S::U32(v.wrapping_neg()),
        (UnaryOp::Neg, S::U64(v)) => S::U64(v.wrapping_neg()),
        (UnaryOp::Neg, S::F32(v)) => S::F32(-v),
        (UnaryOp::Neg, S::F64(v)) => S::F64(-v),
        (UnaryOp::Neg, S::C64(v)) => S::C64(-v),
        (UnaryOp::Neg, S::C128(v)) => S::C128(-v),
        _ => return bug(format!("{op:?} on {}", x.dtype())),
    })
}

/// A real function in `f64` (float32 arguments are widened and the result rounded once).
fn float_func(f: Func, x: f64) -> R<f64> {
    use Func::*;
    Ok(match f {
        Abs => x.abs(),
        Sqrt => x.sqrt(),
        Exp => x.exp(),
        Log => x.ln(),
        Log10 => x.log10(),
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Arcsin => x.asin(),
        Arccos => x.acos(),
        Arctan => x.atan(),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Tanh => x.tanh(),
        Floor => x.floor(),
        Ceil => x.ceil(),
        Arcsinh => math::asinh(x),
        Arccosh => math::acosh(x),
        Arctanh => math::atanh(x),
        Expm1 => x.exp_m1(),
        Log1p => x.ln_1p(),
        Log2 => x.log2(),
        Cbrt => x.cbrt(),
        Exp2 => x.exp2(),
        Rint => x.round_ties_even(),
        Real | Conj => x,
        Imag => 0.0,
        _ => return bug(format!("{f:?} of a float")),
    })
}

/// A complex function in `complex128` (complex64 arguments are widened and the result rounded).
fn complex_func(f: Func, z: Complex64) -> R<Complex64> {
    use Func::*;
    Ok(match f {
        Sqrt => complex::sqrt(z),
        Exp => complex::exp(z),
        Log => complex::log(z),
        Log10 => complex::log10(z),
        Sin => complex::sin(z),
        Cos => complex::cos(z),
        Tan => complex::tan(z),
        Arcsin => complex::asin(z),
        Arccos => complex::acos(z),
        Arctan => complex::atan(z),
        Sinh => complex::sinh(z),
        Cosh => complex::cosh(z),
        Tanh => complex::tanh(z),
        Arcsinh => complex::asinh(z),
        Arccosh => complex::acosh(z),
        Arctanh => complex::atanh(z),
        Expm1 => complex::expm1(z),
        Log1p => complex::log1p(z),
        Log2 => complex::log2(z),
        Rint => Complex64::new(z.re.round_ties_even(), z.im.round_ties_even()),
        Conj => z.conj(),
        _ => return bug(format!("{f:?} of a complex number")),
    })
}

/// numpy's `maximum` (`max`) or `minimum`: `a` if it is NaN or strictly beyond `b`, else `b`
/// (so NaN propagates, and of two equal values, `-0.0` and `0.0`, the second wins).
fn nan_max<T: PartialOrd + Copy>(a: T, b: T, is_nan: impl Fn(T) -> bool, max: bool) -> T {
    if is_nan(a) || (if max { a > b } else { a < b }) { a } else { b }
}

/// `f(args...)`. `zero` is handled by the caller: its argument is never evaluated.
pub(crate) fn call(f: Func, args: &[Scalar]) -> R<Scalar> {
    use Scalar as S;
    match (f, args) {
        (Func::Maximum | Func::Minimum, [x, y]) => {
            let max = f == Func::Maximum;
            Ok(match (*x, *y) {
                (S::F32(a), S::F32(b)) => S::F32(nan_max(a, b, f32::is_nan, max)),
                (S::F64(a), S::F64(b)) => S::F64(nan_max(a, b, f64::is_nan, max)),
                (a, b) if a.dtype() == b.dtype() && !a.dtype().is_complex() => {
                    if compare(CompareOp::Ge, a, b)? == max {
                        a
                    } else {
                        b
                    }
                }
                _ => return bug(format!("{f:?} of {} and {}", x.dtype(), y.dtype())),
            })
        }
        (Func::TextbookProduct, [S::C128(a), S::C128(b)]) => Ok(S::C128(complex::mul(*a, *b))),
        (Func::TextbookProduct, [S::C64(a), S::C64(b)]) => Ok(S::C64(a * b)),
        (Func::MakeComplex, [S::F32(re), S::F32(im)]) => Ok(S::C64(Complex32::new(*re, *im))),
        (Func::MakeComplex, [S::F64(re), S::F64(im)]) => Ok(S::C128(Complex64::new(*re, *im))),
        (Func::Arctan2, [S::F32(a), S::F32(b)]) => Ok(S::F32(f64::from(*a).atan2(f64::from(*b)) as f32)),
        (Func::Arctan2, [S::F64(a), S::F64(b)]) => Ok(S::F64(a.atan2(*b))),
        (Func::Nextafter, [S::F32(a), S::F32(b)]) => Ok(S::F32(math::nextafter_f32(*a, *b))),
        (Func::Gcd | Func::Lcm, [x, y]) if x.dtype() == y.dtype() && x.dtype().is_integer() => {
            // On the magnitudes as unsigned 64-bit integers: the low bits of the dtype's width are
            // the same (`Scalar::cast` keeps them).
            let magnitude = |v: &Scalar| v.to_i128().map_or(0, |i| i.unsigned_abs() as u64);
            let (a, b) = (magnitude(x), magnitude(y));
            let r = if f == Func::Gcd { math::gcd_magnitudes(a, b) } else { math::lcm_magnitudes(a, b) };
            Ok(S::U64(r).cast(x.dtype()))
        }
        (Func::Ldexp, [S::F32(a), S::F32(b)]) => Ok(S::F32(math::ldexp(f64::from(*a), f64::from(*b)) as f32)),
        (Func::Ldexp, [S::F64(a), S::F64(b)]) => Ok(S::F64(math::ldexp(*a, *b))),
        (Func::FrexpMantissa, [S::F32(a)]) => Ok(S::F32(math::frexp(f64::from(*a)).0 as f32)),
        (Func::FrexpMantissa, [S::F64(a)]) => Ok(S::F64(math::frexp(*a).0)),
        (Func::FrexpExponent, [S::F32(a)]) => Ok(S::I32(math::frexp(f64::from(*a)).1)),
        (Func::FrexpExponent, [S::F64(a)]) => Ok(S::I32(math::frexp(*a).1)),
        (Func::Hypot | Func::LogAddExp | Func::Copysign | Func::Fmod, [S::F32(a), S::F32(b)]) => {
            Ok(S::F32(real_binary(f, f64::from(*a), f64::from(*b))? as f32))
        }
        (Func::Hypot | Func::LogAddExp | Func::Copysign | Func::Nextafter | Func::Fmod, [S::F64(a), S::F64(b)]) => {
            Ok(S::F64(real_binary(f, *a, *b)?))
        }
        (_, [x]) => unary_func(f, *x),
        _ => bug(format!("{f:?} with {} arguments", args.len())),
    }
}

/// A real function of two `f64`s (float32 arguments widened: exact for these functions, or
/// rounded once at the end).
fn real_binary(f: Func, a: f64, b: f64) -> R<f64> {
    Ok(match f {
        Func::Hypot => math::hypot(a, b),
        Func::LogAddExp => math::logaddexp(a, b),
        Func::Copysign => a.copysign(b),
        Func::Nextafter => math::nextafter(a, b),
        // Rust's `%` on floats is C's fmod (exact, so float32 arguments widened give float32's).
        Func::Fmod => a % b,
        _ => return bug(format!("{f:?} of two floats")),
    })
}

fn unary_func(f: Func, x: Scalar) -> R<Scalar> {
    use Scalar as S;
    Ok(match x {
        S::F32(v) if f == Func::Signbit => S::Bool(v.is_sign_negative()),
        S::F64(v) if f == Func::Signbit => S::Bool(v.is_sign_negative()),
        S::F32(v) if f == Func::IsNan => S::Bool(v.is_nan()),
        S::F64(v) if f == Func::IsNan => S::Bool(v.is_nan()),
        S::C64(v) if f == Func::IsNan => S::Bool(v.re.is_nan() || v.im.is_nan()),
        S::C128(v) if f == Func::IsNan => S::Bool(v.re.is_nan() || v.im.is_nan()),
        S::F32(v) => S::F32(float_func(f, v.into())? as f32),
        S::F64(v) => S::F64(float_func(f, v)?),
        S::C64(v) => match f {
            Func::Abs => S::F32(complex::abs(v)),
            Func::Real => S::F32(v.re),
            Func::Imag => S::F32(v.im),
            _ => S::C64(narrow(complex_func(f, widen(v))?)),
        },
        S::C128(v) => match f {
            Func::Abs => S::F64(complex::abs(v)),
            Func::Real => S::F64(v.re),
            Func::Imag => S::F64(v.im),
            _ => S::C128(complex_func(f, v)?),
        },
        // Integers and bools: abs, real, imag, conj.
        _ => match f {
            Func::Real | Func::Conj => x,
            Func::Imag => Scalar::zero(x.dtype()),
            Func::Abs => match x {
                S::I8(v) => S::I8(v.wrapping_abs_()),
                S::I16(v) => S::I16(v.wrapping_abs_()),
                S::I32(v) => S::I32(v.wrapping_abs_()),
                S::I64(v) => S::I64(v.wrapping_abs_()),
                S::U8(_) | S::U16(_) | S::U32(_) | S::U64(_) => x,
                _ => return bug(format!("abs of {}", x.dtype())),
            },
            _ => return bug(format!("{f:?} of {}", x.dtype())),
        },
    })
}

/// A running reduction. Float and complex sums follow `pytato_runtime::math`'s summation scheme
/// (lanes, blocks, the tree of blocks; single precision in double), as the compiled backends do;
/// everything else combines in order.
pub(crate) struct Accumulator {
    op: ReduceOp,
    dtype: DType,
    scheme: math::Summation,
    /// The dtype the terms are combined in.
    acc_dtype: DType,
    /// The running value (in-order reductions).
    total: Scalar,
    /// The lanes of the current block (sums in blocks).
    lanes: [Scalar; math::SUM_LANES],
    /// Terms in the current block.
    count: u64,
    /// The totals of the blocks done.
    blocks: math::BlockTree<Scalar>,
}

impl Accumulator {
    pub(crate) fn new(op: ReduceOp, dtype: DType) -> Accumulator {
        Accumulator::starting_at(op, dtype, None)
    }

    /// An accumulator whose total starts at `start` where given (a complex product's
    /// `Reduce::start`), else at the operation's identity.
    pub(crate) fn starting_at(op: ReduceOp, dtype: DType, start: Option<Scalar>) -> Accumulator {
        let scheme = math::summation(op, dtype);
        let acc_dtype = scheme.lane_dtype(dtype).unwrap_or(dtype);
        Accumulator {
            op,
            dtype,
            scheme,
            acc_dtype,
            total: start.unwrap_or_else(|| op.neutral(acc_dtype)),
            lanes: [Scalar::zero(acc_dtype); math::SUM_LANES],
            count: 0,
            blocks: math::BlockTree::new(),
        }
    }

    pub(crate) fn add(&mut self, x: Scalar) -> R<()> {
        match self.scheme {
            math::Summation::Widened(_) | math::Summation::Blocked => {
                let lane = &mut self.lanes[self.count as usize % math::SUM_LANES];
                *lane = binary(BinaryOp::Add, *lane, x.cast(self.acc_dtype))?;
            }
            math::Summation::InOrder => {
                self.total = accumulate(self.op, self.total, x)?;
                return Ok(());
            }
        }
        self.count += 1;
        if self.count == math::SUM_BLOCK {
            self.flush()?;
        }
        Ok(())
    }

    pub(crate) fn finish(mut self) -> R<Scalar> {
        if self.scheme == math::Summation::InOrder {
            return Ok(self.total);
        }
        // The last, partial block; an empty sum is one block of zeros.
        if self.count > 0 || self.blocks.blocks() == 0 {
            self.flush()?;
        }
        match self.blocks.finish(&mut |a, b| binary(BinaryOp::Add, a, b))? {
            Some(total) => Ok(total.cast(self.dtype)),
            None => bug("a sum in blocks without blocks"),
        }
    }

    /// The current block's total into the tree of blocks, and a new block.
    fn flush(&mut self) -> R<()> {
        let block = math::lane_tree(self.lanes, &mut |a, b| binary(BinaryOp::Add, a, b))?;
        self.blocks.push(block, &mut |a, b| binary(BinaryOp::Add, a, b))?;
        self.lanes = [Scalar::zero(self.acc_dtype); math::SUM_LANES];
        self.count = 0;
        Ok(())
    }
}

/// The running value of a reduction.
fn accumulate(op: pytato_core::expr::ReduceOp, acc: Scalar, x: Scalar) -> R<Scalar> {
    use pytato_core::expr::ReduceOp::*;
    match op {
        Sum => binary(BinaryOp::Add, acc, x),
        // numpy's reductions multiply complex numbers by the textbook formula (its elementwise
        // `multiply` fuses a product into each part: `complex::multiply`).
        Product if acc.dtype().is_complex() => call(Func::TextbookProduct, &[acc, x]),
        Product => binary(BinaryOp::Mul, acc, x),
        Max => call(Func::Maximum, &[acc, x]),
        Min => call(Func::Minimum, &[acc, x]),
        All => binary(BinaryOp::LogicalAnd, acc, x),
        Any => binary(BinaryOp::LogicalOr, acc, x),
    }
}

/// The product used by einsum: logical and for bools, numpy's einsum's textbook product for
/// complex numbers ([`Func::TextbookProduct`]).
pub(crate) fn product(acc: Scalar, x: Scalar) -> R<Scalar> {
    match acc.dtype() {
        DType::Bool => binary(BinaryOp::LogicalAnd, acc, x),
        DType::C64 | DType::C128 => call(Func::TextbookProduct, &[acc, x]),
        _ => binary(BinaryOp::Mul, acc, x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(v: i64) -> Scalar {
        Scalar::I64(v)
    }
    fn f(v: f64) -> Scalar {
        Scalar::F64(v)
    }

    #[test]
    fn integer_division_follows_python() {
        // Expected values: Python's // and % (and numpy's, with 0 for division by zero).
        let cases =
            [(7, 2, 3, 1), (-7, 2, -4, 1), (7, -2, -4, -1), (-7, -2, 3, -1), (5, 0, 0, 0), (i64::MIN, -1, i64::MIN, 0)];
        for (a, b, q, r) in cases {
            assert_eq!(binary(BinaryOp::FloorDiv, i(a), i(b)).unwrap(), i(q), "{a} // {b}");
            assert_eq!(binary(BinaryOp::Rem, i(a), i(b)).unwrap(), i(r), "{a} % {b}");
        }
        assert_eq!(binary(BinaryOp::FloorDiv, Scalar::U8(7), Scalar::U8(0)).unwrap(), Scalar::U8(0));
    }

    #[test]
    fn float_division_follows_numpy() {
        // numpy: np.floor_divide(-7.5, 2) == -4.0, np.remainder(-7.5, 2) == 0.5, np.remainder(1, -0.0) is nan.
        assert_eq!(binary(BinaryOp::FloorDiv, f(-7.5), f(2.0)).unwrap(), f(-4.0));
        assert_eq!(binary(BinaryOp::Rem, f(-7.5), f(2.0)).unwrap(), f(0.5));
        assert_eq!(binary(BinaryOp::Rem, f(7.5), f(-2.0)).unwrap(), f(-0.5));
        assert!(binary(BinaryOp::Rem, f(1.0), f(0.0)).unwrap().to_f64().is_nan());
        assert_eq!(binary(BinaryOp::FloorDiv, f(1.0), f(0.0)).unwrap(), f(f64::INFINITY));
    }

    #[test]
    fn integer_powers_wrap_and_truncate() {
        assert_eq!(binary(BinaryOp::Pow, i(3), i(4)).unwrap(), i(81));
        assert_eq!(binary(BinaryOp::Pow, Scalar::U8(2), Scalar::U8(9)).unwrap(), Scalar::U8(0));
        assert_eq!(binary(BinaryOp::Pow, i(2), i(-1)).unwrap(), i(0));
        assert_eq!(binary(BinaryOp::Pow, i(-1), i(-3)).unwrap(), i(-1));
        assert_eq!(binary(BinaryOp::Pow, i(-1), i(-2)).unwrap(), i(1));
    }

    #[test]
    fn nan_propagates_through_maximum() {
        assert!(call(Func::Maximum, &[f(f64::NAN), f(1.0)]).unwrap().to_f64().is_nan());
        assert!(call(Func::Minimum, &[f(1.0), f(f64::NAN)]).unwrap().to_f64().is_nan());
        assert_eq!(call(Func::Maximum, &[i(-3), i(2)]).unwrap(), i(2));
    }

    #[test]
    fn complex_compare_lexicographically() {
        let c = |re, im| Scalar::C128(Complex64::new(re, im));
        assert!(compare(CompareOp::Lt, c(1.0, 5.0), c(2.0, 0.0)).unwrap());
        assert!(compare(CompareOp::Lt, c(1.0, 0.0), c(1.0, 1.0)).unwrap());
        assert!(!compare(CompareOp::Gt, c(1.0, 0.0), c(1.0, 0.0)).unwrap());
    }
}
