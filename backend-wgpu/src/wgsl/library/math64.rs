//! The float64 math library: musl's (fdlibm's) algorithms in WGSL, from operations that are exact
//! on every driver (see the parent module), with an exact `fmod` and Payne–Hanek reduction for
//! huge arguments of `sin`, `cos` and `tan`.

use super::Deps;

/// 2/π, bits 1 to 1280 after the binary point, 32 to a word (computed from π by Machin's formula
/// with integers; the first words agree with fdlibm's `ipio2`).
const TWO_OVER_PI: [u32; 40] = [
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561, 0xb7246e3a,
    0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41,
    0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f, 0xef2f118b, 0x5a0a6d1f, 0x6d367ecf,
    0x27cb09b7, 0x4f463f66, 0x9e5fea2d, 0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08,
    0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d,
];

/// π/2 as a 128-bit fixed-point number with one integer bit (most significant word first).
const PI_OVER_2: [u32; 4] = [0xc90fdaa2, 0x2168c234, 0xc4c6628b, 0x80dc1cd1];

/// The float64 function `name` and what it calls.
pub(super) fn template(name: &str) -> (String, Deps) {
    let t = "f64";
    match name {
        "rem_pio2_large" => (rem_pio2_large(), vec![("scalb", t)]),
        // x - n pi/2: the medium reduction where it is exact, Payne–Hanek beyond.
        "rem_pio2" => (
            "fn rem_pio2_f64(x: f64) -> RemPio2 {
    if fabs_f64(x) < 1647099.3291652855lf { return rem_pio2_medium_f64(x); }
    return rem_pio2_large_f64(x);
}"
            .to_string(),
            vec![("rem_pio2_medium", t), ("rem_pio2_large", t)],
        ),
        "log_dd" => (
            log_dd(),
            vec![("two_sum", t), ("quick_two_sum", t), ("two_prod", t), ("dd_mul", t), ("dd_add", t), ("opqc", t)],
        ),
        "pow_positive" => {
            (pow_positive(), vec![("log_dd", t), ("two_prod", t), ("quick_two_sum", t), ("inf", t), ("exp_dd", t)])
        }
        "exp_dd" => (
            exp_dd(),
            vec![
                ("two_sum", t),
                ("quick_two_sum", t),
                ("dd_mul", t),
                ("dd_add", t),
                ("pow2", t),
                ("rint", t),
                ("scalb", t),
            ],
        ),
        other => {
            let (text, deps) = fixed(other);
            (text.to_string(), deps)
        }
    }
}

/// `c[0] + v * (c[1] + v * (...))` as WGSL, the coefficients written so that they read back as
/// the same float64 values.
fn horner(v: &str, c: &[f64]) -> String {
    c.iter().rev().fold(String::new(), |inner, c| {
        if inner.is_empty() { format!("{c:e}lf") } else { format!("({c:e}lf + {v} * {inner})") }
    })
}

/// `log x` in double-double for finite `x > 0` (subnormals included), to about 2^-100 of it:
/// `k log 2 + log m` with `log m = 2 atanh(s)`, the series's first terms in double-double and the
/// rest in float64 (its relative weight, under 2^-12, keeps its rounding under 2^-64).
fn log_dd() -> String {
    // 2/(2j + 5), j = 0..11: atanh's series past s^3, to s^27 (s^28 / 29 < 2^-70 of s).
    let log_tail: Vec<f64> = (0..12).map(|j| 2.0 / (2 * j + 5) as f64).collect();
    format!(
        "fn log_dd_f64(x0: f64) -> vec2<f64> {{
    // log x = k log 2 + log m, m in [sqrt(1/2), sqrt(2)).
    var x = x0;
    var k = -1023;
    if x < 2.2250738585072014e-308lf {{ x = x * 18014398509481984.0lf; k = k - 54; }}
    let bits = bitcast<u64>(x);
    k = k + i32(bits >> 52u);
    var m = bitcast<f64>((bits & 0x000ffffffffffffflu) | 0x3ff0000000000000lu);
    if m > 1.4142135623730951lf {{ m = m * 0.5lf; k = k + 1; }}
    // log m = 2 atanh(s) = 2s + 2s^3/3 + s^5 (2/5 + 2s^2/7 + ...), s = f / (2 + f), f = m - 1
    // (exact); |s| < 0.172.
    let f = m - 1.0lf;
    let d = two_sum_f64(2.0lf, f);
    let sh = f / d.x;
    let e = two_prod_f64(sh, d.x);
    let s = quick_two_sum_f64(sh, ((opqc_f64(f - e.x) - e.y) - sh * d.y) / d.x);
    let s2 = dd_mul_f64(s, s);
    let s3 = dd_mul_f64(s2, s);
    let w = s2.x;
    let t3 = dd_mul_f64(s3, vec2<f64>(0.6666666666666666lf, 3.700743415417188e-17lf));
    let t5 = s3.x * w * {log_tail};
    let log_m = dd_add_f64(vec2<f64>(2.0lf * s.x, 2.0lf * s.y), quick_two_sum_f64(t3.x, t3.y + t5));
    let kf = f64(k);
    let kl = two_prod_f64(kf, 0.6931471805599453lf);
    return dd_add_f64(quick_two_sum_f64(kl.x, kl.y + kf * 2.3190468138462996e-17lf), log_m);
}}",
        log_tail = horner("w", &log_tail),
    )
}

/// `x^y` for finite `x > 0`, `x != 1`, and finite `y != 0`, rounded once from a value within about
/// 2^-60 of it, as glibc's `pow` (which numpy calls) is: powers whose value is a float64 come out
/// exactly (`3.0 ** 5 == 243`), where `exp(y log x)` would carry the rounding of `y log x`, grown
/// by `|y log x|`, into the result. No table: `log x` in double-double ([`log_dd`]) and
/// `y log x`, then [`exp_dd`] of that.
fn pow_positive() -> String {
    "fn pow_positive_f64(x0: f64, y: f64) -> f64 {
    let log_x = log_dd_f64(x0);
    // z = y log x; beyond these bounds the result is 0 or infinite.
    let p = y * log_x.x;
    if p > 710.0lf { return inf_f64(); }
    if p < -746.0lf { return 0.0lf; }
    let yl = two_prod_f64(y, log_x.x);
    return exp_dd_f64(quick_two_sum_f64(yl.x, yl.y + y * log_x.y));
}"
    .to_string()
}

/// `exp z` of a double-double `z` in [-746, 710], rounded once from a value within about 2^-60 of
/// it (subnormal results included): `2^n exp r`, each series's first terms in double-double and
/// the rest in float64 (its relative weight, under 2^-12, keeps its rounding under 2^-64). `exp`
/// itself is this of `(x, 0)`: correctly rounded but for ties closer than 2^-60, as glibc's is
/// (fdlibm's algorithm is a unit off in places: `exp(1)` is 2.7182818284590455).
fn exp_dd() -> String {
    // 1/(j + 4)!, j = 0..12: exp's series past r^3, to r^16 (|r|^17 / 17! < 2^-64).
    let exp_tail: Vec<f64> = (4..17).map(|j| 1.0 / (1..=j).map(f64::from).product::<f64>()).collect();
    format!(
        "fn exp_dd_f64(z: vec2<f64>) -> f64 {{
    // exp z = 2^n exp r, r = z - n log 2, |r| < 0.35; log 2 in two parts, the first of 32
    // significant bits, so that n log2_hi and z - n log2_hi are exact.
    let n = rint_f64(z.x * 1.4426950408889634lf);
    let r = two_sum_f64(z.x - n * 6.93147180369123816490e-01lf, z.y - n * 1.90821492927058770002e-10lf);
    // exp r = 1 + r + r^2/2 + r^3/6 + r^4 (1/4! + r/5! + ...).
    let rx = r.x;
    let t4 = rx * rx * rx * rx * {exp_tail};
    let r2 = dd_mul_f64(r, r);
    let r3 = dd_mul_f64(r2, r);
    let u3 = dd_mul_f64(r3, vec2<f64>(0.16666666666666666lf, 9.25185853854297e-18lf));
    var v = quick_two_sum_f64(u3.x, u3.y + t4);
    v = dd_add_f64(vec2<f64>(0.5lf * r2.x, 0.5lf * r2.y), v);
    v = dd_add_f64(r, v);
    v = dd_add_f64(vec2<f64>(1.0lf, 0.0lf), v);
    let ni = i32(n);
    if ni > -1022 {{ return scalb_f64(v.x, ni); }}
    // A subnormal result: one rounding, to a multiple of 2^-1074 (whose count is the bits).
    let scale = pow2_f64(ni + 1074);
    let mh = v.x * scale;
    var units = rint_f64(mh);
    let rest = (mh - units) + v.y * scale;
    if rest > 0.5lf {{ units = units + 1.0lf; }} else if rest < -0.5lf {{ units = units - 1.0lf; }}
    return bitcast<f64>(u64(units));
}}",
        exp_tail = horner("rx", &exp_tail),
    )
}

