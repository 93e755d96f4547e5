//! Typed scalar values and the Rust element types of each [`DType`].

use std::fmt;
use std::hash::{Hash, Hasher};

use half::f16;
use num_complex::{Complex32, Complex64};

use crate::dtype::{DType, WeakScalar};
use crate::error::{Error, Result};

/// A Rust type that is the element type of one [`DType`].
pub trait Element: Copy + Send + Sync + fmt::Debug + PartialEq + 'static {
    /// The dtype whose elements are `Self`.
    const DTYPE: DType;
    /// Wraps a value as a [`Scalar`].
    fn into_scalar(self) -> Scalar;
}

/// A single value of some [`DType`]: the typed constant of the scalar expression language.
///
/// Equality and hashing compare bit patterns, so `NaN == NaN` and `0.0 != -0.0` here: two constants
/// are equal when they are the same constant, which is what structural equality of DAGs needs.
#[derive(Clone, Copy)]
#[allow(missing_docs)]
pub enum Scalar {
    Bool(bool),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    F16(f16),
    F32(f32),
    F64(f64),
    C64(Complex32),
    C128(Complex64),
}

/// Calls `$body` with `$v` bound to the payload of any [`Scalar`] variant.
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_scalar {
    ($s:expr, $v:ident => $body:expr) => {
        match $s {
            $crate::scalar::Scalar::Bool($v) => $body,
            $crate::scalar::Scalar::I8($v) => $body,
            $crate::scalar::Scalar::I16($v) => $body,
            $crate::scalar::Scalar::I32($v) => $body,
            $crate::scalar::Scalar::I64($v) => $body,
            $crate::scalar::Scalar::U8($v) => $body,
            $crate::scalar::Scalar::U16($v) => $body,
            $crate::scalar::Scalar::U32($v) => $body,
            $crate::scalar::Scalar::U64($v) => $body,
            $crate::scalar::Scalar::F16($v) => $body,
            $crate::scalar::Scalar::F32($v) => $body,
            $crate::scalar::Scalar::F64($v) => $body,
            $crate::scalar::Scalar::C64($v) => $body,
            $crate::scalar::Scalar::C128($v) => $body,
        }
    };
}

macro_rules! impl_element {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn into_scalar(self) -> Scalar {
                Scalar::$variant(self)
            }
        }
        impl From<$t> for Scalar {
            fn from(v: $t) -> Scalar {
                Scalar::$variant(v)
            }
        }
    )*};
}

impl_element!(
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f16 => F16, f32 => F32, f64 => F64, Complex32 => C64, Complex64 => C128,
);

impl Scalar {
    /// The value's dtype.
    pub fn dtype(&self) -> DType {
        fn of<T: Element>(_: &T) -> DType {
            T::DTYPE
        }
        crate::for_each_scalar!(self, v => of(v))
    }

    /// Zero of `dtype` (`false` for bool).
    pub fn zero(dtype: DType) -> Scalar {
        Scalar::from_f64(0.0, dtype)
    }

    /// One of `dtype` (`true` for bool).
    pub fn one(dtype: DType) -> Scalar {
        Scalar::from_f64(1.0, dtype)
    }

    /// `value` converted to `dtype` with Rust's `as` semantics (saturating for float to integer).
    pub fn from_f64(value: f64, dtype: DType) -> Scalar {
        Scalar::F64(value).cast(dtype)
    }

    /// Real and imaginary parts as `f64` (exact for every dtype but 64-bit integers beyond 2^53).
    pub fn to_complex64(&self) -> Complex64 {
        match *self {
            Scalar::C64(c) => Complex64::new(c.re.into(), c.im.into()),
            Scalar::C128(c) => c,
            other => Complex64::new(other.to_f64(), 0.0),
        }
    }

    /// The real part as `f64`.
    pub fn to_f64(&self) -> f64 {
        use Scalar::*;
        match *self {
            Bool(b) => f64::from(u8::from(b)),
            I8(v) => v.into(),
            I16(v) => v.into(),
            I32(v) => v.into(),
            I64(v) => v as f64,
            U8(v) => v.into(),
            U16(v) => v.into(),
            U32(v) => v.into(),
            U64(v) => v as f64,
            F16(v) => v.into(),
            F32(v) => v.into(),
            F64(v) => v,
            C64(c) => c.re.into(),
            C128(c) => c.re,
        }
    }

