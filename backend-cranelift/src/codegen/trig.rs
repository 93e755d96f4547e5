//! `sin` and `cos` of float64 as inline polynomials, for scalars and `F64X2` vectors alike.
//!
//! A libm call per element costs more than everything else in a typical fused kernel and cannot be
//! vectorized, so float64 `sin`/`cos` are computed inline: the argument is reduced by the nearest
//! multiple `n` of pi/2 to a head and a tail, `y0 + y1 = x - n pi/2`, as musl's `__rem_pio2`
//! reduces medium arguments: one Cody-Waite step (pi/2 as a 33-bit part and its rest), and where
//! that cancels more than 16 bits (x near a multiple of pi/2, where the result is tiny: `sin(5 pi)`
//! was 600,000 ulps off with one step) two more compensated steps with further 33-bit parts, on a
//! cold path that a vector takes when any lane needs it, blending per lane (an element's bits
//! depend on its own argument only). Then musl's `__sin`/`__cos` kernel polynomials (fdlibm's
//! coefficients), which take the tail, are evaluated on `[-pi/4, pi/4]` and the quadrant picks
//! one of `±sin`, `±cos`. The error is about 1 ulp.
//! Arguments beyond [`REDUCTION_LIMIT`] in magnitude go to libm; NaN and infinities give NaN
//! through the arithmetic, as libm does. Scalar and vector code evaluate the same operations, so
//! both paths give the same bits.

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value};
use pytato_core::DType;
use pytato_core::expr::Func;

use super::Translator;
use crate::helpers;

/// Largest |x| reduced inline: `x / (pi/2)` rounds to an integer below 2^17, so `n * PIO2_1` (33
/// significant bits) is exact.
const REDUCTION_LIMIT: f64 = 1.0e5;
const TO_INT: f64 = 6_755_399_441_055_744.0; // 1.5 / f64::EPSILON: adding it rounds to an integer
const INV_PIO2: f64 = std::f64::consts::FRAC_2_PI;
/// `|y| * CANCELLED < |x|`: the reduction of `x` to `y` cancelled more than 16 bits, and takes
/// all three parts of pi/2.
const CANCELLED: f64 = 65536.0;
/// pi/2 in three parts of 33 significant bits (`PIO2_1 + PIO2_2 + PIO2_3`), each with the rest
/// of pi/2 after it rounded to float64 (`PIO2_kT`): musl's `__rem_pio2` constants, by their bits.
const PIO2_1: f64 = f64::from_bits(0x3FF9_21FB_5440_0000);
const PIO2_1T: f64 = f64::from_bits(0x3DD0_B461_1A62_6331);
const PIO2_2: f64 = f64::from_bits(0x3DD0_B461_1A60_0000);
const PIO2_2T: f64 = f64::from_bits(0x3BA3_198A_2E03_7073);
const PIO2_3: f64 = f64::from_bits(0x3BA3_198A_2E00_0000);
const PIO2_3T: f64 = f64::from_bits(0x397B_839A_2520_49C1);
const S: [f64; 6] = [
    -1.666_666_666_666_663_2e-1,
    8.333_333_333_322_49e-3,
    -1.984_126_982_985_795e-4,
    2.755_731_370_707_006_8e-6,
    -2.505_076_025_340_686_3e-8,
    1.589_690_995_211_55e-10,
];
const C: [f64; 6] = [
    4.166_666_666_666_66e-2,
    -1.388_888_888_887_411e-3,
    2.480_158_728_947_673e-5,
    -2.755_731_435_139_066_3e-7,
    2.087_572_321_298_175e-9,
    -1.135_964_755_778_819_5e-11,
];

impl Translator<'_, '_> {
    /// `sin(x)` or `cos(x)` (`func`) of a float64 scalar or an `F64X2` vector `x` of type `ty`.
    pub(super) fn sin_cos_f64(&mut self, func: Func, x: Value, ty: Type) -> Value {
        let poly = self.sin_cos_poly(func == Func::Cos, x, ty);
        // Large arguments: libm, lane by lane, on a cold path.
        let magnitude = self.b.ins().fabs(x);
        let limit = self.f64_splat(ty, REDUCTION_LIMIT);
        let big = self.b.ins().fcmp(FloatCC::GreaterThan, magnitude, limit);
        let any_big = if ty.is_vector() { self.b.ins().vany_true(big) } else { big };
        let result = self.var(ty);
        self.b.def_var(result, poly);
        let slow = self.b.create_block();
        let done = self.b.create_block();
        self.b.set_cold_block(slow);
        self.b.ins().brif(any_big, slow, &[], done, &[]);
        self.b.switch_to_block(slow);
        let address = helpers::real_unary(func).expect("sin and cos have helpers");
        let libm = if ty.is_vector() {
            self.per_lane(address, DType::F64, ty, &[x])
        } else {
            self.real_helper(address, DType::F64, &[x])
        };
        self.b.def_var(result, libm);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.use_var(result)
    }

