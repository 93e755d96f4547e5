//! The WGSL functions generated shaders call: numpy's integer and float semantics, NaN tests that
//! drivers cannot optimize away, complex arithmetic and a float64 math library.
//!
//! A function is requested by name and WGSL type ([`Library::require`]) and instantiated for that
//! type as `name_suffix` (`floordiv_i64`, `exp_f64`, `mul_c128` for `vec2<f64>`); a shader includes
//! only what it calls, with what those functions call before them.
//!
//! # Why a float64 math library
//!
//! WGSL's `sin`, `exp`, `log`, … map to GLSL.std.450 instructions that Vulkan defines for 16- and
//! 32-bit floats only: on float64 a driver may return anything (Mesa's lavapipe returns garbage).
//! Float64 transcendental functions are therefore computed here from `+ - * /`, `sqrt`, `floor`
//! and bit operations, which are exact on every driver, with musl's (fdlibm's) algorithms and
//! coefficients: within 1–2 ulp for `exp`, `log`, `sin`, `cos`, `atan`, `asin`, `acos` (`sin` and
//! `cos` reduce by three parts of pi/2, which is exact for |x| < 1.6e6 and loses bits beyond), a
//! few ulp for the functions built from them (`tan`, `pow`, `sinh`, `cosh`, `tanh`, `log10`,
//! `atan2`). float32 uses WGSL's built-ins.
//!
//! # Why NaN is tested by its bits
//!
//! WGSL lets an implementation assume that no value is NaN, and drivers do: lavapipe folds
//! `x != x` to `false` and evaluates `NaN != 1.0` as `false`. `isnan` therefore looks at the bits,
//! and every operation whose numpy result depends on NaN (`!=`, `maximum`, `minimum`, `max`/`min`
//! reductions, `pow`, casts to bool) tests it explicitly.

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
            let (text, deps) = match name {
                "ipow" => (ipow(ty), vec![]),
                _ => {
                    let (text, deps) = template(name, ty);
                    (text.to_string(), deps)
                }
            };
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
///
/// Square-and-multiply over every bit of the exponent, unrolled: a loop here would run inside
/// reduction loops, and lavapipe counts loop iterations per invocation (see `Gpu::loop_limit`).
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
fn template(name: &str, ty: &'static str) -> (&'static str, Deps) {
    if ty.starts_with("vec2") {
        return complex(name, ty);
    }
    let f64 = ty == "f64";
    match name {
        // ---- integers: Python's // and % with 0 for a zero divisor; wrapping powers ----
        "floordiv" => (
            "fn floordiv_$S(a: $T, b: $T) -> $T {
    if b == $T(0) { return $T(0); }
    let q = a / b;
    let r = a - q * b;
    if r != $T(0) && ((r < $T(0)) != (b < $T(0))) { return q - $T(1); }
    return q;
}",
            vec![],
        ),
        "pyrem" => (
            "fn pyrem_$S(a: $T, b: $T) -> $T {
    if b == $T(0) { return $T(0); }
    let r = a - (a / b) * b;
    if r != $T(0) && ((r < $T(0)) != (b < $T(0))) { return r + b; }
    return r;
}",
            vec![],
        ),
        // float → uint64 as numpy: truncate, then wrap (values from 2^63 on convert directly).
        "to_u64" => (
            "fn to_u64_$S(x: $T) -> u64 {
    if x >= $T(9223372036854775808.0) { return u64(x); }
    return bitcast<u64>(i64(x));
}",
            vec![],
        ),
        // ---- float bits ----
        "isnan" if f64 => (
            "fn isnan_$S(x: $T) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu; }",
            vec![],
        ),
        "isnan" => ("fn isnan_$S(x: $T) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }", vec![]),
        "isinf" if f64 => (
            "fn isinf_$S(x: $T) -> bool { return (bitcast<u64>(x) & 0x7ffffffffffffffflu) == 0x7ff0000000000000lu; }",
            vec![],
        ),
        "isinf" => ("fn isinf_$S(x: $T) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }", vec![]),
        "signbit" if f64 => ("fn signbit_$S(x: $T) -> bool { return (bitcast<u64>(x) >> 63u) != 0lu; }", vec![]),
        "signbit" => ("fn signbit_$S(x: $T) -> bool { return (bitcast<u32>(x) >> 31u) != 0u; }", vec![]),
        "nan" if f64 => ("fn nan_$S() -> $T { return bitcast<f64>(0x7ff8000000000000lu); }", vec![]),
        "nan" => ("fn nan_$S() -> $T { return bitcast<f32>(0x7fc00000u); }", vec![]),
        "inf" if f64 => ("fn inf_$S() -> $T { return bitcast<f64>(0x7ff0000000000000lu); }", vec![]),
        "inf" => ("fn inf_$S() -> $T { return bitcast<f32>(0x7f800000u); }", vec![]),
        "copysign" => (
            "fn copysign_$S(x: $T, s: $T) -> $T { return select(abs(x), -abs(x), signbit_$S(s)); }",
            vec![("signbit", ty)],
        ),
        // `a != b` as IEEE defines it: true when either is NaN.
        "ne" => {
            ("fn ne_$S(a: $T, b: $T) -> bool { return isnan_$S(a) || isnan_$S(b) || a != b; }", vec![("isnan", ty)])
        }
        "fmax" => (
            "fn fmax_$S(a: $T, b: $T) -> $T {
    if isnan_$S(a) { return a; }
    if isnan_$S(b) { return b; }
    return select(b, a, a >= b);
}",
            vec![("isnan", ty)],
        ),
        "fmin" => (
            "fn fmin_$S(a: $T, b: $T) -> $T {
    if isnan_$S(a) { return a; }
    if isnan_$S(b) { return b; }
    return select(a, b, a >= b);
}",
            vec![("isnan", ty)],
        ),
        // numpy's npy_divmod: the floor quotient and the remainder with the divisor's sign. The
        // truncated remainder `a - b * trunc(a / b)` stands in for C's fmod (exact there for
        // quotients that fit the mantissa).
        "fdivmod" => (
            "fn fdivmod_$S(a: $T, b: $T) -> vec2<$T> {
    var m = a - b * trunc(a / b);
    if b == $T(0.0) { return vec2<$T>(a / b, nan_$S()); }
    var div = (a - m) / b;
    if m != $T(0.0) {
        if (b < $T(0.0)) != (m < $T(0.0)) { m = m + b; div = div - $T(1.0); }
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
            vec![("copysign", ty), ("nan", ty)],
        ),
        "ffloordiv" => ("fn ffloordiv_$S(a: $T, b: $T) -> $T { return fdivmod_$S(a, b).x; }", vec![("fdivmod", ty)]),
        "frem" => ("fn frem_$S(a: $T, b: $T) -> $T { return fdivmod_$S(a, b).y; }", vec![("fdivmod", ty)]),
        // C's pow for real floats, from exp and log (whose accuracy it inherits).
        "pow" => (
            "fn pow_$S(x: $T, y: $T) -> $T {
    if y == $T(0.0) || x == $T(1.0) { return $T(1.0); }
    if isnan_$S(x) || isnan_$S(y) { return nan_$S(); }
    let y_int = floor(y) == y;
    let y_odd = y_int && abs(y) < $T(9007199254740992.0) && floor(y * $T(0.5)) * $T(2.0) != y;
    if x < $T(0.0) && !y_int && !isinf_$S(y) { return nan_$S(); }
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
        _ if f64 => f64_math(name),
        _ => f32_math(name),
    }
}

