//! The scalar expression language of `IndexLambda`.
//!
//! An index lambda computes each element of its result by evaluating an [`Expr`] at the element's
//! index. Variables name:
//!
//! - output inames `_0, _1, …`: the index along each axis of the result (dtype `int64`);
//! - reduction inames `_r0, _r1, …`: bound by an enclosing [`Expr::Reduce`] (dtype `int64`);
//! - bindings: arrays the lambda reads, by name; a 0-d binding is read as a plain variable
//!   (this is how a `SizeParam` or any scalar array enters), an n-d binding through
//!   [`Expr::Subscript`] with one integer index per axis.
//!
//! # Typing
//!
//! The language is strictly typed so that backends never have to re-derive numpy's promotion rules:
//! the operands of an arithmetic, comparison or bitwise operation have the **same** dtype, and the
//! frontend inserts [`Expr::Cast`] where numpy would promote. [`Expr::dtype`] states the rules for each
//! node. The semantics every backend implements:
//!
//! - `/` is true division of inexact dtypes; `//` rounds toward negative infinity and `%` takes the
//!   sign of the divisor (Python's rules, as numpy's `floor_divide` and `remainder`); integer `//`
//!   and `%` by zero give 0, and `i64::MIN // -1` wraps.
//! - Integer `+ - *` and `**` wrap on overflow; an integer raised to a negative power gives the
//!   truncated result (0 unless the base is 1 or -1).
//! - `Cast` is numpy's `astype`: integers wrap, floats truncate toward zero (NaN and out-of-range
//!   values, which numpy leaves undefined, give what numpy gives on x86-64:
//!   `float_to_int`), complex to real drops the imaginary part,
//!   anything to bool is `!= 0`.
//! - `If` evaluates only the branch it selects, like C's `?:`: the other branch may subscript out
//!   of bounds (padding and concatenation rely on this).
//! - A subscript outside its binding's shape is an error when the program runs, never a read out
//!   of bounds.
//! - Comparisons of complex values order lexicographically (real part, then imaginary), like numpy 2.
//! - [`Func::Maximum`] and [`Func::Minimum`] are numpy's `maximum` and `minimum`: `a` if it is NaN
//!   or strictly beyond `b`, else `b` (NaN propagates; of `-0.0` and `0.0` the second wins).
//!   `Max` and `Min` reductions combine with them.
//! - Float and complex `Sum` reductions follow `math`'s summation scheme (float32 in
//!   float64, float64 in blocks), so that long sums are about as accurate as numpy's pairwise ones.
//! - Float `//` and `%`, and complex arithmetic and functions, are `math`'s: numpy's
//!   algorithms, C99 Annex G at infinities and on branch cuts.
//! - [`Func::Zero`] is zero of its argument's dtype whatever the argument (even NaN): it keeps a
//!   dependency alive without reading it (seed: "zeros_like (and similar)").
//!
//! ```
//! use pytato_core::expr::{Expr, BinaryOp};
//! // _in0[_0] + 2.0 * _in1[_0]
//! let e = Expr::subscript("_in0", vec![Expr::var("_0")])
//!     .binary(BinaryOp::Add, Expr::f64(2.0).binary(BinaryOp::Mul, Expr::subscript("_in1", vec![Expr::var("_0")])));
//! assert_eq!(e.to_string(), "_in0[_0] + 2.0 * _in1[_0]");
//! ```

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use crate::dtype::{DType, DTypeKind};
use crate::error::{Error, Result};
use crate::names::{Reserved, classify};
use crate::scalar::Scalar;
use crate::shape::Dim;

/// The most levels an index lambda's expression may have ([`Expr::depth`]). The passes over
/// expressions recurse, so a deeper one is refused when the lambda is built (an error, not a
/// stack overflow in a later pass); the frontend's expressions are a few levels deep (each
/// operation is a lambda of its own) and the lowering passes nest logarithmically.
pub const MAX_DEPTH: usize = 1024;

/// A node of the scalar expression language. Cheap to clone: children are shared.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A typed constant.
    Const(Scalar),
    /// An iname, a reduction iname or a 0-d binding.
    Var(Arc<str>),
    /// An element of an n-d binding: one integer index per axis.
    Subscript(Arc<str>, Arc<[Expr]>),
    /// A unary operation.
    Unary(UnaryOp, Arc<Expr>),
    /// A binary operation; both operands have the same dtype.
    Binary(BinaryOp, Arc<Expr>, Arc<Expr>),
    /// A comparison; both operands have the same dtype; the result is bool.
    Compare(CompareOp, Arc<Expr>, Arc<Expr>),
    /// `if cond then a else b`; `cond` is bool, `a` and `b` have the same dtype.
    If(Arc<Expr>, Arc<Expr>, Arc<Expr>),
    /// Conversion to a dtype (numpy's `astype`).
    Cast(DType, Arc<Expr>),
    /// A call of a built-in function.
    Call(Func, Arc<[Expr]>),
    /// A reduction over one or more reduction inames.
    Reduce(Arc<Reduce>),
}

/// A reduction: `op` over `body` as each iname runs over its half-open range `[lower, upper)`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Reduce {
    /// The reduction operation.
    pub op: ReduceOp,
    /// The reduction inames (`_rN`) with their bounds; the first varies slowest.
    pub inames: Vec<ReductionBounds>,
    /// The reduced expression.
    pub body: Expr,
    /// The accumulator's first value where it is not the operation's identity; also the value
    /// over an empty range. Only complex products take one (the type check refuses others):
    /// numpy's `prod(z, initial=c)` is `((c * z0) * z1) ...`, and multiplying by the identity
    /// first (`(1 + 0j) * (c * z0)`) is not exact in complex arithmetic (`0 * inf` is NaN).
    /// Other dtypes and operations seed their first term instead, which is exact.
    pub start: Option<Scalar>,
}

impl Reduce {
    /// The accumulator's first value for a body of dtype `dtype`: [`Reduce::start`], or the
    /// operation's identity.
    pub fn first_value(&self, dtype: DType) -> Scalar {
        self.start.unwrap_or_else(|| self.op.neutral(dtype))
    }

    /// This reduction (its operation and start) over other inames and another body.
    pub fn rebuilt(&self, inames: Vec<ReductionBounds>, body: Expr) -> Expr {
        Expr::Reduce(Arc::new(Reduce { op: self.op, inames, body, start: self.start }))
    }
}

/// The range of one reduction iname.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ReductionBounds {
    /// The iname, `_rN`.
    pub iname: Arc<str>,
    /// Inclusive lower bound.
    pub lower: Dim,
    /// Exclusive upper bound.
    pub upper: Dim,
}

/// Unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// Arithmetic negation (numeric dtypes but bool).
    Neg,
    /// Logical not (bool).
    LogicalNot,
    /// Bitwise not (integers and bool; on bool it is logical not).
    BitNot,
}

impl UnaryOp {
    /// Every operation (what a decoder of an expression's operation names looks them up in).
    pub const ALL: [UnaryOp; 3] = [UnaryOp::Neg, UnaryOp::LogicalNot, UnaryOp::BitNot];
}

/// Binary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`: true division of floats and complex numbers.
    Div,
    /// `//`: floor division of integers and floats.
    FloorDiv,
    /// `%`: remainder with the sign of the divisor, of integers and floats.
    Rem,
    /// `**`
    Pow,
    /// Logical and (bool).
    LogicalAnd,
    /// Logical or (bool).
    LogicalOr,
    /// `&` (integers and bool).
    BitAnd,
    /// `|` (integers and bool).
    BitOr,
    /// `^` (integers and bool).
    BitXor,
}