    /// The value as `i128` for bool and integer dtypes.
    pub fn to_i128(&self) -> Option<i128> {
        use Scalar::*;
        Some(match *self {
            Bool(b) => b.into(),
            I8(v) => v.into(),
            I16(v) => v.into(),
            I32(v) => v.into(),
            I64(v) => v.into(),
            U8(v) => v.into(),
            U16(v) => v.into(),
            U32(v) => v.into(),
            U64(v) => v.into(),
            _ => return None,
        })
    }

    /// numpy's `astype` for one value: integers wrap, floats truncate toward zero as numpy does on
    /// x86-64 ([`float_to_int`]: NaN and out-of-range values, undefined
    /// in numpy, give what numpy gives there), complex to real drops the imaginary part, anything
    /// to bool is `!= 0`.
    pub fn cast(&self, dtype: DType) -> Scalar {
        if dtype == DType::Bool {
            let c = self.to_complex64();
            return Scalar::Bool(c.re != 0.0 || c.im != 0.0);
        }
        if let Some(i) = self.to_i128() {
            return Scalar::from_i128_wrapping(i, dtype);
        }
        let c = self.to_complex64();
        let (re, im) = match *self {
            // Keep f32 sources exact on the way to f32 targets.
            Scalar::F16(v) if dtype == DType::F16 => return Scalar::F16(v),
            Scalar::F32(v) if dtype == DType::F32 => return Scalar::F32(v),
            Scalar::C64(v) if dtype == DType::C64 => return Scalar::C64(v),
            _ => (c.re, c.im),
        };
        if dtype.is_integer() {
            // numpy leaves NaN and out-of-range values undefined; we follow its x86-64 results.
            return float_to_int(re, dtype);
        }
        match dtype {
            DType::F16 => Scalar::F16(crate::half_float::f16_from_f64(re)),
            DType::F32 => Scalar::F32(re as f32),
            DType::F64 => Scalar::F64(re),
            DType::C64 => Scalar::C64(Complex32::new(re as f32, im as f32)),
            DType::C128 => Scalar::C128(Complex64::new(re, im)),
            _ => unreachable!("bool and integer targets are handled above"),
        }
    }

    /// The integer `i` as `dtype`: wrapped into integer dtypes, rounded into float ones.
    fn from_i128_wrapping(i: i128, dtype: DType) -> Scalar {
        match dtype {
            DType::Bool => Scalar::Bool(i != 0),
            DType::I8 => Scalar::I8(i as i8),
            DType::I16 => Scalar::I16(i as i16),
            DType::I32 => Scalar::I32(i as i32),
            DType::I64 => Scalar::I64(i as i64),
            DType::U8 => Scalar::U8(i as u8),
            DType::U16 => Scalar::U16(i as u16),
            DType::U32 => Scalar::U32(i as u32),
            DType::U64 => Scalar::U64(i as u64),
            // Through float64: a value that float64 rounds is far beyond float16's range.
            DType::F16 => Scalar::F16(crate::half_float::f16_from_f64(i as f64)),
            DType::F32 => Scalar::F32(i as f32),
            DType::F64 => Scalar::F64(i as f64),
            DType::C64 => Scalar::C64(Complex32::new(i as f32, 0.0)),
            DType::C128 => Scalar::C128(Complex64::new(i as f64, 0.0)),
        }
    }

    /// The weak scalar `value` as a constant of `dtype`, the dtype numpy 2 gives it when it is mixed
    /// with an array (see [`result_type_weak`](crate::dtype::result_type_weak)). An integer that does
    /// not fit an integer dtype is an error.
    pub fn from_weak(value: &WeakScalar, dtype: DType) -> Result<Scalar> {
        Ok(match *value {
            WeakScalar::Bool(b) => Scalar::Bool(b).cast(dtype),
            WeakScalar::Int(i) => {
                if let Some((min, max)) = dtype.int_range()
                    && (i < min || i > max)
                {
                    return Err(Error::ScalarOutOfRange { value: i.to_string(), dtype });
                }
                match dtype {
                    // In range, so exact; u64 values above i64::MAX need their own path.
                    DType::U64 => Scalar::U64(i as u64),
                    d if d.is_integer() || d == DType::Bool => Scalar::I64(i as i64).cast(d),
                    d => Scalar::F64(i as f64).cast(d),
                }
            }
            WeakScalar::Float(x) => Scalar::F64(x).cast(dtype),
            WeakScalar::Complex(c) => Scalar::C128(c).cast(dtype),
        })
    }

