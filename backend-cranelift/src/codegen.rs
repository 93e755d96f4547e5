//! Translation of one kernel of the kernel IR into a Cranelift function.
//!
//! # The kernel ABI
//!
//! ```text
//! extern "C" fn(buffers: *const *mut u8, sizes: *const i64, lo: i64, hi: i64, error: *mut i64,
//!                scratch: *mut u8) -> i32
//! ```
//!
//! - `buffers[i]` is the base address of buffer `i` of the [`KernelProgram`], every buffer dense and
//!   in C order;
//! - `sizes[j]` is the value of size parameter `j` (`KernelProgram::size_params` order); every
//!   extent and stride is computed from them in the function's entry block, which is what makes a
//!   compiled kernel shape-polymorphic;
//! - the kernel computes the elements whose first index is in `[lo, hi)` (a 0-d kernel: `lo = 0`,
//!   `hi = 1`), so that a caller can split the outermost loop across threads;
//! - it returns 0, or 1 after writing `[buffer, axis, index, length]` of an out-of-range subscript
//!   to `error[0..4]`; nothing is read or written out of bounds before that return;
//! - `scratch` is [`SCRATCH_BYTES`] bytes, 16-byte aligned, that only this call uses, where the
//!   function says it needs them ([`translate`] returns whether it does), else null: the lanes
//!   and tree entries of column sums' strips (`codegen::vector`), too large for the stack of any
//!   thread a program may run on.
//!
//! Loop counters, accumulators and the results of `if` are Cranelift variables; everything that
//! depends only on sizes is computed once in the entry block, which dominates all other code.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Block, Function, Inst, InstBuilder, MemFlagsData, Signature, StackSlot, StackSlotData, StackSlotKind,
    Type, Value, types,
};
use cranelift_codegen::isa::{CallConv, TargetFrontendConfig};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, Reduce, ReduceOp, UnaryOp};
use pytato_core::names::{Reserved, classify};
use pytato_core::{DType, Dim, Error, Result, Scalar};
use pytato_runtime::math::{SUM_BLOCK, SUM_LANES, Summation, lane_tree, summation};
use pytato_transform::kernel::{BufferId, INDEX_ARRAY, Kernel, KernelProgram, NEGATIVE_EXPONENT, VALUE_CHECK};

use crate::helpers;
use pytato_transform::bounds::Ranges;

mod block_tree;
mod short_sum;
mod trig;
mod vector;

/// The signature of every kernel function; see the module docs.
pub(crate) fn kernel_signature(call_conv: CallConv) -> Signature {
    let mut sig = Signature::new(call_conv);
    for ty in [types::I64; 6] {
        sig.params.push(AbiParam::new(ty));
    }
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

/// The Cranelift type of one (real) component of `dtype`. A `float16` is its bits: the kernel IR
/// only loads, stores, selects and casts it (`Expr::widen_float16`), and casts convert through
/// `float32` with numpy's rounding (`helpers::f16_to_f32`, ...).
fn component_type(dtype: DType) -> Type {
    use DType::*;
    match dtype {
        Bool | I8 | U8 => types::I8,
        I16 | U16 | F16 => types::I16,
        I32 | U32 => types::I32,
        I64 | U64 => types::I64,
        F32 | C64 => types::F32,
        F64 | C128 => types::F64,
    }
}

fn is_signed(dtype: DType) -> bool {
    matches!(dtype, DType::I8 | DType::I16 | DType::I32 | DType::I64)
}

fn is_float(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64)
}

/// A scalar value: one Cranelift value, or the real and imaginary parts of a complex one.
#[derive(Clone, Copy)]
enum Val {
    Real(Value),
    Complex(Value, Value),
}

impl Val {
    fn real(self) -> Value {
        match self {
            Val::Real(v) | Val::Complex(v, _) => v,
        }
    }
    fn parts(self) -> (Value, Value) {
        match self {
            Val::Complex(re, im) => (re, im),
            Val::Real(v) => (v, v),
        }
    }
}

/// An open loop: its counter, the block that tests it, the block after it, and its step.
struct Loop {
    var: Variable,
    header: Block,
    exit: Block,
    step: i64,
}

/// A buffer as one kernel sees it: base address, extents and strides (in elements).
struct View {
    dtype: DType,
    base: Value,
    extents: Vec<Value>,
    strides: Vec<Value>,
    dims: Vec<Dim>,
}

/// An element offset `dynamic + constant`, the constant part summed at translation time (see
/// [`Translator::split_address`]).
#[derive(Clone, Copy)]
struct LinearOffset {
    dynamic: Option<Value>,
    constant: i64,
}

/// The bytes of the scratch memory a kernel function may need (see the module docs).
pub(crate) const SCRATCH_BYTES: usize = vector::STRIP_SCRATCH_BYTES as usize;

/// Translates `kernels` into `func`, whose signature must be [`kernel_signature`]; `names` is
/// [`KernelProgram::buffer_ids`]. One kernel is translated as the module docs say; several (a
/// launch group, module `crate::groups`) share the loop over their common first axis, and each
/// computes its elements of the current first index in turn, so that a later kernel reads what
/// an earlier one wrote for that index while it is still in the cache. Returns whether the
/// function reads and writes `scratch`.
pub(crate) fn translate<'a>(
    program: &'a KernelProgram,
    names: &'a HashMap<&'a str, BufferId>,
    kernels: &[&'a Kernel],
    func: &mut Function,
    fctx: &mut FunctionBuilderContext,
    target: TargetFrontendConfig,
    simd: bool,
) -> Result<bool> {
    let b = FunctionBuilder::new(func, fctx);
    let first = kernels.first().ok_or_else(|| bug("a function of no kernel"))?;
    let mut t = Translator {
        program,
        b,
        names,
        sizes: HashMap::new(),
        scalars: HashMap::new(),
        views: HashMap::new(),
        inames: Vec::new(),
        reduction_vars: HashMap::new(),
        // A failed `normalize_index` check returns from its kernel and ends the run, so later
        // kernels read only checked index arrays.
        ranges: Ranges {
            output: program.buffers[first.output.0].shape.dims(),
            reductions: HashMap::new(),
            size_params: &program.size_params,
            index_buffers: program.normalized_indices(),
            assumed: HashMap::new(),
        },
        error_ptr: None,
        complex_slot: None,
        output_strides: Vec::new(),
        inner_override: None,
        vector_iname: None,
        varies_memo: HashMap::new(),
        simd,
        written: kernels.iter().map(|k| k.output).collect(),
        entry_jump: None,
        entry_loads: HashMap::new(),
        entry_values: HashSet::new(),
        entry_vectors: HashMap::new(),
        pin_slot: None,
        scratch: None,
        uses_scratch: false,
    };
    t.function(kernels)?;
    t.b.seal_all_blocks();
    let uses_scratch = t.uses_scratch;
    t.b.finalize(target);
    Ok(uses_scratch)
}

struct Translator<'a, 'f> {
    program: &'a KernelProgram,
    b: FunctionBuilder<'f>,
    names: &'a HashMap<&'a str, BufferId>,
    sizes: HashMap<&'a str, Value>,
    /// The values of the 0-d buffers the kernel reads, loaded in its entry block.
    scalars: HashMap<BufferId, Val>,
    views: HashMap<BufferId, View>,
    inames: Vec<Variable>,
    reduction_vars: HashMap<Arc<str>, Variable>,
    ranges: Ranges<'a>,

    error_ptr: Option<Value>,
    /// A 16-byte stack slot complex helpers write their results to.
    complex_slot: Option<cranelift_codegen::ir::StackSlot>,
    /// The output buffer's strides (in elements).
    output_strides: Vec<Value>,
    /// In the vector loop: the value the vector iname has for the lane being computed.
    inner_override: Option<Value>,
    /// The iname vector lanes run along: the innermost output iname (`None`), or a reduction
    /// iname (a sum vectorized along its terms, `codegen::vector`).
    vector_iname: Option<Arc<str>>,
    /// Whether vector loops are allowed (`CodegenOptions::simd`).
    simd: bool,
    /// Memo of [`Translator::varies`], by expression address.
    varies_memo: HashMap<*const Expr, bool>,
    /// The buffers the function writes, its kernels' outputs (every other buffer is only read
    /// while it runs).
    written: Vec<BufferId>,
    /// The entry block's jump to the loops: what every iteration shares is inserted before it,
    /// computed once ([`Translator::entry_load`], [`Translator::in_entry`]).
    entry_jump: Option<Inst>,
    /// Elements read at constant addresses, loaded in the entry block, by buffer and byte offset.
    entry_loads: HashMap<(BufferId, i32), Val>,
    /// The values of `entry_loads`.
    entry_values: HashSet<Value>,
    /// Vectors of `entry_values`, made in the entry block, by vector type and lanes.
    entry_vectors: HashMap<(Type, Vec<Value>), Value>,
    /// A stack slot the entry block stores those vectors to (see [`Translator::in_entry`]).
    pin_slot: Option<StackSlot>,
    /// The `scratch` argument (see the module docs): the lanes and tree entries of the strips of
    /// blocked sums read row by row (`codegen::vector`), shared by the function's kernels, which
    /// run one after another.
    scratch: Option<Value>,
    /// Whether the function uses `scratch`.
    uses_scratch: bool,
}

fn bug(message: impl Into<String>) -> Error {
    Error::Internal { backend: "cranelift".into(), message: message.into() }
}

const TRUSTED: MemFlagsData = MemFlagsData::trusted();

/// The most output elements an unrolled tail of axes may hold ([`Translator::unrolled_tail`]).
const UNROLLED_ELEMENTS: i64 = 32;

/// The most expression nodes an unrolled tail may emit (its elements times the expression's).
const UNROLLED_NODES: i64 = 1 << 14;

/// Every tuple of indices in the half-open `ranges`, the last fastest.
fn index_tuples(ranges: &[(i64, i64)]) -> Vec<Vec<i64>> {
    ranges.iter().fold(vec![Vec::new()], |tuples, &(lo, hi)| {
        tuples.into_iter().flat_map(|prefix| (lo..hi).map(move |i| [prefix.clone(), vec![i]].concat())).collect()
    })
}

/// Loads that Cranelift may merge, and hoist out of loops, as pure values: of a buffer the kernel
/// does not write (every buffer but its output: a run's outputs never share memory with its
/// inputs, which safe Rust's borrows guarantee and the Python bindings check, refusing an output
/// that overlaps an input) at an
/// address proved in bounds for every value of the inames it depends on, so that executing it
/// earlier, or once for all iterations of a loop, reads the same value and never faults.
const INVARIANT: MemFlagsData = MemFlagsData::trusted().with_readonly().with_can_move();

