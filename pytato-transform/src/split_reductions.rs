//! Whole-array reductions in parts that threads compute side by side, with the bits of one loop.
//!
//! A CPU backend runs a kernel's output rows on several threads, so a kernel with one output
//! element (`sum(x)`, a norm, `max(x)`) runs on one thread however long its reduction is, and one
//! with a few (the norms of three components) on as many. This pass rewrites each long reduction
//! at the top of a kernel with at most [`MAX_OUTPUT_ELEMENTS`] output elements (not inside an
//! `if`, whose branch must only be evaluated where taken, nor inside another reduction) into
//!
//! - a *parts* kernel: `parts[t, …]`, for `t < full` and each output element, is the reduction
//!   over rows `[first + t*rows, first + (t+1)*rows)` of its first iname (the other inames whole),
//!   which the launch splits across threads like any kernel's rows;
//! - a *rest* kernel (of the output's shape): the reduction over the rows from
//!   `start = first + full*rows` on;
//! - the original kernel, reading a fixed tree of [`MAX_PARTS`] leaves in place of the reduction:
//!   leaf `t` is `parts[t, …]` for `t < full`, then the rest, then the operation's identity.
//!
//! `first` (the first iname's lower bound), `rows`, `full`, `start` and `leaves` (the parts and
//! the rest that hold terms) are size parameters of the program that the backend derives from the
//! others when it runs ([`Split::bind`]). Where splitting does not pay (few terms, one thread) or
//! cannot keep the bits (below), `full` is 0 and the rest kernel computes the whole reduction,
//! which the tree passes through unchanged: one compiled program serves every size.
//!
//! # The same bits as one loop
//!
//! - Float and complex sums follow the canonical summation scheme (`pytato_runtime::math`): blocks
//!   of `SUM_BLOCK` terms in a pairwise tree, in which every aligned run of `2^k` blocks is a
//!   subtree. A part is such a run when it holds `SUM_BLOCK * 2^k` terms, so `rows` times the
//!   terms per row (the product of the other inames' lengths) must be a power of two of at least
//!   `SUM_BLOCK`: where the terms per row are not a power of two, the reduction is not split. The
//!   rest is the tree of the blocks after the last part, the last node of that level, and the
//!   fixed tree over the leaves, padded with `-0.0` (`x + -0.0` is `x` for every `x`, `-0.0` and
//!   NaN included), is the level-by-level tree of the leaves that hold terms. float32 and
//!   complex64 sums are summed in float64 and complex128 (as the scheme says) and rounded once,
//!   after the tree.
//! - Integer sums and products wrap, and maxima, minima, `all` and `any` of every dtype (numpy's
//!   `maximum`: the first NaN wins, and of equal values the last) give the same result however
//!   the terms are grouped, in order: their parts are any runs of rows.
//! - Float and complex products are not split: numpy multiplies in order, and a product that
//!   overflows in one part and underflows in another would be `inf * 0`, NaN.

use std::collections::BTreeSet;
use std::sync::Arc;

use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, Reduce, ReduceOp, ReductionBounds};
use pytato_core::names::{Reserved, classify, fresh_name};
use pytato_core::{DType, Dim, Result, Scalar, Shape};
use pytato_runtime::binding::Bound;
use pytato_runtime::math::{SUM_BLOCK, Summation, summation};

use crate::kernel::{Buffer, BufferId, BufferKind, Kernel, KernelProgram};

/// The most output elements a kernel whose reductions are split may have (its output shape known
/// when compiling): fewer than a 16-core machine's threads, which split larger outputs' rows.
pub const MAX_OUTPUT_ELEMENTS: i64 = 16;

/// The most parts a reduction is split into, and the leaves of the tree that combines them: a
/// few per thread of a 16-core machine, so that threads that finish early take more.
pub const MAX_PARTS: i64 = 64;

/// A split reduction: how its derived size parameters follow from the others.
#[derive(Clone, Debug)]
pub struct Split {
    /// The derived size parameters: `first`, `rows`, `full`, `start`, `leaves` (see the module
    /// docs).
    params: [String; 5],
    /// The first iname's bounds.
    outer: (Dim, Dim),
    /// The other inames' bounds.
    inner: Vec<(Dim, Dim)>,
    /// Whether parts must be subtrees of the summation tree (float and complex sums).
    aligned: bool,
    /// Expression nodes evaluated per term, for all output elements together.
    term_work: u128,
    /// The index of the parts kernel in the program.
    parts_kernel: usize,
}

