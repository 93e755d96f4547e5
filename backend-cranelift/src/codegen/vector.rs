//! 128-bit SIMD for the innermost output loop.
//!
//! A kernel whose output is `float64` or `float32` computes two (or four) adjacent elements of
//! its innermost axis at once when every part of its expression that depends on the innermost
//! iname is float arithmetic, a comparison, an `if`, a supported function, a float reduction, or
//! a read of a float buffer. Reads whose last index is `iname + c` (the others not depending on
//! the iname) are vector loads; other reads that depend on it are gathered lane by lane; parts
//! that do not depend on it are computed once as scalars and splatted. Functions without a
//! vector instruction (`sin`, `pow`, ...) are called lane by lane.
//!
//! The vector loop runs while a whole vector fits; the scalar loop finishes the row. Per element,
//! the operations and their order are the scalar code's (a vector reduction accumulates each lane
//! separately), so results are bit-identical to the scalar path.
//!
//! Both branches of an `if` are evaluated and blended, so an `if` is vectorized only when no read
//! inside its branches needs a bounds check (a check must not fire for the branch not taken).

use std::sync::Arc;

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};
use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, Reduce, ReduceOp, UnaryOp};

use pytato_core::names::{Reserved, classify};
use pytato_core::{DType, Result};
use pytato_runtime::math::{SUM_BLOCK, SUM_LANES, Summation, lane_tree, summation};

use super::{TRUSTED, Translator, Val, bug, float_cc};
use crate::helpers;

/// Bytes of the scratch (the kernel's `scratch` argument) for the lanes and pending block totals
/// of the strips of a blocked sum with the reduction outside the row: `SUM_LANES` rows of a strip
/// for the lanes, then one per tree entry the sum can need (`bits(blocks) + 1`, known once its
/// term count is). Each run cuts the output row into the widest strips whose rows fit, so the
/// rows read from the input are long streams: column sums of a 4096² float64 matrix on one thread
/// of a 2-core VM take about 17-19 ms in strips of 4 KiB (the prefetcher restarts on every row's
/// chunk) and about 10.5 ms in whole rows (32 KiB, what this budget gives there); a hand loop
/// adding rows takes 9 ms. Larger budgets would let the lanes of wider rows leave the L2 cache.
pub(super) const STRIP_SCRATCH_BYTES: i64 = 512 * 1024;

/// Bytes that each row of a strip's scratch is longer than the strip: a cache line, so that the
/// rows do not share their addresses modulo 4 KiB (a load whose address matches a pending
/// store's there waits for it on x86: the rows of a matrix read down its columns all do).
const ROW_PADDING: i64 = 64;

/// Where the strips of one blocked sum keep their lanes and tree entries: row `k` of the scratch
/// at `base + k * row_bytes`, the lanes first.
#[derive(Clone, Copy)]
struct StripScratch {
    /// The kernel's `scratch` argument.
    base: Value,
    /// Bytes from one row of the scratch to the next (a multiple of 64).
    row_bytes: Value,
}