impl<'a> Translator<'a, '_> {
    fn var(&mut self, ty: Type) -> Variable {
        self.b.declare_var(ty)
    }

    /// The whole function: entry block (sizes, views), loop nests, stores, return.
    fn function(&mut self, kernels: &[&'a Kernel]) -> Result<()> {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let params = self.b.block_params(entry).to_vec();
        let (buffers_ptr, sizes_ptr, lo, hi) = (params[0], params[1], params[2], params[3]);
        self.error_ptr = Some(params[4]);
        self.scratch = Some(params[5]);

        for (j, p) in self.program.size_params.iter().enumerate() {
            let v = self.b.ins().load(types::I64, TRUSTED, sizes_ptr, (8 * j) as i32);
            self.sizes.insert(p.as_str(), v);
        }
        // Views of every buffer the kernels touch, in the entry block so that they dominate.
        for kernel in kernels {
            for id in self.program.kernel_buffers(self.names, kernel)? {
                if self.views.contains_key(&id) {
                    continue;
                }
                let view = self.view(buffers_ptr, id)?;
                if view.extents.is_empty() && !self.written.contains(&id) {
                    // A 0-d input (a coefficient): read once, here, for every element. (A load
                    // Cranelift may move would be placed again at its first use, in the loops.)
                    let value = self.load(view.base, view.dtype);
                    self.scalars.insert(id, value);
                }
                self.views.insert(id, view);
            }
        }
        // The loops start in a block of their own; what they share is inserted into the entry
        // block, before its jump there, as they are built.
        let loops = self.b.create_block();
        self.entry_jump = Some(self.b.ins().jump(loops, &[]));
        self.b.switch_to_block(loops);
        if let [kernel] = kernels {
            self.nest(kernel, &[], lo, hi)?;
        } else {
            // A launch group: every kernel has two axes or more and the same first one.
            let var = self.var(types::I64);
            let shared = self.open_loop(var, lo, hi);
            for kernel in kernels {
                self.nest(kernel, &[var], lo, hi)?;
            }
            self.close_loop(shared);
        }
        let ok = self.b.ins().iconst(types::I32, 0);
        self.b.ins().return_(&[ok]);
        Ok(())
    }

    /// Element `offset` of buffer `id` (at `base`, not written by this function, every axis of
    /// a length known at compile time, `offset` within them), loaded once in the entry block:
    /// Cranelift would keep such a load in the loops (a constant address is rematerialized in
    /// every block, which pins its users there), so a row of a small matrix would be loaded for
    /// every element. `None` where the buffer or the offset does not qualify.
    fn entry_load(&mut self, id: BufferId, base: Value, offset: i64, dtype: DType) -> Option<Val> {
        let buffer = &self.program.buffers[id.0];
        let len = buffer.shape.dims().iter().try_fold(1_i64, |n, d| n.checked_mul(d.as_int()?))?;
        let bytes = i32::try_from(offset.checked_mul(dtype.itemsize() as i64)?).ok()?;
        if self.written.contains(&id) || !(0..len).contains(&offset) {
            return None;
        }
        if let Some(&value) = self.entry_loads.get(&(id, bytes)) {
            return Some(value);
        }
        let mut entry = FuncCursor::new(self.b.func).at_inst(self.entry_jump?);
        let ty = component_type(dtype);
        let re = entry.ins().load(ty, TRUSTED, base, bytes);
        let value = if dtype.is_complex() {
            Val::Complex(re, entry.ins().load(ty, TRUSTED, base, bytes + ty.bytes() as i32))
        } else {
            Val::Real(re)
        };
        self.entry_loads.insert((id, bytes), value);
        match value {
            Val::Real(v) => _ = self.entry_values.insert(v),
            Val::Complex(re, im) => self.entry_values.extend([re, im]),
        }
        Some(value)
    }

    /// `v` in every lane of a `vector` (see [`Self::vector_of`]).
    fn splat(&mut self, vector: Type, v: Value) -> Value {
        if !self.entry_values.contains(&v) {
            return self.b.ins().splat(vector, v);
        }
        self.in_entry(vector, &[v], &mut |entry| entry.ins().splat(vector, v))
    }

    /// The `vector` of `lanes`; of values loaded in the entry block, made there once (see
    /// [`Self::in_entry`]).
    fn vector_of(&mut self, vector: Type, lanes: &[Value]) -> Value {
        let build = &mut |at: &mut FuncCursor| {
            let mut out = at.ins().splat(vector, lanes[0]);
            for (k, &v) in lanes.iter().enumerate().skip(1) {
                out = at.ins().insertlane(out, v, k as u8);
            }
            out
        };
        if lanes.iter().all(|v| self.entry_values.contains(v)) {
            self.in_entry(vector, lanes, build)
        } else {
            build(&mut self.b.cursor())
        }
    }

    /// The `vector` that `build` makes of `lanes` (values of the entry block), made in the entry
    /// block once and stored to a stack slot there: a use in the entry block makes Cranelift
    /// compute it there, rather than again at each use in the loops (its hoisting out of loops
    /// does not reach values built from constants or, here, from the entry block's loads).
    fn in_entry(&mut self, vector: Type, lanes: &[Value], build: &mut dyn FnMut(&mut FuncCursor) -> Value) -> Value {
        let key = (vector, lanes.to_vec());
        if let Some(&value) = self.entry_vectors.get(&key) {
            return value;
        }
        let slot = *self.pin_slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4))
        });
        let Some(jump) = self.entry_jump else {
            unreachable!("the entry block jumps to the loops before they are built")
        };
        let mut entry = FuncCursor::new(self.b.func).at_inst(jump);
        let value = build(&mut entry);
        entry.ins().stack_store(types::I64, value, slot, 0);
        self.entry_vectors.insert(key, value);
        value
    }

    /// The loop nest of `kernel` and its stores, inside the loops `shared` over its first axes
    /// (none, or the first axis of a launch group); the first axis runs over `[lo, hi)`.
    fn nest(&mut self, kernel: &'a Kernel, shared: &[Variable], lo: Value, hi: Value) -> Result<()> {
        let out = &self.views[&kernel.output];
        let (out_extents, out_base, out_dtype) = (out.extents.clone(), out.base, out.dtype);
        self.output_strides = out.strides.clone();
        self.ranges.output = self.program.buffers[kernel.output.0].shape.dims();
        self.inames = shared.to_vec();
        self.varies_memo.clear();
        let ndim = out_extents.len();
        let bounds = |t: &mut Self, axis: usize| {
            if axis == 0 { (lo, hi) } else { (t.b.ins().iconst(types::I64, 0), out_extents[axis]) }
        };
        // Trailing axes of a few elements in all (a DG element's nodes) are unrolled; every axis
        // before them, or every axis but the innermost, is a plain loop.
        let unrolled = self.unrolled_tail(&kernel.expr);
        let looped = if unrolled.is_empty() { ndim.saturating_sub(1) } else { ndim - unrolled.len() };
        let mut loops = Vec::with_capacity(ndim);
        for axis in shared.len()..looped {
            let var = self.var(types::I64);
            self.inames.push(var);
            let (start, end) = bounds(self, axis);
            loops.push(self.open_loop(var, start, end));
        }
        if !unrolled.is_empty() {
            self.unrolled_elements(&kernel.expr, &unrolled, out_base, out_dtype)?;
        } else {
            self.innermost_axis(kernel, ndim, bounds, out_base, out_dtype)?;
        }
        while let Some(l) = loops.pop() {
            self.close_loop(l);
        }
        Ok(())
    }

    /// The output elements along unrolled trailing axes of lengths `lengths` (the loops over the
    /// axes before them are open), each computed with constant indices along them, so that what
    /// they share (a gathered index, a neighbour's value, a row of a small matrix) is computed
    /// once: whole vectors along the last axis together, then single elements.
    fn unrolled_elements(&mut self, expr: &Expr, lengths: &[i64], out_base: Value, out_dtype: DType) -> Result<()> {
        let tail: Vec<Variable> = lengths.iter().map(|_| self.var(types::I64)).collect();
        self.inames.extend(&tail);
        let (&last_len, outer_lens) = lengths.split_last().expect("an unrolled axis");
        let last = *tail.last().expect("an unrolled axis");
        let vector = self.vector_type(expr, out_dtype);
        let lanes = vector.map_or(last_len + 1, |v| i64::from(v.lane_count()));
        let whole = last_len / lanes * lanes;
        for indices in index_tuples(&outer_lens.iter().map(|&len| (0, len)).collect::<Vec<_>>()) {
            for (&var, index) in tail.iter().zip(indices) {
                let index = self.b.ins().iconst(types::I64, index);
                self.b.def_var(var, index);
            }
            if let Some(vector) = vector.filter(|_| whole > 0) {
                let starts: Vec<Value> =
                    (0..whole).step_by(lanes as usize).map(|j| self.b.ins().iconst(types::I64, j)).collect();
                self.store_group(expr, vector, &starts, out_base, None)?;
            }
            for j in whole..last_len {
                let index = self.b.ins().iconst(types::I64, j);
                self.b.def_var(last, index);
                self.store_element(expr, out_base, out_dtype)?;
            }
        }
        Ok(())
    }

    /// The innermost axis of a kernel whose other axes' loops are open (or of a 0-d kernel).
    fn innermost_axis(
        &mut self,
        kernel: &Kernel,
        ndim: usize,
        bounds: impl Fn(&mut Self, usize) -> (Value, Value),
        out_base: Value,
        out_dtype: DType,
    ) -> Result<()> {
        // The innermost axis: a vector loop over whole vectors where the expression allows,
        // then a scalar loop over what is left.
        if ndim > 0 {
            let var = self.var(types::I64);
            self.inames.push(var);
        }
        let vector = if ndim > 0 { self.vector_type(&kernel.expr, out_dtype) } else { None };
        // A sum whose terms are adjacent in memory but whose outputs are not (`sum(x, axis=-1)`):
        // vectorized along its terms, one output at a time, rather than gathered along the output.
        let vector = match &kernel.expr {
            Expr::Reduce(r) if vector.is_some() && !self.reads_rows(&r.body) && self.sums_along_terms(r, out_dtype) => {
                None
            }
            _ => vector,
        };
        match (ndim, vector, &kernel.expr) {
            (0, ..) => {
                let value = self.emit(&kernel.expr)?.0;
                self.store(value, out_base, out_dtype);
            }
            // Rows streamed through the output: each element's terms combine in order (float64
            // sums in blocks, as in scalar code; single-precision sums, which add in double
            // precision, do not take this path).
            (_, Some(vector), Expr::Reduce(r))
                if !matches!(summation(r.op, out_dtype), Summation::Widened(_))
                    && self.reads_rows(&r.body)
                    && !self.is_short_sum(r, out_dtype) =>
            {
                let (start, end) = bounds(self, ndim - 1);
                self.reduction_outside(r, vector, start, end, out_base, out_dtype)?;
            }
            _ => {
                // The innermost axis: a vector loop over whole vectors where the expression
                // allows, then a scalar loop over what is left.
                let var = *self.inames.last().expect("ndim > 0");
                let (start, end) = bounds(self, ndim - 1);
                self.b.def_var(var, start);
                if let Some(vector) = vector {
                    // Four vectors at a time (independent accumulators, rows read once for all
                    // four), then one at a time.
                    self.vector_loop(&kernel.expr, vector, 4, end, out_base, None)?;
                    self.vector_loop(&kernel.expr, vector, 1, end, out_base, None)?;
                }
                let start = self.b.use_var(var);
                let inner = self.open_loop(var, start, end);
                self.store_element(&kernel.expr, out_base, out_dtype)?;
                self.close_loop(inner);
            }
        }
        Ok(())
    }

    /// Computes `expr` for the current output element and stores it.
    fn store_element(&mut self, expr: &Expr, out_base: Value, out_dtype: DType) -> Result<()> {
        let value = self.emit(expr)?.0;
        let offset = self.output_offset_split(None);
        let (addr, bytes) = self.split_address(out_base, offset, out_dtype.itemsize() as i64);
        self.store_at(value, addr, bytes, out_dtype);
        Ok(())
    }

    /// The lengths of the trailing output axes to unroll (see [`UNROLLED_ELEMENTS`]): the longest
    /// run of axes after the first (which threads split) whose lengths are known and multiply to
    /// at most that many elements, and none where `expr` is too large to copy that often.
    fn unrolled_tail(&self, expr: &Expr) -> Vec<i64> {
        let dims = self.ranges.output;
        let mut nodes = 0_i64;
        expr.walk(&mut |_| nodes += 1);
        let mut tail = Vec::new();
        let mut elements = 1_i64;
        for dim in dims.iter().skip(1).rev() {
            match dim.as_int() {
                // (checked: an array too large to run still compiles, with lengths up to 2**63)
                Some(len) if len > 0 && elements.checked_mul(len).is_some_and(|e| e <= UNROLLED_ELEMENTS) => {
                    elements *= len;
                    tail.insert(0, len);
                }
                _ => break,
            }
        }
        if elements < 2 || elements.saturating_mul(nodes) > UNROLLED_NODES {
            return Vec::new();
        }
        tail
    }

    /// The element offset of the current output element; `inner` replaces the innermost iname.
    fn output_offset(&mut self, inner: Option<Value>) -> Value {
        let split = self.output_offset_split(inner);
        self.join_offset(split)
    }

    /// [`Self::output_offset`] as a [`LinearOffset`].
    fn output_offset_split(&mut self, inner: Option<Value>) -> LinearOffset {
        let ndim = self.inames.len();
        let mut terms = Vec::with_capacity(ndim);
        for axis in 0..ndim {
            let i = match inner {
                Some(v) if axis == ndim - 1 => v,
                _ => self.b.use_var(self.inames[axis]),
            };
            terms.push((i, self.output_strides[axis]));
        }
        self.linear_offset(&terms)
    }

    /// `Σ index · stride` over `terms`, the products and sums of constants computed here. An
    /// index that is a value plus a constant (an unrolled `i + 2`) times a constant stride puts
    /// that constant's part in the constant offset, so that the vectors of an unrolled loop share
    /// one address and differ in the immediate offsets of their loads and stores (the same
    /// address modulo 2^64, as the wrapping arithmetic distributes).
    fn linear_offset(&mut self, terms: &[(Value, Value)]) -> LinearOffset {
        let mut offset = LinearOffset { dynamic: None, constant: 0 };
        for &(index, stride) in terms {
            let known = self.constant_value(index).zip(self.constant_value(stride));
            match known.and_then(|(i, s)| i.checked_mul(s)).and_then(|t| t.checked_add(offset.constant)) {
                Some(constant) => offset.constant = constant,
                None => {
                    let (rest, addend) = self.constant_addend(index);
                    let moved = self
                        .constant_value(stride)
                        .and_then(|s| addend.checked_mul(s))
                        .and_then(|t| t.checked_add(offset.constant));
                    // Otherwise (a stride known only when running, or a part too large) the
                    // index as it is.
                    let index = match moved {
                        Some(constant) => {
                            offset.constant = constant;
                            rest
                        }
                        None => index,
                    };
                    let term = self.b.ins().imul(index, stride);
                    offset.dynamic = Some(match offset.dynamic {
                        Some(sum) => self.b.ins().iadd(sum, term),
                        None => term,
                    });
                }
            }
        }
        offset
    }

    /// `offset` as one value.
    fn join_offset(&mut self, offset: LinearOffset) -> Value {
        let constant = self.b.ins().iconst(types::I64, offset.constant);
        match offset.dynamic {
            Some(dynamic) => self.b.ins().iadd(dynamic, constant),
            None => constant,
        }
    }

    /// The address of element `offset` of a buffer at `base` with elements of `itemsize` bytes,
    /// as `base + dynamic part` and the constant part in bytes, the immediate offset of the load
    /// or store. (An address `base + constant` is one Cranelift rematerializes in every block
    /// that uses it, which keeps its loads inside the loops even where they read the same
    /// element every time, as the rows of a small matrix; a load from `base` with an immediate
    /// offset depends on `base` alone and is hoisted.)
    fn split_address(&mut self, base: Value, offset: LinearOffset, itemsize: i64) -> (Value, i32) {
        let bytes = offset.constant.checked_mul(itemsize).and_then(|b| i32::try_from(b).ok());
        let (dynamic, bytes) = match bytes {
            Some(bytes) => (offset.dynamic, bytes),
            None => (Some(self.join_offset(offset)), 0),
        };
        let address = match dynamic {
            Some(elements) => {
                let scaled = self.b.ins().imul_imm_s(elements, itemsize);
                self.b.ins().iadd(base, scaled)
            }
            None => base,
        };
        (address, bytes)
    }

    /// `v` as a value plus a constant, where the translator built it as sums and differences of
    /// a value and constants (see [`Self::constant_value`]), however nested: an unrolled vector's
    /// `(j + 2) + 1` is `(j, 3)`, the same as the next vector's `j + 4 - 1`, so that both read at
    /// one address; `(v, 0)` otherwise. Stops where the constants' sum would overflow.
    fn constant_addend(&self, v: Value) -> (Value, i64) {
        let (mut rest, mut addend) = (v, 0i64);
        while let Some((inner, c)) = self.one_constant_addend(rest) {
            let Some(sum) = addend.checked_add(c) else { break };
            (rest, addend) = (inner, sum);
        }
        (rest, addend)
    }

    /// `v` as `(value, c)` where it is `value + c`, `c + value` or `value - c` with `c` a
    /// constant; `None` otherwise.
    fn one_constant_addend(&self, v: Value) -> Option<(Value, i64)> {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else { return None };
        if dfg.value_type(v) != types::I64 {
            return None;
        }
        match dfg.insts[inst] {
            InstructionData::Binary { opcode: Opcode::Iadd, args } => match self.constant_value(args[1]) {
                Some(c) => Some((args[0], c)),
                None => self.constant_value(args[0]).map(|c| (args[1], c)),
            },
            InstructionData::Binary { opcode: Opcode::Isub, args } => {
                self.constant_value(args[1]).and_then(i64::checked_neg).map(|c| (args[0], c))
            }
            _ => None,
        }
    }

    /// The value of `v` where the translator built it from integer constants with `iconst`,
    /// `iadd`, `isub` and `imul` (an unrolled index, a stride known at compile time; the builder's
    /// immediate forms are these too); `None` otherwise, or where the arithmetic would overflow.
    fn constant_value(&self, v: Value) -> Option<i64> {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else { return None };
        if dfg.value_type(v) != types::I64 {
            return None;
        }
        match dfg.insts[inst] {
            InstructionData::UnaryImm { opcode: Opcode::Iconst, imm } => Some(imm.bits()),
            InstructionData::Binary { opcode, args } => {
                let (a, b) = (self.constant_value(args[0])?, self.constant_value(args[1])?);
                match opcode {
                    Opcode::Iadd => a.checked_add(b),
                    Opcode::Isub => a.checked_sub(b),
                    Opcode::Imul => a.checked_mul(b),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn view(&mut self, buffers_ptr: Value, id: BufferId) -> Result<View> {
        let buffer = &self.program.buffers[id.0];
        let base = self.b.ins().load(types::I64, TRUSTED, buffers_ptr, (8 * id.0) as i32);
        let dims = buffer.shape.dims().to_vec();
        let extents: Vec<Value> = dims.iter().map(|d| self.dim_value(d)).collect::<Result<_>>()?;
        let mut strides = vec![self.b.ins().iconst(types::I64, 1); extents.len()];
        for axis in (0..extents.len().saturating_sub(1)).rev() {
            strides[axis] = self.b.ins().imul(strides[axis + 1], extents[axis + 1]);
        }
        Ok(View { dtype: buffer.dtype, base, extents, strides, dims })
    }

    /// The value of an affine length at run time.
    fn dim_value(&mut self, dim: &Dim) -> Result<Value> {
        let mut v = self.b.ins().iconst(types::I64, dim.constant());
        for (p, c) in dim.terms() {
            let s = *self.sizes.get(p).ok_or_else(|| bug(format!("size parameter {p} is not in the program")))?;
            let term = self.b.ins().imul_imm_s(s, c);
            v = self.b.ins().iadd(v, term);
        }
        Ok(v)
    }

    fn open_loop(&mut self, var: Variable, start: Value, end: Value) -> Loop {
        self.b.def_var(var, start);
        self.open_stepped_loop(var, end, 1)
    }

    /// A loop over `var` (already defined) that runs while `var + step <= end`, stepping by `step`;
    /// the builder is left in its body.
    fn open_stepped_loop(&mut self, var: Variable, end: Value, step: i64) -> Loop {
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        let i = self.b.use_var(var);
        let done = if step == 1 {
            self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, i, end)
        } else {
            let next = self.b.ins().iadd_imm_s(i, step);
            self.b.ins().icmp(IntCC::SignedGreaterThan, next, end)
        };
        self.branch_out_of_loop(done, exit, body);
        // The body and the exit have the header as their only predecessor. Sealing each block as
        // soon as its predecessors are all known lets the SSA builder read a variable the loop
        // does not change as the value from before the loop: sealed all at the end, it can keep
        // such a variable as a loop-carried block parameter (an outer loop's counter in an inner
        // loop), which makes everything computed from it look loop-variant to Cranelift, which
        // then computes it again on every iteration.
        self.b.seal_block(body);
        self.b.seal_block(exit);
        self.b.switch_to_block(body);
        Loop { var, header, exit, step }
    }

    /// A loop header's branch: to `exit` where `done`, else to `body`.
    ///
    /// The exit is the branch's first successor, and that order matters. Cranelift's
    /// optimizer places each computation in the dominator tree's preorder, visiting a block's
    /// children by decreasing postorder number; the first successor of a branch comes first in
    /// the postorder, so last in that visit. Its loop-invariant code motion keeps a stack of the
    /// loops entered, and drops a loop from it at the first block visited outside that loop,
    /// for good (Cranelift 0.135). With the body first, the exit was visited before the body,
    /// and nothing computed in the body was hoisted out of the loop: a row's offset `r * n`
    /// was computed again for every vector of the row.
    fn branch_out_of_loop(&mut self, done: Value, exit: Block, body: Block) {
        self.b.ins().brif(done, exit, &[], body, &[]);
    }

    fn close_loop(&mut self, l: Loop) {
        let i = self.b.use_var(l.var);
        let next = self.b.ins().iadd_imm_s(i, l.step);
        self.b.def_var(l.var, next);
        self.b.ins().jump(l.header, &[]);
        // The back edge is the header's last predecessor (see `open_stepped_loop`).
        self.b.seal_block(l.header);
        self.b.switch_to_block(l.exit);
    }

    fn address(&mut self, base: Value, offset: Value, dtype: DType) -> Value {
        let bytes = self.b.ins().imul_imm_s(offset, dtype.itemsize() as i64);
        self.b.ins().iadd(base, bytes)
    }

    fn load(&mut self, addr: Value, dtype: DType) -> Val {
        self.load_with(addr, dtype, TRUSTED)
    }

    fn load_with(&mut self, addr: Value, dtype: DType, flags: MemFlagsData) -> Val {
        self.load_at(addr, 0, dtype, flags)
    }

    /// The element at `addr + bytes`.
    fn load_at(&mut self, addr: Value, bytes: i32, dtype: DType, flags: MemFlagsData) -> Val {
        let ty = component_type(dtype);
        let re = self.b.ins().load(ty, flags, addr, bytes);
        if dtype.is_complex() {
            let im = self.b.ins().load(ty, flags, addr, bytes + ty.bytes() as i32);
            Val::Complex(re, im)
        } else {
            Val::Real(re)
        }
    }

    fn store(&mut self, value: Val, addr: Value, dtype: DType) {
        self.store_at(value, addr, 0, dtype)
    }

    /// Stores `value` at `addr + bytes`.
    fn store_at(&mut self, value: Val, addr: Value, bytes: i32, dtype: DType) {
        match value {
            Val::Real(v) => {
                self.b.ins().store(TRUSTED, v, addr, bytes);
            }
            Val::Complex(re, im) => {
                self.b.ins().store(TRUSTED, re, addr, bytes);
                self.b.ins().store(TRUSTED, im, addr, bytes + component_type(dtype).bytes() as i32);
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Expressions.

    /// The dtype of `e` without emitting code (the typing rules of `pytato_core::expr`).
    fn dtype_of(&self, e: &Expr) -> Result<DType> {
        self.program.expr_dtype(self.names, e)
    }

    fn emit(&mut self, e: &Expr) -> Result<(Val, DType)> {
        match e {
            Expr::Const(s) => Ok((self.constant(*s), s.dtype())),
            Expr::Var(n) => self.variable(n),
            Expr::Subscript(n, idx) => self.subscript(n, idx),
            Expr::Unary(op, a) => {
                let (v, d) = self.emit(a)?;
                Ok((self.unary(*op, v, d), d))
            }
            Expr::Binary(op, a, b) => {
                let (x, d) = self.emit(a)?;
                let (y, _) = self.emit(b)?;
                Ok((self.binary(*op, x, y, d)?, d))
            }
            Expr::Compare(op, a, b) => {
                let (x, d) = self.emit(a)?;
                let (y, _) = self.emit(b)?;
                Ok((Val::Real(self.compare(*op, x, y, d)), DType::Bool))
            }
            Expr::If(c, a, b) => self.if_then_else(c, a, b),
            Expr::Cast(to, a) => {
                let (v, from) = self.emit(a)?;
                Ok((self.cast(v, from, *to), *to))
            }
            Expr::Call(f, args) => self.call(*f, args),
            Expr::Reduce(r) => self.reduce(r),
        }
    }

    fn constant(&mut self, s: Scalar) -> Val {
        let ins = |b: &mut FunctionBuilder, ty: Type, bits: i64| b.ins().iconst(ty, bits);
        Val::Real(match s {
            Scalar::Bool(v) => ins(&mut self.b, types::I8, v as i64),
            Scalar::I8(v) => ins(&mut self.b, types::I8, v as i64),
            Scalar::I16(v) => ins(&mut self.b, types::I16, v as i64),
            Scalar::I32(v) => ins(&mut self.b, types::I32, v as i64),
            Scalar::I64(v) => ins(&mut self.b, types::I64, v),
            Scalar::U8(v) => ins(&mut self.b, types::I8, v as i64),
            Scalar::U16(v) => ins(&mut self.b, types::I16, v as i64),
            Scalar::U32(v) => ins(&mut self.b, types::I32, v as i64),
            Scalar::U64(v) => ins(&mut self.b, types::I64, v as i64),
            Scalar::F16(v) => ins(&mut self.b, types::I16, i64::from(v.to_bits())),
            Scalar::F32(v) => self.b.ins().f32const(v),
            Scalar::F64(v) => self.b.ins().f64const(v),
            Scalar::C64(z) => {
                let (re, im) = (self.b.ins().f32const(z.re), self.b.ins().f32const(z.im));
                return Val::Complex(re, im);
            }
            Scalar::C128(z) => {
                let (re, im) = (self.b.ins().f64const(z.re), self.b.ins().f64const(z.im));
                return Val::Complex(re, im);
            }
        })
    }

    fn zero(&mut self, dtype: DType) -> Val {
        self.constant(Scalar::zero(dtype))
    }

    fn variable(&mut self, name: &Arc<str>) -> Result<(Val, DType)> {
        match classify(name) {
            Some(Reserved::Iname(k)) => {
                let var = *self.inames.get(k).ok_or_else(|| bug(format!("iname {name} beyond the output's rank")))?;
                if let Some(v) =
                    self.inner_override.filter(|_| self.vector_iname.is_none() && k + 1 == self.inames.len())
                {
                    return Ok((Val::Real(v), DType::I64));
                }
                Ok((Val::Real(self.b.use_var(var)), DType::I64))
            }
            Some(Reserved::ReductionIname(_)) => {
                if let Some(v) = self.inner_override.filter(|_| self.vector_iname.as_ref() == Some(name)) {
                    return Ok((Val::Real(v), DType::I64));
                }
                let var =
                    *self.reduction_vars.get(name).ok_or_else(|| bug(format!("reduction iname {name} unbound")))?;
                Ok((Val::Real(self.b.use_var(var)), DType::I64))
            }
            _ => {
                if let Some(&v) = self.sizes.get(&**name) {
                    return Ok((Val::Real(v), DType::I64));
                }
                let id = self.names[&**name];
                let (base, dtype) = (self.views[&id].base, self.views[&id].dtype);
                match self.scalars.get(&id) {
                    Some(&value) => Ok((value, dtype)),
                    None => Ok((self.load(base, dtype), dtype)),
                }
            }
        }
    }

    fn subscript(&mut self, name: &str, indices: &[Expr]) -> Result<(Val, DType)> {
        let id = self.names[name];
        let (base, dtype, extents, strides, dims) = {
            let v = &self.views[&id];
            (v.base, v.dtype, v.extents.clone(), v.strides.clone(), v.dims.clone())
        };
        let mut terms = Vec::with_capacity(indices.len());
        let mut proved = true;
        for (axis, idx) in indices.iter().enumerate() {
            let (v, d) = self.emit(idx)?;
            let i = self.widen_to_i64(v.real(), d);
            if !self.ranges.proves_in_bounds(idx, &dims[axis]) {
                self.check_index(id, axis, i, extents[axis]);
                proved = false;
            }
            terms.push((i, strides[axis]));
        }
        let offset = self.linear_offset(&terms);
        if proved
            && offset.dynamic.is_none()
            && let Some(value) = self.entry_load(id, base, offset.constant, dtype)
        {
            return Ok((value, dtype));
        }
        let (addr, bytes) = self.split_address(base, offset, dtype.itemsize() as i64);
        let flags = if proved && !self.written.contains(&id) { INVARIANT } else { TRUSTED };
        Ok((self.load_at(addr, bytes, dtype, flags), dtype))
    }

    fn widen_to_i64(&mut self, v: Value, dtype: DType) -> Value {
        match component_type(dtype) {
            types::I64 => v,
            _ if is_signed(dtype) => self.b.ins().sextend(types::I64, v),
            _ => self.b.ins().uextend(types::I64, v),
        }
    }

    /// `index` must lie in `[0, extent)`, or the kernel returns 1 with the details in `error`.
    fn check_index(&mut self, id: BufferId, axis: usize, index: Value, extent: Value) {
        let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, index, extent);
        self.fail_unless(ok, id.0 as i64, axis as i64, index, extent);
    }

    /// Unless `ok`, the kernel returns 1 with `[buffer, axis, index, extent]` in `error` (see
    /// `KernelProgram::index_error`).
    fn fail_unless(&mut self, ok: Value, buffer: i64, axis: i64, index: Value, extent: Value) {
        let fail = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(ok, cont, &[], fail, &[]);
        self.b.switch_to_block(fail);
        let err = self.error_ptr.expect("set in the entry block");
        let buffer = self.b.ins().iconst(types::I64, buffer);
        let axis = self.b.ins().iconst(types::I64, axis);
        for (k, v) in [buffer, axis, index, extent].into_iter().enumerate() {
            self.b.ins().store(TRUSTED, v, err, (8 * k) as i32);
        }
        let code = self.b.ins().iconst(types::I32, 1);
        self.b.ins().return_(&[code]);
        self.b.switch_to_block(cont);
    }

    fn unary(&mut self, op: UnaryOp, v: Val, dtype: DType) -> Val {
        match (op, v) {
            (UnaryOp::Neg, Val::Complex(re, im)) => Val::Complex(self.b.ins().fneg(re), self.b.ins().fneg(im)),
            (UnaryOp::Neg, Val::Real(x)) if is_float(dtype) => Val::Real(self.b.ins().fneg(x)),
            (UnaryOp::Neg, Val::Real(x)) => Val::Real(self.b.ins().ineg(x)),
            (_, Val::Real(x)) if dtype == DType::Bool => Val::Real(self.b.ins().bxor_imm_s(x, 1)),
            (_, x) => Val::Real(self.b.ins().bnot(x.real())),
        }
    }

    fn binary(&mut self, op: BinaryOp, x: Val, y: Val, dtype: DType) -> Result<Val> {
        use BinaryOp::*;
        if dtype.is_complex() {
            let ((a, b), (c, d)) = (x.parts(), y.parts());
            return Ok(match op {
                Add => Val::Complex(self.b.ins().fadd(a, c), self.b.ins().fadd(b, d)),
                Sub => Val::Complex(self.b.ins().fsub(a, c), self.b.ins().fsub(b, d)),
                Mul => self.complex_mul((a, b), (c, d)),
                Div => {
                    let f = if dtype == DType::C64 { helpers::complex64_div } else { helpers::complex_div };
                    self.complex_helper(f as *const () as usize, dtype, &[a, b, c, d], None)
                }
                Pow => self.complex_helper(helpers::complex_pow as *const () as usize, dtype, &[a, b, c, d], None),
                _ => return Err(bug(format!("{op:?} on {dtype}"))),
            });
        }
        let (a, b) = (x.real(), y.real());
        let ins = self.b.ins();
        Ok(Val::Real(match op {
            Add if is_float(dtype) => ins.fadd(a, b),
            Sub if is_float(dtype) => ins.fsub(a, b),
            Mul if is_float(dtype) => ins.fmul(a, b),
            Div if is_float(dtype) => ins.fdiv(a, b),
            FloorDiv if is_float(dtype) => self.real_helper(helpers::floor_div_for(dtype), dtype, &[a, b]),
            Rem if is_float(dtype) => self.real_helper(helpers::remainder_for(dtype), dtype, &[a, b]),
            Pow if is_float(dtype) => self.real_helper(helpers::pow as *const () as usize, dtype, &[a, b]),
            Add => ins.iadd(a, b),
            Sub => ins.isub(a, b),
            Mul => ins.imul(a, b),
            FloorDiv | Rem => self.int_division(op == FloorDiv, a, b, dtype),
            Pow => self.int_pow(a, b, dtype),
            LogicalAnd | BitAnd => ins.band(a, b),
            LogicalOr | BitOr => ins.bor(a, b),
            BitXor => ins.bxor(a, b),
            Div => return Err(bug(format!("true division of {dtype}"))),
        }))
    }

    /// numpy's elementwise complex `multiply` (`pytato_runtime::math::complex::multiply`): the
    /// first product of each part fused into its sum. Cranelift emits `fma` where the host has
    /// it and calls the C library's otherwise: correctly rounded either way.
    fn complex_mul(&mut self, (a, b): (Value, Value), (c, d): (Value, Value)) -> Val {
        let bd = self.b.ins().fmul(b, d);
        let minus_bd = self.b.ins().fneg(bd);
        let bc = self.b.ins().fmul(b, c);
        Val::Complex(self.b.ins().fma(a, c, minus_bd), self.b.ins().fma(a, d, bc))
    }

    /// The textbook complex product, as numpy's `einsum`, `prod` and `cumprod` multiply
    /// (`pytato_runtime::math::complex::mul`, [`Func::TextbookProduct`]).
    fn complex_mul_textbook(&mut self, (a, b): (Value, Value), (c, d): (Value, Value)) -> Val {
        let ac = self.b.ins().fmul(a, c);
        let bd = self.b.ins().fmul(b, d);
        let ad = self.b.ins().fmul(a, d);
        let bc = self.b.ins().fmul(b, c);
        Val::Complex(self.b.ins().fsub(ac, bd), self.b.ins().fadd(ad, bc))
    }

    /// Python's `//` or `%` on integers without a trap: a zero divisor gives 0, and `MIN // -1`
    /// wraps (the divisor is replaced by 1 where it is 0 or -1, and those results patched in).
    fn int_division(&mut self, floor_div: bool, a: Value, b: Value, dtype: DType) -> Value {
        let ty = component_type(dtype);
        let zero = self.b.ins().iconst(ty, 0);
        let one = self.b.ins().iconst(ty, 1);
        let b_zero = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
        if !is_signed(dtype) {
            let safe = self.b.ins().select(b_zero, one, b);
            let r = if floor_div { self.b.ins().udiv(a, safe) } else { self.b.ins().urem(a, safe) };
            return self.b.ins().select(b_zero, zero, r);
        }
        let b_minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
        let special = self.b.ins().bor(b_zero, b_minus_one);
        let safe = self.b.ins().select(special, one, b);
        let q = self.b.ins().sdiv(a, safe);
        let r = self.b.ins().srem(a, safe);
        // Round toward negative infinity: a non-zero remainder whose sign differs from the divisor's.
        let r_nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
        let signs = self.b.ins().bxor(r, b);
        let signs_differ = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, signs, 0);
        let adjust = self.b.ins().band(r_nonzero, signs_differ);
        if floor_div {
            let q1 = self.b.ins().iadd_imm_s(q, -1);
            let q = self.b.ins().select(adjust, q1, q);
            let neg = self.b.ins().ineg(a);
            let q = self.b.ins().select(b_minus_one, neg, q);
            self.b.ins().select(b_zero, zero, q)
        } else {
            let rb = self.b.ins().iadd(r, b);
            let r = self.b.ins().select(adjust, rb, r);
            self.b.ins().select(special, zero, r)
        }
    }

    fn int_pow(&mut self, a: Value, b: Value, dtype: DType) -> Value {
        let (a64, b64) = (self.widen_to_i64(a, dtype), self.widen_to_i64(b, dtype));
        let f = if is_signed(dtype) {
            helpers::int_pow as *const () as usize
        } else {
            helpers::uint_pow as *const () as usize
        };
        let r = self.call_helper(f, &[a64, b64], &[types::I64, types::I64], Some(types::I64)).expect("returns");
        let ty = component_type(dtype);
        if ty == types::I64 { r } else { self.b.ins().ireduce(ty, r) }
    }

    /// Calls a real `f64` helper on `args` of a float dtype (widening `float32` and narrowing back).
    fn real_helper(&mut self, f: usize, dtype: DType, args: &[Value]) -> Value {
        let narrow = component_type(dtype) == types::F32;
        let wide: Vec<Value> =
            args.iter().map(|&a| if narrow { self.b.ins().fpromote(types::F64, a) } else { a }).collect();
        let params = vec![types::F64; wide.len()];
        let r = self.call_helper(f, &wide, &params, Some(types::F64)).expect("returns");
        if narrow { self.b.ins().fdemote(types::F32, r) } else { r }
    }

    /// Calls a complex helper `f(args as f64..., [code,] out)` and reads its result.
    fn complex_helper(&mut self, f: usize, dtype: DType, args: &[Value], code: Option<i64>) -> Val {
        let narrow = component_type(dtype) == types::F32;
        let mut call_args = Vec::new();
        let mut params = Vec::new();
        if let Some(c) = code {
            call_args.push(self.b.ins().iconst(types::I64, c));
            params.push(types::I64);
        }
        for &a in args {
            call_args.push(if narrow { self.b.ins().fpromote(types::F64, a) } else { a });
            params.push(types::F64);
        }
        let slot = *self.complex_slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3))
        });
        let out = self.b.ins().stack_addr(types::I64, slot, 0);
        call_args.push(out);
        params.push(types::I64);
        self.call_helper(f, &call_args, &params, None);
        let re = self.b.ins().stack_load(types::I64, types::F64, slot, 0);
        let im = self.b.ins().stack_load(types::I64, types::F64, slot, 8);
        if narrow {
            Val::Complex(self.b.ins().fdemote(types::F32, re), self.b.ins().fdemote(types::F32, im))
        } else {
            Val::Complex(re, im)
        }
    }

    fn call_helper(&mut self, address: usize, args: &[Value], params: &[Type], ret: Option<Type>) -> Option<Value> {
        let mut sig = Signature::new(self.b.func.signature.call_conv);
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns.extend(ret.map(AbiParam::new));
        let sig = self.b.import_signature(sig);
        let callee = self.b.ins().iconst(types::I64, address as i64);
        let call = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(call).first().copied()
    }

    fn compare(&mut self, op: CompareOp, x: Val, y: Val, dtype: DType) -> Value {
        if let (Val::Complex(a, b), Val::Complex(c, d)) = (x, y) {
            // Lexicographic, as numpy 2: real parts, then imaginary parts.
            let re_eq = self.b.ins().fcmp(FloatCC::Equal, a, c);
            return match op {
                CompareOp::Eq => {
                    let im_eq = self.b.ins().fcmp(FloatCC::Equal, b, d);
                    self.b.ins().band(re_eq, im_eq)
                }
                CompareOp::Ne => {
                    let re_ne = self.b.ins().fcmp(FloatCC::NotEqual, a, c);
                    let im_ne = self.b.ins().fcmp(FloatCC::NotEqual, b, d);
                    self.b.ins().bor(re_ne, im_ne)
                }
                _ => {
                    let cc = float_cc(op);
                    let strict = match op {
                        CompareOp::Le => FloatCC::LessThan,
                        CompareOp::Ge => FloatCC::GreaterThan,
                        _ => cc,
                    };
                    // A NaN imaginary part voids the order of the real parts (numpy's CLT, ...).
                    let re_strict = self.b.ins().fcmp(strict, a, c);
                    let no_nan = self.b.ins().fcmp(FloatCC::Ordered, b, d);
                    let re_strict = self.b.ins().band(re_strict, no_nan);
                    let im = self.b.ins().fcmp(cc, b, d);
                    let tie = self.b.ins().band(re_eq, im);
                    self.b.ins().bor(re_strict, tie)
                }
            };
        }
        let (a, b) = (x.real(), y.real());
        if is_float(dtype) {
            self.b.ins().fcmp(float_cc(op), a, b)
        } else {
            let signed = is_signed(dtype);
            let cc = match op {
                CompareOp::Eq => IntCC::Equal,
                CompareOp::Ne => IntCC::NotEqual,
                CompareOp::Lt if signed => IntCC::SignedLessThan,
                CompareOp::Le if signed => IntCC::SignedLessThanOrEqual,
                CompareOp::Gt if signed => IntCC::SignedGreaterThan,
                CompareOp::Ge if signed => IntCC::SignedGreaterThanOrEqual,
                CompareOp::Lt => IntCC::UnsignedLessThan,
                CompareOp::Le => IntCC::UnsignedLessThanOrEqual,
                CompareOp::Gt => IntCC::UnsignedGreaterThan,
                CompareOp::Ge => IntCC::UnsignedGreaterThanOrEqual,
            };
            self.b.ins().icmp(cc, a, b)
        }
    }

    /// `if` with only the selected branch evaluated (it may subscript out of range otherwise).
    fn if_then_else(&mut self, c: &Expr, a: &Expr, b: &Expr) -> Result<(Val, DType)> {
        let (cond, _) = self.emit(c)?;
        let then_block = self.b.create_block();
        let else_block = self.b.create_block();
        let merge = self.b.create_block();
        self.b.ins().brif(cond.real(), then_block, &[], else_block, &[]);
        let dtype = self.dtype_of(a)?;
        let ty = component_type(dtype);
        let vars: Vec<Variable> = (0..if dtype.is_complex() { 2 } else { 1 }).map(|_| self.var(ty)).collect();
        for (block, branch) in [(then_block, a), (else_block, b)] {
            self.b.switch_to_block(block);
            let (v, _) = self.emit(branch)?;
            self.define(&vars, v);
            self.b.ins().jump(merge, &[]);
        }
        self.b.switch_to_block(merge);
        Ok((self.read(&vars), dtype))
    }

    fn define(&mut self, vars: &[Variable], v: Val) {
        match v {
            Val::Real(x) => self.b.def_var(vars[0], x),
            Val::Complex(re, im) => {
                self.b.def_var(vars[0], re);
                self.b.def_var(vars[1], im);
            }
        }
    }

    fn read(&mut self, vars: &[Variable]) -> Val {
        if vars.len() == 2 {
            Val::Complex(self.b.use_var(vars[0]), self.b.use_var(vars[1]))
        } else {
            Val::Real(self.b.use_var(vars[0]))
        }
    }

    /// numpy's `astype`; see `pytato_core::expr` for the rules.
    fn cast(&mut self, v: Val, from: DType, to: DType) -> Val {
        if from == to {
            return v;
        }
        if from == DType::F16 {
            let wide = self.b.ins().uextend(types::I32, v.real());
            let wide =
                self.call_helper(helpers::f16_to_f32 as *const () as usize, &[wide], &[types::I32], Some(types::F32));
            return self.cast(Val::Real(wide.expect("one result")), DType::F32, to);
        }
        if to == DType::F16 {
            // numpy rounds once from the source: float64 directly, everything else through
            // float32 (exact below 2^24, and larger integers are infinities in float16 anyway).
            // A complex value gives its real part.
            let real = from.real_dtype();
            let bits = if real == DType::F64 {
                self.call_helper(
                    helpers::f64_to_f16 as *const () as usize,
                    &[v.real()],
                    &[types::F64],
                    Some(types::I32),
                )
            } else {
                let x = self.cast(Val::Real(v.real()), real, DType::F32).real();
                self.call_helper(helpers::f32_to_f16 as *const () as usize, &[x], &[types::F32], Some(types::I32))
            };
            return Val::Real(self.b.ins().ireduce(types::I16, bits.expect("one result")));
        }
        if to == DType::Bool {
            let nonzero = |t: &mut Self, x: Value, d: DType| -> Value {
                if d.is_inexact() {
                    let z = t.zero(d.real_dtype()).real();
                    t.b.ins().fcmp(FloatCC::NotEqual, x, z)
                } else {
                    t.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
                }
            };
            return Val::Real(match v {
                Val::Complex(re, im) => {
                    let (a, b) = (nonzero(self, re, from), nonzero(self, im, from));
                    self.b.ins().bor(a, b)
                }
                Val::Real(x) => nonzero(self, x, from),
            });
        }
        match (v, to.is_complex()) {
            (Val::Complex(re, im), true) => {
                let (f, t) = (from.real_dtype(), to.real_dtype());
                Val::Complex(self.cast_real(re, f, t), self.cast_real(im, f, t))
            }
            (Val::Complex(re, _), false) => Val::Real(self.cast_real(re, from.real_dtype(), to)),
            (Val::Real(x), true) => {
                let t = to.real_dtype();
                let re = self.cast_real(x, from, t);
                let im = self.zero(t).real();
                Val::Complex(re, im)
            }
            (Val::Real(x), false) => Val::Real(self.cast_real(x, from, to)),
        }
    }

    /// Casts between real dtypes (bool as a source included).
    fn cast_real(&mut self, x: Value, from: DType, to: DType) -> Value {
        let (tf, tt) = (component_type(from), component_type(to));
        match (is_float(from), is_float(to)) {
            (true, true) if tf == tt => x,
            (true, true) if tt == types::F64 => self.b.ins().fpromote(types::F64, x),
            (true, true) => self.b.ins().fdemote(types::F32, x),
            (false, true) => {
                let wide = self.widen_to_i64(x, from);
                if is_signed(from) {
                    self.b.ins().fcvt_from_sint(tt, wide)
                } else {
                    self.b.ins().fcvt_from_uint(tt, wide)
                }
            }
            (true, false) => {
                // numpy's x86-64 results (`pytato_runtime::math::float_to_int`).
                let x = if tf == types::F32 { self.b.ins().fpromote(types::F64, x) } else { x };
                let r = match to {
                    DType::I64 => self.cvtt(x, 64),
                    DType::U64 => self.cvtt_unsigned(x, 64),
                    DType::U32 => self.cvtt(x, 64),
                    _ => self.cvtt(x, 32),
                };
                if tt == types::I64 { r } else { self.b.ins().ireduce(tt, r) }
            }
            (false, false) => {
                if tt.bits() > tf.bits() {
                    if is_signed(from) { self.b.ins().sextend(tt, x) } else { self.b.ins().uextend(tt, x) }
                } else if tt.bits() < tf.bits() {
                    self.b.ins().ireduce(tt, x)
                } else {
                    x
                }
            }
        }
    }

    /// x86-64's `cvttsd2si` of the float64 `x` into `bits` bits, as an `i64`: truncation toward
    /// zero in range, the smallest `bits`-bit integer for NaN and out-of-range values.
    fn cvtt(&mut self, x: Value, bits: u32) -> Value {
        let limit = 2f64.powi(bits as i32 - 1);
        let (lo, hi) = (self.b.ins().f64const(-limit - 1.0), self.b.ins().f64const(limit));
        let above_lo = self.b.ins().fcmp(FloatCC::GreaterThan, x, lo);
        let below_hi = self.b.ins().fcmp(FloatCC::LessThan, x, hi);
        let in_range = self.b.ins().band(above_lo, below_hi);
        let value = self.b.ins().fcvt_to_sint_sat(types::I64, x);
        let min = self.b.ins().iconst(types::I64, -(1i128 << (bits - 1)) as i64);
        self.b.ins().select(in_range, value, min)
    }

    /// numpy's x86-64 float64 to `uint64` (`bits` = 64): from `2^(bits-1)` on, convert
    /// `x - 2^(bits-1)` and set the top bit; below, the signed conversion.
    fn cvtt_unsigned(&mut self, x: Value, bits: u32) -> Value {
        let top = self.b.ins().f64const(2f64.powi(bits as i32 - 1));
        let big = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, x, top);
        let shifted = self.b.ins().fsub(x, top);
        let high = self.cvtt(shifted, bits);
        let high = self.b.ins().bxor_imm_s(high, (1u64 << (bits - 1)) as i64);
        let low = self.cvtt(x, bits);
        self.b.ins().select(big, high, low)
    }

    fn call(&mut self, func: Func, args: &[Expr]) -> Result<(Val, DType)> {
        use Func::*;
        if func == Zero {
            // Zero of the argument's dtype; the argument is not evaluated.
            let dtype = self.dtype_of(&args[0])?;
            return Ok((self.zero(dtype), dtype));
        }
        if func == NormalizeIndex {
            return self.normalize_index(args);
        }
        if func == IntegerExponent {
            // numpy refuses a negative integer exponent: the program fails with its value.
            let (y, dtype) = self.emit(&args[0])?;
            let y = y.real();
            let ok = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, y, 0);
            let value = if dtype == DType::I64 { y } else { self.b.ins().sextend(types::I64, y) };
            let zero = self.b.ins().iconst(types::I64, 0);
            self.fail_unless(ok, NEGATIVE_EXPONENT, 0, value, zero);
            return Ok((Val::Real(y), dtype));
        }
        if func == RequireNonNegative {
            // numpy's refusals of values: the program fails with the check's error.
            let check = match &args[1] {
                Expr::Const(Scalar::I64(code)) => *code,
                other => return Err(bug(format!("require_non_negative with check {other}"))),
            };
            let (v, _) = self.emit(&args[0])?;
            let v = v.real();
            let ok = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, v, 0);
            let zero = self.b.ins().iconst(types::I64, 0);
            self.fail_unless(ok, VALUE_CHECK, check, v, zero);
            return Ok((Val::Real(v), DType::I64));
        }
        let (x, dtype) = self.emit(&args[0])?;
        let result_dtype = func.result_dtype(dtype).map_err(|why| bug(format!("{}({dtype}): {why}", func.name())))?;
        if func == TextbookProduct {
            let (y, _) = self.emit(&args[1])?;
            return Ok((self.complex_mul_textbook(x.parts(), y.parts()), result_dtype));
        }
        if matches!(func, Gcd | Lcm) {
            let (y, _) = self.emit(&args[1])?;
            return Ok((Val::Real(self.gcd_lcm(func, x.real(), y.real(), dtype)), result_dtype));
        }
        if func == FrexpExponent {
            let wide = if component_type(dtype) == types::F32 {
                self.b.ins().fpromote(types::F64, x.real())
            } else {
                x.real()
            };
            let f = helpers::frexp_exponent as *const () as usize;
            let e = self.call_helper(f, &[wide], &[types::F64], Some(types::I64)).expect("returns");
            return Ok((Val::Real(self.b.ins().ireduce(types::I32, e)), result_dtype));
        }
        if func == FrexpMantissa {
            let f = helpers::frexp_mantissa as *const () as usize;
            return Ok((Val::Real(self.real_helper(f, dtype, &[x.real()])), result_dtype));
        }
        if func.arity() == 2 {
            let (y, _) = self.emit(&args[1])?;
            return Ok((self.call2(func, x.real(), y.real(), dtype)?, result_dtype));
        }
        let code = Func::ALL.iter().position(|&f| f == func).expect("every function is in ALL") as i64;
        let v = match (func, x) {
            (Real, Val::Complex(re, _)) => Val::Real(re),
            (Imag, Val::Complex(_, im)) => Val::Real(im),
            (Conj, Val::Complex(re, im)) => Val::Complex(re, self.b.ins().fneg(im)),
            (Real | Conj, v) => v,
            (Imag, _) => self.zero(dtype),
            (IsNan, Val::Complex(re, im)) => {
                let a = self.b.ins().fcmp(FloatCC::Unordered, re, re);
                let b = self.b.ins().fcmp(FloatCC::Unordered, im, im);
                Val::Real(self.b.ins().bor(a, b))
            }
            (IsNan, Val::Real(v)) => Val::Real(self.b.ins().fcmp(FloatCC::Unordered, v, v)),
            (Abs, Val::Complex(re, im)) if dtype == DType::C64 => {
                Val::Real(self.real_helper(helpers::complex64_abs as *const () as usize, dtype, &[re, im]))
            }
            (Abs, Val::Complex(re, im)) => Val::Real(
                self.complex_helper(helpers::complex_unary as *const () as usize, dtype, &[re, im], Some(code)).real(),
            ),
            (_, Val::Complex(re, im)) => {
                self.complex_helper(helpers::complex_unary as *const () as usize, dtype, &[re, im], Some(code))
            }
            (Abs, Val::Real(v)) if is_float(dtype) => Val::Real(self.b.ins().fabs(v)),
            (Abs, Val::Real(v)) if is_signed(dtype) => {
                let neg = self.b.ins().ineg(v);
                let below = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, v, 0);
                Val::Real(self.b.ins().select(below, neg, v))
            }
            (Abs, v) => v,
            (Sqrt, Val::Real(v)) => Val::Real(self.b.ins().sqrt(v)),
            (Floor, Val::Real(v)) => Val::Real(self.b.ins().floor(v)),
            (Ceil, Val::Real(v)) => Val::Real(self.b.ins().ceil(v)),
            (Rint, Val::Real(v)) => Val::Real(self.b.ins().nearest(v)),
            (Signbit, Val::Real(v)) => {
                let int = if component_type(dtype) == types::F32 { types::I32 } else { types::I64 };
                let bits = self.b.ins().bitcast(int, MemFlagsData::new(), v);
                Val::Real(self.b.ins().icmp_imm_s(IntCC::SignedLessThan, bits, 0))
            }
            (f, Val::Real(v)) if trig::handles(f, dtype) => Val::Real(self.sin_cos_f64(f, v, types::F64)),
            (f, Val::Real(v)) => {
                let address = helpers::real_unary(f).ok_or_else(|| bug(format!("no helper for {}", f.name())))?;
                Val::Real(self.real_helper(address, dtype, &[v]))
            }
        };
        Ok((v, result_dtype))
    }

    /// numpy's `gcd` or `lcm` of two integers: on their magnitudes as unsigned 64-bit integers (a
    /// signed value sign-extended first, so `|i8::MIN|` is 128), the result's low bits kept.
    fn gcd_lcm(&mut self, func: Func, a: Value, b: Value, dtype: DType) -> Value {
        let magnitude = |t: &mut Self, v: Value| {
            let wide = t.widen_to_i64(v, dtype);
            if is_signed(dtype) { t.b.ins().iabs(wide) } else { wide }
        };
        let (a, b) = (magnitude(self, a), magnitude(self, b));
        let f = if func == Func::Gcd { helpers::gcd as *const () as usize } else { helpers::lcm as *const () as usize };
        let r = self.call_helper(f, &[a, b], &[types::I64, types::I64], Some(types::I64)).expect("returns");
        let ty = component_type(dtype);
        if ty == types::I64 { r } else { self.b.ins().ireduce(ty, r) }
    }

    /// `normalize_index(i, n, axis)`: `i`, or `i + n` for negative `i`; outside `[-n, n)` the kernel
    /// fails with the index-array record.
    fn normalize_index(&mut self, args: &[Expr]) -> Result<(Val, DType)> {
        let (i, _) = self.emit(&args[0])?;
        let (n, _) = self.emit(&args[1])?;
        let axis = match &args[2] {
            Expr::Const(Scalar::I64(a)) => *a,
            other => return Err(bug(format!("normalize_index with axis {other}"))),
        };
        let (i, n) = (i.real(), n.real());
        let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, i, 0);
        let wrapped = self.b.ins().iadd(i, n);
        let j = self.b.ins().select(negative, wrapped, i);
        let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, j, n);
        self.fail_unless(ok, INDEX_ARRAY, axis, i, n);
        Ok((Val::Real(j), DType::I64))
    }

    fn call2(&mut self, func: Func, a: Value, b: Value, dtype: DType) -> Result<Val> {
        Ok(Val::Real(match func {
            Func::MakeComplex => return Ok(Val::Complex(a, b)),
            Func::Arctan2 => self.real_helper(helpers::atan2 as *const () as usize, dtype, &[a, b]),
            Func::Hypot => self.real_helper(helpers::hypot as *const () as usize, dtype, &[a, b]),
            Func::LogAddExp => self.real_helper(helpers::logaddexp as *const () as usize, dtype, &[a, b]),
            Func::Fmod => self.real_helper(helpers::fmod as *const () as usize, dtype, &[a, b]),
            Func::Ldexp => self.real_helper(helpers::ldexp as *const () as usize, dtype, &[a, b]),
            Func::Copysign => self.b.ins().fcopysign(a, b),
            Func::Nextafter => {
                let helper = if dtype == DType::F32 { helpers::nextafter_f32 } else { helpers::nextafter };
                self.real_helper(helper as *const () as usize, dtype, &[a, b])
            }
            Func::Maximum => self.max_min(true, a, b, dtype),
            Func::Minimum => self.max_min(false, a, b, dtype),
            other => return Err(bug(format!("{} is not binary", other.name()))),
        }))
    }

    /// numpy's `maximum`/`minimum` of two real values: `a` if it is NaN or strictly beyond `b`,
    /// else `b` (NaN propagates; of `-0.0` and `0.0` the second wins, unlike IEEE's maximum).
    fn max_min(&mut self, max: bool, a: Value, b: Value, dtype: DType) -> Value {
        if is_float(dtype) {
            let a_nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
            let beyond = self.b.ins().fcmp(if max { FloatCC::GreaterThan } else { FloatCC::LessThan }, a, b);
            let keep_a = self.b.ins().bor(a_nan, beyond);
            return self.b.ins().select(keep_a, a, b);
        }
        if dtype == DType::Bool {
            return if max { self.b.ins().bor(a, b) } else { self.b.ins().band(a, b) };
        }
        let cc = match (max, is_signed(dtype)) {
            (true, true) => IntCC::SignedGreaterThan,
            (true, false) => IntCC::UnsignedGreaterThan,
            (false, true) => IntCC::SignedLessThan,
            (false, false) => IntCC::UnsignedLessThan,
        };
        let a_wins = self.b.ins().icmp(cc, a, b);
        self.b.ins().select(a_wins, a, b)
    }

    /// Variables holding one value of `dtype` (two for complex), set to `value`.
    fn vars_of(&mut self, dtype: DType, value: Val) -> Vec<Variable> {
        let ty = component_type(dtype);
        let vars: Vec<Variable> = (0..if dtype.is_complex() { 2 } else { 1 }).map(|_| self.var(ty)).collect();
        self.define(&vars, value);
        vars
    }

    /// A reduction: an accumulator, one loop per iname (the first slowest). Float and complex sums
    /// follow `pytato_runtime::math`'s summation scheme: single precision in double, blocks of
    /// `SUM_BLOCK` terms in `SUM_LANES` lanes, the blocks in the canonical tree.
    fn reduce(&mut self, r: &Reduce) -> Result<(Val, DType)> {
        let dtype = self.dtype_of(&r.body)?;
        let scheme = summation(r.op, dtype);
        if let (Summation::Widened(_) | Summation::Blocked, Some(terms)) = (scheme, self.short_sum_terms(r)) {
            let wide = scheme.lane_dtype(dtype).expect("sums have lanes");
            let total = self.short_scalar_sum(r, &terms, dtype, wide)?;
            return Ok((self.cast(total, wide, dtype), dtype));
        }
        match scheme {
            Summation::Widened(wide) => {
                let total = self.blocked_sum(r, dtype, wide)?;
                Ok((self.cast(total, wide, dtype), dtype))
            }
            Summation::Blocked if self.sums_along_terms(r, dtype) => Ok((self.blocked_sum_along_terms(r)?, dtype)),
            Summation::Blocked => Ok((self.blocked_sum(r, dtype, dtype)?, dtype)),
            Summation::InOrder => {
                let first = self.constant(r.first_value(dtype));
                let acc = self.vars_of(dtype, first);
                let loops = self.open_reduction_loops(r)?;
                let (x, _) = self.emit(&r.body)?;
                let current = self.read(&acc);
                let next = self.combine(r.op, current, x, dtype);
                self.define(&acc, next);
                self.close_reduction_loops(r, loops);
                Ok((self.read(&acc), dtype))
            }
        }
    }

    /// A blocked sum (see [`Translator::reduce`]) one term at a time, the terms (of `term_dtype`)
    /// converted to `dtype`: the lanes of the block live in a stack slot, lane `count % SUM_LANES`
    /// taking the next term, so each lane's additions depend only on that lane's; the blocks'
    /// totals go into the canonical tree.
    fn blocked_sum(&mut self, r: &Reduce, term_dtype: DType, dtype: DType) -> Result<Val> {
        let zero = self.zero(dtype);
        let size = dtype.itemsize() as i64;
        let tree = self.new_tree(size);
        let lanes = self.lane_slot(size);
        self.clear_lanes(lanes, size, &mut |t, addr| t.store(zero, addr, dtype));
        let count = self.var(types::I64);
        let none = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(count, none);
        let merge = &mut |t: &mut Self, left, right| {
            let (a, b) = (t.load(left, dtype), t.load(right, dtype));
            let sum = t.combine(ReduceOp::Sum, a, b, dtype);
            t.store(sum, left, dtype);
        };
        let write_block = &mut |t: &mut Self, entry| {
            let block = t.lane_tree(lanes, size, &mut |t, addr| t.load(addr, dtype), &mut |t, a, b| {
                t.combine(ReduceOp::Sum, a, b, dtype)
            });
            t.store(block, entry, dtype);
        };
        let loops = self.open_reduction_loops(r)?;
        let (x, _) = self.emit(&r.body)?;
        let x = self.cast(x, term_dtype, dtype);
        let lane = self.lane_address(lanes, size, count);
        let current = self.load(lane, dtype);
        let next = self.combine(r.op, current, x, dtype);
        self.store(next, lane, dtype);
        self.count_and_flush(count, &mut |t| {
            t.tree_push(&tree, write_block, merge);
            t.clear_lanes(lanes, size, &mut |t, addr| t.store(zero, addr, dtype));
        });
        self.close_reduction_loops(r, loops);
        let last_block = &mut |t: &mut Self| {
            t.lane_tree(lanes, size, &mut |t, addr| t.load(addr, dtype), &mut |t, a, b| {
                t.combine(ReduceOp::Sum, a, b, dtype)
            })
        };
        Ok(self.tree_total(&tree, count, dtype, last_block, write_block, merge))
    }

    /// A stack slot for the [`SUM_LANES`] lanes of a blocked sum, `lane_bytes` bytes per lane.
    fn lane_slot(&mut self, lane_bytes: i64) -> StackSlot {
        let bytes = (SUM_LANES as i64 * lane_bytes) as u32;
        self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4))
    }

    /// The address of lane `count % SUM_LANES` in `lanes`.
    fn lane_address(&mut self, lanes: StackSlot, lane_bytes: i64, count: Variable) -> Value {
        let n = self.b.use_var(count);
        let lane = self.b.ins().band_imm_s(n, SUM_LANES as i64 - 1);
        let offset = self.b.ins().imul_imm_s(lane, lane_bytes);
        let base = self.b.ins().stack_addr(types::I64, lanes, 0);
        self.b.ins().iadd(base, offset)
    }

    /// Runs `clear` on the address of every lane (which sets it to zero).
    fn clear_lanes(&mut self, lanes: StackSlot, lane_bytes: i64, clear: &mut dyn FnMut(&mut Self, Value)) {
        for l in 0..SUM_LANES as i64 {
            let addr = self.b.ins().stack_addr(types::I64, lanes, (l * lane_bytes) as i32);
            clear(self, addr);
        }
    }

    /// The lanes' sum in [`lane_tree`]'s order: `load` reads a lane at an address, `add` adds.
    fn lane_tree<V: Clone>(
        &mut self,
        lanes: StackSlot,
        lane_bytes: i64,
        load: &mut dyn FnMut(&mut Self, Value) -> V,
        add: &mut dyn FnMut(&mut Self, V, V) -> V,
    ) -> V {
        let values: [V; SUM_LANES] = std::array::from_fn(|l| {
            let addr = self.b.ins().stack_addr(types::I64, lanes, (l as i64 * lane_bytes) as i32);
            load(self, addr)
        });
        lane_tree(values, &mut |a, b| Ok::<V, ()>(add(self, a, b))).unwrap_or_else(|()| unreachable!("infallible"))
    }

    /// Counts one term in `count`; every `SUM_BLOCK` terms runs `flush` (which adds the block
    /// sums into the totals) and restarts the count.
    fn count_and_flush(&mut self, count: Variable, flush: &mut dyn FnMut(&mut Self)) {
        self.count_and_flush_by(count, 1, flush);
    }

    /// [`Translator::count_and_flush`] for `step` terms at once (`step` divides `SUM_BLOCK`).
    fn count_and_flush_by(&mut self, count: Variable, step: i64, flush: &mut dyn FnMut(&mut Self)) {
        let n = self.b.use_var(count);
        let n = self.b.ins().iadd_imm_s(n, step);
        self.b.def_var(count, n);
        let full = self.b.ins().icmp_imm_s(IntCC::Equal, n, SUM_BLOCK as i64);
        let flush_block = self.b.create_block();
        let merge = self.b.create_block();
        self.b.ins().brif(full, flush_block, &[], merge, &[]);
        self.b.seal_block(flush_block);
        self.b.switch_to_block(flush_block);
        flush(self);
        let none = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(count, none);
        self.b.ins().jump(merge, &[]);
        // Both predecessors are known: sealed now, a variable the loop body does not change reads
        // as the value from before it here too (see `open_stepped_loop`), rather than as a
        // parameter that would make the loop's header carry it.
        self.b.seal_block(merge);
        self.b.switch_to_block(merge);
    }

    /// Binds the reduction's inames (for code and for bounds proofs) and opens their loops.
    fn open_reduction_loops(&mut self, r: &Reduce) -> Result<Vec<Loop>> {
        self.open_reduction_loops_stepped(r, 1)
    }

    /// [`Translator::open_reduction_loops`] with the last iname's loop taking `step` values at a
    /// time (it runs while all of them are in range).
    fn open_reduction_loops_stepped(&mut self, r: &Reduce, step: i64) -> Result<Vec<Loop>> {
        let mut bounds = Vec::with_capacity(r.inames.len());
        for rb in &r.inames {
            let (lower, upper) = (self.dim_value(&rb.lower)?, self.dim_value(&rb.upper)?);
            let var = self.var(types::I64);
            self.reduction_vars.insert(rb.iname.clone(), var);
            self.ranges.reductions.insert(rb.iname.clone(), (rb.lower.clone(), rb.upper.clone()));
            bounds.push((var, lower, upper));
        }
        let last = bounds.len() - 1;
        Ok(bounds
            .into_iter()
            .enumerate()
            .map(|(k, (var, lower, upper))| {
                self.b.def_var(var, lower);
                self.open_stepped_loop(var, upper, if k == last { step } else { 1 })
            })
            .collect())
    }

    /// Closes what [`Translator::open_reduction_loops`] opened.
    fn close_reduction_loops(&mut self, r: &Reduce, loops: Vec<Loop>) {
        for l in loops.into_iter().rev() {
            self.close_loop(l);
        }
        self.unbind_reduction_inames(r);
    }

    /// Forgets the reduction's inames (their variables and their ranges for bounds proofs).
    fn unbind_reduction_inames(&mut self, r: &Reduce) {
        for rb in &r.inames {
            self.reduction_vars.remove(&rb.iname);
            self.ranges.reductions.remove(&rb.iname);
        }
    }

    fn combine(&mut self, op: ReduceOp, acc: Val, x: Val, dtype: DType) -> Val {
        let (a, b) = (acc.real(), x.real());
        match op {
            ReduceOp::Sum => self.binary(BinaryOp::Add, acc, x, dtype).expect("sum of a numeric dtype"),
            ReduceOp::Product if dtype.is_complex() => self.complex_mul_textbook(acc.parts(), x.parts()),
            ReduceOp::Product => self.binary(BinaryOp::Mul, acc, x, dtype).expect("product of a numeric dtype"),
            ReduceOp::Max => Val::Real(self.max_min(true, a, b, dtype)),
            ReduceOp::Min => Val::Real(self.max_min(false, a, b, dtype)),
            ReduceOp::All => Val::Real(self.b.ins().band(a, b)),
            ReduceOp::Any => Val::Real(self.b.ins().bor(a, b)),
        }
    }
}

