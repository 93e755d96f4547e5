//! Sorting on the host: [`NodeKind::Sort`](crate::NodeKind::Sort), the step programs run between
//! phases (see [`crate::phases`]).
//!
//! The order is numpy's: integers and booleans as numbers; floats with NaN after every number and
//! `-0.0` equal to `0.0`; complex numbers lexicographically, in numpy's four classes
//! `R + Rj < R + nanj < nan + Rj < nan + nanj`. Every sort is stable, so equal elements keep their
//! order, and a descending sort is the stable sort with the comparison reversed (equal elements
//! still in their order, NaN first), as the Array API's `sort(x, descending=True)` is.
//!
//! Rows (every index of the other axes) sort independently: many rows are spread over threads, a
//! long row is sorted by a parallel merge sort (`rayon`'s `par_sort_by`, stable).
//!
//! ```
//! use ndarray::array;
//! use pytato_core::{ArrayData, SortResult};
//! let x = ArrayData::from(array![3.0, f64::NAN, -0.0, 1.0, 0.0].into_dyn());
//! let sorted = pytato_core::sort::sort(&x.view(), 0, false, SortResult::Values).unwrap();
//! let sorted = sorted.as_array::<f64>().unwrap();
//! assert_eq!(&sorted.as_slice().unwrap()[..4], &[-0.0, 0.0, 1.0, 3.0]);
//! assert!(sorted[4].is_nan());
//! let order = pytato_core::sort::sort(&x.view(), 0, true, SortResult::Indices).unwrap();
//! assert_eq!(order.as_array::<i64>().unwrap().as_slice().unwrap(), &[1, 0, 3, 2, 4]);
//! ```

use std::cmp::Ordering;

use ndarray::{ArrayD, ArrayViewD};
use num_complex::{Complex32, Complex64};
use rayon::prelude::*;

use crate::array::SortResult;
use crate::data::ArrayData;
use crate::error::Result;
use crate::for_each_array_view;
use crate::view::{ArrayDataView, ViewElement};

/// numpy's sort order for one element type (see the [module docs](self)).
pub trait NumpyOrd: Copy + Send + Sync {
    /// How `self` compares with `other` in numpy's sort order: a total order.
    fn numpy_cmp(&self, other: &Self) -> Ordering;
}

macro_rules! ordered {
    ($($t:ty),*) => {$(
        impl NumpyOrd for $t {
            fn numpy_cmp(&self, other: &Self) -> Ordering {
                self.cmp(other)
            }
        }
    )*};
}
ordered!(bool, i8, i16, i32, i64, u8, u16, u32, u64);

/// Floats: NaN after every number (all NaNs equal), `-0.0 == 0.0`.
fn float_cmp<F: num_traits::Float>(a: F, b: F) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(&b).expect("neither is NaN"),
        (nan_a, nan_b) => nan_a.cmp(&nan_b),
    }
}

/// Complex numbers: first numpy's class (`2·isnan(re) + isnan(im)`), then the parts that are
/// numbers, real part first.
fn complex_cmp<F: num_traits::Float>(a: num_complex::Complex<F>, b: num_complex::Complex<F>) -> Ordering {
    let class = |z: num_complex::Complex<F>| 2 * u8::from(z.re.is_nan()) + u8::from(z.im.is_nan());
    class(a).cmp(&class(b)).then_with(|| float_cmp(a.re, b.re)).then_with(|| float_cmp(a.im, b.im))
}

impl NumpyOrd for f32 {
    fn numpy_cmp(&self, other: &Self) -> Ordering {
        float_cmp(*self, *other)
    }
}

impl NumpyOrd for f64 {
    fn numpy_cmp(&self, other: &Self) -> Ordering {
        float_cmp(*self, *other)
    }
}

impl NumpyOrd for Complex32 {
    fn numpy_cmp(&self, other: &Self) -> Ordering {
        complex_cmp(*self, *other)
    }
}

impl NumpyOrd for Complex64 {
    fn numpy_cmp(&self, other: &Self) -> Ordering {
        complex_cmp(*self, *other)
    }
}

/// Rows at least this long are sorted by a parallel merge sort; shorter ones one per thread.
const PARALLEL_ROW: usize = 1 << 15;