/// `(m * 2^k) mod d` pieces for [`fmod`]: `a * b mod d` for `a, b < d < 2^53`, as 11-bit chunks
/// of `b` (each partial product fits 64 bits).
const MULMOD: &str = "fn mulmod53(a: u64, b: u64, d: u64) -> u64 {
    var acc = 0lu;
    acc = (a * ((b >> 44u) & 0x7fflu)) % d;
    acc = (((acc << 11u) % d) + (a * ((b >> 33u) & 0x7fflu)) % d) % d;
    acc = (((acc << 11u) % d) + (a * ((b >> 22u) & 0x7fflu)) % d) % d;
    acc = (((acc << 11u) % d) + (a * ((b >> 11u) & 0x7fflu)) % d) % d;
    acc = (((acc << 11u) % d) + (a * (b & 0x7fflu)) % d) % d;
    return acc;
}
";

/// C's `fmod` for float64, exact, with integer arithmetic and no loop: `|x| = mx 2^ex`,
/// `|y| = my 2^ey`; the remainder is `(mx mod my) * 2^(ex-ey) mod my`, the power of two reduced by
/// square-and-multiply over the 11 bits of the exponent difference.
pub(super) fn fmod() -> String {
    let mut steps = String::new();
    for bit in (0..11).rev() {
        let _ = std::fmt::Write::write_fmt(
            &mut steps,
            format_args!(
                "    p = mulmod53(p, p, my);\n    if ((gap >> {bit}u) & 1u) == 1u {{ p = p << 1u; if p >= my {{ p = p - my; }} }}\n"
            ),
        );
    }
    format!(
        "{MULMOD}fn fmod_f64(x: f64, y: f64) -> f64 {{
    if isnan_f64(x) || isnan_f64(y) || isinf_f64(x) || y == 0.0lf {{ return nan_f64(); }}
    let ax = fabs_f64(x);
    let ay = fabs_f64(y);
    if isinf_f64(y) || ax < ay {{ return x; }}
    let bx = bitcast<u64>(ax);
    let by = bitcast<u64>(ay);
    var ex = u32(bx >> 52u);
    var ey = u32(by >> 52u);
    var mx = bx & 0xffffffffffffflu;
    var my = by & 0xffffffffffffflu;
    if ex == 0u {{ ex = 1u; }} else {{ mx = mx | 0x10000000000000lu; }}
    if ey == 0u {{ ey = 1u; }} else {{ my = my | 0x10000000000000lu; }}
    let gap = ex - ey;
    var r = mx % my;
    if gap <= 11u {{
        r = (r << gap) % my;
    }} else {{
        var p = 1lu;
{steps}        r = mulmod53(r, p, my);
    }}
    return copysign_f64(scalb_f64(f64(r), i32(ey) - 1075), x);
}}"
    )
}

/// Bits of 2/π taken at once by [`rem_pio2_large`] (8 limbs).
const WINDOW_LIMBS: usize = 8;
/// Fraction bits of `x * 2/π` kept (6 limbs): more than the 61 leading zeros of the worst case
/// for doubles plus 106 significant bits.
const FRACTION_LIMBS: usize = 6;
/// Zero words in front of 2/π, so the window may start before the binary point (`q < 2`).
const TABLE_PAD: usize = 2;