/// Vector loads and stores: never trapping, not assumed aligned.
fn vector_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl Translator<'_, '_> {
    /// The vector type of the innermost loop, if `expr` (writing `out_dtype`) can be vectorized.
    pub(super) fn vector_type(&mut self, expr: &Expr, out_dtype: DType) -> Option<Type> {
        if !self.simd {
            return None;
        }
        let vector = match out_dtype {
            DType::F64 => types::F64X2,
            DType::F32 => types::F32X4,
            _ => return None,
        };
        (self.varies(expr) && self.vectorizable(expr, out_dtype, false)).then_some(vector)
    }

    /// The vector loop: while `i + unroll * lanes <= end`, computes `unroll` adjacent vectors
    /// (sharing reduction loops, so that a row read in a reduction serves all of them) and stores
    /// them. Leaves the innermost iname's variable at the first element not computed.
    pub(super) fn vector_loop(
        &mut self,
        expr: &Expr,
        vector: Type,
        unroll: usize,
        end: Value,
        out_base: Value,
        accumulate: Option<ReduceOp>,
    ) -> Result<()> {
        let var = *self.inames.last().expect("a vector loop has an innermost axis");
        let step = (vector.lane_count() as usize * unroll) as i64;
        let vector_loop = self.open_stepped_loop(var, end, step);
        let i = self.b.use_var(var);
        let starts: Vec<Value> =
            (0..unroll).map(|u| self.b.ins().iadd_imm_s(i, (u as u32 * vector.lane_count()) as i64)).collect();
        self.store_group(expr, vector, &starts, out_base, accumulate)?;
        self.close_loop(vector_loop);
        Ok(())
    }

    /// Computes `expr` for the vectors of output elements starting at each of `starts` along the
    /// innermost axis and stores them (combined with what the output holds, for `accumulate`).
    pub(super) fn store_group(
        &mut self,
        expr: &Expr,
        vector: Type,
        starts: &[Value],
        out_base: Value,
        accumulate: Option<ReduceOp>,
    ) -> Result<()> {
        let values = self.emit_group(expr, vector, starts);
        self.inner_override = None;
        for (value, &start) in values?.into_iter().zip(starts) {
            let offset = self.output_offset_split(Some(start));
            let (addr, bytes) = self.split_address(out_base, offset, vector.lane_type().bytes() as i64);
            let value = match accumulate {
                Some(op) => {
                    let current = self.b.ins().load(vector, vector_flags(), addr, bytes);
                    self.vector_combine(op, current, value)?
                }
                None => value,
            };
            self.b.ins().store(vector_flags(), value, addr, bytes);
        }
        Ok(())
    }

    /// Whether `e` mentions the innermost iname (outside `zero(...)`).
    fn varies(&mut self, e: &Expr) -> bool {
        let key = e as *const Expr;
        if let Some(&v) = self.varies_memo.get(&key) {
            return v;
        }
        let v = match e {
            Expr::Var(n) => self.is_vector_iname(n),
            Expr::Call(Func::Zero, _) | Expr::Const(_) => false,
            _ => e.children().into_iter().any(|c| self.varies(c)),
        };
        self.varies_memo.insert(key, v);
        v
    }

    /// Whether every subscript in `e` is proved in bounds (so `e` may be evaluated speculatively).
    fn all_reads_proved(&mut self, e: &Expr) -> bool {
        let mut ok = true;
        self.with_reduction_scopes(e, &mut |t, e| {
            if let Expr::Subscript(name, idx) = e {
                let dims = t.views[&t.names[&**name]].dims.clone();
                ok &= idx.iter().zip(&dims).all(|(i, d)| t.ranges.proves_in_bounds(i, d));
            }
        });
        ok
    }

    /// Calls `f` on every node of `e` with the bounds of enclosing reductions in `self.ranges`.
    fn with_reduction_scopes(&mut self, e: &Expr, f: &mut dyn FnMut(&mut Self, &Expr)) {
        f(self, e);
        if let Expr::Reduce(r) = e {
            for b in &r.inames {
                self.ranges.reductions.insert(b.iname.clone(), (b.lower.clone(), b.upper.clone()));
            }
            self.with_reduction_scopes(&r.body, f);
            for b in &r.inames {
                self.ranges.reductions.remove(&b.iname);
            }
        } else {
            for c in e.children() {
                self.with_reduction_scopes(c, f);
            }
        }
    }

    /// Whether `e`, of lane dtype `lane` (or bool, as a mask), can be computed in vector mode;
    /// `conditional` inside the branches of an `if`.
    fn vectorizable(&mut self, e: &Expr, lane: DType, conditional: bool) -> bool {
        if !self.varies(e) {
            return !conditional || self.all_reads_proved(e);
        }
        let Ok(dtype) = self.dtype_of(e) else { return false };
        let is_lane = dtype == lane;
        let operand_is_lane = |t: &Self, a: &Expr| t.dtype_of(a).is_ok_and(|d| d == lane);
        match e {
            // The iname as a value (`arange`) and anything integer stay scalar.
            Expr::Var(_) | Expr::Const(_) => false,
            Expr::Subscript(..) => is_lane && (!conditional || self.all_reads_proved(e)),
            Expr::Unary(UnaryOp::Neg, a) => is_lane && self.vectorizable(a, lane, conditional),
            Expr::Unary(_, a) => dtype == DType::Bool && self.vectorizable(a, lane, conditional),
            Expr::Binary(op, a, b) => {
                let ok_op = if is_lane {
                    matches!(
                        op,
                        BinaryOp::Add
                            | BinaryOp::Sub
                            | BinaryOp::Mul
                            | BinaryOp::Div
                            | BinaryOp::FloorDiv
                            | BinaryOp::Rem
                            | BinaryOp::Pow
                    )
                } else {
                    dtype == DType::Bool
                        && matches!(op, BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::BitAnd | BinaryOp::BitOr)
                };
                ok_op && self.vectorizable(a, lane, conditional) && self.vectorizable(b, lane, conditional)
            }
            Expr::Compare(_, a, b) => {
                operand_is_lane(self, a)
                    && self.vectorizable(a, lane, conditional)
                    && self.vectorizable(b, lane, conditional)
            }
            Expr::If(c, a, b) => {
                is_lane
                    && self.vectorizable(c, lane, conditional)
                    && self.vectorizable(a, lane, true)
                    && self.vectorizable(b, lane, true)
            }
            Expr::Cast(_, a) => is_lane && operand_is_lane(self, a) && self.vectorizable(a, lane, conditional),
            Expr::Call(f, args) => {
                let ok_func = match f {
                    Func::IsNan => dtype == DType::Bool,
                    Func::Zero => true,
                    _ => is_lane && helpers_or_instruction(*f),
                };
                ok_func
                    && args.iter().all(|a| operand_is_lane(self, a))
                    && args.iter().all(|a| self.vectorizable(a, lane, conditional))
            }
            Expr::Reduce(r) => {
                // Single-precision sums accumulate in double precision: scalar code.
                let widened = matches!(summation(r.op, dtype), Summation::Widened(_));
                // A start value is a complex product's, which has no lanes: scalar code too.
                if !is_lane
                    || widened
                    || r.start.is_some()
                    || !matches!(r.op, ReduceOp::Sum | ReduceOp::Product | ReduceOp::Max | ReduceOp::Min)
                {
                    return false;
                }
                for b in &r.inames {
                    self.ranges.reductions.insert(b.iname.clone(), (b.lower.clone(), b.upper.clone()));
                }
                let ok = self.vectorizable(&r.body, lane, conditional);
                for b in &r.inames {
                    self.ranges.reductions.remove(&b.iname);
                }
                ok
            }
        }
    }

    /// `e` in vector mode for each vector starting at one of `starts`: vectors of `vector`'s type,
    /// or masks (integer lanes of the same width) for bool expressions.
    fn emit_group(&mut self, e: &Expr, vector: Type, starts: &[Value]) -> Result<Vec<Value>> {
        let mask = vector.as_int();
        if !self.varies(e) {
            // Uniform: computed once as a scalar, then splatted.
            let (v, dtype) = self.emit(e)?;
            let splat = if dtype == DType::Bool {
                let wide = self.b.ins().uextend(mask.lane_type(), v.real());
                let all_ones = self.b.ins().ineg(wide);
                self.b.ins().splat(mask, all_ones)
            } else {
                self.splat(vector, v.real())
            };
            return Ok(vec![splat; starts.len()]);
        }
        let lane = if vector.lane_type() == types::F64 { DType::F64 } else { DType::F32 };
        let each = |t: &mut Self, a: &Expr| t.emit_group(a, vector, starts);
        Ok(match e {
            Expr::Subscript(name, idx) => {
                let mut out = Vec::with_capacity(starts.len());
                for &start in starts {
                    self.inner_override = Some(start);
                    out.push(self.vector_read(name, idx, vector)?);
                }
                out
            }
            Expr::Unary(op, a) => {
                let xs = each(self, a)?;
                xs.into_iter()
                    .map(|x| if *op == UnaryOp::Neg { self.b.ins().fneg(x) } else { self.b.ins().bnot(x) })
                    .collect()
            }
            Expr::Binary(op, a, b) => {
                let (xs, ys) = (each(self, a)?, each(self, b)?);
                let mut out = Vec::with_capacity(xs.len());
                for (x, y) in xs.into_iter().zip(ys) {
                    let ins = self.b.ins();
                    out.push(match op {
                        BinaryOp::Add => ins.fadd(x, y),
                        BinaryOp::Sub => ins.fsub(x, y),
                        BinaryOp::Mul => ins.fmul(x, y),
                        BinaryOp::Div => ins.fdiv(x, y),
                        BinaryOp::LogicalAnd | BinaryOp::BitAnd => ins.band(x, y),
                        BinaryOp::LogicalOr | BinaryOp::BitOr => ins.bor(x, y),
                        BinaryOp::FloorDiv => self.per_lane(helpers::floor_div_for(lane), lane, vector, &[x, y]),
                        BinaryOp::Rem => self.per_lane(helpers::remainder_for(lane), lane, vector, &[x, y]),
                        BinaryOp::Pow => self.per_lane(helpers::pow as *const () as usize, lane, vector, &[x, y]),
                        other => return Err(bug(format!("vector {other:?}"))),
                    });
                }
                out
            }
            Expr::Compare(op, a, b) => {
                let (xs, ys) = (each(self, a)?, each(self, b)?);
                xs.into_iter().zip(ys).map(|(x, y)| self.b.ins().fcmp(float_cc(*op), x, y)).collect()
            }
            Expr::If(c, a, b) => {
                let (cs, xs, ys) = (each(self, c)?, each(self, a)?, each(self, b)?);
                let mut out = Vec::with_capacity(cs.len());
                for ((c, x), y) in cs.into_iter().zip(xs).zip(ys) {
                    let c = self.b.ins().bitcast(vector, MemFlagsData::new(), c);
                    out.push(self.b.ins().bitselect(c, x, y));
                }
                out
            }
            Expr::Cast(_, a) => each(self, a)?,
            Expr::Call(f, args) => {
                let mut groups = Vec::with_capacity(args.len());
                for a in args.iter() {
                    groups.push(each(self, a)?);
                }
                let mut out = Vec::with_capacity(starts.len());
                for k in 0..starts.len() {
                    let xs: Vec<Value> = groups.iter().map(|g| g[k]).collect();
                    out.push(self.vector_call(*f, lane, vector, &xs)?);
                }
                out
            }
            Expr::Reduce(r) => {
                // Each vector lane is one output element, combining its terms as the scalar code
                // does (one count for all of them: they run in lockstep). Blocked sums keep their
                // `SUM_LANES` lanes in a stack slot, one vector per group of `starts`, and their
                // block totals in the canonical tree, an entry holding a vector per group.
                let blocked = matches!(summation(r.op, lane), Summation::Blocked);
                if let Some(terms) = self.short_sum_terms(r).filter(|_| blocked) {
                    let zero = self.b.ins().f64const(0.0);
                    let zeros = self.b.ins().splat(vector, zero);
                    return self.short_sum(
                        r,
                        &terms,
                        &mut |t| each(t, &r.body),
                        &mut |t, a, b| a.into_iter().zip(b).map(|(x, y)| t.b.ins().fadd(x, y)).collect(),
                        vec![zeros; starts.len()],
                    );
                }
                let neutral = self.constant(r.op.neutral(lane)).real();
                let neutral = self.b.ins().splat(vector, neutral);
                let group_bytes = vector.bytes() as i64;
                let lane_bytes = group_bytes * starts.len() as i64;
                let groups = starts.len();
                let clear = |t: &mut Self, lanes| {
                    t.clear_lanes(lanes, lane_bytes, &mut |t, addr| {
                        for u in 0..groups {
                            t.b.ins().store(vector_flags(), neutral, addr, (u as i64 * group_bytes) as i32);
                        }
                    })
                };
                if !blocked {
                    let accs: Vec<_> = starts
                        .iter()
                        .map(|_| {
                            let v = self.var(vector);
                            self.b.def_var(v, neutral);
                            v
                        })
                        .collect();
                    let loops = self.open_reduction_loops(r)?;
                    let xs = each(self, &r.body)?;
                    for (&acc, x) in accs.iter().zip(xs) {
                        let current = self.b.use_var(acc);
                        let next = self.vector_combine(r.op, current, x)?;
                        self.b.def_var(acc, next);
                    }
                    self.close_reduction_loops(r, loops);
                    return Ok(accs.iter().map(|&acc| self.b.use_var(acc)).collect());
                }
                let lanes = self.lane_slot(lane_bytes);
                let tree = self.new_tree(lane_bytes);
                let count = self.var(types::I64);
                let none = self.b.ins().iconst(types::I64, 0);
                self.b.def_var(count, none);
                let write_block = &mut |t: &mut Self, entry: Value| {
                    for u in 0..groups {
                        let offset = (u as i64 * group_bytes) as i32;
                        let block = t.lane_tree(
                            lanes,
                            lane_bytes,
                            &mut |t, addr| t.b.ins().load(vector, vector_flags(), addr, offset),
                            &mut |t, a, b| t.b.ins().fadd(a, b),
                        );
                        t.b.ins().store(vector_flags(), block, entry, offset);
                    }
                };
                let merge = &mut |t: &mut Self, left: Value, right: Value| {
                    for u in 0..groups {
                        let offset = (u as i64 * group_bytes) as i32;
                        let a = t.b.ins().load(vector, vector_flags(), left, offset);
                        let b = t.b.ins().load(vector, vector_flags(), right, offset);
                        let sum = t.b.ins().fadd(a, b);
                        t.b.ins().store(vector_flags(), sum, left, offset);
                    }
                };
                clear(self, lanes);
                let loops = self.open_reduction_loops(r)?;
                let xs = each(self, &r.body)?;
                let lane_at = self.lane_address(lanes, lane_bytes, count);
                for (u, x) in xs.into_iter().enumerate() {
                    let offset = (u as i64 * group_bytes) as i32;
                    let current = self.b.ins().load(vector, vector_flags(), lane_at, offset);
                    let next = self.b.ins().fadd(current, x);
                    self.b.ins().store(vector_flags(), next, lane_at, offset);
                }
                self.count_and_flush(count, &mut |t| {
                    t.tree_push(&tree, write_block, merge);
                    clear(t, lanes);
                });
                self.close_reduction_loops(r, loops);
                self.tree_push_last(&tree, count, write_block, merge);
                let total = self.tree_finish(&tree, merge);
                (0..groups)
                    .map(|u| self.b.ins().load(vector, vector_flags(), total, (u as i64 * group_bytes) as i32))
                    .collect()
            }
            Expr::Var(_) | Expr::Const(_) => return Err(bug("a varying scalar in vector mode")),
        })
    }

    fn vector_combine(&mut self, op: ReduceOp, acc: Value, x: Value) -> Result<Value> {
        let ins = self.b.ins();
        Ok(match op {
            ReduceOp::Sum => ins.fadd(acc, x),
            ReduceOp::Product => ins.fmul(acc, x),
            ReduceOp::Max => return Ok(self.vector_max_min(true, acc, x)),
            ReduceOp::Min => return Ok(self.vector_max_min(false, acc, x)),
            other => return Err(bug(format!("vector reduction {other:?}"))),
        })
    }

    /// Lane by lane what `Translator::max_min` computes: `a` where it is NaN or strictly beyond
    /// `b`, else `b`.
    fn vector_max_min(&mut self, max: bool, a: Value, b: Value) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let a_nan = self.b.ins().fcmp(float_cc(CompareOp::Ne), a, a);
        let beyond = self.b.ins().fcmp(float_cc(if max { CompareOp::Gt } else { CompareOp::Lt }), a, b);
        let keep_a = self.b.ins().bor(a_nan, beyond);
        let keep_a = self.b.ins().bitcast(ty, MemFlagsData::new(), keep_a);
        self.b.ins().bitselect(keep_a, a, b)
    }

    /// Whether every read in `body` that depends on the innermost iname is a whole vector of a
    /// row (and there is one): then [`Translator::reduction_outside`] streams rows.
    pub(super) fn reads_rows(&mut self, body: &Expr) -> bool {
        let mut rows = 0;
        let mut gathers = 0;
        let mut stack = vec![body];
        while let Some(e) = stack.pop() {
            if let Expr::Subscript(_, idx) = e
                && self.varies(e)
            {
                let (last, outer) = idx.split_last().expect("a varying read has an index");
                if self.is_iname_plus_uniform(last) && !outer.iter().any(|i| self.varies(i)) {
                    rows += 1;
                } else {
                    gathers += 1;
                }
            }
            stack.extend(e.children());
        }
        rows > 0 && gathers == 0
    }

    /// Whether a float64 sum can be vectorized along its terms ([`Self::blocked_sum_along_terms`]):
    /// its body reads adjacent elements for adjacent values of its last iname (and nothing
    /// else that varies with it), holds no reduction, and every part of it vectorizes.
    pub(super) fn sums_along_terms(&mut self, r: &Reduce, dtype: DType) -> bool {
        if !self.simd || dtype != DType::F64 || r.op != ReduceOp::Sum {
            return false;
        }
        let mut nested = false;
        r.body.walk(&mut |e| nested |= matches!(e, Expr::Reduce(_)));
        if nested {
            return false;
        }
        let last = r.inames.last().expect("a reduction has an iname").iname.clone();
        let outer = self.vector_iname.clone();
        self.set_vector_iname(Some(last));
        for b in &r.inames {
            self.ranges.reductions.insert(b.iname.clone(), (b.lower.clone(), b.upper.clone()));
        }
        let ok = self.varies(&r.body) && self.vectorizable(&r.body, DType::F64, false) && self.reads_rows(&r.body);
        for b in &r.inames {
            self.ranges.reductions.remove(&b.iname);
        }
        self.set_vector_iname(outer);
        ok
    }

    /// Changes the iname vector lanes run along (and forgets what varied along the last one).
    fn set_vector_iname(&mut self, iname: Option<Arc<str>>) {
        self.vector_iname = iname;
        self.varies_memo.clear();
    }

    /// A float64 sum with its terms in vector registers: when the last iname's range has a
    /// multiple of `SUM_LANES` terms (checked when the kernel runs), each group of `SUM_LANES`
    /// adjacent terms is four 2-lane vector loads, added into four vector accumulators that hold
    /// lanes `(0, 1)`, `(2, 3)`, `(4, 5)`, `(6, 7)` of the block: exactly the scheme of
    /// `pytato_runtime::math` (every row starts at lane 0), with no dependency between adjacent
    /// terms. Other ranges take [`Translator::blocked_sum`].
    pub(super) fn blocked_sum_along_terms(&mut self, r: &Reduce) -> Result<Val> {
        let (dtype, vector) = (DType::F64, types::F64X2);
        let last = r.inames.last().expect("a reduction has an iname");
        let (lower, upper) = (self.dim_value(&last.lower)?, self.dim_value(&last.upper)?);
        let terms = self.b.ins().isub(upper, lower);
        let group = self.b.ins().band_imm_s(terms, SUM_LANES as i64 - 1);
        let result = self.var(types::F64);
        let (fast, slow, merge_block) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().brif(group, slow, &[], fast, &[]);

        self.b.switch_to_block(slow);
        let value = self.blocked_sum(r, dtype, dtype)?.real();
        self.b.def_var(result, value);
        self.b.ins().jump(merge_block, &[]);

        self.b.switch_to_block(fast);
        let zero = self.b.ins().f64const(0.0);
        let zeros = self.b.ins().splat(vector, zero);
        let tree = self.new_tree(8);
        let accs: Vec<_> = (0..SUM_LANES / 2)
            .map(|_| {
                let v = self.var(vector);
                self.b.def_var(v, zeros);
                v
            })
            .collect();
        let count = self.var(types::I64);
        let none = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(count, none);
        // Every iname's loop, the last one stepping a whole group at a time.
        let loops = self.open_reduction_loops_stepped(r, SUM_LANES as i64)?;
        // This sum may be a uniform part of an expression vectorized along the output: that
        // vector mode resumes after it.
        let outer = (self.vector_iname.clone(), self.inner_override);
        self.set_vector_iname(Some(last.iname.clone()));
        let i = self.b.use_var(*self.reduction_vars.get(&last.iname).expect("just bound"));
        let starts: Vec<Value> = (0..accs.len()).map(|u| self.b.ins().iadd_imm_s(i, 2 * u as i64)).collect();
        let xs = self.emit_group(&r.body, vector, &starts);
        self.set_vector_iname(outer.0);
        self.inner_override = outer.1;
        for (&acc, x) in accs.iter().zip(xs?) {
            let current = self.b.use_var(acc);
            let next = self.b.ins().fadd(current, x);
            self.b.def_var(acc, next);
        }
        let block = |t: &mut Self| {
            // `lane_tree` on vectors of lanes (2u, 2u + 1): pairs first, then the two halves.
            let v: Vec<Value> = accs.iter().map(|&a| t.b.use_var(a)).collect();
            let (a, b) = (t.b.ins().fadd(v[0], v[1]), t.b.ins().fadd(v[2], v[3]));
            let both = t.b.ins().fadd(a, b);
            let (even, odd) = (t.b.ins().extractlane(both, 0), t.b.ins().extractlane(both, 1));
            t.b.ins().fadd(even, odd)
        };
        let write_block = &mut |t: &mut Self, entry: Value| {
            let block = block(t);
            t.b.ins().store(TRUSTED, block, entry, 0);
        };
        let merge = &mut |t: &mut Self, left: Value, right: Value| {
            let a = t.b.ins().load(types::F64, TRUSTED, left, 0);
            let b = t.b.ins().load(types::F64, TRUSTED, right, 0);
            let sum = t.b.ins().fadd(a, b);
            t.b.ins().store(TRUSTED, sum, left, 0);
        };
        self.count_and_flush_by(count, SUM_LANES as i64, &mut |t| {
            t.tree_push(&tree, write_block, merge);
            for &acc in &accs {
                t.b.def_var(acc, zeros);
            }
        });
        self.close_reduction_loops(r, loops);
        let sum = self.tree_total(&tree, count, dtype, &mut |t| Val::Real(block(t)), write_block, merge).real();
        self.b.def_var(result, sum);
        self.b.ins().jump(merge_block, &[]);

        self.b.switch_to_block(merge_block);
        Ok(Val::Real(self.b.use_var(result)))
    }

    /// A kernel that is one reduction, with the reduction loops outside the innermost output loop:
    /// the output row starts at the neutral element and each step of the reduction combines a
    /// whole row into it (`out[i, :] = max(out[i, :], a[j, i, :])`). Each element is combined in
    /// the same order as by the scalar loop, so the result is the same bits; what changes is that
    /// memory is read row by row. Blocked sums take [`Self::blocked_sum_outside`].
    pub(super) fn reduction_outside(
        &mut self,
        r: &Reduce,
        vector: Type,
        start: Value,
        end: Value,
        out_base: Value,
        out_dtype: DType,
    ) -> Result<()> {
        if matches!(summation(r.op, out_dtype), Summation::Blocked) {
            return self.blocked_sum_outside(r, vector, start, end, out_base, out_dtype);
        }
        let neutral = self.constant(r.op.neutral(out_dtype));
        self.fill_row(start, end, out_base, out_dtype, neutral);
        let loops = self.open_reduction_loops(r)?;
        self.accumulate_row(r, vector, start, end, out_base, out_dtype)?;
        self.close_reduction_loops(r, loops);
        Ok(())
    }

    /// [`Self::reduction_outside`] for a float64 sum, which follows the blocked summation scheme:
    /// the row is cut into strips (see [`STRIP_SCRATCH_BYTES`]); for each strip, the `SUM_LANES`
    /// lanes of the blocks and the canonical tree's pending block totals live in the scratch (a
    /// row of the strip per lane and per entry), and every `SUM_BLOCK` steps the lanes' totals
    /// go into the tree. Per element: the scalar code's operations in its order
    /// (`sum(_r, a[_r, i])` reads rows of `a` instead of walking down its columns).
    fn blocked_sum_outside(
        &mut self,
        r: &Reduce,
        vector: Type,
        start: Value,
        end: Value,
        out_base: Value,
        out_dtype: DType,
    ) -> Result<()> {
        let base = self.scratch.ok_or_else(|| bug("a blocked sum outside the entry of a function"))?;
        self.uses_scratch = true;
        // The scratch's rows: the lanes and `bits(blocks) + 1` tree entries (a tree of `b` blocks
        // writes entries up to `popcount(b - 1)`), with `blocks` bounded by `terms / SUM_BLOCK + 1`.
        let terms = self.reduction_terms(r)?;
        let blocks = self.b.ins().ushr_imm_s(terms, SUM_BLOCK.trailing_zeros() as i64);
        let blocks = self.b.ins().iadd_imm_s(blocks, 1);
        let leading = self.b.ins().clz(blocks);
        let most = self.b.ins().iconst(types::I64, 65 + SUM_LANES as i64);
        let rows = self.b.ins().isub(most, leading);
        let budget = self.b.ins().iconst(types::I64, STRIP_SCRATCH_BYTES);
        let row_bytes = self.b.ins().udiv(budget, rows);
        let row_bytes = self.b.ins().band_imm_s(row_bytes, !63);
        let scratch = StripScratch { base, row_bytes };
        let strip_bytes = self.b.ins().iadd_imm_s(row_bytes, -ROW_PADDING);
        let itemsize = out_dtype.itemsize() as i64;
        let strip = self.b.ins().ushr_imm_s(strip_bytes, itemsize.trailing_zeros() as i64);

        // Whole strips while one fits, then the shorter last one.
        let strip_start = self.var(types::I64);
        self.b.def_var(strip_start, start);
        let (header, body, last, done) =
            (self.b.create_block(), self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let lo = self.b.use_var(strip_start);
        let hi = self.b.ins().iadd(lo, strip);
        let past_end = self.b.ins().icmp(IntCC::SignedGreaterThan, hi, end);
        self.branch_out_of_loop(past_end, last, body);
        self.b.switch_to_block(body);
        self.strip(r, vector, (lo, hi), scratch, out_base, out_dtype)?;
        self.b.def_var(strip_start, hi);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(last);
        let short = self.b.ins().icmp(IntCC::SignedLessThan, lo, end);
        let rest = self.b.create_block();
        self.b.ins().brif(short, rest, &[], done, &[]);
        self.b.switch_to_block(rest);
        self.strip(r, vector, (lo, end), scratch, out_base, out_dtype)?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// The number of terms of `r`: the product of its inames' lengths (an empty range counts 0).
    fn reduction_terms(&mut self, r: &Reduce) -> Result<Value> {
        let mut terms = self.b.ins().iconst(types::I64, 1);
        for rb in &r.inames {
            let (lower, upper) = (self.dim_value(&rb.lower)?, self.dim_value(&rb.upper)?);
            let length = self.b.ins().isub(upper, lower);
            let zero = self.b.ins().iconst(types::I64, 0);
            let length = self.b.ins().smax(length, zero);
            terms = self.b.ins().imul(terms, length);
        }
        Ok(terms)
    }

    /// One strip of [`Self::blocked_sum_outside`], the output row's `[lo, hi)`, its lanes and
    /// tree entries in `scratch`.
    fn strip(
        &mut self,
        r: &Reduce,
        vector: Type,
        (lo, hi): (Value, Value),
        scratch: StripScratch,
        out_base: Value,
        out_dtype: DType,
    ) -> Result<()> {
        let var = *self.inames.last().expect("an innermost axis");
        let itemsize = out_dtype.itemsize() as i64;
        // The rows of the strip's lanes and tree entries, each addressed like the output:
        // element `i` of scratch row `k` is at `scratch + k * row_bytes + output_offset(i) * itemsize`.
        self.b.def_var(var, lo);
        let first = self.output_offset(None);
        let first_bytes = self.b.ins().imul_imm_s(first, itemsize);
        let lanes = self.b.ins().isub(scratch.base, first_bytes);
        let lane_offsets: [Value; SUM_LANES] =
            std::array::from_fn(|k| self.b.ins().imul_imm_s(scratch.row_bytes, k as i64));
        let tree_offset = self.b.ins().imul_imm_s(scratch.row_bytes, SUM_LANES as i64);
        let tree_at = self.b.ins().iadd(lanes, tree_offset);
        let tree = self.tree_at(tree_at, scratch.row_bytes);
        let zero = self.zero(out_dtype);
        for offset in lane_offsets {
            let lane = self.b.ins().iadd(lanes, offset);
            self.fill_row(lo, hi, lane, out_dtype, zero);
        }
        let count = self.var(types::I64);
        let none = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(count, none);
        let write_block =
            &mut |t: &mut Self, entry: Value| t.flush_lanes(lo, hi, (lanes, lane_offsets), entry, out_dtype, zero);
        let merge = &mut |t: &mut Self, left: Value, right: Value| t.add_rows(lo, hi, left, right, out_dtype);
        // Term `n` goes into lane `n % SUM_LANES`: the lane's row is carried from term to term
        // (the next row, after the last the first again; a block holds a multiple of the
        // lanes). Computed from `n` instead, its address was computed again for every vector of
        // the loop over the row: Cranelift rematerializes the masks it is made of in the loop.
        let lane_row = self.var(types::I64);
        self.b.def_var(lane_row, lanes);
        let last_lane = self.b.ins().iadd(lanes, lane_offsets[SUM_LANES - 1]);
        let loops = self.open_reduction_loops(r)?;
        let lane = self.b.use_var(lane_row);
        self.accumulate_row(r, vector, lo, hi, lane, out_dtype)?;
        let following = self.b.ins().iadd(lane, scratch.row_bytes);
        let wraps = self.b.ins().icmp(IntCC::Equal, lane, last_lane);
        let next = self.b.ins().select(wraps, lanes, following);
        self.b.def_var(lane_row, next);
        self.count_and_flush(count, &mut |t| t.tree_push(&tree, write_block, merge));
        self.close_reduction_loops(r, loops);
        self.tree_push_last(&tree, count, write_block, merge);
        let total = self.tree_finish(&tree, merge);
        self.copy_row(lo, hi, total, out_base, out_dtype);
        Ok(())
    }

    /// A loop over the output row's `[lo, hi)` (the innermost axis); `body` emits one element's
    /// work given its offset as the output is addressed.
    fn for_each_in_row(&mut self, lo: Value, hi: Value, body: impl FnOnce(&mut Self, Value)) {
        let var = *self.inames.last().expect("an innermost axis");
        let row = self.open_loop(var, lo, hi);
        let offset = self.output_offset(None);
        body(self, offset);
        self.close_loop(row);
    }

    /// `entry[i] = lane_tree(lanes[..][i]); lanes[..][i] = 0` over the row's `[lo, hi)`; lane `k`
    /// at `lanes + offsets[k]`.
    fn flush_lanes(
        &mut self,
        lo: Value,
        hi: Value,
        (lanes, offsets): (Value, [Value; SUM_LANES]),
        entry: Value,
        dtype: DType,
        zero: Val,
    ) {
        self.for_each_in_row(lo, hi, |t, offset| {
            let at = t.address(lanes, offset, dtype);
            let addresses = offsets.map(|o| t.b.ins().iadd(at, o));
            let values = addresses.map(|addr| t.load(addr, dtype));
            let block = lane_tree(values, &mut |a, b| Ok::<_, ()>(t.combine(ReduceOp::Sum, a, b, dtype)))
                .unwrap_or_else(|()| unreachable!("infallible"));
            let entry_at = t.address(entry, offset, dtype);
            t.store(block, entry_at, dtype);
            for addr in addresses {
                t.store(zero, addr, dtype);
            }
        });
    }

    /// `left[i] = left[i] + right[i]` over the row's `[lo, hi)`, both addressed like the output.
    fn add_rows(&mut self, lo: Value, hi: Value, left: Value, right: Value, dtype: DType) {
        self.for_each_in_row(lo, hi, |t, offset| {
            let (left_at, right_at) = (t.address(left, offset, dtype), t.address(right, offset, dtype));
            let (a, b) = (t.load(left_at, dtype), t.load(right_at, dtype));
            let sum = t.combine(ReduceOp::Sum, a, b, dtype);
            t.store(sum, left_at, dtype);
        });
    }

    /// `to[i] = from[i]` over the output row's `[lo, hi)`, both addressed like the output.
    fn copy_row(&mut self, lo: Value, hi: Value, from: Value, to: Value, dtype: DType) {
        self.for_each_in_row(lo, hi, |t, offset| {
            let (from_at, to_at) = (t.address(from, offset, dtype), t.address(to, offset, dtype));
            let value = t.load(from_at, dtype);
            t.store(value, to_at, dtype);
        });
    }

    /// `row[i] = value` over the output row's `[lo, hi)`, `row` addressed like the output.
    fn fill_row(&mut self, lo: Value, hi: Value, row: Value, dtype: DType, value: Val) {
        self.for_each_in_row(lo, hi, |t, offset| {
            let addr = t.address(row, offset, dtype);
            t.store(value, addr, dtype);
        });
    }

    /// One step of a reduction outside the row: `row[i] = row[i] op body` over `[lo, hi)`, four
    /// vectors at a time, then one, then element by element.
    fn accumulate_row(
        &mut self,
        r: &Reduce,
        vector: Type,
        lo: Value,
        hi: Value,
        row: Value,
        dtype: DType,
    ) -> Result<()> {
        let var = *self.inames.last().expect("an innermost axis");
        self.b.def_var(var, lo);
        self.vector_loop(&r.body, vector, 4, hi, row, Some(r.op))?;
        self.vector_loop(&r.body, vector, 1, hi, row, Some(r.op))?;
        let rest = self.b.use_var(var);
        let inner = self.open_loop(var, rest, hi);
        let (x, _) = self.emit(&r.body)?;
        let offset = self.output_offset(None);
        let addr = self.address(row, offset, dtype);
        let current = self.load(addr, dtype);
        let next = self.combine(r.op, current, x, dtype);
        self.store(next, addr, dtype);
        self.close_loop(inner);
        Ok(())
    }

    fn vector_call(&mut self, f: Func, lane: DType, vector: Type, xs: &[Value]) -> Result<Value> {
        let ins = self.b.ins();
        Ok(match f {
            Func::Abs => ins.fabs(xs[0]),
            Func::Sqrt => ins.sqrt(xs[0]),
            Func::Floor => ins.floor(xs[0]),
            Func::Ceil => ins.ceil(xs[0]),
            Func::Rint => ins.nearest(xs[0]),
            Func::Maximum => return Ok(self.vector_max_min(true, xs[0], xs[1])),
            Func::Minimum => return Ok(self.vector_max_min(false, xs[0], xs[1])),
            Func::IsNan => ins.fcmp(float_cc(CompareOp::Ne), xs[0], xs[0]),
            Func::Real | Func::Conj => xs[0],
            Func::Imag | Func::Zero => {
                let zero = self.zero(lane).real();
                self.b.ins().splat(vector, zero)
            }
            Func::Arctan2 => self.per_lane(helpers::atan2 as *const () as usize, lane, vector, xs),
            f if super::trig::handles(f, lane) => self.sin_cos_f64(f, xs[0], vector),
            other => {
                let address =
                    helpers::real_unary(other).ok_or_else(|| bug(format!("no helper for {}", other.name())))?;
                self.per_lane(address, lane, vector, xs)
            }
        })
    }

    /// A read in vector mode: one vector load where the lanes are adjacent and proved in bounds,
    /// otherwise one scalar read (checked as in scalar code) per lane.
    fn vector_read(&mut self, name: &str, idx: &[Expr], vector: Type) -> Result<Value> {
        let id = self.names[name];
        let dims = self.views[&id].dims.clone();
        let (last, outer) = idx.split_last().ok_or_else(|| bug("a 0-d read varies"))?;
        let contiguous = self.is_iname_plus_uniform(last)
            && !outer.iter().any(|i| self.varies(i))
            && idx.iter().zip(&dims).all(|(i, d)| self.ranges.proves_in_bounds(i, d));
        if contiguous {
            let (base, strides) = (self.views[&id].base, self.views[&id].strides.clone());
            let mut terms = Vec::with_capacity(idx.len());
            for (i, stride) in idx.iter().zip(strides) {
                let (v, d) = self.emit(i)?;
                terms.push((self.widen_to_i64(v.real(), d), stride));
            }
            // The row's start (every index but the last, which do not change along the loop)
            // as an address of its own, then the position in the row: the start is hoisted out
            // of the loop, one register. Summed with the position first, the whole offset was
            // computed again on every step, from the base and the row reloaded from the stack.
            let itemsize = vector.lane_type().bytes() as i64;
            let (along, outer) = terms.split_last().expect("a vector read has an index");
            let outer = self.linear_offset(outer);
            let (row, row_bytes) = self.split_address(base, outer, itemsize);
            let along = self.linear_offset(std::slice::from_ref(along));
            let (addr, bytes) = self.split_address(row, along, itemsize);
            let (addr, bytes) = match bytes.checked_add(row_bytes) {
                Some(bytes) => (addr, bytes),
                None => (self.b.ins().iadd_imm_s(addr, i64::from(row_bytes)), bytes),
            };
            return Ok(self.b.ins().load(vector, vector_flags(), addr, bytes));
        }
        let first = self.inner_override.expect("vector mode");
        let mut lanes = Vec::with_capacity(vector.lane_count() as usize);
        for lane in 0..vector.lane_count() {
            let i = self.b.ins().iadd_imm_s(first, lane as i64);
            self.inner_override = Some(i);
            let read = self.subscript(name, idx);
            self.inner_override = Some(first);
            lanes.push(read?.0.real());
        }
        Ok(self.vector_of(vector, &lanes))
    }

    /// Whether `name` is the iname vector lanes run along (see `Translator::vector_iname`).
    fn is_vector_iname(&self, name: &Arc<str>) -> bool {
        match &self.vector_iname {
            Some(v) => v == name,
            None => matches!(classify(name), Some(Reserved::Iname(k)) if k + 1 == self.inames.len()),
        }
    }

    /// `iname`, `iname + u`, `u + iname` or `iname - u` for the vector iname and a uniform `u`.
    fn is_iname_plus_uniform(&mut self, e: &Expr) -> bool {
        let is_inner = |t: &Self, e: &Expr| matches!(e, Expr::Var(n) if t.is_vector_iname(n));
        match e {
            Expr::Var(_) => is_inner(self, e),
            Expr::Binary(BinaryOp::Add, a, b) => {
                (is_inner(self, a) && !self.varies(b)) || (is_inner(self, b) && !self.varies(a))
            }
            Expr::Binary(BinaryOp::Sub, a, b) => is_inner(self, a) && !self.varies(b),
            _ => false,
        }
    }

    /// Calls the real helper at `address` once per lane.
    pub(super) fn per_lane(&mut self, address: usize, lane: DType, vector: Type, args: &[Value]) -> Value {
        let mut out = args[0];
        for l in 0..vector.lane_count() as u8 {
            let scalars: Vec<Value> = args.iter().map(|&a| self.b.ins().extractlane(a, l)).collect();
            let r = self.real_helper(address, lane, &scalars);
            out = self.b.ins().insertlane(out, r, l);
        }
        out
    }
}

/// Functions with a vector instruction or a real helper (complex-only ones are excluded by dtype).
fn helpers_or_instruction(f: Func) -> bool {
    !matches!(f, Func::IsNan | Func::Zero) && (helpers::real_unary(f).is_some() || is_vector_instruction(f))
}

fn is_vector_instruction(f: Func) -> bool {
    matches!(
        f,
        Func::Abs
            | Func::Sqrt
            | Func::Floor
            | Func::Ceil
            | Func::Rint
            | Func::Maximum
            | Func::Minimum
            | Func::Real
            | Func::Imag
            | Func::Conj
            | Func::Arctan2
    )
}
