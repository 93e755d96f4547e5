//! Reductions in WGSL: `pytato_runtime::math`'s summation scheme (lanes, blocks, the tree of block
//! totals; single precision in double where the device has it), loops unrolled where the body is
//! small, straight-line code for a few terms known when compiling, and long reductions split into
//! a block-sums shader, a tree shader that combines each element's block sums, and the kernel
//! that reads the result, or for float products a chain of dispatches that carries each
//! element's product in order (see [`split_reductions`]).

use std::collections::HashMap;
use std::sync::Arc;

use pytato_core::expr::{BinaryOp, Expr, Func, Reduce, ReduceOp};
use pytato_core::{DType, Dim, Result, Scalar};
use pytato_runtime::math::{SUM_BLOCK, SUM_LANES, Summation, lane_tree, summation};
use pytato_transform::kernel::{BufferId, Kernel, KernelProgram};

use super::library::real_of;
use super::loops::{Condition, Trips, passes_per_block};
use super::{ShaderFeatures, Translator, WORKGROUP_SIZE, bug};

/// The number of blocks of [`SUM_BLOCK`] terms a split reduction of `terms` terms has.
pub(crate) fn block_count(terms: u64) -> u64 {
    terms.div_ceil(SUM_BLOCK)
}

/// The partial results per output element of a split reduction of `blocks` blocks whose
/// block-sums shader combines runs of `2^coarse` blocks (see
/// [`Translator::partial_of_blocks`]); `coarse` is at most 63.
pub(crate) fn partial_count(blocks: u64, coarse: u32) -> u64 {
    if blocks == 0 { 0 } else { ((blocks - 1) >> coarse) + 1 }
}

/// The reductions of `kernel` that run in stages: the block sums of `SUM_BLOCK` terms of every
/// output element in parallel; then workgroups combine each element's block sums in the
/// canonical tree, a group of them each (aligned runs of block sums per invocation, then the runs
/// level by level in workgroup memory), in passes until one total is left ([`tree_passes`]): the
/// same tree, so the same bits as one loop; then the kernel reads the total. A long sum is spread
/// over many invocations in logarithmic depth, and the loops of every invocation stay short:
/// drivers that stop loops after a fixed count (llvmpipe: 65,535) run sums of any length whose
/// block sums fit in one buffer.
///
/// Split: float and complex sums (in blocks), integer sums and products, and maxima, minima,
/// `all` and `any` of every dtype, not inside another reduction, that have more than `SUM_BLOCK`
/// terms or a length known only at run time. The grouping of the others does not change their
/// bits: integer operations wrap, and `fmax` keeps the first NaN and, among equal values (`-0.0`
/// and `0.0`), the last, so partial results combined earlier-first pick the element one loop
/// would.
///
/// Float and complex products multiply in order, as numpy does (grouped, overflow in one group and
/// underflow in another would be NaN): past [`CARRY_CHUNK`] terms (or of a length known only at
/// run time) they are *carried* ([`carried`]): one dispatch per chunk of `CARRY_CHUNK` terms, each
/// invocation taking its element's product so far from the last dispatch and multiplying in the
/// next chunk, so that the multiplications are one loop's, in its order, and no invocation loops
/// longer than a chunk.
///
/// A reduction in a branch of an `if` is evaluated only where the kernel takes that branch (an
/// index in the other branch may be out of range): its [`Split::guard`] holds the conditions, and
/// its stages evaluate them first. Reductions in those conditions come earlier in the list, so
/// that a stage reads them as the kernel does.
pub(super) fn split_reductions(
    program: &KernelProgram,
    names: &HashMap<&str, BufferId>,
    kernel: &Kernel,
    features: ShaderFeatures,
) -> Result<Vec<Split>> {
    let mut found: Vec<Split> = Vec::new();
    let mut stack: Vec<(&Expr, Path)> = vec![(&kernel.expr, Vec::new())];
    while let Some((e, path)) = stack.pop() {
        match e {
            Expr::Reduce(r) => {
                let dtype = program.expr_dtype(names, e)?;
                let splittable = match scheme(r.op, dtype, features) {
                    Summation::Blocked | Summation::Widened(_) => true,
                    Summation::InOrder => match r.op {
                        ReduceOp::Sum => dtype.is_integer(),
                        ReduceOp::Product => dtype.is_integer() || carried(r.op, dtype, features),
                        ReduceOp::Max | ReduceOp::Min | ReduceOp::All | ReduceOp::Any => true,
                    },
                };
                let short = r.inames.iter().try_fold(1i64, |n, b| {
                    let (lo, hi) = (&b.lower, &b.upper);
                    let constant = lo.terms().next().is_none() && hi.terms().next().is_none();
                    constant.then(|| n.saturating_mul((hi.constant() - lo.constant()).max(0)))
                });
                let one_stage = if carried(r.op, dtype, features) { CARRY_CHUNK } else { SUM_BLOCK };
                let short = short.is_some_and(|n| n <= one_stage as i64);
                if !splittable || short {
                    continue;
                }
                match found.iter_mut().find(|s| s.reduce == *r) {
                    Some(split) => split.also_read_under(path),
                    None => {
                        let guard = (!path.is_empty()).then(|| vec![path]);
                        found.push(Split { reduce: r.clone(), dtype, guard });
                    }
                }
            }
            // The condition first (its reductions come before those of the branches), then
            // each branch under it.
            Expr::If(c, a, b) => {
                let mut taken = path.clone();
                taken.push((c.clone(), true));
                let mut not_taken = path.clone();
                not_taken.push((c.clone(), false));
                stack.push((&**b, not_taken));
                stack.push((&**a, taken));
                stack.push((&**c, path));
            }
            // `zero(…)` evaluates nothing.
            Expr::Call(Func::Zero, _) => {}
            _ => stack.extend(e.children().into_iter().map(|c| (c, path.clone()))),
        }
    }
    Ok(found)
}

/// A reduction that runs in stages (see [`split_reductions`]).
#[derive(Clone, Debug)]
pub(crate) struct Split {
    pub(crate) reduce: Arc<Reduce>,
    /// The dtype of its value.
    pub(crate) dtype: DType,
    /// Where the kernel reads it: everywhere (`None`), or where one of these paths is taken, a
    /// path being conditions with the value each has on it (tested in order, as the kernel does).
    pub(crate) guard: Option<Vec<Path>>,
}

