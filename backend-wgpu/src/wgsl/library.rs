//! The WGSL functions generated shaders call: numpy's integer and float semantics, NaN tests and
//! opaque operands that drivers cannot optimize away, complex arithmetic and functions, and a
//! float64 math library.
//!
//! A function is requested by name and WGSL type ([`Library::require`]) and instantiated for that
//! type as `name_suffix` (`floordiv_i64`, `exp_f64`, `mul_c128` for `vec2<f64>`); a shader includes
//! only what it calls, with what those functions call before them. No function has a loop:
//! lavapipe caps the iterations of every loop statement per invocation (`Gpu::loop_limit`), and a
//! helper called inside a reduction would run its loop once per term.
//!
//! # IEEE semantics on drivers that assume finite values
//!
//! WGSL lets an implementation assume that no value is NaN or infinite, and drivers use that:
//! lavapipe folds `x - x` and `x * 0.0` to 0, `x != x` to `false`, and evaluates `NaN != 1.0` as
//! `false`. numpy's answers need the IEEE ones, so:
//!
//! - NaN is tested by its bits (`isnan`), and every operation whose result depends on NaN (`!=`,
//!   `maximum`, `minimum`, `max`/`min` reductions, casts, `pow`) tests it explicitly;
//! - operands are made *opaque* (`opqa`, `opqb`): XORed with a zero the driver cannot see (it is
//!   read from the control block at run time). Float constants and both operands of float
//!   arithmetic go through them, so the driver can neither fold `x * 0.0` or `x - x` nor fuse a
//!   product and a sum into an `fma` numpy would not compute. The flavours use different zeros,
//!   so `opqa(x) - opqb(x)` is not recognisably `x - x`. `opqc` is the library's own: its
//!   functions wrap their operands in it (complex products and quotients, whose callers already
//!   applied `opqa`/`opqb`: the same zero twice would cancel), so that a constant a caller built
//!   (`(1, 0)` in an integer power) is not folded into `0 * x = 0`.
//! - float constants of generated code come from a constant table in a buffer, which no driver
//!   can see into.
//! - drivers also reassociate: NVIDIA's (seen on an H200) cancelled the error term of
//!   `two_sum` (`s - (s - a) = a`) and rewrote `(a / h) / h` as `a / (h * h)`. Every
//!   intermediate of an error term, and every quotient whose order guards against overflow, is
//!   therefore opaque too (`opqc`), as are constants whose use a finite-math driver could fold
//!   (`inf * x`) and the sign mask of `fneg` (a sign flip recognised as a float negation gave a
//!   NaN its canonical sign).
//! - a zero whose sign matters is built from the operands' bits, never returned as a float
//!   constant: a driver that ignores the sign of zero may return a constant `+0.0` as `-0.0`
//!   (lavapipe did, in `floor`). `floor` and `ceil` are computed on the bits (`ffloor`, `fceil`):
//!   WGSL leaves them undefined for NaN (the H200's `ceil` of a NaN was infinite).
//!
//! # Why a float64 math library
//!
//! WGSL's `sin`, `exp`, `log`, … map to GLSL.std.450 instructions that Vulkan defines for 16- and
//! 32-bit floats only: on float64 a driver may return anything (Mesa's lavapipe returns garbage),
//! and their float32 accuracy is loose (lavapipe's `asin` is off in the fourth digit). Float64
//! transcendental functions are therefore computed here from `+ - * /`, `sqrt`, `floor` and bit
//! and integer operations, which are exact on every driver, with musl's (fdlibm's) algorithms and
//! coefficients; `sin`, `cos` and `tan` reduce huge arguments exactly (Payne–Hanek, with 2/π to
//! 1280 bits). Where the adapter has float64, float32 and complex64 functions are computed in
//! double precision and rounded once, as the CPU backends do (`pytato_runtime::math`); without it
//! they fall back to WGSL's built-ins.

mod complex;
mod math64;

use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The functions one shader needs, in an order where each follows the functions it calls.
#[derive(Default)]
pub(crate) struct Library {
    seen: BTreeSet<(&'static str, &'static str)>,
    text: String,
}

impl Library {
    /// Includes `name` for WGSL type `ty` (and everything it calls); returns the name to call.
    pub(crate) fn require(&mut self, name: &'static str, ty: &'static str) -> String {
        let called = format!("{name}_{}", suffix(ty));
        if self.seen.insert((name, ty)) {
            let (text, deps) = template(name, ty);
            for (dep, dep_ty) in deps {
                self.require(dep, dep_ty);
            }
            let text = text.replace("$S", suffix(ty)).replace("$R", real_of(ty)).replace("$T", ty);
            // The exact helpers a function calls by name need no entry in its dependencies.
            for helper in HELPERS {
                for helper_ty in ["f64", "f32"] {
                    if (helper, helper_ty) != (name, ty) && text.contains(&format!("{helper}_{helper_ty}(")) {
                        self.require(helper, helper_ty);
                    }
                }
            }
            let _ = writeln!(self.text, "{text}");
        }
        called
    }

    /// The WGSL text of every function required so far.
    pub(crate) fn source(&self) -> &str {
        &self.text
    }
}

/// Small exact helpers that functions call by name (`fabs_f64(x)`), included wherever a
/// function's text calls them (WGSL does not care in which order functions are declared).
const HELPERS: [&str; 11] =
    ["fabs", "fneg", "fgt", "fbig", "fsmall", "rint", "ffloor", "fceil", "scalb", "copysign", "isnan"];

/// The private variables the opaque helpers read; `main` sets them first (see [`OPAQUE_INIT`]).
pub(crate) const OPAQUE_DECLARATIONS: &str = "var<private> pza32: u32;
var<private> pzb32: u32;
var<private> pzc32: u32;
var<private> pza64: u64;
var<private> pzb64: u64;
var<private> pzc64: u64;
";