fn float_cc(op: CompareOp) -> FloatCC {
    match op {
        CompareOp::Eq => FloatCC::Equal,
        CompareOp::Ne => FloatCC::NotEqual,
        CompareOp::Lt => FloatCC::LessThan,
        CompareOp::Le => FloatCC::LessThanOrEqual,
        CompareOp::Gt => FloatCC::GreaterThan,
        CompareOp::Ge => FloatCC::GreaterThanOrEqual,
    }
}

#[cfg(test)]
mod tests {
    use cranelift_codegen::ir::{Block, Function, Inst, InstructionData, Opcode, Type, UserFuncName, types};
    use cranelift_frontend::FunctionBuilderContext;
    use pytato_core::{Array, DType, Dim};
    use pytato_frontend as pt;
    use pytato_transform::kernel::{KernelOptions, build_kernel_program};

    use super::{kernel_signature, translate};

    /// The function of `array`'s program, which must be one kernel, as translated (before
    /// Cranelift's optimizations).
    fn translated(array: &Array) -> Function {
        let program = build_kernel_program(&array.into(), KernelOptions::default()).unwrap();
        assert_eq!(program.kernels.len(), 1, "{program}");
        let isa = crate::jit::isa().unwrap();
        let names = program.buffer_ids();
        let mut func =
            Function::with_name_signature(UserFuncName::user(0, 0), kernel_signature(isa.default_call_conv()));
        let mut fctx = FunctionBuilderContext::new();
        translate(&program, &names, &[&program.kernels[0]], &mut func, &mut fctx, isa.frontend_config(), true).unwrap();
        func
    }