    /// The weak scalar `value` written into an element of `dtype`, as numpy's `x[i] = value`
    /// converts a Python scalar (also `initial=` of a reduction and `pad`'s constant): a complex
    /// number into a real dtype is an error (numpy raises `TypeError`; a boolean takes its
    /// truth), a float into an integer dtype is truncated toward zero and must then fit (NaN and
    /// infinities are errors, as `int(value)` raises), an integer must fit. `op` names the
    /// operation in errors.
    pub fn assign_weak(op: &str, value: &WeakScalar, dtype: DType) -> Result<Scalar> {
        match *value {
            WeakScalar::Complex(c) if !dtype.is_complex() && dtype != DType::Bool => Err(Error::unsupported_dtype(
                op,
                dtype,
                format!("the complex scalar {c} cannot be written into it (numpy: TypeError); write its real part"),
            )),
            WeakScalar::Float(x) if dtype.is_integer() => {
                if x.is_nan() {
                    return Err(Error::invalid(op, format!("cannot convert the float NaN to an integer of {dtype}")));
                }
                let truncated = x.trunc();
                // Beyond i128 no integer dtype can hold it: report the value as written.
                if !(i128::MIN as f64..=i128::MAX as f64).contains(&truncated) {
                    return Err(Error::ScalarOutOfRange { value: x.to_string(), dtype });
                }
                Scalar::from_weak(&WeakScalar::Int(truncated as i128), dtype)
            }
            _ => Scalar::from_weak(value, dtype),
        }
    }

    fn bits(&self) -> (u64, u64) {
        use Scalar::*;
        match *self {
            F16(v) => (v.to_bits().into(), 0),
            F32(v) => (v.to_bits().into(), 0),
            F64(v) => (v.to_bits(), 0),
            C64(c) => (c.re.to_bits().into(), c.im.to_bits().into()),
            C128(c) => (c.re.to_bits(), c.im.to_bits()),
            other => (other.to_i128().expect("integer") as u64, 0),
        }
    }
}

impl PartialEq for Scalar {
    fn eq(&self, other: &Scalar) -> bool {
        self.dtype() == other.dtype() && self.bits() == other.bits()
    }
}
impl Eq for Scalar {}

impl Hash for Scalar {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.dtype().hash(state);
        self.bits().hash(state);
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Scalar::F16(v) => write!(f, "{:?}f16", f64::from(v)),
            Scalar::F32(v) => write!(f, "{v:?}f32"),
            Scalar::F64(v) => write!(f, "{v:?}"),
            Scalar::C64(c) => write!(f, "({:?}{:+?}j)c64", c.re, c.im),
            Scalar::C128(c) => write!(f, "({:?}{:+?}j)", c.re, c.im),
            Scalar::Bool(b) => write!(f, "{b}"),
            Scalar::I64(v) => write!(f, "{v}"),
            other => write!(f, "{}{}", other.to_i128().expect("integer"), other.dtype().name()),
        }
    }
}

impl fmt::Debug for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// x86-64's `cvttsd2si` into `bits` bits: `x` truncated toward zero where that fits a signed
/// integer of `bits` bits, otherwise (NaN, infinities, out of range) the smallest such integer.
fn cvtt(x: f64, bits: u32) -> i64 {
    let limit = 2f64.powi(bits as i32 - 1);
    if x > -limit - 1.0 && x < limit { x.trunc() as i64 } else { -(1i128 << (bits - 1)) as i64 }
}

