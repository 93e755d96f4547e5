//! Matrix products through the `gemm` crate: kernels that
//! [`pytato_transform::contraction::recognize`] finds to be (batched) matrix products of float64
//! or complex128 buffers run as one GEMM per batch element instead of as JIT loops.
//!
//! The GEMM sums each output element in its own order, with fused multiply-adds, as BLAS (and so
//! numpy's `@`) does: results agree with the loop nest to rounding, not bit for bit. That order
//! depends on the number of terms only, never on how many threads share the product (see
//! `Problem::blocks` and `Problem::run`). float32 and
//! complex64 products are computed as float64 and complex128 GEMMs on widened copies of the
//! operands and rounded once, as the library sums single precision everywhere (see
//! `pytato_runtime::math`, "Summation"): a float32 GEMM would round every partial sum.

use std::sync::atomic::{AtomicU64, Ordering};

use pytato_core::DType;
use pytato_transform::contraction::Contraction;
use pytato_transform::kernel::BufferId;

/// Kernels run through the GEMM since the process started (see [`crate::gemm_kernels_run`]).
pub(crate) static RUN: AtomicU64 = AtomicU64::new(0);

/// Products with fewer multiply-adds than this run on one thread.
const PARALLEL_THRESHOLD: usize = 1 << 18;

/// The GEMM computes products of at most this many output elements (in a layout where both
/// operands run along the sum) as dot products, in another order than its blocked kernels.
const SMALL_OUTPUT: usize = 16 * 16;

/// The longest run of terms one GEMM call sums: [`Problem::run`] cuts longer sums into nearly
/// equal runs of at most this many, added into the output one after another. The GEMM sums
/// a run of at most 512 terms in one pass whatever the sizes and the cache, so the order of a
/// sum depends on its length only: not on the blocks threads cut, nor on the machine.
const DEPTH: usize = 512;

/// Whether the backend runs contractions of `dtype` through the GEMM.
pub(crate) fn supported(dtype: DType) -> bool {
    matches!(dtype, DType::F64 | DType::C128 | DType::F32 | DType::C64)
}

/// Row-major strides, in elements, of a dense array of `shape`.
fn strides(shape: &[usize]) -> Vec<isize> {
    let mut out = vec![1isize; shape.len()];
    for k in (0..shape.len().saturating_sub(1)).rev() {
        out[k] = out[k + 1] * shape[k + 1] as isize;
    }
    out
}

/// Runs `product`, which writes buffer `output`, with `terms` terms per sum. `pointers` and
/// `shapes` hold every buffer's base address and shape (dense, row-major, as for a JIT kernel).
///
/// Returns `false`, having written nothing, when a range of the product does not fit the operand
/// axis it indexes (the caller then runs the checked loop nest, which reports the error), and
/// when a float32 or complex64 product might overflow single precision (see [`widened`]).
pub(crate) fn run(
    product: &Contraction,
    output: BufferId,
    pointers: &[*mut u8],
    shapes: &[Vec<usize>],
    terms: usize,
    threads: usize,
) -> bool {
    let (out_shape, lhs_shape, rhs_shape) = (&shapes[output.0], &shapes[product.lhs.0], &shapes[product.rhs.0]);
    let fits = |extent: usize, axis: Option<usize>, shape: &[usize]| axis.is_none_or(|a| extent <= shape[a]);
    let in_range = fits(terms, Some(product.sum_axes.0), lhs_shape)
        && fits(terms, Some(product.sum_axes.1), rhs_shape)
        && product
            .out_axes
            .iter()
            .zip(out_shape)
            .all(|(&(l, r), &extent)| fits(extent, l, lhs_shape) && fits(extent, r, rhs_shape));
    if !in_range || !supported(product.dtype) {
        return false;
    }
    let ran = match product.dtype {
        DType::F32 | DType::C64 => widened(product, output, pointers, shapes, terms, threads),
        dtype => {
            products(product, dtype, output, pointers, shapes, terms, threads);
            true
        }
    };
    if ran {
        RUN.fetch_add(1, Ordering::Relaxed);
    }
    ran
}

