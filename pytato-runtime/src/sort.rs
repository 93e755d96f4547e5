//! Sorting on the host: [`NodeKind::Sort`](pytato_core::NodeKind::Sort), the step programs run between
//! phases (see [`crate::phases`]).
//!
//! The order is numpy's: integers and booleans as numbers; floats with NaN after every number and
//! `-0.0` equal to `0.0`; complex numbers lexicographically, in numpy's four classes
//! `R + Rj < R + nanj < nan + Rj < nan + nanj`. Every sort is stable, so equal elements keep their
//! order, and a descending sort is the stable sort with the comparison reversed (equal elements
//! still in their order, NaN first), as the Array API's `sort(x, descending=True)` is.
//!
//! Elements sort by a key whose order is numpy's (for floats, the bits in an order-preserving
//! form). Stability costs little: indices sort as (key, index) pairs, which an unstable sort puts
//! in the stable order; values whose equal elements are identical (integers) need no stability,
//! and float values need it only for the runs of zeros and NaNs, restored after the sort. Rows
//! (every index of the other axes) sort independently: many rows are spread over threads, a long
//! row is sorted by `rayon`'s parallel sort.
//!
//! ```
//! use ndarray::array;
//! use pytato_core::{ArrayData, SortResult};
//! let x = ArrayData::from(array![3.0, f64::NAN, -0.0, 1.0, 0.0].into_dyn());
//! let sorted = pytato_runtime::sort::sort(&x.view(), 0, false, SortResult::Values).unwrap();
//! let sorted = sorted.as_array::<f64>().unwrap();
//! assert_eq!(&sorted.as_slice().unwrap()[..4], &[-0.0, 0.0, 1.0, 3.0]);
//! assert!(sorted[4].is_nan());
//! let order = pytato_runtime::sort::sort(&x.view(), 0, true, SortResult::Indices).unwrap();
//! assert_eq!(order.as_array::<i64>().unwrap().as_slice().unwrap(), &[1, 0, 3, 2, 4]);
//! ```

use bytemuck::Zeroable;
use ndarray::{ArrayD, ArrayViewD};
use num_complex::{Complex32, Complex64};
use rayon::prelude::*;

use pytato_core::array::{Side, SortResult};
use pytato_core::data::{ArrayData, DataElement};
use pytato_core::error::Result;
use pytato_core::for_each_array_view;
use pytato_core::view::{ArrayDataView, ViewElement};

use crate::spare::ResultMemory;

/// numpy's sort order for one element type (see the [module docs](self)), as a key.
pub trait NumpyOrd: Copy + Send + Sync {
    /// A key whose order is numpy's order of the elements: equal keys are elements numpy's order
    /// does not tell apart.
    type Key: Ord + Copy + Send + Sync;

    /// The element's key.
    fn key(self) -> Self::Key;

    /// Sorts one row of values stably. By default the sort carries each element's index, so that
    /// equal elements that still differ (`-0.0 + 0j` and `0j`) keep their order; element types
    /// whose equal elements are identical, or whose ties are easily restored, do less.
    fn sort_values(row: &mut [Self], descending: bool) {
        let order = sorted_indices(row, descending);
        let original = row.to_vec();
        for (slot, i) in row.iter_mut().zip(order) {
            *slot = original[i as usize];
        }
    }
}

/// Sorts `keys`, in parallel when there are many.
fn sort_keys<K: Ord + Send>(keys: &mut [K], descending: bool) {
    match (descending, keys.len() >= PARALLEL_ROW) {
        (false, false) => keys.sort_unstable(),
        (false, true) => keys.par_sort_unstable(),
        (true, false) => keys.sort_unstable_by(|a, b| b.cmp(a)),
        (true, true) => keys.par_sort_unstable_by(|a, b| b.cmp(a)),
    }
}

