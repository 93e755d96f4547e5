//! Shaders of the host steps that run as kernels on device data (see `crate::steps`): running
//! sums and products along an axis in numpy's order, binary searches and sorts in numpy's sort
//! order, and the positions of a mask's `true` elements.
//!
//! - **Compaction** (the positions of a mask's `true` elements) counts each block of the mask,
//!   scans the counts with the scan shader, and has each block write its positions from its
//!   offset: the positions of the host's row-major walk.
//!
//! All bind the control block at 0 (its `sizes` carry the step's lengths), their operands after
//! it and the result last. Only a scatter can fail (a position out of range): it writes the
//! control block's error record as a kernel does, for `crate::deferred` to read.
//!
//! - **Scans** run one invocation per row (every index of the other axes), left to right, one
//!   `+` or `*` at a time in the dtype, as numpy's `cumsum`/`cumprod` loops and the host's
//!   `pytato_runtime::scan` do: the value operations are the kernels' own (`Translator::binary`,
//!   numpy's wrapping, float32 rounded once from float64, float16 through float32), so the bits
//!   are the host's. Long rows, but for float products, are scanned in the order
//!   `pytato_runtime::scan` defines: in parallel blocks, the blocks' totals scanned (the same way,
//!   recursively), and each block combined with the total before it. A float product (and a
//!   short row) runs one invocation per row; a dispatch scans the positions `[start, end)` of
//!   every row and continues from the result at `start - 1`: where a driver caps the iterations
//!   of an invocation (llvmpipe), long rows run as several dispatches, in order.
//! - **Binary searches** compare order-preserving integer keys, never floats: a float's key is its
//!   bits with the sign folded in (`-0.0` as `0.0`, every NaN above every number), the order of
//!   `pytato_runtime::sort`; a complex number's key is the sorts' (below), its words compared
//!   from the most significant. No driver freedom (NaN assumed away, zeros' signs) reaches them.
//! - **Sorts** are least-significant-digit radix sorts of the same keys, 4 bits a pass: each pass
//!   counts the digits of every block of [`SORT_BLOCK`] items of a row, scans the counts (rows,
//!   then bins, then blocks, in order) into each block's places per bin, and moves each item
//!   there, after the items of its block before it with its digit ([`Ranking`]: one invocation
//!   walking the block, or a workgroup with an item per invocation). An item carries its value
//!   with its element's index, so a pass reads both in order instead of gathering the value
//!   from the element's place (a read from anywhere in the array, item after item). Each pass
//!   is stable, so the sort is: equal keys (`-0.0` and `0.0`, NaNs of any payload) keep their
//!   order, numpy's `kind="stable"`. Descending sorts sort the complemented digits, so equal
//!   elements still keep their order, as the host's sort does.
//! - **Scatters** (`x[idx] = v`, `np.add.at`) check and normalize the positions into slots, sort
//!   the writes stably by slot (the radix sort above), and give each slot's run of writes, in the
//!   host's order, to one invocation: the last value of a run is set; a run's values are added
//!   one at a time, numpy's order and rounding.

use std::collections::HashMap;
use std::fmt::Write;

use pytato_core::array::{ScanOp, Side, SortResult};
use pytato_core::dtype::result_type;
use pytato_core::expr::BinaryOp;
use pytato_core::{DType, Result};
use pytato_transform::bounds::Ranges;
use pytato_transform::kernel::KernelProgram;

use super::library::{Library, OPAQUE_DECLARATIONS, OPAQUE_INIT};
use super::{LoopPlan, Shader, ShaderFeatures, Translator, WORKGROUP_SIZE, bug, storage_type, unsupported};

/// The shader of a running sum or product of `dtype` (see the module docs). Its `sizes`: the
/// number of rows, the length of the scanned axis, the product of the axes after it, the
/// positions `[start, end)` this dispatch scans, and the length of the blocks each row is scanned
/// in (each block from its own first element; the whole row for a scan in numpy's order). One
/// invocation per row and block.
pub(crate) fn scan_shader(dtype: DType, op: ScanOp, features: ShaderFeatures) -> Result<Shader> {
    if !features.i64 {
        return Err(unsupported("scans on the device need the adapter feature SHADER_INT64".into()));
    }
    let storage = storage_type(dtype, features)?;
    let program = KernelProgram::default();
    let names = HashMap::new();
    let mut t = Translator::standalone(&program, &names, features);
    let binary = scan_binary(op);
    // The accumulator's type, its value from a storage element, one step, and its storage form.
    let (acc_ty, load, step, store): (&str, String, String, String) = match dtype {
        // `Array::new_scan` refuses booleans.
        DType::Bool => return Err(bug("a scan of booleans")),
        // numpy's float16 loops: in float32, rounded to float16 at every step.
        DType::F16 => {
            let (a, v) = (t.cast(DType::F16, DType::F32, "acc")?, t.cast(DType::F16, DType::F32, "v")?);
            let wide = t.binary(binary, DType::F32, &a, &v)?;
            ("u32", "RAW".into(), t.cast(DType::F32, DType::F16, &wide)?, "acc".into())
        }
        _ => {
            let load = t.decoded(dtype, "RAW");
            // numpy's cumprod multiplies complex numbers by the textbook formula.
            let step = match op {
                ScanOp::Product => t.product_in_order(dtype, "acc", "v")?,
                ScanOp::Sum => t.binary(binary, dtype, "acc", "v")?,
            };
            (t.ty(dtype)?, load, step, t.encoded(dtype, "acc"))
        }
    };
    if !t.constants.is_empty() {
        return Err(bug(format!("a scan of {dtype} needs a constant table")));
    }
    let load = |raw: &str| load.replace("RAW", raw);
    let body = format!(
        "    let gid: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    let rows: u32 = u32(ctl.sizes[0]);
    let len: u32 = u32(ctl.sizes[1]);
    let inner: u32 = u32(ctl.sizes[2]);
    let block_len: u32 = u32(ctl.sizes[5]);
    if gid >= rows * ((len + block_len - 1u) / block_len) {{ return; }}
    {OPAQUE_INIT}
    let row: u32 = gid % rows;
    let first: u32 = (gid / rows) * block_len;
    let lo: u32 = max(u32(ctl.sizes[3]), first);
    let hi: u32 = min(u32(ctl.sizes[4]), min(first + block_len, len));
    if lo >= hi {{ return; }}
    let base: u32 = (row / inner) * len * inner + row % inner;
    var acc: {acc_ty};
    var i: u32 = lo;
    if lo == first {{
        acc = {at_first};
        y[base + i * inner] = {store};
        i = i + 1u;
    }} else {{
        acc = {carried};
    }}
    loop {{
        if i >= hi {{ break; }}
        let v: {acc_ty} = {next};
        acc = {step};
        y[base + i * inner] = {store};
        i = i + 1u;
    }}
",
        at_first = load("x[base + i * inner]"),
        carried = load("y[base + (lo - 1u) * inner]"),
        next = load("x[base + i * inner]"),
    );
    let bindings = [("x", storage, false), ("y", storage, true)];
    Ok(assemble("scan", t.library.source(), &bindings, &body, dtype))
}