impl Split {
    /// Sets the derived size parameters in `bound` from the others: the reduction in parts where
    /// its work (terms times nodes per term) reaches `min_work`, whole in the rest kernel
    /// otherwise (pass `u128::MAX` on one thread).
    pub fn bind(&self, bound: &mut Bound<'_>, min_work: u128) -> Result<()> {
        let length = |b: &mut Bound<'_>, (lower, upper): &(Dim, Dim)| -> Result<(i64, i64)> {
            let lower = b.eval(lower)?;
            Ok((lower, (b.eval(upper)? - lower).max(0)))
        };
        let (first, outer) = length(bound, &self.outer)?;
        let mut per_row: i64 = 1;
        for b in &self.inner {
            per_row = per_row.saturating_mul(length(bound, b)?.1);
        }
        let rows = self.rows_per_part(outer, per_row, min_work);
        let full = if rows == 0 { 0 } else { outer / rows };
        let rest = outer - full * rows;
        let leaves = full + i64::from(rest > 0 || full == 0);
        let values = [first, rows.max(1), full, first + full * rows, leaves];
        for (name, value) in self.params.iter().zip(values) {
            bound.sizes.insert(name.clone(), value);
        }
        Ok(())
    }

    /// The index of the kernel computing the parts (in the split program's kernels), which has
    /// parts (rows) only where they pay for several threads.
    pub fn parts_kernel(&self) -> usize {
        self.parts_kernel
    }

    /// Rows of the first iname per part, or 0 where the reduction stays whole.
    fn rows_per_part(&self, outer: i64, per_row: i64, min_work: u128) -> i64 {
        let terms = outer as i128 * per_row as i128;
        let work = (terms.max(0) as u128).saturating_mul(self.term_work);
        if work < min_work || outer < 2 || per_row == 0 {
            return 0;
        }
        if !self.aligned {
            return outer / MAX_PARTS + i64::from(outer % MAX_PARTS != 0);
        }
        // A part of `2^k` blocks: at least one block, at least one row, and few enough parts.
        if !(per_row as u64).is_power_of_two() {
            return 0;
        }
        let wanted = (terms as u128).div_ceil(MAX_PARTS as u128).max(SUM_BLOCK as u128).max(per_row as u128);
        (wanted.next_power_of_two() / per_row as u128).min(outer as u128) as i64
    }
}

/// Splits the long top-level reductions of every kernel with at most [`MAX_OUTPUT_ELEMENTS`]
/// output elements (see the module docs). Reductions whose lengths are known and whose work is
/// below `min_work` stay as they are. (A dot product, a matrix product with one output element,
/// is split too: its GEMM would run on one thread.) Returns the program and its splits, whose
/// [`Split::bind`] the backend calls before each run.
pub fn split_reductions(mut program: KernelProgram, min_work: u128) -> (KernelProgram, Vec<Split>) {
    let mut taken: BTreeSet<String> = program.buffers.iter().map(|b| b.name.to_string()).collect();
    taken.extend(program.size_params.iter().cloned());
    let mut splits = Vec::new();
    for kernel in std::mem::take(&mut program.kernels) {
        let elements = match program.buffers[kernel.output.0].shape.size() {
            Some(e) if (1..=MAX_OUTPUT_ELEMENTS).contains(&e) => e as u128,
            _ => {
                program.kernels.push(kernel);
                continue;
            }
        };
        let mut splitter = Splitter {
            program: &mut program,
            kernel: &kernel,
            elements,
            taken: &mut taken,
            splits: &mut splits,
            min_work,
        };
        let expr = splitter.top_level(&kernel.expr);
        program.kernels.push(Kernel { output: kernel.output, expr });
    }
    (program, splits)
}

/// Rewrites one kernel's top-level reductions, adding the kernels they need.
struct Splitter<'a> {
    program: &'a mut KernelProgram,
    /// The kernel whose reductions are split.
    kernel: &'a Kernel,
    /// Its output elements.
    elements: u128,
    taken: &'a mut BTreeSet<String>,
    splits: &'a mut Vec<Split>,
    min_work: u128,
}

