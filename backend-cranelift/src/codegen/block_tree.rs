//! The canonical tree of block totals (`pytato_runtime::math::BlockTree`) in generated code.
//!
//! A blocked sum keeps its pending subtrees in a stack slot of [`TREE_DEPTH`] entries and counts
//! the blocks pushed. Pushing block `k` writes it at entry `popcount(k)` and merges it with the
//! `trailing_ones(k)` entries below it (`entry[d - 1] = entry[d - 1] + entry[d]`); finishing
//! merges what is pending from the top down into entry 0. An entry is whatever the caller sums
//! per block: one scalar, a few vectors of output elements, or a row of a strip. The merges run
//! once per block of `SUM_BLOCK` terms, so their loops cost nothing next to the terms.

use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, StackSlot, StackSlotData, StackSlotKind, Value, types};
use cranelift_frontend::Variable;

use pytato_core::DType;

use super::{Translator, Val};

/// Entries of a tree's stack slot: a `u64` count of blocks has at most 64 complete subtrees
/// pending, so no count of blocks writes past the slot.
const TREE_DEPTH: i64 = 64;

/// A blocked sum's pending block totals: entry `d` at `base + d * entry_bytes`.
pub(super) struct TreeSlots {
    base: Value,
    entry_bytes: Value,
    /// Blocks pushed so far.
    blocks: Variable,
}

impl Translator<'_, '_> {
    /// A stack slot for the entries of a tree of `entry_bytes` each.
    pub(super) fn tree_slot(&mut self, entry_bytes: i64) -> StackSlot {
        let bytes = u32::try_from(TREE_DEPTH * entry_bytes).expect("tree entries are small");
        self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4))
    }

    /// An empty tree whose entry 0 is at `base` (in a slot from [`Self::tree_slot`]).
    pub(super) fn tree_at(&mut self, base: Value, entry_bytes: Value) -> TreeSlots {
        let blocks = self.var(types::I64);
        let none = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(blocks, none);
        TreeSlots { base, entry_bytes, blocks }
    }

    /// An empty tree in a slot of its own.
    pub(super) fn new_tree(&mut self, entry_bytes: i64) -> TreeSlots {
        let slot = self.tree_slot(entry_bytes);
        let base = self.b.ins().stack_addr(types::I64, slot, 0);
        let entry_bytes = self.b.ins().iconst(types::I64, entry_bytes);
        self.tree_at(base, entry_bytes)
    }

    /// The address of entry `depth`.
    fn tree_entry(&mut self, tree: &TreeSlots, depth: Value) -> Value {
        let offset = self.b.ins().imul(depth, tree.entry_bytes);
        self.b.ins().iadd(tree.base, offset)
    }

    /// Pushes the next block: `write(t, entry)` writes its total at `entry`; `merge(t, left,
    /// right)` stores the sum of the entries at `left` and `right` at `left`.
    pub(super) fn tree_push(
        &mut self,
        tree: &TreeSlots,
        write: &mut dyn FnMut(&mut Self, Value),
        merge: &mut dyn FnMut(&mut Self, Value, Value),
    ) {
        let k = self.b.use_var(tree.blocks);
        let depth = self.b.ins().popcnt(k);
        let entry = self.tree_entry(tree, depth);
        write(self, entry);
        let not_k = self.b.ins().bnot(k);
        let merges = self.b.ins().ctz(not_k);
        self.merge_down(tree, depth, merges, merge);
        let next = self.b.ins().iadd_imm_s(k, 1);
        self.b.def_var(tree.blocks, next);
    }

    /// Pushes the last block of a sum, which holds `count` terms: unless it is empty and follows
    /// other blocks (an empty sum is one block of zeros).
    pub(super) fn tree_push_last(
        &mut self,
        tree: &TreeSlots,
        count: Variable,
        write: &mut dyn FnMut(&mut Self, Value),
        merge: &mut dyn FnMut(&mut Self, Value, Value),
    ) {
        let count = self.b.use_var(count);
        let blocks = self.b.use_var(tree.blocks);
        let has_terms = self.b.ins().icmp_imm_s(IntCC::NotEqual, count, 0);
        let first = self.b.ins().icmp_imm_s(IntCC::Equal, blocks, 0);
        let push = self.b.ins().bor(has_terms, first);
        let (push_block, done) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(push, push_block, &[], done, &[]);
        self.b.switch_to_block(push_block);
        self.tree_push(tree, write, merge);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// Merges the pending subtrees into entry 0 (at least one block must have been pushed);
    /// returns its address.
    pub(super) fn tree_finish(&mut self, tree: &TreeSlots, merge: &mut dyn FnMut(&mut Self, Value, Value)) -> Value {
        let blocks = self.b.use_var(tree.blocks);
        let depth = self.b.ins().popcnt(blocks);
        let last = self.b.ins().iadd_imm_s(depth, -1);
        self.merge_down(tree, last, last, merge);
        tree.base
    }

    /// `times` merges from entry `top` down: entry `top - i` into the one below it, for `i` in
    /// `0..times`.
    fn merge_down(
        &mut self,
        tree: &TreeSlots,
        top: Value,
        times: Value,
        merge: &mut dyn FnMut(&mut Self, Value, Value),
    ) {
        let i = self.var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        let l = self.open_loop(i, zero, times);
        let i = self.b.use_var(i);
        let right = self.b.ins().isub(top, i);
        let left = self.b.ins().iadd_imm_s(right, -1);
        let (left, right) = (self.tree_entry(tree, left), self.tree_entry(tree, right));
        merge(self, left, right);
        self.close_loop(l);
    }
    /// The total (of `dtype`) of a sum whose last block holds `count` terms. A sum of one block
    /// (no block pushed yet: the common short sum) is `last_block`, computed in registers; a
    /// longer one pushes its last block (`write`), finishes the tree (`merge`) and reads entry 0.
    pub(super) fn tree_total(
        &mut self,
        tree: &TreeSlots,
        count: Variable,
        dtype: DType,
        last_block: &mut dyn FnMut(&mut Self) -> Val,
        write: &mut dyn FnMut(&mut Self, Value),
        merge: &mut dyn FnMut(&mut Self, Value, Value),
    ) -> Val {
        let zero = self.zero(dtype);
        let result = self.vars_of(dtype, zero);
        let blocks = self.b.use_var(tree.blocks);
        let (one, many, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().brif(blocks, many, &[], one, &[]);
        self.b.switch_to_block(one);
        let block = last_block(self);
        self.define(&result, block);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(many);
        self.tree_push_last(tree, count, write, merge);
        let entry = self.tree_finish(tree, merge);
        let total = self.load(entry, dtype);
        self.define(&result, total);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.read(&result)
    }
}