/// The branches taken to reach an expression: each `if`'s condition with its value there.
pub(crate) type Path = Vec<(Arc<Expr>, bool)>;

impl Split {
    /// Records that the kernel also reads the reduction along `path` (see [`Split::guard`]).
    fn also_read_under(&mut self, path: Path) {
        match &mut self.guard {
            _ if path.is_empty() => self.guard = None,
            Some(paths) if !paths.contains(&path) => paths.push(path),
            _ => {}
        }
    }
}

/// Whether a split reduction `op` over `dtype` is carried from dispatch to dispatch in order
/// (float and complex products, see [`split_reductions`]) rather than summed in blocks.
pub(super) fn carried(op: ReduceOp, dtype: DType, features: ShaderFeatures) -> bool {
    op == ReduceOp::Product
        && matches!(dtype, DType::F32 | DType::F64 | DType::C64 | DType::C128)
        && scheme(op, dtype, features) == Summation::InOrder
}

/// The terms a carried product (see [`split_reductions`]) multiplies in per dispatch: a power of
/// two, so that a chunk's loop stays well under llvmpipe's 65,535 iterations.
pub(crate) const CARRY_CHUNK: u64 = 1 << 15;

/// How a reduction `op` over `dtype` sums on a device with `features`: `pytato_runtime::math`'s
/// scheme, with single precision summed in blocks where the device lacks float64.
pub(super) fn scheme(op: ReduceOp, dtype: DType, features: ShaderFeatures) -> Summation {
    match summation(op, dtype) {
        Summation::Widened(_) if !features.f64 => Summation::Blocked,
        other => other,
    }
}

/// The dtype of a reduction's partial results (block sums, tree entries): a widened sum's wider
/// dtype, else the terms' dtype.
pub(super) fn partial_dtype(op: ReduceOp, dtype: DType, features: ShaderFeatures) -> DType {
    scheme(op, dtype, features).lane_dtype(dtype).unwrap_or(dtype)
}