/// The start of the block shaders' `main`: the invocation's element `gid` (below `sizes[0]`) of
/// an array of shape `(outer, along, inner)`, as its position `o` on the outer axes, `middle` on
/// the middle one and `k` on the inner ones; the lengths of a scan in blocks from `sizes[1..4]`
/// (`len`, `inner`, `blocks`), and its `block_len`, [`SCAN_BLOCK`]. The position divides only
/// where it must (a division by a length the shader does not know costs a driver many
/// instructions): not at all for one row of one inner element, the common scan of a vector.
fn blocks_prologue(middle: &str, along: &str) -> String {
    format!(
        "    let gid: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    if gid >= u32(ctl.sizes[0]) {{ return; }}
    let len: u32 = u32(ctl.sizes[1]);
    let inner: u32 = u32(ctl.sizes[2]);
    let blocks: u32 = u32(ctl.sizes[3]);
    let block_len: u32 = {SCAN_BLOCK}u;
    var k: u32 = 0u;
    var q: u32 = gid;
    if inner != 1u {{
        q = gid / inner;
        k = gid - q * inner;
    }}
    var o: u32 = 0u;
    if q >= {along} {{ o = q / {along}; }}
    let {middle}: u32 = q - o * {along};
"
    )
}

/// The block length of a scan in blocks (see `pytato_runtime::scan`).
const SCAN_BLOCK: usize = pytato_runtime::scan::SCAN_BLOCK;

/// The shader gathering, for a scan in blocks, the last running value of every block: `totals`,
/// of shape `(outer, blocks, inner)`, from `y`, of shape `(outer, len, inner)`. `sizes`: the
/// number of totals, `len`, `inner` and the number of blocks.
pub(crate) fn block_totals_shader(dtype: DType, features: ShaderFeatures) -> Result<Shader> {
    let storage = storage_type(dtype, features)?;
    let body = format!(
        "{prologue}    let last: u32 = min((b + 1u) * block_len, len) - 1u;
    totals[gid] = y[(o * len + last) * inner + k];
",
        prologue = blocks_prologue("b", "blocks")
    );
    Ok(assemble("scan block totals", "", &[("y", storage, false), ("totals", storage, true)], &body, dtype))
}

/// The shader finishing a scan in blocks (an integer scan, or a float sum; see
/// `pytato_runtime::scan`): every element of a block after the first becomes `before +
/// running` (`*` for products), `before` the scanned total of the blocks before it, with the
/// value operations of the scan shader (float16 through float32). `sizes`: the element count,
/// `len`, `inner` and the number of blocks.
pub(crate) fn block_offsets_shader(dtype: DType, op: ScanOp, features: ShaderFeatures) -> Result<Shader> {
    if dtype == DType::Bool || (dtype.is_inexact() && op == ScanOp::Product) {
        return Err(bug(format!("a {op:?} scan of {dtype} in blocks")));
    }
    let storage = storage_type(dtype, features)?;
    let program = KernelProgram::default();
    let names = HashMap::new();
    let mut t = Translator::standalone(&program, &names, features);
    let binary = scan_binary(op);
    let combined = match dtype {
        DType::F16 => {
            let (a, v) = (t.cast(DType::F16, DType::F32, "before")?, t.cast(DType::F16, DType::F32, "y[gid]")?);
            let wide = t.binary(binary, DType::F32, &a, &v)?;
            t.cast(DType::F32, DType::F16, &wide)?
        }
        _ => {
            let (a, v) = (t.decoded(dtype, "before"), t.decoded(dtype, "y[gid]"));
            let value = t.binary(binary, dtype, &a, &v)?;
            t.encoded(dtype, &value)
        }
    };
    if !t.constants.is_empty() {
        return Err(bug(format!("a scan of {dtype} in blocks needs a constant table")));
    }
    let body = format!(
        "{prologue}    let b: u32 = i / block_len;
    if b == 0u {{ return; }}
    {OPAQUE_INIT}
    let before = scanned[(o * blocks + b - 1u) * inner + k];
    y[gid] = {combined};
",
        prologue = blocks_prologue("i", "len")
    );
    let bindings = [("scanned", storage, false), ("y", storage, true)];
    Ok(assemble("scan block offsets", t.library.source(), &bindings, &body, dtype))
}

