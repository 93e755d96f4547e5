//! Element types and numpy 2 type promotion.
//!
//! [`DType`] lists the thirteen element types the library supports. [`result_type`] is numpy's
//! `np.result_type` for two array dtypes, and [`result_type_weak`] is numpy 2's rule (NEP 50) for an
//! array mixed with a Python-style scalar, which is *weak*: it adopts the array's dtype where its kind
//! allows. Both are checked against numpy itself by a committed table
//! (`golden/gen_dtype_promotion.py` writes `pytato-core/tests/data/dtype_promotion.tsv`).
//!
//! ```
//! use pytato_core::dtype::{DType, WeakScalar, result_type, result_type_weak};
//! assert_eq!(result_type(DType::I8, DType::U8), DType::I16);
//! assert_eq!(result_type(DType::I64, DType::U64), DType::F64);
//! // A float literal does not widen a float32 array.
//! assert_eq!(result_type_weak(DType::F32, &WeakScalar::Float(0.5)).unwrap(), DType::F32);
//! ```

use std::fmt;

use num_complex::Complex64;

use crate::error::{Error, Result};

/// The element type of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `bool`, one byte per element.
    Bool,
    /// `int8`
    I8,
    /// `int16`
    I16,
    /// `int32`
    I32,
    /// `int64`
    I64,
    /// `uint8`
    U8,
    /// `uint16`
    U16,
    /// `uint32`
    U32,
    /// `uint64`
    U64,
    /// `float32`
    F32,
    /// `float64`
    F64,
    /// `complex64`: a pair of `f32`.
    C64,
    /// `complex128`: a pair of `f64`.
    C128,
}

/// The broad family a dtype belongs to, like numpy's `dtype.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DTypeKind {
    /// `bool` (numpy kind `b`).
    Bool,
    /// Signed integers (numpy kind `i`).
    SignedInt,
    /// Unsigned integers (numpy kind `u`).
    UnsignedInt,
    /// Real floating point (numpy kind `f`).
    Float,
    /// Complex floating point (numpy kind `c`).
    Complex,
}

