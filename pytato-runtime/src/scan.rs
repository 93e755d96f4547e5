//! Scans on the host: [`NodeKind::Scan`](pytato_core::NodeKind::Scan), the running sums and products
//! that programs compute between phases (see [`crate::phases`]).
//!
//! # The order of a scan
//!
//! Every backend scans in this order, so that a scan has the same bits everywhere:
//!
//! - A row (every index of the other axes) of at most `2 ·` [`SCAN_BLOCK`] elements is scanned
//!   left to right, one addition or product at a time in the array's dtype, as numpy's
//!   `cumsum`/`cumprod` loops do: integers wrap, float results round in numpy's order, so they
//!   match it bit for bit.
//! - A longer row is cut into blocks of `SCAN_BLOCK` elements (the last one shorter), each
//!   scanned left to right from its own first element; the blocks' totals (each block's last
//!   running value) are scanned by these same rules (recursively); then every element of block
//!   `b > 0` becomes `before + running`, `before` being the scanned total of blocks `0..b`.
//!   Integer sums and products wrap, so for them this is still numpy's bits. **Float sums**
//!   (float16 in float32 at every step, as numpy's loops do) then round in another order than
//!   numpy's: each element is within the rounding error of a left-to-right sum (to rounding, not
//!   bit for bit; the error grows like `SCAN_BLOCK + n / SCAN_BLOCK` roundings instead of `n`,
//!   and a float16 running sum of ones no longer stalls at 2048). This is what lets the blocks
//!   of a long row run on threads and GPU invocations in parallel. **Float products** (numpy's
//!   `cumprod`, complex ones by the textbook formula) stay left to right at every length.
//!
//! Rows and blocks are spread over threads; the bits are the same on any number.
//!
//! ```
//! use ndarray::array;
//! use pytato_core::{ArrayData, ScanOp};
//! let x = ArrayData::from(array![[1i8, 2, 3], [100, 100, 100]].into_dyn());
//! let sums = pytato_runtime::scan::scan(&x.view(), 1, ScanOp::Sum).unwrap();
//! assert_eq!(sums, ArrayData::from(array![[1i8, 3, 6], [100, -56, 44]].into_dyn()));
//! ```

use bytemuck::Zeroable;
use ndarray::ArrayViewD;
use num_complex::{Complex32, Complex64};
use rayon::prelude::*;

use pytato_core::array::ScanOp;
use pytato_core::data::ArrayData;
use pytato_core::error::{Error, Result};
use pytato_core::for_each_array_view;
use pytato_core::view::{ArrayDataView, ViewElement};

use crate::spare::ResultMemory;

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

/// The block length of a long row's scan (see the [module docs](self)): rows of more than
/// twice this many elements are scanned in blocks.
pub const SCAN_BLOCK: usize = 1024;

/// Whether a scan of elements `T` by `op` cuts long rows into blocks (see the [module docs](self)):
/// every scan but a product of floats.
fn scans_in_blocks<T: ViewElement>(op: ScanOp) -> bool {
    op == ScanOp::Sum || !T::DTYPE.is_inexact()
}

/// Writes into `out` the running `combine` of `row`, left to right.
fn scan_left_to_right<T: Copy>(row: &[T], out: &mut [T], combine: &impl Fn(T, T) -> T) {
    let mut running = row[0];
    out[0] = running;
    for (written, &element) in out[1..].iter_mut().zip(&row[1..]) {
        running = combine(running, element);
        *written = running;
    }
}

/// Blocks whose left-to-right running values one loop computes together: each block's chain of
/// dependent operations is independent of the others', so the processor overlaps them (a single
/// running sum waits for each addition before the next).
const INTERLEAVED: usize = 4;

/// The left-to-right `combine` of each block of `blocks`, [`INTERLEAVED`] blocks of
/// [`SCAN_BLOCK`] elements at a time.
// The loops walk one position of several blocks at a time: an index, not an iterator.
#[allow(clippy::needless_range_loop)]
fn block_totals<T: Copy>(blocks: &[T], combine: &impl Fn(T, T) -> T) -> Vec<T> {
    let mut totals = Vec::with_capacity(blocks.len().div_ceil(SCAN_BLOCK));
    let mut groups = blocks.chunks_exact(INTERLEAVED * SCAN_BLOCK);
    for group in &mut groups {
        let block = |k: usize| &group[k * SCAN_BLOCK..(k + 1) * SCAN_BLOCK];
        let parts: [&[T]; INTERLEAVED] = std::array::from_fn(block);
        let mut running: [T; INTERLEAVED] = std::array::from_fn(|k| parts[k][0]);
        for j in 1..SCAN_BLOCK {
            for k in 0..INTERLEAVED {
                running[k] = combine(running[k], parts[k][j]);
            }
        }
        totals.extend(running);
    }
    for block in groups.remainder().chunks(SCAN_BLOCK) {
        totals.push(block[1..].iter().fold(block[0], |running, &v| combine(running, v)));
    }
    totals
}