impl BinaryOp {
    /// Every operation (what a decoder of an expression's operation names looks them up in).
    pub const ALL: [BinaryOp; 12] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::FloorDiv,
        BinaryOp::Rem,
        BinaryOp::Pow,
        BinaryOp::LogicalAnd,
        BinaryOp::LogicalOr,
        BinaryOp::BitAnd,
        BinaryOp::BitOr,
        BinaryOp::BitXor,
    ];

    /// The operator as written in [`Expr`]'s `Display`.
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            FloorDiv => "//",
            Rem => "%",
            Pow => "**",
            LogicalAnd => "and",
            LogicalOr => "or",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
        }
    }

    fn precedence(self) -> u8 {
        use BinaryOp::*;
        match self {
            LogicalOr => 1,
            LogicalAnd => 2,
            BitOr => 4,
            BitXor => 5,
            BitAnd => 6,
            Add | Sub => 8,
            Mul | Div | FloorDiv | Rem => 9,
            Pow => 11,
        }
    }
}

/// Comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    /// Every comparison (what a decoder of an expression's operation names looks them up in).
    pub const ALL: [CompareOp; 6] =
        [CompareOp::Eq, CompareOp::Ne, CompareOp::Lt, CompareOp::Le, CompareOp::Gt, CompareOp::Ge];

    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }
}

/// The built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Func {
    Abs,
    Sqrt,
    Exp,
    Log,
    Log10,
    Sin,
    Cos,
    Tan,
    Arcsin,
    Arccos,
    Arctan,
    Arctan2,
    Sinh,
    Cosh,
    Tanh,
    Floor,
    Ceil,
    IsNan,
    Real,
    Imag,
    Conj,
    /// Zero of the argument's dtype, whatever the argument.
    Zero,
    /// NaN-propagating maximum of two values.
    Maximum,
    /// NaN-propagating minimum of two values.
    Minimum,
    /// `normalize_index(i, n, axis)`, all `int64`: numpy's reading of an index into an axis of
    /// length `n`: `i` for `0 <= i < n`, `i + n` for `-n <= i < 0`; any other `i` makes the
    /// program fail with [`Error::IndexOutOfBounds`] for axis `axis` (a constant). Lowering checks
    /// index arrays with it, over the whole index array, whether or not the values read are used.
    NormalizeIndex,
    Arcsinh,
    Arccosh,
    Arctanh,
    /// `exp(x) - 1`, accurate near 0.
    Expm1,
    /// `log(1 + x)`, accurate near 0.
    Log1p,
    Log2,
    /// `sqrt(a² + b²)` without overflow (real floats; an infinite argument gives `inf`, even with
    /// a NaN).
    Hypot,
    /// `log(exp(a) + exp(b))` without overflow (real floats; numpy's `logaddexp`).
    LogAddExp,
    /// `|a|` with the sign bit of `b` (real floats).
    Copysign,
    /// The next representable value after `a` toward `b`, in the arguments' precision.
    Nextafter,
    /// Whether the sign bit is set (real floats; `true` for `-0.0` and negative NaNs).
    Signbit,
    /// Round to the nearest integer, ties to even (numpy `rint`/`round`); complex numbers part by
    /// part.
    Rint,
    /// `integer_exponent(y)`, a signed integer: `y` where it is not negative; a negative `y` makes
    /// the program fail with [`Error::InvalidArgument`] (numpy: "Integers to negative integer
    /// powers are not allowed"). The frontend checks integer exponents with it, over the whole
    /// exponent array, as it checks index arrays with [`Func::NormalizeIndex`].
    IntegerExponent,
    /// `complex(re, im)`: the complex number with real part `re` and imaginary part `im`, both
    /// real floats of one dtype (`float32` gives `complex64`, `float64` `complex128`). Exact,
    /// whatever the parts are (`re + im * 1j` is not: `inf * 1j` has a NaN real part).
    MakeComplex,
    /// `fmod(a, b)`: the remainder of `a / b` truncated toward zero, with the sign of `a` (C's and
    /// numpy's `fmod` of real floats): exact, NaN where `b` is 0 or `a` infinite.
    Fmod,
    /// The real cube root (real floats; `cbrt(-8.0)` is `-2.0`).
    Cbrt,
    /// `2^x` (real floats).
    Exp2,
    /// `a * b` of complex numbers by the textbook formula, `(a.re b.re - a.im b.im) + (a.re b.im
    /// + a.im b.re) i`, each product rounded: how numpy's `einsum`, `prod` and `cumprod`
    /// multiply. `*` ([`BinaryOp::Mul`]) is numpy's elementwise `multiply`, which fuses the first
    /// product of each part into its sum on processors with fused multiply-add (numpy's einsum
    /// of `x` and `conj(x)` has an imaginary part of exactly 0; a fused one would not).
    TextbookProduct,
    /// `require_non_negative(v, check)`, both `int64`, `check` a constant: `v` where it is not
    /// negative; a negative `v` makes the program fail with the error of the
    /// [`ValueCheck`](crate::error::ValueCheck) whose code `check` is: numpy's refusals of values
    /// as it computes (an all-NaN slice in `nanargmax`, an entry out of range in `choose`). The
    /// frontend makes the values it checks -1 where numpy refuses and checks them over the whole
    /// array, as [`Func::NormalizeIndex`] checks index arrays.
    RequireNonNegative,
    /// The greatest common divisor of two integers of one dtype (numpy `gcd`): Euclid's algorithm
    /// on the magnitudes as unsigned integers of the dtype's width, the result read back in the
    /// dtype. So `gcd(0, 0)` is 0, and the smallest signed integer, whose magnitude the dtype
    /// cannot hold, gives itself where numpy does (`gcd(-128, 0)` is -128 in `int8`).
    Gcd,
    /// The least common multiple (numpy `lcm`): `(|a| / gcd) * |b|` on the unsigned magnitudes,
    /// wrapping in the dtype's width and read back in the dtype; 0 where the gcd is 0.
    Lcm,
    /// `ldexp(x, n)`: `x · 2ⁿ` rounded once (real floats; `n` an integral value of `x`'s dtype,
    /// which the frontend clamps to where every result has saturated): exact unless the result
    /// is subnormal, infinite where it overflows, NaN, ±0 and ±inf unchanged.
    Ldexp,
    /// The mantissa of `frexp(x)` (real floats): `m` with `0.5 <= |m| < 1` and `x = m · 2^e`;
    /// `x` itself for ±0, ±inf and NaN.
    FrexpMantissa,
    /// The exponent `e` of `frexp(x)` as `int32` (real floats); 0 for ±0, ±inf and NaN.
    FrexpExponent,
}

