//! Float sums of a few terms, their count known when the kernel is compiled, unrolled into
//! registers: DG's `sum(_r:0..5, D[i, _r] * u[e, _r, j])`, small contractions, `mean` over a
//! short axis.
//!
//! The canonical scheme (`pytato_runtime::math`, "Summation") adds term `t` into lane
//! `t % SUM_LANES` of a block whose lanes start at +0, then adds the lanes in `lane_tree`'s order.
//! With at most [`SHORT_SUM_TERMS`] (≤ `SUM_BLOCK`) terms there is one block, so the sum is a fixed
//! expression of its terms, emitted here with no loop, no stack slot and no count.
//!
//! Two shortcuts keep the expression short, and the bits the same. Each lane starts from its first
//! term instead of +0, and lanes with no term are left out of the lane tree; that changes only the
//! sign of a zero when every term is `-0.0` (the scheme gives `+0.0`), and one addition of `+0.0`
//! to the total restores it. With `N(x) = x + 0.0` (which maps `-0.0` to `+0.0` and nothing else,
//! NaN staying NaN), round-to-nearest gives `N(a) + b = N(a + b)` and `N(a) + N(b) = N(a + b)`,
//! and `N(a) + 0.0 = N(a)`: the scheme's lane `(+0 + a) + b` is `N(a + b)`, an empty lane added to
//! a lane changes nothing, and so the scheme's total is `N` of the shortcut's.

use cranelift_codegen::ir::{InstBuilder, Value, types};
use pytato_core::expr::{Reduce, ReduceOp};
use pytato_core::{DType, Result};
use pytato_runtime::math::{SUM_BLOCK, SUM_LANES, lane_tree, summation};

use super::{Translator, Val, index_tuples};

/// The most terms a sum is unrolled for.
const SHORT_SUM_TERMS: i64 = 32;

/// The most expression nodes an unrolled sum may emit (terms times the nodes of its body), so
/// that nested short sums do not multiply into huge functions.
const SHORT_SUM_NODES: i64 = 4096;

const _: () = assert!(SHORT_SUM_TERMS as u64 <= SUM_BLOCK, "a short sum is one block");

impl Translator<'_, '_> {
    /// The values of the reduction's inames for each term, in the order the scheme counts terms
    /// (the first iname slowest), when every range is known now and the sum is short.
    pub(super) fn short_sum_terms(&self, r: &Reduce) -> Option<Vec<Vec<i64>>> {
        let ranges: Vec<(i64, i64)> = r
            .inames
            .iter()
            .map(|b| Some((b.lower.as_int()?, b.upper.as_int()?.max(b.lower.as_int()?))))
            .collect::<Option<_>>()?;
        let count = ranges.iter().try_fold(1_i64, |n, (lo, hi)| n.checked_mul(hi - lo))?;
        let mut nodes = 0_i64;
        r.body.walk(&mut |_| nodes += 1);
        if count > SHORT_SUM_TERMS || count.saturating_mul(nodes) > SHORT_SUM_NODES {
            return None;
        }
        Some(index_tuples(&ranges))
    }

    /// Whether `r` is a float sum of `dtype` that is unrolled.
    pub(super) fn is_short_sum(&self, r: &Reduce, dtype: DType) -> bool {
        summation(r.op, dtype).lane_dtype(dtype).is_some() && self.short_sum_terms(r).is_some()
    }

