//! Translation of one kernel of the kernel IR into a WGSL compute shader.
//!
//! # The shader interface
//!
//! - `@binding(0)`: the control block, `Control { flag, buffer, axis, level, index, length, zero,
//!   base, slots, coarse, sizes: array<i64> }`: `sizes[j]` is size parameter `j`
//!   (`KernelProgram::size_params` order); the first out-of-range subscript sets `flag` and
//!   records itself in `buffer`, `axis`, `index` and `length`; `zero` is 0 (see
//!   [`Translator::main`] for why it exists); `base` and `slots` are the chunk of output elements
//!   a kernel with split reductions runs over, `level` the pass of a tree stage (both set by the
//!   host between dispatches, 0 otherwise); each partial result of a block-sums shader combines
//!   `2^coarse` blocks (set for the whole run, 0 unless one element's block sums would not fit
//!   in a buffer; see `reduce::Translator::partial_of_blocks`). A shader with 32-bit indices reads
//!   the 64-bit fields as `vec2<i32>` pairs (the same bytes; the sizes fit in the low word).
//! - `@binding(1 + k)`: the `k`-th buffer of [`Shader::buffers`], dense and in C order: the output
//!   (`read_write`) first, then every buffer the expression reads (`read`). Elements are stored
//!   as [`storage_type`] says: `bool` and 8/16-bit integers widened to 32 bits, complex numbers as
//!   `vec2` pairs (the layout of `num_complex` values).
//! - One invocation computes one output element: the flat index is
//!   `(workgroup_id.y * num_workgroups.x + workgroup_id.x) * WORKGROUP_SIZE + local_invocation_index`,
//!   so that more than 65,535 workgroups fit a 2-D grid; invocations past the element count return.
//!
//! # Values
//!
//! Every dtype has one WGSL value type ([`value_type`]): 8/16-bit integers live in `i32`/`u32` and
//! are wrapped back into their range after every operation that can leave it; where the adapter
//! has float64, float32 and complex64 values are held *exactly in float64* (see
//! `float32_in_float64` below); the IR's `int64`
//! (inames, size parameters, index arithmetic) is `i64` (`SHADER_INT64`), or `i32` in a shader with
//! 32-bit indices (see `narrow`); float64 and complex128 need `SHADER_F64`. What the device lacks
//! is [`Error::Unsupported`].
//!
//! # float32 in float64
//!
//! Vulkan lets a driver flush float32 subnormals to zero (inputs and results of any float32
//! instruction, conversions included), and GPU drivers do: `sign(1e-40)` came out 0 on an H100.
//! So where the adapter has float64, no float32 value ever exists as a WGSL `f32`: buffers hold
//! float32 bits (`u32`), which `f32dec` turns into the float64 of the same value and `f32enc`
//! back, with integer operations only; every float32 operation computes in float64 and rounds
//! once to float32 (`r32`, round to nearest even on the bits, float32's subnormals included).
//! For `+ - * /` and `sqrt` that is the correctly rounded float32 result (float64 has more than
//! twice float32's precision plus two bits), and float64 has no subnormals in float32's range, so
//! no result depends on a driver's treatment of float32. Complex64 is held the same way, its
//! products and quotients rounded after every operation, as numpy computes them. Without
//! float64, values are WGSL `f32` and subnormals are the driver's choice (see the README).
//!
//! Expressions become one `let` per operation, in the order the interpreter evaluates them. `if`
//! becomes a real branch (numpy's lazy `where` for padding: the untaken side is never read),
//! reductions become loops. A subscript that [`Ranges`] cannot prove in range is checked: out of
//! range, it records itself in the control block and reads element 0 instead (every buffer has at
//! least one element allocated), so nothing is ever read out of bounds.

mod library;
mod loops;
mod narrow;
mod reduce;
pub(crate) mod steps;
mod tiled;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use pytato_core::expr::{BinaryOp, CompareOp, Expr, Func, Reduce, UnaryOp};
use pytato_core::names::{Reserved, classify};
use pytato_core::{DType, Dim, Error, Result, Scalar};
use pytato_transform::bounds::Ranges;
use pytato_transform::kernel::{BufferId, Kernel, KernelProgram};

use library::{Library, OPAQUE_INIT, real_of};
use loops::Block;
pub(crate) use loops::LoopPlan;
pub(crate) use narrow::{IndexBounds, narrowable};
pub(crate) use reduce::{CARRY_CHUNK, TREE_STAGE_BLOCKS, block_count, partial_count, tree_passes};
use reduce::{Split, carried, partial_dtype, reduction_var, scheme, split_reductions};
pub(crate) use tiled::{TILE, Tiled};

/// Invocations per workgroup.
pub(crate) const WORKGROUP_SIZE: u32 = 256;

/// What the device can do that shaders depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ShaderFeatures {
    /// `SHADER_F64`: float64 and complex128.
    pub(crate) f64: bool,
    /// `SHADER_INT64`: int64/uint64, and the index arithmetic of every kernel.
    pub(crate) i64: bool,
}

/// One kernel as a WGSL module.
pub(crate) struct Shader {
    /// What it computes, in a few words (for profiles: `crate::profile`).
    pub(crate) label: String,
    /// The WGSL source; its entry point is `main`.
    pub(crate) source: String,
    /// The buffers bound at `@binding(1)`, `@binding(2)`, …: the output first. Block sums are
    /// bound after them.
    pub(crate) buffers: Vec<BufferId>,
    /// For every binding, the control block's included: whether the shader writes it.
    pub(crate) writable: Vec<bool>,
    /// The float and complex constants the shader reads from its constant table (`cst`, bound
    /// last), as little-endian 32-bit words; empty when it reads none. Constants are not written
    /// into the source: shaders that differ only in them (a time step, a coefficient) are one
    /// shader and one pipeline, and the driver cannot fold what it does not see.
    pub(crate) constants: Vec<u32>,
    /// Its loop statements, to count the iterations of an invocation (see `loops`).
    pub(crate) loops: LoopPlan,
}

/// The WGSL variable of the output index `_k`. Not `i{k}`: `i32` and `i64` are WGSL's types, so
/// an array of 33 axes would shadow one.
fn iname_var(k: usize) -> String {
    format!("idx{k}")
}

fn unsupported(reason: String) -> Error {
    Error::Unsupported { backend: "wgpu".into(), reason }
}

fn bug(message: impl Into<String>) -> Error {
    Error::Internal { backend: "wgpu".into(), message: message.into() }
}

/// The WGSL type values of `dtype` have in a shader, or why the device cannot hold them.
pub(crate) fn value_type(dtype: DType, features: ShaderFeatures) -> Result<&'static str> {
    use DType::*;
    let needs = |ok: bool, ty: &'static str, feature: &str| {
        if ok {
            Ok(ty)
        } else {
            Err(unsupported(format!("{dtype} needs the adapter feature {feature}, which this adapter lacks")))
        }
    };
    match dtype {
        Bool => Ok("bool"),
        I8 | I16 | I32 => Ok("i32"),
        // float16 is its bits (the kernel IR only loads, stores, selects and casts it).
        U8 | U16 | U32 | F16 => Ok("u32"),
        I64 => needs(features.i64, "i64", "SHADER_INT64"),
        U64 => needs(features.i64, "u64", "SHADER_INT64"),
        // float32 held exactly in float64 where the adapter has it (see `float32_in_float64`).
        F32 => Ok(if features.f64 { "f64" } else { "f32" }),
        F64 => needs(features.f64, "f64", "SHADER_F64 (and SHADER_INT64)"),
        C64 => Ok(if features.f64 { "vec2<f64>" } else { "vec2<f32>" }),
        C128 => needs(features.f64, "vec2<f64>", "SHADER_F64 (and SHADER_INT64)"),
    }
}

/// The WGSL element type of a storage buffer of `dtype` (`bool` is not storable; 8/16-bit
/// integers are widened, see [`crate::transfer`]).
pub(crate) fn storage_type(dtype: DType, features: ShaderFeatures) -> Result<&'static str> {
    Ok(match dtype {
        DType::Bool => "u32",
        // Their bits, where values are held in float64: a float32 never exists as a driver's f32.
        DType::F32 if features.f64 => "u32",
        DType::C64 if features.f64 => "vec2<u32>",
        other => value_type(other, features)?,
    })
}

/// The WGSL type of a block sum of `dtype` in its buffer: the value's type, but `u32` for
/// bools (WGSL has no `bool` in storage).
fn block_sum_type(dtype: DType, features: ShaderFeatures) -> Result<&'static str> {
    if dtype == DType::Bool { Ok("u32") } else { value_type(dtype, features) }
}