/// Sets the opaque zeros from the control block's `zero` (always 0, which the driver cannot know).
pub(crate) const OPAQUE_INIT: &str = "pza64 = bitcast<u64>(ctl.zero);
    pzb64 = (pza64 << 1u) | (pza64 >> 63u);
    pzc64 = (pza64 << 2u) | (pza64 >> 62u);
    pza32 = u32(pza64 & 0xfffffffflu);
    pzb32 = u32(pza64 >> 32u);
    pzc32 = u32(pzc64 & 0xfffffffflu);";

/// [`OPAQUE_DECLARATIONS`] for a shader on a device without 64-bit integers.
pub(crate) const OPAQUE_DECLARATIONS_32: &str = "var<private> pza32: u32;
var<private> pzb32: u32;
var<private> pzc32: u32;
";

/// [`OPAQUE_INIT`] for a shader with 32-bit indices, whose control block holds `zero` as a pair
/// of `i32`; `with_i64`: the device has 64-bit integers (and the 64-bit opaque zeros are declared).
pub(crate) fn opaque_init_narrow(with_i64: bool) -> &'static str {
    if with_i64 {
        "pza64 = (u64(bitcast<u32>(ctl.zero.y)) << 32u) | u64(bitcast<u32>(ctl.zero.x));
    pzb64 = (pza64 << 1u) | (pza64 >> 63u);
    pzc64 = (pza64 << 2u) | (pza64 >> 62u);
    pza32 = u32(pza64 & 0xfffffffflu);
    pzb32 = u32(pza64 >> 32u);
    pzc32 = u32(pzc64 & 0xfffffffflu);"
    } else {
        "pza32 = bitcast<u32>(ctl.zero.x);
    pzb32 = bitcast<u32>(ctl.zero.y);
    pzc32 = (pza32 << 2u) | (pza32 >> 30u);"
    }
}

/// `vec2<f64>` → `f64`; scalar types unchanged.
pub(crate) fn real_of(ty: &'static str) -> &'static str {
    match ty {
        "vec2<f32>" => "f32",
        "vec2<f64>" => "f64",
        other => other,
    }
}

/// The suffix of instantiated names: the type, or `c64`/`c128` for complex pairs.
fn suffix(ty: &'static str) -> &'static str {
    match ty {
        "vec2<f32>" => "c64",
        "vec2<f64>" => "c128",
        other => other,
    }
}

type Deps = Vec<(&'static str, &'static str)>;

/// `base ** e` wrapping; a negative exponent truncates (0 unless the base is 1 or -1).
/// Square-and-multiply over every bit of the exponent, unrolled.
fn ipow(ty: &str) -> String {
    let bits = if ty.ends_with("64") { 64 } else { 32 };
    let step = "    if (k & $T(1)) == $T(1) { acc = acc * b; }\n    b = b * b;\n    k = k >> 1u;\n";
    format!(
        "fn ipow_$S(base: $T, e: $T) -> $T {{
    if e < $T(0) {{
        if base == $T(1) {{ return $T(1); }}
        if base == ~$T(0) {{ return select(base, $T(1), (e & $T(1)) == $T(0)); }}
        return $T(0);
    }}
    var b = base;
    var k = e;
    var acc = $T(1);
{}    return acc;
}}",
        step.repeat(bits)
    )
}

/// numpy's `gcd` (or `lcm`) of two integers of type `ty`: Euclid's algorithm on the magnitudes as
/// unsigned integers of the type's width (`pytato_runtime::math::gcd_magnitudes`), unrolled: by
/// Lamé's theorem the most steps are taken by consecutive Fibonacci numbers, 46 below 2^32 and 92
/// below 2^64 (one more than they need in the wrong order). 8- and 16-bit dtypes, held in 32
/// bits, are wrapped by the caller.
fn gcd_lcm(ty: &str, lcm: bool) -> String {
    let (unsigned, steps) = match ty {
        "i32" | "u32" => ("u32", 46),
        _ => ("u64", 92),
    };
    let magnitude = |v: &str| {
        if ty.starts_with('i') {
            // `-v` of the most negative value is itself, whose bits are its magnitude.
            format!("bitcast<{unsigned}>(select({v}, -{v}, {v} < {ty}(0)))")
        } else {
            v.to_string()
        }
    };
    let step = format!("    if b != {unsigned}(0) {{ let t = a % b; a = b; b = t; }}\n");
    let result = if lcm {
        // `(|x| / g) * |y|`, wrapping; 0 where g is (so are both operands).
        format!("select({unsigned}(0), (ma / max(a, {unsigned}(1))) * mb, a != {unsigned}(0))")
    } else {
        "a".to_string()
    };
    format!(
        "fn {name}_$S(x: $T, y: $T) -> $T {{
    let ma = {mx};
    let mb = {my};
    var a = ma;
    var b = mb;
{body}    return bitcast<$T>({result});
}}",
        name = if lcm { "lcm" } else { "gcd" },
        mx = magnitude("x"),
        my = magnitude("y"),
        body = step.repeat(steps),
    )
}