/// `array` sorted along `axis` (or, for [`SortResult::Indices`], the `int64` indices along `axis`
/// that sort it), stably, in numpy's order; `descending` reverses the order and keeps equal
/// elements in theirs. The result is in row-major layout.
pub fn sort(array: &ArrayDataView<'_>, axis: usize, descending: bool, result: SortResult) -> Result<ArrayData> {
    fn typed<T: ViewElement + NumpyOrd>(
        array: &ArrayViewD<'_, T>,
        axis: usize,
        descending: bool,
        result: SortResult,
    ) -> ArrayData {
        let cmp = move |a: &T, b: &T| if descending { b.numpy_cmp(a) } else { a.numpy_cmp(b) };
        // The sorted axis last, in row-major order: each row is one contiguous slice.
        let mut moved = array.view();
        let last = moved.ndim() - 1;
        moved.swap_axes(axis, last);
        let length = moved.shape()[last];
        let rows = moved.as_standard_layout();
        let values = rows.as_slice().expect("standard layout");
        let swapped_shape = rows.shape().to_vec();
        fn back<E: Clone>(mut data: ArrayD<E>, axis: usize, last: usize) -> ArrayD<E> {
            data.swap_axes(axis, last);
            data.as_standard_layout().into_owned()
        }
        if length == 0 {
            return match result {
                SortResult::Values => T::wrap(array.to_owned()),
                SortResult::Indices => ArrayData::from(ArrayD::<i64>::zeros(array.raw_dim())),
            };
        }
        match result {
            SortResult::Values => {
                let mut out = values.to_vec();
                if length >= PARALLEL_ROW {
                    out.chunks_mut(length).for_each(|row| row.par_sort_by(cmp));
                } else {
                    out.par_chunks_mut(length).with_min_len(PARALLEL_ROW / length).for_each(|row| row.sort_by(cmp));
                }
                T::wrap(back(ArrayD::from_shape_vec(swapped_shape, out).expect("one value per element"), axis, last))
            }
            SortResult::Indices => {
                let mut out = vec![0i64; values.len()];
                let sort_row = |(row, indices): (&[T], &mut [i64])| {
                    indices.iter_mut().zip(0..).for_each(|(slot, i)| *slot = i);
                    let by_value = |a: &i64, b: &i64| cmp(&row[*a as usize], &row[*b as usize]);
                    if length >= PARALLEL_ROW { indices.par_sort_by(by_value) } else { indices.sort_by(by_value) }
                };
                if length >= PARALLEL_ROW {
                    values.chunks(length).zip(out.chunks_mut(length)).for_each(sort_row);
                } else {
                    values
                        .par_chunks(length)
                        .zip(out.par_chunks_mut(length))
                        .with_min_len(PARALLEL_ROW / length)
                        .for_each(sort_row);
                }
                ArrayData::from(back(
                    ArrayD::from_shape_vec(swapped_shape, out).expect("one index per element"),
                    axis,
                    last,
                ))
            }
        }
    }
    if axis >= array.ndim() {
        return Err(crate::Error::Internal {
            backend: "sort".into(),
            message: format!("axis {axis} of an array of shape {:?}", array.shape()),
        });
    }
    Ok(for_each_array_view!(ArrayDataView, array, a => typed(a, axis, descending, result)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{IxDyn, array};

    fn sorted(data: ArrayData, axis: usize, descending: bool, result: SortResult) -> ArrayData {
        sort(&data.view(), axis, descending, result).unwrap()
    }

    #[test]
    fn complex_numbers_sort_in_numpys_four_classes() {
        let nan = f64::NAN;
        let z = |re, im| Complex64::new(re, im);
        let x = ArrayData::from(
            array![z(nan, 0.0), z(1.0, nan), z(2.0, 0.0), z(nan, nan), z(1.0, 1.0), z(1.0, 0.0)].into_dyn(),
        );
        // numpy 2.4.6: np.argsort(x, stable=True) -> [5 4 2 1 0 3]
        let got = sorted(x, 0, false, SortResult::Indices);
        assert_eq!(got.as_array::<i64>().unwrap().as_slice().unwrap(), &[5, 4, 2, 1, 0, 3]);
    }

    #[test]
    fn a_middle_axis_sorts_each_row_and_keeps_the_layout_row_major() {
        // Rows along axis 1 of a (2, 3, 2) array.
        let x = ArrayD::from_shape_fn(IxDyn(&[2, 3, 2]), |i| ((i[0] * 7 + i[1] * 5 + i[2] * 3) % 4) as i32);
        let got = sorted(ArrayData::from(x.clone()), 1, false, SortResult::Values);
        let got = got.as_array::<i32>().unwrap();
        assert!(got.is_standard_layout());
        for i in 0..2 {
            for k in 0..2 {
                let mut want: Vec<i32> = (0..3).map(|j| x[[i, j, k]]).collect();
                want.sort();
                assert!((0..3).all(|j| got[[i, j, k]] == want[j]), "{got:?}");
            }
        }
    }

    #[test]
    fn descending_keeps_equal_elements_in_order_and_puts_nan_first() {
        let x = ArrayData::from(array![1.0, f64::NAN, 2.0, 1.0, f64::NAN, 2.0].into_dyn());
        // numpy: np.flip(np.argsort(np.flip(x), stable=True)) mapped back: 5 - i -> [1 4 2 5 0 3]
        let got = sorted(x, 0, true, SortResult::Indices);
        assert_eq!(got.as_array::<i64>().unwrap().as_slice().unwrap(), &[1, 4, 2, 5, 0, 3]);
    }

    #[test]
    fn long_rows_sort_in_parallel_like_the_sequential_sort() {
        let n = PARALLEL_ROW * 3 + 17;
        let values: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1013 - 500).collect();
        let x = ArrayData::from(ArrayD::from_shape_vec(IxDyn(&[n]), values.clone()).unwrap());
        let mut want: Vec<i64> = (0..n as i64).collect();
        want.sort_by_key(|&i| values[i as usize]);
        let got = sorted(x, 0, false, SortResult::Indices);
        assert_eq!(got.as_array::<i64>().unwrap().as_slice().unwrap(), &want[..]);
    }

    #[test]
    fn empty_axes_sort_to_empty_results() {
        let x = ArrayData::from(ArrayD::<f32>::zeros(IxDyn(&[3, 0])));
        assert_eq!(sorted(x.clone(), 1, false, SortResult::Values).shape(), &[3, 0]);
        assert_eq!(sorted(x, 0, true, SortResult::Indices).shape(), &[3, 0]);
    }
}