/// The operation a scan accumulates with.
fn scan_binary(op: ScanOp) -> BinaryOp {
    match op {
        ScanOp::Sum => BinaryOp::Add,
        ScanOp::Product => BinaryOp::Mul,
    }
}

/// The shader of a binary search of each value in a sorted 1-d array of `dtype`, in numpy's
/// order (see the module docs); `sizes`: the sorted array's length and the number of values. One
/// invocation per value writes its position as `int64`.
pub(crate) fn searchsorted_shader(dtype: DType, side: Side, features: ShaderFeatures) -> Result<Shader> {
    if !features.i64 {
        return Err(unsupported("binary searches on the device need the adapter feature SHADER_INT64".into()));
    }
    let storage = storage_type(dtype, features)?;
    // The sorted element `a` goes before the value `k` (both as keys): by the integer keys'
    // order, or for complex numbers by `order`, their sort keys' words compared from the most
    // significant (the class) down.
    let (key, before) = if dtype.is_complex() {
        let functions = format!(
            "{}fn key(x: {storage}) -> {storage} {{ return x; }}\n{}",
            sort_word(dtype, storage)?,
            complex_order(dtype, storage)
        );
        let before = match side {
            Side::Left => "order(a, k) < 0",
            Side::Right => "order(a, k) <= 0",
        };
        (functions, before)
    } else {
        let before = match side {
            Side::Left => "a < k",
            Side::Right => "a <= k",
        };
        (sort_key(dtype, storage)?, before)
    };
    let body = format!(
        "    let gid: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    if gid >= u32(ctl.sizes[1]) {{ return; }}
    let k = key(values[gid]);
    var lo: u32 = 0u;
    var hi: u32 = u32(ctl.sizes[0]);
    loop {{
        if lo >= hi {{ break; }}
        let mid: u32 = lo + (hi - lo) / 2u;
        let a = key(sorted[mid]);
        if {before} {{ lo = mid + 1u; }} else {{ hi = mid; }}
    }}
    out[gid] = i64(lo);
"
    );
    let bindings = [("sorted", storage, false), ("values", storage, false), ("out", "i64", true)];
    Ok(assemble("searchsorted", &key, &bindings, &body, dtype))
}

/// Elements of a mask each invocation of the compaction shaders walks: few enough that its loop
/// stays far below llvmpipe's cap on an invocation's iterations.
pub(crate) const MASK_BLOCK: u32 = 256;

/// The shader counting the `true` elements of each block of [`MASK_BLOCK`] elements of a mask
/// (stored as `u32` 0 or 1) into `int64`s; `sizes`: the mask's element count and the number of
/// blocks. One invocation per block.
pub(crate) fn mask_counts_shader() -> Shader {
    let body = format!(
        "    let gid: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    if gid >= u32(ctl.sizes[1]) {{ return; }}
    let start: u32 = gid * {MASK_BLOCK}u;
    let end: u32 = min(start + {MASK_BLOCK}u, u32(ctl.sizes[0]));
    var c: i64 = 0li;
    var f: u32 = start;
    loop {{
        if f >= end {{ break; }}
        c = c + select(0li, 1li, mask[f] != 0u);
        f = f + 1u;
    }}
    counts[gid] = c;
"
    );
    assemble("mask counts", "", &[("mask", "u32", false), ("counts", "i64", true)], &body, DType::Bool)
}

/// The shader writing the positions of the `true` elements of a mask of `ndim` axes, in row-major
/// order, as the rows of an `int64` array of shape `(ndim, count)`: each invocation walks its block
/// of [`MASK_BLOCK`] elements and starts at the running count of the blocks before it
/// (`offsets`, inclusive). `sizes`: the mask's element count, the number of blocks, the count,
/// then the mask's shape.
pub(crate) fn mask_positions_shader(ndim: usize) -> Shader {
    let mut split = String::new();
    for axis in (1..ndim).rev() {
        let _ = write!(
            split,
            "
            out[{axis}u * count + k] = i64(rest % d{axis});
            rest = rest / d{axis};"
        );
    }
    let dims: String =
        (1..ndim).map(|axis| format!("    let d{axis}: u32 = u32(ctl.sizes[{}]);\n", 3 + axis)).collect();
    let body = format!(
        "    let gid: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    if gid >= u32(ctl.sizes[1]) {{ return; }}
    let count: u32 = u32(ctl.sizes[2]);
{dims}    var k: u32 = 0u;
    if gid > 0u {{ k = u32(offsets[gid - 1u]); }}
    let start: u32 = gid * {MASK_BLOCK}u;
    let end: u32 = min(start + {MASK_BLOCK}u, u32(ctl.sizes[0]));
    var f: u32 = start;
    loop {{
        if f >= end {{ break; }}
        if mask[f] != 0u {{
            var rest: u32 = f;{split}
            out[k] = i64(rest);
            k = k + 1u;
        }}
        f = f + 1u;
    }}
"
    );
    let bindings = [("mask", "u32", false), ("offsets", "i64", false), ("out", "i64", true)];
    assemble("mask positions", "", &bindings, &body, DType::Bool)
}

