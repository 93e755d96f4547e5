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
//!   so `opqa(x) - opqb(x)` is not recognisably `x - x`, and a constant (`opqc`) stays opaque
//!   when an operand flavour is applied on top (the same zero twice would cancel).
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
//! double precision and rounded once, as the CPU backends do (`pytato_core::math`); without it
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
            let _ = writeln!(self.text, "{text}");
        }
        called
    }

    /// The WGSL text of every function required so far.
    pub(crate) fn source(&self) -> &str {
        &self.text
    }
}

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
        // ---- float bits ----
        "isnan" if f64 => fixed(
            "fn isnan_$S(x: $T) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu; }",
            vec![],
        ),
        "isnan" => {
            fixed("fn isnan_$S(x: $T) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }", vec![])
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
        // numpy's rint: to the nearest integer, ties to even, the sign of zero kept. Built from
        // exact operations (floor, subtraction of values one apart, comparisons): drivers
        // implement WGSL's `round` loosely (lavapipe 22.3 rounds float64 23.5 to 23).
        "rint" => {
            let big = if f64 { "4503599627370496.0" } else { "8388608.0" }; // 2^52, 2^23: already integers
            let text = "fn rint_$S(x: $T) -> $T {
    let a = copysign_$S(x, $T(1.0));
    if !(a < $T(BIG)) { return x; }
    let f = floor(a);
    let d = a - f;
    let odd = f - $T(2.0) * floor(f * $T(0.5)) == $T(1.0);
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
        // the second wins).
        "fmax" => fixed(
            "fn fmax_$S(a: $T, b: $T) -> $T {
    if isnan_$S(a) { return a; }
    if isnan_$S(b) { return b; }
    return select(b, a, a > b);
}",
            vec![("isnan", ty)],
        ),
        "fmin" => fixed(
            "fn fmin_$S(a: $T, b: $T) -> $T {
    if isnan_$S(a) { return a; }
    if isnan_$S(b) { return b; }
    return select(b, a, a < b);
}",
            vec![("isnan", ty)],
        ),
        // ---- float to integer: numpy's results on x86-64 (`pytato_core::math::float_to_int`) ----
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
        "fmod" if f64 => (math64::fmod(), vec![("isnan", ty), ("isinf", ty), ("nan", ty), ("copysign", ty)]),
        "fmod" => fixed(
            // Exact through float64, where the remainder of two float32 values is representable.
            "fn fmod_f32(x: f32, y: f32) -> f32 { return f32(fmod_f64(f64(x), f64(y))); }",
            vec![("fmod", "f64")],
        ),
        // numpy's npy_divmod: the floor quotient and the remainder with the divisor's sign.
        "fdivmod" => fixed(
            "fn fdivmod_$S(a: $T, b: $T) -> vec2<$T> {
    var m = fmod_$S(a, b);
    if b == $T(0.0) { return vec2<$T>(a / b, m); }
    if isnan_$S(m) { return vec2<$T>(nan_$S(), m); }
    var div = (a - m) / b;
    if m != $T(0.0) {
        if signbit_$S(b) != signbit_$S(m) { m = m + b; div = div - $T(1.0); }
    } else {
        m = copysign_$S($T(0.0), b);
    }
    var q: $T;
    if div != $T(0.0) {
        q = floor(div);
        if div - q > $T(0.5) { q = q + $T(1.0); }
    } else {
        q = copysign_$S($T(0.0), a / b);
    }
    return vec2<$T>(q, m);
}",
            vec![("fmod", ty), ("copysign", ty), ("signbit", ty), ("isnan", ty), ("nan", ty)],
        ),
        "ffloordiv" => {
            fixed("fn ffloordiv_$S(a: $T, b: $T) -> $T { return fdivmod_$S(a, b).x; }", vec![("fdivmod", ty)])
        }
        "frem" => fixed("fn frem_$S(a: $T, b: $T) -> $T { return fdivmod_$S(a, b).y; }", vec![("fdivmod", ty)]),
        // C's pow for real floats, from exp and log (whose accuracy it inherits).
        "pow" => fixed(
            "fn pow_$S(x: $T, y: $T) -> $T {
    if y == $T(0.0) || x == $T(1.0) { return $T(1.0); }
    if isnan_$S(x) || isnan_$S(y) { return nan_$S(); }
    // One correctly rounded operation where there is one (numpy's pow is correctly rounded
    // there; exp(y log x) is not: `floor((0.1) ** -1)` would be 9).
    if y == $T(1.0) { return x; }
    if y == $T(-1.0) { return $T(1.0) / x; }
    if y == $T(2.0) { return x * x; }
    let y_int = floor(y) == y;
    let y_odd = y_int && abs(y) < $T(9007199254740992.0) && floor(y * $T(0.5)) * $T(2.0) != y;
    // Finite negative x to a finite non-integer power; (-inf)^y is 0 or inf, as C99 says.
    if x < $T(0.0) && !isinf_$S(x) && !y_int && !isinf_$S(y) { return nan_$S(); }
    if isinf_$S(y) {
        let ax = abs(x);
        if ax == $T(1.0) { return $T(1.0); }
        if (ax > $T(1.0)) == (y > $T(0.0)) { return inf_$S(); }
        return $T(0.0);
    }
    let ax = abs(x);
    var m: $T;
    if ax == $T(0.0) {
        m = select(inf_$S(), $T(0.0), y > $T(0.0));
    } else if isinf_$S(ax) {
        m = select($T(0.0), inf_$S(), y > $T(0.0));
    } else {
        m = exp_$S(y * log_$S(ax));
    }
    if signbit_$S(x) && y_odd { return -m; }
    return m;
}",
            vec![("isnan", ty), ("isinf", ty), ("nan", ty), ("inf", ty), ("signbit", ty), ("exp", ty), ("log", ty)],
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