/// Bytes per value of `dtype` in a buffer of values (block sums, tiles).
fn value_size(dtype: DType, features: ShaderFeatures) -> usize {
    match dtype {
        DType::F32 if features.f64 => 8,
        DType::C64 if features.f64 => 16,
        other => storage_size(other),
    }
}

/// Bytes per element in a storage buffer.
pub(crate) fn storage_size(dtype: DType) -> usize {
    match dtype {
        DType::Bool | DType::I8 | DType::I16 | DType::U8 | DType::U16 | DType::F16 => 4,
        other => other.itemsize(),
    }
}

/// The shaders of one kernel, in dispatch order: one [`BlockSums`] per split reduction, then the
/// kernel's own shader, which reads their block sums.
pub(crate) struct KernelShaders {
    pub(crate) block_sums: Vec<BlockSums>,
    pub(crate) kernel: Shader,
    /// Set when the kernel's shader is a tiled matrix product (see `tiled`): one workgroup per
    /// tile of the output instead of one invocation per element.
    pub(crate) tiled: Option<Tiled>,
}

/// The shaders of one split reduction (see [`split_reductions`]): `shader` computes its partial
/// results, one invocation per output element and run of `2^coarse` blocks of `SUM_BLOCK` terms
/// (one block unless a run needs fewer partial results), writing `partials[part * slots + slot]`
/// (`slot`: the element's place in its chunk of `slots` elements, see `Translator::main`);
/// `tree`, workgroups per output element, combines each element's partial results in the
/// canonical tree into `partials[slot]`. A carried product has no
/// tree: `shader` multiplies the next `CARRY_CHUNK` terms into `partials[slot]`, once per
/// dispatch (see [`Translator::carry_chunk`]).
pub(crate) struct BlockSums {
    pub(crate) shader: Shader,
    pub(crate) tree: Option<Shader>,
    /// The reduction; the bounds of its inames give its term count when the kernel runs.
    pub(crate) reduce: Arc<Reduce>,
    /// Bytes per block sum in the partials buffer.
    pub(crate) element_size: usize,
}

/// The shaders of `kernel`; `names` maps buffer names to buffers. With `tile_products`, a
/// product of two matrices is a tiled shader (see `tiled`); with `narrow`, indices are 32-bit
/// (see `narrow`; the kernel must be [`narrowable`]). Long reductions run in stages (see
/// `reduce::split_reductions`).
pub(crate) fn kernel_shaders(
    program: &KernelProgram,
    names: &HashMap<&str, BufferId>,
    kernel: &Kernel,
    features: ShaderFeatures,
    tile_products: bool,
    narrow: bool,
) -> Result<KernelShaders> {
    if !features.i64 && !narrow {
        return Err(unsupported(
            "the wgpu backend computes indices in int64 and needs the adapter feature SHADER_INT64, which this \
             adapter lacks"
                .into(),
        ));
    }
    if let Some(product) = tile_products.then(|| tiled::tiled_product(program, kernel, features)).flatten() {
        let shader = shader(program, names, kernel, features, narrow, Stage::Tiled(&product))?;
        return Ok(KernelShaders { block_sums: Vec::new(), kernel: shader, tiled: Some(product) });
    }
    let splits = split_reductions(program, names, kernel, features)?;
    let read: Vec<(Arc<Reduce>, DType)> = splits.iter().map(|s| (s.reduce.clone(), s.dtype)).collect();
    let block_sums = splits
        .iter()
        .enumerate()
        .map(|(j, split)| {
            let (r, dtype) = (&split.reduce, split.dtype);
            let carry = carried(r.op, dtype, features);
            let stage = if carry { Stage::Carry(split, &read[..j]) } else { Stage::BlockSums(split, &read[..j]) };
            Ok(BlockSums {
                shader: shader(program, names, kernel, features, narrow, stage)?,
                tree: match carry {
                    true => None,
                    false => Some(shader(program, names, kernel, features, narrow, Stage::Tree(r, dtype))?),
                },
                reduce: r.clone(),
                element_size: value_size(partial_dtype(r.op, dtype, features), features),
            })
        })
        .collect::<Result<_>>()?;
    Ok(KernelShaders {
        block_sums,
        kernel: shader(program, names, kernel, features, narrow, Stage::Kernel(&read))?,
        tiled: None,
    })
}

/// The shaders that compute the partial results of `kernel`'s split reductions in runs of
/// `2^coarse` blocks (see `reduce::Translator::partial_of_blocks`), in the order of
/// [`KernelShaders::block_sums`] (`None` for a carried product, which has no block sums), for the
/// runs where one output element's block sums would not fit in a buffer. Arguments as
/// [`kernel_shaders`] takes them; a kernel whose product is tiled has none.
pub(crate) fn run_shaders(
    program: &KernelProgram,
    names: &HashMap<&str, BufferId>,
    kernel: &Kernel,
    features: ShaderFeatures,
    narrow: bool,
) -> Result<Vec<Option<Shader>>> {
    let splits = split_reductions(program, names, kernel, features)?;
    let read: Vec<(Arc<Reduce>, DType)> = splits.iter().map(|s| (s.reduce.clone(), s.dtype)).collect();
    splits
        .iter()
        .enumerate()
        .map(|(j, split)| match carried(split.reduce.op, split.dtype, features) {
            true => Ok(None),
            false => shader(program, names, kernel, features, narrow, Stage::Runs(split, &read[..j])).map(Some),
        })
        .collect()
}