/// A float32 or complex64 `product` as a float64 or complex128 one: the operands widened into
/// fresh buffers, the result rounded once into the output. Returns `false`, having written
/// nothing, where the largest magnitudes of the operands (of their parts, for complex numbers)
/// multiply past float32's range: a product there may overflow to ±inf in single precision, as
/// in the loop nest, every other backend and numpy, where the double precision GEMM would go on
/// with a finite value (`3e38 * 3 - 3e38 * 3` is NaN in float32, 0 here), a difference beyond
/// rounding. The loop nest then computes it.
fn widened(
    product: &Contraction,
    output: BufferId,
    pointers: &[*mut u8],
    shapes: &[Vec<usize>],
    terms: usize,
    threads: usize,
) -> bool {
    let (components, wide) = if product.dtype == DType::C64 { (2, DType::C128) } else { (1, DType::F64) };
    let floats = |id: BufferId| shapes[id.0].iter().product::<usize>() * components;
    // The widened values and their largest magnitude (NaN left out: it is NaN on every path).
    let widen = |id: BufferId| -> (Vec<f64>, f64) {
        // SAFETY: buffer `id` is a live, dense array of `shapes[id]` elements of the product's
        // dtype (the caller's contract), that is `floats(id)` contiguous `f32` values.
        let values = unsafe { std::slice::from_raw_parts(pointers[id.0].cast::<f32>(), floats(id)) };
        let wide: Vec<f64> = values.iter().map(|&v| f64::from(v)).collect();
        let largest = wide.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        (wide, largest)
    };
    let (mut lhs, lhs_largest) = widen(product.lhs);
    let (mut rhs, rhs_largest) = if product.rhs == product.lhs {
        (None, lhs_largest)
    } else {
        let (values, largest) = widen(product.rhs);
        (Some(values), largest)
    };
    // A complex product's parts are sums of two real products.
    if lhs_largest * rhs_largest * components as f64 >= f64::from(f32::MAX) {
        return false;
    }
    let mut table = pointers.to_vec();
    let mut out = vec![0.0f64; floats(output)];
    table[product.lhs.0] = lhs.as_mut_ptr().cast();
    table[product.rhs.0] = rhs.as_mut().map_or(lhs.as_mut_ptr(), |r| r.as_mut_ptr()).cast();
    table[output.0] = out.as_mut_ptr().cast();
    products(product, wide, output, &table, shapes, terms, threads);
    // SAFETY: the output buffer is a live, dense array of `floats(output)` `f32` values that
    // nothing else reads or writes while this kernel runs (a kernel never reads its output).
    let narrow = unsafe { std::slice::from_raw_parts_mut(pointers[output.0].cast::<f32>(), floats(output)) };
    for (n, &w) in narrow.iter_mut().zip(&out) {
        *n = w as f32;
    }
    true
}