    /// [`translated`] after Cranelift's optimizations, with its loops analysed.
    fn optimized(array: &Array) -> cranelift_codegen::Context {
        let isa = crate::jit::isa().unwrap();
        let mut ctx = cranelift_codegen::Context::for_function(translated(array));
        ctx.optimize(&*isa, &mut cranelift_codegen::control::ControlPlane::default()).unwrap();
        ctx.compute_cfg();
        ctx.compute_domtree();
        ctx.compute_loop_analysis();
        ctx
    }

    /// The loads of `ty` values in `func`, each with its block, in layout order.
    fn loads(func: &Function, ty: Type) -> Vec<(Block, Inst)> {
        let is_load = |inst: Inst| {
            matches!(func.dfg.insts[inst], InstructionData::Load { opcode: Opcode::Load, .. })
                && func.dfg.value_type(func.dfg.first_result(inst)) == ty
        };
        func.layout
            .blocks()
            .flat_map(|block| {
                func.layout.block_insts(block).filter(move |&inst| is_load(inst)).map(move |inst| (block, inst))
            })
            .collect()
    }

    /// The float64 loads in the entry block and elsewhere of the function of DG's volume term
    /// on elements of `np × np` nodes (`d` a matrix input of that size, read along both axes).
    fn volume_loads(np: i64) -> (usize, usize) {
        let u = pt::placeholder("u", [Dim::param("e"), Dim::new(np), Dim::new(np)], DType::F64).unwrap();
        let d = pt::placeholder("d", [Dim::new(np), Dim::new(np)], DType::F64).unwrap();
        let x = pt::einsum("ik,ekj->eij", &[&d, &u]).unwrap();
        let y = pt::einsum("jk,eik->eij", &[&d, &u]).unwrap();
        let func = translated(&(&x + &y));
        let entry = func.layout.entry_block().unwrap();
        let loads = loads(&func, types::F64);
        let inside = loads.iter().filter(|&&(block, _)| block == entry).count();
        (inside, loads.len() - inside)
    }