impl Func {
    /// Every function.
    pub const ALL: [Func; 49] = [
        Func::Abs,
        Func::Sqrt,
        Func::Exp,
        Func::Log,
        Func::Log10,
        Func::Sin,
        Func::Cos,
        Func::Tan,
        Func::Arcsin,
        Func::Arccos,
        Func::Arctan,
        Func::Arctan2,
        Func::Sinh,
        Func::Cosh,
        Func::Tanh,
        Func::Floor,
        Func::Ceil,
        Func::IsNan,
        Func::Real,
        Func::Imag,
        Func::Conj,
        Func::Zero,
        Func::Maximum,
        Func::Minimum,
        Func::NormalizeIndex,
        Func::Arcsinh,
        Func::Arccosh,
        Func::Arctanh,
        Func::Expm1,
        Func::Log1p,
        Func::Log2,
        Func::Hypot,
        Func::LogAddExp,
        Func::Copysign,
        Func::Nextafter,
        Func::Signbit,
        Func::Rint,
        Func::IntegerExponent,
        Func::MakeComplex,
        Func::Fmod,
        Func::Cbrt,
        Func::Exp2,
        Func::TextbookProduct,
        Func::RequireNonNegative,
        Func::Gcd,
        Func::Lcm,
        Func::Ldexp,
        Func::FrexpMantissa,
        Func::FrexpExponent,
    ];

    /// The function's name, as numpy spells it.
    pub fn name(self) -> &'static str {
        use Func::*;
        match self {
            Abs => "abs",
            Sqrt => "sqrt",
            Exp => "exp",
            Log => "log",
            Log10 => "log10",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Arcsin => "arcsin",
            Arccos => "arccos",
            Arctan => "arctan",
            Arctan2 => "arctan2",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Floor => "floor",
            Ceil => "ceil",
            IsNan => "isnan",
            Real => "real",
            Imag => "imag",
            Conj => "conj",
            Zero => "zero",
            Maximum => "maximum",
            Minimum => "minimum",
            NormalizeIndex => "normalize_index",
            Arcsinh => "arcsinh",
            Arccosh => "arccosh",
            Arctanh => "arctanh",
            Expm1 => "expm1",
            Log1p => "log1p",
            Log2 => "log2",
            Hypot => "hypot",
            LogAddExp => "logaddexp",
            Copysign => "copysign",
            Nextafter => "nextafter",
            Signbit => "signbit",
            Rint => "rint",
            IntegerExponent => "integer_exponent",
            MakeComplex => "complex",
            Fmod => "fmod",
            Cbrt => "cbrt",
            Exp2 => "exp2",
            TextbookProduct => "textbook_product",
            RequireNonNegative => "require_non_negative",
            Gcd => "gcd",
            Lcm => "lcm",
            Ldexp => "ldexp",
            FrexpMantissa => "frexp_mantissa",
            FrexpExponent => "frexp_exponent",
        }
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            Func::Arctan2
            | Func::Maximum
            | Func::Minimum
            | Func::Hypot
            | Func::LogAddExp
            | Func::Copysign
            | Func::Nextafter
            | Func::MakeComplex
            | Func::Fmod
            | Func::TextbookProduct
            | Func::RequireNonNegative
            | Func::Gcd
            | Func::Lcm
            | Func::Ldexp => 2,
            Func::NormalizeIndex => 3,
            _ => 1,
        }
    }

    /// The result dtype for arguments of dtype `arg` (all arguments share it), or why not.
    pub fn result_dtype(self, arg: DType) -> std::result::Result<DType, &'static str> {
        use DTypeKind::*;
        use Func::*;
        let kind = arg.kind();
        match self {
            Abs => match kind {
                Bool => Err("abs of bool"),
                Complex => Ok(arg.real_dtype()),
                _ => Ok(arg),
            },
            Sqrt | Exp | Log | Log10 | Sin | Cos | Tan | Arcsin | Arccos | Arctan | Sinh | Cosh | Tanh | Arcsinh
            | Arccosh | Arctanh | Expm1 | Log1p | Log2 | Rint => {
                if arg.is_inexact() {
                    Ok(arg)
                } else {
                    Err("needs a float or complex argument")
                }
            }
            Signbit => {
                if kind == Float {
                    Ok(DType::Bool)
                } else {
                    Err("needs a real float argument")
                }
            }
            TextbookProduct => {
                if kind == Complex {
                    Ok(arg)
                } else {
                    Err("needs complex arguments")
                }
            }
            Arctan2 | Floor | Ceil | Hypot | LogAddExp | Copysign | Nextafter | Fmod | Cbrt | Exp2 | Ldexp
            | FrexpMantissa => {
                if kind == Float {
                    Ok(arg)
                } else {
                    Err("needs a real float argument")
                }
            }
            IsNan => {
                if arg.is_inexact() {
                    Ok(DType::Bool)
                } else {
                    Err("needs a float or complex argument")
                }
            }
            Real | Imag => Ok(arg.real_dtype()),
            Conj | Zero => Ok(arg),
            Maximum | Minimum => {
                if kind == Complex {
                    Err("complex values have no maximum/minimum here")
                } else {
                    Ok(arg)
                }
            }
            NormalizeIndex => {
                if arg == DType::I64 {
                    Ok(arg)
                } else {
                    Err("takes int64 arguments")
                }
            }
            MakeComplex => {
                if kind == Float {
                    Ok(arg.complex_dtype())
                } else {
                    Err("needs real float parts")
                }
            }
            IntegerExponent => {
                if kind == SignedInt {
                    Ok(arg)
                } else {
                    Err("takes a signed integer argument")
                }
            }
            RequireNonNegative => {
                if arg == DType::I64 {
                    Ok(arg)
                } else {
                    Err("takes int64 arguments")
                }
            }
            Gcd | Lcm => {
                if matches!(kind, SignedInt | UnsignedInt) {
                    Ok(arg)
                } else {
                    Err("needs integer arguments")
                }
            }
            FrexpExponent => {
                if kind == Float {
                    Ok(DType::I32)
                } else {
                    Err("needs a real float argument")
                }
            }
        }
    }
}

/// Reduction operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// Sum (numeric dtypes but bool); 0 over an empty range.
    Sum,
    /// Product (numeric dtypes but bool); 1 over an empty range.
    Product,
    /// Maximum (real dtypes and bool); NaN propagates; see [`ReduceOp::neutral`] for empty ranges.
    Max,
    /// Minimum (real dtypes and bool); NaN propagates; see [`ReduceOp::neutral`] for empty ranges.
    Min,
    /// Logical and (bool); `true` over an empty range.
    All,
    /// Logical or (bool); `false` over an empty range.
    Any,
}

impl ReduceOp {
    /// Every reduction (what a decoder of an expression's operation names looks them up in).
    pub const ALL: [ReduceOp; 6] =
        [ReduceOp::Sum, ReduceOp::Product, ReduceOp::Max, ReduceOp::Min, ReduceOp::All, ReduceOp::Any];

