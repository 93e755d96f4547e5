//! Matrix products in workgroup memory: a kernel that is a [`Contraction`] of two matrices
//! (`ij,jk->ik` in any layout of operands and output, `ij,ej->ei`, …) runs as tiles of
//! [`TILE`]×[`TILE`] output elements per workgroup. The workgroup copies a [`TILE`]×[`TILE_K`]
//! block of the left operand and a [`TILE_K`]×[`TILE`] block of the right one into workgroup
//! memory, waits for all of it, and each invocation adds its element's [`TILE_K`] terms from
//! there: every operand element is read from the storage buffer once per tile instead of once
//! per output element.
//!
//! Each element is summed exactly as the generic loop sums it (`pytato_runtime::math`, "Summation":
//! term `t` into lane `t % 8`, each block of 128 terms into the tree of block totals), so tiled and
//! generic kernels, and the CPU backends, give the same bits. A tile of terms past the end is
//! padded with `+0.0 * +0.0` products, which change no lane and add no block (the padding is in
//! the block of the last term, blocks being a multiple of a tile): a lane starts at +0.0
//! and, adding in round-to-nearest, can never become -0.0, and `x + +0.0 == x` for every other
//! `x`, NaN and infinities included.

use pytato_core::expr::ReduceOp;
use pytato_core::{DType, Dim, Result};
use pytato_runtime::math::{SUM_BLOCK, SUM_LANES, Summation};
use pytato_transform::contraction::{Contraction, recognize};
use pytato_transform::kernel::{Kernel, KernelProgram};

use super::loops::Trips;
use super::reduce::Blocks;
use super::{ShaderFeatures, Translator, WORKGROUP_SIZE, scheme};

/// Output elements per side of a workgroup's tile (`TILE * TILE` is the workgroup size).
pub(crate) const TILE: u32 = 16;
/// Terms per tile of the summation: a multiple of the lanes, dividing a block.
pub(crate) const TILE_K: u32 = 32;

const _: () = assert!(TILE * TILE == WORKGROUP_SIZE, "one invocation per element of a tile");
const _: () = assert!(TILE_K.is_multiple_of(SUM_LANES as u32) && (SUM_BLOCK as u32).is_multiple_of(TILE_K));
const _: () = assert!((TILE * TILE_K).is_multiple_of(WORKGROUP_SIZE), "every invocation copies as many");

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
        a = TILE * TILE_K
    )
}

impl Translator<'_> {
    /// `tile[e] = b{buffer}[…]`: element `e` of the tile is (`e / width`, `e % width`) from the
    /// block's corner along the operand's `slow` and `fast` axes, each given as (corner, length,
    /// stride); outside the operand it is `zero`.
    #[allow(clippy::too_many_arguments)]
    fn copy_to_tile(
        &mut self,
        tile: &str,
        e: &str,
        width: u32,
        buffer: usize,
        [slow0, slow_len, slow_stride]: [&str; 3],
        [fast0, fast_len, fast_stride]: [&str; 3],
        zero: &str,
        dtype: DType,
    ) {
        let ix = self.ix();
        self.open("");
        self.line(&format!("let s: {ix} = {slow0} + {ix}({e} / {width}u);"));
        self.line(&format!("let f: {ix} = {fast0} + {ix}({e} % {width}u);"));
        // `zero` is a typed literal (`f64(…)`, `f32(…)`), which gives `v` its type.
        self.line(&format!("var v = {zero};"));
        let element = format!("b{buffer}[u32(s * {slow_stride} + f * {fast_stride})]");
        let value = self.decoded(dtype, &element);
        self.line(&format!("if s < {slow_len} && f < {fast_len} {{ v = {value}; }}"));
        self.line(&format!("{tile}[{e}] = v;"));
        self.close();
    }

    /// The body of a tiled product's `main` (after the extents of every buffer): see the module
    /// docs.
    pub(super) fn tiled_main(&mut self, tiled: &Tiled) -> Result<()> {
        let c = &tiled.contraction;
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
        self.line(&format!("let my_row: {ix} = row0 + {ix}(lid / {TILE}u);"));
        self.line(&format!("let my_column: {ix} = column0 + {ix}(lid % {TILE}u);"));

        let dtype = c.dtype;
        let sum = self.open_sum(ReduceOp::Sum, None, dtype, Blocks::Many)?;
        let trips = Trips::Terms { ranges: vec![(Dim::new(0), c.terms.clone())], step: TILE_K as u64 };
        self.open_loop("for (var kt: u32 = 0u; kt < k_tiles; kt = kt + 1u)", trips);
        self.line(&format!("let k0: {ix} = {ix}(kt * {TILE_K}u) + zero;"));
        // Copy the two blocks: element `e` of `tile_a` is (row e / TILE_K, term e % TILE_K), of
        // `tile_b` (term e / TILE, column e % TILE); out-of-range elements are +0.0.
        let zero = self.constant(&pytato_core::Scalar::zero(dtype))?;
        for copy in 0..TILE * TILE_K / WORKGROUP_SIZE {
            let e = format!("(lid + {}u)", copy * WORKGROUP_SIZE);
            let (a_rows, a_terms) = (format!("st{a}_{a_row}"), format!("st{a}_{a_sum}"));
            let (b_terms, b_columns) = (format!("st{b}_{b_sum}"), format!("st{b}_{b_column}"));
            self.copy_to_tile(
                "tile_a",
                &e,
                TILE_K,
                a,
                ["row0", "rows", &a_rows],
                ["k0", "terms", &a_terms],
                &zero,
                dtype,
            );
            self.copy_to_tile(
                "tile_b",
                &e,
                TILE,
                b,
                ["k0", "terms", &b_terms],
                ["column0", "columns", &b_columns],
                &zero,
                dtype,
            );
        }
        self.line("workgroupBarrier();");
        for u in 0..TILE_K {
            let x = format!("tile_a[(lid / {TILE}u) * {TILE_K}u + {u}u]");
            let y = format!("tile_b[{}u + lid % {TILE}u]", u * TILE);
            // An einsum's product: the textbook one for complex numbers, as `crate::lower` writes.
            let product = self.product_in_order(dtype, &x, &y)?;
            let product = self.bind(dtype, &product)?;
            self.add_value_to_lane(&sum, &product, u as usize % SUM_LANES)?;
        }
        self.line(&format!("{} = {} + {TILE_K}u;", sum.count, sum.count));
        self.flush_lanes(&sum, TILE_K as usize)?;
        self.line("workgroupBarrier();");
        self.close();
        let value = self.finish_sum(&sum, dtype)?;
        self.open("if my_row < rows && my_column < columns");
        let stored = self.encoded(dtype, &value);
        self.line(&format!("b0[u32(my_row * st0_{row} + my_column * st0_{column})] = {stored};"));
        self.close();
        Ok(())
    }
}