/// The WGSL of `k16`, `k32` and `k64`: a float's bits (`u32` for float16 and float32, `u64` for
/// float64) as an order-preserving unsigned key, numpy's order (`pytato_runtime::sort`): negative
/// numbers complemented, the sign bit set on the others, `-0.0` as `0.0`, every NaN the largest key.
fn float_keys() -> String {
    let float_key = |name: &str, ty: &str, sign: &str, inf: &str, mask: &str, nan: &str| {
        format!(
            "fn {name}(b: {ty}) -> {ty} {{
    let m = b & {mask};
    if m > {inf} {{ return {nan}; }}
    if m == 0{s} {{ return {sign}; }}
    if (b & {sign}) != 0{s} {{ return (~b) & ({sign} | {mask}); }}
    return b | {sign};
}}
",
            s = if ty == "u64" { "lu" } else { "u" }
        )
    };
    let k16 = float_key("k16", "u32", "0x8000u", "0x7c00u", "0x7fffu", "0xffffu");
    let k32 = float_key("k32", "u32", "0x80000000u", "0x7f800000u", "0x7fffffffu", "0xffffffffu");
    let k64 = float_key(
        "k64",
        "u64",
        "0x8000000000000000lu",
        "0x7ff0000000000000lu",
        "0x7ffffffffffffffflu",
        "0xfffffffffffffffflu",
    );
    format!("{k16}{k32}{k64}")
}

/// numpy's sort order of `dtype` as integer keys of its storage elements (see the module docs):
/// the WGSL of `fn key(x: <storage>) -> K` with an integer `K`.
fn sort_key(dtype: DType, storage: &str) -> Result<String> {
    let plain = |ty: &str| format!("fn key(x: {storage}) -> {ty} {{ return x; }}\n");
    let key = match dtype {
        DType::Bool | DType::U8 | DType::U16 | DType::U32 => plain("u32"),
        DType::I8 | DType::I16 | DType::I32 => plain("i32"),
        DType::I64 => plain("i64"),
        DType::U64 => plain("u64"),
        DType::F16 => "fn key(x: u32) -> u32 { return k16(x); }\n".to_string(),
        // Stored as its bits where values are held in float64.
        DType::F32 if storage == "u32" => "fn key(x: u32) -> u32 { return k32(x); }\n".to_string(),
        DType::F32 => "fn key(x: f32) -> u32 { return k32(bitcast<u32>(x)); }\n".to_string(),
        DType::F64 => "fn key(x: f64) -> u64 { return k64(bitcast<u64>(x)); }\n".to_string(),
        // Complex numbers have no single integer key: searches compare them with
        // `complex_order`.
        DType::C64 | DType::C128 => return Err(bug(format!("an integer key of {dtype} values"))),
    };
    Ok(format!("{}{key}", float_keys()))
}

/// The WGSL of `fn order(a: <storage>, b: <storage>) -> i32` for complex `dtype`: -1, 0 or 1 as
/// `a` goes before, with or after `b` in numpy's sort order, the sort key's 32-bit words
/// ([`sort_word`]) compared from the most significant down: the class (which parts are NaN),
/// then the real part's key, then the imaginary part's.
fn complex_order(dtype: DType, storage: &str) -> String {
    let words = (sort_digits(dtype) * DIGIT_BITS).div_ceil(32);
    format!(
        "fn order(a: {storage}, b: {storage}) -> i32 {{
    for (var w: u32 = {words}u; w > 0u; w = w - 1u) {{
        let x = word(a, w - 1u);
        let y = word(b, w - 1u);
        if x < y {{ return -1; }}
        if x > y {{ return 1; }}
    }}
    return 0;
}}
"
    )
}

/// Items of a row in a block of a sort pass (see [`Ranking`]): a workgroup's invocations.
pub(crate) const SORT_BLOCK: u32 = WORKGROUP_SIZE;

/// Bits of a sort digit: a pass of the radix sort distributes elements into `2^4` bins.
const DIGIT_BITS: u32 = 4;

/// The number of radix-sort digits of `dtype`'s sort key (see [`sort_word`]): the key's bits over
/// [`DIGIT_BITS`], a complex number's class one digit more.
pub(crate) fn sort_digits(dtype: DType) -> u32 {
    let bits = match dtype {
        DType::Bool => DIGIT_BITS,
        DType::I8 | DType::U8 => 8,
        DType::I16 | DType::U16 | DType::F16 => 16,
        DType::I32 | DType::U32 | DType::F32 => 32,
        DType::I64 | DType::U64 | DType::F64 => 64,
        DType::C64 => 2 * 32 + DIGIT_BITS,
        DType::C128 => 2 * 64 + DIGIT_BITS,
    };
    bits / DIGIT_BITS
}