/// The text of `name` for `ty` (with `$T` the type, `$R` its real type, `$S` the suffix) and the
/// functions it calls.
fn template(name: &'static str, ty: &'static str) -> (String, Deps) {
    if ty.starts_with("vec2") {
        return complex::template(name, ty);
    }
    let f64 = ty == "f64";
    let fixed = |text: &str, deps: Deps| (text.to_string(), deps);
    match name {
        "ipow" => (ipow(ty), vec![]),
        "gcd" => (gcd_lcm(ty, false), vec![]),
        "lcm" => (gcd_lcm(ty, true), vec![]),
        // ---- frexp and ldexp of float64 (float32 is widened), on the bits ----
        // The exponent is an integral value within ±2200 (the frontend clamps it as an integer).
        "ldexp" => fixed("fn ldexp_$S(x: $T, n: $T) -> $T { return scalb_$S(x, i32(n)); }", vec![("scalb", ty)]),
        // On the bits alone, with no float arithmetic a driver could flush: a subnormal's
        // fraction is shifted up to the implicit bit's place.
        "frexpbits" => fixed(
            "// (the bits of frexp's mantissa, its exponent)
fn frexpbits_$S(x: $T) -> vec2<u64> {
    let bits = bitcast<u64>(x);
    let e = (bits >> 52u) & 0x7fflu;
    let fraction = bits & 0x000ffffffffffffflu;
    if e == 0x7fflu || (e == 0lu && fraction == 0lu) { return vec2<u64>(bits, 0lu); }
    var exponent = i64(e) - 1022;
    var normal = fraction;
    if e == 0lu {
        let high = u32(fraction >> 32u);
        let zeros = select(32u + countLeadingZeros(u32(fraction & 0xfffffffflu)), countLeadingZeros(high), high != 0u);
        let shift = zeros - 11u;
        normal = (fraction << shift) & 0x000ffffffffffffflu;
        exponent = -1021 - i64(shift);
    }
    let mantissa = (bits & 0x8000000000000000lu) | 0x3fe0000000000000lu | normal;
    return vec2<u64>(mantissa, bitcast<u64>(exponent));
}",
            vec![],
        ),
        "frexpm" => {
            fixed("fn frexpm_$S(x: $T) -> $T { return bitcast<f64>(frexpbits_$S(x).x); }", vec![("frexpbits", ty)])
        }
        "frexpe" => fixed(
            "fn frexpe_$S(x: $T) -> i32 { return i32(bitcast<i64>(frexpbits_$S(x).y)); }",
            vec![("frexpbits", ty)],
        ),
        // ---- integers: Python's // and % with 0 for a zero divisor ----
        "floordiv" => fixed(
            "fn floordiv_$S(a: $T, b: $T) -> $T {
    if b == $T(0) { return $T(0); }
    let q = a / b;
    let r = a - q * b;
    if r != $T(0) && ((r < $T(0)) != (b < $T(0))) { return q - $T(1); }
    return q;
}",
            vec![],
        ),
        "pyrem" => fixed(
            "fn pyrem_$S(a: $T, b: $T) -> $T {
    if b == $T(0) { return $T(0); }
    let r = a - (a / b) * b;
    if r != $T(0) && ((r < $T(0)) != (b < $T(0))) { return r + b; }
    return r;
}",
            vec![],
        ),
        // ---- opaque operands (module docs) ----
        "opqa" if f64 => fixed("fn opqa_f64(v: f64) -> f64 { return bitcast<f64>(bitcast<u64>(v) ^ pza64); }", vec![]),
        "opqb" if f64 => fixed("fn opqb_f64(v: f64) -> f64 { return bitcast<f64>(bitcast<u64>(v) ^ pzb64); }", vec![]),
        "opqa" => fixed("fn opqa_f32(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ pza32); }", vec![]),
        "opqb" => fixed("fn opqb_f32(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ pzb32); }", vec![]),
        "opqc" if f64 => fixed("fn opqc_f64(v: f64) -> f64 { return bitcast<f64>(bitcast<u64>(v) ^ pzc64); }", vec![]),
        "opqc" => fixed("fn opqc_f32(v: f32) -> f32 { return bitcast<f32>(bitcast<u32>(v) ^ pzc32); }", vec![]),
        // ---- float16, a storage type held as its bits in a u32 (`pytato_core::half_float`) ----
        "f16_to_f32" => fixed(
            "fn f16_to_f32_u32(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let e = h & 0x7c00u;
    let m = h & 0x03ffu;
    if e == 0u {
        if m == 0u { return bitcast<f32>(sign); }
        let shift = countLeadingZeros(m) - 21u;
        return bitcast<f32>(sign | ((113u - shift) << 23u) | (((m << shift) & 0x03ffu) << 13u));
    }
    if e == 0x7c00u { return bitcast<f32>(sign | 0x7f800000u | (m << 13u)); }
    return bitcast<f32>(sign | ((e + 0x1c000u) << 13u) | (m << 13u));
}",
            vec![],
        ),
        "f32_to_f16" => fixed(
            "fn f32_to_f16_f32(x: f32) -> u32 {
    let f = bitcast<u32>(x);
    let sign = (f & 0x80000000u) >> 16u;
    let e = f & 0x7f800000u;
    if e >= 0x47800000u {
        let m = f & 0x007fffffu;
        if e == 0x7f800000u && m != 0u {
            let nan = 0x7c00u | (m >> 13u);
            return sign | select(nan, 0x7c01u, nan == 0x7c00u);
        }
        return sign | 0x7c00u;
    }
    if e <= 0x38000000u {
        if e < 0x33000000u { return sign; }
        var m = (0x00800000u | (f & 0x007fffffu)) >> (113u - (e >> 23u));
        if (m & 0x3fffu) != 0x1000u || (f & 0x7ffu) != 0u { m = m + 0x1000u; }
        return sign | (m >> 13u);
    }
    var m = f & 0x007fffffu;
    if (m & 0x3fffu) != 0x1000u { m = m + 0x1000u; }
    return sign | (((e - 0x38000000u) >> 13u) + (m >> 13u));
}",
            vec![],
        ),
        "f64_to_f16" => fixed(
            "fn f64_to_f16_f64(x: f64) -> u32 {
    let d = bitcast<u64>(x);
    let sign = u32((d >> 48u) & 0x8000lu);
    let e = d & 0x7ff0000000000000lu;
    if e >= 0x40f0000000000000lu {
        let m = d & 0x000ffffffffffffflu;
        if e == 0x7ff0000000000000lu && m != 0lu {
            let nan = 0x7c00u | u32(m >> 42u);
            return sign | select(nan, 0x7c01u, nan == 0x7c00u);
        }
        return sign | 0x7c00u;
    }
    if e <= 0x3f00000000000000lu {
        if e < 0x3e60000000000000lu { return sign; }
        var m = (0x0010000000000000lu | (d & 0x000ffffffffffffflu)) << u32((e >> 52u) - 998lu);
        if (m & 0x003ffffffffffffflu) != 0x0010000000000000lu { m = m + 0x0010000000000000lu; }
        return sign | u32(m >> 53u);
    }
    var m = d & 0x000ffffffffffffflu;
    if (m & 0x000007fffffffffflu) != 0x0000020000000000lu { m = m + 0x0000020000000000lu; }
    return sign | (u32((e - 0x3f00000000000000lu) >> 42u) + u32(m >> 42u));
}",
            vec![],
        ),
        // ---- float32 held in float64 (see `float32_in_float64` in the module docs) ----
        // The float64 nearest to `x` that is a float32 value: round to nearest even at the
        // float32 precision (24 bits, or the fixed quantum 2^-149 of float32's subnormals), on the
        // bits; overflow to infinity; NaN and infinities unchanged.
        "r32" => fixed(
            "fn r32_f64(x: f64) -> f64 {
    let b = bitcast<u64>(x);
    let sign = b & 0x8000000000000000lu;
    let a = b ^ sign;
    if a >= 0x7ff0000000000000lu { return x; }
    if a >= 0x47effffff0000000lu { return bitcast<f64>(sign | 0x7ff0000000000000lu); }
    if a >= 0x3810000000000000lu {
        let r = (a + 0x000000000ffffffflu + ((a >> 29u) & 1lu)) & 0xffffffffe0000000lu;
        return bitcast<f64>(sign | r);
    }
    if a < 0x3690000000000000lu { return bitcast<f64>(sign); }
    let s = 926u - u32(a >> 52u);
    let m = (a & 0x000ffffffffffffflu) | 0x0010000000000000lu;
    let q = m >> s;
    let rem = m & ((1lu << s) - 1lu);
    let half = 1lu << (s - 1u);
    let units = q + select(0lu, 1lu, rem > half || (rem == half && (q & 1lu) == 1lu));
    return bitcast<f64>(sign | bitcast<u64>(f64(units) * bitcast<f64>(0x36a0000000000000lu)));
}",
            vec![],
        ),
        // The float32 whose bits are `h`, exactly, as a float64 (subnormals included).
        "f32dec" => fixed(
            "fn f32dec_f64(h: u32) -> f64 {
    let sign = u64(h & 0x80000000u) << 32u;
    let e = (h >> 23u) & 0xffu;
    let m = u64(h & 0x007fffffu);
    if e == 0xffu { return bitcast<f64>(sign | 0x7ff0000000000000lu | (m << 29u)); }
    if e == 0u { return bitcast<f64>(sign | bitcast<u64>(f64(m) * bitcast<f64>(0x36a0000000000000lu))); }
    return bitcast<f64>(sign | (u64(e + 896u) << 52u) | (m << 29u));
}",
            vec![],
        ),
        // The bits of the float32 value a float64 holds (a NaN quieted, as x86 converts one).
        "f32enc" => fixed(
            "fn f32enc_f64(x: f64) -> u32 {
    let b = bitcast<u64>(x);
    let sign = u32(b >> 32u) & 0x80000000u;
    let a = b & 0x7ffffffffffffffflu;
    if a >= 0x7ff0000000000000lu {
        let m = u32((a >> 29u) & 0x007ffffflu);
        return sign | 0x7f800000u | select(m, m | 0x00400000u, a > 0x7ff0000000000000lu);
    }
    if a >= 0x3810000000000000lu {
        return sign | ((u32(a >> 52u) - 896u) << 23u) | u32((a >> 29u) & 0x007ffffflu);
    }
    return sign | u32(bitcast<f64>(a) * bitcast<f64>(0x4940000000000000lu));
}",
            vec![],
        ),
        // int64 and uint64 to the nearest float32, rounded once: beyond 2^53 through 53 bits and a
        // sticky bit (a float64 conversion would round twice).
        "i64_to_f32" => fixed(
            "fn i64_to_f32_f64(v: i64) -> f64 {
    let sign = bitcast<u64>(v) & 0x8000000000000000lu;
    let a = select(bitcast<u64>(v), 0lu - bitcast<u64>(v), v < 0li);
    return bitcast<f64>(sign | bitcast<u64>(u64_to_f32_f64(a)));
}",
            vec![("u64_to_f32", ty)],
        ),
        "u64_to_f32" => fixed(
            "fn u64_to_f32_f64(v: u64) -> f64 {
    if v < 0x0020000000000000lu { return r32_f64(f64(v)); }
    let kept = (v >> 11u) | select(0lu, 1lu, (v & 0x7fflu) != 0lu);
    return r32_f64(f64(kept) * 2048.0lf);
}",
            vec![("r32", ty)],
        ),
        // numpy's float16 to float32, held in float64: exact.
        "f16_to_f64" => fixed(
            "fn f16_to_f64_u32(h: u32) -> f64 {
    let sign = u64(h & 0x8000u) << 48u;
    let e = (h >> 10u) & 0x1fu;
    let m = u64(h & 0x03ffu);
    if e == 0x1fu { return bitcast<f64>(sign | 0x7ff0000000000000lu | (m << 42u)); }
    if e == 0u { return bitcast<f64>(sign | bitcast<u64>(f64(m) * bitcast<f64>(0x3e70000000000000lu))); }
    return bitcast<f64>(sign | (u64(e + 1008u) << 52u) | (m << 42u));
}",
            vec![],
        ),
        // nextafter in float32's steps, for a float32 held in float64.
        "nextafter32" => fixed(
            "fn nextafter32_f64(x: f64, y: f64) -> f64 {
    if isnan_f64(x) || isnan_f64(y) { return nan_f64(); }
    if x == y { return y; }
    if x == 0.0lf { return copysign_f64(bitcast<f64>(0x36a0000000000000lu), y); }
    let b = f32enc_f64(x);
    if (x < y) == (x > 0.0lf) { return f32dec_f64(b + 1u); }
    return f32dec_f64(b - 1u);
}",
            vec![("isnan", "f64"), ("nan", "f64"), ("copysign", "f64"), ("f32enc", "f64"), ("f32dec", "f64")],
        ),
        // x 2^n with one rounding (musl's scalbn), from factors built on the bits: WGSL's `ldexp`
        // is loosely specified near the ends of the exponent range, and drivers differ there.
        "scalb" if f64 => fixed(
            "fn scalb_$S(x: $T, e: i32) -> $T {
    var y = x;
    var n = e;
    if n > 1023 {
        y = opqa_$S(y * bitcast<f64>(0x7fe0000000000000lu));
        n = n - 1023;
        if n > 1023 {
            y = opqa_$S(y * bitcast<f64>(0x7fe0000000000000lu));
            n = min(n - 1023, 1023);
        }
    } else if n < -1022 {
        y = opqa_$S(y * bitcast<f64>(0x0360000000000000lu));
        n = n + 969;
        if n < -1022 {
            y = opqa_$S(y * bitcast<f64>(0x0360000000000000lu));
            n = max(n + 969, -1022);
        }
    }
    return y * bitcast<f64>(u64(n + 1023) << 52u);
}",
            vec![("opqa", ty)],
        ),
        "scalb" => fixed(
            "fn scalb_$S(x: $T, e: i32) -> $T {
    var y = x;
    var n = e;
    if n > 127 {
        y = opqa_$S(y * bitcast<f32>(0x7f000000u));
        n = n - 127;
        if n > 127 {
            y = opqa_$S(y * bitcast<f32>(0x7f000000u));
            n = min(n - 127, 127);
        }
    } else if n < -126 {
        y = opqa_$S(y * bitcast<f32>(0x0c800000u));
        n = n + 102;
        if n < -126 {
            y = opqa_$S(y * bitcast<f32>(0x0c800000u));
            n = max(n + 102, -126);
        }
    }
    return y * bitcast<f32>(u32(n + 127) << 23u);
}",
            vec![("opqa", ty)],
        ),
        // |x| by its bits: no driver's view of NaN or zeros enters.
        "fabs" if f64 => {
            fixed("fn fabs_$S(x: $T) -> $T { return bitcast<f64>(bitcast<u64>(x) & 0x7ffffffffffffffflu); }", vec![])
        }
        "fabs" => fixed("fn fabs_$S(x: $T) -> $T { return bitcast<f32>(bitcast<u32>(x) & 0x7fffffffu); }", vec![]),
        // -x by its sign bit, where infinities and NaNs flow (special cases of complex functions).
        // The mask is opaque (or-ed with a zero the driver cannot see): a driver that recognizes
        // the sign flip as a float negation may give a NaN its canonical sign (on the H200,
        // arcsin(inf + NaN i) took the wrong sign of infinity from such a NaN).
        "fneg" if f64 => fixed(
            "fn fneg_$S(x: $T) -> $T { return bitcast<f64>(bitcast<u64>(x) ^ (0x8000000000000000lu | pzc64)); }",
            vec![],
        ),
        "fneg" => {
            fixed("fn fneg_$S(x: $T) -> $T { return bitcast<f32>(bitcast<u32>(x) ^ (0x80000000u | pzc32)); }", vec![])
        }
        // The larger and the smaller of two non-NaN floats, ordered on the bits (`fgt`), never
        // through a driver's float max or min.
        "fbig" => fixed("fn fbig_$S(a: $T, b: $T) -> $T { return select(b, a, fgt_$S(a, b)); }", vec![("fgt", ty)]),
        "fsmall" => fixed("fn fsmall_$S(a: $T, b: $T) -> $T { return select(a, b, fgt_$S(a, b)); }", vec![("fgt", ty)]),
        // `a > b` of two non-NaN floats in IEEE order (-0.0 equals 0.0), from their bits: an
        // integer order a compiler cannot turn into its float max or min (whose sign of zero
        // drivers leave open).
        "fgt" if f64 => fixed(
            "fn fgt_$S(a: $T, b: $T) -> bool {
    let x = bitcast<u64>(a);
    let y = bitcast<u64>(b);
    if ((x | y) & 0x7ffffffffffffffflu) == 0lu { return false; }
    let kx = select(x | 0x8000000000000000lu, ~x, (x >> 63u) != 0lu);
    let ky = select(y | 0x8000000000000000lu, ~y, (y >> 63u) != 0lu);
    return kx > ky;
}",
            vec![],
        ),
        "fgt" => fixed(
            "fn fgt_$S(a: $T, b: $T) -> bool {
    let x = bitcast<u32>(a);
    let y = bitcast<u32>(b);
    if ((x | y) & 0x7fffffffu) == 0u { return false; }
    let kx = select(x | 0x80000000u, ~x, (x >> 31u) != 0u);
    let ky = select(y | 0x80000000u, ~y, (y >> 31u) != 0u);
    return kx > ky;
}",
            vec![],
        ),
        // ---- float bits ----
        "isnan" if f64 => fixed(
            "fn isnan_$S(x: $T) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu; }",
            vec![],
        ),
        "isnan" => {
            fixed("fn isnan_$S(x: $T) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }", vec![])
        }
        "isfinite" if f64 => fixed(
            "fn isfinite_$S(x: $T) -> bool { return (bitcast<u64>(x) & 0x7ff0000000000000lu) != 0x7ff0000000000000lu; }",
            vec![],
        ),
        "isfinite" => {
            fixed("fn isfinite_$S(x: $T) -> bool { return (bitcast<u32>(x) & 0x7f800000u) != 0x7f800000u; }", vec![])
        }
        "isinf" if f64 => fixed(
            "fn isinf_$S(x: $T) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu; }",
            vec![],
        ),
        "isinf" => {
            fixed("fn isinf_$S(x: $T) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }", vec![])
        }
        "signbit" if f64 => fixed("fn signbit_$S(x: $T) -> bool { return (bitcast<u64>(x) >> 63u) != 0lu; }", vec![]),
        "signbit" => fixed("fn signbit_$S(x: $T) -> bool { return (bitcast<u32>(x) >> 31u) != 0u; }", vec![]),
        "nan" if f64 => fixed("fn nan_$S() -> $T { return bitcast<f64>(0x7ff8000000000000lu); }", vec![]),
        "nan" => fixed("fn nan_$S() -> $T { return bitcast<f32>(0x7fc00000u); }", vec![]),
        "inf" if f64 => fixed("fn inf_$S() -> $T { return bitcast<f64>(0x7ff0000000000000lu); }", vec![]),
        "inf" => fixed("fn inf_$S() -> $T { return bitcast<f32>(0x7f800000u); }", vec![]),
        "copysign" if f64 => fixed(
            "fn copysign_$S(x: $T, s: $T) -> $T {
    return bitcast<f64>((bitcast<u64>(x) & 0x7ffffffffffffffflu) | (bitcast<u64>(s) & 0x8000000000000000lu));
}",
            vec![],
        ),
        "copysign" => fixed(
            "fn copysign_$S(x: $T, s: $T) -> $T {
    return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u));
}",
            vec![],
        ),
        // floor and ceil on the bits: the fraction bits cleared, then one step away from zero
        // where something was cleared on that side. WGSL's `floor`/`ceil` of NaN are undefined on a
        // driver that assumes finite values (the H200's ceil of a float64 NaN gave infinity).
        "ffloor" | "fceil" => {
            let (bits, fraction, exponent_bits, bias, precision, sign, zero, one) = if f64 {
                (
                    "u64",
                    "0x000ffffffffffffflu",
                    "((b >> 52u) & 0x7fflu)",
                    1023,
                    52,
                    "0x8000000000000000lu",
                    "0lu",
                    "1.0lf",
                )
            } else {
                ("u32", "0x007fffffu", "((b >> 23u) & 0xffu)", 127, 23, "0x80000000u", "0u", "1.0f")
            };
            // No float constant is returned: a driver that ignores the sign of zero may return a
            // constant +0.0 as -0.0 (lavapipe did), but not a zero made of the argument's bits.
            let step = if name == "ffloor" {
                format!("select(t, t - {one}, negative)")
            } else {
                format!("select(t + {one}, t, negative)")
            };
            let text = format!(
                "fn {name}_$S(x: $T) -> $T {{
    let b = bitcast<{bits}>(x);
    let e = i32({exponent_bits}) - {bias};
    if e >= {precision} {{ return x; }}
    // Below 1 in magnitude every bit but the sign is fraction.
    let fraction = select(~{sign}, {fraction} >> u32(max(e, 0)), e >= 0);
    if (b & fraction) == {zero} {{ return x; }}
    let negative = (b & {sign}) != {zero};
    let t = bitcast<$T>(b & ~fraction);
    return {step};
}}"
            );
            (text, vec![])
        }
        // x with its sign flipped where s is negative (the sign of x * s, for any bits).
        "xorsign" if f64 => fixed(
            "fn xorsign_$S(x: $T, s: $T) -> $T {
    return bitcast<f64>(bitcast<u64>(x) ^ (bitcast<u64>(s) & 0x8000000000000000lu));
}",
            vec![],
        ),
        "xorsign" => fixed(
            "fn xorsign_$S(x: $T, s: $T) -> $T { return bitcast<f32>(bitcast<u32>(x) ^ (bitcast<u32>(s) & 0x80000000u)); }",
            vec![],
        ),
        // numpy's rint: to the nearest integer, ties to even, the sign of zero kept. Built from
        // exact operations (floor, subtraction of values one apart, comparisons): drivers
        // implement WGSL's `round` loosely (lavapipe 22.3 rounds float64 23.5 to 23).
        "rint" => {
            let big = if f64 { "4503599627370496.0" } else { "8388608.0" }; // 2^52, 2^23: already integers
            let text = "fn rint_$S(x: $T) -> $T {
    let a = copysign_$S(x, $T(1.0));
    if !(a < $T(BIG)) { return x; }
    let f = ffloor_$S(a);
    let d = a - f;
    let odd = f - $T(2.0) * ffloor_$S(f * $T(0.5)) == $T(1.0);
    return copysign_$S(select(f, f + $T(1.0), d > $T(0.5) || (d == $T(0.5) && odd)), x);
}";
            fixed(&text.replace("BIG", big), vec![("copysign", ty)])
        }
        // C's nextafter: one step of the bit pattern toward `y` (from zero: the smallest subnormal).
        "nextafter" => {
            let (bits, one) = if f64 { ("u64", "1lu") } else { ("u32", "1u") };
            let text = "fn nextafter_$S(x: $T, y: $T) -> $T {
    if isnan_$S(x) || isnan_$S(y) { return nan_$S(); }
    if x == y { return y; }
    if x == $T(0.0) { return copysign_$S(bitcast<$T>(ONE), y); }
    let b = bitcast<BITS>(x);
    if (x < y) == (x > $T(0.0)) { return bitcast<$T>(b + ONE); }
    return bitcast<$T>(b - ONE);
}";
            fixed(&text.replace("BITS", bits).replace("ONE", one), vec![("isnan", ty), ("nan", ty), ("copysign", ty)])
        }
        // `a != b` as IEEE defines it: true when either is NaN.
        "ne" => fixed(
            "fn ne_$S(a: $T, b: $T) -> bool { return isnan_$S(a) || isnan_$S(b) || a != b; }",
            vec![("isnan", ty)],
        ),
        // numpy's maximum/minimum: a if it is NaN or strictly beyond b, else b (of -0.0 and 0.0
        // the second wins). The order comes from the bits (`fgt`): `select(b, a, a > b)` is what
        // drivers turn into their own max, which may return either zero.
        "fmax" => fixed(
            "fn fmax_$S(a: $T, b: $T) -> $T {
    if isnan_$S(a) { return a; }
    if isnan_$S(b) { return b; }
    return select(b, a, fgt_$S(a, b));
}",
            vec![("isnan", ty), ("fgt", ty)],
        ),
        "fmin" => fixed(
            "fn fmin_$S(a: $T, b: $T) -> $T {
    if isnan_$S(a) { return a; }
    if isnan_$S(b) { return b; }
    return select(b, a, fgt_$S(b, a));
}",
            vec![("isnan", ty), ("fgt", ty)],
        ),
        // ---- float to integer: numpy's results on x86-64 (`pytato_runtime::math::float_to_int`) ----
        // x86's cvttsd2si: truncation in range; NaN and everything outside give the smallest value.
        "cvtt64" => fixed(
            "fn cvtt64_$S(x: $T) -> i64 {
    let ok = !isnan_$S(x) && x >= $T(-9223372036854775808.0) && x < $T(9223372036854775808.0);
    return select(bitcast<i64>(0x8000000000000000lu), i64(select($T(0.0), x, ok)), ok);
}",
            vec![("isnan", ty)],
        ),
        "cvtt32" => fixed(
            "fn cvtt32_$S(x: $T) -> i32 {
    let ok = !isnan_$S(x) && x > $T(-2147483649.0) && x < $T(2147483648.0);
    return select(bitcast<i32>(0x80000000u), i32(select($T(0.0), x, ok)), ok);
}",
            vec![("isnan", ty)],
        ),
        "cvttu64" => fixed(
            "fn cvttu64_$S(x: $T) -> u64 {
    if x >= $T(9223372036854775808.0) {
        return bitcast<u64>(cvtt64_$S(x - $T(9223372036854775808.0))) ^ 0x8000000000000000lu;
    }
    return bitcast<u64>(cvtt64_$S(x));
}",
            vec![("cvtt64", ty)],
        ),
        // ---- numpy's float // and %, on an exact fmod ----
        "fmod" if f64 => {
            (math64::fmod(), vec![("isnan", ty), ("isinf", ty), ("nan", ty), ("copysign", ty), ("scalb", ty)])
        }
        "fmod" => fixed(
            // Exact through float64, where the remainder of two float32 values is representable.
            "fn fmod_f32(x: f32, y: f32) -> f32 { return f32(fmod_f64(f64(x), f64(y))); }",
            vec![("fmod", "f64")],
        ),
        // numpy's npy_divmod: the floor quotient and the remainder with the divisor's sign.
        // Where the divisor is zero, or the quotient is a signed zero, the result is built from
        // signs, not divided: inside `b == 0` a driver may replace `b` by the constant 0 and fold
        // `a / 0` as it likes (the H200's driver gave `0 // 0 = 1`), and `a / b` of equal operands
        // may fold to 1.
        "fdivmod" => (fdivmod("fdivmod", ""), fdivmod_deps(ty, false)),
        // numpy's float32 divmod (`npy_divmodf`) on float32 values held in float64: `fdivmod`'s
        // steps, each result rounded to float32 (`r32`), as float32 arithmetic rounds it (the
        // float64 result of `+ - /` on float32 values rounded to float32 is float32's own).
        "fdivmod32" => (fdivmod("fdivmod32", "r32_$S"), fdivmod_deps(ty, true)),
        "ffloordiv32" => {
            fixed("fn ffloordiv32_$S(a: $T, b: $T) -> $T { return fdivmod32_$S(a, b).x; }", vec![("fdivmod32", ty)])
        }
        "frem32" => fixed("fn frem32_$S(a: $T, b: $T) -> $T { return fdivmod32_$S(a, b).y; }", vec![("fdivmod32", ty)]),
        "ffloordiv" => {
            fixed("fn ffloordiv_$S(a: $T, b: $T) -> $T { return fdivmod_$S(a, b).x; }", vec![("fdivmod", ty)])
        }
        "frem" => fixed("fn frem_$S(a: $T, b: $T) -> $T { return fdivmod_$S(a, b).y; }", vec![("fdivmod", ty)]),
        // C's pow for real floats: its special cases here, the rest from `pow_positive` (float64:
        // rounded once from double-double, as glibc's) or `exp(y log x)` (WGSL's float32 built-ins).
        "pow" => fixed(
            &"fn pow_$S(x: $T, y: $T) -> $T {
    if y == $T(0.0) || x == $T(1.0) { return $T(1.0); }
    if isnan_$S(x) || isnan_$S(y) { return nan_$S(); }
    // One correctly rounded operation where there is one (numpy's pow is correctly rounded
    // there; float32's exp(y log x) is not: `floor((0.1) ** -1)` would be 9).
    if y == $T(1.0) { return x; }
    if y == $T(-1.0) { return $T(1.0) / x; }
    if y == $T(2.0) { return x * x; }
    let y_int = ffloor_$S(y) == y;
    let y_odd = y_int && fabs_$S(y) < $T(9007199254740992.0) && ffloor_$S(y * $T(0.5)) * $T(2.0) != y;
    // Finite negative x to a finite non-integer power; (-inf)^y is 0 or inf, as C99 says.
    if x < $T(0.0) && !isinf_$S(x) && !y_int && !isinf_$S(y) { return nan_$S(); }
    if isinf_$S(y) {
        let ax = fabs_$S(x);
        if ax == $T(1.0) { return $T(1.0); }
        if (ax > $T(1.0)) == (y > $T(0.0)) { return inf_$S(); }
        return $T(0.0);
    }
    let ax = fabs_$S(x);
    var m: $T;
    if ax == $T(0.0) {
        m = select(inf_$S(), $T(0.0), y > $T(0.0));
    } else if isinf_$S(ax) {
        m = select($T(0.0), inf_$S(), y > $T(0.0));
    } else {
        m = POWER;
    }
    if signbit_$S(x) && y_odd { return -m; }
    return m;
}"
            .replace("POWER", if f64 { "pow_positive_f64(ax, y)" } else { "exp_$S(y * log_$S(ax))" }),
            if f64 {
                vec![("isnan", ty), ("isinf", ty), ("nan", ty), ("inf", ty), ("signbit", ty), ("pow_positive", ty)]
            } else {
                vec![("isnan", ty), ("isinf", ty), ("nan", ty), ("inf", ty), ("signbit", ty), ("exp", ty), ("log", ty)]
            },
        ),
        _ if f64 => math64::template(name),
        _ => f32_math(name),
    }
}