impl Splitter<'_> {
    /// `e` with each reduction that is not inside an `if` or another reduction split (nor in the
    /// right operand of a logical `and`/`or`, which the interpreter evaluates only as `if` would).
    fn top_level(&mut self, e: &Expr) -> Expr {
        match e {
            Expr::If(..) => e.clone(),
            Expr::Binary(op @ (BinaryOp::LogicalAnd | BinaryOp::LogicalOr), a, b) => {
                Expr::Binary(*op, Arc::new(self.top_level(a)), b.clone())
            }
            Expr::Reduce(r) => self.split(e, r).unwrap_or_else(|| e.clone()),
            Expr::Const(_) | Expr::Var(_) => e.clone(),
            Expr::Subscript(n, idx) => Expr::Subscript(n.clone(), idx.iter().map(|x| self.top_level(x)).collect()),
            Expr::Unary(op, a) => Expr::Unary(*op, Arc::new(self.top_level(a))),
            Expr::Binary(op, a, b) => Expr::Binary(*op, Arc::new(self.top_level(a)), Arc::new(self.top_level(b))),
            Expr::Compare(op, a, b) => Expr::Compare(*op, Arc::new(self.top_level(a)), Arc::new(self.top_level(b))),
            Expr::Cast(d, a) => Expr::Cast(*d, Arc::new(self.top_level(a))),
            Expr::Call(func, args) => Expr::Call(*func, args.iter().map(|x| self.top_level(x)).collect()),
        }
    }

    /// The tree that replaces `r`, after adding its parts and rest kernels; `None` where `r`
    /// stays whole.
    fn split(&mut self, e: &Expr, r: &Reduce) -> Option<Expr> {
        let dtype = self.program.dtype_in(self.kernel, e).ok()?;
        let (aligned, partial_dtype) = match summation(r.op, dtype) {
            Summation::Widened(wide) => (true, wide),
            Summation::Blocked => (true, dtype),
            Summation::InOrder if r.op == ReduceOp::Product && dtype.is_inexact() => {
                return None;
            }
            Summation::InOrder => (false, dtype),
        };
        let widen = (partial_dtype != dtype).then_some(partial_dtype);
        // Expression nodes per term, for every output element.
        let out_shape = self.program.buffers[self.kernel.output.0].shape.clone();
        let mut term_work = 0u128;
        r.body.walk(&mut |_| term_work += self.elements);
        let known_terms = r
            .inames
            .iter()
            .try_fold(1i128, |acc, b| acc.checked_mul((b.upper.as_int()? as i128 - b.lower.as_int()? as i128).max(0)));
        if known_terms.is_some_and(|t| (t as u128).saturating_mul(term_work) < self.min_work) {
            return None;
        }
        let params: [String; 5] = ["first", "rows", "full", "start", "leaves"]
            .map(|what| fresh_name(&format!("_pt_split_{what}"), 0, self.taken));
        let [first, rows, full, _, leaves] = params.each_ref().map(|p| Expr::var(p));
        // Part `_0` reads rows `first + _0 * rows + [0, rows)`; the rest reads `[start, upper)`
        // of the first iname as it is, so that its reads are proved in range as the unsplit
        // reduction's are (one thread runs only the rest).
        let part = Expr::var("_0").binary(BinaryOp::Mul, rows).binary(BinaryOp::Add, first);
        // The parts kernel's first axis is the part, then the output's axes.
        let parts_reduce = rows_of(r, (Dim::new(0), Dim::param(params[1].as_str())), Some(part), widen, 1);
        let rest_reduce = rows_of(r, (Dim::param(params[3].as_str()), r.inames[0].upper.clone()), None, widen, 0);
        let parts_kernel = self.program.kernels.len();
        let parts_shape: Shape =
            std::iter::once(Dim::param(params[2].as_str())).chain(out_shape.dims().iter().cloned()).collect();
        let parts = self.add_kernel(parts_shape, partial_dtype, parts_reduce);
        let rest_buffer = self.add_kernel(out_shape.clone(), partial_dtype, rest_reduce);
        let out_inames: Vec<Expr> = (0..out_shape.ndim()).map(Expr::iname).collect();
        let rest_element = match out_shape.ndim() {
            0 => Expr::var(&rest_buffer),
            _ => Expr::subscript(&rest_buffer, out_inames.clone()),
        };
        self.program.size_params.extend(params.iter().cloned());
        self.splits.push(Split {
            outer: (r.inames[0].lower.clone(), r.inames[0].upper.clone()),
            inner: r.inames[1..].iter().map(|b| (b.lower.clone(), b.upper.clone())).collect(),
            params,
            aligned,
            term_work,
            parts_kernel,
        });

        let pad = if aligned { negative_zero(partial_dtype) } else { r.op.neutral(partial_dtype) };
        let mut level: Vec<Expr> = (0..MAX_PARTS)
            .map(|t| {
                let t_expr = Expr::i64(t);
                let rest_or_pad = Expr::if_then_else(
                    t_expr.clone().compare(CompareOp::Lt, leaves.clone()),
                    rest_element.clone(),
                    Expr::constant(pad),
                );
                Expr::if_then_else(
                    t_expr.clone().compare(CompareOp::Lt, full.clone()),
                    Expr::subscript(&parts, std::iter::once(t_expr).chain(out_inames.iter().cloned()).collect()),
                    rest_or_pad,
                )
            })
            .collect();
        while level.len() > 1 {
            level = level.chunks(2).map(|pair| combine(r.op, pair[0].clone(), pair[1].clone())).collect();
        }
        let tree = level.pop().expect("a tree has a root");
        Some(if partial_dtype == dtype { tree } else { tree.cast(dtype) })
    }

    /// Adds a temporary of `shape` and `dtype` and the kernel computing `expr` into it; returns
    /// the temporary's name.
    fn add_kernel(&mut self, shape: Shape, dtype: DType, expr: Expr) -> String {
        let name = fresh_name("_pt_split_", 0, self.taken);
        self.program.buffers.push(Buffer { name: name.as_str().into(), dtype, shape, kind: BufferKind::Temporary });
        let output = BufferId(self.program.buffers.len() - 1);
        self.program.kernels.push(Kernel { output, expr });
        name
    }
}