/// The WGSL of `fn word(x: <storage>, w: u32) -> u32`: the 32-bit word `w` (least significant
/// first) of the unsigned key of `x` whose order is numpy's sort order: integers offset or with
/// their sign bit flipped, floats through [`float_keys`], complex numbers as (class, real part,
/// imaginary part) with numpy's class `2·isnan(re) + isnan(im)` most significant, as
/// `pytato_runtime::sort`'s keys.
fn sort_word(dtype: DType, storage: &str) -> Result<String> {
    let half = "u32((b >> (32u * w)) & 0xfffffffflu)";
    let body = match dtype {
        DType::Bool | DType::U8 | DType::U16 | DType::U32 => "return x;".to_string(),
        DType::I8 => "return u32(x + 128);".into(),
        DType::I16 => "return u32(x + 32768);".into(),
        DType::I32 => "return bitcast<u32>(x) ^ 0x80000000u;".into(),
        DType::U64 => format!("let b = x; return {half};"),
        DType::I64 => format!("let b = bitcast<u64>(x) ^ 0x8000000000000000lu; return {half};"),
        DType::F16 => "return k16(x);".into(),
        DType::F32 if storage == "u32" => "return k32(x);".into(),
        DType::F32 => "return k32(bitcast<u32>(x));".into(),
        DType::F64 => format!("let b = k64(bitcast<u64>(x)); return {half};"),
        DType::C64 => {
            let bits = if storage == "vec2<u32>" { "x" } else { "bitcast<vec2<u32>>(x)" };
            format!(
                "let p = {bits};
    if w == 0u {{ return k32(p.y); }}
    if w == 1u {{ return k32(p.x); }}
    return 2u * u32((p.x & 0x7fffffffu) > 0x7f800000u) + u32((p.y & 0x7fffffffu) > 0x7f800000u);"
            )
        }
        DType::C128 => "let p = vec2<u64>(bitcast<u64>(x.x), bitcast<u64>(x.y));
    let inf = 0x7ff0000000000000lu;
    let mask = 0x7ffffffffffffffflu;
    if w == 4u { return 2u * u32((p.x & mask) > inf) + u32((p.y & mask) > inf); }
    let b = k64(select(p.y, p.x, w >= 2u));
    return u32((b >> (32u * (w % 2u))) & 0xfffffffflu);"
            .into(),
    };
    Ok(format!("{}fn word(x: {storage}, w: u32) -> u32 {{\n    {body}\n}}\n", float_keys()))
}

/// How a sort pass finds each item's rank among the items of its block with its digit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ranking {
    /// One invocation per block walks its items in order, counting per digit: no barrier, but
    /// one thread's serial walk per block (a CPU adapter's way: lavapipe's barriers cost more).
    Walk,
    /// A workgroup per block, one invocation per item (coalesced reads, a GPU's way): counts by
    /// workgroup atomics, ranks by a running sum in workgroup memory.
    Workgroup,
}

impl Ranking {
    /// The invocations of a pass over `blocks` blocks.
    pub(crate) fn invocations(self, blocks: u64) -> u64 {
        match self {
            Ranking::Walk => blocks,
            Ranking::Workgroup => blocks * SORT_BLOCK as u64,
        }
    }

    /// The start of a pass's `main`: the lengths from `sizes` (the number of blocks, the row
    /// length, the product of the axes after the sorted one, blocks per row, the digit this pass
    /// sorts by, whether this is the first pass, descending), and the block's `row` and number
    /// `c` in it. Item `j` of the sort is position `j % len` of row `j / len`; `order` holds, for
    /// each item, the element now there, and `vals` its value (the first pass reads neither:
    /// every item is its own element, its value `x`'s there).
    ///
    /// A walk has the block's items `[start, end)`, and [`item`] gives an item's value `v` and
    /// digit `d` (and its element `e`, `with_element`). In a workgroup, each invocation has its
    /// item's value `v` (of type `storage`), digit `d` (16 past the block's end) and, where
    /// `with_element`, element `e`, and none returns here: the passes wait at workgroup barriers
    /// after this, which every invocation must reach (`has_block` says whether the workgroup has
    /// a block).
    fn prologue(self, storage: &str, with_element: bool) -> String {
        let lengths = "    let len: u32 = u32(ctl.sizes[1]);
    let inner: u32 = u32(ctl.sizes[2]);
    let bpr: u32 = u32(ctl.sizes[3]);
    let digit: u32 = u32(ctl.sizes[4]);
    let first: bool = ctl.sizes[5] != 0li;
    let descending: bool = ctl.sizes[6] != 0li;
";
        match self {
            Ranking::Walk => format!(
                "    let block: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    if block >= u32(ctl.sizes[0]) {{ return; }}
{lengths}    let row: u32 = block / bpr;
    let c: u32 = block % bpr;
    let start: u32 = row * len + c * {SORT_BLOCK}u;
    let end: u32 = row * len + min((c + 1u) * {SORT_BLOCK}u, len);
"
            ),
            Ranking::Workgroup => format!(
                "    let block: u32 = wid.y * nwg.x + wid.x;
    let has_block: bool = block < u32(ctl.sizes[0]);
{lengths}    let row: u32 = block / bpr;
    let c: u32 = block % bpr;
    let j: u32 = row * len + c * {SORT_BLOCK}u + lid;
    var d: u32 = 16u;
    {declarations}
    if has_block && c * {SORT_BLOCK}u + lid < len {{
        {reads}
        d = bin(v, digit, descending);
    }}
",
                declarations = item_declarations(storage, with_element),
                reads = item_reads(with_element),
            ),
        }
    }
}

/// The declarations of an item's value `v` (and element `e`, `with_element`), zero until read.
fn item_declarations(storage: &str, with_element: bool) -> String {
    let element = if with_element { "var e: u32 = 0u;\n    " } else { "" };
    format!("{element}var v: {storage};")
}

