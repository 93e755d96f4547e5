//! Element types and numpy 2 type promotion.
//!
//! [`DType`] lists the fourteen element types the library supports. [`result_type`] is numpy's
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
    /// `float16` (IEEE binary16), `half::f16` in Rust. A storage type: arithmetic on it is done in
    /// `float32` and rounded back to `float16` after each operation, as numpy's own `float16` loops
    /// do (see [`expr`](crate::expr)).
    F16,
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
    pub const ALL: [DType; 14] = [
        DType::Bool,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
        DType::F16,
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
            F16 | F32 | F64 => DTypeKind::Float,
            C64 | C128 => DTypeKind::Complex,
        }
    }

    /// Size of one element in bytes.
    pub fn itemsize(self) -> usize {
        use DType::*;
        match self {
            Bool | I8 | U8 => 1,
            I16 | U16 | F16 => 2,
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
            F16 => "float16",
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
            DType::F16 | DType::F32 | DType::C64 => DType::C64,
            DType::Bool | DType::I8 | DType::U8 | DType::I16 | DType::U16 => DType::C64,
            _ => DType::C128,
        }
    }

    /// The dtype numpy's math functions (`sqrt`, `sin`, ...) compute in.
    ///
    /// Inexact dtypes keep their own; `bool` and 8-bit integers go to `float16`, 16-bit integers to
    /// `float32`, 32- and 64-bit integers to `float64`: the smallest float that holds every value
    /// exactly, as in numpy.
    pub fn float_for_math(self) -> DType {
        use DType::*;
        match self {
            F16 | F32 | F64 | C64 | C128 => self,
            Bool | I8 | U8 => F16,
            I16 | U16 => F32,
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
        // An integer promotes as the smallest float that holds it exactly (`float_for_math`).
        (SignedInt | UnsignedInt, Float) => result_type(lo.float_for_math(), hi),
        (SignedInt | UnsignedInt, Complex) => result_type(lo.float_for_math().complex_dtype(), hi),
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

/// numpy's result type over any number of dtypes (`np.result_type(a, b, c, ...)`); `None` for an
/// empty list.
///
/// Promotion is not associative (`(int8, uint16)` is `int32`, then with `float32` `float64`), so
/// numpy does not fold pairwise: it lets the most general dtype (the one latest in numpy's type
/// order) promote each of the others and combines those results (`PyArray_PromoteDTypeSequence`).
/// This follows that algorithm step by step, so the answer is numpy's for every sequence.
///
/// ```
/// use pytato_core::dtype::{result_type, result_type_many, DType};
/// assert_eq!(result_type(result_type(DType::I8, DType::U16), DType::F32), DType::F64);
/// assert_eq!(result_type_many([DType::I8, DType::U16, DType::F32]), Some(DType::F32));
/// ```
pub fn result_type_many(dtypes: impl IntoIterator<Item = DType>) -> Option<DType> {
    let mut dtypes: Vec<Option<DType>> = dtypes.into_iter().map(Some).collect();
    match dtypes.len() {
        0 => return None,
        1 => return dtypes[0],
        _ => {}
    }
    let mut result = reduce_to_most_general(&mut dtypes);
    let main = dtypes[0].expect("the first dtype is never cleared");
    let start = if result.is_some() { 2 } else { 1 };
    for d in dtypes[start..].iter().flatten() {
        let promoted = result_type(main, *d);
        result = Some(result.map_or(promoted, |r| result_type(r, promoted)));
    }
    result
}

/// numpy's type number order of the builtin dtypes (on platforms where `int64` is C's `long`).
fn type_number(d: DType) -> u8 {
    use DType::*;
    match d {
        Bool => 0,
        I8 => 1,
        U8 => 2,
        I16 => 3,
        U16 => 4,
        I32 => 5,
        U32 => 6,
        I64 => 7,
        U64 => 8,
        F32 => 9,
        F64 => 10,
        C64 => 11,
        C128 => 12,
        // numpy added `half` after the others (type number 23), so it is the most general here,
        // which its promotion rules rely on.
        F16 => 23,
    }
}

/// numpy's `__common_dtype__` of two builtin dtypes: `None` ("not implemented") when `other` is
/// later in the type order, so that the more general one decides.
fn common_dtype(cls: DType, other: DType) -> Option<DType> {
    (type_number(other) <= type_number(cls)).then(|| result_type(cls, other))
}

/// numpy's `reduce_dtypes_to_most_knowledgeable`: moves the most general dtype to the front,
/// clearing dtypes that cannot change the result, and returns the last pairwise promotion
/// (`None` where it was "not implemented").
fn reduce_to_most_general(dtypes: &mut [Option<DType>]) -> Option<DType> {
    let (length, half) = (dtypes.len(), dtypes.len() / 2);
    let mut result = None;
    for low in 0..half {
        let high = length - 1 - low;
        let (Some(a), Some(b)) = (dtypes[low], dtypes[high]) else { continue };
        result = if a == b { Some(a) } else { common_dtype(a, b) };
        match result {
            None => dtypes.swap(low, high),
            Some(r) if r == a => dtypes[high] = None,
            Some(_) => {}
        }
    }
    if length == 2 { result } else { reduce_to_most_general(&mut dtypes[..length - half]) }
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
        assert_eq!(DType::from_name("float8"), None);
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

// ---------------------------------------------------------------------------------------------
// The Array API's data type functions: can_cast, finfo, iinfo, isdtype (result_type is above).

/// Whether values of `from` convert to `to` without loss under numpy's "safe" casting (numpy and
/// the Array API's `can_cast`): exactly when promoting the two gives `to`.
///
/// ```
/// use pytato_core::dtype::{can_cast, DType};
/// assert!(can_cast(DType::I32, DType::F64));
/// assert!(!can_cast(DType::U64, DType::I64));
/// assert!(!can_cast(DType::F64, DType::C64));
/// ```
pub fn can_cast(from: DType, to: DType) -> bool {
    result_type(from, to) == to
}

/// Machine limits of a floating-point dtype (numpy and the Array API's `finfo`); for a complex
/// dtype, of its components.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FInfo {
    /// Bits of one value (of one component for complex dtypes).
    pub bits: u32,
    /// The difference between 1.0 and the next larger representable value.
    pub eps: f64,
    /// The largest finite value.
    pub max: f64,
    /// The smallest (most negative) finite value, `-max`.
    pub min: f64,
    /// The smallest positive normal value.
    pub smallest_normal: f64,
    /// The real dtype these limits are of.
    pub dtype: DType,
}

/// The limits of the float (or complex) dtype `dtype`; other dtypes are an error.
///
/// ```
/// use pytato_core::dtype::{finfo, DType};
/// assert_eq!(finfo(DType::C64).unwrap().eps, f32::EPSILON as f64);
/// assert!(finfo(DType::I32).is_err());
/// ```
pub fn finfo(dtype: DType) -> Result<FInfo> {
    Ok(match dtype.real_dtype() {
        DType::F16 => FInfo {
            bits: 16,
            eps: half::f16::EPSILON.into(),
            max: half::f16::MAX.into(),
            min: half::f16::MIN.into(),
            smallest_normal: half::f16::MIN_POSITIVE.into(),
            dtype: DType::F16,
        },
        DType::F32 => FInfo {
            bits: 32,
            eps: f32::EPSILON.into(),
            max: f32::MAX.into(),
            min: f32::MIN.into(),
            smallest_normal: f32::MIN_POSITIVE.into(),
            dtype: DType::F32,
        },
        DType::F64 => FInfo {
            bits: 64,
            eps: f64::EPSILON,
            max: f64::MAX,
            min: f64::MIN,
            smallest_normal: f64::MIN_POSITIVE,
            dtype: DType::F64,
        },
        other => return Err(Error::unsupported_dtype("finfo", other, "finfo takes a float or complex dtype")),
    })
}

/// Limits of an integer dtype (numpy and the Array API's `iinfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IInfo {
    /// Bits of one value.
    pub bits: u32,
    /// The largest value.
    pub max: i128,
    /// The smallest value.
    pub min: i128,
    /// The dtype these limits are of.
    pub dtype: DType,
}

/// The limits of the integer dtype `dtype`; other dtypes (bool included, as in numpy) are an
/// error.
///
/// ```
/// use pytato_core::dtype::{iinfo, DType};
/// assert_eq!(iinfo(DType::U64).unwrap().max, u64::MAX as i128);
/// assert_eq!(iinfo(DType::I8).unwrap().min, -128);
/// ```
pub fn iinfo(dtype: DType) -> Result<IInfo> {
    let (min, max) = dtype
        .int_range()
        .filter(|_| dtype.is_integer())
        .ok_or_else(|| Error::unsupported_dtype("iinfo", dtype, "iinfo takes an integer dtype"))?;
    Ok(IInfo { bits: dtype.int_bits(), max, min, dtype })
}

/// The kinds of dtypes [`isdtype`] asks about (the Array API's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DTypeCategory {
    /// `"bool"`
    Bool,
    /// `"signed integer"`
    SignedInteger,
    /// `"unsigned integer"`
    UnsignedInteger,
    /// `"integral"`: signed or unsigned integers.
    Integral,
    /// `"real floating"`
    RealFloating,
    /// `"complex floating"`
    ComplexFloating,
    /// `"numeric"`: integers, real and complex floats (not bool).
    Numeric,
}