/// Writes into `out` the running `combine` of each block of `blocks`, each combined with
/// `before_of(k)` where that is a value (`k` counts the blocks of `blocks`), [`INTERLEAVED`]
/// blocks at a time.
fn blocks_with_before<T: Copy>(
    blocks: &[T],
    out: &mut [T],
    before_of: impl Fn(usize) -> Option<T>,
    combine: &impl Fn(T, T) -> T,
) {
    let full = blocks.len() / (INTERLEAVED * SCAN_BLOCK) * INTERLEAVED;
    for (g, (group, written)) in
        blocks.chunks_exact(INTERLEAVED * SCAN_BLOCK).zip(out.chunks_exact_mut(INTERLEAVED * SCAN_BLOCK)).enumerate()
    {
        let parts: [&[T]; INTERLEAVED] = std::array::from_fn(|k| &group[k * SCAN_BLOCK..(k + 1) * SCAN_BLOCK]);
        let mut targets = written.chunks_exact_mut(SCAN_BLOCK);
        let targets: [&mut [T]; INTERLEAVED] = std::array::from_fn(|_| targets.next().expect("a full group"));
        let adds: [Option<T>; INTERLEAVED] = std::array::from_fn(|k| before_of(g * INTERLEAVED + k));
        let mut running: [T; INTERLEAVED] = std::array::from_fn(|k| parts[k][0]);
        for j in 0..SCAN_BLOCK {
            for k in 0..INTERLEAVED {
                if j > 0 {
                    running[k] = combine(running[k], parts[k][j]);
                }
                targets[k][j] = adds[k].map_or(running[k], |before| combine(before, running[k]));
            }
        }
    }
    let start = full * SCAN_BLOCK;
    for (k, (block, written)) in blocks[start..].chunks(SCAN_BLOCK).zip(out[start..].chunks_mut(SCAN_BLOCK)).enumerate()
    {
        scan_left_to_right(block, written, combine);
        if let Some(before) = before_of(full + k) {
            for running in written {
                *running = combine(before, *running);
            }
        }
    }
}

/// Writes into `out` the running `combine` of the non-empty `row`, in blocks where the row is
/// long (see the [module docs](self)). On threads: the blocks' totals first, their scan, then
/// each block's running values combined with the total before it. On one thread, in one pass
/// ([`scan_row_in_one_pass`]).
fn scan_row_in_blocks<T: Copy + Send + Sync>(row: &[T], out: &mut [T], combine: &(impl Fn(T, T) -> T + Sync)) {
    if row.len() <= 2 * SCAN_BLOCK {
        return scan_left_to_right(row, out, combine);
    }
    if rayon::current_num_threads() == 1 {
        return scan_row_in_one_pass(row, out, combine);
    }
    // Groups of blocks of several microseconds each per task.
    const GROUP: usize = 16 * SCAN_BLOCK;
    let totals: Vec<T> = row.par_chunks(GROUP).flat_map_iter(|group| block_totals(group, combine)).collect();
    let mut before = totals.clone();
    scan_row_in_blocks(&totals, &mut before, combine);
    row.par_chunks(GROUP).zip(out.par_chunks_mut(GROUP)).enumerate().for_each(|(g, (group, out))| {
        // The scanned total before block `k` of this group (none before the row's first block).
        let first_block = g * (GROUP / SCAN_BLOCK);
        let before_of = |k: usize| (first_block + k).checked_sub(1).map(|b| before[b]);
        blocks_with_before(group, out, before_of, combine)
    });
}

/// [`scan_row_in_blocks`] on one thread, reading the row once (the threaded form reads it twice:
/// once for the block totals, once for the running values): [`INTERLEAVED`] blocks' running
/// values at a time, then, while they are still in cache, each block's combined with the
/// scanned total of the blocks before it, which a [`TotalsScan`] keeps.
fn scan_row_in_one_pass<T: Copy>(row: &[T], out: &mut [T], combine: &impl Fn(T, T) -> T) {
    let mut totals = TotalsScan::new(row.len().div_ceil(SCAN_BLOCK));
    let mut before = None;
    for (group, written) in row.chunks(INTERLEAVED * SCAN_BLOCK).zip(out.chunks_mut(INTERLEAVED * SCAN_BLOCK)) {
        blocks_with_before(group, written, |_| None, combine);
        for block in written.chunks_mut(SCAN_BLOCK) {
            let total = block[block.len() - 1];
            if let Some(before) = before {
                for running in block.iter_mut() {
                    *running = combine(before, *running);
                }
            }
            before = Some(totals.push(total, combine));
        }
    }
}