/// float32 functions: WGSL's built-ins, wrapped so that complex helpers call one name for both
/// float types.
fn f32_math(name: &str) -> (&'static str, Deps) {
    let text = match name {
        "exp" => "fn exp_f32(x: f32) -> f32 { return exp(x); }",
        "log" => "fn log_f32(x: f32) -> f32 { return log(x); }",
        "log10" => "fn log10_f32(x: f32) -> f32 { return log(x) * 0.43429448190325182765; }",
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
        other => panic!("no float32 WGSL helper {other}"),
    };
    (text, vec![])
}

/// float64 functions from musl (fdlibm), see the module docs.
fn f64_math(name: &str) -> (&'static str, Deps) {
    let t = "f64";
    match name {
        // 2^k for k in [-1022, 1023].
        "pow2" => ("fn pow2_f64(k: i32) -> f64 { return bitcast<f64>(u64(k + 1023) << 52u); }", vec![]),
        "exp" => (
            "fn exp_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    if x > 709.782712893383973096 { return inf_f64(); }
    if x < -745.13321910194110842 { return 0.0lf; }
    if abs(x) < 7.450580596923828125e-9 { return 1.0lf + x; }
    let k = round(x * 1.44269504088896338700);
    let hi = x - k * 6.93147180369123816490e-01;
    let lo = k * 1.90821492927058770002e-10;
    let r = hi - lo;
    let rr = r * r;
    let c = r - rr * (1.66666666666666019037e-01 + rr * (-2.77777777770155933842e-03
        + rr * (6.61375632143793436117e-05 + rr * (-1.65339022054652515390e-06 + rr * 4.13813679705723846039e-08))));
    let y = 1.0lf + (r * c / (2.0lf - c) - lo + hi);
    let ki = i32(k);
    let half = ki / 2;
    return y * pow2_f64(half) * pow2_f64(ki - half);
}",
            vec![("isnan", t), ("inf", t), ("pow2", t)],
        ),
        "log" => (
            "fn log_f64(x0: f64) -> f64 {
    if isnan_f64(x0) { return x0; }
    if x0 < 0.0lf { return nan_f64(); }
    if x0 == 0.0lf { return -inf_f64(); }
    if isinf_f64(x0) { return x0; }
    var x = x0;
    var k = 0;
    if x < 2.2250738585072014e-308 { x = x * 18014398509481984.0lf; k = -54; }
    var bits = bitcast<u64>(x);
    var hx = u32(bits >> 32u) + (0x3ff00000u - 0x3fe6a09eu);
    k = k + i32(hx >> 20u) - 0x3ff;
    hx = (hx & 0x000fffffu) + 0x3fe6a09eu;
    x = bitcast<f64>((u64(hx) << 32u) | (bits & 0xfffffffflu));
    let f = x - 1.0lf;
    let hfsq = 0.5lf * f * f;
    let s = f / (2.0lf + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01));
    let t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01
        + w * (1.818357216161805012e-01 + w * 1.479819860511658591e-01)));
    let rr = t2 + t1;
    let dk = f64(k);
    return s * (hfsq + rr) + dk * 1.90821492927058770002e-10 - hfsq + f + dk * 6.93147180369123816490e-01;
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("inf", t)],
        ),
        "log10" => ("fn log10_f64(x: f64) -> f64 { return log_f64(x) / 2.30258509299404568402; }", vec![("log", t)]),
        // musl's __rem_pio2, medium case: x - n pi/2 as y0 + y1, and n.
        "rem_pio2" => (
            "struct RemPio2 { y0: f64, y1: f64, n: i32 }
fn rem_pio2_f64(x: f64) -> RemPio2 {
    let fn_ = round(x * 6.36619772367581382433e-01);
    var r = x - fn_ * 1.57079632673412561417e+00;
    var w = fn_ * 6.07710050650619224932e-11;
    var y0 = r - w;
    let ex = i32((bitcast<u64>(x) >> 52u) & 0x7fflu);
    var ey = i32((bitcast<u64>(y0) >> 52u) & 0x7fflu);
    if ex - ey > 16 {
        var t = r;
        w = fn_ * 6.07710050630396597660e-11;
        r = t - w;
        w = fn_ * 2.02226624879595063154e-21 - ((t - r) - w);
        y0 = r - w;
        ey = i32((bitcast<u64>(y0) >> 52u) & 0x7fflu);
        if ex - ey > 49 {
            t = r;
            w = fn_ * 2.02226624871116645580e-21;
            r = t - w;
            w = fn_ * 8.47842766036889956997e-32 - ((t - r) - w);
            y0 = r - w;
        }
    }
    return RemPio2(y0, (r - y0) - w, i32(fn_));
}",
            vec![],
        ),
        "ksin" => (
            "fn ksin_f64(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * 2.75573137070700676789e-06)
        + z * w * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10);
    let v = z * x;
    return x - ((z * (0.5lf * y - v * r) - y) - v * -1.66666666666666324348e-01);
}",
            vec![],
        ),
        "kcos" => (
            "fn kcos_f64(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * 2.48015872894767294178e-05))
        + w * w * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11));
    let hz = 0.5lf * z;
    let ww = 1.0lf - hz;
    return ww + (((1.0lf - ww) - hz) + (z * r - x * y));
}",
            vec![],
        ),
        "sin" => (
            "fn sin_f64(x: f64) -> f64 {
    if isnan_f64(x) || isinf_f64(x) { return nan_f64(); }
    if abs(x) < 7.450580596923828125e-9 { return x; }
    let r = rem_pio2_f64(x);
    switch r.n & 3 {
        case 0: { return ksin_f64(r.y0, r.y1); }
        case 1: { return kcos_f64(r.y0, r.y1); }
        case 2: { return -ksin_f64(r.y0, r.y1); }
        default: { return -kcos_f64(r.y0, r.y1); }
    }
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("rem_pio2", t), ("ksin", t), ("kcos", t)],
        ),
        "cos" => (
            "fn cos_f64(x: f64) -> f64 {
    if isnan_f64(x) || isinf_f64(x) { return nan_f64(); }
    let r = rem_pio2_f64(x);
    switch r.n & 3 {
        case 0: { return kcos_f64(r.y0, r.y1); }
        case 1: { return -ksin_f64(r.y0, r.y1); }
        case 2: { return -kcos_f64(r.y0, r.y1); }
        default: { return ksin_f64(r.y0, r.y1); }
    }
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("rem_pio2", t), ("ksin", t), ("kcos", t)],
        ),
        "tan" => (
            "fn tan_f64(x: f64) -> f64 {
    if isnan_f64(x) || isinf_f64(x) { return nan_f64(); }
    if abs(x) < 7.450580596923828125e-9 { return x; }
    let r = rem_pio2_f64(x);
    let s = ksin_f64(r.y0, r.y1);
    let c = kcos_f64(r.y0, r.y1);
    if (r.n & 1) == 0 { return s / c; }
    return -c / s;
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("rem_pio2", t), ("ksin", t), ("kcos", t)],
        ),
        "atan" => (
            "fn atan_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    var ax = abs(x);
    if ax >= 7.378697629483821e19 { return copysign_f64(1.57079632679489655800e+00, x); }
    var id = -1;
    if ax < 0.4375lf {
        if ax < 3.725290298461914e-9 { return x; }
    } else if ax < 1.1875lf {
        if ax < 0.6875lf { id = 0; ax = (2.0lf * ax - 1.0lf) / (2.0lf + ax); }
        else { id = 1; ax = (ax - 1.0lf) / (ax + 1.0lf); }
    } else if ax < 2.4375lf {
        id = 2; ax = (ax - 1.5lf) / (1.0lf + 1.5lf * ax);
    } else {
        id = 3; ax = -1.0lf / ax;
    }
    let z = ax * ax;
    let w = z * z;
    let s1 = z * (3.33333333333329318027e-01 + w * (1.42857142725034663711e-01 + w * (9.09088713343650656196e-02
        + w * (6.66107313738753120669e-02 + w * (4.97687799461593236017e-02 + w * 1.62858201153657823623e-02)))));
    let s2 = w * (-1.99999999998764832476e-01 + w * (-1.11111104054623557880e-01 + w * (-7.69187620504482999495e-02
        + w * (-5.83357013379057348645e-02 + w * -3.65315727442169155270e-02))));
    if id < 0 { return x - x * (s1 + s2); }
    var hi = array<f64, 4>(4.63647609000806093515e-01, 7.85398163397448278999e-01,
        9.82793723247329054082e-01, 1.57079632679489655800e+00);
    var lo = array<f64, 4>(2.26987774529616870924e-17, 3.06161699786838301793e-17,
        1.39033110312309984516e-17, 6.12323399573676603587e-17);
    let r = hi[id] - ((ax * (s1 + s2) - lo[id]) - ax);
    return copysign_f64(r, x);
}",
            vec![("isnan", t), ("copysign", t)],
        ),
        "atan2" => (
            "fn atan2_f64(y: f64, x: f64) -> f64 {
    if isnan_f64(x) || isnan_f64(y) { return nan_f64(); }
    let pi: f64 = 3.1415926535897931160e+00;
    if y == 0.0lf {
        if signbit_f64(x) { return copysign_f64(pi, y); }
        return y;
    }
    if x == 0.0lf { return copysign_f64(1.5707963267948966, y); }
    if isinf_f64(x) {
        if isinf_f64(y) {
            if signbit_f64(x) { return copysign_f64(2.356194490192345, y); }
            return copysign_f64(0.7853981633974483, y);
        }
        if signbit_f64(x) { return copysign_f64(pi, y); }
        return copysign_f64(0.0lf, y);
    }
    if isinf_f64(y) { return copysign_f64(1.5707963267948966, y); }
    let z = atan_f64(abs(y / x));
    if signbit_f64(x) { return copysign_f64(pi - (z - 1.2246467991473532e-16), y); }
    return copysign_f64(z, y);
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("signbit", t), ("copysign", t), ("atan", t)],
        ),
        // musl's R(z) of asin and acos.
        "asin_r" => (
            "fn asin_r_f64(z: f64) -> f64 {
    let p = z * (1.66666666666666657415e-01 + z * (-3.25565818622400915405e-01 + z * (2.01212532134862925881e-01
        + z * (-4.00555345006794114027e-02 + z * (7.91534994289814532176e-04 + z * 3.47933107596021167570e-05)))));
    let q = 1.0lf + z * (-2.40339491173441421878e+00 + z * (2.02094576023350569471e+00
        + z * (-6.88283971605453293030e-01 + z * 7.70381505559019352791e-02)));
    return p / q;
}",
            vec![],
        ),
        // Clears the low 32 bits (musl's SET_LOW_WORD(f, 0)).
        "high_word" => {
            ("fn high_word_f64(x: f64) -> f64 { return bitcast<f64>(bitcast<u64>(x) & 0xffffffff00000000lu); }", vec![])
        }
        "asin" => (
            "fn asin_f64(x: f64) -> f64 {
    let pio2_hi: f64 = 1.57079632679489655800e+00;
    let pio2_lo: f64 = 6.12323399573676603587e-17;
    let ax = abs(x);
    if isnan_f64(x) || ax > 1.0lf { return nan_f64(); }
    if ax == 1.0lf { return x * pio2_hi; }
    if ax < 0.5lf {
        if ax < 7.450580596923828125e-9 { return x; }
        return x + x * asin_r_f64(x * x);
    }
    let z = (1.0lf - ax) * 0.5lf;
    let s = sqrt(z);
    let r = asin_r_f64(z);
    var y: f64;
    if ax >= 0.975lf {
        y = pio2_hi - (2.0lf * (s + s * r) - pio2_lo);
    } else {
        let f = high_word_f64(s);
        let c = (z - f * f) / (s + f);
        y = 0.5lf * pio2_hi - (2.0lf * s * r - (pio2_lo - 2.0lf * c) - (0.5lf * pio2_hi - 2.0lf * f));
    }
    return copysign_f64(y, x);
}",
            vec![("isnan", t), ("nan", t), ("asin_r", t), ("high_word", t), ("copysign", t)],
        ),
        "acos" => (
            "fn acos_f64(x: f64) -> f64 {
    let pio2_hi: f64 = 1.57079632679489655800e+00;
    let pio2_lo: f64 = 6.12323399573676603587e-17;
    let ax = abs(x);
    if isnan_f64(x) || ax > 1.0lf { return nan_f64(); }
    if x == 1.0lf { return 0.0lf; }
    if x == -1.0lf { return 2.0lf * pio2_hi; }
    if ax < 0.5lf {
        if ax < 6.938893903907228e-18 { return pio2_hi; }
        return pio2_hi - (x - (pio2_lo - x * asin_r_f64(x * x)));
    }
    if x < 0.0lf {
        let z = (1.0lf + x) * 0.5lf;
        let s = sqrt(z);
        let w = asin_r_f64(z) * s - pio2_lo;
        return 2.0lf * (pio2_hi - (s + w));
    }
    let z = (1.0lf - x) * 0.5lf;
    let s = sqrt(z);
    let df = high_word_f64(s);
    let c = (z - df * df) / (s + df);
    let w = asin_r_f64(z) * s + c;
    return 2.0lf * (df + w);
}",
            vec![("isnan", t), ("nan", t), ("asin_r", t), ("high_word", t)],
        ),
        // sinh/cosh/tanh: a Taylor series below 1 in magnitude (no cancellation), exponentials
        // above, halved so that e^|x| does not overflow before the result does.
        // x + x^3/3! + ... + x^23/23!, by Horner's rule in x² (no loop: see `ipow`).
        "sinh_series" => (
            "fn sinh_series_f64(x: f64) -> f64 {
    let z = x * x;
    var p: f64 = 1.0lf / 25852016738884976640000.0lf;
    p = 1.0lf / 51090942171709440000.0lf + z * p;
    p = 1.0lf / 121645100408832000.0lf + z * p;
    p = 1.0lf / 355687428096000.0lf + z * p;
    p = 1.0lf / 1307674368000.0lf + z * p;
    p = 1.0lf / 6227020800.0lf + z * p;
    p = 1.0lf / 39916800.0lf + z * p;
    p = 1.0lf / 362880.0lf + z * p;
    p = 1.0lf / 5040.0lf + z * p;
    p = 1.0lf / 120.0lf + z * p;
    p = 1.0lf / 6.0lf + z * p;
    return x + x * z * p;
}",
            vec![],
        ),
        "sinh" => (
            "fn sinh_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    let ax = abs(x);
    if ax < 1.0lf { return sinh_series_f64(x); }
    if ax > 22.0lf {
        let h = exp_f64(0.5lf * ax);
        return copysign_f64(0.5lf * h * h, x);
    }
    let e = exp_f64(ax);
    return copysign_f64(0.5lf * (e - 1.0lf / e), x);
}",
            vec![("isnan", t), ("sinh_series", t), ("exp", t), ("copysign", t)],
        ),
        "cosh" => (
            "fn cosh_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    let ax = abs(x);
    if ax > 22.0lf {
        let h = exp_f64(0.5lf * ax);
        return 0.5lf * h * h;
    }
    let e = exp_f64(ax);
    return 0.5lf * (e + 1.0lf / e);
}",
            vec![("isnan", t), ("exp", t)],
        ),
        "tanh" => (
            "fn tanh_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    let ax = abs(x);
    if ax > 22.0lf { return copysign_f64(1.0lf, x); }
    if ax < 1.0lf {
        let s = sinh_series_f64(x);
        return s / sqrt(1.0lf + s * s);
    }
    let e = exp_f64(2.0lf * ax);
    return copysign_f64(1.0lf - 2.0lf / (e + 1.0lf), x);
}",
            vec![("isnan", t), ("sinh_series", t), ("exp", t), ("copysign", t)],
        ),
        other => panic!("no float64 WGSL helper {other}"),
    }
}