/// Which shader of a kernel is generated.
enum Stage<'a> {
    /// The kernel itself; these reductions are read from their block sums, bound after the
    /// kernel's buffers in this order.
    Kernel(&'a [(Arc<Reduce>, DType)]),
    /// The block sums of one reduction, bound after the kernel's buffers and the partial results
    /// of the split reductions before it (which its guard may read), in this order.
    BlockSums(&'a Split, &'a [(Arc<Reduce>, DType)]),
    /// The tree of one reduction's block sums (of this dtype), bound after the kernel's buffers.
    Tree(&'a Reduce, DType),
    /// The partial results of one reduction in runs of `2^coarse` blocks (see
    /// `reduce::Translator::partial_of_blocks`), bound as [`Stage::BlockSums`].
    Runs(&'a Split, &'a [(Arc<Reduce>, DType)]),
    /// The next chunk of a carried product, bound as [`Stage::BlockSums`].
    Carry(&'a Split, &'a [(Arc<Reduce>, DType)]),
    /// The kernel, a matrix product in tiles (see `tiled`).
    Tiled(&'a Tiled),
}

/// One shader of `kernel`.
fn shader(
    program: &KernelProgram,
    names: &HashMap<&str, BufferId>,
    kernel: &Kernel,
    features: ShaderFeatures,
    narrow: bool,
    stage: Stage<'_>,
) -> Result<Shader> {
    let output = &program.buffers[kernel.output.0];
    let buffers = program.kernel_buffers(names, kernel)?;
    // The split reductions the shader reads (`p0`, …), and the partial results it writes.
    let (split, partials) = match stage {
        Stage::Kernel(split) => (split.to_vec(), None),
        Stage::BlockSums(_, earlier) | Stage::Runs(_, earlier) | Stage::Carry(_, earlier) => {
            (earlier.to_vec(), Some(earlier.len()))
        }
        Stage::Tree(..) => (Vec::new(), Some(0)),
        Stage::Tiled(_) => (Vec::new(), None),
    };
    let mut t = Translator {
        program,
        names,
        features,
        slot: buffers.iter().enumerate().map(|(k, b)| (*b, k)).collect(),
        split,
        partials: format!("p{}", partials.unwrap_or(0)),
        narrow,
        body: String::new(),
        indent: 1,
        next: 0,
        memo: vec![HashMap::new()],
        library: Library::default(),
        // No index-array facts: a failed `normalize_index` check is reported after later
        // kernels ran on what it wrote, so their reads stay checked.
        ranges: Ranges {
            output: output.shape.dims(),
            reductions: HashMap::new(),
            size_params: &program.size_params,
            index_buffers: HashMap::new(),
            assumed: HashMap::new(),
        },
        constants: Vec::new(),
        constant_slots: HashMap::new(),
        loops: LoopPlan::default(),
        blocks: Vec::new(),
    };
    t.main(kernel, &buffers, &stage)?;
    debug_assert_eq!(
        t.loops.loops(),
        t.body.lines().filter(|l| l.trim_start().starts_with("for (") || l.trim_start() == "loop {").count(),
        "every loop statement is recorded in the loop plan"
    );

    // Storage bindings after the control block: the kernel's buffers (`b0` is its output), then
    // the block sums (`p0`, …): read by the kernel, written by a block-sums shader.
    let mut writable = vec![true];
    let mut declarations = Vec::new();
    for (k, id) in buffers.iter().enumerate() {
        let b = &program.buffers[id.0];
        let write = k == 0 && matches!(stage, Stage::Kernel(_) | Stage::Tiled(_));
        declarations.push((
            format!("b{k}"),
            storage_type(b.dtype, features)?,
            write,
            b.name.escape_debug().to_string(),
        ));
    }
    for (j, (r, dtype)) in t.split.iter().enumerate() {
        let partial = partial_dtype(r.op, *dtype, features);
        declarations.push((format!("p{j}"), block_sum_type(partial, features)?, false, "block sums".into()));
    }
    let written = match &stage {
        Stage::BlockSums(s, _) | Stage::Runs(s, _) | Stage::Carry(s, _) => Some((s.reduce.op, s.dtype)),
        Stage::Tree(r, dtype) => Some((r.op, *dtype)),
        Stage::Kernel(_) | Stage::Tiled(_) => None,
    };
    if let (Some((op, dtype)), Some(j)) = (written, partials) {
        let partial = partial_dtype(op, dtype, features);
        declarations.push((format!("p{j}"), block_sum_type(partial, features)?, true, "block sums".into()));
    }
    let mut source = String::new();
    // A narrow shader reads the control block's 64-bit fields as pairs of `i32` (the same bytes).
    let long = if narrow { "vec2<i32>" } else { "i64" };
    let _ = writeln!(
        source,
        "struct Control {{ flag: atomic<u32>, buffer: u32, axis: u32, level: u32, index: {long}, length: {long}, \
         zero: {long}, base: u32, slots: u32, coarse: u32, sizes: array<{long}> }}"
    );
    let _ = writeln!(source, "@group(0) @binding(0) var<storage, read_write> ctl: Control;");
    source.push_str(if features.i64 { library::OPAQUE_DECLARATIONS } else { library::OPAQUE_DECLARATIONS_32 });
    if let Stage::Tiled(product) = &stage {
        source.push_str(&tiled::declarations(value_type(product.contraction.dtype, features)?));
    }
    if let Stage::Tree(r, dtype) = &stage {
        let partial = block_sum_type(partial_dtype(r.op, *dtype, features), features)?;
        let _ = writeln!(source, "var<workgroup> runs: array<{partial}, {WORKGROUP_SIZE}>;");
    }
    if !t.constants.is_empty() {
        declarations.push(("cst".into(), "u32", false, "constants".into()));
    }
    for (k, (var, ty, write, comment)) in declarations.into_iter().enumerate() {
        let access = if write { "read_write" } else { "read" };
        let _ =
            writeln!(source, "@group(0) @binding({}) var<storage, {access}> {var}: array<{ty}>; // {comment}", k + 1);
        writable.push(write);
    }
    let (ix, widen) = if narrow { ("i32", "vec2<i32>(v, select(0i, -1i, v < 0i))") } else { ("i64", "v") };
    let _ = write!(
        source,
        "fn out_of_bounds(buffer: u32, axis: u32, index: {ix}, length: {ix}) {{
    if atomicExchange(&ctl.flag, 1u) == 0u {{
        ctl.buffer = buffer;
        ctl.axis = axis;
        ctl.index = widened(index);
        ctl.length = widened(length);
    }}
}}
fn widened(v: {ix}) -> {long} {{ return {widen}; }}
"
    );
    source.push_str(t.library.source());
    let _ = writeln!(source, "@compute @workgroup_size({WORKGROUP_SIZE})");
    source.push_str(
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
",
    );
    source.push_str(&t.body);
    source.push_str("}\n");
    let what = match stage {
        Stage::Kernel(_) => "kernel",
        Stage::BlockSums(..) => "block sums of",
        Stage::Tree(..) => "tree of",
        Stage::Runs(..) => "runs of blocks of",
        Stage::Carry(..) => "carried product of",
        Stage::Tiled(_) => "tiled product",
    };
    let indices = if narrow { ", 32-bit indices" } else { "" };
    // An output under the name the user gave it, a temporary under its own.
    let name = program.outputs.iter().find(|(_, id)| *id == kernel.output).map_or(&*output.name, |(n, _)| n.as_str());
    let label = format!("{what} {name} ({}{indices})", output.dtype);
    Ok(Shader { label, source, buffers, writable, constants: t.constants, loops: t.loops })
}

struct Translator<'a> {
    program: &'a KernelProgram,
    names: &'a HashMap<&'a str, BufferId>,
    features: ShaderFeatures,
    /// Buffer → its index in [`Shader::buffers`] (`b{index}`).
    slot: HashMap<BufferId, usize>,
    /// Reductions read from their block sums (`p{index}`), see [`split_reductions`].
    split: Vec<(Arc<Reduce>, DType)>,
    /// The partial results a stage of a split reduction writes (`p{index}`, after those it reads).
    partials: String,
    /// 32-bit indices: int64 values (inames, sizes, index arithmetic) are computed as `i32` (see
    /// [`narrowable`]).
    narrow: bool,
    body: String,
    indent: usize,
    next: usize,
    /// `let`s already emitted for an expression, one map per open block: equal expressions (the
    /// operand an inlined `maximum` of complex numbers reads three times, say) are computed once
    /// where the first one dominates the rest. Keyed by value, not by node: inlining copies nodes.
    memo: Vec<HashMap<Expr, String>>,
    library: Library,
    ranges: Ranges<'a>,
    /// The constant table's words (see [`Shader::constants`]), and where each constant starts.
    constants: Vec<u32>,
    constant_slots: HashMap<Scalar, usize>,
    /// The loop statements emitted so far (see `loops`), and the blocks open now.
    loops: LoopPlan,
    blocks: Vec<Block>,
}