impl Translator<'_> {
    /// A reduction: a loop per iname. Float and complex sums follow `pytato_runtime::math`'s
    /// summation scheme (single precision in double where the adapter has it, double precision in
    /// blocks of `SUM_BLOCK` terms in `SUM_LANES` lanes), as the CPU backends do. A split
    /// reduction (see [`split_reductions`]) adds up its block sums instead.
    pub(super) fn reduce(&mut self, r: &Arc<Reduce>, dtype: DType) -> Result<String> {
        if let Some(j) = self.split.iter().position(|(s, _)| s == r) {
            return self.read_block_sums(j, r, dtype);
        }
        let sum = self.open_sum(r.op, r.start, dtype, Blocks::Many)?;
        if let Some(terms) = fully_unrolled_terms(r) {
            return self.fully_unrolled(&sum, r, dtype, terms);
        }
        // One loop over every term, the last iname fastest (nested loops would cost a driver that
        // counts loop iterations, llvmpipe, the outer trips once more: see `loops`). A small body
        // whose last range has a multiple of `factor` terms (decided when the kernel runs) is
        // unrolled `factor` times. Blocked sums: each copy adds into its own lane, with no
        // rotation (every row starts at lane 0, so the lanes are those of the scheme); other
        // reductions: the copies combine in order.
        let factor = unroll_factor(r, sum.lane_dtype.is_some());
        let mut extents = Vec::new();
        for b in r.inames.iter().rev() {
            let (lo, hi) = (self.dim(&b.lower)?, self.dim(&b.upper)?);
            extents.push((reduction_var(&b.iname), lo, hi));
        }
        let nonempty: Vec<String> = extents.iter().map(|(_, lo, hi)| format!("({hi}) > ({lo})")).collect();
        self.open(&format!("if {}", nonempty.join(" && ")));
        for ((v, lo, _), b) in extents.iter().zip(r.inames.iter().rev()) {
            self.line(&format!("var {v}: {} = {lo};", self.ix()));
            self.ranges.reductions.insert(b.iname.clone(), (b.lower.clone(), b.upper.clone()));
        }
        let ranges: Vec<(Dim, Dim)> = r.inames.iter().map(|b| (b.lower.clone(), b.upper.clone())).collect();
        self.begin_choice();
        if let Some(factor) = factor {
            let (last, lo, hi) = extents[0].clone();
            let header = format!("if ((({hi}) - ({lo})) & {}) == {}", self.lit(factor - 1), self.lit(0));
            self.open_alternative(&header, divisible(r, factor));
            self.open_loop("loop", Trips::Terms { ranges: ranges.clone(), step: factor });
            for u in 0..factor as usize {
                // A block of its own: the copy's iname shadows the loop's, and values the emitter
                // remembers stay with the copy that computed them.
                self.open("");
                self.line(&format!("let {last} = {last} + {};", self.lit(u)));
                if sum.lane_dtype.is_some() {
                    self.add_to_lane(&sum, r, u)?;
                } else {
                    self.add_term(&sum, r, dtype)?;
                }
                self.close();
            }
            if sum.lane_dtype.is_some() {
                self.line(&format!("{} = {} + {SUM_LANES}u;", sum.count, sum.count));
                self.flush_lanes(&sum, SUM_LANES)?;
            }
            self.next_term(&extents, factor as usize);
            self.close();
            self.close();
            self.open_alternative("else", Condition::Otherwise);
        }
        self.open_loop("loop", Trips::Terms { ranges, step: 1 });
        self.add_term(&sum, r, dtype)?;
        self.next_term(&extents, 1);
        self.close();
        if factor.is_some() {
            self.close();
        }
        self.end_choice();
        self.close();
        for b in &r.inames {
            self.ranges.reductions.remove(&b.iname);
        }
        self.finish_sum(&sum, dtype)
    }

    /// A reduction of a few terms, known when compiling: the body once per term, its inames
    /// constants, each copy adding into its lane (blocked sums; there is no loop to count) or
    /// combining in order.
    fn fully_unrolled(&mut self, sum: &Sum, r: &Reduce, dtype: DType, terms: i64) -> Result<String> {
        for b in &r.inames {
            self.ranges.reductions.insert(b.iname.clone(), (b.lower.clone(), b.upper.clone()));
        }
        for t in 0..terms {
            self.open("");
            // The inames of term `t`, the last fastest.
            let mut rest = t;
            for b in r.inames.iter().rev() {
                let extent = b.upper.constant() - b.lower.constant();
                let value = self.lit(b.lower.constant() + rest % extent);
                self.line(&format!("let {}: {} = {value};", reduction_var(&b.iname), self.ix()));
                rest /= extent;
            }
            if sum.lane_dtype.is_some() {
                self.add_to_lane(sum, r, t as usize % SUM_LANES)?;
            } else {
                self.add_term(sum, r, dtype)?;
            }
            self.close();
        }
        for b in &r.inames {
            self.ranges.reductions.remove(&b.iname);
        }
        self.finish_sum(sum, dtype)
    }

    /// Declares the accumulator (and for blocked sums the lanes, the term count and the tree of
    /// block totals) of a reduction `op` over `dtype`, starting at `start` where given (a complex
    /// product's `Reduce::start`) or at the operation's identity. A sum of `Blocks::One` never has
    /// more than `SUM_BLOCK` terms: it has no tree.
    pub(super) fn open_sum(
        &mut self,
        op: ReduceOp,
        start: Option<Scalar>,
        dtype: DType,
        blocks: Blocks,
    ) -> Result<Sum> {
        let scheme = scheme(op, dtype, self.features);
        let lane_dtype = scheme.lane_dtype(dtype);
        let acc_dtype = lane_dtype.unwrap_or(dtype);
        let acc_ty = self.ty(acc_dtype)?;
        let acc = self.fresh("acc");
        let neutral = self.constant(&op.neutral(acc_dtype))?;
        let first = match start {
            Some(start) => self.constant(&start)?,
            None => neutral.clone(),
        };
        self.line(&format!("var {acc}: {acc_ty} = {first};"));
        // Sums in blocks: the lanes of the block rotate through `lanes[0]`, which always holds
        // lane `count % SUM_LANES` (the one the next term goes to); after a multiple of
        // `SUM_LANES` terms every lane is back in its place. Registers, where an array indexed by
        // the count would become a chain of selects on some drivers.
        let lanes: Vec<String> = (0..SUM_LANES).map(|_| self.fresh("lane")).collect();
        let count = self.fresh("cnt");
        if lane_dtype.is_some() {
            for lane in &lanes {
                self.line(&format!("var {lane}: {acc_ty} = {neutral};"));
            }
        }
        let mut tree = None;
        if lane_dtype.is_some() {
            self.line(&format!("var {count}: u32 = 0u;"));
            if blocks == Blocks::Many {
                tree = Some(self.open_tree(acc_dtype)?);
            }
        }
        Ok(Sum { op, scheme, acc, acc_ty, acc_dtype, lane_dtype, neutral, lanes, count, tree })
    }

    /// Declares the pending totals of a canonical tree of blocks (`pytato_runtime::math::BlockTree`)
    /// of `dtype`, and its count of blocks.
    fn open_tree(&mut self, dtype: DType) -> Result<Tree> {
        let ty = self.ty(dtype)?;
        let (pending, blocks) = (self.fresh("pending"), self.fresh("blocks"));
        self.line(&format!("var {pending}: array<{ty}, {TREE_DEPTH}>;"));
        self.line(&format!("var {blocks}: u32 = 0u;"));
        Ok(Tree { pending, blocks })
    }

    /// Pushes the next block total `value` (of `dtype`) into `tree`: it goes to entry
    /// `popcount(blocks)`, then merges with the `trailing_ones(blocks)` entries below it.
    fn tree_push(&mut self, tree: &Tree, value: &str, op: ReduceOp, dtype: DType) -> Result<()> {
        let Tree { pending, blocks } = tree;
        self.open("");
        let (k, d) = (self.fresh("k"), self.fresh("d"));
        self.line(&format!("var {k}: u32 = {blocks};"));
        self.line(&format!("var {d}: u32 = countOneBits({k});"));
        self.line(&format!("{pending}[{d}] = {value};"));
        // One merge per push on average (pushes 0..n merge n - popcount(n) times in all), so
        // every push costs a driver that counts loop iterations two (see `loops`).
        self.open_loop("loop", Trips::AtMost(1));
        self.line(&format!("if ({k} & 1u) == 0u {{ break; }}"));
        self.line(&format!("{d} = {d} - 1u;"));
        self.merge_entries(tree, &d, &format!("{d} + 1u"), op, dtype)?;
        self.line(&format!("{k} = {k} >> 1u;"));
        self.close();
        self.line(&format!("{blocks} = {blocks} + 1u;"));
        self.close();
        Ok(())
    }

    /// The total of `tree` (at least one block pushed): the pending entries merged from the top,
    /// in a loop of at most `levels` iterations (the pending entries, at most [`TREE_DEPTH`]).
    fn tree_finish(&mut self, tree: &Tree, op: ReduceOp, dtype: DType, levels: Trips) -> Result<String> {
        let d = self.fresh("d");
        self.line(&format!("var {d}: u32 = countOneBits({});", tree.blocks));
        self.open_loop("loop", levels);
        self.line(&format!("if {d} <= 1u {{ break; }}"));
        self.line(&format!("{d} = {d} - 1u;"));
        self.merge_entries(tree, &format!("{d} - 1u"), &d, op, dtype)?;
        self.close();
        self.bind(dtype, &format!("{}[0]", tree.pending))
    }

    /// The canonical tree of `len` (a `u32`, at least 1, at most `trips`) partial results of
    /// `dtype`, partial result `q` read by `read(q)`.
    fn tree_of(
        &mut self,
        op: ReduceOp,
        dtype: DType,
        (len, trips): (&str, Trips),
        read: &dyn Fn(&str) -> String,
    ) -> Result<String> {
        let tree = self.open_tree(dtype)?;
        let q = self.fresh("q");
        self.open_loop(&format!("for (var {q}: u32 = 0u; {q} < {len}; {q} = {q} + 1u)"), trips);
        let x = self.bind(dtype, &read(&q))?;
        self.tree_push(&tree, &x, op, dtype)?;
        self.close();
        self.tree_finish(&tree, op, dtype, Trips::AtMost(TREE_DEPTH as u64))
    }

    /// `pending[left] = pending[left] op pending[right]`.
    fn merge_entries(&mut self, tree: &Tree, left: &str, right: &str, op: ReduceOp, dtype: DType) -> Result<()> {
        let pending = &tree.pending;
        let a = self.bind(dtype, &format!("{pending}[{left}]"))?;
        let b = self.bind(dtype, &format!("{pending}[{right}]"))?;
        let merged = self.combine_pair(op, dtype, &a, &b)?;
        self.line(&format!("{pending}[{left}] = {merged};"));
        Ok(())
    }

    /// Two partial results of a reduction `op` over `dtype` combined, the earlier terms' first:
    /// an addition for sums in blocks, `op` for the others.
    fn combine_pair(&mut self, op: ReduceOp, dtype: DType, a: &str, b: &str) -> Result<String> {
        match scheme(op, dtype, self.features) {
            Summation::Blocked => self.binary(BinaryOp::Add, dtype, a, b),
            _ => self.combine_in_order(op, dtype, a, b),
        }
    }

    /// The body of `r` (its inames in scope), added into `sum`.
    fn add_term(&mut self, sum: &Sum, r: &Reduce, dtype: DType) -> Result<()> {
        match sum.scheme {
            Summation::Widened(_) | Summation::Blocked => {
                let lane_dtype = sum.lane_dtype.ok_or_else(|| bug("a sum in blocks has lanes"))?;
                let x = self.emit(&r.body)?;
                let x = self.to_lane(sum, &x);
                let added = self.binary(BinaryOp::Add, lane_dtype, &sum.lanes[0], &x)?;
                let next = self.bind(lane_dtype, &added)?;
                self.rotate_lanes(&sum.lanes, &next);
                self.line(&format!("{} = {} + 1u;", sum.count, sum.count));
                self.flush_lanes(sum, 1)?;
            }
            Summation::InOrder => {
                let x = self.emit(&r.body)?;
                let combined = self.combine_in_order(sum.op, dtype, &sum.acc, &x)?;
                self.line(&format!("{} = {combined};", sum.acc));
            }
        }
        Ok(())
    }

    /// The body of `r` (its inames in scope) added into lane `lane` of `sum` in place (no
    /// rotation, no count: the caller counts).
    fn add_to_lane(&mut self, sum: &Sum, r: &Reduce, lane: usize) -> Result<()> {
        let x = self.emit(&r.body)?;
        self.add_value_to_lane(sum, &x, lane)
    }

    /// A term `x` added into lane `lane` of `sum` in place.
    pub(super) fn add_value_to_lane(&mut self, sum: &Sum, x: &str, lane: usize) -> Result<()> {
        let lane_dtype = sum.lane_dtype.ok_or_else(|| bug("a sum in blocks has lanes"))?;
        let x = self.to_lane(sum, x);
        let lane = &sum.lanes[lane];
        let added = self.binary(BinaryOp::Add, lane_dtype, lane, &x)?;
        self.line(&format!("{lane} = {added};"));
        Ok(())
    }

    /// A term converted to the dtype of `sum`'s lanes.
    fn to_lane(&self, sum: &Sum, x: &str) -> String {
        match sum.scheme {
            Summation::Widened(_) => format!("{}({x})", sum.acc_ty),
            _ => x.to_string(),
        }
    }

    /// `acc` and `x` combined by `op`, for a reduction summed in order.
    fn combine_in_order(&mut self, op: ReduceOp, dtype: DType, acc: &str, x: &str) -> Result<String> {
        let ty = self.ty(dtype)?;
        Ok(match (op, dtype) {
            (ReduceOp::Product, _) => self.product_in_order(dtype, acc, x)?,
            (ReduceOp::Sum, _) => self.binary(BinaryOp::Add, dtype, acc, x)?,
            (ReduceOp::All, _) | (ReduceOp::Min, DType::Bool) => format!("{acc} && {x}"),
            (ReduceOp::Any, _) | (ReduceOp::Max, DType::Bool) => format!("{acc} || {x}"),
            (ReduceOp::Max, DType::F32 | DType::F64) => format!("{}({acc}, {x})", self.library.require("fmax", ty)),
            (ReduceOp::Min, DType::F32 | DType::F64) => format!("{}({acc}, {x})", self.library.require("fmin", ty)),
            (ReduceOp::Max, _) => format!("max({acc}, {x})"),
            (ReduceOp::Min, _) => format!("min({acc}, {x})"),
        })
    }

    /// The value of `sum` once every term is in: a value of `dtype`, or for a sum of one block
    /// (`Blocks::One`) the block's result in the dtype of its partial results (what a block-sums
    /// shader stores, see [`partial_dtype`]).
    pub(super) fn finish_sum(&mut self, sum: &Sum, dtype: DType) -> Result<String> {
        let acc_dtype = sum.acc_dtype;
        let block = match sum.scheme {
            Summation::InOrder => return Ok(sum.acc.clone()),
            Summation::Widened(_) | Summation::Blocked => {
                // Lanes back in their places, then the last (partial) block.
                let count = &sum.count;
                self.open_loop(
                    &format!("for (; ({count} & {}u) != 0u; {count} = {count} + 1u)", SUM_LANES - 1),
                    Trips::AtMost(SUM_LANES as u64 - 1),
                );
                let first = self.bind(acc_dtype, &sum.lanes[0])?;
                self.rotate_lanes(&sum.lanes, &first);
                self.close();
                self.lane_tree(&sum.lanes, acc_dtype)?
            }
        };
        let Some(tree) = &sum.tree else { return Ok(block) };
        // The last, partial block; an empty reduction is one block of neutral elements.
        self.open(&format!("if {} != 0u || {} == 0u", sum.count, tree.blocks));
        self.tree_push(tree, &block, sum.op, acc_dtype)?;
        self.close();
        let total = self.tree_finish(tree, sum.op, acc_dtype, Trips::AtMost(TREE_DEPTH as u64))?;
        match sum.scheme {
            Summation::Widened(_) => {
                let value = self.rounded(dtype, &total)?;
                self.bind(dtype, &value)
            }
            _ => Ok(total),
        }
    }

    /// Emits the term count of `r` (int64) and its number of blocks (u32, which the host checked
    /// fits); returns their names.
    pub(super) fn block_count(&mut self, r: &Reduce) -> Result<(String, String)> {
        let mut factors = Vec::new();
        for b in &r.inames {
            let (lo, hi) = (self.dim(&b.lower)?, self.dim(&b.upper)?);
            let extent = self.bind(DType::I64, &format!("({hi}) - ({lo})"))?;
            factors.push(format!("select({z}, {extent}, {extent} > {z})", z = self.lit(0)));
        }
        let terms = self.bind(DType::I64, &factors.join(" * "))?;
        let blocks = self.fresh("blocks");
        self.line(&format!(
            "let {blocks}: u32 = u32(({terms} + {}) / {});",
            self.lit(SUM_BLOCK - 1),
            self.lit(SUM_BLOCK)
        ));
        Ok((terms, blocks))
    }

    /// The sum of block `block` (a u32) of `r`'s terms: terms `block * SUM_BLOCK` up to the next
    /// block or the end, counted over all of `r`'s inames (the first slowest), summed as
    /// [`Self::reduce`] sums them.
    pub(super) fn block_sum(&mut self, r: &Reduce, dtype: DType, block: &str) -> Result<String> {
        self.terms_of_block(r, dtype, (block, SUM_BLOCK), None)
    }

    /// Emits the term count of `r` (int64) and the number of its partial results per element
    /// (u32): runs of `2^ctl.coarse` blocks (the last one shorter; see
    /// [`Self::partial_of_blocks`]); returns their names.
    pub(super) fn partial_count(&mut self, r: &Reduce) -> Result<(String, String)> {
        let (terms, blocks) = self.block_count(r)?;
        let partials = self.fresh("partials");
        self.line(&format!("let {partials}: u32 = select(0u, (({blocks} - 1u) >> ctl.coarse) + 1u, {blocks} > 0u);"));
        Ok((terms, partials))
    }

    /// Partial result `part` (a u32) of `r`'s terms: the blocks of `SUM_BLOCK` terms of the
    /// aligned run `part` of `2^ctl.coarse` blocks (the last run shorter), each summed as
    /// [`Self::reduce`] sums them, combined in the canonical tree. An aligned run of `2^k` blocks
    /// is a subtree of the tree of all blocks (`pytato_runtime::math`), so the tree stage that
    /// combines the runs' totals gives the bits of one loop over every block, whatever `coarse`
    /// is. The host raises `coarse` above 0 only where one element's block sums would not fit
    /// in one buffer (a run of blocks trades parallelism for memory), and then dispatches this
    /// form of the block-sums shader (`Stage::Runs`), compiled by the first run that needs it;
    /// the usual form sums one block per invocation, with no loop over blocks and no tree.
    pub(super) fn partial_of_blocks(&mut self, r: &Reduce, dtype: DType, part: &str) -> Result<String> {
        let (_, blocks) = self.block_count(r)?;
        let partial = partial_dtype(r.op, dtype, self.features);
        let first = self.bind(DType::U32, &format!("{part} << ctl.coarse"))?;
        let len = self.bind(DType::U32, &format!("min(1u << ctl.coarse, {blocks} - {first})"))?;
        let tree = self.open_tree(partial)?;
        let q = self.fresh("q");
        self.open_loop(&format!("for (var {q}: u32 = 0u; {q} < {len}; {q} = {q} + 1u)"), Trips::BlocksPerPartial);
        let block = self.bind(DType::U32, &format!("{first} + {q}"))?;
        let value = self.block_sum(r, dtype, &block)?;
        self.tree_push(&tree, &value, r.op, partial)?;
        self.close();
        self.tree_finish(&tree, r.op, partial, Trips::PartialTreeLevels)
    }

    /// The next chunk of a carried product `r` (see [`split_reductions`]) for `element`, stored
    /// in the stage's partials `p` at its `slot`: `p[slot]` holds the product of the chunks done,
    /// `p[slots + slot]` how many (as a value of the product's type; 0 in the zeroed buffer
    /// before the first dispatch).
    pub(super) fn carry_chunk(&mut self, r: &Reduce, dtype: DType) -> Result<()> {
        let p = self.partials.clone();
        let complex = dtype.is_complex();
        let done = self.fresh("done");
        let counter = if complex { format!("{p}[slots + slot].x") } else { format!("{p}[slots + slot]") };
        self.line(&format!("let {done}: u32 = u32({counter});"));
        let start = self.bind(dtype, &format!("{p}[slot]"))?;
        let value = self.terms_of_block(r, dtype, (&done, CARRY_CHUNK), Some((&format!("{done} > 0u"), &start)))?;
        self.line(&format!("{p}[slot] = {value};"));
        let ty = self.ty(dtype)?;
        let real = real_of(ty);
        let count = format!("{real}({done} + 1u)");
        let count = if complex { format!("{ty}({count}, {real}(0))") } else { count };
        self.line(&format!("{p}[slots + slot] = {count};"));
        Ok(())
    }

    /// Emits whether the kernel reads `split` at this element (see [`Split::guard`]): each path's
    /// conditions evaluated as the kernel evaluates them, each only where the ones before it hold.
    /// `None` where it is read everywhere.
    pub(super) fn guard(&mut self, split: &Split) -> Result<Option<String>> {
        let Some(paths) = &split.guard else { return Ok(None) };
        let taken = self.fresh("taken");
        self.line(&format!("var {taken}: bool = false;"));
        for path in paths {
            self.open(&format!("if !{taken}"));
            for (condition, value) in path {
                let c = self.emit(condition)?;
                self.open(&if *value { format!("if {c}") } else { format!("if !{c}") });
            }
            self.line(&format!("{taken} = true;"));
            for _ in path {
                self.close();
            }
            self.close();
        }
        Ok(Some(taken))
    }

    /// Block `block.0` (a u32) of `r`'s terms, blocks of `block.1` terms counted over all of
    /// `r`'s inames (the first slowest), summed as [`Self::reduce`] sums them; with `resume`
    /// (`(condition, value)`, a reduction summed in order), from `value` where `condition` holds.
    fn terms_of_block(
        &mut self,
        r: &Reduce,
        dtype: DType,
        (block, block_terms): (&str, u64),
        resume: Option<(&str, &str)>,
    ) -> Result<String> {
        let (terms, _) = self.block_count(r)?;
        let sum = self.open_sum(r.op, r.start, dtype, Blocks::One)?;
        if let Some((condition, value)) = resume {
            self.line(&format!("if {condition} {{ {} = {value}; }}", sum.acc));
        }
        let first = self.bind(DType::I64, &format!("{}({block}) * {} + zero", self.ix(), self.lit(block_terms)))?;
        let left = self.bind(DType::I64, &format!("{terms} - {first}"))?;
        let block_len = self.lit(block_terms);
        let len = self.bind(DType::U32, &format!("u32(select({left}, {block_len}, {left} > {block_len}))"))?;
        // The inames of term `first`, then advanced one term at a time (the last fastest).
        let mut place = self.fresh("t");
        self.line(&format!("var {place}: {} = {first};", self.ix()));
        let mut extents = Vec::new();
        for b in r.inames.iter().rev() {
            let v = reduction_var(&b.iname);
            let (lo, hi) = (self.dim(&b.lower)?, self.dim(&b.upper)?);
            // At least 1: a block-sums shader runs only when every range is non-empty, but an empty
            // range known when compiling must not be a division by a constant zero.
            let extent = self.bind(DType::I64, &format!("max(({hi}) - ({lo}), {})", self.lit(1)))?;
            self.line(&format!("var {v}: {} = {lo} + {place} % {extent};", self.ix()));
            let next = self.fresh("t");
            self.line(&format!("let {next}: {} = {place} / {extent};", self.ix()));
            place = next;
            extents.push((v, lo, hi));
            self.ranges.reductions.insert(b.iname.clone(), (b.lower.clone(), b.upper.clone()));
        }
        // A small body of a blocked sum whose last range has a multiple of `SUM_LANES` terms: the
        // body unrolled into the lanes, as `reduce` does (blocks start at a multiple of
        // `SUM_LANES` terms, so a group of lanes never crosses a row).
        let unrolled = sum.lane_dtype.is_some() && unroll_factor(r, true).is_some();
        let q = self.fresh("q");
        if unrolled {
            let (last, lo, hi) = extents[0].clone();
            self.begin_choice();
            let header = format!("if ((({hi}) - ({lo})) & {}) == {}", self.lit(SUM_LANES - 1), self.lit(0));
            self.open_alternative(&header, divisible(r, SUM_LANES as u64));
            self.open_loop(
                &format!("for (var {q}: u32 = 0u; {q} < {len}; {q} = {q} + {SUM_LANES}u)"),
                Trips::AtMost(SUM_BLOCK / SUM_LANES as u64),
            );
            for u in 0..SUM_LANES {
                self.open("");
                self.line(&format!("let {last} = {last} + {};", self.lit(u)));
                self.add_to_lane(&sum, r, u)?;
                self.close();
            }
            self.line(&format!("{} = {} + {SUM_LANES}u;", sum.count, sum.count));
            self.flush_lanes(&sum, SUM_LANES)?;
            self.advance(&extents, SUM_LANES);
            self.close();
            self.close();
            self.open_alternative("else", Condition::Otherwise);
        }
        self.open_loop(&format!("for (var {q}: u32 = 0u; {q} < {len}; {q} = {q} + 1u)"), Trips::AtMost(block_terms));
        self.add_term(&sum, r, dtype)?;
        self.advance(&extents, 1);
        self.close();
        if unrolled {
            self.close();
            self.end_choice();
        }
        for b in &r.inames {
            self.ranges.reductions.remove(&b.iname);
        }
        self.finish_sum(&sum, dtype)
    }

    /// Advances the inames `extents` (`(variable, lower, upper)`, the fastest first) by `step`
    /// terms, carrying into slower inames; `step` divides the fastest range, and a carry out of
    /// the slowest is never read.
    fn advance(&mut self, extents: &[(String, String, String)], step: usize) {
        for (k, (v, lo, hi)) in extents.iter().enumerate() {
            let by = if k == 0 { step } else { 1 };
            self.line(&format!("{v} = {v} + {};", self.lit(by)));
            if k + 1 < extents.len() {
                self.open(&format!("if {v} == {hi}"));
                self.line(&format!("{v} = {lo};"));
            }
        }
        for _ in 1..extents.len() {
            self.close();
        }
    }

    /// The end of an iteration of a loop over every term of a reduction (`extents` as
    /// [`Self::advance`] takes them): the inames advanced by `step` terms, and the loop left
    /// after the last term (when the slowest iname reaches its end).
    fn next_term(&mut self, extents: &[(String, String, String)], step: usize) {
        self.advance(extents, step);
        let (slowest, _, hi) = extents.last().expect("a reduction has an iname");
        self.line(&format!("if {slowest} >= {hi} {{ break; }}"));
    }

    /// The value of split reduction `j` (`r`) for this element, from its partial results
    /// (binding `p{j}`: block sums, or totals of runs of blocks, see [`Self::partial_of_blocks`]):
    /// past [`TREE_STAGE_BLOCKS`] of them the tree stage left their total in the first entry; up
    /// to that many, combined here in the canonical tree. An empty reduction is the
    /// neutral element.
    pub(super) fn read_block_sums(&mut self, j: usize, r: &Reduce, dtype: DType) -> Result<String> {
        let (terms, partials) = self.partial_count(r)?;
        let partial = partial_dtype(r.op, dtype, self.features);
        let ty = self.ty(partial)?;
        let neutral = self.constant(&r.op.neutral(partial))?;
        if carried(r.op, dtype, self.features) {
            // The last dispatch left the product; none ran for an empty one.
            let first = self.constant(&r.first_value(dtype))?;
            return self.bind(dtype, &format!("select({first}, p{j}[slot], {terms} > {})", self.lit(0)));
        }
        let acc = self.fresh("acc");
        self.line(&format!("var {acc}: {ty} = {neutral};"));
        // Bool block sums are stored as `u32` (see `block_sum_type`).
        let read = |at: &str| if dtype == DType::Bool { format!("(p{j}[{at}] != 0u)") } else { format!("p{j}[{at}]") };
        self.open(&format!("if {partials} > {TREE_STAGE_BLOCKS}u"));
        self.line(&format!("{acc} = {};", read("slot")));
        self.close();
        self.open(&format!("else if {partials} > 0u"));
        let trips = Trips::AtMost(TREE_STAGE_BLOCKS as u64);
        let total = self.tree_of(r.op, partial, (&partials, trips), &|k| read(&format!("{k} * slots + slot")))?;
        self.line(&format!("{acc} = {total};"));
        self.close();
        if partial == dtype {
            return Ok(acc);
        }
        let value = self.rounded(dtype, &acc)?;
        self.bind(dtype, &value)
    }

    /// One pass of the tree stage of split reduction `r` (of `dtype`; see [`tree_passes`]): the
    /// workgroup `group` of slot `slot` of output elements (`live` when it holds one) combines a
    /// group of [`TREE_GROUP`] of the element's partial results (those of the block-sums shader
    /// on the first pass, the totals of the last pass's groups after it) in the canonical tree
    /// (`pytato_runtime::math::BlockTree`) and leaves the total in the group's first entry.
    /// Invocation `lid` combines an aligned run of `chunk` partial results (a power of two: a
    /// subtree), then the workgroup combines the runs' totals level by level in workgroup memory,
    /// as the tree does. A group is an aligned run of a power of two too, and the last group of a
    /// pass (short or not) is the tree's last subtrees, so that the passes make one tree.
    pub(super) fn tree_stage(
        &mut self,
        r: &Reduce,
        dtype: DType,
        (group, slot, live): (&str, &str, &str),
    ) -> Result<()> {
        let (_, partials) = self.partial_count(r)?;
        let dtype = partial_dtype(r.op, dtype, self.features);
        let decode = |at: String| if dtype == DType::Bool { format!("({at} != 0u)") } else { at };
        let encode = |v: &str| if dtype == DType::Bool { format!("select(0u, 1u, {v})") } else { v.to_string() };
        // Pass `ctl.level` combines `entries` partial results, `spacing` entries of the first pass apart.
        self.line(&format!("let shift: u32 = {}u * ctl.level;", TREE_GROUP.trailing_zeros()));
        self.line("let spacing: u32 = 1u << shift;");
        self.line(&format!("let entries: u32 = (({partials} - 1u) >> shift) + 1u;"));
        self.line(&format!(
            "let per: u32 = min((entries + {w}u) / {WORKGROUP_SIZE}u, {TREE_RUN}u);",
            w = WORKGROUP_SIZE - 1
        ));
        self.line("let chunk: u32 = select(1u, 1u << (32u - countLeadingZeros(per - 1u)), per > 1u);");
        self.line(&format!("let group_first: u32 = {group} * {WORKGROUP_SIZE}u * chunk;"));
        self.line(&format!("let working: bool = {live} && group_first < entries;"));
        self.line(&format!(
            "let group_len: u32 = select(0u, min({WORKGROUP_SIZE}u * chunk, entries - group_first), working);"
        ));
        self.line("let used: u32 = (group_len + chunk - 1u) / chunk;");
        self.line("let first: u32 = lid * chunk;");
        self.open("if working && first < group_len");
        self.line("let len: u32 = min(chunk, group_len - first);");
        let p = self.partials.clone();
        let entry = |q: &str| format!("{p}[(group_first + first + {q}) * spacing * slots + {slot}]");
        let trips = Trips::AtMost(TREE_RUN as u64);
        let total = self.tree_of(r.op, dtype, ("len", trips), &|q| decode(entry(q)))?;
        self.line(&format!("runs[lid] = {};", encode(&total)));
        self.close();
        self.line("workgroupBarrier();");
        self.open_loop(
            &format!("for (var stride: u32 = 1u; stride < {WORKGROUP_SIZE}u; stride = stride * 2u)"),
            Trips::AtMost(WORKGROUP_SIZE.trailing_zeros() as u64),
        );
        self.open("if working && lid % (2u * stride) == 0u && lid + stride < used");
        let a = self.bind(dtype, &decode("runs[lid]".into()))?;
        let b = self.bind(dtype, &decode("runs[lid + stride]".into()))?;
        let merged = self.combine_pair(r.op, dtype, &a, &b)?;
        let merged = self.bind(dtype, &merged)?;
        self.line(&format!("runs[lid] = {};", encode(&merged)));
        self.close();
        self.line("workgroupBarrier();");
        self.close();
        self.open("if working && lid == 0u");
        self.line(&format!("{p}[group_first * spacing * slots + {slot}] = runs[0];"));
        self.close();
        Ok(())
    }

    /// When the term count reaches `SUM_BLOCK` (it grows by `per_pass` terms per pass of the
    /// enclosing loop): the lanes' total (in their places) into the tree of blocks, and a new
    /// block. A sum of one block has nothing to flush.
    pub(super) fn flush_lanes(&mut self, sum: &Sum, per_pass: usize) -> Result<()> {
        let Some(tree) = &sum.tree else { return Ok(()) };
        let count = &sum.count;
        self.open_every(&format!("if {count} == {SUM_BLOCK}u"), passes_per_block(per_pass));
        let block = self.lane_tree(&sum.lanes, sum.acc_dtype)?;
        self.tree_push(tree, &block, sum.op, sum.acc_dtype)?;
        for lane in &sum.lanes {
            self.line(&format!("{lane} = {};", sum.neutral));
        }
        self.line(&format!("{count} = 0u;"));
        self.close();
        Ok(())
    }

    /// `lanes[k] = lanes[k + 1]`, and the last lane `= value`.
    fn rotate_lanes(&mut self, lanes: &[String], value: &str) {
        for pair in lanes.windows(2) {
            self.line(&format!("{} = {};", pair[0], pair[1]));
        }
        self.line(&format!("{} = {value};", lanes[lanes.len() - 1]));
    }

    /// The sum of `lanes` (in their places) in `lane_tree`'s order, bound to a name.
    fn lane_tree(&mut self, lanes: &[String], dtype: DType) -> Result<String> {
        let lanes: [String; SUM_LANES] = lanes.to_vec().try_into().map_err(|_| bug("SUM_LANES lanes"))?;
        lane_tree(lanes, &mut |a, b| {
            let sum = self.binary(BinaryOp::Add, dtype, &a, &b)?;
            self.bind(dtype, &sum)
        })
    }
}

