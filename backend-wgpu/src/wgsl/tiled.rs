//! Matrix products in workgroup memory: a kernel that is a [`Contraction`] of two matrices
//! (`ij,jk->ik` in any layout of operands and output, `ij,ej->ei`, …) runs as tiles of
//! [`TILE`]×[`TILE`] output elements per workgroup, each invocation computing a
//! [`BLOCK`]×[`BLOCK`] block of its tile in registers. The workgroup copies a [`TILE`]×[`TILE_K`]
//! block of the left operand and a [`TILE_K`]×[`TILE`] block of the right one into workgroup
//! memory, waits for all of it, and each invocation reads [`BLOCK`] values of each block per term
//! for its `BLOCK²` multiply-adds: an operand element is read from the storage buffer once per
//! tile and from workgroup memory once per block, instead of once per output element.
//!
//! The order of a sum is BLAS's, not the summation scheme of `pytato_runtime::math` that the
//! loops follow (as the Cranelift backend's GEMM, see its `contraction` module): each output
//! element is one chain of multiply-adds in term order, `acc = fma(a_t, b_t, acc)` from
//! `acc = +0.0`, so results agree with the loops to rounding, and on one device depend on the
//! operands only, never on the tile an element falls in or the sizes around it. (WGSL's `fma`
//! leaves fusing to the driver: a GPU's fuses, lavapipe rounds the product first.) float32 products (held in
//! float64 where the adapter has it) are rounded to float32, as the loops round them, and summed
//! in float64: the sum the loops compute, in another order. A tile of terms past the end is padded
//! with `+0.0 * +0.0` products, which change no accumulator but -0.0, and a zero result is
//! stored as +0.0, as numpy's products and the loops give it.
//!
//! Why not the loops' scheme: it spreads each element's terms over 8 lanes and a tree of blocks,
//! whose bookkeeping (and the opaque operands that keep a driver from contracting `a * b + s`)
//! cost several integer operations per multiply-add, and 8 lanes per output element leave no
//! registers for blocks of outputs: matmul 1024² ran at 0.4 TFLOP/s on an H100.

use pytato_core::expr::ReduceOp;
use pytato_core::{DType, Dim, Result, Scalar};
use pytato_runtime::math::Summation;
use pytato_transform::contraction::{Contraction, recognize};
use pytato_transform::kernel::{Kernel, KernelProgram};

use super::loops::Trips;
use super::{ShaderFeatures, Translator, WORKGROUP_SIZE, scheme};

/// Invocations per side of a workgroup (`THREADS²` is the workgroup size).
const THREADS: u32 = 16;
/// Output elements per side of the block each invocation computes.
pub(crate) const BLOCK: u32 = 4;
/// Output elements per side of a workgroup's tile.
pub(crate) const TILE: u32 = THREADS * BLOCK;
/// Terms per step of the sums: the workgroup memory of the two operand blocks,
/// `2 * TILE_K * ROW` float64 values (8.1 KiB), is within WebGPU's default limit (16 KiB).
pub(crate) const TILE_K: u32 = 8;
/// The distance between two terms' rows of a block in workgroup memory: one more than a tile
/// side, so that the copies of consecutive terms of one tile position fall in different banks.
const ROW: u32 = TILE + 1;

const _: () = assert!(THREADS * THREADS == WORKGROUP_SIZE, "one invocation per block of a tile");
const _: () = assert!((TILE * TILE_K).is_multiple_of(WORKGROUP_SIZE), "every invocation copies as many");
const _: () = assert!(2 * TILE_K * ROW * 8 <= 16 << 10, "the operand blocks fit WebGPU's default limit");

/// A matrix product that runs tiled: the contraction, and the output axes of its rows and
/// columns.
#[derive(Clone, Debug)]
pub(crate) struct Tiled {
    pub(crate) contraction: Contraction,
    pub(crate) row_axis: usize,
    pub(crate) column_axis: usize,
}