    /// The operation's name.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Product => "product",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::All => "all",
            ReduceOp::Any => "any",
        }
    }

    /// Whether the operation accepts a body of dtype `dtype`.
    pub fn accepts(self, dtype: DType) -> bool {
        match self {
            ReduceOp::Sum | ReduceOp::Product => dtype.is_numeric(),
            ReduceOp::Max | ReduceOp::Min => !dtype.is_complex(),
            ReduceOp::All | ReduceOp::Any => dtype == DType::Bool,
        }
    }

    /// The value over an empty range: the operation's identity. For `Max` that is `-inf` (the
    /// smallest integer), for `Min` `+inf` (the largest integer); the frontend rejects `max`/`min`
    /// over an empty axis without `initial`, as numpy does, where the length is known.
    pub fn neutral(self, dtype: DType) -> Scalar {
        use DType::*;
        let extreme = |max: bool| -> Scalar {
            match dtype {
                F16 => Scalar::F16(if max { half::f16::INFINITY } else { half::f16::NEG_INFINITY }),
                F32 => Scalar::F32(if max { f32::INFINITY } else { f32::NEG_INFINITY }),
                F64 => Scalar::F64(if max { f64::INFINITY } else { f64::NEG_INFINITY }),
                Bool => Scalar::Bool(max),
                _ => {
                    let (lo, hi) = dtype.int_range().expect("max/min take real dtypes");
                    let v = if max { hi } else { lo };
                    if dtype == U64 { Scalar::U64(v as u64) } else { Scalar::I64(v as i64).cast(dtype) }
                }
            }
        };
        match self {
            ReduceOp::Sum => Scalar::zero(dtype),
            ReduceOp::Product => Scalar::one(dtype),
            ReduceOp::All => Scalar::Bool(true),
            ReduceOp::Any => Scalar::Bool(false),
            ReduceOp::Max => extreme(false),
            ReduceOp::Min => extreme(true),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Construction helpers.

impl Expr {
    /// A variable.
    pub fn var(name: &str) -> Expr {
        Expr::Var(name.into())
    }

    /// The output iname of `axis`.
    pub fn iname(axis: usize) -> Expr {
        Expr::Var(crate::names::iname(axis).into())
    }

    /// A typed constant.
    pub fn constant(value: impl Into<Scalar>) -> Expr {
        Expr::Const(value.into())
    }

    /// An `f64` constant.
    pub fn f64(value: f64) -> Expr {
        Expr::Const(Scalar::F64(value))
    }

    /// An `i64` constant.
    pub fn i64(value: i64) -> Expr {
        Expr::Const(Scalar::I64(value))
    }

    /// `name[indices...]`.
    pub fn subscript(name: &str, indices: Vec<Expr>) -> Expr {
        Expr::Subscript(name.into(), indices.into())
    }

    /// `name[_0, _1, …, _{ndim-1}]`, or `name` for a 0-d binding.
    pub fn identity_subscript(name: &str, ndim: usize) -> Expr {
        if ndim == 0 { Expr::var(name) } else { Expr::subscript(name, (0..ndim).map(Expr::iname).collect()) }
    }

    /// `self op rhs`.
    pub fn binary(self, op: BinaryOp, rhs: Expr) -> Expr {
        Expr::Binary(op, Arc::new(self), Arc::new(rhs))
    }

    /// `self op rhs` for a comparison.
    pub fn compare(self, op: CompareOp, rhs: Expr) -> Expr {
        Expr::Compare(op, Arc::new(self), Arc::new(rhs))
    }

    /// `op self`.
    pub fn unary(self, op: UnaryOp) -> Expr {
        Expr::Unary(op, Arc::new(self))
    }

    /// `self` converted to `dtype`.
    pub fn cast(self, dtype: DType) -> Expr {
        Expr::Cast(dtype, Arc::new(self))
    }

    /// `func(args...)`.
    pub fn call(func: Func, args: Vec<Expr>) -> Expr {
        Expr::Call(func, args.into())
    }

    /// `if cond then then_ else else_`.
    pub fn if_then_else(cond: Expr, then_: Expr, else_: Expr) -> Expr {
        Expr::If(Arc::new(cond), Arc::new(then_), Arc::new(else_))
    }

    /// A reduction.
    pub fn reduce(op: ReduceOp, inames: Vec<ReductionBounds>, body: Expr) -> Expr {
        Expr::Reduce(Arc::new(Reduce { op, inames, body, start: None }))
    }

    /// A complex product whose accumulator starts at `start` (see [`Reduce::start`]).
    pub fn product_from(start: Scalar, inames: Vec<ReductionBounds>, body: Expr) -> Expr {
        Expr::Reduce(Arc::new(Reduce { op: ReduceOp::Product, inames, body, start: Some(start) }))
    }

    /// The direct sub-expressions.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Const(_) | Expr::Var(_) => Vec::new(),
            Expr::Subscript(_, idx) | Expr::Call(_, idx) => idx.iter().collect(),
            Expr::Unary(_, a) | Expr::Cast(_, a) => vec![a],
            Expr::Binary(_, a, b) | Expr::Compare(_, a, b) => vec![a, b],
            Expr::If(c, a, b) => vec![c, a, b],
            Expr::Reduce(r) => vec![&r.body],
        }
    }

    /// The number of levels of the expression tree (1 for a constant or a variable), found
    /// without recursion.
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1)];
        while let Some((e, level)) = stack.pop() {
            deepest = deepest.max(level);
            stack.extend(e.children().into_iter().map(|c| (c, level + 1)));
        }
        deepest
    }

    /// Calls `f` on every sub-expression, this one included, parents before children.
    pub fn walk(&self, f: &mut impl FnMut(&Expr)) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            f(e);
            stack.extend(e.children().into_iter().rev());
        }
    }

    /// The expression rewritten bottom-up: `f` sees each node after its children were rewritten
    /// and returns a replacement, or `None` to keep it.
    ///
    /// ```
    /// use pytato_core::expr::{Expr, Func};
    /// let e = Expr::call(Func::Sin, vec![Expr::var("x")]);
    /// let cos = e.rewrite(&mut |e| match e {
    ///     Expr::Call(Func::Sin, args) => Some(Expr::Call(Func::Cos, args.clone())),
    ///     _ => None,
    /// });
    /// assert_eq!(cos.to_string(), "cos(x)");
    /// ```
    pub fn rewrite(&self, f: &mut impl FnMut(&Expr) -> Option<Expr>) -> Expr {
        fn rewrite_dyn(e: &Expr, f: &mut dyn FnMut(&Expr) -> Option<Expr>) -> Expr {
            let list = |v: &Arc<[Expr]>, f: &mut dyn FnMut(&Expr) -> Option<Expr>| -> Arc<[Expr]> {
                v.iter().map(|x| rewrite_dyn(x, f)).collect()
            };
            let one = |a: &Arc<Expr>, f: &mut dyn FnMut(&Expr) -> Option<Expr>| Arc::new(rewrite_dyn(a, f));
            let rebuilt = match e {
                Expr::Const(_) | Expr::Var(_) => e.clone(),
                Expr::Subscript(n, idx) => Expr::Subscript(n.clone(), list(idx, f)),
                Expr::Unary(op, a) => Expr::Unary(*op, one(a, f)),
                Expr::Binary(op, a, b) => Expr::Binary(*op, one(a, f), one(b, f)),
                Expr::Compare(op, a, b) => Expr::Compare(*op, one(a, f), one(b, f)),
                Expr::If(c, a, b) => Expr::If(one(c, f), one(a, f), one(b, f)),
                Expr::Cast(d, a) => Expr::Cast(*d, one(a, f)),
                Expr::Call(func, args) => Expr::Call(*func, list(args, f)),
                Expr::Reduce(r) => r.rebuilt(r.inames.clone(), rewrite_dyn(&r.body, f)),
            };
            f(&rebuilt).unwrap_or(rebuilt)
        }
        rewrite_dyn(self, f)
    }

    /// The names of the bindings the expression reads (as variables or subscripts), without
    /// duplicates, in order of first appearance.
    pub fn binding_names(&self) -> Vec<Arc<str>> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        self.walk(&mut |e| {
            let name = match e {
                Expr::Var(n) if classify(n).is_none_or(|r| matches!(r, Reserved::Binding(_))) => n,
                Expr::Subscript(n, _) => n,
                _ => return,
            };
            if seen.insert(name.clone()) {
                out.push(name.clone());
            }
        });
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Typing.