impl Translator<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.body.push_str("    ");
        }
        self.body.push_str(text);
        self.body.push('\n');
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next - 1)
    }

    fn ty(&self, dtype: DType) -> Result<&'static str> {
        value_type(self.narrowed(dtype), self.features)
    }

    /// The dtype int64 values are computed in: int32 in a narrow shader.
    fn narrowed(&self, dtype: DType) -> DType {
        if self.narrow && dtype == DType::I64 { DType::I32 } else { dtype }
    }

    /// The WGSL type of indices, sizes and inames.
    fn ix(&self) -> &'static str {
        if self.narrow { "i32" } else { "i64" }
    }

    /// An index literal.
    fn lit(&self, v: impl std::fmt::Display) -> String {
        if self.narrow { format!("{v}i") } else { format!("{v}li") }
    }

    /// `let name: ty = value;`, returning the name.
    fn bind(&mut self, dtype: DType, value: &str) -> Result<String> {
        let name = self.fresh("t");
        let ty = self.ty(dtype)?;
        self.line(&format!("let {name}: {ty} = {value};"));
        Ok(name)
    }

    /// Opens a block that is not a loop (see [`Self::open_loop`]).
    fn open(&mut self, header: &str) {
        self.open_block(header, Block::Plain);
    }

    fn open_block(&mut self, header: &str, block: Block) {
        self.line(&format!("{header} {{"));
        self.indent += 1;
        self.memo.push(HashMap::new());
        self.blocks.push(block);
    }

    fn close(&mut self) {
        self.memo.pop();
        self.indent -= 1;
        self.line("}");
        let block = self.blocks.pop().expect("a block to close");
        self.record_close(block);
    }

    /// An index expression for `dim` in terms of the size parameters.
    fn dim(&self, dim: &Dim) -> Result<String> {
        let mut s = self.lit(dim.constant());
        if dim.constant() < 0 {
            s = format!("({s})");
        }
        for (p, c) in dim.terms() {
            let j = self.program.size_params.iter().position(|q| q == p).ok_or_else(|| {
                bug(format!("size parameter {p} is not among the program's {:?}", self.program.size_params))
            })?;
            s = format!("{s} + ({}) * s{j}", self.lit(c));
        }
        Ok(s)
    }

    fn main(&mut self, kernel: &Kernel, buffers: &[BufferId], stage: &Stage<'_>) -> Result<()> {
        for j in 0..self.program.size_params.len() {
            let size = if self.narrow { format!("ctl.sizes[{j}].x") } else { format!("ctl.sizes[{j}]") };
            self.line(&format!("let s{j}: {} = {size};", self.ix()));
        }
        // Extents and strides (in elements) of every buffer bound.
        for (k, id) in buffers.iter().enumerate() {
            let dims = self.program.buffers[id.0].shape.dims().to_vec();
            for (axis, d) in dims.iter().enumerate() {
                let value = self.dim(d)?;
                self.line(&format!("let e{k}_{axis}: {} = {value};", self.ix()));
            }
            for axis in (0..dims.len()).rev() {
                let stride = if axis + 1 == dims.len() {
                    self.lit(1)
                } else {
                    format!("e{k}_{} * st{k}_{}", axis + 1, axis + 1)
                };
                self.line(&format!("let st{k}_{axis}: {} = {stride};", self.ix()));
            }
        }
        if let Stage::Tiled(product) = stage {
            return self.tiled_main(product);
        }
        let ndim = self.program.buffers[kernel.output.0].shape.ndim();
        let count = if ndim == 0 { "1u".to_string() } else { "u32(e0_0 * st0_0)".to_string() };
        self.line(&format!("let count: u32 = {count};"));
        // A kernel with split reductions runs over its output in chunks where their partial
        // results would not fit in one buffer (see `run`): every shader of it covers the
        // `in_chunk` elements from `base` on, whose partial results take the first `slots` slots
        // (the chunk length; per block, for block sums). Runs of one chunk leave the control
        // block's fields 0: all elements, from 0.
        let chunked = match stage {
            Stage::Kernel(read) => !read.is_empty(),
            Stage::Tiled(_) => false,
            Stage::BlockSums(..) | Stage::Runs(..) | Stage::Carry(..) | Stage::Tree(..) => true,
        };
        if chunked {
            self.line("let base: u32 = ctl.base;");
            self.line("let slots: u32 = select(ctl.slots, count, ctl.slots == 0u);");
            self.line("let in_chunk: u32 = min(slots, count - base);");
        }
        if let Stage::Tree(r, dtype) = stage {
            // Workgroups per element and group of its partial results (neighbouring workgroups:
            // neighbouring elements), all of whose invocations reach every barrier.
            self.line("let workgroup: u32 = wid.y * nwg.x + wid.x;");
            self.line("let slot: u32 = workgroup % max(in_chunk, 1u);");
            self.line("let group: u32 = workgroup / max(in_chunk, 1u);");
            self.line("let live: bool = slot < in_chunk;");
            self.zero_and_opaque_init();
            return self.tree_stage(r, *dtype, ("group", "slot", "live"));
        }
        self.line(&format!("let gid: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;"));
        // The element count fits in 32 bits (`run::grid` checks). Comparing in 32 bits also
        // avoids a Mesa 22 (lavapipe) miscompilation: a `return` under a 64-bit comparison
        // silently disables the whole shader.
        // `element`: the output element; `slot`: where its partial results are.
        match stage {
            Stage::Kernel(_) | Stage::Tiled(_) if !chunked => {
                self.line("if gid >= count { return; }");
                self.line("let element: u32 = gid;");
            }
            Stage::Kernel(_) | Stage::Tiled(_) | Stage::Carry(..) => {
                self.line("if gid >= in_chunk { return; }");
                self.line("let slot: u32 = gid;");
                self.line("let element: u32 = base + slot;");
            }
            // Invocation `gid` computes partial result `gid / slots` (its run of blocks) of slot
            // `gid % slots`: neighbouring invocations sum the same blocks of neighbouring
            // elements, which for a sum along a slow axis (columns of a matrix) read neighbouring
            // memory.
            Stage::Tree(..) => unreachable!("the tree stage returned above"),
            Stage::BlockSums(split, _) | Stage::Runs(split, _) => {
                let (_, partials) = match stage {
                    Stage::Runs(..) => self.partial_count(&split.reduce)?,
                    _ => self.block_count(&split.reduce)?,
                };
                self.line(&format!("if gid >= slots * {partials} {{ return; }}"));
                self.line("let part: u32 = gid / slots;");
                self.line("let slot: u32 = gid % slots;");
                self.line("if slot >= in_chunk { return; }");
                self.line("let element: u32 = base + slot;");
            }
        }
        // The multi-index of the element (C order).
        // Inames are `i64(gid-part) + zero`, with `zero` read from memory: Mesa 22's lavapipe
        // miscompiles a branch on a 64-bit comparison of a value it can see was extended from 32
        // bits (every lane takes the same side), which an opaque zero prevents.
        self.zero_and_opaque_init();
        self.line("var rest: u32 = element;");
        for axis in (0..ndim).rev() {
            if axis == 0 {
                self.line(&format!("let {}: {ix} = {ix}(rest) + zero;", iname_var(0), ix = self.ix()));
            } else {
                // `max`: an output with an empty axis runs no invocation, but an axis of constant
                // length 0 must not be a division by a constant zero.
                self.line(&format!(
                    "let {}: {ix} = {ix}(rest % max(u32(e0_{axis}), 1u)) + zero;",
                    iname_var(axis),
                    ix = self.ix()
                ));
                self.line(&format!("rest = rest / max(u32(e0_{axis}), 1u);"));
            }
        }
        match stage {
            Stage::Kernel(_) | Stage::Tiled(_) => {
                let value = self.emit(&kernel.expr)?;
                let out_dtype = self.program.buffers[kernel.output.0].dtype;
                let stored = self.encoded(out_dtype, &value);
                self.line(&format!("b0[element] = {stored};"));
            }
            Stage::Tree(..) => unreachable!("the tree stage returned above"),
            // Only where the kernel reads the reduction.
            Stage::Carry(split, _) | Stage::BlockSums(split, _) | Stage::Runs(split, _) => {
                let guard = self.guard(split)?;
                if let Some(taken) = &guard {
                    self.open(&format!("if {taken}"));
                }
                let (r, dtype) = (&split.reduce, split.dtype);
                if matches!(stage, Stage::Carry(..)) {
                    self.carry_chunk(r, dtype)?;
                } else {
                    let value = match stage {
                        Stage::Runs(..) => self.partial_of_blocks(r, dtype, "part")?,
                        _ => self.block_sum(r, dtype, "part")?,
                    };
                    let value = if dtype == DType::Bool { format!("select(0u, 1u, {value})") } else { value };
                    self.line(&format!("{}[gid] = {value};", self.partials));
                }
                if guard.is_some() {
                    self.close();
                }
            }
        }
        Ok(())
    }

    /// `zero` (an index-typed 0 the driver cannot see through, see `main`) and the opaque zeros
    /// of `library`, from the control block.
    fn zero_and_opaque_init(&mut self) {
        if self.narrow {
            self.line("let zero: i32 = ctl.zero.x;");
            self.line(library::opaque_init_narrow(self.features.i64));
        } else {
            self.line("let zero: i64 = ctl.zero;");
            self.line(OPAQUE_INIT);
        }
    }

    fn dtype_of(&self, e: &Expr) -> Result<DType> {
        Ok(self.narrowed(self.program.expr_dtype(self.names, e)?))
    }

    /// Emits the index `e` in the shader's index type ([`Self::ix`]): an index read from an
    /// array may be of any integer dtype (an int32 array of element numbers), and WGSL compares
    /// and multiplies only values of one type. A uint64 index beyond int64 becomes negative,
    /// which the bounds check reports.
    fn emit_index(&mut self, e: &Expr) -> Result<String> {
        let value = self.emit(e)?;
        let ix = self.ix();
        if self.ty(self.dtype_of(e)?)? == ix {
            return Ok(value);
        }
        // int64 values are held in the index type (int32 in a narrow shader).
        self.bind(DType::I64, &format!("{ix}({value})"))
    }

    /// Emits `e`; returns a WGSL expression (a name or a literal) of its value type.
    fn emit(&mut self, e: &Expr) -> Result<String> {
        if let Some(name) = self.memo.iter().rev().find_map(|m| m.get(e)) {
            return Ok(name.clone());
        }
        let value = self.emit_uncached(e)?;
        if let Some(m) = self.memo.last_mut() {
            m.insert(e.clone(), value.clone());
        }
        Ok(value)
    }

    fn emit_uncached(&mut self, e: &Expr) -> Result<String> {
        let dtype = self.dtype_of(e)?;
        match e {
            // 64-bit integer constants go through a `let`: naga cannot constant-fold casts of
            // 64-bit literals.
            Expr::Const(s) if matches!(dtype, DType::I64 | DType::U64) => {
                let literal = self.constant(s)?;
                self.bind(dtype, &literal)
            }
            // Float constants come from the constant table: the driver must not fold `x * 0.0`
            // (NaN * 0 is NaN) nor evaluate casts of constants itself, and a shader must not
            // change with its constants.
            Expr::Const(s) if dtype.is_inexact() && dtype != DType::F16 => {
                let value = self.table_constant(s)?;
                self.bind(dtype, &value)
            }
            Expr::Const(s) => self.constant(s),
            Expr::Var(name) => match classify(name) {
                Some(Reserved::Iname(k)) => Ok(iname_var(k)),
                Some(Reserved::ReductionIname(_)) => Ok(reduction_var(name)),
                _ => {
                    if let Some(j) = self.program.size_params.iter().position(|p| p == &**name) {
                        return Ok(format!("s{j}"));
                    }
                    self.read(name, &[], dtype)
                }
            },
            Expr::Subscript(name, idx) => self.read(name, idx, dtype),
            Expr::Unary(op, a) => {
                let x = self.emit(a)?;
                let v = match (op, dtype) {
                    (UnaryOp::LogicalNot, _) | (UnaryOp::BitNot, DType::Bool) => format!("!{x}"),
                    (UnaryOp::BitNot, _) => wrap(dtype, format!("~{x}")),
                    (UnaryOp::Neg, DType::U8 | DType::U16 | DType::U32 | DType::U64) => {
                        let zero = self.constant(&Scalar::zero(dtype))?;
                        wrap(dtype, format!("{zero} - {x}"))
                    }
                    // Floats by their sign bit: numpy flips it for NaN and zeros too.
                    (UnaryOp::Neg, DType::F32 | DType::F64) => {
                        let ty = self.ty(dtype)?;
                        format!("{}({x})", self.library.require("fneg", ty))
                    }
                    (UnaryOp::Neg, DType::C64 | DType::C128) => {
                        let ty = self.ty(dtype)?;
                        let neg = self.library.require("fneg", real_of(ty));
                        format!("{ty}({neg}({x}.x), {neg}({x}.y))")
                    }
                    (UnaryOp::Neg, _) => wrap(dtype, format!("-{x}")),
                };
                self.bind(dtype, &v)
            }
            Expr::Binary(op, a, b) => {
                let (x, y) = (self.emit(a)?, self.emit(b)?);
                let v = self.binary(*op, dtype, &x, &y)?;
                self.bind(dtype, &v)
            }
            Expr::Compare(op, a, b) => {
                let operand = self.dtype_of(a)?;
                let (x, y) = (self.emit(a)?, self.emit(b)?);
                let v = self.compare(*op, operand, &x, &y)?;
                self.bind(dtype, &v)
            }
            Expr::If(c, a, b) => {
                let cond = self.emit(c)?;
                let result = self.fresh("v");
                let ty = self.ty(dtype)?;
                self.line(&format!("var {result}: {ty};"));
                // Each branch runs only where the condition is so: its reads are proved in
                // bounds under what the condition says of the inames (a concatenation's pieces),
                // which spares drivers thousands of checks (lavapipe's compile time grows with
                // the square of their number).
                for (holds, branch) in [(true, a), (false, b)] {
                    self.open(if holds { format!("if {cond}") } else { "else".to_string() }.as_str());
                    let assumed = self.ranges.assume(c, holds);
                    let value = self.emit(branch);
                    self.ranges.restore(assumed);
                    let value = value?;
                    self.line(&format!("{result} = {value};"));
                    self.close();
                }
                Ok(result)
            }
            Expr::Cast(to, a) => {
                let from = self.dtype_of(a)?;
                let x = self.emit(a)?;
                let v = self.cast(from, self.narrowed(*to), &x)?;
                self.bind(dtype, &v)
            }
            Expr::Call(Func::NormalizeIndex, args) => {
                let (i, n) = (self.emit_index(&args[0])?, self.emit_index(&args[1])?);
                let axis = match &args[2] {
                    Expr::Const(Scalar::I64(a)) => *a,
                    other => return Err(bug(format!("normalize_index with axis {other}"))),
                };
                let z = self.lit(0);
                let j = self.bind(DType::I64, &format!("select({i}, {i} + {n}, {i} < {z})"))?;
                // The failure record's buffer is INDEX_ARRAY (-1); the value read stays in range.
                self.line(&format!("if {j} < {z} || {j} >= {n} {{ out_of_bounds(0xffffffffu, {axis}u, {i}, {n}); }}"));
                self.bind(DType::I64, &format!("select({z}, {j}, {j} >= {z} && {j} < {n})"))
            }
            Expr::Call(Func::RequireNonNegative, args) => {
                // numpy's refusals of values: the failure record's buffer is VALUE_CHECK (-3),
                // its axis the check's code.
                let check = match &args[1] {
                    Expr::Const(Scalar::I64(code)) if *code >= 0 => *code,
                    other => return Err(bug(format!("require_non_negative with check {other}"))),
                };
                let v = self.emit(&args[0])?;
                let zero = self.constant(&Scalar::zero(dtype))?;
                let ix = self.ix();
                self.line(&format!("if {v} < {zero} {{ out_of_bounds(0xfffffffdu, {check}u, {ix}({v}), {ix}(0)); }}"));
                Ok(v)
            }
            Expr::Call(Func::IntegerExponent, args) => {
                // numpy refuses a negative integer exponent: the failure record's buffer is
                // NEGATIVE_EXPONENT (-2), its index the exponent.
                let y = self.emit(&args[0])?;
                let zero = self.constant(&Scalar::zero(dtype))?;
                let ix = self.ix();
                self.line(&format!("if {y} < {zero} {{ out_of_bounds(0xfffffffeu, 0u, {ix}({y}), {ix}(0)); }}"));
                Ok(y)
            }
            Expr::Call(f, args) => {
                if *f == Func::Zero {
                    // Zero whatever the argument: the argument is not evaluated.
                    return self.constant(&Scalar::zero(dtype));
                }
                let arg_dtype = self.dtype_of(&args[0])?;
                let xs: Vec<String> = args.iter().map(|a| self.emit(a)).collect::<Result<_>>()?;
                let v = self.call(*f, arg_dtype, &xs)?;
                self.bind(dtype, &v)
            }
            Expr::Reduce(r) => self.reduce(r, dtype),
        }
    }

    /// A float or complex constant as a read of the constant table (see [`Shader::constants`]).
    fn table_constant(&mut self, s: &Scalar) -> Result<String> {
        self.ty(s.dtype())?;
        let k = match self.constant_slots.get(s) {
            Some(&k) => k,
            None => {
                let k = self.constants.len();
                let double = |v: f64| [v.to_bits() as u32, (v.to_bits() >> 32) as u32];
                match *s {
                    Scalar::F32(v) => self.constants.push(v.to_bits()),
                    Scalar::F64(v) => self.constants.extend(double(v)),
                    Scalar::C64(c) => self.constants.extend([c.re.to_bits(), c.im.to_bits()]),
                    Scalar::C128(c) => self.constants.extend(double(c.re).into_iter().chain(double(c.im))),
                    other => return Err(bug(format!("{} is no float constant", other.dtype()))),
                }
                self.constant_slots.insert(*s, k);
                k
            }
        };
        let dec = if self.float32_in_float64() { Some(self.library.require("f32dec", "f64")) } else { None };
        let single = |i: usize| match &dec {
            Some(f) => format!("{f}(cst[{i}])"),
            None => format!("bitcast<f32>(cst[{i}])"),
        };
        let double = |i: usize| format!("bitcast<f64>(u64(cst[{i}]) | (u64(cst[{}]) << 32u))", i + 1);
        let c64 = if dec.is_some() { "vec2<f64>" } else { "vec2<f32>" };
        Ok(match s {
            Scalar::F32(_) => single(k),
            Scalar::F64(_) => double(k),
            Scalar::C64(_) => format!("{c64}({}, {})", single(k), single(k + 1)),
            _ => format!("vec2<f64>({}, {})", double(k), double(k + 2)),
        })
    }

    /// A WGSL literal of `s` (non-finite floats through their bits, which naga accepts).
    fn constant(&mut self, s: &Scalar) -> Result<String> {
        fn int(v: i128, ty: &str, suffix: &str, bits: u32) -> String {
            if v >= 0 {
                format!("{ty}({v}{suffix})")
            } else {
                // Two's complement bits as an unsigned literal, reinterpreted.
                let u = (v as u128) & ((1u128 << bits) - 1);
                let us = if bits == 64 { "lu" } else { "u" };
                format!("bitcast<{ty}>({u}{us})")
            }
        }
        let f64_literal = |v: f64| -> String {
            if v.is_finite() {
                format!("f64({v:?}lf)")
            } else {
                let bits: u64 = if v.is_nan() { 0x7ff8_0000_0000_0000 } else { v.to_bits() };
                format!("bitcast<f64>({bits}lu)")
            }
        };
        let f32_literal = |v: f32| -> String {
            if v.is_finite() {
                format!("f32({v:?}f)")
            } else {
                let bits = if v.is_nan() { 0x7fc0_0000 } else { v.to_bits() };
                format!("bitcast<f32>({bits}u)")
            }
        };
        self.ty(s.dtype())?;
        let narrowed;
        let s = match s {
            // In range: `narrowable` checked every int64 value.
            Scalar::I64(v) if self.narrow => {
                narrowed = Scalar::I32(*v as i32);
                &narrowed
            }
            _ => s,
        };
        let wide = self.float32_in_float64();
        Ok(match *s {
            Scalar::F32(v) if wide => f64_literal(v.into()),
            Scalar::C64(c) if wide => format!("vec2<f64>({}, {})", f64_literal(c.re.into()), f64_literal(c.im.into())),
            Scalar::Bool(b) => b.to_string(),
            Scalar::I8(v) => int(v.into(), "i32", "i", 32),
            Scalar::I16(v) => int(v.into(), "i32", "i", 32),
            Scalar::I32(v) => int(v.into(), "i32", "i", 32),
            Scalar::I64(v) => int(v.into(), "i64", "li", 64),
            Scalar::U8(v) => format!("{v}u"),
            Scalar::U16(v) => format!("{v}u"),
            Scalar::U32(v) => format!("{v}u"),
            Scalar::U64(v) => format!("{v}lu"),
            Scalar::F16(v) => format!("{}u", v.to_bits()),
            Scalar::F32(v) => f32_literal(v),
            Scalar::F64(v) => f64_literal(v),
            Scalar::C64(c) => format!("vec2<f32>({}, {})", f32_literal(c.re), f32_literal(c.im)),
            Scalar::C128(c) => format!("vec2<f64>({}, {})", f64_literal(c.re), f64_literal(c.im)),
        })
    }

    /// A read of buffer `name` at `idx` (empty for a 0-d buffer), checked where not proved.
    fn read(&mut self, name: &str, idx: &[Expr], dtype: DType) -> Result<String> {
        let id = *self.names.get(name).ok_or_else(|| bug(format!("no buffer {name}")))?;
        let k = self.slot[&id];
        let dims = self.program.buffers[id.0].shape.dims().to_vec();
        if dims.len() != idx.len() {
            return Err(bug(format!("{name} has {} axes, subscripted with {}", dims.len(), idx.len())));
        }
        let z = self.lit(0);
        let mut terms = Vec::new();
        let mut checks = Vec::new();
        for (axis, (i, d)) in idx.iter().zip(&dims).enumerate() {
            let v = self.emit_index(i)?;
            if !self.ranges.proves_in_bounds(i, d) {
                self.line(&format!(
                    "if {v} < {z} || {v} >= e{k}_{axis} {{ out_of_bounds({}u, {axis}u, {v}, e{k}_{axis}); }}",
                    id.0
                ));
                checks.push(format!("({v} >= {z} && {v} < e{k}_{axis})"));
            }
            terms.push(format!("{v} * st{k}_{axis}"));
        }
        let offset = terms.join(" + ");
        let element = match (terms.is_empty(), checks.is_empty()) {
            (true, _) => format!("b{k}[0u]"),
            (false, true) => format!("b{k}[u32({offset})]"),
            (false, false) => format!("b{k}[u32(select({z}, {offset}, {}))]", checks.join(" && ")),
        };
        let value = match dtype {
            DType::Bool => format!("({element} != 0u)"),
            _ => self.decoded(dtype, &element),
        };
        self.bind(dtype, &value)
    }

    /// Whether float32 and complex64 values are held in float64 (see the module docs).
    fn float32_in_float64(&self) -> bool {
        self.features.f64
    }

    /// A value of `dtype` from its storage element `raw` (float32 and complex64 bits decoded
    /// where values are held in float64; others as stored).
    fn decoded(&mut self, dtype: DType, raw: &str) -> String {
        match dtype {
            DType::F32 if self.float32_in_float64() => format!("{}({raw})", self.library.require("f32dec", "f64")),
            DType::C64 if self.float32_in_float64() => {
                format!("{}({raw})", self.library.require("c64dec", "vec2<f64>"))
            }
            _ => raw.to_string(),
        }
    }

    /// The storage element of a value of `dtype` (see [`Translator::decoded`]).
    fn encoded(&mut self, dtype: DType, value: &str) -> String {
        match dtype {
            DType::Bool => format!("select(0u, 1u, {value})"),
            DType::F32 if self.float32_in_float64() => format!("{}({value})", self.library.require("f32enc", "f64")),
            DType::C64 if self.float32_in_float64() => {
                format!("{}({value})", self.library.require("c64enc", "vec2<f64>"))
            }
            _ => value.to_string(),
        }
    }

    /// `value`, a float64 (complex128) computation of a float32 (complex64) result, rounded to
    /// float32 where values are held in float64, or converted to `dtype`'s value type.
    fn rounded(&mut self, dtype: DType, value: &str) -> Result<String> {
        Ok(match dtype {
            DType::F32 if self.float32_in_float64() => format!("{}({value})", self.library.require("r32", "f64")),
            DType::C64 if self.float32_in_float64() => {
                format!("{}({value})", self.library.require("r32", "vec2<f64>"))
            }
            _ => format!("{}({value})", self.ty(dtype)?),
        })
    }

    /// `value` of a float or complex `dtype` through the opaque helper `which` (`opqa`/`opqb`, see
    /// `library`); other dtypes (and float16's bits, which no operation computes on) unchanged.
    fn opaque(&mut self, dtype: DType, value: &str, which: &'static str) -> Result<String> {
        if !dtype.is_inexact() || dtype == DType::F16 {
            return Ok(value.to_string());
        }
        let ty = self.ty(dtype)?;
        Ok(format!("{}({value})", self.library.require(which, ty)))
    }

    /// Whether float32/complex64 math goes through the float64 library (see `library`).
    fn widen_math(&self, dtype: DType) -> bool {
        self.features.f64 && matches!(dtype, DType::F32 | DType::C64)
    }

    fn binary(&mut self, op: BinaryOp, dtype: DType, x: &str, y: &str) -> Result<String> {
        use BinaryOp::*;
        let ty = self.ty(dtype)?;
        if self.widen_math(dtype) && matches!((op, dtype), (Pow, _) | (FloorDiv | Rem, DType::C64)) {
            // In the float64 library, rounded once. The wide operation makes its operands opaque:
            // not here too, since an opaque helper applied twice is the identity (a XOR with the
            // same hidden zero), which let the driver see the zero imaginary part of an integer
            // exponent cast to complex64 (`z ** uint8(255)` lost its NaN).
            let wide = if dtype == DType::F32 { DType::F64 } else { DType::C128 };
            let wide_ty = self.ty(wide)?;
            let v = self.binary(op, wide, &format!("{wide_ty}({x})"), &format!("{wide_ty}({y})"))?;
            return self.rounded(dtype, &v);
        }
        // Float operands are opaque (different zeros on each side): no folding of `x - x` or
        // `x * 0`, no fused multiply-add numpy would not compute.
        let (xo, yo) = (self.opaque(dtype, x, "opqa")?, self.opaque(dtype, y, "opqb")?);
        let (x, y) = (xo.as_str(), yo.as_str());
        if self.widen_math(dtype) && dtype == DType::F32 && matches!(op, FloorDiv | Rem) {
            // numpy's float32 `//` and `%` step in float32: in float64, each step rounded.
            let name = if op == FloorDiv { "ffloordiv32" } else { "frem32" };
            let f = self.library.require(name, "f64");
            return self.rounded(dtype, &format!("{f}(f64({x}), f64({y}))"));
        }
        if self.float32_in_float64() && matches!(dtype, DType::F32 | DType::C64) {
            // Computed in float64 and rounded once: numpy's float32 result (module docs).
            let v = match (op, dtype) {
                (Mul, DType::C64) => format!("{}({x}, {y})", self.library.require("cmul32", ty)),
                (Div, DType::C64) => format!("{}({x}, {y})", self.library.require("div32", ty)),
                (Add | Sub | Mul | Div, _) => {
                    let sym = match op {
                        Add => "+",
                        Sub => "-",
                        Mul => "*",
                        _ => "/",
                    };
                    self.rounded(dtype, &format!("{x} {sym} {y}"))?
                }
                _ => return Err(bug(format!("{op:?} of {dtype}"))),
            };
            return Ok(v);
        }
        if dtype == DType::F32 && matches!(op, FloorDiv | Rem) && !self.features.f64 {
            // numpy's float `//` and `%` need an exact `fmod`, which the library computes in float64.
            return Err(unsupported(format!(
                "float32 {} needs the adapter feature SHADER_F64 (and SHADER_INT64) for an exact fmod, which this \
                 adapter lacks",
                if op == FloorDiv { "//" } else { "%" }
            )));
        }
        let arith = |sym: &str| format!("{x} {sym} {y}");
        Ok(match (op, dtype) {
            (LogicalAnd, _) | (BitAnd, DType::Bool) => format!("{x} && {y}"),
            (LogicalOr, _) | (BitOr, DType::Bool) => format!("{x} || {y}"),
            (BitXor, DType::Bool) => format!("{x} != {y}"),
            (BitAnd, _) => arith("&"),
            (BitOr, _) => arith("|"),
            (BitXor, _) => arith("^"),
            (Add, _) => wrap(dtype, arith("+")),
            (Sub, _) => wrap(dtype, arith("-")),
            (Mul, DType::C64 | DType::C128) => format!("{}({x}, {y})", self.library.require("cmul", ty)),
            (Mul, _) => wrap(dtype, arith("*")),
            (Div, DType::C64 | DType::C128) => format!("{}({x}, {y})", self.library.require("div", ty)),
            (Div, _) => arith("/"),
            (Pow, DType::F32 | DType::F64 | DType::C64 | DType::C128) => {
                format!("{}({x}, {y})", self.library.require("pow", ty))
            }
            (Pow, _) => wrap(dtype, format!("{}({x}, {y})", self.library.require("ipow", ty))),
            (FloorDiv, DType::F32 | DType::F64) => format!("{}({x}, {y})", self.library.require("ffloordiv", ty)),
            (Rem, DType::F32 | DType::F64) => format!("{}({x}, {y})", self.library.require("frem", ty)),
            (FloorDiv, _) => wrap(dtype, format!("{}({x}, {y})", self.library.require("floordiv", ty))),
            (Rem, _) => wrap(dtype, format!("{}({x}, {y})", self.library.require("pyrem", ty))),
        })
    }

    /// `x * y` as numpy's `einsum` and reductions (`prod`, `cumprod`) multiply: complex numbers
    /// by the textbook formula (the library's `mul`, `Func::TextbookProduct`; numpy's elementwise
    /// multiply fuses a product into each part, `cmul`), everything else as
    /// [`Translator::binary`].
    pub(crate) fn product_in_order(&mut self, dtype: DType, x: &str, y: &str) -> Result<String> {
        if !dtype.is_complex() {
            return self.binary(BinaryOp::Mul, dtype, x, y);
        }
        let ty = self.ty(dtype)?;
        let (xo, yo) = (self.opaque(dtype, x, "opqa")?, self.opaque(dtype, y, "opqb")?);
        let name = if dtype == DType::C64 && self.float32_in_float64() { "mul32" } else { "mul" };
        Ok(format!("{}({xo}, {yo})", self.library.require(name, ty)))
    }

    fn compare(&mut self, op: CompareOp, dtype: DType, x: &str, y: &str) -> Result<String> {
        let ty = self.ty(dtype)?;
        // An opaque right operand: `x < x` must not fold (NaN < NaN is false, so is NaN >= NaN).
        let yo = self.opaque(dtype, y, "opqb")?;
        let y = yo.as_str();
        let sym = op.symbol();
        Ok(match (op, dtype) {
            (CompareOp::Ne, DType::F32 | DType::F64) => format!("{}({x}, {y})", self.library.require("ne", ty)),
            (CompareOp::Eq, DType::C64 | DType::C128) => format!("all({x} == {y})"),
            (CompareOp::Ne, DType::C64 | DType::C128) => {
                let ne = self.library.require("ne", real_of(ty));
                format!("{ne}({x}.x, {y}.x) || {ne}({x}.y, {y}.y)")
            }
            // Lexicographic: real parts, then imaginary parts; a NaN imaginary part voids the
            // order of the real parts (numpy's CLT, ...).
            (_, DType::C64 | DType::C128) => {
                let strict = &sym[..1];
                let isnan = self.library.require("isnan", real_of(ty));
                format!(
                    "({x}.x {strict} {y}.x && !{isnan}({x}.y) && !{isnan}({y}.y)) || ({x}.x == {y}.x && {x}.y {sym} {y}.y)"
                )
            }
            // WGSL orders no bools: false < true as 0 < 1.
            (CompareOp::Lt | CompareOp::Le | CompareOp::Gt | CompareOp::Ge, DType::Bool) => {
                format!("select(0u, 1u, {x}) {sym} select(0u, 1u, {y})")
            }
            _ => format!("{x} {sym} {y}"),
        })
    }

    fn cast(&mut self, from: DType, to: DType, x: &str) -> Result<String> {
        use DType::*;
        let from_ty = self.ty(from)?;
        let to_ty = self.ty(to)?;
        if from == to {
            return Ok(x.to_string());
        }
        // float16 through float32, with numpy's rounding (float64 rounds directly).
        let wide = self.float32_in_float64();
        if from == F16 {
            let decode = if wide { "f16_to_f64" } else { "f16_to_f32" };
            let value = format!("{}({x})", self.library.require(decode, "u32"));
            return self.cast(F32, to, &value);
        }
        if to == F16 && !matches!(from, C64 | C128) {
            if from == F64 {
                return Ok(format!("{}({x})", self.library.require("f64_to_f16", "f64")));
            }
            let narrow = self.cast(from, F32, x)?;
            // A float32 held in float64 rounds to float16 as the float32 itself would.
            if wide {
                return Ok(format!("{}({narrow})", self.library.require("f64_to_f16", "f64")));
            }
            return Ok(format!("{}({narrow})", self.library.require("f32_to_f16", "f32")));
        }
        let is_complex = |d: DType| matches!(d, C64 | C128);
        let is_float = |d: DType| matches!(d, F32 | F64);
        // Complex sources: to complex, convert both parts; otherwise drop the imaginary part
        // (to bool, both parts count).
        if is_complex(from) {
            if is_complex(to) {
                return if to == C64 { self.rounded(C64, x) } else { Ok(format!("{to_ty}({x})")) };
            }
            if to == Bool {
                let ne = self.library.require("ne", real_of(from_ty));
                return Ok(format!("{ne}({x}.x, 0.0) || {ne}({x}.y, 0.0)"));
            }
            let re = format!("{x}.x");
            return self.cast(if from == C64 { F32 } else { F64 }, to, &re);
        }
        if is_complex(to) {
            let part = real_of(to_ty);
            let re = self.cast(from, if to == C64 { F32 } else { F64 }, x)?;
            return Ok(format!("{to_ty}({re}, {part}(0.0))"));
        }
        Ok(match (from, to) {
            (Bool, _) => {
                let one = self.constant(&Scalar::one(to))?;
                let zero = self.constant(&Scalar::zero(to))?;
                format!("select({zero}, {one}, {x})")
            }
            (_, Bool) if is_float(from) => format!("{}({x}, {from_ty}(0.0))", self.library.require("ne", from_ty)),
            (_, Bool) => format!("{x} != {from_ty}(0)"),
            // Floats to integers: numpy's results on x86-64 (`pytato_runtime::math::float_to_int`).
            (_, I64) if is_float(from) => format!("{}({x})", self.library.require("cvtt64", from_ty)),
            (_, U64) if is_float(from) => format!("{}({x})", self.library.require("cvttu64", from_ty)),
            (_, U32) if is_float(from) => {
                format!("u32(bitcast<u64>({}({x})) & 0xfffffffflu)", self.library.require("cvtt64", from_ty))
            }
            (_, I8 | I16 | I32) if is_float(from) => {
                wrap(to, format!("{}({x})", self.library.require("cvtt32", from_ty)))
            }
            (_, _) if is_float(from) && !is_float(to) => {
                wrap(to, format!("bitcast<u32>({}({x}))", self.library.require("cvtt32", from_ty)))
            }
            (I64, F32) if wide => format!("{}({x})", self.library.require("i64_to_f32", "f64")),
            (U64, F32) if wide => format!("{}({x})", self.library.require("u64_to_f32", "f64")),
            // Values of at most 32 bits convert to float64 exactly; float64 rounds once.
            (_, F32) if wide => self.rounded(F32, &format!("f64({x})"))?,
            (_, F32 | F64) => format!("{to_ty}({x})"),
            // Integers of up to 32 bits: reinterpreted to the target's signedness, then wrapped.
            (I8 | I16 | I32 | U8 | U16 | U32, I8 | I16 | I32 | U8 | U16 | U32) => {
                let signed = |d: DType| matches!(d, I8 | I16 | I32);
                let converted = match (signed(from), signed(to)) {
                    (true, false) => format!("bitcast<u32>({x})"),
                    (false, true) => format!("bitcast<i32>({x})"),
                    _ => x.to_string(),
                };
                // `+ zero` (opaque, see `main`): naga must not fold the wrapping shifts of a
                // constant, which it rejects as an overflow.
                let zero = if signed(to) { "i32(zero)" } else { "u32(zero)" };
                wrap(to, format!("({converted} + {zero})"))
            }
            // Integer to integer: through 64 bits, keeping the source's sign, then wrapped.
            _ => {
                let signed = matches!(from, I8 | I16 | I32 | I64);
                let wide = if signed { format!("i64({x})") } else { format!("u64({x})") };
                // `+ zero`: see `main` (a 64-bit value extended from 32 bits must be opaque).
                let from_32 = !matches!(from, I64 | U64);
                let wide = match (from_32, signed) {
                    (true, true) => format!("({wide} + zero)"),
                    (true, false) => format!("({wide} + bitcast<u64>(zero))"),
                    _ => wide,
                };
                let converted = match to {
                    I64 if !signed => format!("bitcast<i64>({wide})"),
                    U64 if signed => format!("bitcast<u64>({wide})"),
                    I64 | U64 => wide,
                    I8 | I16 | I32 => format!("i32({})", if signed { wide } else { format!("bitcast<i64>({wide})") }),
                    _ => format!("u32({})", if signed { format!("bitcast<u64>({wide})") } else { wide }),
                };
                wrap(to, converted)
            }
        })
    }

    fn call(&mut self, f: Func, dtype: DType, xs: &[String]) -> Result<String> {
        use Func::*;
        let ty = self.ty(dtype)?;
        let complex = matches!(dtype, DType::C64 | DType::C128);
        let math = matches!(
            f,
            Sqrt | Exp
                | Log
                | Log10
                | Sin
                | Cos
                | Tan
                | Arcsin
                | Arccos
                | Arctan
                | Arctan2
                | Sinh
                | Cosh
                | Tanh
                | Arcsinh
                | Arccosh
                | Arctanh
                | Expm1
                | Log1p
                | Log2
                | Cbrt
                | Exp2
                | Hypot
                | LogAddExp
                | Ldexp
                | FrexpMantissa
                | FrexpExponent
        ) || (f == Abs && complex);
        if math && matches!(dtype, DType::F32 | DType::C64) && !self.features.f64 && f != Sqrt {
            // The drivers' single-precision functions make no accuracy promise numpy's users could
            // rely on (huge arguments of `sin`, say): an error, not a wrong value.
            return Err(unsupported(format!(
                "{} of {dtype} is computed through the float64 library for numpy's accuracy, and needs the \
                 adapter feature SHADER_F64 (and SHADER_INT64), which this adapter lacks",
                f.name()
            )));
        }
        if f == Abs && dtype == DType::C64 && self.float32_in_float64() {
            // numpy's complex64 absolute, in single precision's steps (not rounded once).
            let ty = self.ty(dtype)?;
            return Ok(format!("{}({})", self.library.require("abs32", ty), xs[0]));
        }
        if math && self.widen_math(dtype) {
            // Single precision through the float64 library, rounded once (module `library`).
            let wide = if complex { DType::C128 } else { DType::F64 };
            let wide_ty = self.ty(wide)?;
            let args: Vec<String> = xs.iter().map(|x| format!("{wide_ty}({x})")).collect();
            let v = self.call(f, wide, &args)?;
            let result = f.result_dtype(dtype).map_err(|why| bug(format!("{}({dtype}): {why}", f.name())))?;
            return self.rounded(result, &v);
        }
        // The second operand is opaque: `maximum(x, x)`, `arctan2(x, x)` must not fold. So is a
        // complex first one: a part the driver knows (the zero imaginary part of a real cast to
        // complex) would let it fold `sinh(x) * sin(0.0)` to `+0.0`, whose sign is `x`'s in numpy.
        let first = if complex && math { self.opaque(dtype, &xs[0], "opqa")? } else { xs[0].clone() };
        let second = match xs.get(1) {
            Some(y) => Some(self.opaque(dtype, y, "opqb")?),
            None => None,
        };
        let xs: Vec<String> = std::iter::once(first).chain(second).collect();
        let xs = &xs[..];
        let x = &xs[0];
        let lib = |t: &mut Self, name: &'static str| -> String {
            let f = t.library.require(name, ty);
            format!("{f}({})", xs.join(", "))
        };
        if f == MakeComplex {
            return Ok(format!("{}({x}, {})", self.ty(dtype.complex_dtype())?, xs[1]));
        }
        Ok(match f {
            Abs if complex => lib(self, "abs"),
            Abs if dtype == DType::U8 || dtype == DType::U16 || dtype == DType::U32 || dtype == DType::U64 => x.clone(),
            Abs if matches!(dtype, DType::F32 | DType::F64) => lib(self, "fabs"),
            Abs => wrap(dtype, format!("abs({x})")),
            Sqrt if complex => lib(self, "sqrt"),
            Sqrt => format!("sqrt({x})"),
            Floor => lib(self, "ffloor"),
            Ceil => lib(self, "fceil"),
            IsNan => lib(self, "isnan"),
            Real if complex => format!("{x}.x"),
            Imag if complex => format!("{x}.y"),
            Real => x.clone(),
            Imag => format!("{ty}(0.0)"),
            Conj if complex => format!("{ty}({x}.x, {}({x}.y))", self.library.require("fneg", real_of(ty))),
            Conj => x.clone(),
            Zero | NormalizeIndex | IntegerExponent | RequireNonNegative | MakeComplex => {
                unreachable!("handled by the caller")
            }
            Maximum | Minimum if matches!(dtype, DType::F32 | DType::F64) => {
                lib(self, if f == Maximum { "fmax" } else { "fmin" })
            }
            Maximum if dtype == DType::Bool => format!("{x} || {}", xs[1]),
            Minimum if dtype == DType::Bool => format!("{x} && {}", xs[1]),
            Maximum => format!("max({x}, {})", xs[1]),
            Minimum => format!("min({x}, {})", xs[1]),
            Exp => lib(self, "exp"),
            Log => lib(self, "log"),
            Log10 => lib(self, "log10"),
            Sin => lib(self, "sin"),
            Cos => lib(self, "cos"),
            Tan => lib(self, "tan"),
            Arcsin => lib(self, "asin"),
            Arccos => lib(self, "acos"),
            Arctan => lib(self, "atan"),
            Arctan2 => lib(self, "atan2"),
            Sinh => lib(self, "sinh"),
            Cosh => lib(self, "cosh"),
            Tanh => lib(self, "tanh"),
            Arcsinh => lib(self, "asinh"),
            Arccosh => lib(self, "acosh"),
            Arctanh => lib(self, "atanh"),
            Expm1 => lib(self, "expm1"),
            Log1p => lib(self, "log1p"),
            Log2 => lib(self, "log2"),
            Cbrt => lib(self, "cbrt"),
            Exp2 => lib(self, "exp2"),
            Hypot => lib(self, "hypotc"),
            LogAddExp => lib(self, "logaddexp"),
            Copysign => lib(self, "copysign"),
            Nextafter if dtype == DType::F32 && self.float32_in_float64() => lib(self, "nextafter32"),
            Nextafter => lib(self, "nextafter"),
            Fmod if dtype == DType::F32 && !self.features.f64 => {
                return Err(unsupported(
                    "float32 fmod needs the adapter feature SHADER_F64 (and SHADER_INT64) for an exact fmod, which \
                     this adapter lacks"
                        .to_string(),
                ));
            }
            Fmod => lib(self, "fmod"),
            TextbookProduct if dtype == DType::C64 && self.float32_in_float64() => lib(self, "mul32"),
            TextbookProduct => lib(self, "mul"),
            Signbit => lib(self, "signbit"),
            Rint if complex => {
                let f = self.library.require("rint", real_of(ty));
                format!("{ty}({f}({x}.x), {f}({x}.y))")
            }
            Rint => lib(self, "rint"),
            Gcd => wrap(dtype, lib(self, "gcd")),
            Lcm => wrap(dtype, lib(self, "lcm")),
            Ldexp => lib(self, "ldexp"),
            FrexpMantissa => lib(self, "frexpm"),
            FrexpExponent => lib(self, "frexpe"),
        })
    }
}

/// `value` wrapped into the range of an 8/16-bit dtype (held in 32 bits); others unchanged.
fn wrap(dtype: DType, value: String) -> String {
    match dtype {
        DType::I8 => format!("(({value}) << 24u) >> 24u"),
        DType::I16 => format!("(({value}) << 16u) >> 16u"),
        DType::U8 => format!("({value}) & 0xffu"),
        DType::U16 => format!("({value}) & 0xffffu"),
        _ => value,
    }
}