/// The scan of a row of block totals given one total at a time, in the order of the
/// [module docs](self) (in blocks, recursively, where the totals are more than
/// `2 · SCAN_BLOCK`): the state of [`scan_row_in_one_pass`].
struct TotalsScan<T> {
    /// Where this row is cut into blocks: the scan of its blocks' totals.
    blocks: Option<Box<TotalsScan<T>>>,
    /// The running value of the current block (of the whole row where it is not cut).
    running: Option<T>,
    /// The elements of the current block seen so far.
    seen: usize,
    /// The scanned total of the blocks before the current one.
    before: Option<T>,
}

impl<T: Copy> TotalsScan<T> {
    /// The state before the first of `length` totals.
    fn new(length: usize) -> Self {
        let blocks = (length > 2 * SCAN_BLOCK).then(|| Box::new(TotalsScan::new(length.div_ceil(SCAN_BLOCK))));
        TotalsScan { blocks, running: None, seen: 0, before: None }
    }

    /// The scanned value at the position of the next total, `total`.
    fn push(&mut self, total: T, combine: &impl Fn(T, T) -> T) -> T {
        let running = self.running.map_or(total, |running| combine(running, total));
        let scanned = self.before.map_or(running, |before| combine(before, running));
        self.running = Some(running);
        if let Some(blocks) = &mut self.blocks {
            self.seen += 1;
            if self.seen == SCAN_BLOCK {
                self.before = Some(blocks.push(running, combine));
                self.running = None;
                self.seen = 0;
            }
        }
        scanned
    }
}

/// Writes into each row of `length` elements of `out` the running `combine` of the same row of
/// `rows`, in blocks where `blocks` allows it and the row is long; rows are spread over threads.
fn scan_rows<T: Copy + Send + Sync>(
    rows: &[T],
    out: &mut [T],
    length: usize,
    blocks: bool,
    combine: impl Fn(T, T) -> T + Sync,
) {
    rows.par_chunks(length).zip(out.par_chunks_mut(length)).with_min_len(ELEMENTS_PER_TASK.div_ceil(length)).for_each(
        |(row, out)| {
            if blocks { scan_row_in_blocks(row, out, &combine) } else { scan_left_to_right(row, out, &combine) }
        },
    );
}

/// Rows shorter than this are grouped, so that a thread gets at least about this many elements.
const ELEMENTS_PER_TASK: usize = 1 << 15;

/// Running sums or products of `array` along `axis`, in its dtype, in the order the
/// [module docs](self) define. The result is in row-major layout.
pub fn scan(array: &ArrayDataView<'_>, axis: usize, op: ScanOp) -> Result<ArrayData> {
    scan_into(array, axis, op, ResultMemory::default())
}

