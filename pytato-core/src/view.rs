//! Borrowed arrays of any dtype: [`ArrayDataView`] for the inputs of a run and
//! [`ArrayDataViewMut`] for the outputs a caller provides (`Program::run_into`).
//!
//! They follow ndarray's conventions: a view borrows someone else's data, with any strides
//! (transposed, sliced, broadcast with zero strides); a backend copies only where it must (a
//! compiled kernel reads row-major memory, so a view that is not in standard layout is copied
//! once per run).
//!
//! ```
//! use ndarray::{Array2, s};
//! use pytato_core::{ArrayData, DType};
//! use pytato_core::ArrayDataView;
//! let a = Array2::<f64>::zeros((3, 4));
//! let column: ArrayDataView = a.slice(s![.., 1]).into_dyn().into();
//! assert_eq!(column.dtype(), DType::F64);
//! assert_eq!(column.shape(), &[3]);
//! assert!(!column.is_standard_layout() || column.shape()[0] <= 1);
//! let owned: ArrayData = column.to_owned();
//! assert_eq!(owned.shape(), &[3]);
//! ```

use ndarray::{ArrayViewD, ArrayViewMutD};
use num_complex::{Complex32, Complex64};

use crate::data::{ArrayData, DataElement};
use crate::dtype::DType;
use crate::scalar::{Element, Scalar};