/// What a variable of an expression refers to, for [`Expr::dtype`].
pub trait TypeEnv {
    /// Number of output axes (so `_0 .. _{ndim-1}` are valid inames).
    fn ndim(&self) -> usize;
    /// The dtype and number of axes of a binding.
    fn binding(&self, name: &str) -> Option<(DType, usize)>;
    /// A description of the known names, for error messages.
    fn describe(&self) -> String;
}

impl Expr {
    /// The dtype of the expression in `env`, checking every typing rule on the way.
    ///
    /// Rules: `Const` has its value's dtype; inames and reduction inames are `int64`; a binding has
    /// its array's dtype. Subscript indices are integers. `+ - *` and `**` take two equal numeric
    /// (non-bool) dtypes; `/` two equal inexact dtypes; `//` and `%` two equal integer or float
    /// dtypes; logical operations bool; bitwise operations equal integer or bool dtypes; negation a
    /// non-bool numeric dtype. Comparisons take two equal dtypes and give bool. `If` takes a bool
    /// condition and two equal dtypes. Function rules are [`Func::result_dtype`]; reductions
    /// [`ReduceOp::accepts`].
    pub fn dtype(&self, env: &dyn TypeEnv) -> Result<DType> {
        self.dtype_with_reduction_inames(env, &[])
    }

    /// [`Expr::dtype`] of a sub-expression that sits inside reductions over `inames`.
    pub fn dtype_with_reduction_inames(&self, env: &dyn TypeEnv, inames: &[&str]) -> Result<DType> {
        let mut scope: Vec<Arc<str>> = inames.iter().map(|&n| n.into()).collect();
        self.dtype_in(env, &mut scope)
    }

    fn dtype_in(&self, env: &dyn TypeEnv, scope: &mut Vec<Arc<str>>) -> Result<DType> {
        let same = |op: &str, a: DType, b: DType| -> Result<DType> {
            if a == b {
                Ok(a)
            } else {
                Err(Error::expr_type(
                    format!("scalar expression `{op}`"),
                    format!("operands have dtypes {a} and {b}; insert a cast so that they agree"),
                ))
            }
        };
        match self {
            Expr::Const(v) => Ok(v.dtype()),
            Expr::Var(name) => self.var_dtype(name, env, scope),
            Expr::Subscript(name, indices) => {
                let (dtype, ndim) = env.binding(name).ok_or_else(|| unknown(name, env))?;
                if ndim != indices.len() {
                    return Err(Error::expr_type(
                        "scalar expression subscript",
                        format!("`{name}` has {ndim} axes but is subscripted with {} indices", indices.len()),
                    ));
                }
                for idx in indices.iter() {
                    let d = idx.dtype_in(env, scope)?;
                    if !d.is_integer() {
                        return Err(Error::expr_type(
                            "scalar expression subscript",
                            format!("index `{idx}` into `{name}` has dtype {d}; indices must be integers"),
                        ));
                    }
                }
                Ok(dtype)
            }
            Expr::Unary(op, a) => {
                let d = a.dtype_in(env, scope)?;
                if d == DType::F16 {
                    return Err(storage_only(&format!("{op:?}")));
                }
                let ok = match op {
                    UnaryOp::Neg => d.is_numeric(),
                    UnaryOp::LogicalNot => d == DType::Bool,
                    UnaryOp::BitNot => d == DType::Bool || d.is_integer(),
                };
                if ok {
                    Ok(d)
                } else {
                    Err(Error::expr_type(format!("scalar expression {op:?}"), format!("operand dtype {d}")))
                }
            }
            Expr::Binary(op, a, b) => {
                let d = same(op.symbol(), a.dtype_in(env, scope)?, b.dtype_in(env, scope)?)?;
                if d == DType::F16 {
                    return Err(storage_only(op.symbol()));
                }
                use BinaryOp::*;
                let ok = match op {
                    Add | Sub | Mul | Pow => d.is_numeric(),
                    Div => d.is_inexact(),
                    FloorDiv | Rem => d.is_integer() || d.kind() == DTypeKind::Float,
                    LogicalAnd | LogicalOr => d == DType::Bool,
                    BitAnd | BitOr | BitXor => d == DType::Bool || d.is_integer(),
                };
                if ok {
                    Ok(d)
                } else {
                    Err(Error::expr_type(
                        format!("scalar expression `{}`", op.symbol()),
                        format!("operands of dtype {d} are not accepted"),
                    ))
                }
            }
            Expr::Compare(op, a, b) => {
                if same(op.symbol(), a.dtype_in(env, scope)?, b.dtype_in(env, scope)?)? == DType::F16 {
                    return Err(storage_only(op.symbol()));
                }
                Ok(DType::Bool)
            }
            Expr::If(c, a, b) => {
                let dc = c.dtype_in(env, scope)?;
                if dc != DType::Bool {
                    return Err(Error::expr_type(
                        "scalar expression if",
                        format!("condition has dtype {dc}, not bool"),
                    ));
                }
                same("if", a.dtype_in(env, scope)?, b.dtype_in(env, scope)?)
            }
            Expr::Cast(to, a) => {
                a.dtype_in(env, scope)?;
                Ok(*to)
            }
            Expr::Call(func, args) => {
                if args.len() != func.arity() {
                    return Err(Error::expr_type(
                        format!("scalar expression {}", func.name()),
                        format!("takes {} arguments, got {}", func.arity(), args.len()),
                    ));
                }
                let mut dtypes = args.iter().map(|a| a.dtype_in(env, scope)).collect::<Result<Vec<_>>>()?;
                let d = dtypes.pop().expect("arity >= 1");
                for other in dtypes {
                    same(func.name(), other, d)?;
                }
                if d == DType::F16 {
                    return Err(storage_only(func.name()));
                }
                func.result_dtype(d).map_err(|why| {
                    Error::expr_type(format!("scalar expression {}", func.name()), format!("argument dtype {d}: {why}"))
                })
            }
            Expr::Reduce(r) => {
                for b in &r.inames {
                    if !matches!(classify(&b.iname), Some(Reserved::ReductionIname(_))) {
                        return Err(Error::expr_type(
                            "scalar expression reduce",
                            format!("reduction iname {:?} is not of the form _rN", &*b.iname),
                        ));
                    }
                    if scope.contains(&b.iname) {
                        return Err(Error::expr_type(
                            "scalar expression reduce",
                            format!("reduction iname {:?} is bound twice", &*b.iname),
                        ));
                    }
                }
                let depth = scope.len();
                scope.extend(r.inames.iter().map(|b| b.iname.clone()));
                let d = r.body.dtype_in(env, scope);
                scope.truncate(depth);
                let d = d?;
                if d == DType::F16 {
                    return Err(storage_only(&format!("reduce {}", r.op.name())));
                }
                if !r.op.accepts(d) {
                    return Err(Error::expr_type(
                        format!("scalar expression reduce {}", r.op.name()),
                        format!("body dtype {d} is not accepted"),
                    ));
                }
                match r.start {
                    Some(start) if r.op != ReduceOp::Product || !d.is_complex() || start.dtype() != d => {
                        Err(Error::expr_type(
                            format!("scalar expression reduce {}", r.op.name()),
                            format!(
                                "a start value ({} {start}) is for complex products of its own dtype, not a {} \
                                 over {d}",
                                start.dtype(),
                                r.op.name()
                            ),
                        ))
                    }
                    _ => Ok(d),
                }
            }
        }
    }