    /// Where an element's nodes are unrolled, every read of the small matrix has a constant
    /// address: each of its elements is loaded once, in the entry block, not per element of the
    /// mesh (Cranelift would not hoist them out of the loop). With 7 × 7 nodes only the last axis
    /// is unrolled: the reads along it still load every element of `d` once there; with 33, whose
    /// sums are loops, none is.
    #[test]
    fn a_small_matrix_read_at_constant_addresses_is_loaded_once_before_the_loops() {
        for np in [2, 3, 4, 5, 7] {
            let (entry, loops) = volume_loads(np);
            assert_eq!(entry, (np * np) as usize, "{np} nodes: each element of d once in the entry block");
            assert!(loops > 0, "{np} nodes: u is read in the loop");
        }
        assert_eq!(volume_loads(33).0, 0, "33 nodes: nothing read at a constant address");
    }

    /// No loop header of the translated code has a redundant parameter (every predecessor passing
    /// either one same value or the parameter itself): an outer loop's counter read in an inner
    /// loop is the outer value, not a parameter of the inner loop's header, which Cranelift would
    /// take for a value the inner loop changes (and compute what depends on it on every
    /// iteration). A loop header is a block some later block branches back to.
    #[test]
    fn loops_carry_only_what_they_change() {
        use std::collections::{BTreeSet, HashMap};
        let a = pt::placeholder("a", [Dim::param("m"), Dim::param("n")], DType::F64).unwrap();
        for array in [pt::sum(&a, 0).unwrap(), pt::sum(&a, 1).unwrap(), &a * 2.0] {
            let mut func = translated(&array);
            func.dfg.resolve_all_aliases();
            let order: HashMap<_, usize> = func.layout.blocks().enumerate().map(|(i, b)| (b, i)).collect();
            let mut headers = BTreeSet::new();
            let mut passed: HashMap<(_, usize), BTreeSet<_>> = HashMap::new();
            for block in func.layout.blocks() {
                for inst in func.layout.block_insts(block) {
                    for call in
                        func.dfg.insts[inst].branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
                    {
                        let target = call.block(&func.dfg.value_lists);
                        if order[&block] >= order[&target] {
                            headers.insert(target);
                        }
                        for (k, arg) in call.args(&func.dfg.value_lists).enumerate() {
                            passed.entry((target, k)).or_default().insert(arg.as_value().unwrap());
                        }
                    }
                }
            }
            assert!(headers.len() >= 2, "{array}: loops over the output and the terms");
            for ((block, k), values) in passed.into_iter().filter(|((block, _), _)| headers.contains(block)) {
                let param = func.dfg.block_params(block)[k];
                let others: BTreeSet<_> = values.into_iter().filter(|&v| v != param).collect();
                assert!(others.len() > 1, "{array}: parameter {k} of {block} is always {others:?}");
            }
        }
    }

