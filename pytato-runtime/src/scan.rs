//! Scans on the host: [`NodeKind::Scan`](pytato_core::NodeKind::Scan), the running sums and products
//! that programs compute between phases (see [`crate::phases`]).
//!
//! Each row (every index of the other axes) is scanned left to right, one addition or product at
//! a time in the array's dtype, as numpy's `cumsum`/`cumprod` loops do: integers wrap, float
//! results round in numpy's order, so they match it bit for bit. Rows are spread over threads.
//!
//! ```
//! use ndarray::array;
//! use pytato_core::{ArrayData, ScanOp};
//! let x = ArrayData::from(array![[1i8, 2, 3], [100, 100, 100]].into_dyn());
//! let sums = pytato_runtime::scan::scan(&x.view(), 1, ScanOp::Sum).unwrap();
//! assert_eq!(sums, ArrayData::from(array![[1i8, 3, 6], [100, -56, 44]].into_dyn()));
//! ```

use ndarray::ArrayViewD;
use num_complex::{Complex32, Complex64};
use rayon::prelude::*;

use pytato_core::array::ScanOp;
use pytato_core::data::ArrayData;
use pytato_core::error::{Error, Result};
use pytato_core::for_each_array_view;
use pytato_core::view::{ArrayDataView, ViewElement};

/// `+` and `*` for one dtype as numpy's loops compute them: integers wrap, `bool` is `or`/`and`.
pub trait NumpyArith: Copy + Send + Sync {
    /// numpy's `self + other`.
    fn numpy_add(self, other: Self) -> Self;
    /// numpy's `self * other`.
    fn numpy_mul(self, other: Self) -> Self;
}