impl DType {
    /// Every dtype, in the order of the enum.
    pub const ALL: [DType; 13] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F32,
        DType::F64,
        DType::C64,
        DType::C128,
    ];

    /// The dtype's family.
    pub fn kind(self) -> DTypeKind {
        use DType::*;
        match self {
            Bool => DTypeKind::Bool,
            I8 | I16 | I32 | I64 => DTypeKind::SignedInt,
            U8 | U16 | U32 | U64 => DTypeKind::UnsignedInt,
            F32 | F64 => DTypeKind::Float,
            C64 | C128 => DTypeKind::Complex,
        }
    }

    /// Size of one element in bytes.
    pub fn itemsize(self) -> usize {
        use DType::*;
        match self {
            Bool | I8 | U8 => 1,
            I16 | U16 => 2,
            I32 | U32 | F32 => 4,
            I64 | U64 | F64 | C64 => 8,
            C128 => 16,
        }
    }

    /// numpy's name for the dtype (`"float64"`, `"complex64"`, ...).
    pub fn name(self) -> &'static str {
        use DType::*;
        match self {
            Bool => "bool",
            I8 => "int8",
            I16 => "int16",
            I32 => "int32",
            I64 => "int64",
            U8 => "uint8",
            U16 => "uint16",
            U32 => "uint32",
            U64 => "uint64",
            F32 => "float32",
            F64 => "float64",
            C64 => "complex64",
            C128 => "complex128",
        }
    }

    /// Parses numpy's name for a dtype.
    pub fn from_name(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }

    /// `true` for signed and unsigned integers (not `bool`).
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), DTypeKind::SignedInt | DTypeKind::UnsignedInt)
    }

    /// `true` for real and complex floating point.
    pub fn is_inexact(self) -> bool {
        matches!(self.kind(), DTypeKind::Float | DTypeKind::Complex)
    }

    /// `true` for complex dtypes.
    pub fn is_complex(self) -> bool {
        self.kind() == DTypeKind::Complex
    }

    /// `true` for every dtype but `bool`.
    pub fn is_numeric(self) -> bool {
        self != DType::Bool
    }

    /// The real dtype of a complex dtype's components; a real dtype is its own.
    pub fn real_dtype(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            other => other,
        }
    }

    /// The complex dtype whose components have this real dtype's precision (`float32` gives
    /// `complex64`); integers give `complex128` as numpy does.
    pub fn complex_dtype(self) -> DType {
        match self {
            DType::F32 | DType::C64 => DType::C64,
            DType::Bool | DType::I8 | DType::U8 | DType::I16 | DType::U16 => DType::C64,
            _ => DType::C128,
        }
    }

    /// The dtype numpy's math functions (`sqrt`, `sin`, ...) compute in.
    ///
    /// Inexact dtypes keep their own; 32- and 64-bit integers go to `float64` and 16-bit integers to
    /// `float32`, as in numpy. numpy sends `bool` and 8-bit integers to `float16`, which this library
    /// does not have: they go to `float32`, the smallest float it has that holds them exactly.
    pub fn float_for_math(self) -> DType {
        use DType::*;
        match self {
            F32 | F64 | C64 | C128 => self,
            Bool | I8 | U8 | I16 | U16 => F32,
            I32 | U32 | I64 | U64 => F64,
        }
    }

    /// Bits of an integer or bool dtype (bool counts as 1).
    fn int_bits(self) -> u32 {
        use DType::*;
        match self {
            Bool => 1,
            I8 | U8 => 8,
            I16 | U16 => 16,
            I32 | U32 => 32,
            I64 | U64 => 64,
            _ => unreachable!("int_bits of {self}"),
        }
    }

    fn signed_with_bits(bits: u32) -> Option<DType> {
        match bits {
            8 => Some(DType::I8),
            16 => Some(DType::I16),
            32 => Some(DType::I32),
            64 => Some(DType::I64),
            _ => None,
        }
    }

    /// The inclusive range of values an integer dtype holds, as `i128`.
    pub fn int_range(self) -> Option<(i128, i128)> {
        use DType::*;
        Some(match self {
            I8 => (i8::MIN.into(), i8::MAX.into()),
            I16 => (i16::MIN.into(), i16::MAX.into()),
            I32 => (i32::MIN.into(), i32::MAX.into()),
            I64 => (i64::MIN.into(), i64::MAX.into()),
            U8 => (0, u8::MAX.into()),
            U16 => (0, u16::MAX.into()),
            U32 => (0, u32::MAX.into()),
            U64 => (0, u64::MAX.into()),
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The smallest inexact dtype that holds every value of an integer dtype exactly enough for numpy:
/// 8- and 16-bit integers fit `float32`'s mantissa, wider ones need `float64`.
fn float_for_int(d: DType) -> DType {
    if d.int_bits() <= 16 { DType::F32 } else { DType::F64 }
}

/// numpy's `np.result_type(a, b)` for two array dtypes.
///
/// The result is the smallest dtype both can be cast to safely, following numpy's lattice:
/// `int64` with `uint64` gives `float64`, and integers of 32 bits or more with `float32` give `float64`.
pub fn result_type(a: DType, b: DType) -> DType {
    use DTypeKind::*;
    if a == b {
        return a;
    }
    // Order the pair by kind so each combination is handled once.
    let (lo, hi) = if a.kind() <= b.kind() { (a, b) } else { (b, a) };
    match (lo.kind(), hi.kind()) {
        (Bool, _) => hi,
        (SignedInt, SignedInt) | (UnsignedInt, UnsignedInt) => {
            if lo.int_bits() >= hi.int_bits() {
                lo
            } else {
                hi
            }
        }
        (SignedInt, UnsignedInt) => {
            let (s, u) = (lo, hi);
            if u.int_bits() < s.int_bits() {
                s
            } else {
                DType::signed_with_bits(u.int_bits() * 2).unwrap_or(DType::F64)
            }
        }
        (SignedInt | UnsignedInt, Float) => result_type(float_for_int(lo), hi),
        (SignedInt | UnsignedInt, Complex) => result_type(float_for_int(lo).complex_dtype(), hi),
        (Float, Float) | (Complex, Complex) => {
            if lo.itemsize() >= hi.itemsize() {
                lo
            } else {
                hi
            }
        }
        (Float, Complex) => {
            if lo == DType::F64 {
                DType::C128
            } else {
                hi
            }
        }
        _ => unreachable!("pair ordered by kind: {lo}, {hi}"),
    }
}

/// numpy's result type over any number of dtypes; `None` for an empty list.
pub fn result_type_many(dtypes: impl IntoIterator<Item = DType>) -> Option<DType> {
    dtypes.into_iter().reduce(result_type)
}

/// A Python-style scalar: a Rust literal mixed with an array.
///
/// Under numpy 2's promotion rules (NEP 50) these are *weak*: `uint8_array + 1` stays `uint8`,
/// `float32_array * 0.5` stays `float32`. A typed Rust value such as `3.0_f32` is passed the same way:
/// what matters is its kind (integer, float, complex or bool), as for a Python scalar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WeakScalar {
    /// A Python `bool`.
    Bool(bool),
    /// A Python `int`. `i128` holds every value of `i64` and `u64`.
    Int(i128),
    /// A Python `float`.
    Float(f64),
    /// A Python `complex`.
    Complex(Complex64),
}

impl WeakScalar {
    /// The dtype the scalar has on its own (numpy's default for the Python type).
    pub fn default_dtype(&self) -> DType {
        match self {
            WeakScalar::Bool(_) => DType::Bool,
            WeakScalar::Int(_) => DType::I64,
            WeakScalar::Float(_) => DType::F64,
            WeakScalar::Complex(_) => DType::C128,
        }
    }
}

impl From<bool> for WeakScalar {
    fn from(v: bool) -> WeakScalar {
        WeakScalar::Bool(v)
    }
}
macro_rules! weak_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for WeakScalar {
            fn from(v: $t) -> WeakScalar {
                WeakScalar::Int(v.into())
            }
        }
    )*};
}
weak_from_int!(i8, i16, i32, i64, u8, u16, u32, u64);
impl From<f32> for WeakScalar {
    fn from(v: f32) -> WeakScalar {
        WeakScalar::Float(v.into())
    }
}
impl From<f64> for WeakScalar {
    fn from(v: f64) -> WeakScalar {
        WeakScalar::Float(v)
    }
}
impl From<num_complex::Complex32> for WeakScalar {
    fn from(v: num_complex::Complex32) -> WeakScalar {
        WeakScalar::Complex(Complex64::new(v.re.into(), v.im.into()))
    }
}
impl From<Complex64> for WeakScalar {
    fn from(v: Complex64) -> WeakScalar {
        WeakScalar::Complex(v)
    }
}