/// The variables of one reduction being summed (see [`Translator::open_sum`]).
pub(super) struct Sum {
    pub(super) op: ReduceOp,
    pub(super) scheme: Summation,
    /// The total (for blocked sums: of the blocks done), of type `acc_ty`.
    pub(super) acc: String,
    pub(super) acc_ty: &'static str,
    /// The neutral element of `op`, a literal.
    pub(super) neutral: String,
    /// Sums in blocks: the lanes, `lanes[0]` the next term's.
    pub(super) lanes: Vec<String>,
    /// Sums in blocks: the terms in the current block.
    pub(super) count: String,
    /// Sums in blocks of more than one block: the tree of block totals.
    pub(super) tree: Option<Tree>,
    /// Sums in blocks: the dtype of the lanes (the terms are converted to it).
    pub(super) lane_dtype: Option<DType>,
    /// The dtype of `acc`, the lanes and the tree: the lanes' dtype, else the terms'.
    pub(super) acc_dtype: DType,
}

/// How many blocks of `SUM_BLOCK` terms a sum may have (see [`Translator::open_sum`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Blocks {
    One,
    Many,
}

/// Entries of a tree's pending totals: a `u32` count of blocks has at most 32 complete subtrees
/// pending.
const TREE_DEPTH: u32 = 32;