/// `kernel` as a tiled matrix product, if it is a product of two matrices whose axes have
/// exactly the lengths of the output's (so that every read the tiles make is in range, whatever
/// the sizes) and whose dtype sums in float64 or float32 on this device.
pub(crate) fn tiled_product(program: &KernelProgram, kernel: &Kernel, features: ShaderFeatures) -> Option<Tiled> {
    let c = recognize(program, kernel)?;
    let (&[row_axis], &[column_axis]) = (c.row_axes().as_slice(), c.column_axes().as_slice()) else { return None };
    let summed = matches!(
        (c.dtype, scheme(ReduceOp::Sum, c.dtype, features)),
        (DType::F64, Summation::Blocked) | (DType::F32, Summation::Blocked | Summation::Widened(DType::F64))
    );
    let (lhs, rhs) = (program.buffers[c.lhs.0].shape.dims(), program.buffers[c.rhs.0].shape.dims());
    let out = program.buffers[kernel.output.0].shape.dims();
    let fits = out.len() == 2
        && lhs.len() == 2
        && rhs.len() == 2
        && c.out_axes[row_axis].0.map(|a| &lhs[a]) == Some(&out[row_axis])
        && c.out_axes[column_axis].1.map(|a| &rhs[a]) == Some(&out[column_axis])
        && lhs[c.sum_axes.0] == c.terms
        && rhs[c.sum_axes.1] == c.terms;
    (summed && fits).then_some(Tiled { contraction: c, row_axis, column_axis })
}

/// The workgroup-memory declarations of a tiled product's shader, values of type `ty`.
pub(crate) fn declarations(ty: &str) -> String {
    format!(
        "var<workgroup> tile_a: array<{ty}, {a}>;\nvar<workgroup> tile_b: array<{ty}, {a}>;\nvar<workgroup> \
         tile_count: u32;\nvar<workgroup> tile_total: u32;\n",
        a = TILE_K * ROW
    )
}

