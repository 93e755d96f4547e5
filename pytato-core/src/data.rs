//! [`ArrayData`]: an `ndarray` array of any supported dtype.
//!
//! This is what a `DataWrapper` holds and what programs take as inputs and give as outputs.
//!
//! ```
//! use ndarray::ArrayD;
//! use pytato_core::{ArrayData, DType};
//! let data = ArrayData::from(ArrayD::<f32>::zeros(vec![2, 3]));
//! assert_eq!(data.dtype(), DType::F32);
//! assert_eq!(data.shape(), &[2, 3]);
//! assert!(data.as_array::<f32>().is_some());
//! ```

use half::f16;
use ndarray::ArrayD;
use num_complex::{Complex32, Complex64};

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::scalar::{Element, Scalar};

/// A dynamically typed n-dimensional array: one `ndarray::ArrayD` per dtype.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum ArrayData {
    Bool(ArrayD<bool>),
    I8(ArrayD<i8>),
    I16(ArrayD<i16>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    U8(ArrayD<u8>),
    U16(ArrayD<u16>),
    U32(ArrayD<u32>),
    U64(ArrayD<u64>),
    F16(ArrayD<f16>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    C64(ArrayD<Complex32>),
    C128(ArrayD<Complex64>),
}

/// Calls `$body` with `$a` bound to the `ArrayD<T>` inside any [`ArrayData`] variant.
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_array_data {
    ($d:expr, $a:ident => $body:expr) => {
        match $d {
            $crate::data::ArrayData::Bool($a) => $body,
            $crate::data::ArrayData::I8($a) => $body,
            $crate::data::ArrayData::I16($a) => $body,
            $crate::data::ArrayData::I32($a) => $body,
            $crate::data::ArrayData::I64($a) => $body,
            $crate::data::ArrayData::U8($a) => $body,
            $crate::data::ArrayData::U16($a) => $body,
            $crate::data::ArrayData::U32($a) => $body,
            $crate::data::ArrayData::U64($a) => $body,
            $crate::data::ArrayData::F16($a) => $body,
            $crate::data::ArrayData::F32($a) => $body,
            $crate::data::ArrayData::F64($a) => $body,
            $crate::data::ArrayData::C64($a) => $body,
            $crate::data::ArrayData::C128($a) => $body,
        }
    };
}

/// An [`Element`] type that [`ArrayData`] can hold.
pub trait DataElement: Element {
    /// Wraps an array.
    fn wrap(array: ArrayD<Self>) -> ArrayData;
    /// The array inside, if `data` holds this element type.
    fn unwrap_ref(data: &ArrayData) -> Option<&ArrayD<Self>>;
    /// The array inside, if `data` holds this element type.
    fn unwrap(data: ArrayData) -> Result<ArrayD<Self>, ArrayData>;
}

macro_rules! impl_data_element {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl DataElement for $t {
            fn wrap(array: ArrayD<Self>) -> ArrayData {
                ArrayData::$variant(array)
            }
            fn unwrap_ref(data: &ArrayData) -> Option<&ArrayD<Self>> {
                match data {
                    ArrayData::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn unwrap(data: ArrayData) -> Result<ArrayD<Self>, ArrayData> {
                match data {
                    ArrayData::$variant(a) => Ok(a),
                    other => Err(other),
                }
            }
        }
        impl From<ArrayD<$t>> for ArrayData {
            fn from(array: ArrayD<$t>) -> ArrayData {
                ArrayData::$variant(array)
            }
        }
    )*};
}

impl_data_element!(
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    f16 => F16, f32 => F32, f64 => F64, Complex32 => C64, Complex64 => C128,
);

impl ArrayData {
    /// The element type.
    pub fn dtype(&self) -> DType {
        fn of<T: Element>(_: &ArrayD<T>) -> DType {
            T::DTYPE
        }
        for_each_array_data!(self, a => of(a))
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        for_each_array_data!(self, a => a.shape())
    }

    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        for_each_array_data!(self, a => a.len())
    }

    /// `true` when the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The array as `ArrayD<T>`, if `T` is its element type.
    pub fn as_array<T: DataElement>(&self) -> Option<&ArrayD<T>> {
        T::unwrap_ref(self)
    }

    /// Consumes the data, giving `ArrayD<T>` if `T` is its element type.
    pub fn into_array<T: DataElement>(self) -> Result<ArrayD<T>, ArrayData> {
        T::unwrap(self)
    }

    /// A 0-d array holding `value`.
    pub fn from_scalar(value: Scalar) -> ArrayData {
        crate::for_each_scalar!(value, v => ArrayData::from(ndarray::arr0(v).into_dyn()))
    }

    /// An array of `shape` filled with zeros of `dtype`. Aborts the process where the memory
    /// cannot be had, as Rust's allocations do: programs use [`ArrayData::try_zeros`].
    pub fn zeros(dtype: DType, shape: &[usize]) -> ArrayData {
        crate::for_each_scalar!(Scalar::zero(dtype), v => ArrayData::from(ArrayD::from_elem(shape, v)))
    }

    /// An array of `shape` filled with zeros of `dtype`, or [`Error::OutOfMemory`] (naming `op`)
    /// where the memory cannot be had: nothing is allocated then. Zeroed memory comes from the
    /// allocator as such (no pass over it), as `vec![0; n]` does.
    pub fn try_zeros(op: &str, dtype: DType, shape: &[usize]) -> Result<ArrayData> {
        fn zeroed<T: DataElement + bytemuck::Zeroable>(op: &str, shape: &[usize]) -> Result<ArrayData> {
            let out_of_memory = || {
                let bytes = shape.iter().fold(std::mem::size_of::<T>() as u128, |b, &n| b.saturating_mul(n as u128));
                Error::OutOfMemory {
                    op: op.into(),
                    bytes: u64::try_from(bytes).unwrap_or(u64::MAX),
                    what: format!("an array of dtype {} and shape {shape:?}", T::DTYPE),
                }
            };
            let len = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d)).ok_or_else(out_of_memory)?;
            let values: Vec<T> = bytemuck::allocation::try_zeroed_vec(len).map_err(|()| out_of_memory())?;
            Ok(T::wrap(ArrayD::from_shape_vec(shape, values).map_err(|_| out_of_memory())?))
        }
        match dtype {
            DType::Bool => zeroed::<bool>(op, shape),
            DType::I8 => zeroed::<i8>(op, shape),
            DType::I16 => zeroed::<i16>(op, shape),
            DType::I32 => zeroed::<i32>(op, shape),
            DType::I64 => zeroed::<i64>(op, shape),
            DType::U8 => zeroed::<u8>(op, shape),
            DType::U16 => zeroed::<u16>(op, shape),
            DType::U32 => zeroed::<u32>(op, shape),
            DType::U64 => zeroed::<u64>(op, shape),
            DType::F16 => zeroed::<f16>(op, shape),
            DType::F32 => zeroed::<f32>(op, shape),
            DType::F64 => zeroed::<f64>(op, shape),
            DType::C64 => zeroed::<Complex32>(op, shape),
            DType::C128 => zeroed::<Complex64>(op, shape),
        }
    }

    /// An array of `dtype` and `shape` from values in C order; each value is cast to `dtype`.
    /// `None` when the number of values does not match the shape.
    pub fn from_scalars(dtype: DType, shape: &[usize], values: impl IntoIterator<Item = Scalar>) -> Option<ArrayData> {
        macro_rules! build {
            ($($variant:ident),*) => {
                match dtype {
                    $(DType::$variant => {
                        let v = values.into_iter().map(|s| match s.cast(dtype) {
                            Scalar::$variant(x) => x,
                            _ => unreachable!("cast gives the target dtype"),
                        }).collect();
                        ArrayD::from_shape_vec(shape, v).ok().map(ArrayData::$variant)
                    })*
                }
            };
        }
        build!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, C64, C128)
    }

    /// Writes `value` (cast to the array's dtype) at flat position `index` of a row-major array;
    /// `None` (nothing written) outside it or where the array is not row-major.
    pub fn set_flat(&mut self, index: usize, value: Scalar) -> Option<()> {
        macro_rules! set {
            ($($variant:ident),*) => {
                match self {
                    $(ArrayData::$variant(a) => {
                        let Scalar::$variant(v) = value.cast(DType::$variant) else {
                            unreachable!("cast gives the target dtype")
                        };
                        *a.as_slice_mut()?.get_mut(index)? = v;
                    })*
                }
            };
        }
        set!(Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, F32, F64, C64, C128);
        Some(())
    }

    /// The element at a multi-index, as a [`Scalar`]; `None` outside the array.
    pub fn get(&self, index: &[usize]) -> Option<Scalar> {
        for_each_array_data!(self, a => a.get(index).map(|v| v.into_scalar()))
    }

    /// The values in C order, as [`Scalar`]s.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        for_each_array_data!(self, a => a.iter().map(|v| v.into_scalar()).collect())
    }

    /// The element at a flat position in logical (C) order, as a [`Scalar`] (in constant time
    /// where the array is row-major).
    pub fn get_flat(&self, index: usize) -> Option<Scalar> {
        for_each_array_data!(self, a => a.as_slice().map_or_else(|| a.iter().nth(index), |s| s.get(index)).map(|v| v.into_scalar()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_access() {
        let d = ArrayData::from(ndarray::arr1(&[1i16, 2, 3]).into_dyn());
        assert_eq!(d.dtype(), DType::I16);
        assert_eq!(d.len(), 3);
        assert!(d.as_array::<i32>().is_none());
        assert_eq!(d.get_flat(2), Some(Scalar::I16(3)));
        assert_eq!(ArrayData::zeros(DType::C64, &[2]).get_flat(1), Some(Scalar::C64(Complex32::new(0.0, 0.0))));
        assert_eq!(ArrayData::from_scalar(Scalar::Bool(true)).shape(), &[] as &[usize]);
    }
}
