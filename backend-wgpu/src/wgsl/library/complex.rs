//! Complex arithmetic and functions on `vec2<R>` (real, imaginary): numpy's division and power,
//! C99 Annex G's special values and branch cuts, as `pytato_runtime::math::complex` computes them on
//! the CPU (the same formulas, so the backends agree).
//!
//! Templates are written once for both real types; `{NAME}` constants differ by type (the
//! overflow threshold of `exp`, the magnitudes where formulas switch).

use super::Deps;

/// `(name, float64 value, float32 value)` of the per-type constants.
const CONSTANTS: [(&str, &str, &str); 11] = [
    // exp(x) overflows beyond this: exp(x/2)² from there.
    ("{EXP_BIG}", "709.0", "88.0"),
    // tanh(x) is ±1 to working precision beyond this.
    ("{TANH_BIG}", "22.0", "9.0"),
    // Beyond this magnitude asin/acos/atanh use their asymptotic forms.
    ("{HUGE}", "1e150", "1e18"),
    // log|z| rescales parts below TINY (2^-500) and above BIG (2^1000) by 2^∓SCALE, where
    // `pytato_runtime::math::complex` does.
    ("{TINY}", "3.054936363499605e-151", "1e-18"),
    ("{BIG}", "1.0715086071862673e301", "1e36"),
    ("{SCALE}", "600", "60"),
    // sqrt rescales beyond these.
    ("{SQRT_BIG}", "1e300", "1e36"),
    ("{SQRT_TINY}", "1e-300", "1e-36"),
    // ... scaling tiny parts up by 2^SQRT_UP (even).
    ("{SQRT_UP}", "108", "48"),
    // atanh's (1-x)² + y² below this is computed through logs.
    ("{D_SMALL}", "1e-280", "1e-30"),
    // asin and acos of an imaginary part below this (2^-600; 2^-80) take their first-order
    // forms, as `pytato_runtime::math::complex`.
    ("{TINY_IM}", "2.409919865102884e-181", "8.271806125530277e-25"),
];

/// The template `name` for the complex type `ty` and what it calls.
pub(super) fn template(name: &'static str, ty: &'static str) -> (String, Deps) {
    let r = super::real_of(ty);
    let (text, deps) = text(name, ty, r);
    let mut text = text.to_string();
    for (key, double, single) in CONSTANTS {
        text = text.replace(key, if r == "f64" { double } else { single });
    }
    (text, deps)
}

/// What complex sinh and cosh call.
fn hyperbolic_deps(ty: &'static str, r: &'static str) -> Deps {
    let real = ["opqa", "opqb", "sinh", "cosh", "sin", "cos", "isinf", "isnan", "inf", "nan", "copysign"];
    real.into_iter().map(|f| (f, r)).chain([("halfexp", ty)]).collect()
}