impl Translator<'_> {
    /// Copies the invocation's share of one operand's block (terms `k0 ..`) into the workgroup
    /// array `tile`, where (tile position `p`, term `k`) is at `k * ROW + p`: buffer `b{slot}`
    /// along its axis `side_axis` from `corner` (of length `len`) and its axis `sum_axis`.
    /// Elements outside the operand are `zero`. Where the operand's terms are contiguous in
    /// memory (its last axis), consecutive invocations copy consecutive terms (reading
    /// consecutive addresses), else consecutive tile positions.
    #[allow(clippy::too_many_arguments)]
    fn copy_block(
        &mut self,
        tile: &str,
        slot: usize,
        [corner, len]: [&str; 2],
        (side_axis, sum_axis): (usize, usize),
        zero: &str,
        dtype: DType,
    ) {
        let ix = self.ix();
        for copy in 0..TILE * TILE_K / WORKGROUP_SIZE {
            let e = format!("(lid + {}u)", copy * WORKGROUP_SIZE);
            let (p, k) = if sum_axis == 1 {
                (format!("({e} / {TILE_K}u)"), format!("({e} % {TILE_K}u)"))
            } else {
                (format!("({e} % {TILE}u)"), format!("({e} / {TILE}u)"))
            };
            self.open("");
            self.line(&format!("let s: {ix} = {corner} + {ix}({p});"));
            self.line(&format!("let t: {ix} = k0 + {ix}({k});"));
            // `zero` is a typed literal (`f64(…)`, `f32(…)`), which gives `v` its type.
            self.line(&format!("var v = {zero};"));
            let element = format!("b{slot}[u32(s * st{slot}_{side_axis} + t * st{slot}_{sum_axis})]");
            let value = self.decoded(dtype, &element);
            self.line(&format!("if s < {len} && t < terms {{ v = {value}; }}"));
            self.line(&format!("{tile}[{k} * {ROW}u + {p}] = v;"));
            self.close();
        }
    }

    /// The body of a tiled product's `main` (after the extents of every buffer): see the module
    /// docs.
    pub(super) fn tiled_main(&mut self, tiled: &Tiled) -> Result<()> {
        let c = &tiled.contraction;
        let dtype = c.dtype;
        let (row, column) = (tiled.row_axis, tiled.column_axis);
        let (a, b) = (self.slot[&c.lhs], self.slot[&c.rhs]);
        let (a_row, b_column) = (c.out_axes[row].0.expect("a row axis"), c.out_axes[column].1.expect("a column"));
        let (a_sum, b_sum) = c.sum_axes;
        let terms = self.dim(&c.terms)?;
        let (ix, tile, rounding) = (self.ix(), self.lit(TILE), self.lit(TILE - 1));
        self.line(&format!("let rows: {ix} = e0_{row};"));
        self.line(&format!("let columns: {ix} = e0_{column};"));
        self.line(&format!("let terms: {ix} = {terms};"));
        self.line(&format!("let tiles_c: u32 = u32((columns + {rounding}) / {tile});"));
        self.line(&format!("let tiles_r: u32 = u32((rows + {rounding}) / {tile});"));
        // Counts read through `workgroupUniformLoad`: the same for the whole workgroup, so that the
        // barriers below are in uniform control flow.
        self.line(&format!(
            "if lid == 0u {{ tile_count = u32((terms + {}) / {}); tile_total = tiles_r * tiles_c; }}",
            self.lit(TILE_K - 1),
            self.lit(TILE_K)
        ));
        self.line("let k_tiles: u32 = workgroupUniformLoad(&tile_count);");
        self.line("let wg: u32 = wid.y * nwg.x + wid.x;");
        self.line("if wg >= workgroupUniformLoad(&tile_total) { return; }");
        self.zero_and_opaque_init();
        self.line(&format!("let row0: {ix} = {ix}((wg / tiles_c) * {TILE}u) + zero;"));
        self.line(&format!("let column0: {ix} = {ix}((wg % tiles_c) * {TILE}u) + zero;"));
        // Invocation `lid` computes rows `ri + THREADS i` and columns `ci + THREADS j` of the
        // tile, neighbouring invocations (`lid % THREADS`) neighbouring elements along the
        // output's contiguous axis: their stores are contiguous, and their reads of one block
        // neighbouring, of the other one address.
        let (fast, slow) = (format!("lid % {THREADS}u"), format!("lid / {THREADS}u"));
        let (ri, ci) = if row == 1 { (fast, slow) } else { (slow, fast) };
        self.line(&format!("let ri: u32 = {ri};"));
        self.line(&format!("let ci: u32 = {ci};"));

        let ty = self.ty(dtype)?;
        let zero = self.constant(&Scalar::zero(dtype))?;
        for i in 0..BLOCK {
            for j in 0..BLOCK {
                self.line(&format!("var acc{i}_{j}: {ty} = {zero};"));
            }
        }
        let trips = Trips::Terms { ranges: vec![(Dim::new(0), c.terms.clone())], step: TILE_K as u64 };
        self.open_loop("for (var kt: u32 = 0u; kt < k_tiles; kt = kt + 1u)", trips);
        self.line(&format!("let k0: {ix} = {ix}(kt * {TILE_K}u) + zero;"));
        self.copy_block("tile_a", a, ["row0", "rows"], (a_row, a_sum), &zero, dtype);
        self.copy_block("tile_b", b, ["column0", "columns"], (b_column, b_sum), &zero, dtype);
        self.line("workgroupBarrier();");
        for k in 0..TILE_K {
            self.open("");
            for i in 0..BLOCK {
                self.line(&format!("let x{i} = tile_a[{}u + ri + {}u];", k * ROW, i * THREADS));
            }
            for j in 0..BLOCK {
                self.line(&format!("let y{j} = tile_b[{}u + ci + {}u];", k * ROW, j * THREADS));
            }
            for i in 0..BLOCK {
                for j in 0..BLOCK {
                    let acc = format!("acc{i}_{j}");
                    let update = if dtype == DType::F32 && self.float32_in_float64() {
                        // The float32 product, as the loops round it (exact in float64), added in
                        // float64.
                        let product = self.rounded(DType::F32, &format!("x{i} * y{j}"))?;
                        format!("{acc} + {product}")
                    } else {
                        format!("fma(x{i}, y{j}, {acc})")
                    };
                    self.line(&format!("{acc} = {update};"));
                }
            }
            self.close();
        }
        self.line("workgroupBarrier();");
        self.close();
        for i in 0..BLOCK {
            for j in 0..BLOCK {
                self.open("");
                self.line(&format!("let r: {ix} = row0 + {ix}(ri + {}u);", i * THREADS));
                self.line(&format!("let c: {ix} = column0 + {ix}(ci + {}u);", j * THREADS));
                let value = if dtype == DType::F32 && self.float32_in_float64() {
                    self.rounded(DType::F32, &format!("acc{i}_{j}"))?
                } else {
                    // A chain of fused multiply-adds from +0.0 ends at -0.0 where its exact sum is
                    // a negative number too small for the dtype; numpy (and the loops, whose
                    // products round to -0.0 first and add to +0.0) give +0.0. On the bits, which
                    // a driver cannot fold the way it may fold `x + 0.0`.
                    let (bits, zero) = if ty == "f64" { ("u64", "0lu") } else { ("u32", "0u") };
                    self.line(&format!("let w: {bits} = bitcast<{bits}>(acc{i}_{j});"));
                    format!("bitcast<{ty}>(select(w, {zero}, (w << 1u) == {zero}))")
                };
                let stored = self.encoded(dtype, &value);
                self.line(&format!(
                    "if r < rows && c < columns {{ b0[u32(r * st0_{row} + c * st0_{column})] = {stored}; }}"
                ));
                self.close();
            }
        }
        Ok(())
    }
}