/// Runs `product` as GEMMs of `dtype` (float64 or complex128) on the buffers of `pointers`,
/// whose ranges [`run`] checked.
fn products(
    product: &Contraction,
    dtype: DType,
    output: BufferId,
    pointers: &[*mut u8],
    shapes: &[Vec<usize>],
    terms: usize,
    threads: usize,
) {
    let (out_shape, lhs_shape, rhs_shape) = (&shapes[output.0], &shapes[product.lhs.0], &shapes[product.rhs.0]);
    let (out_strides, lhs_strides, rhs_strides) = (strides(out_shape), strides(lhs_shape), strides(rhs_shape));

    // The 2-d problem: rows (m) from the longest output axis that indexes only `lhs`, columns (n)
    // from the longest that indexes only `rhs` (a missing one has length 1 and any stride); every
    // other output axis is looped over, with stride 0 in the operand it does not index.
    let longest = |axes: Vec<usize>| axes.into_iter().rev().max_by_key(|&a| out_shape[a]);
    let (row, column) = (longest(product.row_axes()), longest(product.column_axes()));
    let (m, dst_rs, lhs_rs) = match row {
        Some(a) => (out_shape[a], out_strides[a], lhs_strides[product.out_axes[a].0.expect("a row")]),
        None => (1, 0, 0),
    };
    let (n, dst_cs, rhs_cs) = match column {
        Some(a) => (out_shape[a], out_strides[a], rhs_strides[product.out_axes[a].1.expect("a column")]),
        None => (1, 0, 0),
    };
    let (lhs_cs, rhs_rs) = (lhs_strides[product.sum_axes.0], rhs_strides[product.sum_axes.1]);
    // Threads split the output into a grid of blocks, each one GEMM (the `gemm` crate's own
    // threading does not pay for DG's shape: few columns, many rows).
    let parts = if m.saturating_mul(n).saturating_mul(terms) >= PARALLEL_THRESHOLD { threads } else { 1 };
    // Every element of the looped axes: element offsets into the output and the operands.
    let looped: Vec<usize> = (0..out_shape.len()).filter(|&a| Some(a) != row && Some(a) != column).collect();
    let count: usize = looped.iter().map(|&a| out_shape[a]).product();
    let stride = |axis: Option<usize>, strides: &[isize]| axis.map_or(0, |x| strides[x]);
    for flat in 0..count {
        let (mut dst, mut lhs, mut rhs, mut rest) = (0isize, 0isize, 0isize, flat);
        for &a in looped.iter().rev() {
            let i = (rest % out_shape[a]) as isize;
            rest /= out_shape[a];
            let (l, r) = product.out_axes[a];
            dst += i * out_strides[a];
            lhs += i * stride(l, &lhs_strides);
            rhs += i * stride(r, &rhs_strides);
        }
        let at = |buffer: BufferId, offset: isize| (pointers[buffer.0], offset);
        let (dst, lhs, rhs) = (at(output, dst), at(product.lhs, lhs), at(product.rhs, rhs));
        let whole = Problem { m, n, k: terms, dst, dst_cs, dst_rs, lhs, lhs_cs, lhs_rs, rhs, rhs_cs, rhs_rs };
        let blocks = whole.blocks(parts);
        let run = |block: &Problem| match dtype {
            DType::F64 => block.run::<f64>(1.0, false, |x| x + 0.0),
            _ => {
                block.run::<gemm::c64>(gemm::c64::new(1.0, 0.0), true, |z| gemm::c64::new(z.re + 0.0, z.im + 0.0));
                block.recompute_non_finite_complex();
            }
        };
        match blocks.as_slice() {
            [one] => run(one),
            _ => rayon::scope(|s| {
                for block in &blocks {
                    s.spawn(move |_| run(block));
                }
            }),
        }
    }
}

/// One GEMM call: `dst = lhs · rhs` with element strides (`_rs` between rows, `_cs` between
/// columns) and each matrix given as a base address and an element offset from it.
#[derive(Clone, Copy)]
struct Problem {
    m: usize,
    n: usize,
    k: usize,
    dst: (*mut u8, isize),
    dst_cs: isize,
    dst_rs: isize,
    lhs: (*mut u8, isize),
    lhs_cs: isize,
    lhs_rs: isize,
    rhs: (*mut u8, isize),
    rhs_cs: isize,
    rhs_rs: isize,
}

// SAFETY: a `Problem` only carries addresses from one `run` call to the threads of its
// `rayon::scope`, which ends before `run` returns; the blocks of one product write disjoint
// parts of the output (see `Problem::blocks`) and only read the operands.
unsafe impl Send for Problem {}
unsafe impl Sync for Problem {}