/// The reads of item `j`'s value `v` (and element `e`, `with_element`): in the first pass, the
/// item's own element and `x`'s value there; after it, what the last pass moved to `j`.
fn item_reads(with_element: bool) -> &'static str {
    if with_element {
        "if first { e = element(j, len, inner); v = x[e]; } else { e = order[j]; v = vals[j]; }"
    } else {
        "if first { v = x[element(j, len, inner)]; } else { v = vals[j]; }"
    }
}

/// A walk's item `j`: its value `v` and digit `d`, and its element `e` where `with_element`
/// (see [`Ranking::prologue`]).
fn item(storage: &str, with_element: bool) -> String {
    format!(
        "{}
        {}
        let d = bin(v, digit, descending);",
        item_declarations(storage, with_element),
        item_reads(with_element)
    )
}

/// The WGSL of `fn element(j, len, inner) -> u32` (the flat index of item `j`'s own place: row
/// `j / len` of the array viewed as `(outer, len, inner)`, position `j % len` on the sorted axis)
/// and `fn bin(x, digit, descending) -> u32` (the digit of `x`'s key this pass sorts by;
/// complemented when descending, so that the stable ascending sort of the complements is the
/// stable descending sort).
fn sort_functions(dtype: DType, storage: &str) -> Result<String> {
    Ok(format!(
        "{word}fn element(j: u32, len: u32, inner: u32) -> u32 {{
    let row = j / len;
    return ((row / inner) * len + j % len) * inner + row % inner;
}}
fn bin(x: {storage}, digit: u32, descending: bool) -> u32 {{
    let d = (word(x, digit / 8u) >> ((digit % 8u) * {DIGIT_BITS}u)) & 15u;
    return select(d, 15u - d, descending);
}}
",
        word = sort_word(dtype, storage)?
    ))
}

/// A radix-sort pass's first shader: per block of a row, the number of its items whose digit
/// falls in each bin, into `counts`, laid out as `(rows, 16, blocks per row)` so that its running
/// sum is every item's place (rows in order; in a row, bins in order; in a bin, blocks in order).
pub(crate) fn sort_counts_shader(dtype: DType, ranking: Ranking, features: ShaderFeatures) -> Result<Shader> {
    let storage = storage_type(dtype, features)?;
    let (shared, counting) = match ranking {
        Ranking::Walk => (
            "",
            format!(
                "    var bins: array<u32, 16>;
    var j: u32 = start;
    loop {{
        if j >= end {{ break; }}
        {item}
        bins[d] = bins[d] + 1u;
        j = j + 1u;
    }}
    for (var d: u32 = 0u; d < 16u; d = d + 1u) {{
        counts[(row * 16u + d) * bpr + c] = bins[d];
    }}
",
                item = item(storage, false)
            ),
        ),
        Ranking::Workgroup => (
            "var<workgroup> bins: array<atomic<u32>, 16>;\n",
            "    if lid < 16u { atomicStore(&bins[lid], 0u); }
    workgroupBarrier();
    if d < 16u { atomicAdd(&bins[d], 1u); }
    workgroupBarrier();
    if has_block && lid < 16u { counts[(row * 16u + lid) * bpr + c] = atomicLoad(&bins[lid]); }
"
            .to_string(),
        ),
    };
    let body = format!("{}{counting}", ranking.prologue(storage, false));
    let bindings = [("x", storage, false), ("vals", storage, false), ("counts", "u32", true)];
    Ok(assemble("sort digit counts", &format!("{shared}{}", sort_functions(dtype, storage)?), &bindings, &body, dtype))
}

/// A radix-sort pass's second shader: each item of a block goes to its place (its element to
/// `next`, its value to `next_vals`), the running count (`places`, inclusive) before its bin and
/// block plus its rank, the number of items of its block before it with the same digit. So items
/// with equal digits keep their order: the pass is stable. A walk counts the ranks as it goes.
/// A workgroup takes them from one running sum over the block in workgroup memory (8 steps of
/// Hillis and Steele's scan) of 16 counters of 8 bits packed in a `vec4<u32>`: an item's count
/// of earlier items is at most 255 and the sums wrap modulo 2^32 exactly, so the running sum
/// less the item's own one is every counter's value.
pub(crate) fn sort_place_shader(dtype: DType, ranking: Ranking, features: ShaderFeatures) -> Result<Shader> {
    let storage = storage_type(dtype, features)?;
    let (shared, placing) = match ranking {
        Ranking::Walk => (
            String::new(),
            format!(
                "    var at: array<u32, 16>;
    for (var d: u32 = 0u; d < 16u; d = d + 1u) {{
        let slot = (row * 16u + d) * bpr + c;
        if slot > 0u {{ at[d] = places[slot - 1u]; }}
    }}
    var j: u32 = start;
    loop {{
        if j >= end {{ break; }}
        {item}
        next[at[d]] = e;
        next_vals[at[d]] = v;
        at[d] = at[d] + 1u;
        j = j + 1u;
    }}
",
                item = item(storage, true)
            ),
        ),
        Ranking::Workgroup => (
            format!("var<workgroup> running: array<vec4<u32>, {SORT_BLOCK}>;\n"),
            format!(
                "    var own = vec4<u32>(0u);
    if d < 16u {{ own[d / 4u] = 1u << ((d % 4u) * 8u); }}
    var total = own;
    running[lid] = total;
    for (var step: u32 = 1u; step < {SORT_BLOCK}u; step = step * 2u) {{
        workgroupBarrier();
        if lid >= step {{ total = total + running[lid - step]; }}
        workgroupBarrier();
        running[lid] = total;
    }}
    if d == 16u {{ return; }}
    let rank = ((total - own)[d / 4u] >> ((d % 4u) * 8u)) & 0xffu;
    let slot = (row * 16u + d) * bpr + c;
    var at: u32 = 0u;
    if slot > 0u {{ at = places[slot - 1u]; }}
    next[at + rank] = e;
    next_vals[at + rank] = v;
"
            ),
        ),
    };
    let body = format!("{}{placing}", ranking.prologue(storage, true));
    let bindings = [
        ("x", storage, false),
        ("order", "u32", false),
        ("vals", storage, false),
        ("places", "u32", false),
        ("next", "u32", true),
        ("next_vals", storage, true),
    ];
    Ok(assemble("sort placement", &format!("{shared}{}", sort_functions(dtype, storage)?), &bindings, &body, dtype))
}