/// `x` (a float) cast to the integer dtype `dtype` as numpy does on x86-64:
///
/// - `int64`, `int32`: truncation toward zero; NaN, infinities and values outside the range give
///   the smallest value of the dtype (`cvttsd2si`);
/// - `int8`, `int16`, `uint8`, `uint16`: the 32-bit conversion, wrapped (`-1.5` is 255 as
///   `uint8`; 300.7 is 44);
/// - `uint32`: the 64-bit conversion, wrapped (numpy's scalar loop, which it uses for scalars,
///   strided arrays and the tails of contiguous ones; its 4-wide vector loop gives `2^31` for NaN
///   and values below `-2^31`, so numpy itself depends on where an element sits);
/// - `uint64`: values from `2^63` on are converted after subtracting it, and the top bit set
///   again; below that, the signed conversion, wrapped.
///
/// Returns the integer as the target dtype's [`Scalar`]; `dtype` must be an integer dtype.
///
/// ```
/// use pytato_core::{scalar::float_to_int, DType, Scalar};
/// assert_eq!(float_to_int(-1.5, DType::U8), Scalar::U8(255));
/// assert_eq!(float_to_int(3e9, DType::I32), Scalar::I32(i32::MIN));
/// assert_eq!(float_to_int(-3e9, DType::U32), Scalar::U32(1_294_967_296));
/// ```
pub fn float_to_int(x: f64, dtype: DType) -> Scalar {
    let unsigned = |bits: u32| -> u64 {
        let top = 2f64.powi(bits as i32 - 1);
        if x >= top { (cvtt(x - top, bits) as u64) ^ (1u64 << (bits - 1)) } else { cvtt(x, bits) as u64 }
    };
    match dtype {
        DType::I64 => Scalar::I64(cvtt(x, 64)),
        DType::I32 => Scalar::I32(cvtt(x, 32) as i32),
        DType::I16 => Scalar::I16(cvtt(x, 32) as i16),
        DType::I8 => Scalar::I8(cvtt(x, 32) as i8),
        DType::U64 => Scalar::U64(unsigned(64)),
        DType::U32 => Scalar::U32(cvtt(x, 64) as u32),
        DType::U16 => Scalar::U16(cvtt(x, 32) as u16),
        DType::U8 => Scalar::U8(cvtt(x, 32) as u8),
        other => panic!("float_to_int to {other}, which is not an integer dtype"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn casts_follow_numpy_astype() {
        assert_eq!(Scalar::I64(300).cast(DType::U8), Scalar::U8(44));
        assert_eq!(Scalar::I64(-1).cast(DType::U16), Scalar::U16(u16::MAX));
        assert_eq!(Scalar::F64(-2.7).cast(DType::I32), Scalar::I32(-2));
        // numpy: np.array([-1.5, 300.7]).astype(np.uint8) == [255, 44]
        assert_eq!(Scalar::F64(-1.5).cast(DType::U8), Scalar::U8(255));
        assert_eq!(Scalar::F64(300.7).cast(DType::U8), Scalar::U8(44));
        assert_eq!(Scalar::F64(0.0).cast(DType::Bool), Scalar::Bool(false));
        assert_eq!(Scalar::F64(f64::NAN).cast(DType::Bool), Scalar::Bool(true));
        assert_eq!(Scalar::C128(Complex64::new(0.0, 1.0)).cast(DType::Bool), Scalar::Bool(true));
        assert_eq!(Scalar::C128(Complex64::new(2.5, 1.0)).cast(DType::F64), Scalar::F64(2.5));
        assert_eq!(Scalar::U64(u64::MAX).cast(DType::I64), Scalar::I64(-1));
        assert_eq!(Scalar::Bool(true).cast(DType::F32), Scalar::F32(1.0));
        // float16: one rounding from float64; numpy: np.float64(65519.99).astype(np.float16) == 65504
        assert_eq!(Scalar::F64(65519.99).cast(DType::F16), Scalar::F16(f16::from_f32(65504.0)));
        assert_eq!(Scalar::I64(70000).cast(DType::F16), Scalar::F16(f16::INFINITY));
        assert_eq!(Scalar::F16(f16::from_f32(-2.5)).cast(DType::I8), Scalar::I8(-2));
    }

    #[test]
    fn weak_scalars_take_the_dtype() {
        assert_eq!(Scalar::from_weak(&WeakScalar::Int(3), DType::U8).unwrap(), Scalar::U8(3));
        assert_eq!(Scalar::from_weak(&WeakScalar::Int(u64::MAX.into()), DType::U64).unwrap(), Scalar::U64(u64::MAX));
        assert!(Scalar::from_weak(&WeakScalar::Int(256), DType::U8).is_err());
        assert_eq!(Scalar::from_weak(&WeakScalar::Float(0.5), DType::F32).unwrap(), Scalar::F32(0.5));
    }

    #[test]
    fn equality_is_bitwise() {
        assert_eq!(Scalar::F64(f64::NAN), Scalar::F64(f64::NAN));
        assert_ne!(Scalar::F64(0.0), Scalar::F64(-0.0));
        assert_ne!(Scalar::F64(1.0), Scalar::F32(1.0));
        assert_ne!(Scalar::I32(1), Scalar::I64(1));
    }
}