impl Problem {
    /// The problem cut into at most `parts` blocks of contiguous rows and columns, a grid of
    /// `rows × columns` blocks, each written by one GEMM (none where the output is empty).
    ///
    /// Each GEMM packs its share of `lhs` (rows × `k`) and of `rhs` (`k` × columns), so the grid
    /// is the one that packs the least: `m · columns + n · rows` elements in all (splitting rows
    /// only, as DG's products with many rows and 20 columns want, would have every thread of a
    /// square product pack all of `rhs`). The cut never changes which of the GEMM's paths a
    /// block takes, so that every thread count gives the same bits (see [`Self::run`]): a
    /// product of at most [`SMALL_OUTPUT`] elements (the GEMM's dot-product path) is not cut, a
    /// block has at least two rows where the product has (a single row is a matrix-vector
    /// product) and as many columns, and more than `SMALL_OUTPUT` elements.
    fn blocks(&self, parts: usize) -> Vec<Problem> {
        let (m, n) = (self.m, self.n);
        // The shortest span of `length` cut into `cut` spans of `length.div_ceil(cut)` (the last
        // one shorter), or 0 where fewer spans are left.
        let shortest = |length: usize, cut: usize| {
            let chunk = length.div_ceil(cut);
            length.saturating_sub((cut - 1) * chunk).min(chunk)
        };
        let keeps_path = |rows: usize, columns: usize| {
            let (short_m, short_n) = (shortest(m, rows), shortest(n, columns));
            (rows == 1 || short_m >= 2)
                && (columns == 1 || short_n >= 2)
                && ((rows == 1 && columns == 1) || short_m * short_n > SMALL_OUTPUT)
        };
        let (rows, columns) = if m.saturating_mul(n) <= SMALL_OUTPUT {
            (1, 1)
        } else {
            // The most blocks, and of those the grid that packs the least.
            (1..=parts.min(m))
                .map(|rows| (rows, (parts / rows).min(n)))
                .filter(|&(rows, columns)| keeps_path(rows, columns))
                .min_by_key(|&(rows, columns)| {
                    (
                        std::cmp::Reverse(rows * columns),
                        m.saturating_mul(columns).saturating_add(n.saturating_mul(rows)),
                    )
                })
                .unwrap_or((1, 1))
        };
        let span = |length: usize, cut: usize, p: usize| {
            let chunk = length.div_ceil(cut);
            (p * chunk, ((p + 1) * chunk).min(length))
        };
        let mut blocks = Vec::with_capacity(rows * columns);
        for r in 0..rows {
            let (top, bottom) = span(m, rows, r);
            for c in 0..columns {
                let (left, right) = span(n, columns, c);
                if top >= bottom || left >= right {
                    continue;
                }
                let shift = |(base, offset): (*mut u8, isize), by: isize| (base, offset + by);
                let (top_i, left_i) = (top as isize, left as isize);
                blocks.push(Problem {
                    m: bottom - top,
                    n: right - left,
                    dst: shift(self.dst, top_i * self.dst_rs + left_i * self.dst_cs),
                    lhs: shift(self.lhs, top_i * self.lhs_rs),
                    rhs: shift(self.rhs, left_i * self.rhs_cs),
                    ..*self
                });
            }
        }
        blocks
    }

    /// Recomputes, term by term in order, every output element of this complex128 block that the
    /// GEMM left with a part not finite. The GEMM multiplies each sum by its `beta = 1 + 0i`, and
    /// that complex multiplication makes `NaN + NaN i` of `inf + NaN i` (`inf · 0` is NaN): the
    /// sum of `(inf + 0i) · (1 + 0i)` and finite products, which numpy's loops, the interpreter
    /// and the wgpu backend give as `inf + NaN i` (numpy 2.4.6: `np.einsum("ij,jk->ik", a, b)`
    /// and `np.sum(a[:, :, None] * b, 1)` with `a = [[inf + 0j, 1]]`, `b = [[1], [1]]`; only its
    /// zgemm, behind `a @ b`, scales the same way). A finite sum times `1 + 0i` is itself, so
    /// only elements not finite are recomputed; their infinities and NaNs do not depend on the
    /// order of the terms.
    fn recompute_non_finite_complex(&self) {
        let element = |(base, offset): (*mut u8, isize)| base.cast::<gemm::c64>().wrapping_offset(offset);
        for i in 0..self.m as isize {
            for j in 0..self.n as isize {
                let at = element(self.dst).wrapping_offset(i * self.dst_rs + j * self.dst_cs);
                // SAFETY: `at` is output element (i, j) of this block, which only this block
                // writes, and the GEMM has written it (see `run`); the buffer's elements are
                // complex128 (`products` calls this for that dtype only).
                let value = unsafe { at.read() };
                if value.re.is_finite() && value.im.is_finite() {
                    continue;
                }
                let mut sum = gemm::c64::new(0.0, 0.0);
                for t in 0..self.k as isize {
                    let lhs = element(self.lhs).wrapping_offset(i * self.lhs_rs + t * self.lhs_cs);
                    let rhs = element(self.rhs).wrapping_offset(t * self.rhs_rs + j * self.rhs_cs);
                    // SAFETY: term `t < k` of row `i < m` and column `j < n` of the operands,
                    // within their buffers by the argument in `run`; nothing writes them.
                    let (a, b) = unsafe { (lhs.read(), rhs.read()) };
                    sum += a * b;
                }
                // SAFETY: as for the read of `at` above.
                unsafe { at.write(sum) }
            }
        }
    }