/// The shader writing a sort's result from the last pass: one invocation per item `j` writes
/// the value at `j` (`sorted`: the values the passes carried, of the sort's `storage`) or the
/// position along the sorted axis of the element at `j` (`sorted`: the final order; `int64`) to
/// item `j`'s own place. `sizes`: the element count, the row length, the product of the axes
/// after the sorted one.
pub(crate) fn sort_result_shader(dtype: DType, result: SortResult, features: ShaderFeatures) -> Result<Shader> {
    let storage = storage_type(dtype, features)?;
    let (write, sorted_type, out_type) = match result {
        SortResult::Values => ("out[element(j, len, inner)] = sorted[j];", storage, storage),
        SortResult::Indices => ("out[element(j, len, inner)] = i64((sorted[j] / inner) % len);", "u32", "i64"),
    };
    let body = format!(
        "    let j: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    if j >= u32(ctl.sizes[0]) {{ return; }}
    let len: u32 = u32(ctl.sizes[1]);
    let inner: u32 = u32(ctl.sizes[2]);
    {write}
"
    );
    let bindings = [("sorted", sorted_type, false), ("out", out_type, true)];
    Ok(assemble("sort result", &sort_functions(dtype, storage)?, &bindings, &body, dtype))
}

/// The shader turning a scatter's flat positions (`int64`, negative from the end) into slots of
/// an array of `sizes[1]` elements, one invocation per position (`sizes[0]` of them): a position
/// out of range gets the slot one past the end (written nowhere) and marks the control block's
/// flag with `0xffffffff - k`, so that the largest mark is the first such position `k` in the
/// host's order (see [`scatter_error_shader`]).
pub(crate) fn scatter_slots_shader() -> Shader {
    let body = format!(
        "    let k: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    if k >= u32(ctl.sizes[0]) {{ return; }}
    let length: i64 = ctl.sizes[1];
    var p: i64 = positions[k];
    if p < 0li {{ p = p + length; }}
    if p < 0li || p >= length {{
        atomicMax(&ctl.flag, 0xffffffffu - k);
        slots[k] = u32(length);
    }} else {{
        slots[k] = u32(p);
    }}
"
    );
    assemble("scatter slots", "", &[("positions", "i64", false), ("slots", "u32", true)], &body, DType::I64)
}

/// The shader completing a scatter's error record (one invocation): where [`scatter_slots_shader`]
/// marked a position out of range, the first such position's value and the array's length
/// (`sizes[1]`), as a kernel's `out_of_bounds` records them.
pub(crate) fn scatter_error_shader() -> Shader {
    let body = "    let mark: u32 = atomicLoad(&ctl.flag);
    if mark == 0u || lid != 0u || wid.x != 0u || wid.y != 0u { return; }
    ctl.buffer = 0u;
    ctl.axis = 0u;
    ctl.index = positions[0xffffffffu - mark];
    ctl.length = ctl.sizes[1];
";
    assemble("scatter error", "", &[("positions", "i64", false)], body, DType::I64)
}

/// The shader of a scatter that sets: one invocation per item `j` of the writes sorted stably
/// by slot (`order`: the write at `j`; `sorted`: its slot; over `sizes[0]` writes, into an
/// array of `sizes[1]` elements) writes its value if it is the last write to its slot, so the
/// last of repeated positions wins, as in the host's loop. Values and array have one dtype.
pub(crate) fn scatter_set_shader(dtype: DType, features: ShaderFeatures) -> Result<Shader> {
    let storage = storage_type(dtype, features)?;
    let body = format!(
        "    let j: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    let m: u32 = u32(ctl.sizes[0]);
    if j >= m {{ return; }}
    let s = sorted[j];
    if s >= u32(ctl.sizes[1]) {{ return; }}
    if j + 1u < m {{
        if sorted[j + 1u] == s {{ return; }}
    }}
    out[s] = values[order[j]];
"
    );
    let bindings =
        [("sorted", "u32", false), ("order", "u32", false), ("values", storage, false), ("out", storage, true)];
    Ok(assemble("scatter set", "", &bindings, &body, dtype))
}