/// float32 functions for adapters without float64: WGSL's built-ins (loose accuracy, see the
/// module docs), wrapped so that complex helpers call one name for both float types.
fn f32_math(name: &str) -> (String, Deps) {
    let text = match name {
        "exp" => "fn exp_f32(x: f32) -> f32 { return exp(x); }",
        "log" => "fn log_f32(x: f32) -> f32 { return log(x); }",
        "fma" => "fn fma_f32(a: f32, b: f32, c: f32) -> f32 { return fma(a, b, c); }",
        "log10" => "fn log10_f32(x: f32) -> f32 { return log(x) * 0.43429448190325182765; }",
        "log1p" => {
            "fn log1p_f32(x: f32) -> f32 {
    let u = opqa_f32(1.0 + x);
    if u == 1.0 { return x; }
    return log(u) * (x / (u - 1.0));
}"
        }
        "sin" => "fn sin_f32(x: f32) -> f32 { return sin(x); }",
        "cos" => "fn cos_f32(x: f32) -> f32 { return cos(x); }",
        "tan" => "fn tan_f32(x: f32) -> f32 { return tan(x); }",
        "asin" => "fn asin_f32(x: f32) -> f32 { return asin(x); }",
        "acos" => "fn acos_f32(x: f32) -> f32 { return acos(x); }",
        "atan" => "fn atan_f32(x: f32) -> f32 { return atan(x); }",
        "atan2" => "fn atan2_f32(y: f32, x: f32) -> f32 { return atan2(y, x); }",
        "sinh" => "fn sinh_f32(x: f32) -> f32 { return sinh(x); }",
        "cosh" => "fn cosh_f32(x: f32) -> f32 { return cosh(x); }",
        "tanh" => "fn tanh_f32(x: f32) -> f32 { return tanh(x); }",
        "asinh" => "fn asinh_f32(x: f32) -> f32 { return asinh(x); }",
        "hypot" => {
            "fn hypot_f32(a: f32, b: f32) -> f32 {
    let m = max(a, b);
    if m == 0.0 { return 0.0; }
    var s: f32 = 1.0;
    if m > 1e18 { s = 1.0 / 4294967296.0; } else if m < 1e-18 { s = 4294967296.0; }
    let p = a * s;
    let q = b * s;
    return sqrt(p * p + q * q) / s;
}"
        }
        other => panic!("no float32 WGSL helper {other}"),
    };
    let deps = if name == "log1p" { vec![("opqa", "f32")] } else { vec![] };
    (text.to_string(), deps)
}