/// The pending block totals of a sum (`pending`, an array of [`TREE_DEPTH`]) and the count of
/// blocks pushed (`blocks`), WGSL variables.
pub(super) struct Tree {
    pending: String,
    blocks: String,
}

/// The most block sums per element that the kernel combines itself; past this many, the tree
/// stage runs (worth its dispatches only for long reductions).
pub(crate) const TREE_STAGE_BLOCKS: u32 = WORKGROUP_SIZE;

/// The most partial results one invocation of a tree pass combines in a loop (a power of two):
/// short, so that a pass has many workgroups on a GPU and its loops stay far under llvmpipe's cap.
const TREE_RUN: u32 = 16;

/// The partial results one workgroup of a tree pass combines (a power of two).
const TREE_GROUP: u32 = WORKGROUP_SIZE * TREE_RUN;

/// The passes of the tree stage of an element's `blocks` block sums (more than
/// [`TREE_STAGE_BLOCKS`]), as the number of workgroups per element of each. Pass `level` combines
/// `ceil(blocks / TREE_GROUP^level)` partial results (block sums, then the totals the pass before
/// left) in groups of [`TREE_GROUP`], each group's total left in its first entry's place
/// ([`Translator::tree_stage`]); the last pass has one group, and leaves the element's total in
/// its first block sum's place. Block counts fit in 32 bits, so there are at most three passes.
pub(crate) fn tree_passes(blocks: u64) -> Vec<u64> {
    let mut passes = Vec::new();
    let mut entries = blocks;
    loop {
        let groups = entries.div_ceil(TREE_GROUP as u64);
        passes.push(groups);
        if groups <= 1 {
            return passes;
        }
        entries = groups;
    }
}