/// Payne–Hanek: `x - n pi/2` for huge finite `x`, exactly. `|x| = m 2^q` with `m` the 53-bit
/// mantissa; the bits of 2/π that matter mod 4 start at `i0 = q - 1` (bits before the point are
/// zero); 256 of them times `m` give `x * 2/π mod 4` with about 200 good fraction bits; 192 of
/// them (the fraction, in `[-1/2, 1/2)`) are normalized and times π/2 (128 bits) split into two
/// doubles. The hardest double (6381956970095103 2^797) has 61 zeros after the point. Integer
/// arithmetic throughout, unrolled.
///
/// No array is indexed by a run-time value: drivers that turn such an index into a chain of
/// selects over the whole array (lavapipe does) took seconds to compile each copy. The window is
/// cut from the table by a barrel shifter (one level of `select`s per bit of the word offset),
/// and with `i0 = q - 1` the units bit of the product has a fixed place.
fn rem_pio2_large() -> String {
    let (nw, nf) = (WINDOW_LIMBS, FRACTION_LIMBS);
    let mut s = String::new();
    let mut w = |line: String| {
        s.push_str("    ");
        s.push_str(&line);
        s.push('\n');
    };
    w("let bits = bitcast<u64>(x);".into());
    w("let negative = (bits >> 63u) != 0lu;".into());
    w("let m = (bits & 0xffffffffffffflu) | 0x10000000000000lu;".into());
    w("let q = i32((bits >> 52u) & 0x7fflu) - 1075;".into());
    // Bit i0 of 2/π (1 is the first after the point) is bit i0 + 32 TABLE_PAD - 1 of the padded
    // table, counted from its most significant end; |x| >= 2^20 makes that non-negative.
    w(format!("let start = u32(q - 2 + {});", 32 * TABLE_PAD));
    w("let tw = start / 32u;".into());
    w("let ts = start % 32u;".into());
    // a{i}: word tw + i of the padded table, by shifting the whole table left one power of two
    // of words at a time. `need` words survive each level; words past the end are zero.
    let mut table: Vec<String> = vec!["0u".to_string(); TABLE_PAD];
    table.extend(TWO_OVER_PI.iter().map(|w| format!("{w:#010x}u")));
    let max_word = (TABLE_PAD + TWO_OVER_PI.len()) as u32;
    let levels = u32::BITS - max_word.leading_zeros();
    let mut words = table;
    for level in (0..levels).rev() {
        let shift = 1usize << level;
        let need = nw + 1 + (1usize << level) - 1;
        let mut next = Vec::with_capacity(need);
        for i in 0..need.min(words.len()) {
            let moved = words.get(i + shift).cloned().unwrap_or_else(|| "0u".to_string());
            if words[i] == "0u" && moved == "0u" {
                next.push("0u".to_string());
                continue;
            }
            w(format!("let b{level}_{i} = select({}, {moved}, (tw & {shift}u) != 0u);", words[i]));
            next.push(format!("b{level}_{i}"));
        }
        words = next;
    }
    // The window, least significant limb first: limb k holds bits i0 + 32 (nw - 1 - k) .. + 31.
    for k in 0..nw {
        let word = nw - 1 - k;
        w(format!(
            "let w{k}: u32 = ({} << ts) | select(0u, {} >> (32u - ts), ts != 0u);",
            words[word],
            words[word + 1]
        ));
    }
    w("let m0: u32 = u32(m & 0xfffffffflu);".into());
    w("let m1: u32 = u32(m >> 32u);".into());
    // P = m * W.
    w(format!("var p = array<u32, {}>();", nw + 3));
    w("var c: u64 = 0lu;".into());
    w("var v: u64;".into());
    for (row, limb) in ["m0", "m1"].iter().enumerate() {
        w("c = 0lu;".into());
        for k in 0..nw {
            w(format!(
                "v = u64({limb}) * u64(w{k}) + u64(p[{}]) + c; p[{}] = u32(v & 0xfffffffflu); c = v >> 32u;",
                row + k,
                row + k
            ));
        }
        w(format!("p[{}] = u32(c);", row + nw));
    }
    // The units bit of P: the window's first bit has weight 2^(q - i0) = 2, so bit F = 32 nw - 2
    // of P has weight 1; n is the two bits from F, the fraction the nf limbs below F.
    let units = 32 * nw - 2;
    let bits_at = |pos: usize| {
        let (word, shift) = (pos / 32, pos % 32);
        if shift == 0 {
            format!("p[{word}]")
        } else {
            format!("((p[{word}] >> {shift}u) | (p[{}] << {}u))", word + 1, 32 - shift)
        }
    };
    w(format!("var n: i32 = i32({} & 3u);", bits_at(units)));
    for k in 0..nf {
        w(format!("var f{k}: u32 = {};", bits_at(units - 32 * (nf - k))));
    }
    // A fraction of 1/2 or more: one more quarter turn, and the (negative) rest.
    let top = nf - 1;
    w(format!("let flip = (f{top} >> 31u) == 1u;"));
    w("if flip {".into());
    w("    n = n + 1;".into());
    w("    var carry: u64 = 1lu;".into());
    for k in 0..nf {
        w(format!("    carry = u64(~f{k}) + carry; f{k} = u32(carry & 0xfffffffflu); carry = carry >> 32u;"));
    }
    w("}".into());
    // Normalize the fraction (never zero: π is irrational): whole words while the top one is
    // zero (at most 61 leading zero bits, two words allowed for), then the bits.
    w("var lz: i32 = 0;".into());
    for _ in 0..2 {
        w(format!("if f{top} == 0u {{"));
        for k in (1..nf).rev() {
            w(format!("    f{k} = f{};", k - 1));
        }
        w("    f0 = 0u;".into());
        w("    lz = lz + 32;".into());
        w("}".into());
    }
    w(format!("let sh = countLeadingZeros(f{top});"));
    w("if sh != 0u {".into());
    for k in (0..nf).rev() {
        if k == 0 {
            w("    f0 = f0 << sh;".into());
        } else {
            w(format!("    f{k} = (f{k} << sh) | (f{} >> (32u - sh));", k - 1));
        }
    }
    w("}".into());
    w("lz = lz + i32(sh);".into());
    // R = f * π/2: the top bit of f and of π/2 (as an integer) set, so R has 32 nr or 32 nr - 1 bits.
    let c_limbs: Vec<String> = PI_OVER_2.iter().rev().map(|w| format!("{w:#010x}u")).collect();
    let nr = nf + PI_OVER_2.len();
    w(format!("var r = array<u32, {nr}>();"));
    for i in 0..nf {
        w("c = 0lu;".into());
        for (j, cj) in c_limbs.iter().enumerate() {
            w(format!(
                "v = u64(f{i}) * u64({cj}) + u64(r[{}]) + c; r[{}] = u32(v & 0xfffffffflu); c = v >> 32u;",
                i + j,
                i + j
            ));
        }
        w(format!("r[{}] = u32(c);", i + c_limbs.len()));
    }
    // The top 128 bits of R, shifted left once where its leading bit is one place down; then
    // the 53 + 53 bits of the two doubles.
    let (r3, r2, r1, r0, below) = (nr - 1, nr - 2, nr - 3, nr - 4, nr - 5);
    w(format!("let one = (r[{r3}] >> 31u) == 0u;"));
    w(format!("let top = (u64(r[{r3}]) << 32u) | u64(r[{r2}]);"));
    w(format!("let mid = (u64(r[{r1}]) << 32u) | u64(r[{r0}]);"));
    w("let hi_bits = select(top, (top << 1u) | (mid >> 63u), one);".into());
    w(format!("let lo_bits = select(mid, (mid << 1u) | u64(r[{below}] >> 31u), one);"));
    w("let hi: u64 = hi_bits >> 11u;".into());
    w("let lo: u64 = ((hi_bits & 0x7fflu) << 42u) | (lo_bits >> 22u);".into());
    // R's value is R 2^-(32 nf + 127) 2^-lz (the fraction was shifted lz places), and one place
    // less where it was shifted once more.
    let scale = 32 * nf + 127;
    let top_bit = 32 * nr - 1;
    w(format!("let e = lz + select(0, 1, one) + {scale};"));
    w(format!("var y0 = scalb_f64(f64(hi), {} - e);", top_bit - 52));
    w(format!("var y1 = scalb_f64(f64(lo), {} - e);", top_bit - 105));
    w("if flip != negative { y0 = -y0; y1 = -y1; }".into());
    w("if negative { n = -n; }".into());
    w("return RemPio2(y0, y1, n);".into());
    format!("fn rem_pio2_large_f64(x: f64) -> RemPio2 {{\n{s}}}")
}