    /// The vectors of an unrolled loop differ in the immediate offsets of their loads, not in
    /// their addresses: a column sum's loop over a row reads four vectors of the input and adds
    /// them into four of a lane, at offsets 0, 16, 32 and 48 bytes from one address each (which
    /// Cranelift's value numbering then computes once), not from an address computed per vector,
    /// which cost the loop a third of its instructions.
    #[test]
    fn the_vectors_of_an_unrolled_loop_differ_in_their_immediate_offsets() {
        let a = pt::placeholder("a", [Dim::param("m"), Dim::param("n")], DType::F64).unwrap();
        let func = translated(&pt::sum(&a, 0).unwrap());
        let offsets: Vec<i32> = loads(&func, types::F64X2)
            .into_iter()
            .filter_map(|(_, inst)| match func.dfg.insts[inst] {
                InstructionData::Load { offset, .. } => Some(i32::from(offset)),
                _ => None,
            })
            .collect();
        for unrolled in [16, 32, 48] {
            let loads = offsets.iter().filter(|&&o| o == unrolled).count();
            assert!(loads >= 2, "the input's and the lane's vector at +{unrolled} bytes: {offsets:?}");
        }
    }

    /// Cranelift hoists what a loop does not change out of it, as far as the loop's shape lets
    /// it (see `Translator::branch_out_of_loop`): in the loop of vector loads of a column sum, a
    /// row sum and an elementwise kernel over a matrix, each load reads at a start computed
    /// before the loop (the row's) plus the loop's counter times 8 bytes, which the load's
    /// addressing folds in, and nothing in the loop multiplies. (With the loop's body as its
    /// header's first successor, the row's offset `r * n` was computed on every step.)
    #[test]
    fn the_loops_of_vector_loads_compute_nothing_their_row_shares() {
        use cranelift_codegen::ir::{Value, ValueDef};
        let a = pt::placeholder("a", [Dim::param("m"), Dim::param("n")], DType::F64).unwrap();
        for array in [pt::sum(&a, 0).unwrap(), pt::sum(&a, 1).unwrap(), &a * 2.0] {
            let ctx = optimized(&array);
            let (func, loops) = (&ctx.func, &ctx.loop_analysis);
            let block_of = |v: Value| match func.dfg.value_def(v) {
                ValueDef::Result(inst, _) => func.layout.inst_block(inst),
                ValueDef::Param(block, _) => Some(block),
                _ => None,
            };
            let mut vector_loops = std::collections::HashSet::new();
            for (block, inst) in loads(func, types::F64X2) {
                let Some(lp) = loops.innermost_loop(block) else { continue };
                vector_loops.insert(lp);
                let shown = |inst| func.dfg.display_inst(inst).to_string();
                let address = func.dfg.inst_args(inst)[0];
                let add = func.dfg.value_def(address).inst().filter(|&i| func.dfg.insts[i].opcode() == Opcode::Iadd);
                let add = add.unwrap_or_else(|| panic!("{array}: {}", shown(inst)));
                let [start, scaled] = func.dfg.inst_args(add) else { unreachable!("an add has two operands") };
                let shift = func.dfg.value_def(*scaled).inst().filter(|&i| func.dfg.insts[i].opcode() == Opcode::Ishl);
                let shift = shift.unwrap_or_else(|| panic!("{array}: {} at {}", shown(inst), shown(add)));
                let counter = func.dfg.block_params(loops.loop_header(lp)).contains(&func.dfg.inst_args(shift)[0]);
                let start_outside = block_of(*start).is_some_and(|b| !loops.is_in_loop(b, lp));
                assert!(counter && start_outside, "{array}: {} at {}, {}", shown(inst), shown(add), shown(shift));
            }
            assert!(!vector_loops.is_empty(), "{array}: a loop of vector loads");
            for block in
                func.layout.blocks().filter(|&b| loops.innermost_loop(b).is_some_and(|lp| vector_loops.contains(&lp)))
            {
                for inst in func.layout.block_insts(block) {
                    assert_ne!(func.dfg.insts[inst].opcode(), Opcode::Imul, "{array}: {}", func.dfg.display_inst(inst));
                }
            }
        }
    }