/// [`scan`], its result in `memory` ([`crate::spare`]).
pub(crate) fn scan_into(array: &ArrayDataView<'_>, axis: usize, op: ScanOp, memory: ResultMemory) -> Result<ArrayData> {
    fn typed<T: ViewElement + NumpyArith + Zeroable>(
        array: &ArrayViewD<'_, T>,
        axis: usize,
        op: ScanOp,
        memory: ResultMemory,
    ) -> Result<ArrayData> {
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
        let rows = crate::spare::row_major(moved.view(), "scan")?;
        let rows = rows.as_slice().expect("standard layout");
        // Scanning the last axis writes the result row-major in place; along another axis the
        // scanned rows are copied back into place, and the spare goes to that copy.
        let (work_memory, copy_memory) = memory.split(axis == last);
        let mut out = crate::spare::result_memory::<T>(moved.shape(), "scan", work_memory)?;
        let written = out.as_slice_mut().expect("a new array is row-major");
        // One loop per operation, so that the operation inlines (a function pointer chosen at
        // run time costs an indirect call per element).
        let blocks = scans_in_blocks::<T>(op);
        match op {
            ScanOp::Sum => scan_rows(rows, written, length, blocks, T::numpy_add),
            ScanOp::Product => scan_rows(rows, written, length, blocks, T::numpy_mul),
        }
        out.swap_axes(axis, last);
        Ok(T::wrap(if out.is_standard_layout() {
            out
        } else {
            crate::spare::row_major_copy(out.view(), "scan", copy_memory)?
        }))
    }
    if axis >= array.ndim() {
        return Err(Error::Internal {
            backend: "scan".into(),
            message: format!("axis {axis} of an array of shape {:?}", array.shape()),
        });
    }
    for_each_array_view!(ArrayDataView, array, a => typed(a, axis, op, memory))
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

    /// The order of the module docs, written plainly (one thread, an explicit recursion on the
    /// totals): the reference for the threaded scan.
    fn blocked_reference(row: &[f64]) -> Vec<f64> {
        let left_to_right = |row: &[f64]| {
            let mut running = 0.0;
            row.iter()
                .enumerate()
                .map(|(i, &v)| {
                    running = if i == 0 { v } else { running + v };
                    running
                })
                .collect::<Vec<f64>>()
        };
        if row.len() <= 2 * SCAN_BLOCK {
            return left_to_right(row);
        }
        let blocks: Vec<Vec<f64>> = row.chunks(SCAN_BLOCK).map(left_to_right).collect();
        let totals: Vec<f64> = blocks.iter().map(|b| *b.last().unwrap()).collect();
        let before = blocked_reference(&totals);
        let mut out = blocks[0].clone();
        for (b, block) in blocks.iter().enumerate().skip(1) {
            out.extend(block.iter().map(|&running| before[b - 1] + running));
        }
        out
    }

    #[test]
    fn long_float_rows_are_summed_in_blocks_and_products_left_to_right() {
        // One thread scans in one pass, more in two: the same bits.
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(long_float_rows_on_the_current_pool);
        }
    }

    fn long_float_rows_on_the_current_pool() {
        // Lengths about the block boundaries, one with a last group of fewer than INTERLEAVED
        // blocks, and one whose 2,443 totals are scanned in blocks too.
        for n in [1usize, 2048, 2049, 3000, 5121, 4 * 4 * SCAN_BLOCK + 3 * SCAN_BLOCK + 5, 2_500_001] {
            let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1013) as f64 / 97.0 - 5.0 + 1e-3 / (i + 1) as f64).collect();
            let data = ArrayData::from(ndarray::Array1::from(x.clone()).into_dyn());
            let sums = scan(&data.view(), 0, ScanOp::Sum).unwrap();
            let got: Vec<u64> = sums.as_array::<f64>().unwrap().iter().map(|v| v.to_bits()).collect();
            let want: Vec<u64> = blocked_reference(&x).iter().map(|v| v.to_bits()).collect();
            assert!(got == want, "sums of {n}");
            let products = scan(&data.view(), 0, ScanOp::Product).unwrap();
            let mut running = 1.0;
            for (i, (&got, &v)) in products.as_array::<f64>().unwrap().iter().zip(&x).enumerate() {
                running = if i == 0 { v } else { running * v };
                assert_eq!(got.to_bits(), running.to_bits(), "product {i} of {n}");
            }
        }
    }

    #[test]
    fn long_integer_rows_keep_the_running_loops_bits_and_float16_sums_no_longer_stall() {
        let n = 5000;
        let x = ArrayData::from(ArrayD::from_shape_fn(IxDyn(&[2, n]), |i| (i[1] as i8).wrapping_mul(37)));
        for op in [ScanOp::Sum, ScanOp::Product] {
            let got = scan(&x.view(), 1, op).unwrap();
            let got = got.as_array::<i8>().unwrap();
            for r in 0..2 {
                let mut running = 0i8;
                for k in 0..n {
                    let v = (k as i8).wrapping_mul(37);
                    running = match (k, op) {
                        (0, _) => v,
                        (_, ScanOp::Sum) => running.wrapping_add(v),
                        (_, ScanOp::Product) => running.wrapping_mul(v),
                    };
                    assert_eq!(got[[r, k]], running, "{op:?} at {k}");
                }
            }
        }
        // numpy's float16 cumsum of 3,000 ones stalls at 2048 (2049 rounds to it); in blocks of
        // 1024, each block's running sum is exact, and so are the sums of the totals before it.
        let ones = ArrayData::from(ArrayD::from_elem(IxDyn(&[3000]), half::f16::ONE));
        let got = scan(&ones.view(), 0, ScanOp::Sum).unwrap();
        let got = got.as_array::<half::f16>().unwrap();
        assert_eq!(got[2047].to_f32(), 2048.0);
        assert_eq!(got[2999].to_f32(), 3000.0);
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