/// The float64 functions written out in full (musl's algorithms).
fn fixed(name: &str) -> (&'static str, Deps) {
    let t = "f64";
    match name {
        // Double-double arithmetic for `pow_positive`: values as `hi + lo`, `|lo| <= ulp(hi) / 2`.
        // Every intermediate of an error term is opaque (`opqc`), so that no driver's algebra
        // cancels it (`(a + b) - a = b`, `s - (s - a) = a`) or reorders its sums (on the H200,
        // with only the rounded sum opaque, `3.0 ** 4` came out 4 ulp from 81); products split
        // their operands by bits (26 + 27), so that a driver's fused multiply-add of the exact
        // partial products changes nothing.
        // a + b = hi + lo exactly (Knuth's two-sum).
        "two_sum" => (
            "fn two_sum_f64(a: f64, b: f64) -> vec2<f64> {
    let s = opqc_f64(a + b);
    let bb = opqc_f64(s - a);
    return vec2<f64>(s, opqc_f64(a - opqc_f64(s - bb)) + opqc_f64(b - bb));
}",
            vec![("opqc", t)],
        ),
        // a + b rounded once to float32 (a float64 holding it): the float64 sum rounded to odd
        // (its last bit set where it is inexact, toward the exact sum), then to float32, which
        // is the exact sum's rounding, 53 bits being at least 24 + 2 (Boldo and Melquiond); a
        // plain float64 sum rounded again may land on the other side of a float32 tie.
        "r32sum" => (
            "fn r32sum_f64(a: f64, b: f64) -> f64 {
    let s = two_sum_f64(a, b);
    if !isfinite_f64(s.x) || s.y == 0.0lf { return r32_f64(s.x); }
    var bits = bitcast<u64>(s.x);
    if (bits & 1lu) == 0lu {
        bits = select(bits - 1lu, bits + 1lu, (s.y > 0.0lf) == (s.x > 0.0lf));
    }
    return r32_f64(bitcast<f64>(bits));
}",
            vec![("two_sum", t), ("isfinite", t), ("r32", t)],
        ),
        // a + b = hi + lo exactly where |a| >= |b| or a = 0 (Dekker's fast two-sum).
        "quick_two_sum" => (
            "fn quick_two_sum_f64(a: f64, b: f64) -> vec2<f64> {
    let s = opqc_f64(a + b);
    return vec2<f64>(s, b - opqc_f64(s - a));
}",
            vec![("opqc", t)],
        ),
        // a * b = hi + lo exactly where no partial product underflows (Dekker's product): each
        // operand split by bits into a high half rounded to 26 bits and the rest, at most 26
        // bits with its sign, so that every partial product is exact. (Cut by truncation, the
        // rest had 27 bits and its square was rounded: `a * b - b * a` in a fused complex
        // product, which is that error term alone, came out a few units off.) Within 2^-26 of
        // the largest float64 the rounded half would overflow: truncated there.
        "two_prod" => (
            "fn two_prod_f64(a: f64, b: f64) -> vec2<f64> {
    let p = opqc_f64(a * b);
    let ah = split_high_f64(a);
    let bh = split_high_f64(b);
    let al = a - ah;
    let bl = b - bh;
    let e1 = opqc_f64(ah * bh - p);
    let e2 = opqc_f64(e1 + ah * bl);
    let e3 = opqc_f64(e2 + al * bh);
    return vec2<f64>(p, e3 + al * bl);
}
fn split_high_f64(a: f64) -> f64 {
    let u = bitcast<u64>(a);
    let h = (u + 0x0000000004000000lu) & 0xfffffffff8000000lu;
    return bitcast<f64>(select(h, u & 0xfffffffff8000000lu, ((h >> 52u) & 0x7fflu) == 0x7fflu));
}",
            vec![("opqc", t)],
        ),
        // a * b + c rounded once, from the exact product (`two_prod`) and the exact sum of its
        // high part and c (`two_sum`): WGSL's `fma` is not promised to fuse (Vulkan lets a driver
        // split it). Where a part is not finite, IEEE's fused results: c where c is infinite and
        // a, b finite (the exact product is finite), else a * b + c. Where only a * b overflows,
        // the sum may not (`fma(-2.7, 1e308, 1.4e308)`, a part of numpy's complex product): the
        // same 2^-8 as large (exact: |a| >= 1 there, and a c below 2^-1014 cannot bring a sum
        // of |a b| >= 2^1024 into range), then scaled back, which overflows where the sum does.
        // Near the subnormal range (a product, an addend or a result below 2^-960), where the
        // error term of `two_prod` underflows, the exact integer fma (`fma_exact`).
        "fma" => (
            "fn fma_f64(a_in: f64, b: f64, c_in: f64) -> f64 {
    var a = a_in;
    var c = c_in;
    var scale = 1.0lf;
    var ab = opqc_f64(a * b);
    if !isfinite_f64(ab) || !isfinite_f64(c) {
        if isfinite_f64(a) && isfinite_f64(b) && isinf_f64(c) { return c; }
        if !isfinite_f64(a) || !isfinite_f64(b) || !isfinite_f64(c) { return ab + c; }
        a = a * 0.00390625lf;
        c = c * 0.00390625lf;
        scale = 256.0lf;
        ab = opqc_f64(a * b);
    }
    if a == 0.0lf || b == 0.0lf { return ab + c; }
    let tiny = bitcast<f64>(0x03f0000000000000lu);
    if fabs_f64(ab) < tiny || (c != 0.0lf && fabs_f64(c) < tiny) { return fma_exact_f64(a, b, c) * scale; }
    let p = two_prod_f64(a, b);
    let s = two_sum_f64(p.x, c);
    if !isfinite_f64(s.x) { return s.x; }
    // Error terms of zero leave the high part's signed zero (-0 * 0 + -0 is -0).
    let low = opqc_f64(s.y + p.y);
    if low == 0.0lf { return s.x * scale; }
    let r = s.x + low;
    if fabs_f64(r) < tiny { return fma_exact_f64(a, b, c) * scale; }
    return r * scale;
}",
            vec![("two_prod", t), ("two_sum", t), ("opqc", t), ("isinf", t), ("isfinite", t), ("fabs", t), ("fma_exact", t)],
        ),
        // a * b + c for finite a, b, c (a, b nonzero) rounded once, in integers: the 106-bit
        // product of the significands and c's significand placed in 128 bits with their top bits
        // at bit 125, the smaller shifted to the larger's exponent (bits shifted out kept as a
        // sticky bit), added or subtracted, and rounded to nearest even at 53 bits or at the
        // subnormal quantum 2^-1074. An exact zero sum is +0, or -0 where both terms are negative.
        "fma_exact" => (
            "fn fma_exact_f64(a: f64, b: f64, c: f64) -> f64 {
    let ua = bitcast<u64>(a);
    let ub = bitcast<u64>(b);
    let uc = bitcast<u64>(c);
    let sp = (ua ^ ub) >> 63u;
    let sc = uc >> 63u;
    let ma = sig_f64(ua);
    let mb = sig_f64(ub);
    let mc = sig_f64(uc);
    // The product of the significands in 128 bits (hi, lo), from 32-bit halves.
    let a0 = ma & 0xfffffffflu;
    let a1 = ma >> 32u;
    let b0 = mb & 0xfffffffflu;
    let b1 = mb >> 32u;
    let p00 = a0 * b0;
    let mid = a0 * b1 + a1 * b0;
    var plo = p00 + (mid << 32u);
    var phi = a1 * b1 + (mid >> 32u) + select(0lu, 1lu, plo < p00);
    // Top bits at 125; exponents of bit 0.
    let ps = 125 - msb128_f64(phi, plo);
    var p = shl128_f64(phi, plo, u32(ps));
    var ep = sexp_f64(ua) + sexp_f64(ub) - ps;
    var q = vec2<u64>(0lu, 0lu);
    var eq = ep;
    if mc != 0lu {
        let cs = 125 - msb128_f64(0lu, mc);
        q = shl128_f64(0lu, mc, u32(cs));
        eq = sexp_f64(uc) - cs;
    }
    // Align to the larger exponent.
    var e = ep;
    if eq > ep {
        p = shr128_sticky_f64(p, eq - ep);
        e = eq;
    } else {
        q = shr128_sticky_f64(q, ep - eq);
    }
    var r: vec2<u64>;
    var sign = sp;
    if mc == 0lu || sp == sc {
        let lo = p.y + q.y;
        r = vec2<u64>(p.x + q.x + select(0lu, 1lu, lo < p.y), lo);
    } else {
        var big = p;
        var small = q;
        if q.x > p.x || (q.x == p.x && q.y > p.y) {
            big = q;
            small = p;
            sign = sc;
        }
        r = vec2<u64>(big.x - small.x - select(0lu, 1lu, big.y < small.y), big.y - small.y);
    }
    if r.x == 0lu && r.y == 0lu {
        return bitcast<f64>((sp & sc) << 63u);
    }
    let m = msb128_f64(r.x, r.y);
    // Bits dropped: to 53 significant bits, or to the quantum 2^-1074.
    let drop = max(m - 52, -1074 - e);
    var units: u64;
    if drop <= 0 {
        units = r.y << u32(-drop);
    } else if drop >= 128 {
        units = 0lu;
    } else {
        let kept = shr128_f64(r, u32(drop));
        let rest = shl128_f64(r.x, r.y, u32(128 - drop));
        let half = 0x8000000000000000lu;
        units = kept.y;
        if rest.x > half || (rest.x == half && rest.y != 0lu) || (rest.x == half && rest.y == 0lu && (units & 1lu) == 1lu) {
            units = units + 1lu;
        }
    }
    var unit = e + max(drop, 0);
    if units == 0x0020000000000000lu { units = units >> 1u; unit = unit + 1; }
    let s = sign << 63u;
    if units < 0x0010000000000000lu { return bitcast<f64>(s | units); }
    let biased = unit + 1075;
    if biased >= 2047 { return bitcast<f64>(s | 0x7ff0000000000000lu); }
    return bitcast<f64>(s | (u64(biased) << 52u) | (units & 0x000ffffffffffffflu));
}
// The significand of finite bits `u` as an integer (the hidden bit of normal numbers set).
fn sig_f64(u: u64) -> u64 {
    let m = u & 0x000ffffffffffffflu;
    return select(m, m | 0x0010000000000000lu, ((u >> 52u) & 0x7fflu) != 0lu);
}
// The exponent of bit 0 of `sig_f64(u)`: the value is sig 2^sexp.
fn sexp_f64(u: u64) -> i32 {
    let b = i32((u >> 52u) & 0x7fflu);
    return select(b - 1075, -1074, b == 0);
}
// The position of the highest set bit of the nonzero 128-bit (hi, lo).
fn msb128_f64(hi: u64, lo: u64) -> i32 {
    if hi != 0lu { return 64 + msb64_f64(hi); }
    return msb64_f64(lo);
}
fn msb64_f64(x: u64) -> i32 {
    let h = u32(x >> 32u);
    if h != 0u { return 63 - i32(countLeadingZeros(h)); }
    return 31 - i32(countLeadingZeros(u32(x & 0xfffffffflu)));
}
// (hi, lo) shifted left by s in [0, 127].
fn shl128_f64(hi: u64, lo: u64, s: u32) -> vec2<u64> {
    if s == 0u { return vec2<u64>(hi, lo); }
    if s >= 64u { return vec2<u64>(lo << (s - 64u), 0lu); }
    return vec2<u64>((hi << s) | (lo >> (64u - s)), lo << s);
}
// v shifted right by s in [0, 127].
fn shr128_f64(v: vec2<u64>, s: u32) -> vec2<u64> {
    if s == 0u { return v; }
    if s >= 64u { return vec2<u64>(0lu, v.x >> (s - 64u)); }
    return vec2<u64>(v.x >> s, (v.y >> s) | (v.x << (64u - s)));
}
// v shifted right by s >= 0, any bit shifted out or-ed into bit 0.
fn shr128_sticky_f64(v: vec2<u64>, s: i32) -> vec2<u64> {
    if s <= 0 { return v; }
    if s >= 128 { return vec2<u64>(0lu, select(0lu, 1lu, v.x != 0lu || v.y != 0lu)); }
    let kept = shr128_f64(v, u32(s));
    let back = shl128_f64(kept.x, kept.y, u32(s));
    return vec2<u64>(kept.x, kept.y | select(0lu, 1lu, back.x != v.x || back.y != v.y));
}",
            vec![],
        ),
        "dd_mul" => (
            "fn dd_mul_f64(a: vec2<f64>, b: vec2<f64>) -> vec2<f64> {
    let p = two_prod_f64(a.x, b.x);
    return quick_two_sum_f64(p.x, p.y + (a.x * b.y + a.y * b.x));
}",
            vec![("two_prod", t), ("quick_two_sum", t)],
        ),
        // Without cancellation (the sums of `pow_positive`), to about 2^-104.
        "dd_add" => (
            "fn dd_add_f64(a: vec2<f64>, b: vec2<f64>) -> vec2<f64> {
    let s = two_sum_f64(a.x, b.x);
    return quick_two_sum_f64(s.x, s.y + (a.y + b.y));
}",
            vec![("two_sum", t), ("quick_two_sum", t)],
        ),
        // 2^k for k in [-1022, 1023].
        "pow2" => ("fn pow2_f64(k: i32) -> f64 { return bitcast<f64>(u64(k + 1023) << 52u); }", vec![]),
        // Correctly rounded but for ties closer than 2^-60 (see `exp_dd`).
        "exp" => (
            "fn exp_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    if x > 709.782712893383973096 { return inf_f64(); }
    if x < -745.13321910194110842 { return 0.0lf; }
    return exp_dd_f64(vec2<f64>(x, 0.0lf));
}",
            vec![("isnan", t), ("inf", t), ("exp_dd", t)],
        ),
        // log x of its double-double value, rounded once: correctly rounded but for ties closer
        // than 2^-100 (`log_dd`).
        "log" => (
            "fn log_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    if x < 0.0lf { return nan_f64(); }
    if x == 0.0lf { return -inf_f64(); }
    if isinf_f64(x) { return x; }
    return log_dd_f64(x).x;
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("inf", t), ("log_dd", t)],
        ),
        // glibc's log10 (fdlibm's formula over log, which numpy calls on Linux): x = 2^y m with
        // m in [1/2, 2), log10 x = y log10(2) + log(m) / ln 10, the products rounded apart (opaque:
        // a fused form rounds otherwise). With a correctly rounded log it gives glibc's bits, and
        // it is exact at powers of ten (`log(1000) / ln 10` is 2.9999999999999996).
        "log10" => (
            "fn log10_f64(x0: f64) -> f64 {
    if isnan_f64(x0) || x0 < 0.0lf { return nan_f64(); }
    if x0 == 0.0lf { return -inf_f64(); }
    if isinf_f64(x0) { return x0; }
    var x = x0;
    var k = 0;
    if x < 2.2250738585072014e-308lf { k = -54; x = x * 18014398509481984.0lf; }
    let bits = bitcast<u64>(x);
    let hx = i32(bits >> 32u);
    k = k + (hx >> 20u) - 1023;
    let i = select(0, 1, k < 0);
    let m = bitcast<f64>((u64(u32((hx & 0x000fffff) | ((0x3ff - i) << 20u))) << 32u) | (bits & 0xfffffffflu));
    let y = f64(k + i);
    let z = opqc_f64(y * 3.69423907715893078616e-13) + opqc_f64(4.34294481903251816668e-01 * log_f64(m));
    return opqc_f64(z) + opqc_f64(y * 3.01029995663611771306e-01);
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("inf", t), ("log", t), ("opqc", t)],
        ),
        "rem_pio2_medium" => (
            "struct RemPio2 { y0: f64, y1: f64, n: i32 }
fn rem_pio2_medium_f64(x: f64) -> RemPio2 {
    let fn_ = rint_f64(x * 6.36619772367581382433e-01);
    var r = opqc_f64(x - fn_ * 1.57079632673412561417e+00);
    var w = fn_ * 6.07710050650619224932e-11;
    var y0 = opqc_f64(r - w);
    let ex = i32((bitcast<u64>(x) >> 52u) & 0x7fflu);
    var ey = i32((bitcast<u64>(y0) >> 52u) & 0x7fflu);
    if ex - ey > 16 {
        var t = r;
        w = fn_ * 6.07710050630396597660e-11;
        r = opqc_f64(t - w);
        w = fn_ * 2.02226624879595063154e-21 - (opqc_f64(t - r) - w);
        y0 = opqc_f64(r - w);
        ey = i32((bitcast<u64>(y0) >> 52u) & 0x7fflu);
        if ex - ey > 49 {
            t = r;
            w = fn_ * 2.02226624871116645580e-21;
            r = opqc_f64(t - w);
            w = fn_ * 8.47842766036889956997e-32 - (opqc_f64(t - r) - w);
            y0 = opqc_f64(r - w);
        }
    }
    return RemPio2(y0, opqc_f64(r - y0) - w, i32(fn_));
}",
            vec![("opqc", t)],
        ),
        "ksin" => (
            "fn ksin_f64(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = 8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * 2.75573137070700676789e-06)
        + z * w * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10);
    let v = z * x;
    let t = opqc_f64(opqc_f64(z * (0.5lf * y - v * r)) - y);
    return x - opqc_f64(t - v * -1.66666666666666324348e-01);
}",
            vec![("opqc", t)],
        ),
        "kcos" => (
            "fn kcos_f64(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * 2.48015872894767294178e-05))
        + w * w * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11));
    let hz = 0.5lf * z;
    let ww = opqc_f64(1.0lf - hz);
    let error = opqc_f64(opqc_f64(1.0lf - ww) - hz);
    return ww + opqc_f64(error + opqc_f64(opqc_f64(z * r) - x * y));
}",
            vec![("opqc", t)],
        ),
        "sin" => (
            "fn sin_f64(x: f64) -> f64 {
    if isnan_f64(x) || isinf_f64(x) { return nan_f64(); }
    if fabs_f64(x) < 7.450580596923828125e-9 { return x; }
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
        // fdlibm's __kernel_tan: tan(x + y) for |x + y| <= pi/4, or -1/tan(x + y) (iy = -1); near
        // pi/4 through tan(pi/4 - x), and -1/w with w split so that the quotient is exact to an ulp.
        "ktan" => (
            "fn ktan_f64(x0: f64, y0: f64, iy: i32) -> f64 {
    var x = x0;
    var y = y0;
    let hx = bitcast<i32>(u32(bitcast<u64>(x0) >> 32u));
    let big = (hx & 0x7fffffff) >= 0x3fe59428;
    if big {
        if hx < 0 { x = -x; y = -y; }
        let z = opqc_f64(7.85398163397448278999e-01 - x);
        let w = opqc_f64(3.06161699786838301793e-17 - y);
        x = opqc_f64(z + w);
        y = 0.0lf;
    }
    let z = x * x;
    let w = z * z;
    let r0 = 1.33333333333201242699e-01 + w * (2.18694882948595424599e-02 + w * (3.59207910759131235356e-03
        + w * (5.88041240820264096874e-04 + w * (7.81794442939557092300e-05 + w * -1.85586374855275456654e-05))));
    let v0 = z * (5.39682539762260521377e-02 + w * (8.86323982359930005737e-03 + w * (1.45620945432529025516e-03
        + w * (2.46463134818469906812e-04 + w * (7.14072491382608190305e-05 + w * 2.59073051863633712884e-05)))));
    let s = z * x;
    var r = opqc_f64(y + z * opqc_f64(opqc_f64(s * (r0 + v0)) + y));
    r = opqc_f64(r + 3.33333333333334091986e-01 * s);
    let sum = opqc_f64(x + r);
    if big {
        let v = f64(iy);
        let sign = f64(1 - ((hx >> 30u) & 2));
        return sign * (v - 2.0lf * opqc_f64(x - opqc_f64(opqc_f64(sum * sum / (sum + v)) - r)));
    }
    if iy == 1 { return sum; }
    let high = bitcast<f64>(bitcast<u64>(sum) & 0xffffffff00000000lu);
    let low = opqc_f64(r - opqc_f64(high - x));
    let a = -1.0lf / sum;
    let t = bitcast<f64>(bitcast<u64>(a) & 0xffffffff00000000lu);
    let e = opqc_f64(1.0lf + t * high);
    return t + a * opqc_f64(e + t * low);
}",
            vec![("opqc", t)],
        ),
        "tan" => (
            "fn tan_f64(x: f64) -> f64 {
    if isnan_f64(x) || isinf_f64(x) { return nan_f64(); }
    if fabs_f64(x) < 7.450580596923828125e-9 { return x; }
    let r = rem_pio2_f64(x);
    return ktan_f64(r.y0, r.y1, 1 - ((r.n & 1) << 1u));
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("rem_pio2", t), ("ktan", t)],
        ),
        "atan" => (
            "fn atan_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    var ax = fabs_f64(x);
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
    let r = hi[id] - opqc_f64(opqc_f64(opqc_f64(ax * (s1 + s2)) - lo[id]) - ax);
    return copysign_f64(r, x);
}",
            vec![("isnan", t), ("copysign", t), ("opqc", t)],
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
    let z = atan_f64(fabs_f64(y / x));
    if signbit_f64(x) { return copysign_f64(pi - opqc_f64(z - 1.2246467991473532e-16), y); }
    return copysign_f64(z, y);
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("signbit", t), ("copysign", t), ("atan", t), ("opqc", t)],
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
    let ax = fabs_f64(x);
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
        y = pio2_hi - opqc_f64(opqc_f64(2.0lf * opqc_f64(s + s * r)) - pio2_lo);
    } else {
        let f = high_word_f64(s);
        let c = opqc_f64(z - f * f) / (s + f);
        let p = opqc_f64(opqc_f64(2.0lf * s * r) - opqc_f64(pio2_lo - 2.0lf * c));
        let q = opqc_f64(0.5lf * pio2_hi - 2.0lf * f);
        y = 0.5lf * pio2_hi - opqc_f64(p - q);
    }
    return copysign_f64(y, x);
}",
            vec![("isnan", t), ("nan", t), ("asin_r", t), ("high_word", t), ("copysign", t), ("opqc", t)],
        ),
        "acos" => (
            "fn acos_f64(x: f64) -> f64 {
    let pio2_hi: f64 = 1.57079632679489655800e+00;
    let pio2_lo: f64 = 6.12323399573676603587e-17;
    let ax = fabs_f64(x);
    if isnan_f64(x) || ax > 1.0lf { return nan_f64(); }
    if x == 1.0lf { return 0.0lf; }
    if x == -1.0lf { return 2.0lf * pio2_hi; }
    if ax < 0.5lf {
        if ax < 6.938893903907228e-18 { return pio2_hi; }
        return pio2_hi - opqc_f64(x - opqc_f64(pio2_lo - x * asin_r_f64(x * x)));
    }
    if x < 0.0lf {
        let z = (1.0lf + x) * 0.5lf;
        let s = sqrt(z);
        let w = opqc_f64(opqc_f64(asin_r_f64(z) * s) - pio2_lo);
        return 2.0lf * (pio2_hi - opqc_f64(s + w));
    }
    let z = (1.0lf - x) * 0.5lf;
    let s = sqrt(z);
    let df = high_word_f64(s);
    let c = opqc_f64(z - df * df) / (s + df);
    let w = opqc_f64(opqc_f64(asin_r_f64(z) * s) + c);
    return 2.0lf * (df + w);
}",
            vec![("isnan", t), ("nan", t), ("asin_r", t), ("high_word", t), ("opqc", t)],
        ),
        // fdlibm's sinh and cosh: through expm1 where e^x is near 1, e^|x| / 2 beyond, and
        // (e^(|x|/2) / 2) e^(|x|/2) where e^|x| itself would overflow first.
        "sinh" => (
            "fn sinh_f64(x: f64) -> f64 {
    if isnan_f64(x) || isinf_f64(x) { return x; }
    let ax = fabs_f64(x);
    let hx = u32(bitcast<u64>(ax) >> 32u);
    let h = copysign_f64(0.5lf, x);
    if hx < 0x40360000u {
        if hx < 0x3e300000u { return x; }
        let t = expm1_f64(ax);
        if hx < 0x3ff00000u { return h * opqc_f64(2.0lf * t - opqc_f64(t * t / (t + 1.0lf))); }
        return h * opqc_f64(t + t / (t + 1.0lf));
    }
    if hx < 0x40862e42u { return h * exp_f64(ax); }
    let w = exp_f64(0.5lf * ax);
    return opqc_f64(h * w) * w;
}",
            vec![("isnan", t), ("isinf", t), ("fabs", t), ("copysign", t), ("expm1", t), ("exp", t), ("opqc", t)],
        ),
        "cosh" => (
            "fn cosh_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    let ax = fabs_f64(x);
    let hx = u32(bitcast<u64>(ax) >> 32u);
    if hx < 0x3fd62e43u {
        let t = expm1_f64(ax);
        let w = 1.0lf + t;
        if hx < 0x3c800000u { return w; }
        return 1.0lf + opqc_f64(t * t) / (w + w);
    }
    if hx < 0x40360000u {
        let t = exp_f64(ax);
        return opqc_f64(0.5lf * t) + 0.5lf / t;
    }
    if hx < 0x40862e42u { return 0.5lf * exp_f64(ax); }
    let w = exp_f64(0.5lf * ax);
    return opqc_f64(0.5lf * w) * w;
}",
            vec![("isnan", t), ("fabs", t), ("expm1", t), ("exp", t), ("opqc", t)],
        ),
        "tanh" => (
            "fn tanh_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    let ax = fabs_f64(x);
    if ax >= 22.0lf { return copysign_f64(1.0lf, x); }
    if ax < 3.725290298461914e-9 { return x; }
    var z: f64;
    if ax >= 1.0lf {
        let t = expm1_f64(2.0lf * ax);
        z = 1.0lf - 2.0lf / (t + 2.0lf);
    } else {
        let t = expm1_f64(-2.0lf * ax);
        z = -t / (t + 2.0lf);
    }
    return copysign_f64(z, x);
}",
            vec![("isnan", t), ("expm1", t), ("copysign", t)],
        ),
        // fdlibm's log1p: 1 + x as 2^k (1 + f) with the rounding of 1 + x carried in c, log(1 + f)
        // by fdlibm's log kernel. Every step of the error terms is opaque (see `two_sum`).
        "log1p" => (
            "fn log1p_f64(x: f64) -> f64 {
    if isnan_f64(x) { return x; }
    let ln2_hi: f64 = 6.93147180369123816490e-01;
    let ln2_lo: f64 = 1.90821492927058770002e-10;
    let hx = bitcast<i32>(u32(bitcast<u64>(x) >> 32u));
    let ax = hx & 0x7fffffff;
    var k = 1;
    var f: f64 = 0.0lf;
    var hu = 0u;
    var c: f64 = 0.0lf;
    if hx < 0x3fda827a {
        if ax >= 0x3ff00000 {
            if x == -1.0lf { return -inf_f64(); }
            return nan_f64();
        }
        if ax < 0x3e200000 {
            if ax < 0x3c900000 { return x; }
            return x - opqc_f64(x * x * 0.5lf);
        }
        if hx > 0 || hx <= bitcast<i32>(0xbfd2bec4u) { k = 0; f = x; hu = 1u; }
    }
    if hx >= 0x7ff00000 { return x; }
    if k != 0 {
        var u: f64;
        if hx < 0x43400000 {
            u = opqc_f64(1.0lf + x);
            hu = u32(bitcast<u64>(u) >> 32u);
            k = i32(hu >> 20u) - 1023;
            if k > 0 { c = 1.0lf - opqc_f64(u - x); } else { c = x - opqc_f64(u - 1.0lf); }
            c = c / u;
        } else {
            u = x;
            hu = u32(bitcast<u64>(u) >> 32u);
            k = i32(hu >> 20u) - 1023;
        }
        hu = hu & 0x000fffffu;
        let low = bitcast<u64>(u) & 0xfffffffflu;
        if hu < 0x6a09eu {
            u = bitcast<f64>((u64(hu | 0x3ff00000u) << 32u) | low);
        } else {
            k = k + 1;
            u = bitcast<f64>((u64(hu | 0x3fe00000u) << 32u) | low);
            hu = (0x00100000u - hu) >> 2u;
        }
        f = opqc_f64(u - 1.0lf);
    }
    let hfsq = 0.5lf * f * f;
    let dk = f64(k);
    if hu == 0u {
        if f == 0.0lf {
            if k == 0 { return 0.0lf; }
            return dk * ln2_hi + opqc_f64(c + dk * ln2_lo);
        }
        let r = hfsq * (1.0lf - 0.66666666666666666lf * f);
        if k == 0 { return f - r; }
        return dk * ln2_hi - opqc_f64(opqc_f64(r - opqc_f64(dk * ln2_lo + c)) - f);
    }
    let s = f / (2.0lf + f);
    let z = s * s;
    let r = z * (6.666666666666735130e-01 + z * (3.999999999940941908e-01 + z * (2.857142874366239149e-01
        + z * (2.222219843214978396e-01 + z * (1.818357216161805012e-01 + z * (1.531383769920937332e-01
        + z * 1.479819860511658591e-01))))));
    let sr = opqc_f64(s * (hfsq + r));
    if k == 0 { return f - opqc_f64(hfsq - sr); }
    return dk * ln2_hi - opqc_f64(opqc_f64(hfsq - opqc_f64(sr + opqc_f64(dk * ln2_lo + c))) - f);
}",
            vec![("isnan", t), ("nan", t), ("inf", t), ("opqc", t)],
        ),
        // fdlibm's asinh.
        "asinh" => (
            "fn asinh_f64(x: f64) -> f64 {
    if isnan_f64(x) || isinf_f64(x) { return x; }
    let ax = fabs_f64(x);
    var r: f64;
    if ax > 268435456.0lf {
        r = log_f64(ax) + 6.93147180559945286227e-01;
    } else if ax > 2.0lf {
        r = log_f64(2.0lf * ax + 1.0lf / (sqrt(x * x + 1.0lf) + ax));
    } else if ax < 3.7252902984e-09 {
        return x;
    } else {
        let t = x * x;
        r = log1p_f64(ax + t / (1.0lf + sqrt(1.0lf + t)));
    }
    return copysign_f64(r, x);
}",
            vec![("isnan", t), ("isinf", t), ("log", t), ("log1p", t), ("copysign", t)],
        ),
        // numpy's hypot (glibc's) of finite a, b >= 0, as `pytato_runtime::math::hypot` computes it:
        // the larger x and the smaller y; x + y where y <= x 2^-54; else the corrected square
        // root, the parts scaled by 2^-600 above 2^511 and by 2^600 below 2^-511. The constants
        // are powers of two, written by their bits.
        "hypot" => (
            "fn hypot_f64(a: f64, b: f64) -> f64 {
    let x = select(a, b, a < b);
    let y = select(b, a, a < b);
    let scale = bitcast<f64>(0x1a70000000000000lu);
    let eps = bitcast<f64>(0x3c90000000000000lu);
    if x > bitcast<f64>(0x5fe0000000000000lu) {
        if y <= x * eps { return x + y; }
        return hypot_corrected_f64(x * scale, y * scale) / scale;
    }
    if y < bitcast<f64>(0x2000000000000000lu) {
        if x >= y / eps { return x + y; }
        return hypot_corrected_f64(x / scale, y / scale) * scale;
    }
    if y <= x * eps { return x + y; }
    return hypot_corrected_f64(x, y);
}",
            vec![("hypot_corrected", t)],
        ),
        // `pytato_runtime::math::hypot_corrected` operation for operation: every product that
        // feeds a sum is opaque, so that no driver fuses them into a multiply-add (multiplying by
        // 2 or 4 is exact, so a fused form of those gives the same bits).
        "hypot_corrected" => (
            "fn hypot_corrected_f64(x: f64, y: f64) -> f64 {
    let h = sqrt(opqc_f64(x * x) + opqc_f64(y * y));
    var t1: f64;
    var t2: f64;
    if h <= 2.0lf * y {
        let delta = h - y;
        t1 = opqc_f64(x * (2.0lf * delta - x));
        t2 = opqc_f64((delta - 2.0lf * (x - y)) * delta);
    } else {
        let delta = h - x;
        t1 = opqc_f64(2.0lf * delta * (x - 2.0lf * y));
        t2 = opqc_f64(opqc_f64((4.0lf * delta - y) * y) + opqc_f64(delta * delta));
    }
    return h - opqc_f64(t1 + t2) / (2.0lf * h);
}",
            vec![("opqc", t)],
        ),
        // fdlibm's acosh.
        "acosh" => (
            "fn acosh_f64(x: f64) -> f64 {
    if isnan_f64(x) || x < 1.0lf { return nan_f64(); }
    if x >= 268435456.0lf {
        if isinf_f64(x) { return x; }
        return log_f64(x) + 6.93147180559945286227e-01;
    }
    if x > 2.0lf { return log_f64(2.0lf * x - 1.0lf / (x + sqrt(x * x - 1.0lf))); }
    let t = x - 1.0lf;
    return log1p_f64(t + sqrt(2.0lf * t + t * t));
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("log", t), ("log1p", t)],
        ),
        // fdlibm's atanh.
        "atanh" => (
            "fn atanh_f64(x: f64) -> f64 {
    let ax = fabs_f64(x);
    if isnan_f64(x) || ax > 1.0lf { return nan_f64(); }
    if ax == 1.0lf { return copysign_f64(inf_f64(), x); }
    if ax < 3.7252902984e-09 { return x; }
    var t: f64;
    if ax < 0.5lf {
        let s = ax + ax;
        t = 0.5lf * log1p_f64(s + s * ax / (1.0lf - ax));
    } else {
        t = 0.5lf * log1p_f64((ax + ax) / (1.0lf - ax));
    }
    return copysign_f64(t, x);
}",
            vec![("isnan", t), ("nan", t), ("inf", t), ("copysign", t), ("log1p", t)],
        ),
        // fdlibm's expm1: x = k ln2 + r with the reduction's rounding in c, e^r - 1 by fdlibm's
        // rational kernel, scaled back by 2^k in the form that loses nothing for each k. Every
        // step of the error terms is opaque (see `two_sum`).
        "expm1" => (
            "fn expm1_f64(x0: f64) -> f64 {
    if isnan_f64(x0) { return x0; }
    let ln2_hi: f64 = 6.93147180369123816490e-01;
    let ln2_lo: f64 = 1.90821492927058770002e-10;
    let bits = bitcast<u64>(x0);
    let negative = (bits >> 63u) != 0lu;
    let hx = u32(bits >> 32u) & 0x7fffffffu;
    var x = x0;
    if hx >= 0x4043687au {
        if hx >= 0x40862e42u {
            if hx >= 0x7ff00000u { return select(x, -1.0lf, negative); }
            if x > 7.09782712893383973096e+02 { return inf_f64(); }
        }
        if negative { return -1.0lf; }
    }
    var k = 0;
    var c: f64 = 0.0lf;
    if hx > 0x3fd62e42u {
        var hi: f64;
        var lo: f64;
        if hx < 0x3ff0a2b2u {
            if negative { hi = x + ln2_hi; lo = -ln2_lo; k = -1; } else { hi = x - ln2_hi; lo = ln2_lo; k = 1; }
        } else {
            k = i32(1.44269504088896338700 * x + select(0.5lf, -0.5lf, negative));
            let t = f64(k);
            hi = opqc_f64(x - t * ln2_hi);
            lo = opqc_f64(t * ln2_lo);
        }
        x = opqc_f64(hi - lo);
        c = opqc_f64(opqc_f64(hi - x) - lo);
    } else if hx < 0x3c900000u {
        return x;
    }
    let hfx = 0.5lf * x;
    let hxs = x * hfx;
    let r1 = 1.0lf + hxs * (-3.33333333333331316428e-02 + hxs * (1.58730158725481460165e-03
        + hxs * (-7.93650757867487942473e-05 + hxs * (4.00821782732936239552e-06 + hxs * -2.01099218183624371326e-07))));
    let t = 3.0lf - r1 * hfx;
    var e = hxs * (opqc_f64(r1 - t) / (6.0lf - x * t));
    if k == 0 { return x - opqc_f64(opqc_f64(x * e) - hxs); }
    e = opqc_f64(opqc_f64(opqc_f64(x * opqc_f64(e - c)) - c) - hxs);
    if k == -1 { return 0.5lf * opqc_f64(x - e) - 0.5lf; }
    if k == 1 {
        if x < -0.25lf { return -2.0lf * opqc_f64(e - opqc_f64(x + 0.5lf)); }
        return 1.0lf + 2.0lf * opqc_f64(x - e);
    }
    if k <= -2 || k > 56 {
        var y = 1.0lf - opqc_f64(e - x);
        if k == 1024 { y = y * 2.0lf * pow2_f64(1023); } else { y = y * pow2_f64(k); }
        return y - 1.0lf;
    }
    if k < 20 {
        let one_less = bitcast<f64>(u64(0x3ff00000u - (0x200000u >> u32(k))) << 32u);
        return opqc_f64(one_less - opqc_f64(e - x)) * pow2_f64(k);
    }
    let tiny = bitcast<f64>(u64(u32(0x3ff - k) << 20u) << 32u);
    return opqc_f64(opqc_f64(x - opqc_f64(e + tiny)) + 1.0lf) * pow2_f64(k);
}",
            vec![("isnan", t), ("inf", t), ("pow2", t), ("opqc", t)],
        ),
        // log2 x = log x / ln 2 in double-double, rounded once: exact at powers of two.
        "log2" => (
            "fn log2_f64(x: f64) -> f64 {
    if isnan_f64(x) || x < 0.0lf { return nan_f64(); }
    if x == 0.0lf { return -inf_f64(); }
    if isinf_f64(x) { return x; }
    return dd_mul_f64(log_dd_f64(x), vec2<f64>(1.4426950408889634lf, 2.0355273740931033e-17lf)).x;
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("inf", t), ("log_dd", t), ("dd_mul", t)],
        ),
        "exp2" => ("fn exp2_f64(x: f64) -> f64 { return pow_f64(2.0lf, x); }", vec![("pow", t)]),
        // The real cube root: pow(|x|, 1/3) (1/3 is not a double: an error growing with |log x|)
        // and a Newton step. The step needs y^3 neither to overflow nor to underflow, so |x| far
        // from 1 is first scaled by 2^±600 (exact), and the root back by 2^∓200 (exact too: no
        // cube root of a double is subnormal or overflows).
        "cbrt" => (
            "fn cbrt_f64(x: f64) -> f64 {
    if x == 0.0lf || isnan_f64(x) || isinf_f64(x) { return x; }
    var ax = fabs_f64(x);
    var scale = 1.0lf;
    if ax < 1e-290lf {
        ax = ax * bitcast<f64>(0x6570000000000000lu);
        scale = bitcast<f64>(0x3370000000000000lu);
    } else if ax > 1e290lf {
        ax = ax * bitcast<f64>(0x1a70000000000000lu);
        scale = bitcast<f64>(0x4c70000000000000lu);
    }
    var y = pow_f64(ax, 0.3333333333333333lf);
    // One Newton step, its residual y^3 - |x| in double-double: the correction is then exact to
    // far below an ulp of y, and y - correction rounds once.
    let y3 = dd_mul_f64(two_prod_f64(y, y), vec2<f64>(y, 0.0lf));
    let residual = dd_add_f64(y3, vec2<f64>(-ax, 0.0lf));
    y = (y - (residual.x + residual.y) / (3.0lf * y * y)) * scale;
    return select(y, -y, x < 0.0lf);
}",
            vec![("isnan", t), ("isinf", t), ("fabs", t), ("pow", t), ("two_prod", t), ("dd_mul", t), ("dd_add", t)],
        ),
        // numpy's npy_logaddexp.
        "logaddexp" => (
            "fn logaddexp_f64(x: f64, y: f64) -> f64 {
    if isnan_f64(x) || isnan_f64(y) { return nan_f64(); }
    if x == y { return x + 6.93147180559945286227e-01; }
    let d = x - y;
    if d > 0.0lf { return x + log1p_f64(exp_f64(-d)); }
    return y + log1p_f64(exp_f64(d));
}",
            vec![("isnan", t), ("nan", t), ("log1p", t), ("exp", t)],
        ),
        // C's hypot: infinite beats NaN.
        "hypotc" => (
            "fn hypotc_f64(a: f64, b: f64) -> f64 {
    if isinf_f64(a) || isinf_f64(b) { return inf_f64(); }
    if isnan_f64(a) || isnan_f64(b) { return nan_f64(); }
    return hypot_f64(fabs_f64(a), fabs_f64(b));
}",
            vec![("isnan", t), ("isinf", t), ("nan", t), ("inf", t), ("hypot", t)],
        ),
        other => panic!("no float64 WGSL helper {other}"),
    }
}