/// A borrowed n-dimensional array of any supported dtype: one `ndarray::ArrayViewD` per dtype.
#[derive(Clone, Debug)]
#[allow(missing_docs)]
pub enum ArrayDataView<'a> {
    Bool(ArrayViewD<'a, bool>),
    I8(ArrayViewD<'a, i8>),
    I16(ArrayViewD<'a, i16>),
    I32(ArrayViewD<'a, i32>),
    I64(ArrayViewD<'a, i64>),
    U8(ArrayViewD<'a, u8>),
    U16(ArrayViewD<'a, u16>),
    U32(ArrayViewD<'a, u32>),
    U64(ArrayViewD<'a, u64>),
    F16(ArrayViewD<'a, half::f16>),
    F32(ArrayViewD<'a, f32>),
    F64(ArrayViewD<'a, f64>),
    C64(ArrayViewD<'a, Complex32>),
    C128(ArrayViewD<'a, Complex64>),
}

/// A mutably borrowed n-dimensional array of any supported dtype, written by
/// `Program::run_into`.
#[derive(Debug)]
#[allow(missing_docs)]
pub enum ArrayDataViewMut<'a> {
    Bool(ArrayViewMutD<'a, bool>),
    I8(ArrayViewMutD<'a, i8>),
    I16(ArrayViewMutD<'a, i16>),
    I32(ArrayViewMutD<'a, i32>),
    I64(ArrayViewMutD<'a, i64>),
    U8(ArrayViewMutD<'a, u8>),
    U16(ArrayViewMutD<'a, u16>),
    U32(ArrayViewMutD<'a, u32>),
    U64(ArrayViewMutD<'a, u64>),
    F16(ArrayViewMutD<'a, half::f16>),
    F32(ArrayViewMutD<'a, f32>),
    F64(ArrayViewMutD<'a, f64>),
    C64(ArrayViewMutD<'a, Complex32>),
    C128(ArrayViewMutD<'a, Complex64>),
}

/// Calls `$body` with `$a` bound to the view inside any [`ArrayDataView`] or
/// [`ArrayDataViewMut`] variant (`$kind` names the enum).
#[macro_export]
#[doc(hidden)]
macro_rules! for_each_array_view {
    ($kind:ident, $d:expr, $a:ident => $body:expr) => {
        match $d {
            $crate::view::$kind::Bool($a) => $body,
            $crate::view::$kind::I8($a) => $body,
            $crate::view::$kind::I16($a) => $body,
            $crate::view::$kind::I32($a) => $body,
            $crate::view::$kind::I64($a) => $body,
            $crate::view::$kind::U8($a) => $body,
            $crate::view::$kind::U16($a) => $body,
            $crate::view::$kind::U32($a) => $body,
            $crate::view::$kind::U64($a) => $body,
            $crate::view::$kind::F16($a) => $body,
            $crate::view::$kind::F32($a) => $body,
            $crate::view::$kind::F64($a) => $body,
            $crate::view::$kind::C64($a) => $body,
            $crate::view::$kind::C128($a) => $body,
        }
    };
}

/// An element type the views can hold (every [`DataElement`]).
pub trait ViewElement: DataElement {
    /// The view inside, if `data` holds this element type.
    fn unwrap_view<'a>(data: &ArrayDataView<'a>) -> Option<ArrayViewD<'a, Self>>;
    /// The mutable view inside, if `data` holds this element type.
    fn unwrap_view_mut<'s, 'a>(data: &'s mut ArrayDataViewMut<'a>) -> Option<&'s mut ArrayViewMutD<'a, Self>>;
}

macro_rules! impl_view_element {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl ViewElement for $t {
            fn unwrap_view<'a>(data: &ArrayDataView<'a>) -> Option<ArrayViewD<'a, Self>> {
                match data {
                    ArrayDataView::$variant(a) => Some(a.clone()),
                    _ => None,
                }
            }
            fn unwrap_view_mut<'s, 'a>(data: &'s mut ArrayDataViewMut<'a>) -> Option<&'s mut ArrayViewMutD<'a, Self>> {
                match data {
                    ArrayDataViewMut::$variant(a) => Some(a),
                    _ => None,
                }
            }
        }
        impl<'a> From<ArrayViewD<'a, $t>> for ArrayDataView<'a> {
            fn from(view: ArrayViewD<'a, $t>) -> ArrayDataView<'a> {
                ArrayDataView::$variant(if view.is_empty() { empty_view(view.raw_dim()) } else { view })
            }
        }
        impl<'a> From<ArrayViewMutD<'a, $t>> for ArrayDataViewMut<'a> {
            fn from(view: ArrayViewMutD<'a, $t>) -> ArrayDataViewMut<'a> {
                ArrayDataViewMut::$variant(if view.is_empty() { empty_view_mut(view.raw_dim()) } else { view })
            }
        }
    )*};
}

/// An empty view of `shape` with ndarray's own strides for it (all zero).
///
/// Views of empty arrays are replaced by these when they become [`ArrayDataView`]s: numpy gives
/// empty arrays non-zero strides (`(12, 4)` for shape `(0, 3)`), and so does slicing an ndarray
/// to nothing, and ndarray's copies of such views (`to_owned`, `as_standard_layout`) keep the
/// strides and then fail ndarray's own layout check (a panic in debug builds). No element is
/// read through either, so nothing else changes.
fn empty_view<T>(shape: ndarray::IxDyn) -> ArrayViewD<'static, T> {
    ArrayViewD::from_shape(shape, &[]).expect("an empty shape holds no elements")
}

/// [`empty_view`] for mutable views.
fn empty_view_mut<T>(shape: ndarray::IxDyn) -> ArrayViewMutD<'static, T> {
    ArrayViewMutD::from_shape(shape, &mut []).expect("an empty shape holds no elements")
}

impl_view_element!(
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    half::f16 => F16, f32 => F32, f64 => F64, Complex32 => C64, Complex64 => C128,
);

impl<'a> ArrayDataView<'a> {
    /// The element type.
    pub fn dtype(&self) -> DType {
        fn of<T: Element>(_: &ArrayViewD<'_, T>) -> DType {
            T::DTYPE
        }
        for_each_array_view!(ArrayDataView, self, a => of(a))
    }

    /// The length of each axis.
    pub fn shape(&self) -> &[usize] {
        for_each_array_view!(ArrayDataView, self, a => a.shape())
    }

    /// The number of axes.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements lie in row-major order without gaps (what compiled kernels read).
    pub fn is_standard_layout(&self) -> bool {
        for_each_array_view!(ArrayDataView, self, a => a.is_standard_layout())
    }

    /// The same view, borrowed for a shorter time (ndarray's views do not shorten by themselves).
    pub fn reborrow(&self) -> ArrayDataView<'_> {
        for_each_array_view!(ArrayDataView, self, a => ArrayDataView::from(a.view()))
    }

    /// The typed view, if it holds `T`.
    pub fn as_view<T: ViewElement>(&self) -> Option<ArrayViewD<'a, T>> {
        T::unwrap_view(self)
    }

    /// The element at a flat position in logical (C) order, as a [`Scalar`] (in constant time
    /// where the array is row-major).
    pub fn get_flat(&self, index: usize) -> Option<Scalar> {
        for_each_array_view!(ArrayDataView, self, a => a.as_slice().map_or_else(|| a.iter().nth(index), |s| s.get(index)).map(|v| v.into_scalar()))
    }

    /// The element at a multi-index, as a [`Scalar`]; `None` outside the array.
    pub fn get(&self, index: &[usize]) -> Option<Scalar> {
        for_each_array_view!(ArrayDataView, self, a => a.get(index).map(|v| v.into_scalar()))
    }

    /// The values in C order, as [`Scalar`]s.
    pub fn to_scalars(&self) -> Vec<Scalar> {
        for_each_array_view!(ArrayDataView, self, a => a.iter().map(|v| v.into_scalar()).collect())
    }

    /// A copy that owns its data, in standard layout (ndarray's own `to_owned` keeps the memory
    /// order of a contiguous view, reversed axes included, and compiled kernels read row-major).
    pub fn to_owned(&self) -> ArrayData {
        for_each_array_view!(ArrayDataView, self, a => ArrayData::from(a.as_standard_layout().into_owned()))
    }

    /// A row-major copy, or [`Error::OutOfMemory`](crate::Error::OutOfMemory) (naming `op`)
    /// where the memory cannot be had (a broadcast view of `2**59` elements, say): nothing is
    /// allocated then.
    pub fn try_to_owned(&self, op: &str) -> crate::Result<ArrayData> {
        let mut owned = ArrayData::try_zeros(op, self.dtype(), self.shape())?;
        owned.view_mut().assign(self).expect("one dtype and shape");
        Ok(owned)
    }
}

impl<'a> ArrayDataViewMut<'a> {
    /// The element type.
    pub fn dtype(&self) -> DType {
        fn of<T: Element>(_: &ArrayViewMutD<'_, T>) -> DType {
            T::DTYPE
        }
        for_each_array_view!(ArrayDataViewMut, self, a => of(a))
    }

    /// The length of each axis.
    pub fn shape(&self) -> &[usize] {
        for_each_array_view!(ArrayDataViewMut, self, a => a.shape())
    }

    /// Whether the elements lie in row-major order without gaps (what compiled kernels write).
    pub fn is_standard_layout(&self) -> bool {
        for_each_array_view!(ArrayDataViewMut, self, a => a.is_standard_layout())
    }

    /// The typed view, if it holds `T`.
    pub fn as_view_mut<T: ViewElement>(&mut self) -> Option<&mut ArrayViewMutD<'a, T>> {
        T::unwrap_view_mut(self)
    }

    /// A read-only view of the same elements.
    pub fn view(&self) -> ArrayDataView<'_> {
        for_each_array_view!(ArrayDataViewMut, self, a => ArrayDataView::from(a.view()))
    }

    /// Copies `data` in (any layout on either side). `None` (nothing written) where the dtypes or
    /// shapes differ.
    pub fn assign(&mut self, data: &ArrayDataView<'_>) -> Option<()> {
        if data.dtype() != self.dtype() || data.shape() != self.shape() {
            return None;
        }
        fn copy<T: ViewElement>(to: &mut ArrayDataViewMut<'_>, from: &ArrayViewD<'_, T>) -> Option<()> {
            T::unwrap_view_mut(to)?.assign(from);
            Some(())
        }
        for_each_array_view!(ArrayDataView, data, a => copy(self, a))
    }
}

impl ArrayData {
    /// A view of the whole array.
    pub fn view(&self) -> ArrayDataView<'_> {
        crate::for_each_array_data!(self, a => ArrayDataView::from(a.view()))
    }

    /// A mutable view of the whole array (an output buffer for `Program::run_into`).
    pub fn view_mut(&mut self) -> ArrayDataViewMut<'_> {
        crate::for_each_array_data!(self, a => ArrayDataViewMut::from(a.view_mut()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, s};

    #[test]
    fn views_of_any_layout() {
        let a = Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as i32);
        let t: ArrayDataView = a.t().into_dyn().into();
        assert_eq!(t.dtype(), DType::I32);
        assert_eq!(t.shape(), &[4, 3]);
        assert!(!t.is_standard_layout());
        assert_eq!(t.to_owned().get(&[1, 2]), ArrayData::from(a.clone().into_dyn()).get(&[2, 1]));
        assert!(t.as_view::<i64>().is_none());
        // A reversed axis is contiguous; the copy is row-major all the same.
        let v = ndarray::Array1::from(vec![1i8, 2, 3]);
        let reversed: ArrayDataView = v.slice(s![..;-1]).into_dyn().into();
        let copy = reversed.to_owned();
        assert!(copy.view().is_standard_layout());
        assert_eq!(copy.get_flat(0), Some(crate::Scalar::I8(3)));
        assert_eq!(t.as_view::<i32>().unwrap()[[3, 0]], 3);
    }

    #[test]
    fn empty_views_with_numpys_strides_copy() {
        // An empty (0, 3) view with strides (3, 1), as numpy gives an empty float32 array
        // ((12, 4) bytes) and as slicing gives here.
        let backing = [0.0f32; 3];
        let shape = ndarray::ShapeBuilder::strides(ndarray::IxDyn(&[0, 3]), ndarray::IxDyn(&[3, 1]));
        let view = ArrayViewD::from_shape(shape, &backing).unwrap();
        assert_eq!(view.strides(), &[3, 1]);
        let data = ArrayDataView::from(view);
        let copy = data.to_owned();
        assert_eq!(copy.shape(), &[0, 3]);
        assert_eq!(copy.dtype(), DType::F32);
        // The typed view inside copies with ndarray's own methods too (the scan and sort host
        // steps did, and panicked in debug builds), along swapped axes as well.
        let mut typed = data.as_view::<f32>().unwrap();
        assert_eq!(typed.to_owned().shape(), &[0, 3]);
        typed.swap_axes(0, 1);
        assert_eq!(typed.as_standard_layout().into_owned().shape(), &[3, 0]);
        let mut backing = [0i64; 3];
        let shape = ndarray::ShapeBuilder::strides(ndarray::IxDyn(&[3, 0]), ndarray::IxDyn(&[1, 3]));
        let mut out = ArrayDataViewMut::from(ArrayViewMutD::from_shape(shape, &mut backing).unwrap());
        assert_eq!(out.shape(), &[3, 0]);
        assert!(out.assign(&ArrayData::zeros(DType::I64, &[3, 0]).view()).is_some());
    }

    #[test]
    fn assign_checks_dtype_and_shape() {
        let mut out = Array2::<f64>::zeros((2, 3));
        let mut view: ArrayDataViewMut = out.slice_mut(s![.., 1..]).into_dyn().into();
        assert_eq!(view.shape(), &[2, 2]);
        assert!(view.assign(&ArrayData::zeros(DType::F32, &[2, 2]).view()).is_none());
        assert!(view.assign(&ArrayData::zeros(DType::F64, &[2, 3]).view()).is_none());
        let ones = ArrayData::from(ndarray::ArrayD::<f64>::ones(vec![2, 2]));
        assert!(view.assign(&ones.view()).is_some());
        assert_eq!(out, ndarray::array![[0.0, 1.0, 1.0], [0.0, 1.0, 1.0]]);
    }
}