impl fmt::Display for WeakScalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WeakScalar::Bool(b) => write!(f, "{b}"),
            WeakScalar::Int(i) => write!(f, "{i}"),
            WeakScalar::Float(x) => write!(f, "{x:?}"),
            WeakScalar::Complex(c) => write!(f, "({}{:+}j)", c.re, c.im),
        }
    }
}

/// numpy 2's result dtype for an array of dtype `array` combined with a weak scalar (NEP 50).
///
/// The scalar keeps the array's dtype if the array's kind is at least as high (bool < int < float <
/// complex); otherwise the result is the kind's default (`int64`, `float64`) or, for a complex scalar
/// with a float array, the complex dtype of the array's precision. An integer scalar that does not fit
/// an integer array's dtype is an error, as in numpy 2 (`np.uint8(1) + 300` raises `OverflowError`).
pub fn result_type_weak(array: DType, scalar: &WeakScalar) -> Result<DType> {
    use DTypeKind::*;
    let dtype = match (scalar, array.kind()) {
        (WeakScalar::Bool(_), _) => array,
        (WeakScalar::Int(v), Bool | SignedInt | UnsignedInt) => {
            // With a bool array the scalar becomes numpy's default integer, and must fit it.
            let dtype = if array == DType::Bool { DType::I64 } else { array };
            let (min, max) = dtype.int_range().expect("integer dtype");
            if *v < min || *v > max {
                return Err(Error::ScalarOutOfRange { value: v.to_string(), dtype });
            }
            dtype
        }
        (WeakScalar::Int(_), Float | Complex) => array,
        (WeakScalar::Float(_), Bool | SignedInt | UnsignedInt) => DType::F64,
        (WeakScalar::Float(_), Float | Complex) => array,
        (WeakScalar::Complex(_), Bool | SignedInt | UnsignedInt) => DType::C128,
        (WeakScalar::Complex(_), Float | Complex) => array.complex_dtype(),
    };
    Ok(dtype)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in DType::ALL {
            assert_eq!(DType::from_name(d.name()), Some(d));
        }
        assert_eq!(DType::from_name("float16"), None);
    }

    #[test]
    fn result_type_is_symmetric() {
        for a in DType::ALL {
            for b in DType::ALL {
                assert_eq!(result_type(a, b), result_type(b, a), "{a} {b}");
            }
        }
    }

    #[test]
    fn weak_int_out_of_range_is_an_error() {
        let err = result_type_weak(DType::U8, &WeakScalar::Int(300)).unwrap_err();
        assert!(err.to_string().contains("uint8"), "{err}");
        assert!(result_type_weak(DType::U8, &WeakScalar::Int(-1)).is_err());
        assert_eq!(result_type_weak(DType::I8, &WeakScalar::Int(-128)).unwrap(), DType::I8);
    }
}