/// The largest body (in expression nodes) of a reduction that is unrolled.
const UNROLLED_SUM_BODY: usize = 48;

/// Copies of the body per loop iteration of reductions summed in order when unrolled: enough
/// that a million terms stay under llvmpipe's 65,535 loop iterations.
const UNROLLED_IN_ORDER: u64 = 16;

/// How many copies of `r`'s body an iteration of its unrolled loop holds (`lanes`: `r` is a sum in
/// lanes),
/// or `None` when its body is too large to unroll. The unrolled loop runs when the last iname's
/// range is a multiple of this.
fn unroll_factor(r: &Reduce, lanes: bool) -> Option<u64> {
    let mut size = 0usize;
    r.body.walk(&mut |_| size += 1);
    (size <= UNROLLED_SUM_BODY).then_some(if lanes { SUM_LANES as u64 } else { UNROLLED_IN_ORDER })
}

/// The most terms of a reduction emitted as straight-line code (see [`fully_unrolled_terms`]).
const FULLY_UNROLLED_TERMS: i64 = 32;

/// The number of terms of `r` when it is known when compiling, small (up to
/// [`FULLY_UNROLLED_TERMS`]), and its body small enough to copy once per term; `None` otherwise.
/// Such a reduction has no loop: DG's element-local products (`ij,ej->ei` with 20 terms) are of
/// this kind.
fn fully_unrolled_terms(r: &Reduce) -> Option<i64> {
    let mut size = 0usize;
    r.body.walk(&mut |_| size += 1);
    let constant = |d: &Dim| d.terms().next().is_none();
    let terms = r.inames.iter().try_fold(1i64, |n, b| {
        (constant(&b.lower) && constant(&b.upper))
            .then(|| n.saturating_mul((b.upper.constant() - b.lower.constant()).max(0)))
    })?;
    (terms <= FULLY_UNROLLED_TERMS && size <= UNROLLED_SUM_BODY).then_some(terms)
}

/// The condition that the last range of `r` has a multiple of `by` terms (for a loop unrolled `by`
/// times).
fn divisible(r: &Reduce, by: u64) -> Condition {
    let last = r.inames.last().expect("a reduction has an iname");
    Condition::Divisible { lower: last.lower.clone(), upper: last.upper.clone(), by }
}

/// The WGSL variable of reduction iname `_rN`.
pub(super) fn reduction_var(name: &Arc<str>) -> String {
    format!("r{}", name.trim_start_matches("_r"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_passes_end_with_one_group_per_element() {
        assert_eq!(tree_passes(257), [1]);
        assert_eq!(tree_passes(4096), [1]);
        assert_eq!(tree_passes(4097), [2, 1]);
        assert_eq!(tree_passes(4096 * 4096), [4096, 1]);
        assert_eq!(tree_passes(4096 * 4096 + 1), [4097, 2, 1]);
        // The most a `u32` count of blocks needs.
        assert_eq!(tree_passes(u32::MAX as u64), [1 << 20, 256, 1]);
    }
}