    /// The unrolled sum of `r` over `terms` (from [`Self::short_sum_terms`]): `term` emits the
    /// body with the inames bound, `add` adds two partial sums and `zero` is `+0.0` in their
    /// form (a scalar, a complex pair, or a group of vectors).
    pub(super) fn short_sum<V: Clone>(
        &mut self,
        r: &Reduce,
        terms: &[Vec<i64>],
        term: &mut dyn FnMut(&mut Self) -> Result<V>,
        add: &mut dyn FnMut(&mut Self, V, V) -> V,
        zero: V,
    ) -> Result<V> {
        let vars: Vec<_> = r.inames.iter().map(|_| self.var(types::I64)).collect();
        for (b, &var) in r.inames.iter().zip(&vars) {
            self.reduction_vars.insert(b.iname.clone(), var);
            self.ranges.reductions.insert(b.iname.clone(), (b.lower.clone(), b.upper.clone()));
        }
        let mut lanes: [Option<V>; SUM_LANES] = std::array::from_fn(|_| None);
        for (t, values) in terms.iter().enumerate() {
            for (&var, &value) in vars.iter().zip(values) {
                let value: Value = self.b.ins().iconst(types::I64, value);
                self.b.def_var(var, value);
            }
            let x = term(self)?;
            let lane = &mut lanes[t % SUM_LANES];
            *lane = Some(match lane.take() {
                Some(acc) => add(self, acc, x),
                None => x,
            });
        }
        self.unbind_reduction_inames(r);
        let total = lane_tree(lanes, &mut |a, b| {
            Ok::<_, ()>(match (a, b) {
                (Some(a), Some(b)) => Some(add(self, a, b)),
                (a, b) => a.or(b),
            })
        })
        .unwrap_or_else(|()| unreachable!("infallible"));
        Ok(match total {
            Some(total) => add(self, total, zero),
            None => zero,
        })
    }

    /// [`Self::short_sum`] of scalar terms of `term_dtype`, converted to and summed in `dtype`.
    pub(super) fn short_scalar_sum(
        &mut self,
        r: &Reduce,
        terms: &[Vec<i64>],
        term_dtype: DType,
        dtype: DType,
    ) -> Result<Val> {
        let zero = self.zero(dtype);
        self.short_sum(
            r,
            terms,
            &mut |t| {
                let (x, _) = t.emit(&r.body)?;
                Ok(t.cast(x, term_dtype, dtype))
            },
            &mut |t, a, b| t.combine(ReduceOp::Sum, a, b, dtype),
            zero,
        )
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use cranelift_codegen::ir::{Function, UserFuncName};
    use cranelift_frontend::FunctionBuilderContext;
    use pytato_core::{DType, Dim};
    use pytato_frontend as pt;
    use pytato_transform::kernel::{KernelOptions, build_kernel_program};

    use crate::codegen::{kernel_signature, translate};

    /// The Cranelift functions of `u + einsum("ik,ekj->eij", d, u)` with `np` nodes per axis:
    /// (stack slots, blocks) of each, in vector mode and not.
    fn dg_volume_functions(np: i64) -> Vec<(usize, usize)> {
        let u = pt::placeholder("u", [Dim::param("e"), Dim::new(np), Dim::new(np)], DType::F64).unwrap();
        let d = pt::placeholder("d", [Dim::new(np), Dim::new(np)], DType::F64).unwrap();
        let e = pt::add(&u, pt::einsum("ik,ekj->eij", &[&d, &u]).unwrap()).unwrap();
        let program = build_kernel_program(&(&e).into(), KernelOptions::default()).unwrap();
        assert_eq!(program.kernels.len(), 1, "{program}");
        let isa = crate::jit::isa().unwrap();
        let names: HashMap<&str, _> = program.buffer_ids();
        [true, false]
            .into_iter()
            .map(|simd| {
                let mut func =
                    Function::with_name_signature(UserFuncName::user(0, 0), kernel_signature(isa.default_call_conv()));
                let mut fctx = FunctionBuilderContext::new();
                translate(&program, &names, &[&program.kernels[0]], &mut func, &mut fctx, isa.frontend_config(), simd)
                    .unwrap();
                (func.sized_stack_slots.len(), func.layout.blocks().count())
            })
            .collect()
    }

    /// A sum of a few terms known at compile time is straight-line code: no stack slot for lanes
    /// or block totals, and no more blocks at 7 terms than at 6 (no loop or branch per term); a
    /// sum too long to unroll keeps its slots.
    #[test]
    fn short_sums_are_unrolled_without_slots_or_loops() {
        // 6 and 7 nodes: the same loops over the element and the first node axis (the last axis
        // unrolled either way, the 36 or 49 nodes of an element too many to unroll), so only the
        // sums could differ.
        let (six, seven, long) = (dg_volume_functions(6), dg_volume_functions(7), dg_volume_functions(33));
        for ((six, seven), long) in six.iter().zip(&seven).zip(&long) {
            assert_eq!((six.0, seven.0), (0, 0), "stack slots of short sums");
            assert_eq!(six.1, seven.1, "blocks with 6 and 7 terms");
            assert!(long.0 > 0, "a sum of 33 terms keeps its lanes in a slot");
        }
    }
}