/// Complex helpers on `vec2<R>` (real, imaginary), with num-complex's formulas (the interpreter's).
fn complex(name: &str, ty: &'static str) -> (&'static str, Deps) {
    let r = real_of(ty);
    match name {
        "mul" => ("fn mul_$S(a: $T, b: $T) -> $T { return $T(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }", vec![]),
        // Smith's algorithm: no overflow of c² + d² for large divisors.
        "div" => (
            "fn div_$S(a: $T, b: $T) -> $T {
    if abs(b.x) >= abs(b.y) {
        if b.x == $R(0.0) && b.y == $R(0.0) { return $T(a.x / b.x, a.y / b.x); }
        let q = b.y / b.x;
        let d = b.x + b.y * q;
        return $T((a.x + a.y * q) / d, (a.y - a.x * q) / d);
    }
    let q = b.x / b.y;
    let d = b.x * q + b.y;
    return $T((a.x * q + a.y) / d, (a.y * q - a.x) / d);
}",
            vec![],
        ),
        "abs" => (
            "fn abs_$S(z: $T) -> $R {
    let a = abs(z.x);
    let b = abs(z.y);
    if isinf_$R(a) || isinf_$R(b) { return inf_$R(); }
    let m = max(a, b);
    if m == $R(0.0) || isnan_$R(m) { return a + b; }
    let p = a / m;
    let q = b / m;
    return m * sqrt(p * p + q * q);
}",
            vec![("isinf", r), ("inf", r), ("isnan", r)],
        ),
        "isnan" => ("fn isnan_$S(z: $T) -> bool { return isnan_$R(z.x) || isnan_$R(z.y); }", vec![("isnan", r)]),
        "exp" => (
            "fn exp_$S(z: $T) -> $T {
    let e = exp_$R(z.x);
    if z.y == $R(0.0) { return $T(e, z.y); }
    return $T(e * cos_$R(z.y), e * sin_$R(z.y));
}",
            vec![("exp", r), ("cos", r), ("sin", r)],
        ),
        "log" => (
            "fn log_$S(z: $T) -> $T { return $T(log_$R(abs_$S(z)), atan2_$R(z.y, z.x)); }",
            vec![("log", r), ("abs", ty), ("atan2", r)],
        ),
        "log10" => ("fn log10_$S(z: $T) -> $T { return log_$S(z) / $R(2.30258509299404568402); }", vec![("log", ty)]),
        // num-complex's sqrt: through polar form, with the exact cases first.
        "sqrt" => (
            "fn sqrt_$S(z: $T) -> $T {
    if z.y == $R(0.0) {
        if z.x >= $R(0.0) { return $T(sqrt(z.x), z.y); }
        return $T($R(0.0), copysign_$R(sqrt(-z.x), z.y));
    }
    if z.x == $R(0.0) {
        let x = sqrt($R(0.5) * abs(z.y));
        return $T(x, copysign_$R(x, z.y));
    }
    let r = sqrt(abs_$S(z));
    let t = $R(0.5) * atan2_$R(z.y, z.x);
    return $T(r * cos_$R(t), r * sin_$R(t));
}",
            vec![("copysign", r), ("abs", ty), ("atan2", r), ("cos", r), ("sin", r)],
        ),
        "sin" => (
            "fn sin_$S(z: $T) -> $T { return $T(sin_$R(z.x) * cosh_$R(z.y), cos_$R(z.x) * sinh_$R(z.y)); }",
            vec![("sin", r), ("cos", r), ("sinh", r), ("cosh", r)],
        ),
        "cos" => (
            "fn cos_$S(z: $T) -> $T { return $T(cos_$R(z.x) * cosh_$R(z.y), -sin_$R(z.x) * sinh_$R(z.y)); }",
            vec![("sin", r), ("cos", r), ("sinh", r), ("cosh", r)],
        ),
        "tan" => (
            "fn tan_$S(z: $T) -> $T {
    let d = cos_$R($R(2.0) * z.x) + cosh_$R($R(2.0) * z.y);
    return $T(sin_$R($R(2.0) * z.x) / d, sinh_$R($R(2.0) * z.y) / d);
}",
            vec![("sin", r), ("cos", r), ("sinh", r), ("cosh", r)],
        ),
        "sinh" => (
            "fn sinh_$S(z: $T) -> $T { return $T(sinh_$R(z.x) * cos_$R(z.y), cosh_$R(z.x) * sin_$R(z.y)); }",
            vec![("sin", r), ("cos", r), ("sinh", r), ("cosh", r)],
        ),
        "cosh" => (
            "fn cosh_$S(z: $T) -> $T { return $T(cosh_$R(z.x) * cos_$R(z.y), sinh_$R(z.x) * sin_$R(z.y)); }",
            vec![("sin", r), ("cos", r), ("sinh", r), ("cosh", r)],
        ),
        "tanh" => (
            "fn tanh_$S(z: $T) -> $T {
    let d = cosh_$R($R(2.0) * z.x) + cos_$R($R(2.0) * z.y);
    return $T(sinh_$R($R(2.0) * z.x) / d, sin_$R($R(2.0) * z.y) / d);
}",
            vec![("sin", r), ("cos", r), ("sinh", r), ("cosh", r)],
        ),
        // asin(z) = -i ln(iz + sqrt(1 - z²))
        "asin" => (
            "fn asin_$S(z: $T) -> $T {
    let s = sqrt_$S($T($R(1.0), $R(0.0)) - mul_$S(z, z));
    let l = log_$S($T(-z.y, z.x) + s);
    return $T(l.y, -l.x);
}",
            vec![("sqrt", ty), ("mul", ty), ("log", ty)],
        ),
        // acos(z) = -i ln(z + i sqrt(1 - z²))
        "acos" => (
            "fn acos_$S(z: $T) -> $T {
    let s = sqrt_$S($T($R(1.0), $R(0.0)) - mul_$S(z, z));
    let l = log_$S(z + $T(-s.y, s.x));
    return $T(l.y, -l.x);
}",
            vec![("sqrt", ty), ("mul", ty), ("log", ty)],
        ),
        // atan(z) = (ln(1 + iz) - ln(1 - iz)) / 2i
        "atan" => (
            "fn atan_$S(z: $T) -> $T {
    let iz = $T(-z.y, z.x);
    let one = $T($R(1.0), $R(0.0));
    let d = log_$S(one + iz) - log_$S(one - iz);
    return $T($R(0.5) * d.y, $R(-0.5) * d.x);
}",
            vec![("log", ty)],
        ),
        // The interpreter's rule: z ** 0 = 1, 0 ** w = 0, else exp(w ln z).
        "pow" => (
            "fn pow_$S(a: $T, b: $T) -> $T {
    if b.x == $R(0.0) && b.y == $R(0.0) { return $T($R(1.0), $R(0.0)); }
    if a.x == $R(0.0) && a.y == $R(0.0) { return $T($R(0.0), $R(0.0)); }
    return exp_$S(mul_$S(b, log_$S(a)));
}",
            vec![("exp", ty), ("mul", ty), ("log", ty)],
        ),
        other => panic!("no complex WGSL helper {other} for {ty}"),
    }
}