/// `r` with its first iname over `[lower, upper)`, read plus `offset` where given, its terms
/// converted to `widen` where given, and output iname `_k` read as `_{k + shift}`.
fn rows_of(r: &Reduce, (lower, upper): (Dim, Dim), offset: Option<Expr>, widen: Option<DType>, shift: usize) -> Expr {
    let first = r.inames[0].iname.clone();
    let body = r.body.rewrite(&mut |e| match e {
        Expr::Var(name) if *name == first => offset.as_ref().map(|o| e.clone().binary(BinaryOp::Add, o.clone())),
        Expr::Var(name) if shift > 0 => match classify(name) {
            Some(Reserved::Iname(k)) => Some(Expr::iname(k + shift)),
            _ => None,
        },
        _ => None,
    });
    let body = match widen {
        Some(dtype) => body.cast(dtype),
        None => body,
    };
    let mut inames = r.inames.clone();
    inames[0] = ReductionBounds { iname: first, lower, upper };
    Expr::reduce(r.op, inames, body)
}

/// `op` of two partial results.
fn combine(op: ReduceOp, a: Expr, b: Expr) -> Expr {
    match op {
        ReduceOp::Sum => a.binary(BinaryOp::Add, b),
        ReduceOp::Product => a.binary(BinaryOp::Mul, b),
        ReduceOp::Max => Expr::call(Func::Maximum, vec![a, b]),
        ReduceOp::Min => Expr::call(Func::Minimum, vec![a, b]),
        ReduceOp::All => a.binary(BinaryOp::LogicalAnd, b),
        ReduceOp::Any => a.binary(BinaryOp::LogicalOr, b),
    }
}

/// `-0.0` of a float or complex dtype: added to any value, it gives that value.
fn negative_zero(dtype: DType) -> Scalar {
    match dtype {
        DType::C128 => Scalar::C128(num_complex::Complex64::new(-0.0, -0.0)),
        _ => Scalar::F64(-0.0).cast(dtype),
    }
}

#[cfg(test)]
mod tests {
    use pytato_core::{Array, DType, Dim};
    use pytato_frontend as pt;

    use super::*;
    use crate::kernel::{KernelOptions, build_kernel_program};

    fn split(e: &Array) -> (KernelProgram, Vec<Split>) {
        let program = build_kernel_program(&e.into(), KernelOptions::default()).unwrap();
        let (split, splits) = split_reductions(program, 1 << 22);
        split.check().unwrap();
        (split, splits)
    }

    #[test]
    fn a_long_sum_becomes_parts_a_rest_and_a_tree() {
        let x = pt::placeholder("x", [Dim::param("n")], DType::F32).unwrap();
        let (program, splits) = split(&pt::sqrt(&pt::sum(&x, pt::Axes::All).unwrap()).unwrap());
        assert_eq!((program.kernels.len(), splits.len()), (3, 1), "{program}");
        let parts = &program.buffers[program.kernels[0].output.0];
        assert_eq!((parts.dtype, parts.shape.dims()), (DType::F64, &[Dim::param("_pt_split_full0")][..]));
        assert_eq!(program.buffers[program.kernels[1].output.0].dtype, DType::F64, "summed wide");
        let consumer = program.kernels[2].expr.to_string();
        assert!(consumer.starts_with("sqrt(cast(float32, "), "rounded once, after the tree: {consumer}");
        assert!(!consumer.contains("sum("), "{consumer}");
        assert_eq!(program.size_params.len(), 1 + 5);
    }