/// The indices that sort `row` stably: an unstable sort of (key, index) pairs, ties broken by
/// the index, gives the stable order (also when descending: keys reversed, indices not).
fn sorted_indices<T: NumpyOrd>(row: &[T], descending: bool) -> Vec<i64> {
    let mut pairs: Vec<(T::Key, i64)> = row.iter().zip(0..).map(|(v, i)| (v.key(), i)).collect();
    if descending {
        let mut reversed: Vec<(std::cmp::Reverse<T::Key>, i64)> =
            pairs.into_iter().map(|(k, i)| (std::cmp::Reverse(k), i)).collect();
        sort_keys(&mut reversed, false);
        return reversed.into_iter().map(|(_, i)| i).collect();
    }
    sort_keys(&mut pairs, false);
    pairs.into_iter().map(|(_, i)| i).collect()
}

macro_rules! identical_ties {
    ($($t:ty),*) => {$(
        impl NumpyOrd for $t {
            type Key = $t;
            fn key(self) -> $t {
                self
            }
            /// Equal elements are identical: no order to keep.
            fn sort_values(row: &mut [$t], descending: bool) {
                sort_keys(row, descending)
            }
        }
    )*};
}
identical_ties!(bool, i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_order {
    ($t:ty, $bits:ty, $zero:expr) => {
        impl NumpyOrd for $t {
            type Key = $bits;
            /// The bits in an order-preserving form: negative numbers complemented, the sign bit
            /// set on the others; `-0.0` counted as `0.0` (`x + 0.0`), every NaN the largest key.
            fn key(self) -> $bits {
                if self.is_nan() {
                    return <$bits>::MAX;
                }
                let bits = (if self == $zero { $zero } else { self }).to_bits();
                if bits >> (<$bits>::BITS - 1) == 1 { !bits } else { bits | 1 << (<$bits>::BITS - 1) }
            }
            /// Sorts the keys, then puts back what the keys merge: the zeros (of either sign)
            /// and the NaNs (of any payload), each a run of the result, in their order in `row`.
            fn sort_values(row: &mut [$t], descending: bool) {
                let mut keys: Vec<$bits> = row.iter().map(|v| v.key()).collect();
                sort_keys(&mut keys, descending);
                let zeros: Vec<$t> = row.iter().copied().filter(|v| *v == $zero).collect();
                let nans: Vec<$t> = row.iter().copied().filter(|v| v.is_nan()).collect();
                let top = 1 << (<$bits>::BITS - 1);
                for (slot, key) in row.iter_mut().zip(keys) {
                    *slot = <$t>::from_bits(if key & top == 0 { !key } else { key & !top });
                }
                for (run, is_tie) in [(zeros, (|v: &$t| *v == $zero) as fn(&$t) -> bool), (nans, |v: &$t| v.is_nan())] {
                    if let Some(first) = row.iter().position(is_tie) {
                        row[first..first + run.len()].copy_from_slice(&run);
                    }
                }
            }
        }
    };
}
float_order!(half::f16, u16, half::f16::ZERO);
float_order!(f32, u32, 0.0);
float_order!(f64, u64, 0.0);

/// Complex numbers: numpy's class (`2·isnan(re) + isnan(im)`), then the real and the imaginary
/// part as floats (a NaN part equal to any other).
impl NumpyOrd for Complex32 {
    type Key = (u8, u32, u32);
    fn key(self) -> (u8, u32, u32) {
        (2 * u8::from(self.re.is_nan()) + u8::from(self.im.is_nan()), self.re.key(), self.im.key())
    }
}

impl NumpyOrd for Complex64 {
    type Key = (u8, u64, u64);
    fn key(self) -> (u8, u64, u64) {
        (2 * u8::from(self.re.is_nan()) + u8::from(self.im.is_nan()), self.re.key(), self.im.key())
    }
}

/// Rows at least this long are sorted by a parallel sort; shorter ones are spread over threads.
const PARALLEL_ROW: usize = 1 << 15;

/// `array` sorted along `axis` (or, for [`SortResult::Indices`], the `int64` indices along `axis`
/// that sort it), stably, in numpy's order; `descending` reverses the order and keeps equal
/// elements in theirs. The result is in row-major layout.
pub fn sort(array: &ArrayDataView<'_>, axis: usize, descending: bool, result: SortResult) -> Result<ArrayData> {
    sort_into(array, axis, descending, result, ResultMemory::default())
}

/// [`sort`], its result in `memory` ([`crate::spare`]).
pub(crate) fn sort_into(
    array: &ArrayDataView<'_>,
    axis: usize,
    descending: bool,
    result: SortResult,
    memory: ResultMemory,
) -> Result<ArrayData> {
    fn typed<T: ViewElement + NumpyOrd + Zeroable>(
        array: &ArrayViewD<'_, T>,
        axis: usize,
        descending: bool,
        result: SortResult,
        memory: ResultMemory,
    ) -> Result<ArrayData> {
        // The sorted axis last, in row-major order: each row is one contiguous slice.
        let mut moved = array.view();
        let last = moved.ndim() - 1;
        moved.swap_axes(axis, last);
        let length = moved.shape()[last];
        if length == 0 {
            return Ok(match result {
                SortResult::Values => T::wrap(array.to_owned()),
                SortResult::Indices => ArrayData::from(ArrayD::<i64>::zeros(array.raw_dim())),
            });
        }
        let rows = crate::spare::row_major(moved, "sort")?;
        let values = rows.as_slice().expect("standard layout");
        // Sorting the last axis leaves the result row-major where it was sorted; along another
        // axis the sorted rows are copied back into place, and the spare goes to that copy.
        let (work_memory, copy_memory) = memory.split(axis == last);
        fn back<E: DataElement + Zeroable>(
            mut sorted: ArrayD<E>,
            axis: usize,
            last: usize,
            memory: ResultMemory,
        ) -> Result<ArrayData> {
            sorted.swap_axes(axis, last);
            let result = if sorted.is_standard_layout() {
                sorted
            } else {
                crate::spare::row_major_copy(sorted.view(), "sort", memory)?
            };
            Ok(E::wrap(result))
        }
        // Short rows: several per task, so that a task is worth a thread.
        let rows_per_task = PARALLEL_ROW.div_ceil(length);
        match result {
            SortResult::Values => {
                let mut out = crate::spare::result_memory::<T>(rows.shape(), "sort", work_memory)?;
                let written = out.as_slice_mut().expect("row-major");
                written.copy_from_slice(values);
                written
                    .par_chunks_mut(length)
                    .with_min_len(rows_per_task)
                    .for_each(|row| T::sort_values(row, descending));
                back(out, axis, last, copy_memory)
            }
            SortResult::Indices => {
                let mut out = crate::spare::result_memory::<i64>(rows.shape(), "sort", work_memory)?;
                values
                    .par_chunks(length)
                    .zip(out.as_slice_mut().expect("row-major").par_chunks_mut(length))
                    .with_min_len(rows_per_task)
                    .for_each(|(row, indices)| indices.copy_from_slice(&sorted_indices(row, descending)));
                back(out, axis, last, copy_memory)
            }
        }
    }
    if axis >= array.ndim() {
        return Err(pytato_core::Error::Internal {
            backend: "sort".into(),
            message: format!("axis {axis} of an array of shape {:?}", array.shape()),
        });
    }
    for_each_array_view!(ArrayDataView, array, a => typed(a, axis, descending, result, memory))
}

/// Values searched together: their probes at one level of the search are independent loads,
/// which the memory system serves at once (one value's search waits for each load in turn: in a
/// sorted vector larger than the caches, most of its probes are cache misses).
const SEARCH_BATCH: usize = 64;

/// For each of `values`, how many of the sorted `keys` go before it: `before(key, value)` holds
/// for a prefix of `keys`, whose length this is. The values' searches run in lockstep, halving one
/// range length for all (branch-free: the outcome of a comparison picks the next base, so no
/// mispredicted branch waits for a load).
fn places<K: Copy>(keys: &[K], values: &[K; SEARCH_BATCH], before: impl Fn(K, K) -> bool) -> [usize; SEARCH_BATCH] {
    let mut base = [0usize; SEARCH_BATCH];
    if keys.is_empty() {
        return base;
    }
    // Invariant: each value's place is in base..=base + size.
    let mut size = keys.len();
    while size > 1 {
        let half = size / 2;
        for (b, &v) in base.iter_mut().zip(values) {
            let mid = *b + half;
            *b = if before(keys[mid], v) { mid } else { *b };
        }
        size -= half;
    }
    for (b, &v) in base.iter_mut().zip(values) {
        *b += usize::from(before(keys[*b], v));
    }
    base
}

/// [`NodeKind::SearchSorted`](pytato_core::NodeKind::SearchSorted) on the host: for each value, the
/// number of elements of the sorted 1-d `sorted` that go before it in numpy's order (`Left`:
/// smaller; `Right`: not larger), found by binary search on the keys, 64 values at
/// a time; values on threads when there are many. `int64` of the values' shape.
pub fn searchsorted(sorted: &ArrayDataView<'_>, values: &ArrayDataView<'_>, side: Side) -> Result<ArrayData> {
    searchsorted_into(sorted, values, side, ResultMemory::default())
}

/// [`searchsorted`], its result in `memory` ([`crate::spare`]).
pub(crate) fn searchsorted_into(
    sorted: &ArrayDataView<'_>,
    values: &ArrayDataView<'_>,
    side: Side,
    memory: ResultMemory,
) -> Result<ArrayData> {
    fn typed<T: ViewElement + NumpyOrd + Zeroable>(
        sorted: &ArrayViewD<'_, T>,
        values: &ArrayDataView<'_>,
        side: Side,
        memory: ResultMemory,
    ) -> Result<ArrayData> {
        // The host step passes row-major operands: these borrow them.
        let sorted = crate::spare::row_major(sorted.view(), "searchsorted")?;
        let sorted = sorted.as_slice().expect("standard layout");
        let mut keys: Vec<T::Key> = Vec::new();
        keys.try_reserve_exact(sorted.len()).map_err(|_| pytato_core::Error::OutOfMemory {
            op: "searchsorted".into(),
            bytes: (sorted.len() as u64).saturating_mul(std::mem::size_of::<T::Key>() as u64),
            what: format!("the sort keys of {} values", sorted.len()),
        })?;
        sorted.par_iter().with_min_len(1 << 14).map(|v| v.key()).collect_into_vec(&mut keys);
        let values =
            crate::spare::row_major(T::unwrap_view(values).expect("the dtypes were compared"), "searchsorted")?;
        let flat = values.as_slice().expect("standard layout");
        let mut positions = crate::spare::result_memory::<i64>(values.shape(), "searchsorted", memory)?;
        let place_batch = |(batch, out): (&[T], &mut [i64])| {
            // A short last batch is filled up with its last value; only its own places are kept.
            let padded: [T::Key; SEARCH_BATCH] = std::array::from_fn(|j| batch[j.min(batch.len() - 1)].key());
            let found = match side {
                Side::Left => places(&keys, &padded, |k, v| k < v),
                Side::Right => places(&keys, &padded, |k, v| k <= v),
            };
            for (o, &f) in out.iter_mut().zip(&found) {
                *o = f as i64;
            }
        };
        flat.par_chunks(SEARCH_BATCH)
            .zip(positions.as_slice_mut().expect("row-major").par_chunks_mut(SEARCH_BATCH))
            .with_min_len((1 << 12) / SEARCH_BATCH)
            .for_each(place_batch);
        Ok(ArrayData::from(positions))
    }
    if sorted.ndim() != 1 || sorted.dtype() != values.dtype() {
        return Err(pytato_core::Error::Internal {
            backend: "searchsorted".into(),
            message: format!(
                "a sorted {} array of shape {:?} and {} values",
                sorted.dtype(),
                sorted.shape(),
                values.dtype()
            ),
        });
    }
    for_each_array_view!(ArrayDataView, sorted, a => typed(a, values, side, memory))
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

    /// Sorts rows of `values` (cycled to each length: short rows, rows around the parallel
    /// sort's threshold, a long one) on 1 to 3 threads, against std's stable sort by the keys.
    fn sorts_match_the_stable_sort_of<T>(values: &[T])
    where
        T: NumpyOrd + ViewElement + std::fmt::Debug,
        ArrayData: From<ArrayD<T>>,
    {
        for n in [4097, PARALLEL_ROW - 1, PARALLEL_ROW + 1, (1 << 17) + 3] {
            let row: Vec<T> = (0..n).map(|i| values[(i * 7919 + i / 5) % values.len()]).collect();
            for descending in [false, true] {
                let mut order: Vec<usize> = (0..n).collect();
                order.sort_by(|&a, &b| {
                    let (a, b) = (row[a].key(), row[b].key());
                    if descending { b.cmp(&a) } else { a.cmp(&b) }
                });
                let want_values: Vec<String> = order.iter().map(|&i| format!("{:?}", row[i])).collect();
                let want_indices: Vec<i64> = order.iter().map(|&i| i as i64).collect();
                for threads in [1, 2, 3] {
                    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                    let x = ArrayData::from(ArrayD::from_shape_vec(IxDyn(&[n]), row.clone()).unwrap());
                    let (values, indices) = pool.install(|| {
                        (
                            sorted(x.clone(), 0, descending, SortResult::Values),
                            sorted(x, 0, descending, SortResult::Indices),
                        )
                    });
                    let case =
                        format!("{n} {} descending {descending} on {threads} threads", std::any::type_name::<T>());
                    assert_eq!(indices.as_array::<i64>().unwrap().as_slice().unwrap(), &want_indices[..], "{case}");
                    // Compared as printed, which tells -0.0 from 0.0 (the palettes have one NaN).
                    let values: Vec<String> =
                        values.as_array::<T>().unwrap().iter().map(|v| format!("{v:?}")).collect();
                    assert!(values == want_values, "{case}");
                }
            }
        }
    }

    #[test]
    fn rows_of_every_key_type_sort_stably_on_any_number_of_threads() {
        sorts_match_the_stable_sort_of(&[true, false, false]);
        sorts_match_the_stable_sort_of(&[i8::MIN, -1, 0, 1, i8::MAX, 3]);
        sorts_match_the_stable_sort_of(&[u16::MAX, 0, 1, 256, 255, 7]);
        sorts_match_the_stable_sort_of(&[i32::MIN, -65536, -1, 0, 65536, i32::MAX, 12345]);
        sorts_match_the_stable_sort_of(&[u32::MAX, 0, 1 << 31, 3, 1 << 16]);
        sorts_match_the_stable_sort_of(&[i64::MIN, -1, 0, 1 << 40, i64::MAX, -(1 << 40), 5]);
        sorts_match_the_stable_sort_of(&[u64::MAX, 0, 1 << 63, 1 << 32, 9]);
        let floats = [f64::NAN, -0.0, 0.0, 1.5, -1.5, f64::INFINITY, -f64::INFINITY, 5e-324, -2.5e300];
        sorts_match_the_stable_sort_of(&floats);
        sorts_match_the_stable_sort_of(&floats.map(|v| v as f32));
        sorts_match_the_stable_sort_of(&floats.map(half::f16::from_f64));
        let complex = [
            Complex64::new(f64::NAN, 1.0),
            Complex64::new(-0.0, 0.0),
            Complex64::new(0.0, -0.0),
            Complex64::new(1.0, f64::NAN),
        ];
        sorts_match_the_stable_sort_of(&complex);
    }

    #[test]
    fn float_values_keep_signed_zeros_and_nan_payloads_in_input_order() {
        // The reference: std's stable sort with the comparison written out.
        fn reference(row: &[f64], descending: bool) -> Vec<u64> {
            let cmp = |a: &f64, b: &f64| match (a.is_nan(), b.is_nan()) {
                (false, false) => a.partial_cmp(b).unwrap(),
                (x, y) => x.cmp(&y),
            };
            let mut sorted = row.to_vec();
            sorted.sort_by(|a, b| if descending { cmp(b, a) } else { cmp(a, b) });
            sorted.iter().map(|v| v.to_bits()).collect()
        }
        let palette = [
            f64::from_bits(0x7ff8_0000_0000_0001),
            -0.0,
            0.0,
            1.0,
            -1.0,
            f64::INFINITY,
            f64::from_bits(0xfff8_0000_0000_0002),
        ];
        for n in [7, 5000, PARALLEL_ROW * 2 + 5] {
            let row: Vec<f64> = (0..n).map(|i| palette[(i * 7 + i / 3) % palette.len()]).collect();
            for descending in [false, true] {
                let x = ArrayData::from(ArrayD::from_shape_vec(IxDyn(&[n]), row.clone()).unwrap());
                let got = sorted(x, 0, descending, SortResult::Values);
                let got: Vec<u64> = got.as_array::<f64>().unwrap().iter().map(|v| v.to_bits()).collect();
                assert!(got == reference(&row, descending), "n = {n}, descending = {descending}");
            }
        }
    }

    #[test]
    fn binary_search_gives_the_count_of_elements_before_each_value() {
        let nan = f64::NAN;
        let sorted = [f64::NEG_INFINITY, -1.0, -0.0, 0.0, 0.0, 2.0, f64::INFINITY, nan, nan];
        let values = [nan, 0.0, -0.0, 2.0, -5.0, f64::INFINITY, 1.0, f64::NEG_INFINITY];
        // The reference: count the elements that go before (`<`, NaN last), or not after.
        let before = |a: f64, b: f64| a < b || (b.is_nan() && !a.is_nan());
        let s = ArrayData::from(ndarray::Array1::from(sorted.to_vec()).into_dyn());
        let v = ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn());
        for side in [Side::Left, Side::Right] {
            let got = searchsorted(&s.view(), &v.view(), side).unwrap();
            let want: Vec<i64> = values
                .iter()
                .map(|&x| {
                    let counted = |e: f64| if side == Side::Left { before(e, x) } else { !before(x, e) };
                    sorted.iter().filter(|&&e| counted(e)).count() as i64
                })
                .collect();
            assert_eq!(got.as_array::<i64>().unwrap().as_slice().unwrap(), &want[..], "{side:?}");
        }
    }

    #[test]
    fn searches_in_lockstep_find_what_one_search_per_value_finds() {
        // Every length around the batch and the halvings, values below, between, on and above
        // the keys (many equal keys), against std's binary search of each value alone.
        for n in [0usize, 1, 2, 3, 7, 63, 64, 65, 100, 1000] {
            let sorted: Vec<i32> = (0..n as i32).map(|i| i / 3 * 2).collect();
            for m in [0usize, 1, 2, 63, 64, 65, 129, 300] {
                let values: Vec<i32> = (0..m as i32).map(|i| (i * 37) % (n as i32 + 5) - 2).collect();
                let s = ArrayData::from(ndarray::Array1::from(sorted.clone()).into_dyn());
                let v = ArrayData::from(ndarray::Array1::from(values.clone()).into_dyn());
                for side in [Side::Left, Side::Right] {
                    let got = searchsorted(&s.view(), &v.view(), side).unwrap();
                    let want: Vec<i64> = values
                        .iter()
                        .map(|x| match side {
                            Side::Left => sorted.partition_point(|s| s < x) as i64,
                            Side::Right => sorted.partition_point(|s| s <= x) as i64,
                        })
                        .collect();
                    assert_eq!(got.as_array::<i64>().unwrap().as_slice().unwrap(), &want[..], "{n} {m} {side:?}");
                }
            }
        }
    }

    #[test]
    fn empty_axes_sort_to_empty_results() {
        let x = ArrayData::from(ArrayD::<f32>::zeros(IxDyn(&[3, 0])));
        assert_eq!(sorted(x.clone(), 1, false, SortResult::Values).shape(), &[3, 0]);
        assert_eq!(sorted(x, 0, true, SortResult::Indices).shape(), &[3, 0]);
    }
}