    /// Reads of one row at constant distances share an address and differ in their immediate
    /// offsets, however the translator nested the constants: in a five-point stencil unrolled
    /// four vectors wide, vector `k` reads `u[i + 1, (j + 2k) + 2]`, the same element as vector
    /// `k + 1`'s `u[i + 1, j + 2(k + 1)]`. After Cranelift's optimizations, the loads of `u` use
    /// three addresses, one per row (`i`, `i + 1`, `i + 2`); with the constants added one level
    /// deep only, each vector's shifted reads had an address of their own, and the loop kept more
    /// of them than it has registers.
    #[test]
    // numpy's negative slice ends (`1..-1`), which clippy reads as empty Rust ranges.
    #[allow(clippy::reversed_empty_ranges)]
    fn reads_of_a_row_at_constant_distances_share_its_address() {
        let u = pt::placeholder("u", [Dim::param("n"), Dim::param("m")], DType::F64).unwrap();
        use pytato_core::s;
        let stencil = &(&(&(&u.index(s![..-2, 1..-1]).unwrap() + &u.index(s![2.., 1..-1]).unwrap())
            + &u.index(s![1..-1, ..-2]).unwrap())
            + &u.index(s![1..-1, 2..]).unwrap())
            - &(&u.index(s![1..-1, 1..-1]).unwrap() * 4.0);
        let ctx = optimized(&stencil);
        let (func, loops) = (&ctx.func, &ctx.loop_analysis);
        // Per loop of vector loads (four vectors a step, then one).
        let mut addresses: std::collections::HashMap<_, std::collections::HashSet<_>> = Default::default();
        for (block, inst) in loads(func, types::F64X2) {
            addresses.entry(loops.innermost_loop(block)).or_default().insert(func.dfg.inst_args(inst)[0]);
        }
        assert_eq!(addresses.len(), 2, "a loop of four vectors a step and one of one: {addresses:?}");
        for rows in addresses.values() {
            assert_eq!(rows.len(), 3, "one address per row of u: {addresses:?}");
        }
    }
}