macro_rules! wrapping {
    ($($t:ty),*) => {$(
        impl NumpyArith for $t {
            fn numpy_add(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            fn numpy_mul(self, other: Self) -> Self {
                self.wrapping_mul(other)
            }
        }
    )*};
}
wrapping!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! plain {
    ($($t:ty),*) => {$(
        impl NumpyArith for $t {
            fn numpy_add(self, other: Self) -> Self {
                self + other
            }
            fn numpy_mul(self, other: Self) -> Self {
                self * other
            }
        }
    )*};
}
plain!(f32, f64, Complex32, Complex64);

/// numpy's `float16` loops: in `float32`, rounded to `float16` at each step.
impl NumpyArith for half::f16 {
    fn numpy_add(self, other: Self) -> Self {
        use pytato_core::half_float::{f16_from_f32, f16_to_f32};
        f16_from_f32(f16_to_f32(self) + f16_to_f32(other))
    }
    fn numpy_mul(self, other: Self) -> Self {
        use pytato_core::half_float::{f16_from_f32, f16_to_f32};
        f16_from_f32(f16_to_f32(self) * f16_to_f32(other))
    }
}

impl NumpyArith for bool {
    fn numpy_add(self, other: Self) -> Self {
        self | other
    }
    fn numpy_mul(self, other: Self) -> Self {
        self & other
    }
}

/// Writes into each row of `length` elements of `out` the running `combine` of the same row of
/// `rows`, left to right; rows are spread over threads.
fn scan_rows<T: Copy + Send + Sync>(rows: &[T], out: &mut [T], length: usize, combine: impl Fn(T, T) -> T + Sync) {
    rows.par_chunks(length).zip(out.par_chunks_mut(length)).with_min_len(ELEMENTS_PER_TASK.div_ceil(length)).for_each(
        |(row, out)| {
            let mut running = row[0];
            out[0] = running;
            for (written, &element) in out[1..].iter_mut().zip(&row[1..]) {
                running = combine(running, element);
                *written = running;
            }
        },
    );
}

/// Rows shorter than this are grouped, so that a thread gets at least about this many elements.
const ELEMENTS_PER_TASK: usize = 1 << 15;

/// Running sums or products of `array` along `axis`, in its dtype, each row left to right; see
/// the [module docs](self). The result is in row-major layout.
pub fn scan(array: &ArrayDataView<'_>, axis: usize, op: ScanOp) -> Result<ArrayData> {
    fn typed<T: ViewElement + NumpyArith>(array: &ArrayViewD<'_, T>, axis: usize, op: ScanOp) -> Result<ArrayData> {
        // The scanned axis last, in row-major order: each row is one contiguous slice. An input
        // already so is read where it lies; the output is written once (a copy scanned in place
        // would move every element twice more).
        let mut moved = array.view();
        let last = moved.ndim() - 1;
        moved.swap_axes(axis, last);
        let length = moved.shape()[last];
        if length == 0 {
            return Ok(T::wrap(array.to_owned()));
        }
        let rows = moved.as_standard_layout();
        let rows = rows.as_slice().expect("standard layout");
        let out = ArrayData::try_zeros("scan", T::DTYPE, moved.shape())?;
        let mut out = T::unwrap(out).expect("zeros of the element's dtype");
        let written = out.as_slice_mut().expect("a new array is row-major");
        // One loop per operation, so that the operation inlines (a function pointer chosen at
        // run time costs an indirect call per element).
        match op {
            ScanOp::Sum => scan_rows(rows, written, length, T::numpy_add),
            ScanOp::Product => scan_rows(rows, written, length, T::numpy_mul),
        }
        out.swap_axes(axis, last);
        // Scanning the last axis leaves the result row-major already: no second copy.
        Ok(if out.is_standard_layout() { T::wrap(out) } else { T::wrap(out.as_standard_layout().into_owned()) })
    }
    if axis >= array.ndim() {
        return Err(Error::Internal {
            backend: "scan".into(),
            message: format!("axis {axis} of an array of shape {:?}", array.shape()),
        });
    }
    for_each_array_view!(ArrayDataView, array, a => typed(a, axis, op))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn, array};

    #[test]
    fn each_row_of_a_middle_axis_is_scanned_and_the_layout_is_row_major() {
        let x = ArrayD::from_shape_fn(IxDyn(&[2, 4, 3]), |i| (i[0] * 12 + i[1] * 3 + i[2]) as f64);
        let got = scan(&ArrayData::from(x.clone()).view(), 1, ScanOp::Product).unwrap();
        let got = got.as_array::<f64>().unwrap();
        assert!(got.is_standard_layout());
        for i in 0..2 {
            for k in 0..3 {
                let mut running = 1.0;
                for j in 0..4 {
                    running *= x[[i, j, k]];
                    assert_eq!(got[[i, j, k]], running);
                }
            }
        }
    }

    #[test]
    fn float32_sums_round_in_numpys_order() {
        // numpy 2.4.6: np.cumsum(np.array([1e8, 1, 1, 1, -1e8], np.float32)) -> [1e8 1e8 1e8 1e8 0]
        let x = ArrayData::from(array![1e8f32, 1.0, 1.0, 1.0, -1e8].into_dyn());
        let got = scan(&x.view(), 0, ScanOp::Sum).unwrap();
        assert_eq!(got, ArrayData::from(array![1e8f32, 1e8, 1e8, 1e8, 0.0].into_dyn()));
    }

    #[test]
    fn empty_and_many_short_rows() {
        let empty = ArrayData::from(ArrayD::<i32>::zeros(IxDyn(&[3, 0])));
        assert_eq!(scan(&empty.view(), 1, ScanOp::Sum).unwrap().shape(), &[3, 0]);
        let rows = 100_000;
        let x = ArrayData::from(ArrayD::from_shape_fn(IxDyn(&[rows, 2]), |i| (i[0] % 7) as u16 + 1));
        let got = scan(&x.view(), 1, ScanOp::Product).unwrap();
        let got = got.as_array::<u16>().unwrap();
        assert!((0..rows).all(|r| got[[r, 1]] == ((r % 7) as u16 + 1).pow(2)));
    }
}