    fn var_dtype(&self, name: &str, env: &dyn TypeEnv, scope: &[Arc<str>]) -> Result<DType> {
        match classify(name) {
            Some(Reserved::Iname(axis)) if axis < env.ndim() => Ok(DType::I64),
            Some(Reserved::ReductionIname(_)) if scope.iter().any(|s| &**s == name) => Ok(DType::I64),
            Some(Reserved::Iname(_)) | Some(Reserved::ReductionIname(_)) => Err(unknown(name, env)),
            _ => match env.binding(name) {
                Some((dtype, 0)) => Ok(dtype),
                Some((_, ndim)) => Err(Error::expr_type(
                    "scalar expression variable",
                    format!("`{name}` has {ndim} axes and must be subscripted"),
                )),
                None => Err(unknown(name, env)),
            },
        }
    }
}

/// The error for an operation on `float16` operands that was not rewritten by
/// [`Expr::widen_float16`].
fn storage_only(op: &str) -> Error {
    Error::expr_type(
        format!("scalar expression `{op}`"),
        "float16 operands: float16 is a storage dtype, computed in float32 (Expr::widen_float16, which \
         Array::new_index_lambda applies, rewrites the expression so)",
    )
}

fn unknown(name: &str, env: &dyn TypeEnv) -> Error {
    Error::UnknownVariable { op: "IndexLambda".into(), name: name.into(), detail: env.describe() }
}

// ---------------------------------------------------------------------------------------------
// float16: a storage dtype.

impl Expr {
    /// `true` when the expression has a `float16` constant or cast, or reads a `float16`
    /// binding: only such expressions can need [`Expr::widen_float16`].
    pub fn mentions_float16(&self, env: &dyn TypeEnv) -> bool {
        let mut found = false;
        self.walk(&mut |e| {
            found |= match e {
                Expr::Const(v) => v.dtype() == DType::F16,
                Expr::Cast(d, _) => *d == DType::F16,
                Expr::Var(n) | Expr::Subscript(n, _) => env.binding(n).is_some_and(|(d, _)| d == DType::F16),
                _ => false,
            }
        });
        found
    }

    /// The expression with every operation on `float16` values done in `float32` and rounded
    /// back to `float16`, which is numpy's definition of `float16` arithmetic (its loops convert
    /// to `float`, compute, and convert back): `a + b` becomes
    /// `float16(float32(a) + float32(b))`, a comparison compares the widened values, a function
    /// is the `float32` function rounded. A reduction over `float16` terms accumulates in
    /// `float32` and rounds once at the end, its terms unrounded (numpy's `sum` along a
    /// contiguous axis, `matmul`, `dot` and `tensordot` of `float16` do the same; its `einsum`
    /// rounds into the `float16` output at each term when its iteration order puts the summed
    /// axis outside the inner loop); an operand that is itself the result of an operation
    /// is rounded first, as numpy would have stored it.
    ///
    /// Afterwards `float16` appears only in constants, reads, `If` and casts: the expression
    /// language's typing rejects operations on it, so backends need no `float16` arithmetic.
    /// Operands of different dtypes are left alone (typing reports them). [`Array::new_index_lambda`](crate::Array::new_index_lambda)
    /// applies this to every expression.
    ///
    /// ```
    /// use pytato_core::expr::{Expr, BinaryOp, TypeEnv};
    /// use pytato_core::DType;
    /// struct Env;
    /// impl TypeEnv for Env {
    ///     fn ndim(&self) -> usize { 0 }
    ///     fn binding(&self, _: &str) -> Option<(DType, usize)> { Some((DType::F16, 0)) }
    ///     fn describe(&self) -> String { String::new() }
    /// }
    /// let sum = Expr::var("a").binary(BinaryOp::Add, Expr::var("b"));
    /// assert!(sum.dtype(&Env).is_err());
    /// let widened = sum.widen_float16(&Env);
    /// assert_eq!(widened.to_string(), "cast(float16, cast(float32, a) + cast(float32, b))");
    /// assert_eq!(widened.dtype(&Env).unwrap(), DType::F16);
    /// ```
    pub fn widen_float16(&self, env: &dyn TypeEnv) -> Expr {
        widen(self, env).expr
    }
}

/// One sub-expression after [`Expr::widen_float16`].
struct Widened {
    expr: Expr,
    /// The dtype `expr` has (the original's, so `float16` where it was; a guess where the
    /// original does not type, which the final typing reports).
    dtype: DType,
    /// `expr` is `float16(x)` for an `x` computed in `float32` by the rewrite.
    rounded: bool,
}

impl Widened {
    fn keep(expr: Expr, dtype: DType) -> Widened {
        Widened { expr, dtype, rounded: false }
    }

    /// `x`, computed in `float32`, rounded to `float16`.
    fn round(x: Expr) -> Widened {
        Widened { expr: x.cast(DType::F16), dtype: DType::F16, rounded: true }
    }

    /// The value as `float32` (exact: every `float16` is a `float32`).
    fn f32(self) -> Expr {
        match self.expr {
            Expr::Const(Scalar::F16(v)) => Expr::Const(Scalar::F32(crate::half_float::f16_to_f32(v))),
            x => x.cast(DType::F32),
        }
    }

    /// The `float32` value before the rounding the rewrite added, if it added one.
    fn unrounded_f32(self) -> Expr {
        match self.expr {
            Expr::Cast(DType::F16, inner) if self.rounded => (*inner).clone(),
            _ => self.f32(),
        }
    }
}