    fn sin_cos_poly(&mut self, cos: bool, x: Value, ty: Type) -> Value {
        // n = nearest integer to x / (pi/2); y = x - n pi/2 in [-pi/4, pi/4].
        let inv_pio2 = self.f64_splat(ty, INV_PIO2);
        let to_int = self.f64_splat(ty, TO_INT);
        let scaled = self.b.ins().fmul(x, inv_pio2);
        let shifted = self.b.ins().fadd(scaled, to_int);
        let n = self.b.ins().fsub(shifted, to_int);
        // One Cody-Waite step, x - n (PIO2_1 + PIO2_1T), is enough unless the result cancels
        // (x near a multiple of pi/2); each product is exact (n < 2^17, parts of 33 bits).
        let pio2_1 = self.f64_splat(ty, PIO2_1);
        let r = self.b.ins().fmul(n, pio2_1);
        let r = self.b.ins().fsub(x, r);
        let pio2_1t = self.f64_splat(ty, PIO2_1T);
        let w = self.b.ins().fmul(n, pio2_1t);
        let (y_fast, tail_fast) = self.head_and_tail(r, w);
        // musl's test: more than 16 bits cancelled (|y| < 2^-16 |x|). Those lanes take the two
        // further compensated steps, on a cold path; each lane's bits depend on its own x only.
        let magnitude = self.b.ins().fabs(y_fast);
        let scale = self.f64_splat(ty, CANCELLED);
        let magnitude = self.b.ins().fmul(magnitude, scale);
        let x_magnitude = self.b.ins().fabs(x);
        let cancelled = self.b.ins().fcmp(FloatCC::LessThan, magnitude, x_magnitude);
        let any_cancelled = if ty.is_vector() { self.b.ins().vany_true(cancelled) } else { cancelled };
        let (head, tail) = (self.var(ty), self.var(ty));
        self.b.def_var(head, y_fast);
        self.b.def_var(tail, tail_fast);
        let accurate = self.b.create_block();
        let reduced = self.b.create_block();
        self.b.set_cold_block(accurate);
        self.b.ins().brif(any_cancelled, accurate, &[], reduced, &[]);
        self.b.switch_to_block(accurate);
        let (r, _) = self.cody_waite_step(r, n, PIO2_2, PIO2_2T, ty);
        let (r, w) = self.cody_waite_step(r, n, PIO2_3, PIO2_3T, ty);
        let (y_accurate, tail_accurate) = self.head_and_tail(r, w);
        let y = self.blend(ty, cancelled, y_accurate, y_fast);
        let y_tail = self.blend(ty, cancelled, tail_accurate, tail_fast);
        self.b.def_var(head, y);
        self.b.def_var(tail, y_tail);
        self.b.ins().jump(reduced, &[]);
        self.b.switch_to_block(reduced);
        let (y, y_tail) = (self.b.use_var(head), self.b.use_var(tail));

        let z = self.b.ins().fmul(y, y);
        let w = self.b.ins().fmul(z, z);
        let s = self.sin_kernel(y, y_tail, z, w, ty);
        let c = self.cos_kernel(y, y_tail, z, w, ty);

        // Quadrant q = n mod 4 (cos is sin one quadrant on): odd -> the cos kernel, >= 2 -> negate.
        let n = if cos {
            let one = self.f64_splat(ty, 1.0);
            self.b.ins().fadd(n, one)
        } else {
            n
        };
        let quarter = self.f64_splat(ty, 0.25);
        let four = self.f64_splat(ty, 4.0);
        let n4 = self.b.ins().fmul(n, quarter);
        let n4 = self.b.ins().floor(n4);
        let n4 = self.b.ins().fmul(n4, four);
        let q = self.b.ins().fsub(n, n4);
        let one = self.f64_splat(ty, 1.0);
        let three = self.f64_splat(ty, 3.0);
        let two = self.f64_splat(ty, 2.0);
        let is_one = self.b.ins().fcmp(FloatCC::Equal, q, one);
        let is_three = self.b.ins().fcmp(FloatCC::Equal, q, three);
        let odd = self.b.ins().bor(is_one, is_three);
        let negate = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, q, two);
        let v = self.blend(ty, odd, c, s);
        let minus_v = self.b.ins().fneg(v);
        self.blend(ty, negate, minus_v, v)
    }

    /// The reduced argument `r - w` as a head `y` and the tail `(r - y) - w` it rounded away.
    fn head_and_tail(&mut self, r: Value, w: Value) -> (Value, Value) {
        let y = self.b.ins().fsub(r, w);
        let tail = self.b.ins().fsub(r, y);
        (y, self.b.ins().fsub(tail, w))
    }

    /// One compensated step of the reduction from `t` (musl's): `r = t - n part`, and `w`, the
    /// part of `n (part + rest)` that `r` still holds, `n rest - ((t - r) - n part)`.
    fn cody_waite_step(&mut self, t: Value, n: Value, part: f64, rest: f64, ty: Type) -> (Value, Value) {
        let part = self.f64_splat(ty, part);
        let rest = self.f64_splat(ty, rest);
        let step = self.b.ins().fmul(n, part);
        let r = self.b.ins().fsub(t, step);
        let lost = self.b.ins().fsub(t, r);
        let lost = self.b.ins().fsub(lost, step);
        let tail = self.b.ins().fmul(n, rest);
        (r, self.b.ins().fsub(tail, lost))
    }

    /// musl's `__sin(y, y_tail, 1)`: `y - ((z (y_tail / 2 - v r) - y_tail) - v S1)` with `v = z y`,
    /// `r = S2 + z (S3 + z S4) + z w (S5 + z S6)`.
    fn sin_kernel(&mut self, y: Value, y_tail: Value, z: Value, w: Value, ty: Type) -> Value {
        let [s1, s2, s3, s4, s5, s6] = S.map(|c| self.f64_splat(ty, c));
        let t = self.b.ins().fmul(z, s4);
        let t = self.b.ins().fadd(s3, t);
        let t = self.b.ins().fmul(z, t);
        let a = self.b.ins().fadd(s2, t);
        let t = self.b.ins().fmul(z, s6);
        let t = self.b.ins().fadd(s5, t);
        let zw = self.b.ins().fmul(z, w);
        let t = self.b.ins().fmul(zw, t);
        let r = self.b.ins().fadd(a, t);
        let v = self.b.ins().fmul(z, y);
        let half = self.f64_splat(ty, 0.5);
        let half_tail = self.b.ins().fmul(half, y_tail);
        let vr = self.b.ins().fmul(v, r);
        let t = self.b.ins().fsub(half_tail, vr);
        let t = self.b.ins().fmul(z, t);
        let t = self.b.ins().fsub(t, y_tail);
        let vs1 = self.b.ins().fmul(v, s1);
        let t = self.b.ins().fsub(t, vs1);
        self.b.ins().fsub(y, t)
    }

    /// musl's `__cos(y, y_tail)`: `(1 - z/2) + (((1 - (1 - z/2)) - z/2) + (z r - y y_tail))` with
    /// `r = z (C1 + z (C2 + z C3)) + w w (C4 + z (C5 + z C6))`.
    fn cos_kernel(&mut self, y: Value, y_tail: Value, z: Value, w: Value, ty: Type) -> Value {
        let [c1, c2, c3, c4, c5, c6] = C.map(|c| self.f64_splat(ty, c));
        let t = self.b.ins().fmul(z, c3);
        let t = self.b.ins().fadd(c2, t);
        let t = self.b.ins().fmul(z, t);
        let t = self.b.ins().fadd(c1, t);
        let a = self.b.ins().fmul(z, t);
        let t = self.b.ins().fmul(z, c6);
        let t = self.b.ins().fadd(c5, t);
        let t = self.b.ins().fmul(z, t);
        let t = self.b.ins().fadd(c4, t);
        let ww = self.b.ins().fmul(w, w);
        let t = self.b.ins().fmul(ww, t);
        let r = self.b.ins().fadd(a, t);
        let half = self.f64_splat(ty, 0.5);
        let one = self.f64_splat(ty, 1.0);
        let hz = self.b.ins().fmul(half, z);
        let w = self.b.ins().fsub(one, hz);
        let t = self.b.ins().fsub(one, w);
        let t = self.b.ins().fsub(t, hz);
        let zr = self.b.ins().fmul(z, r);
        let yy = self.b.ins().fmul(y, y_tail);
        let zr = self.b.ins().fsub(zr, yy);
        let t = self.b.ins().fadd(t, zr);
        self.b.ins().fadd(w, t)
    }

    /// A float64 constant, splatted when `ty` is a vector.
    fn f64_splat(&mut self, ty: Type, v: f64) -> Value {
        let c = self.b.ins().f64const(v);
        if ty.is_vector() { self.b.ins().splat(ty, c) } else { c }
    }

    /// `mask ? a : b` for scalars (an `i8` condition) or vectors (a lane mask).
    fn blend(&mut self, ty: Type, mask: Value, a: Value, b: Value) -> Value {
        if ty.is_vector() {
            let mask = self.b.ins().bitcast(ty, MemFlagsData::new(), mask);
            self.b.ins().bitselect(mask, a, b)
        } else {
            self.b.ins().select(mask, a, b)
        }
    }
}

/// Whether [`Translator::sin_cos_f64`] computes `func` of `dtype` (float64 `sin` and `cos`).
pub(super) fn handles(func: Func, dtype: DType) -> bool {
    matches!(func, Func::Sin | Func::Cos) && dtype == DType::F64
}