    /// Whether the GEMM may leave `-0.0` where every term of a sum is a zero and one is `-0.0`
    /// (a product `-1.0 * 0.0`): its complex kernels, its paths for sums of one or two terms and
    /// its matrix-vector paths start a sum from its first product, where numpy's and the
    /// summation scheme's sums start from `+0.0` (and are never `-0.0`: `+0.0 + -0.0` is `+0.0`,
    /// and a sum of two nonzero values that cancels is `+0.0` too). Its float64 matrix kernel
    /// starts from `+0.0`; `tests/gemm.rs` holds every path to numpy's signs.
    fn may_leave_negative_zeros(&self, complex: bool) -> bool {
        complex || self.k <= 2 || self.m <= 1 || self.n <= 1
    }

    /// Runs the GEMM, a call per run of at most [`DEPTH`] terms, so that each output element's
    /// sum depends on `k` only (its order within a run is the GEMM's, its runs are added in
    /// order), then, where it may have left `-0.0` for `+0.0`
    /// ([`Self::may_leave_negative_zeros`]), adds `+0.0` to each output element (`plus_zero`),
    /// which changes nothing else: no sum is `-0.0`, NaN stays NaN.
    fn run<T: Copy + 'static>(&self, one: T, complex: bool, plus_zero: impl Fn(T) -> T) {
        let element = |(base, offset): (*mut u8, isize)| base.cast::<T>().wrapping_offset(offset);
        // The sum in nearly equal runs of at most `DEPTH` terms (one run, maybe empty, for a short
        // sum): the first written, each later one added to what is there.
        let runs = self.k.div_ceil(DEPTH).max(1);
        let run_length = self.k.div_ceil(runs);
        for r in 0..runs {
            let (first, last) = (r * run_length, ((r + 1) * run_length).min(self.k));
            let depth = first as isize;
            // SAFETY: `T` is the element type of the three buffers (`products` dispatches on its
            // `dtype`, which is every buffer's in its pointer table: the contraction's own dtype,
            // which the recognizer checked is the dtype of operands and output, or that of the
            // widened copies `widened` made). Each base address is a live, dense, row-major
            // buffer of the shape in `shapes` (the caller's contract, the same as a JIT
            // kernel's), and the offsets and strides are that layout's: every element addressed
            // is `offset + i * rs + j * cs` for `i < m`, `j < n` (and `first + t`, `t < last -
            // first`, along the summed axis, so within `k`), and `run` checked that each of
            // those ranges fits the axis it walks and that the batch offsets index within the
            // batch axes. The output is not an operand (a kernel never reads the buffer it
            // writes), so `dst` aliases neither `lhs` nor `rhs`. With `read_dst = false` (the
            // first run) the GEMM writes `dst` without reading it (its old contents may be
            // anything); later runs read what the earlier ones wrote. `alpha = beta = 1` keeps
            // the sums as they are, and no conjugation is asked for.
            unsafe {
                gemm::gemm(
                    self.m,
                    self.n,
                    last - first,
                    element(self.dst),
                    self.dst_cs,
                    self.dst_rs,
                    r > 0,
                    element(self.lhs).wrapping_offset(depth * self.lhs_cs),
                    self.lhs_cs,
                    self.lhs_rs,
                    element(self.rhs).wrapping_offset(depth * self.rhs_rs),
                    self.rhs_cs,
                    self.rhs_rs,
                    one,
                    one,
                    false,
                    false,
                    false,
                    gemm::Parallelism::None,
                )
            }
        }
        if !self.may_leave_negative_zeros(complex) {
            return;
        }
        for i in 0..self.m as isize {
            for j in 0..self.n as isize {
                let at = element(self.dst).wrapping_offset(i * self.dst_rs + j * self.dst_cs);
                // SAFETY: `at` is output element (i, j) of this block, in the output buffer by
                // the argument above, which only this block writes; the GEMM has returned, and it
                // wrote every element of the block (`read_dst = false`), so the read sees a `T`.
                unsafe { at.write(plus_zero(at.read())) }
            }
        }
    }
}