/// The shader of a scatter that adds (`np.add.at`), for an array of `own` dtype and values of
/// `values` dtype: over the writes sorted stably by slot (`order`, their slots in `sorted`), each
/// run of writes to one slot is added by one invocation, in order, each addition in the promoted
/// dtype and cast back to `own` (float16 in float32, rounded at each step; booleans or'ed), as
/// the host's loop does. A dispatch walks the sorted writes `[sizes[2], sizes[3])` and continues
/// each slot's sum from the array, so runs longer than a driver's cap on an invocation's
/// iterations take several dispatches, in order. `sizes[0]`, `sizes[1]`: the writes and the
/// array's elements. Where the shader has [`Shader::constants`], their table is bound last.
pub(crate) fn scatter_add_shader(own: DType, values: DType, features: ShaderFeatures) -> Result<Shader> {
    let (own_storage, values_storage) = (storage_type(own, features)?, storage_type(values, features)?);
    let program = KernelProgram::default();
    let names = HashMap::new();
    let mut t = Translator::standalone(&program, &names, features);
    let load = |t: &mut Translator<'_>, dtype: DType, raw: &str| match dtype {
        DType::Bool => format!("({raw} != 0u)"),
        _ => t.decoded(dtype, raw),
    };
    let sum = result_type(own, values);
    // numpy's float16 additions are float32 additions rounded to float16.
    let compute = if sum == DType::F16 { DType::F32 } else { sum };
    let (a, b) = (t.cast(own, compute, "acc")?, t.cast(values, compute, "v")?);
    let op = if compute == DType::Bool { BinaryOp::LogicalOr } else { BinaryOp::Add };
    let total = t.binary(op, compute, &a, &b)?;
    let step = t.cast(compute, own, &total)?;
    let (acc_ty, v_ty) = (t.ty(own)?, t.ty(values)?);
    let (start, value) = (load(&mut t, own, "out[s]"), load(&mut t, values, "values[order[i]]"));
    let store = t.encoded(own, "acc");
    // Casts from booleans to floats read their 0 and 1 from a constant table (see
    // `Shader::constants`), bound after the result.
    let constants = std::mem::take(&mut t.constants);
    let body = format!(
        "    let j: u32 = (wid.y * nwg.x + wid.x) * {WORKGROUP_SIZE}u + lid;
    let lo: u32 = u32(ctl.sizes[2]);
    let hi: u32 = u32(ctl.sizes[3]);
    if j >= hi - lo {{ return; }}
    let first: u32 = lo + j;
    let s = sorted[first];
    if s >= u32(ctl.sizes[1]) {{ return; }}
    if first > lo {{
        if sorted[first - 1u] == s {{ return; }}
    }}
    let zero: i64 = ctl.zero;
    {OPAQUE_INIT}
    var acc: {acc_ty} = {start};
    var i: u32 = first;
    loop {{
        if i >= hi {{ break; }}
        if sorted[i] != s {{ break; }}
        let v: {v_ty} = {value};
        acc = {step};
        i = i + 1u;
    }}
    out[s] = {store};
"
    );
    let bindings = [
        ("sorted", "u32", false),
        ("order", "u32", false),
        ("values", values_storage, false),
        ("out", own_storage, true),
        ("cst", "u32", false),
    ];
    let bound = if constants.is_empty() { &bindings[..4] } else { &bindings[..] };
    let mut shader = assemble("scatter add", t.library.source(), bound, &body, own);
    shader.constants = constants;
    Ok(shader)
}

/// A step's shader, labelled `what` (for profiles): the control block, `bindings` (name, element type, written) after it, the
/// `functions` `body` calls, and `main` around `body`.
fn assemble(what: &str, functions: &str, bindings: &[(&str, &str, bool)], body: &str, dtype: DType) -> Shader {
    let mut source = String::new();
    let _ = writeln!(
        source,
        "struct Control {{ flag: atomic<u32>, buffer: u32, axis: u32, level: u32, index: i64, length: i64, zero: i64, \
         base: u32, slots: u32, coarse: u32, sizes: array<i64> }}"
    );
    let _ = writeln!(source, "@group(0) @binding(0) var<storage, read_write> ctl: Control;");
    source.push_str(OPAQUE_DECLARATIONS);
    let mut writable = vec![true];
    for (k, (name, ty, write)) in bindings.iter().enumerate() {
        let access = if *write { "read_write" } else { "read" };
        let _ =
            writeln!(source, "@group(0) @binding({}) var<storage, {access}> {name}: array<{ty}>; // {dtype}", k + 1);
        writable.push(*write);
    }
    source.push_str(functions);
    let _ = writeln!(source, "@compute @workgroup_size({WORKGROUP_SIZE})");
    source.push_str(
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
",
    );
    source.push_str(body);
    source.push_str("}\n");
    let label = format!("{what} ({dtype})");
    Shader { label, source, buffers: Vec::new(), writable, constants: Vec::new(), loops: LoopPlan::default() }
}

impl<'a> Translator<'a> {
    /// A translator for a shader written around it (the steps' shaders): no kernel, no buffers,
    /// no size parameters; used for its value operations and the library functions they require.
    fn standalone(
        program: &'a KernelProgram,
        names: &'a HashMap<&'a str, pytato_transform::kernel::BufferId>,
        features: ShaderFeatures,
    ) -> Translator<'a> {
        Translator {
            program,
            names,
            features,
            slot: HashMap::new(),
            split: Vec::new(),
            partials: String::new(),
            narrow: false,
            body: String::new(),
            indent: 1,
            next: 0,
            memo: vec![HashMap::new()],
            library: Library::default(),
            ranges: Ranges {
                output: &[],
                reductions: HashMap::new(),
                size_params: &program.size_params,
                index_buffers: HashMap::new(),
                assumed: HashMap::new(),
            },
            constants: Vec::new(),
            constant_slots: HashMap::new(),
            loops: LoopPlan::default(),
            blocks: Vec::new(),
        }
    }
}