fn text(name: &'static str, ty: &'static str, r: &'static str) -> (&'static str, Deps) {
    match name {
        "opqa" => ("fn opqa_$S(v: $T) -> $T { return $T(opqa_$R(v.x), opqa_$R(v.y)); }", vec![("opqa", r)]),
        "opqb" => ("fn opqb_$S(v: $T) -> $T { return $T(opqb_$R(v.x), opqb_$R(v.y)); }", vec![("opqb", r)]),
        "opqc" => ("fn opqc_$S(v: $T) -> $T { return $T(opqc_$R(v.x), opqc_$R(v.y)); }", vec![("opqc", r)]),
        // numpy's product: the textbook formula, each product rounded before the sum (opaque:
        // no fused multiply-add numpy would not compute).
        "mul" => (
            "fn mul_$S(x: $T, y: $T) -> $T {
    let a = opqc_$S(x);
    let b = opqc_$S(y);
    return $T(opqa_$R(a.x * b.x) - opqb_$R(a.y * b.y), opqa_$R(a.x * b.y) + opqb_$R(a.y * b.x));
}",
            vec![("opqc", ty), ("opqa", r), ("opqb", r)],
        ),
        // numpy's elementwise multiply (`pytato_runtime::math::complex::multiply`): each part's
        // first product fused into its sum, `fma(a.x, b.x, -(a.y b.y))` and
        // `fma(a.x, b.y, a.y b.x)`. `mul` above is the textbook product of numpy's reductions.
        "cmul" => (
            "fn cmul_$S(x: $T, y: $T) -> $T {
    let a = opqc_$S(x);
    let b = opqc_$S(y);
    return $T(fma_$R(a.x, b.x, fneg_$R(opqa_$R(a.y * b.y))), fma_$R(a.x, b.y, opqa_$R(a.y * b.x)));
}",
            vec![("opqc", ty), ("opqa", r), ("fma", r), ("fneg", r)],
        ),
        // numpy's division: Smith's algorithm; a zero divisor divides each part by +0.
        "div" => (
            "fn div_$S(x: $T, y: $T) -> $T {
    let a = opqc_$S(x);
    let b = opqc_$S(y);
    let br = fabs_$R(b.x);
    let bi = fabs_$R(b.y);
    if br >= bi {
        if br == $R(0.0) && bi == $R(0.0) { return $T(a.x / br, a.y / br); }
        let rat = b.y / b.x;
        let scl = $R(1.0) / (b.x + opqa_$R(b.y * rat));
        return $T(opqa_$R(a.x + opqb_$R(a.y * rat)) * scl, opqa_$R(a.y - opqb_$R(a.x * rat)) * scl);
    }
    let rat = b.x / b.y;
    let scl = $R(1.0) / (b.y + opqa_$R(b.x * rat));
    return $T(opqa_$R(opqb_$R(a.x * rat) + a.y) * scl, opqa_$R(opqb_$R(a.y * rat) - a.x) * scl);
}",
            vec![("opqc", ty), ("opqa", r), ("opqb", r), ("fabs", r)],
        ),
        // complex64 held in complex128 (float32 parts held in float64, see the library docs):
        // each part rounded to float32, and the product and quotient with every operation rounded,
        // as numpy computes them in single precision.
        "r32" => ("fn r32_$S(z: $T) -> $T { return $T(r32_$R(z.x), r32_$R(z.y)); }", vec![("r32", r)]),
        "c64dec" => (
            "fn c64dec_$S(v: vec2<u32>) -> $T { return $T(f32dec_$R(v.x), f32dec_$R(v.y)); }",
            vec![("f32dec", r)],
        ),
        "c64enc" => (
            "fn c64enc_$S(z: $T) -> vec2<u32> { return vec2<u32>(f32enc_$R(z.x), f32enc_$R(z.y)); }",
            vec![("f32enc", r)],
        ),
        "mul32" => (
            "fn mul32_$S(x: $T, y: $T) -> $T {
    let a = opqc_$S(x);
    let b = opqc_$S(y);
    return $T(r32_$R(r32_$R(a.x * b.x) - r32_$R(a.y * b.y)), r32_$R(r32_$R(a.x * b.y) + r32_$R(a.y * b.x)));
}",
            vec![("r32", r), ("opqc", ty)],
        ),
        // numpy's complex64 multiply, `fmaf(a.x, b.x, -(a.y b.y))` and `fmaf(a.x, b.y, a.y b.x)`:
        // a product of two float32 values is exact in float64, and the sum is rounded once to
        // float32 (`r32sum`; rounded to float64 first, it could round twice).
        "cmul32" => (
            "fn cmul32_$S(x: $T, y: $T) -> $T {
    let a = opqc_$S(x);
    let b = opqc_$S(y);
    return $T(r32sum_$R(a.x * b.x, -r32_$R(a.y * b.y)), r32sum_$R(a.x * b.y, r32_$R(a.y * b.x)));
}",
            vec![("r32", r), ("r32sum", r), ("opqc", ty)],
        ),
        "div32" => (
            "fn div32_$S(x: $T, y: $T) -> $T {
    let a = opqc_$S(x);
    let b = opqc_$S(y);
    let br = fabs_$R(b.x);
    let bi = fabs_$R(b.y);
    if br >= bi {
        if br == $R(0.0) && bi == $R(0.0) { return $T(r32_$R(a.x / br), r32_$R(a.y / br)); }
        let rat = r32_$R(b.y / b.x);
        let scl = r32_$R($R(1.0) / r32_$R(b.x + r32_$R(b.y * rat)));
        return $T(r32_$R(r32_$R(a.x + r32_$R(a.y * rat)) * scl), r32_$R(r32_$R(a.y - r32_$R(a.x * rat)) * scl));
    }
    let rat = r32_$R(b.x / b.y);
    let scl = r32_$R($R(1.0) / r32_$R(b.y + r32_$R(b.x * rat)));
    return $T(r32_$R(r32_$R(r32_$R(a.x * rat) + a.y) * scl), r32_$R(r32_$R(r32_$R(a.y * rat) - a.x) * scl));
}",
            vec![("r32", r), ("fabs", r), ("opqc", ty)],
        ),
        "isnan" => ("fn isnan_$S(z: $T) -> bool { return isnan_$R(z.x) || isnan_$R(z.y); }", vec![("isnan", r)]),
        // numpy's absolute (`pytato_runtime::math::complex::abs`): L sqrt(fma(r, r, 1)), L the
        // larger part's magnitude and r the smaller's over it.
        "abs" => (
            "fn abs_$S(z: $T) -> $R {
    if isinf_$R(z.x) || isinf_$R(z.y) { return inf_$R(); }
    if isnan_$R(z.x) || isnan_$R(z.y) { return nan_$R(); }
    let large = fbig_$R(fabs_$R(z.x), fabs_$R(z.y));
    let small = fsmall_$R(fabs_$R(z.x), fabs_$R(z.y));
    if large == $R(0.0) { return large; }
    let r = opqa_$R(small / large);
    return large * sqrt(fma_$R(r, r, $R(1.0)));
}",
            vec![("isinf", r), ("isnan", r), ("inf", r), ("nan", r), ("fma", r), ("opqa", r)],
        ),
        // numpy's complex64 absolute for complex64 held in float64: each step rounded to float32
        // (a float32 value squared is exact in float64, so the fused square is the plain one).
        "abs32" => (
            "fn abs32_$S(z: $T) -> $R {
    if isinf_$R(z.x) || isinf_$R(z.y) { return inf_$R(); }
    if isnan_$R(z.x) || isnan_$R(z.y) { return nan_$R(); }
    let large = fbig_$R(fabs_$R(z.x), fabs_$R(z.y));
    let small = fsmall_$R(fabs_$R(z.x), fabs_$R(z.y));
    if large == $R(0.0) { return large; }
    let r = r32_$R(opqa_$R(small / large));
    return r32_$R(large * r32_$R(sqrt(r32_$R(opqa_$R(r * r) + $R(1.0)))));
}",
            vec![("isinf", r), ("isnan", r), ("inf", r), ("nan", r), ("r32", r), ("opqa", r)],
        ),
        "exp" => (
            "fn exp_$S(z: $T) -> $T {
    let x = z.x;
    let y = z.y;
    if y == $R(0.0) { return $T(exp_$R(x), y); }
    if isinf_$R(x) && (isinf_$R(y) || isnan_$R(y)) {
        if x > $R(0.0) { return $T(x, nan_$R()); }
        return $T($R(0.0), copysign_$R($R(0.0), y));
    }
    if x > $R({EXP_BIG}) {
        // exp(x) overflows but exp(x) cos(y) may not: (cos(y) h) h, in that order (opaque, so
        // that no compiler computes h * h first).
        let h = exp_$R($R(0.5) * x);
        return $T(opqa_$R(cos_$R(y) * h) * h, opqa_$R(sin_$R(y) * h) * h);
    }
    let e = exp_$R(x);
    return $T(opqa_$R(e) * opqb_$R(cos_$R(y)), opqa_$R(e) * opqb_$R(sin_$R(y)));
}",
            vec![
                ("opqa", r),
                ("opqb", r),
                ("exp", r),
                ("cos", r),
                ("sin", r),
                ("isinf", r),
                ("isnan", r),
                ("nan", r),
                ("copysign", r),
            ],
        ),
        // C's complex product (libgcc's __muldc3, Annex G): infinities recovered where both parts
        // come out NaN. glibc's cpow multiplies this way.
        "mulg" => (
            "fn box_$S(v: $R) -> $R { return copysign_$R(select($R(0.0), $R(1.0), isinf_$R(v)), v); }
fn zeroed_$S(v: $R) -> $R { return select(v, copysign_$R($R(0.0), v), isnan_$R(v)); }
fn mulg_$S(x: $T, y: $T) -> $T {
    var a = x.x;
    var b = x.y;
    var c = y.x;
    var d = y.y;
    let ac = a * c;
    let bd = b * d;
    let ad = a * d;
    let bc = b * c;
    let re = ac - bd;
    let im = ad + bc;
    if !(isnan_$R(re) && isnan_$R(im)) { return $T(re, im); }
    var recalc = false;
    if isinf_$R(a) || isinf_$R(b) {
        a = box_$S(a); b = box_$S(b); c = zeroed_$S(c); d = zeroed_$S(d);
        recalc = true;
    }
    if isinf_$R(c) || isinf_$R(d) {
        c = box_$S(c); d = box_$S(d); a = zeroed_$S(a); b = zeroed_$S(b);
        recalc = true;
    }
    if !recalc && (isinf_$R(ac) || isinf_$R(bd) || isinf_$R(ad) || isinf_$R(bc)) {
        a = zeroed_$S(a); b = zeroed_$S(b); c = zeroed_$S(c); d = zeroed_$S(d);
        recalc = true;
    }
    if !recalc { return $T(re, im); }
    // An opaque infinity: a driver that assumes finite values may fold a product with a
    // constant infinity as it likes.
    let big = opqc_$R(inf_$R());
    return $T(big * (a * c - b * d), big * (a * d + b * c));
}",
            vec![("copysign", r), ("isinf", r), ("isnan", r), ("inf", r), ("opqc", r)],
        ),
        // log|x + iy|, accurate near 1 and for huge, tiny and subnormal parts.
        "logabs" => (
            "fn logabs_$S(x: $R, y: $R) -> $R {
    let ax = fabs_$R(x);
    let ay = fabs_$R(y);
    if isinf_$R(ax) || isinf_$R(ay) { return inf_$R(); }
    if isnan_$R(ax) || isnan_$R(ay) { return nan_$R(); }
    let big = fbig_$R(ax, ay);
    let small = fsmall_$R(ax, ay);
    if big == $R(0.0) { return fneg_$R(inf_$R()); }
    // On an axis, log|z| is the real log's, rounded once (a subnormal part included).
    if small == $R(0.0) { return log_$R(big); }
    if big > $R(0.5) && big < $R(2.0) {
        return $R(0.5) * log1p_$R((big - $R(1.0)) * (big + $R(1.0)) + small * small);
    }
    if big < $R({TINY}) {
        return log_$R(hypot_$R(scalb_$R(ax, {SCALE}), scalb_$R(ay, {SCALE}))) - $R({SCALE}) * $R(0.69314718055994530942);
    }
    if big > $R({BIG}) {
        return log_$R(hypot_$R(scalb_$R(ax, -{SCALE}), scalb_$R(ay, -{SCALE}))) + $R({SCALE}) * $R(0.69314718055994530942);
    }
    return log_$R(hypot_$R(ax, ay));
}",
            vec![("isinf", r), ("isnan", r), ("inf", r), ("nan", r), ("log1p", r), ("log", r), ("hypot", r), ("scalb", r)],
        ),
        "log" => (
            "fn log_$S(z: $T) -> $T { return $T(logabs_$S(z.x, z.y), atan2_$R(z.y, z.x)); }",
            vec![("logabs", ty), ("atan2", r)],
        ),
        "log10" => ("fn log10_$S(z: $T) -> $T { return log_$S(z) * $R(0.43429448190325182765); }", vec![("log", ty)]),
        // Kahan's square root: the real part is never negative, the imaginary part has y's sign.
        "sqrt" => (
            "fn sqrt_$S(z: $T) -> $T {
    let x = z.x;
    let y = z.y;
    if x == $R(0.0) && y == $R(0.0) { return $T($R(0.0), y); }
    if isinf_$R(y) { return $T(inf_$R(), y); }
    if isnan_$R(x) { return $T(x, nan_$R()); }
    if isinf_$R(x) {
        if x > $R(0.0) {
            if isnan_$R(y) { return $T(x, y); }
            return $T(x, copysign_$R($R(0.0), y));
        }
        if isnan_$R(y) { return $T(nan_$R(), copysign_$R(inf_$R(), y)); }
        return $T($R(0.0), copysign_$R(inf_$R(), y));
    }
    if isnan_$R(y) { return $T(nan_$R(), nan_$R()); }
    let ax = fabs_$R(x);
    let ay = fabs_$R(y);
    var e = 0;
    if fbig_$R(ax, ay) > $R({SQRT_BIG}) { e = -2; } else if fbig_$R(ax, ay) < $R({SQRT_TINY}) { e = {SQRT_UP}; }
    let sx = scalb_$R(ax, e);
    let sy = scalb_$R(ay, e);
    let t = sqrt($R(0.5) * (sx + hypot_$R(sx, sy)));
    let re = scalb_$R(t, -e / 2);
    // On the imaginary axis both parts are sqrt(|y| / 2), rounded once (as glibc's csqrt);
    // elsewhere |y| / 2re, divided unscaled so that a subnormal quotient rounds once (the host's).
    var im = ay / ($R(2.0) * re);
    if x == $R(0.0) { im = re; }
    if x >= $R(0.0) { return $T(re, copysign_$R(im, y)); }
    return $T(im, copysign_$R(re, y));
}",
            vec![("isinf", r), ("isnan", r), ("inf", r), ("nan", r), ("copysign", r), ("hypot", r), ("scalb", r)],
        ),
        // m e^|x| / 2 without overflowing before the product does.
        "halfexp" => (
            "fn halfexp_$S(ax: $R, m: $R) -> $R {
    let h = exp_$R($R(0.5) * ax);
    return opqa_$R(m * h) * opqb_$R($R(0.5) * h);
}",
            vec![("exp", r), ("opqa", r), ("opqb", r)],
        ),
        // The products of the general case have opaque operands: lavapipe otherwise gives
        // `+0 * cos(2)` the sign +0 (the sign of a zero part picks the branch of later functions:
        // `sin(2+0j) ** ...`). The same in cosh and exp.
        "sinh" => (
            "fn sinh_$S(z: $T) -> $T {
    let x = z.x;
    let y = z.y;
    if y == $R(0.0) { return $T(sinh_$R(x), y); }
    if isinf_$R(y) || isnan_$R(y) {
        if x == $R(0.0) { return $T(x, nan_$R()); }
        if isinf_$R(x) { return $T(inf_$R(), nan_$R()); }
        return $T(nan_$R(), nan_$R());
    }
    if !isinf_$R(x) && !isnan_$R(x) && fabs_$R(x) > $R({EXP_BIG}) {
        return $T(copysign_$R($R(1.0), x) * halfexp_$S(fabs_$R(x), cos_$R(y)), halfexp_$S(fabs_$R(x), sin_$R(y)));
    }
    return $T(opqa_$R(sinh_$R(x)) * opqb_$R(cos_$R(y)), opqa_$R(cosh_$R(x)) * opqb_$R(sin_$R(y)));
}",
            hyperbolic_deps(ty, r),
        ),
        "cosh" => (
            "fn cosh_$S(z: $T) -> $T {
    let x = z.x;
    let y = z.y;
    if y == $R(0.0) {
        if isnan_$R(x) { return $T(x, y); }
        return $T(cosh_$R(x), copysign_$R($R(0.0), x) * y);
    }
    if isinf_$R(y) || isnan_$R(y) {
        if isinf_$R(x) { return $T(inf_$R(), nan_$R()); }
        if x == $R(0.0) { return $T(nan_$R(), $R(0.0)); }
        return $T(nan_$R(), nan_$R());
    }
    if !isinf_$R(x) && !isnan_$R(x) && fabs_$R(x) > $R({EXP_BIG}) {
        return $T(halfexp_$S(fabs_$R(x), cos_$R(y)), copysign_$R($R(1.0), x) * halfexp_$S(fabs_$R(x), sin_$R(y)));
    }
    return $T(opqa_$R(cosh_$R(x)) * opqb_$R(cos_$R(y)), opqa_$R(sinh_$R(x)) * opqb_$R(sin_$R(y)));
}",
            hyperbolic_deps(ty, r),
        ),
        // Kahan's formula: no cancellation near the poles of tan.
        "tanh" => (
            "fn tanh_$S(z: $T) -> $T {
    let x = z.x;
    let y = z.y;
    if isnan_$R(x) {
        if y == $R(0.0) { return $T(x, y); }
        return $T(nan_$R(), nan_$R());
    }
    if isinf_$R(x) {
        var im = copysign_$R($R(0.0), y);
        // The sign of sin 2y from sin y cos y (glibc's, numpy's): 2y may overflow.
        if !isinf_$R(y) && !isnan_$R(y) { im = copysign_$R($R(0.0), sin_$R(y) * cos_$R(y)); }
        return $T(copysign_$R($R(1.0), x), im);
    }
    if isinf_$R(y) || isnan_$R(y) {
        if x == $R(0.0) { return $T(x, nan_$R()); }
        return $T(nan_$R(), nan_$R());
    }
    if fabs_$R(x) >= $R({TANH_BIG}) {
        let e = exp_$R($R(-2.0) * fabs_$R(x));
        return $T(copysign_$R($R(1.0), x), $R(4.0) * sin_$R(y) * cos_$R(y) * e);
    }
    let t = tan_$R(y);
    let beta = $R(1.0) + t * t;
    let s = sinh_$R(x);
    let rho = sqrt($R(1.0) + s * s);
    let denom = $R(1.0) + beta * s * s;
    return $T(beta * rho * s / denom, t / denom);
}",
            vec![
                ("isnan", r),
                ("isinf", r),
                ("nan", r),
                ("copysign", r),
                ("sin", r),
                ("cos", r),
                ("tan", r),
                ("exp", r),
                ("sinh", r),
            ],
        ),
        // sin and tan are sinh and tanh of the swapped parts (Annex G's signs); cos z = cosh(iz).
        "sin" => ("fn sin_$S(z: $T) -> $T { return sinh_$S(z.yx).yx; }", vec![("sinh", ty)]),
        "cos" => ("fn cos_$S(z: $T) -> $T { return cosh_$S($T(fneg_$R(z.y), z.x)); }", vec![("cosh", ty)]),
        "tan" => ("fn tan_$S(z: $T) -> $T { return tanh_$S(z.yx).yx; }", vec![("tanh", ty)]),
        // Annex G's casinh where a part is not finite (x, y are the parts; finite input: not used).
        "asinh_special" => (
            "fn asinh_special_$S(x: $R, y: $R) -> $T {
    let ax = fabs_$R(x);
    let ay = fabs_$R(y);
    var w: $T;
    if isinf_$R(ax) && isinf_$R(ay) {
        w = $T(inf_$R(), $R(0.78539816339744830962));
    } else if isinf_$R(ax) {
        w = $T(inf_$R(), select($R(0.0), nan_$R(), isnan_$R(ay)));
    } else if isinf_$R(ay) {
        w = $T(inf_$R(), select($R(1.57079632679489661923), nan_$R(), isnan_$R(ax)));
    } else if isnan_$R(ax) {
        w = $T(nan_$R(), select(nan_$R(), $R(0.0), y == $R(0.0)));
    } else {
        w = $T(nan_$R(), nan_$R());
    }
    var re = w.x;
    var im = w.y;
    if !isnan_$R(re) { re = copysign_$R(re, x); }
    if !isnan_$R(im) { im = copysign_$R(im, y); }
    return $T(re, im);
}",
            vec![("isinf", r), ("isnan", r), ("inf", r), ("nan", r), ("copysign", r)],
        ),
        // asinh z = log(2z) for huge |z|.
        "asinh_huge" => (
            "fn asinh_huge_$S(z: $T) -> $T {
    let w = log_$S($T(fabs_$R(z.x), fabs_$R(z.y)));
    return $T(copysign_$R(w.x + $R(0.69314718055994530942), z.x), copysign_$R(w.y, z.y));
}",
            vec![("log", ty), ("copysign", r)],
        ),
        // Kahan: atan2(x, Re(√(1-z)√(1+z))) + i asinh(Im(conj(√(1-z))√(1+z))); 1 - z is
        // (1 - x) - iy, so the signed zero of y picks the side of a cut.
        "asin" => (
            "fn asin_$S(z: $T) -> $T {
    let iz = $T(fneg_$R(z.y), z.x);
    if isinf_$R(z.x) || isnan_$R(z.x) || isinf_$R(z.y) || isnan_$R(z.y) {
        let w = asinh_special_$S(iz.x, iz.y);
        return $T(w.y, fneg_$R(w.x));
    }
    if fabs_$R(z.x) > $R({HUGE}) || fabs_$R(z.y) > $R({HUGE}) {
        let w = asinh_huge_$S(iz);
        return $T(w.y, fneg_$R(w.x));
    }
    // A tiny imaginary part (subnormal ones would lose digits below): the first-order form.
    if fabs_$R(z.x) < $R(1.0) && z.y != $R(0.0) && fabs_$R(z.y) < $R({TINY_IM}) {
        return $T(asin_$R(z.x), z.y / sqrt(opqc_$R(($R(1.0) - z.x) * ($R(1.0) + z.x))));
    }
    let s1 = sqrt_$S($T($R(1.0) - z.x, fneg_$R(z.y)));
    let s2 = sqrt_$S($T($R(1.0) + z.x, z.y));
    return $T(atan2_$R(z.x, mul_$S(s1, s2).x), asinh_$R(mul_$S($T(s1.x, fneg_$R(s1.y)), s2).y));
}",
            vec![
                ("asinh_special", ty),
                ("asinh_huge", ty),
                ("sqrt", ty),
                ("mul", ty),
                ("atan2", r),
                ("asinh", r),
                ("isinf", r),
                ("isnan", r),
                ("opqc", r),
                ("asin", r),
            ],
        ),
        // Kahan: 2 atan2(Re √(1-z), Re √(1+z)) + i asinh(Im(conj(√(1+z))√(1-z))); Annex G's table
        // where a part is not finite.
        "acos" => (
            "fn acos_$S(z: $T) -> $T {
    let x = z.x;
    let y = z.y;
    if isinf_$R(x) || isnan_$R(x) || isinf_$R(y) || isnan_$R(y) {
        var w: $T;
        if isnan_$R(x) {
            w = $T(nan_$R(), select(nan_$R(), fneg_$R(inf_$R()), isinf_$R(y)));
        } else if isnan_$R(y) {
            if isinf_$R(x) { w = $T(nan_$R(), fneg_$R(inf_$R())); }
            else if x == $R(0.0) { w = $T($R(1.57079632679489661923), nan_$R()); }
            else { w = $T(nan_$R(), nan_$R()); }
        } else if isinf_$R(y) {
            var re = $R(1.57079632679489661923);
            if isinf_$R(x) { re = select($R(2.35619449019234492885), $R(0.78539816339744830962), x > $R(0.0)); }
            w = $T(re, fneg_$R(inf_$R()));
        } else {
            w = $T(select($R(3.14159265358979323846), $R(0.0), x > $R(0.0)), fneg_$R(inf_$R()));
        }
        // cacos(conj z) = conj(cacos z), a NaN's sign bit included (glibc's, numpy's).
        if signbit_$R(y) { w.y = fneg_$R(w.y); }
        return w;
    }
    if fabs_$R(x) > $R({HUGE}) || fabs_$R(y) > $R({HUGE}) {
        let l = log_$S($T(x, fabs_$R(y)));
        return $T(atan2_$R(fabs_$R(y), x), fneg_$R(copysign_$R(l.x + $R(0.69314718055994530942), y)));
    }
    // A tiny imaginary part (subnormal ones would lose digits below): the first-order form.
    if fabs_$R(x) < $R(1.0) && y != $R(0.0) && fabs_$R(y) < $R({TINY_IM}) {
        return $T(acos_$R(x), fneg_$R(y / sqrt(opqc_$R(($R(1.0) - x) * ($R(1.0) + x)))));
    }
    let s1 = sqrt_$S($T($R(1.0) - x, fneg_$R(y)));
    let s2 = sqrt_$S($T($R(1.0) + x, y));
    var re = $R(2.0) * atan2_$R(s1.x, s2.x);
    // Right of the branch point, Re √(1-z) = |y| / 2√(x-1) loses a subnormal y: |y| / √(x² - 1).
    if x > $R(1.0) && y != $R(0.0) && fabs_$R(y) < $R({TINY_IM}) {
        re = fabs_$R(y) / sqrt(opqc_$R((x - $R(1.0)) * (x + $R(1.0))));
    }
    return $T(re, asinh_$R(mul_$S($T(s2.x, fneg_$R(s2.y)), s1).y));
}",
            vec![
                ("isinf", r),
                ("isnan", r),
                ("inf", r),
                ("nan", r),
                ("signbit", r),
                ("copysign", r),
                ("log", ty),
                ("sqrt", ty),
                ("mul", ty),
                ("atan2", r),
                ("asinh", r),
                ("opqc", r),
                ("acos", r),
            ],
        ),
        // atanh z for the parts' magnitudes, then their signs: log1p(4x / ((1-x)² + y²)) / 4 +
        // i atan2(2y, (1-x)(1+x) - y²) / 2; its special values and asymptotics.
        "atanh" => (
            "fn atanh_$S(z: $T) -> $T {
    let x = z.x;
    let y = z.y;
    let ax = fabs_$R(x);
    let ay = fabs_$R(y);
    if isnan_$R(ax) || isnan_$R(ay) {
        var w = $T(nan_$R(), nan_$R());
        if isinf_$R(ay) { w = $T($R(0.0), $R(1.57079632679489661923)); }
        else if isinf_$R(ax) || (ax == $R(0.0) && isnan_$R(ay)) { w = $T($R(0.0), nan_$R()); }
        var re = w.x;
        var im = w.y;
        if !isnan_$R(re) { re = copysign_$R(re, x); }
        if !isnan_$R(im) { im = copysign_$R(im, y); }
        return $T(re, im);
    }
    if isinf_$R(ax) || isinf_$R(ay) || ax > $R({HUGE}) || ay > $R({HUGE}) {
        let h = hypot_$R(select(ax, $R(0.0), isinf_$R(ay)), select(ay, $R(0.0), isinf_$R(ax)));
        var re = $R(0.0);
        // The first quotient opaque: a driver may rewrite `(a / h) / h` as `a / (h * h)`, which
        // overflows (the H200's gave arctan(1e200 i) a zero imaginary part).
        if !isinf_$R(ax) && !isinf_$R(ay) { re = opqc_$R(ax / h) / h; }
        return $T(copysign_$R(re, x), copysign_$R($R(1.57079632679489661923), y));
    }
    let d = ($R(1.0) - ax) * ($R(1.0) - ax) + ay * ay;
    var re: $R;
    if d > $R({D_SMALL}) {
        re = $R(0.25) * log1p_$R($R(4.0) * ax / d);
    } else {
        re = $R(0.25) * (log_$R($R(4.0) * ax) - $R(2.0) * logabs_$S($R(1.0) - ax, ay));
    }
    let im = $R(0.5) * atan2_$R($R(2.0) * ay, ($R(1.0) - ax) * ($R(1.0) + ax) - ay * ay);
    return $T(copysign_$R(re, x), copysign_$R(im, y));
}",
            vec![
                ("isnan", r),
                ("isinf", r),
                ("nan", r),
                ("copysign", r),
                ("hypot", r),
                ("log1p", r),
                ("log", r),
                ("logabs", ty),
                ("opqc", r),
                ("atan2", r),
            ],
        ),
        // atan z = -i atanh(i z).
        "atan" => (
            "fn atan_$S(z: $T) -> $T {
    let w = atanh_$S($T(fneg_$R(z.y), z.x));
    return $T(w.y, fneg_$R(w.x));
}",
            vec![("atanh", ty)],
        ),
        // numpy's npy_cpow: z ** 0 = 1; 0 ** w is 0 for Re w > 0, else NaN; integer exponents in
        // (-100, 100) by numpy's multiplications (unrolled); otherwise exp(w log z).
        "pow" => (
            "fn pow_$S(a: $T, b: $T) -> $T {
    if b.x == $R(0.0) && b.y == $R(0.0) { return $T($R(1.0), $R(0.0)); }
    if a.x == $R(0.0) && a.y == $R(0.0) {
        if b.x > $R(0.0) { return $T($R(0.0), $R(0.0)); }
        return $T(nan_$R(), nan_$R());
    }
    if b.y == $R(0.0) && ffloor_$R(b.x) == b.x && fabs_$R(b.x) < $R(100.0) {
        let n = i32(b.x);
        if n == 1 { return a; }
        if n == 2 { return mul_$S(a, a); }
        if n == 3 { return mul_$S(mul_$S(a, a), a); }
        let k = abs(n);
        var acc = $T($R(1.0), $R(0.0));
        var p = a;
        if (k & 1) != 0 { acc = mul_$S(acc, p); }
        if k >= 2 { p = mul_$S(p, p); if (k & 2) != 0 { acc = mul_$S(acc, p); } }
        if k >= 4 { p = mul_$S(p, p); if (k & 4) != 0 { acc = mul_$S(acc, p); } }
        if k >= 8 { p = mul_$S(p, p); if (k & 8) != 0 { acc = mul_$S(acc, p); } }
        if k >= 16 { p = mul_$S(p, p); if (k & 16) != 0 { acc = mul_$S(acc, p); } }
        if k >= 32 { p = mul_$S(p, p); if (k & 32) != 0 { acc = mul_$S(acc, p); } }
        if k >= 64 { p = mul_$S(p, p); if (k & 64) != 0 { acc = mul_$S(acc, p); } }
        if n < 0 { return div_$S($T($R(1.0), $R(0.0)), acc); }
        return acc;
    }
    return exp_$S(mulg_$S(b, log_$S(a)));
}",
            vec![("nan", r), ("mul", ty), ("mulg", ty), ("div", ty), ("exp", ty), ("log", ty)],
        ),
        // asinh is asin of the swapped parts, swapped back (numpy's casin is the converse).
        "asinh" => ("fn asinh_$S(z: $T) -> $T { return asin_$S(z.yx).yx; }", vec![("asin", ty)]),
        // cacosh from cacos, as `pytato_runtime::math::complex::acosh`.
        "acosh" => (
            "fn acosh_$S(z: $T) -> $T {
    let w = acos_$S(z);
    if isnan_$R(w.x) && isnan_$R(w.y) { return $T(w.y, w.x); }
    if isnan_$R(w.x) { return $T(fabs_$R(w.y), w.x); }
    if isnan_$R(w.y) { return $T(w.y, w.x); }
    return $T(fabs_$R(w.y), copysign_$R(w.x, z.y));
}",
            vec![("acos", ty), ("isnan", r), ("copysign", r)],
        ),
        "log2" => ("fn log2_$S(z: $T) -> $T { return log_$S(z) * $R(1.44269504088896340736); }", vec![("log", ty)]),
        // numpy's nc_log1p: log|1 + z| + i atan2(y, 1 + x).
        "log1p" => (
            "fn log1p_$S(z: $T) -> $T {
    let re = $R(1.0) + z.x;
    return $T(log_$R(hypotc_$R(re, z.y)), atan2_$R(z.y, re));
}",
            vec![("log", r), ("hypotc", r), ("atan2", r)],
        ),
        // numpy's nc_expm1: expm1(x) cos y - 2 sin²(y/2) + i exp(x) sin y.
        "expm1" => (
            "fn expm1_$S(z: $T) -> $T {
    let a = sin_$R(z.y * $R(0.5));
    return $T(expm1_$R(z.x) * cos_$R(z.y) - $R(2.0) * a * a, exp_$R(z.x) * sin_$R(z.y));
}",
            vec![("sin", r), ("cos", r), ("expm1", r), ("exp", r)],
        ),
        other => panic!("no complex WGSL helper {other} for {ty}"),
    }
}