fn widen(e: &Expr, env: &dyn TypeEnv) -> Widened {
    const F16: DType = DType::F16;
    let binding = |name: &str| env.binding(name).map_or(DType::I64, |(d, _)| d);
    match e {
        Expr::Const(v) => Widened::keep(e.clone(), v.dtype()),
        Expr::Var(name) => {
            let dtype = match classify(name) {
                Some(Reserved::Iname(_) | Reserved::ReductionIname(_)) => DType::I64,
                _ => binding(name),
            };
            Widened::keep(e.clone(), dtype)
        }
        Expr::Subscript(name, indices) => {
            let indices = indices.iter().map(|i| widen(i, env).expr).collect();
            Widened::keep(Expr::Subscript(name.clone(), indices), binding(name))
        }
        Expr::Unary(op, a) => {
            let a = widen(a, env);
            match a.dtype {
                F16 => Widened::round(a.f32().unary(*op)),
                d => Widened::keep(a.expr.unary(*op), d),
            }
        }
        Expr::Binary(op, a, b) => {
            let (a, b) = (widen(a, env), widen(b, env));
            match (a.dtype, b.dtype) {
                (F16, F16) => Widened::round(a.f32().binary(*op, b.f32())),
                (d, _) => Widened::keep(a.expr.binary(*op, b.expr), d),
            }
        }
        Expr::Compare(op, a, b) => {
            let (a, b) = (widen(a, env), widen(b, env));
            let expr = match (a.dtype, b.dtype) {
                (F16, F16) => a.f32().compare(*op, b.f32()),
                _ => a.expr.compare(*op, b.expr),
            };
            Widened::keep(expr, DType::Bool)
        }
        Expr::If(c, a, b) => {
            let (c, a, b) = (widen(c, env), widen(a, env), widen(b, env));
            Widened::keep(Expr::if_then_else(c.expr, a.expr, b.expr), a.dtype)
        }
        Expr::Cast(to, a) => {
            let a = widen(a, env);
            if a.dtype == *to { a } else { Widened::keep(a.expr.cast(*to), *to) }
        }
        Expr::Call(func, args) => {
            let args: Vec<Widened> = args.iter().map(|a| widen(a, env)).collect();
            let dtype = args.last().map_or(DType::I64, |a| a.dtype);
            if !args.is_empty() && args.iter().all(|a| a.dtype == F16) {
                let call = Expr::call(*func, args.into_iter().map(Widened::f32).collect());
                match func.result_dtype(F16) {
                    Ok(F16) => Widened::round(call),
                    Ok(other) => Widened::keep(call, other),
                    Err(_) => Widened::keep(call, F16),
                }
            } else {
                let result = func.result_dtype(dtype).unwrap_or(dtype);
                Widened::keep(Expr::call(*func, args.into_iter().map(|a| a.expr).collect()), result)
            }
        }
        Expr::Reduce(r) => {
            let body = widen(&r.body, env);
            match body.dtype {
                // Terms unrounded, the total rounded once.
                F16 => Widened::round(Expr::reduce(r.op, r.inames.clone(), body.unrounded_f32())),
                d => Widened::keep(r.rebuilt(r.inames.clone(), body.expr), d),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Display: Python-like syntax with the fewest parentheses that keep the meaning.

const PREC_IF: u8 = 0;
const PREC_COMPARE: u8 = 3;
const PREC_UNARY: u8 = 10;
const PREC_ATOM: u8 = 12;

impl Expr {
    fn precedence(&self) -> u8 {
        match self {
            Expr::If(..) => PREC_IF,
            Expr::Binary(op, ..) => op.precedence(),
            Expr::Compare(..) => PREC_COMPARE,
            Expr::Unary(UnaryOp::LogicalNot, _) => 2,
            Expr::Unary(..) => PREC_UNARY,
            Expr::Const(Scalar::F64(v)) if v.is_sign_negative() => PREC_UNARY,
            Expr::Const(Scalar::I64(v)) if *v < 0 => PREC_UNARY,
            _ => PREC_ATOM,
        }
    }

    fn fmt_child(&self, f: &mut fmt::Formatter<'_>, min_prec: u8) -> fmt::Result {
        if self.precedence() < min_prec { write!(f, "({self})") } else { write!(f, "{self}") }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Const(v) => write!(f, "{v}"),
            Expr::Var(n) => f.write_str(n),
            Expr::Subscript(n, idx) => {
                write!(f, "{n}[")?;
                for (i, e) in idx.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str("]")
            }
            Expr::Unary(op, a) => {
                f.write_str(match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::LogicalNot => "not ",
                    UnaryOp::BitNot => "~",
                })?;
                a.fmt_child(f, self.precedence())
            }
            Expr::Binary(op, a, b) => {
                let p = op.precedence();
                // Left-associative, except `**` which is right-associative.
                let (lp, rp) = if *op == BinaryOp::Pow { (p + 1, p) } else { (p, p + 1) };
                a.fmt_child(f, lp)?;
                write!(f, " {} ", op.symbol())?;
                b.fmt_child(f, rp)
            }
            Expr::Compare(op, a, b) => {
                a.fmt_child(f, PREC_COMPARE + 1)?;
                write!(f, " {} ", op.symbol())?;
                b.fmt_child(f, PREC_COMPARE + 1)
            }
            Expr::If(c, a, b) => write!(f, "if({c}, {a}, {b})"),
            Expr::Cast(d, a) => write!(f, "cast({d}, {a})"),
            Expr::Call(func, args) => {
                write!(f, "{}(", func.name())?;
                for (i, e) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(")")
            }
            Expr::Reduce(r) => {
                write!(f, "{}(", r.op.name())?;
                for b in &r.inames {
                    write!(f, "{}:{}..{}, ", b.iname, b.lower, b.upper)?;
                }
                match r.start {
                    Some(start) => write!(f, "{}, start={start})", r.body),
                    None => write!(f, "{})", r.body),
                }
            }
        }
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Env;
    impl TypeEnv for Env {
        fn ndim(&self) -> usize {
            2
        }
        fn binding(&self, name: &str) -> Option<(DType, usize)> {
            match name {
                "a" => Some((DType::F64, 2)),
                "b" => Some((DType::I32, 1)),
                "n" => Some((DType::I64, 0)),
                "h" => Some((DType::F16, 1)),
                "g" => Some((DType::F16, 0)),
                "f" => Some((DType::F32, 0)),
                _ => None,
            }
        }
        fn describe(&self) -> String {
            "bindings a, b, n".into()
        }
    }

    fn a() -> Expr {
        Expr::subscript("a", vec![Expr::iname(0), Expr::iname(1)])
    }

    #[test]
    fn typing_accepts_well_typed_expressions() {
        assert_eq!(a().binary(BinaryOp::Add, Expr::f64(1.0)).dtype(&Env).unwrap(), DType::F64);
        assert_eq!(Expr::var("n").binary(BinaryOp::Mul, Expr::iname(1)).dtype(&Env).unwrap(), DType::I64);
        assert_eq!(a().compare(CompareOp::Lt, Expr::f64(0.0)).dtype(&Env).unwrap(), DType::Bool);
        assert_eq!(
            Expr::call(Func::Abs, vec![Expr::constant(num_complex::Complex64::new(1.0, 1.0))]).dtype(&Env).unwrap(),
            DType::F64
        );
        let red = Expr::reduce(
            ReduceOp::Sum,
            vec![ReductionBounds { iname: "_r0".into(), lower: Dim::new(0), upper: Dim::param("n") }],
            Expr::subscript("a", vec![Expr::iname(0), Expr::var("_r0")]),
        );
        assert_eq!(red.dtype(&Env).unwrap(), DType::F64);
    }

    #[test]
    fn typing_rejects_mixed_and_unknown() {
        let mixed = a().binary(BinaryOp::Add, Expr::subscript("b", vec![Expr::iname(0)]));
        let err = mixed.dtype(&Env).unwrap_err();
        assert!(err.to_string().contains("float64 and int32"), "{err}");
        assert!(matches!(Expr::var("zz").dtype(&Env), Err(Error::UnknownVariable { .. })));
        // Inames beyond ndim and unbound reduction inames are unknown.
        assert!(matches!(Expr::iname(2).dtype(&Env), Err(Error::UnknownVariable { .. })));
        assert!(matches!(Expr::var("_r0").dtype(&Env), Err(Error::UnknownVariable { .. })));
        // Wrong number of indices, float indices, unsubscripted arrays.
        assert!(Expr::subscript("a", vec![Expr::iname(0)]).dtype(&Env).is_err());
        assert!(Expr::subscript("b", vec![Expr::f64(0.0)]).dtype(&Env).is_err());
        assert!(Expr::var("a").dtype(&Env).is_err());
        // Operations on dtypes they do not accept.
        assert!(Expr::i64(1).binary(BinaryOp::Div, Expr::i64(2)).dtype(&Env).is_err());
        assert!(Expr::constant(true).unary(UnaryOp::Neg).dtype(&Env).is_err());
        assert!(Expr::f64(1.0).binary(BinaryOp::BitAnd, Expr::f64(1.0)).dtype(&Env).is_err());
        assert!(Expr::call(Func::Sqrt, vec![Expr::i64(4)]).dtype(&Env).is_err());
        assert!(Expr::call(Func::Arctan2, vec![Expr::f64(1.0)]).dtype(&Env).is_err());
        assert!(Expr::if_then_else(Expr::i64(1), Expr::f64(1.0), Expr::f64(2.0)).dtype(&Env).is_err());
    }

    #[test]
    fn reduction_inames_are_checked() {
        let bounds = |name: &str| ReductionBounds { iname: name.into(), lower: Dim::new(0), upper: Dim::new(3) };
        let bad_name = Expr::reduce(ReduceOp::Sum, vec![bounds("k")], Expr::f64(1.0));
        assert!(bad_name.dtype(&Env).is_err());
        let inner = Expr::reduce(ReduceOp::Sum, vec![bounds("_r0")], Expr::f64(1.0));
        let twice = Expr::reduce(ReduceOp::Sum, vec![bounds("_r0")], inner);
        assert!(twice.dtype(&Env).unwrap_err().to_string().contains("bound twice"));
        let bool_sum = Expr::reduce(ReduceOp::Sum, vec![bounds("_r0")], Expr::constant(true));
        assert!(bool_sum.dtype(&Env).is_err());
        let any = Expr::reduce(ReduceOp::Any, vec![bounds("_r0")], Expr::constant(true));
        assert_eq!(any.dtype(&Env).unwrap(), DType::Bool);
    }

    #[test]
    fn start_values_are_for_complex_products_of_their_dtype_and_survive_rewrites() {
        let bounds = vec![ReductionBounds { iname: "_r0".into(), lower: Dim::new(0), upper: Dim::new(3) }];
        let z = Expr::f64(2.0).cast(DType::C128);
        let inf = Scalar::C128(num_complex::Complex64::new(f64::INFINITY, 0.0));
        let product = Expr::product_from(inf, bounds.clone(), z.clone());
        assert_eq!(product.dtype(&Env).unwrap(), DType::C128);
        assert!(product.to_string().ends_with(", start=(inf+0.0j))"), "{product}");
        // A rewrite of the body keeps the start.
        let rewritten = product.rewrite(&mut |e| match e {
            Expr::Const(Scalar::F64(_)) => Some(Expr::f64(3.0)),
            _ => None,
        });
        match &rewritten {
            Expr::Reduce(r) => assert_eq!((r.start, r.first_value(DType::C128)), (Some(inf), inf)),
            other => panic!("{other}"),
        }
        // Not on a real product, a sum, or a body of another dtype.
        let real = Expr::product_from(Scalar::F64(2.0), bounds.clone(), Expr::f64(1.0));
        assert!(real.dtype(&Env).unwrap_err().to_string().contains("complex products"));
        let sum =
            Expr::Reduce(Arc::new(Reduce { op: ReduceOp::Sum, inames: bounds.clone(), body: z, start: Some(inf) }));
        assert!(sum.dtype(&Env).is_err());
        let narrower = Expr::product_from(
            Scalar::C64(num_complex::Complex32::new(1.0, 0.0)),
            bounds,
            Expr::f64(2.0).cast(DType::C128),
        );
        assert!(narrower.dtype(&Env).is_err());
    }

    #[test]
    fn display_parenthesises_only_when_needed() {
        let x = Expr::var("x");
        let y = Expr::var("y");
        let sum = x.clone().binary(BinaryOp::Add, y.clone());
        assert_eq!(sum.clone().binary(BinaryOp::Mul, x.clone()).to_string(), "(x + y) * x");
        assert_eq!(x.clone().binary(BinaryOp::Sub, sum.clone()).to_string(), "x - (x + y)");
        assert_eq!(sum.clone().binary(BinaryOp::Sub, x.clone()).to_string(), "x + y - x");
        assert_eq!(sum.unary(UnaryOp::Neg).to_string(), "-(x + y)");
        let pow = x.clone().binary(BinaryOp::Pow, y.clone());
        assert_eq!(pow.clone().binary(BinaryOp::Pow, x.clone()).to_string(), "(x ** y) ** x");
        assert_eq!(x.binary(BinaryOp::Pow, pow).to_string(), "x ** x ** y");
    }

    #[test]
    fn binding_names_in_order() {
        let e = a()
            .binary(
                BinaryOp::Add,
                Expr::subscript("b", vec![Expr::var("n").binary(BinaryOp::Add, Expr::iname(0))]).cast(DType::F64),
            )
            .binary(BinaryOp::Add, a());
        let names: Vec<String> = e.binding_names().iter().map(|n| n.to_string()).collect();
        assert_eq!(names, ["a", "b", "n"]);
    }

    #[test]
    fn float16_is_computed_in_float32_and_rounded_after_each_operation() {
        let h = || Expr::subscript("h", vec![Expr::iname(0)]);
        let g = || Expr::var("g");
        // Typing: no operation on float16 operands; reads, `If` and casts are fine.
        for op in [h().binary(BinaryOp::Mul, g()), h().compare(CompareOp::Lt, g()), h().unary(UnaryOp::Neg)] {
            let err = op.dtype(&Env).unwrap_err().to_string();
            assert!(err.contains("float16 is a storage dtype"), "{err}");
        }
        let select = Expr::if_then_else(Expr::constant(true), h(), g());
        assert_eq!(select.dtype(&Env).unwrap(), DType::F16);
        assert_eq!(select.widen_float16(&Env), select, "nothing to widen");
        // Nested operations: each rounds to float16, as numpy's arrays would be stored.
        let nested = h().binary(BinaryOp::Mul, g()).binary(BinaryOp::Add, g());
        let widened = nested.widen_float16(&Env);
        assert_eq!(
            widened.to_string(),
            "cast(float16, cast(float32, cast(float16, cast(float32, h[_0]) * cast(float32, g))) + cast(float32, g))"
        );
        assert_eq!(widened.dtype(&Env).unwrap(), DType::F16);
        // A reduction takes its terms unrounded and rounds the total once.
        let bounds = vec![ReductionBounds { iname: "_r0".into(), lower: Dim::new(0), upper: Dim::new(3) }];
        let term = Expr::subscript("h", vec![Expr::var("_r0")]).binary(BinaryOp::Mul, g());
        let sum = Expr::reduce(ReduceOp::Sum, bounds.clone(), term).widen_float16(&Env);
        assert_eq!(sum.to_string().matches("cast(float16").count(), 1, "{sum}");
        assert_eq!(sum.dtype(&Env).unwrap(), DType::F16);
        // A float16 constant becomes a float32 constant; comparisons and bool functions keep bool.
        let c = Expr::constant(half::f16::from_f32(0.5));
        let cmp = h().compare(CompareOp::Lt, c.clone()).widen_float16(&Env);
        assert_eq!(cmp.to_string(), "cast(float32, h[_0]) < 0.5f32");
        let nan = Expr::call(Func::IsNan, vec![g()]).widen_float16(&Env);
        assert_eq!(nan.dtype(&Env).unwrap(), DType::Bool);
        // Operands of different dtypes stay as written, for typing to report.
        let mixed = h().binary(BinaryOp::Add, Expr::var("f"));
        assert_eq!(mixed.widen_float16(&Env), mixed);
        assert!(mixed.dtype(&Env).is_err());
    }
}