    #[test]
    fn a_few_outputs_have_their_parts_side_by_side() {
        let x = pt::placeholder("x", [Dim::new(3), Dim::param("n")], DType::I32).unwrap();
        let (program, splits) = split(&pt::max(&x, 1).unwrap());
        assert_eq!((program.kernels.len(), splits.len()), (3, 1), "{program}");
        let parts = &program.buffers[program.kernels[0].output.0];
        assert_eq!(parts.shape.dims(), &[Dim::param("_pt_split_full0"), Dim::new(3)][..]);
        let body = program.kernels[0].expr.to_string();
        assert!(body.contains("x[_1, _r0 + (_0 * _pt_split_rows0 + _pt_split_first0)]"), "{body}");
        assert_eq!(program.buffers[program.kernels[1].output.0].shape.dims(), &[Dim::new(3)][..]);
        let (program, splits) =
            split(&pt::max(&pt::placeholder("y", [Dim::new(17), Dim::param("n")], DType::I32).unwrap(), 1).unwrap());
        assert!(splits.is_empty(), "17 outputs are rows enough: {program}");
    }

    /// Shapes whose element counts overflow are the run's to refuse: the pass leaves them alone.
    #[test]
    fn shapes_too_large_to_address_pass_through() {
        let (_, splits) = split(&pt::zeros([1 << 62, 1 << 62], DType::F64).unwrap());
        assert!(splits.is_empty());
        let huge = pt::placeholder("x", [1i64 << 62, 1 << 62, 1 << 62], DType::F64).unwrap();
        let (_, splits) = split(&pt::sum(&huge, pt::Axes::All).unwrap());
        assert_eq!(splits.len(), 1, "a long sum, whose run the sizes will refuse");
    }

    #[test]
    fn derived_sizes_make_aligned_parts_or_one_rest() {
        let x = pt::placeholder("x", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
        let (program, splits) = split(&pt::sum(&x, pt::Axes::All).unwrap());
        let sizes = |n: i64, m: i64, min_work: u128| {
            let mut bound =
                Bound { sizes: [("n".into(), n), ("m".into(), m)].into(), placeholders: Default::default() };
            splits[0].bind(&mut bound, min_work).unwrap();
            program.size_params[2..].iter().map(|p| bound.sizes[p]).collect::<Vec<_>>()
        };
        // first, rows, full, start, leaves. 4099 x 512 terms: a 64th is 32,792 terms, so parts
        // of 2^16 terms (128 rows), 32 of them, and 3 rows left.
        assert_eq!(sizes(4099, 512, 1), [0, 128, 32, 4096, 33]);
        // Rows of 1000 terms are no whole number of blocks: one rest.
        assert_eq!(sizes(3001, 1000, 1), [0, 1, 0, 0, 1]);
        // Too little work, and no terms at all.
        assert_eq!(sizes(4099, 512, u128::MAX), [0, 1, 0, 0, 1]);
        assert_eq!(sizes(0, 512, 1), [0, 1, 0, 0, 1]);
        // One row of 2^20 terms: a part must hold a whole row.
        assert_eq!(sizes(3, 1 << 20, 1), [0, 1, 3, 3, 3]);
    }

    #[test]
    fn what_must_stay_whole_stays_whole() {
        let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
        let y = pt::placeholder("y", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
        let short = pt::placeholder("s", [1000], DType::F64).unwrap();
        let in_branch = pt::where_(
            pt::greater(x.index(pytato_core::s![0]).unwrap(), 0.0).unwrap(),
            pt::sum(&x, pt::Axes::All).unwrap(),
            1.0,
        )
        .unwrap();
        for (what, e) in [
            ("a float product (numpy multiplies in order)", pt::prod(&x, pt::Axes::All).unwrap()),
            ("column sums (threads split the output)", pt::sum(&y, 0).unwrap()),
            ("a sum of 1000 terms known when compiling", pt::sum(&short, pt::Axes::All).unwrap()),
            ("a sum in a branch (evaluated only where taken)", in_branch),
        ] {
            let (program, splits) = split(&e);
            assert!(splits.is_empty(), "{what}: {program}");
        }
        let (_, splits) = split(&pt::prod(&pt::astype(&x, DType::I64).unwrap(), pt::Axes::All).unwrap());
        assert_eq!(splits.len(), 1, "an integer product wraps: any grouping");
    }
}