impl DTypeCategory {
    /// The category the Array API names `name` (`"signed integer"`, `"numeric"`, ...).
    pub fn from_name(name: &str) -> Option<DTypeCategory> {
        use DTypeCategory::*;
        Some(match name {
            "bool" => Bool,
            "signed integer" => SignedInteger,
            "unsigned integer" => UnsignedInteger,
            "integral" => Integral,
            "real floating" => RealFloating,
            "complex floating" => ComplexFloating,
            "numeric" => Numeric,
            _ => return None,
        })
    }
}

/// Whether `dtype` is of the kind `category` (numpy and the Array API's `isdtype`).
///
/// ```
/// use pytato_core::dtype::{isdtype, DType, DTypeCategory};
/// assert!(isdtype(DType::U16, DTypeCategory::Integral));
/// assert!(!isdtype(DType::Bool, DTypeCategory::Numeric));
/// ```
pub fn isdtype(dtype: DType, category: DTypeCategory) -> bool {
    use DTypeCategory::*;
    let kind = dtype.kind();
    match category {
        Bool => kind == DTypeKind::Bool,
        SignedInteger => kind == DTypeKind::SignedInt,
        UnsignedInteger => kind == DTypeKind::UnsignedInt,
        Integral => dtype.is_integer(),
        RealFloating => kind == DTypeKind::Float,
        ComplexFloating => kind == DTypeKind::Complex,
        Numeric => dtype.is_numeric(),
    }
}