/// numpy's `npy_divmod` as the WGSL function `{name}_$S`: the floor quotient and the remainder
/// with the divisor's sign, each arithmetic step's result passed through `round` (a function
/// name, or "" for the value's own precision). Where the divisor is zero, or the quotient is a
/// signed zero, the result is built from signs, not divided (see the `fdivmod` entry).
fn fdivmod(name: &str, round: &str) -> String {
    format!(
        "fn {name}_$S(a: $T, b: $T) -> vec2<$T> {{
    var m = fmod_$S(a, b);
    // The sign of a / b, from the bits (a float constant's zero sign is not safe either).
    let quotient_sign = xorsign_$S(a, b);
    if b == $T(0.0) {{
        if isnan_$S(a) || a == $T(0.0) {{ return vec2<$T>(nan_$S(), m); }}
        return vec2<$T>(copysign_$S(inf_$S(), quotient_sign), m);
    }}
    if isnan_$S(m) {{ return vec2<$T>(nan_$S(), m); }}
    var div = {round}({round}(a - m) / b);
    if m != $T(0.0) {{
        if signbit_$S(b) != signbit_$S(m) {{ m = {round}(m + b); div = {round}(div - $T(1.0)); }}
    }} else {{
        m = copysign_$S($T(0.0), b);
    }}
    var q: $T;
    if div != $T(0.0) {{
        q = ffloor_$S(div);
        if div - q > $T(0.5) {{ q = {round}(q + $T(1.0)); }}
    }} else {{
        q = copysign_$S($T(0.0), quotient_sign);
    }}
    return vec2<$T>(q, m);
}}"
    )
}

/// What [`fdivmod`] calls, with `r32` where its steps round to float32.
fn fdivmod_deps(ty: &'static str, float32_steps: bool) -> Deps {
    let mut deps =
        vec![("fmod", ty), ("copysign", ty), ("signbit", ty), ("isnan", ty), ("nan", ty), ("inf", ty), ("xorsign", ty)];
    if float32_steps {
        deps.push(("r32", ty));
    }
    deps
}
