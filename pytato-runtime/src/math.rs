//! numpy's scalar math where Rust's operators and `num-complex` differ from it: the one
//! definition the CPU backends share (the interpreter calls these functions, and the Cranelift JIT
//! calls them from generated code), so that they agree bit for bit.
//!
//! - Float `//` and `%` ([`floor_divide`], [`remainder`]): numpy's `npy_divmod`, on an exact
//!   `fmod`.
//! - Float to integer casts ([`float_to_int`]): numpy calls out-of-range values and NaN undefined;
//!   we follow what numpy gives on x86-64, the platform its users run most.
//! - Complex arithmetic and functions ([`complex`]): numpy's division algorithm, and the special
//!   values and branch cuts of C99 Annex G (what numpy gets from the C library), with formulas
//!   that stay accurate for huge, tiny and subnormal arguments.
//!
//! float32 and complex64 are computed in float64 (and complex128) and rounded once at the end:
//! as accurate as single precision or better, and the same on every CPU backend.
//!
//! # Summation
//!
//! Every backend sums floating-point values (sum and mean reductions, einsum contractions) so that
//! a long sum is about as accurate as numpy's pairwise summation while staying one streaming loop:
//!
//! - float32 and complex64 terms are converted to float64 (complex128), summed as those are, and
//!   rounded once at the end: within one float32 rounding of the exact sum;
//! - float64 and complex128 terms are summed in blocks of [`SUM_BLOCK`] terms, and each block in
//!   [`SUM_LANES`] lanes: term `t` (counted from 0) is added into lane `t % SUM_LANES` of its
//!   block (lanes start at +0), and the lanes are combined by [`lane_tree`] into the block's
//!   total. The last block may be partial; an empty sum is one block of zeros (+0).
//! - The block totals `b0, b1, …` are combined by the canonical pairwise tree ([`BlockTree`]):
//!   level by level, `(b0 + b1), (b2 + b3), …`, an unpaired last total passing up unchanged,
//!   until one is left. The error grows like `SUM_BLOCK / SUM_LANES + log2(n / SUM_BLOCK)`
//!   roundings instead of `n`; the lanes are what SIMD registers hold (a compiled loop adds one
//!   vector of adjacent terms into each of its lane registers, with no dependency from one term
//!   to the next), and the tree is what parallel hardware computes in logarithmic depth: any
//!   aligned run of `2^k` blocks is a subtree, so threads or GPU workgroups that each combine an
//!   aligned run of blocks, and then combine their results by the same tree, give the same bits
//!   as one loop.
//!
//! Every other reduction combines in order. For integers, maxima, minima, `all` and `any` any
//! grouping gives the same result; float and complex products stay in order, as numpy multiplies:
//! grouped, a product that overflows in one group and underflows in another would be `inf * 0`,
//! NaN, where numpy's is infinite.
//!
//! Terms are taken in the order of the reduction's loops (the first iname slowest), counted over
//! the whole reduction however many inames it has.

use pytato_core::dtype::DType;
use pytato_core::expr::ReduceOp;

/// Terms per block of a float64 or complex128 sum (see the module docs, "Summation").
pub const SUM_BLOCK: u64 = 128;

/// Lanes of a float64 or complex128 block sum (see the module docs, "Summation"); divides
/// [`SUM_BLOCK`].
pub const SUM_LANES: usize = 8;

const _: () = assert!(SUM_BLOCK.is_multiple_of(SUM_LANES as u64), "lanes divide a block");

/// The sum of the lanes of a block, in the one order every backend uses:
/// `((l0 + l2) + (l4 + l6)) + ((l1 + l3) + (l5 + l7))`, which is what adding four 2-lane vectors
/// pairwise and then the two halves of the result gives. `add` adds two values (a number, or code
/// that computes one).
///
/// ```
/// use pytato_runtime::math::lane_tree;
/// let lanes = [1e16, 1.0, -1e16, 1.0, 0.0, 0.0, 0.0, 0.0];
/// let sum = lane_tree(lanes, &mut |a: f64, b: f64| Ok::<_, ()>(a + b)).unwrap();
/// assert_eq!(sum, 2.0); // ((1e16 + -1e16) + (0 + 0)) + ((1 + 1) + (0 + 0))
/// ```
pub fn lane_tree<T: Clone, E>(lanes: [T; SUM_LANES], add: &mut dyn FnMut(T, T) -> Result<T, E>) -> Result<T, E> {
    let [l0, l1, l2, l3, l4, l5, l6, l7] = lanes;
    let even = {
        let (a, b) = (add(l0, l2)?, add(l4, l6)?);
        add(a, b)?
    };
    let odd = {
        let (a, b) = (add(l1, l3)?, add(l5, l7)?);
        add(a, b)?
    };
    add(even, odd)
}

/// The block totals of a sum combined in the canonical pairwise tree (see the module docs,
/// "Summation"), as they come: a binary counter of complete subtrees. Pushing block `k` merges
/// it with the `trailing_ones(k)` latest pending subtrees (each merge `left + right`), and
/// [`BlockTree::finish`] combines what is pending from the right. This gives exactly the
/// level-by-level tree, keeping at most `popcount(k + 1)` totals pending (64 for any `u64`
/// count): what every backend implements, in its own form.
///
/// ```
/// use pytato_runtime::math::BlockTree;
/// let mut tree = BlockTree::new();
/// for b in [1e16, 1.0, -1e16, 1.0, 3.0] {
///     tree.push(b, &mut |a: f64, b: f64| Ok::<_, ()>(a + b)).unwrap();
/// }
/// // ((1e16 + 1) + (-1e16 + 1)) + 3
/// assert_eq!(tree.finish(&mut |a, b| Ok::<_, ()>(a + b)).unwrap(), Some(3.0));
/// ```
#[derive(Clone, Debug, Default)]
pub struct BlockTree<T> {
    /// Complete subtrees, the largest (leftmost) first.
    pending: Vec<T>,
    blocks: u64,
}

impl<T> BlockTree<T> {
    /// No blocks yet.
    pub fn new() -> BlockTree<T> {
        BlockTree { pending: Vec::new(), blocks: 0 }
    }

    /// The number of blocks pushed.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Adds the next block's total; `add(left, right)` combines two subtrees.
    pub fn push<E>(&mut self, block: T, add: &mut dyn FnMut(T, T) -> Result<T, E>) -> Result<(), E> {
        let mut right = block;
        for _ in 0..self.blocks.trailing_ones() {
            let left = self.pending.pop().expect("a binary counter has a subtree per one bit");
            right = add(left, right)?;
        }
        self.pending.push(right);
        self.blocks += 1;
        Ok(())
    }

    /// The tree's total, `None` when no block was pushed.
    pub fn finish<E>(mut self, add: &mut dyn FnMut(T, T) -> Result<T, E>) -> Result<Option<T>, E> {
        let Some(mut right) = self.pending.pop() else { return Ok(None) };
        while let Some(left) = self.pending.pop() {
            right = add(left, right)?;
        }
        Ok(Some(right))
    }
}

/// How a reduction combines its terms (see the module docs, "Summation").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Summation {
    /// float32 and complex64 sums: the terms converted to this wider dtype and summed there as
    /// [`Summation::Blocked`], rounded at the end.
    Widened(DType),
    /// float64 and complex128 sums: in blocks of [`SUM_BLOCK`] terms, each in [`SUM_LANES`] lanes,
    /// the blocks' totals in the canonical tree.
    Blocked,
    /// Everything else: one accumulator, in order.
    InOrder,
}

impl Summation {
    /// The dtype a sum's lanes hold for terms of `dtype`: `None` for reductions without lanes.
    pub fn lane_dtype(self, dtype: DType) -> Option<DType> {
        match self {
            Summation::Widened(wide) => Some(wide),
            Summation::Blocked => Some(dtype),
            Summation::InOrder => None,
        }
    }
}

/// The scheme for a reduction `op` over terms of `dtype`.
pub fn summation(op: ReduceOp, dtype: DType) -> Summation {
    match (op, dtype) {
        (ReduceOp::Sum, DType::F32) => Summation::Widened(DType::F64),
        (ReduceOp::Sum, DType::C64) => Summation::Widened(DType::C128),
        (ReduceOp::Sum, DType::F64 | DType::C128) => Summation::Blocked,
        _ => Summation::InOrder,
    }
}

/// numpy's `divmod` for floats (`npy_divmod`, `npy_divmodf` for float32): the quotient rounded
/// toward negative infinity and the remainder with the sign of the divisor, each step in the
/// arguments' precision, as numpy computes it (so float32's quotient is numpy's float32 one, not
/// the float64 one rounded: `(a - m) / b` rounds in float32 before its floor). A zero divisor
/// gives `(a / b, NaN)`.
///
/// ```
/// use pytato_runtime::math::float_divmod;
/// assert_eq!(float_divmod(-7.5f64, 2.0), (-4.0, 0.5));
/// // numpy 2.4.6: np.float32(-13661105.0) // np.float32(0.6649998) is -20543024.0 (in float64
/// // arithmetic the floor of the quotient is -20543022).
/// assert_eq!(float_divmod(-13661105.0f32, 0.6649998).0, -20543024.0);
/// ```
pub fn float_divmod<T: num_traits::Float>(a: T, b: T) -> (T, T) {
    let (zero, one) = (T::zero(), T::one());
    let mut m = a % b; // Rust's `%` on floats is C's fmod: exact.
    if b == zero {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    if m != zero {
        if (b < zero) != (m < zero) {
            m = m + b;
            div = div - one;
        }
    } else {
        m = zero.copysign(b);
    }
    let floordiv = if div != zero {
        let f = div.floor();
        if div - f > one / (one + one) { f + one } else { f }
    } else {
        zero.copysign(a / b)
    };
    (floordiv, m)
}

/// numpy's `floor_divide` for floats (float32 arguments in float32 steps: see [`float_divmod`]).
pub fn floor_divide<T: num_traits::Float>(a: T, b: T) -> T {
    float_divmod(a, b).0
}

/// numpy's `remainder` for floats: the sign of the divisor; NaN for a zero divisor.
pub fn remainder<T: num_traits::Float>(a: T, b: T) -> T {
    if b == T::zero() { a % b } else { float_divmod(a, b).1 }
}

pub use pytato_core::scalar::float_to_int;

/// `asinh x` (fdlibm's algorithm, as glibc's): accurate near 0 and for huge `|x|`, where
/// `ln(x + sqrt(x² + 1))` would overflow.
pub fn asinh(x: f64) -> f64 {
    if !x.is_finite() {
        return x;
    }
    let ax = x.abs();
    let r = if ax > 268_435_456.0 {
        ax.ln() + std::f64::consts::LN_2
    } else if ax > 2.0 {
        (2.0 * ax + 1.0 / ((x * x + 1.0).sqrt() + ax)).ln()
    } else if ax < 3.725_290_298_4e-9 {
        return x;
    } else {
        let t = x * x;
        (ax + t / (1.0 + (1.0 + t).sqrt())).ln_1p()
    };
    r.copysign(x)
}

/// `acosh x` (fdlibm's algorithm): NaN below 1, `ln x + ln 2` for huge `x`.
pub fn acosh(x: f64) -> f64 {
    if x.is_nan() || x < 1.0 {
        return f64::NAN;
    }
    if x >= 268_435_456.0 {
        return if x.is_infinite() { x } else { x.ln() + std::f64::consts::LN_2 };
    }
    if x > 2.0 {
        return (2.0 * x - 1.0 / (x + (x * x - 1.0).sqrt())).ln();
    }
    let t = x - 1.0;
    (t + (2.0 * t + t * t).sqrt()).ln_1p()
}

/// `atanh x` (fdlibm's algorithm): `±inf` at `±1`, NaN beyond.
pub fn atanh(x: f64) -> f64 {
    let ax = x.abs();
    if x.is_nan() || ax > 1.0 {
        return f64::NAN;
    }
    if ax == 1.0 {
        return f64::INFINITY.copysign(x);
    }
    if ax < 3.725_290_298_4e-9 {
        return x;
    }
    let t = if ax < 0.5 {
        let t = ax + ax;
        0.5 * (t + t * ax / (1.0 - ax)).ln_1p()
    } else {
        0.5 * ((ax + ax) / (1.0 - ax)).ln_1p()
    };
    t.copysign(x)
}

/// numpy's `hypot` of two float64 values, with the bits of glibc's (2.35 and later, which numpy
/// calls on Linux), on every backend and platform: `inf` where a part is infinite (even with a
/// NaN), NaN where a part is NaN; else, for the larger magnitude `x` and the smaller `y`, `x + y`
/// where `y <= x · 2^-54`, and otherwise [`hypot_corrected`], of the parts scaled by `2^-600`
/// where `x > 2^511` and by `2^600` where `y < 2^-511` (and the result scaled back), so that no
/// square overflows or loses digits to underflow. Not always the correctly rounded value (about
/// 0.15% of random pairs are a unit in the last place from it), but the same as numpy's.
///
/// ```
/// use pytato_runtime::math::hypot;
/// assert_eq!(hypot(3.0, -4.0), 5.0);
/// // numpy 2.4.6 on glibc 2.36: np.hypot(-2.280857756344364e-05, -8.07878708692974e-06)
/// assert_eq!(hypot(-2.280857756344364e-05, -8.07878708692974e-06), 2.4197066170582897e-05);
/// assert_eq!(hypot(f64::NAN, f64::NEG_INFINITY), f64::INFINITY);
/// ```
pub fn hypot(a: f64, b: f64) -> f64 {
    if a.is_infinite() || b.is_infinite() {
        return f64::INFINITY;
    }
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    let (a, b) = (a.abs(), b.abs());
    let (x, y) = if a < b { (b, a) } else { (a, b) };
    // 2^-600, 2^511, 2^-511, 2^-54: exact powers of two.
    let scale = f64::from_bits(0x1A70_0000_0000_0000);
    let (large, tiny, eps) = (
        f64::from_bits(0x5FE0_0000_0000_0000),
        f64::from_bits(0x2000_0000_0000_0000),
        f64::from_bits(0x3C90_0000_0000_0000),
    );
    if x > large {
        if y <= x * eps {
            return x + y;
        }
        return hypot_corrected(x * scale, y * scale) / scale;
    }
    if y < tiny {
        if x >= y / eps {
            return x + y;
        }
        return hypot_corrected(x / scale, y / scale) * scale;
    }
    if y <= x * eps {
        return x + y;
    }
    hypot_corrected(x, y)
}

/// `sqrt(x² + y²)` for `x >= y > 0` whose squares neither overflow nor underflow: the rounded
/// square root `h` of the rounded sum, corrected once by `(h² - x² - y²) / 2h` with that
/// difference computed from exact pieces (Borges, "An improved algorithm for hypot(a, b)", 2019,
/// the correction without fused multiply-adds), as glibc computes it. Backends that compute it
/// themselves (WGSL) must keep every operation as written: no fused multiply-add, no reordering.
pub fn hypot_corrected(x: f64, y: f64) -> f64 {
    let h = (x * x + y * y).sqrt();
    let (t1, t2) = if h <= 2.0 * y {
        let delta = h - y;
        (x * (2.0 * delta - x), (delta - 2.0 * (x - y)) * delta)
    } else {
        let delta = h - x;
        (2.0 * delta * (x - 2.0 * y), (4.0 * delta - y) * y + delta * delta)
    };
    h - (t1 + t2) / (2.0 * h)
}

/// `log(exp(x) + exp(y))` as numpy computes it (`npy_logaddexp`): `x + ln 2` for equal
/// arguments (so infinities of one sign stay), otherwise the larger plus `log1p(exp(-|x - y|))`;
/// NaN propagates.
pub fn logaddexp(x: f64, y: f64) -> f64 {
    if x == y {
        return x + std::f64::consts::LN_2;
    }
    let d = x - y;
    if d > 0.0 {
        x + (-d).exp().ln_1p()
    } else if d <= 0.0 {
        y + d.exp().ln_1p()
    } else {
        d
    }
}

/// C's `nextafter(x, y)` for float64: the next representable value after `x` toward `y`; `y` when
/// they are equal (so `nextafter(0.0, -0.0)` is `-0.0`), NaN when either is.
pub fn nextafter(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == y {
        return y;
    }
    if x < y { x.next_up() } else { x.next_down() }
}

/// C's `nextafterf(x, y)`: [`nextafter`] in single precision.
pub fn nextafter_f32(x: f32, y: f32) -> f32 {
    if x.is_nan() || y.is_nan() {
        return f32::NAN;
    }
    if x == y {
        return y;
    }
    if x < y { x.next_up() } else { x.next_down() }
}

/// The greatest common divisor of two magnitudes by Euclid's algorithm (`gcd(0, 0) = 0`). numpy's
/// `gcd` of a signed dtype is this on the operands' magnitudes as unsigned integers of the dtype's
/// width (`|i64::MIN|` is 2⁶³), read back in the dtype.
pub fn gcd_magnitudes(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// numpy's `lcm` on magnitudes: `(a / gcd) * b`, wrapping (callers keep the dtype's low bits); 0
/// where the gcd is 0.
pub fn lcm_magnitudes(a: u64, b: u64) -> u64 {
    match gcd_magnitudes(a, b) {
        0 => 0,
        g => (a / g).wrapping_mul(b),
    }
}

/// `2^k` for `-1022 <= k <= 1023`, exactly, from its bits.
fn power_of_two(k: i64) -> f64 {
    debug_assert!((-1022..=1023).contains(&k));
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// C's `ldexp(x, n)` for float64: `x · 2ⁿ` with one rounding (`n` an integral value; its
/// magnitude saturates beyond 2,200, where every result has). A factor too large or small for a
/// float64 is applied in steps that stay exact: a result in the subnormal range is reached by one
/// multiplication from a normal value, so it is rounded once (as in musl's `scalbn`).
pub fn ldexp(x: f64, n: f64) -> f64 {
    let mut n = n.clamp(-2200.0, 2200.0) as i64;
    let mut y = x;
    if n > 1023 {
        y *= power_of_two(1023);
        n -= 1023;
        if n > 1023 {
            y *= power_of_two(1023);
            n = (n - 1023).min(1023);
        }
    } else if n < -1022 {
        // 2^-1022 · 2^53: leaves `y` normal unless the final result is below half the smallest
        // subnormal, so the last multiplication is the only rounding that matters.
        y *= power_of_two(-1022 + 53);
        n += 1022 - 53;
        if n < -1022 {
            y *= power_of_two(-1022 + 53);
            n = (n + 1022 - 53).max(-1022);
        }
    }
    y * power_of_two(n)
}

/// C's `frexp(x)` for float64: `(m, e)` with `0.5 <= |m| < 1` and `x = m · 2^e`; `(x, 0)` for ±0,
/// ±inf and NaN.
pub fn frexp(x: f64) -> (f64, i32) {
    if x == 0.0 || !x.is_finite() {
        return (x, 0);
    }
    // A subnormal is scaled into the normal range first (exactly), its exponent corrected after.
    let (scaled, shift) = if x.abs() < f64::MIN_POSITIVE { (x * power_of_two(64), 64) } else { (x, 0) };
    let bits = scaled.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (mantissa, biased - 1022 - shift)
}

/// Complex arithmetic and elementary functions on [`Complex64`](num_complex::Complex64): numpy's results, C99 Annex G's
/// special values (infinities, NaN, signed zeros on the branch cuts).
pub mod complex {
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, LN_2, LOG10_E, PI};

    use num_complex::{Complex, Complex64 as C};
    use num_traits::Float;

    use super::hypot;

    fn c(re: f64, im: f64) -> C {
        C::new(re, im)
    }

    /// `i z`.
    fn times_i(z: C) -> C {
        c(-z.im, z.re)
    }

    /// `-i z`.
    fn times_minus_i(z: C) -> C {
        c(z.im, -z.re)
    }

    /// `a * b` by the textbook formula: how numpy's `prod`, `cumprod` and `power` multiply
    /// (its elementwise `multiply` is [`multiply`]).
    pub fn mul(a: C, b: C) -> C {
        c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
    }

    /// `a * b` as numpy's elementwise `multiply` (and `square`) computes it on processors with
    /// fused multiply-add (x86-64 since Haswell, every aarch64): the real part
    /// `fma(a.re, b.re, -(a.im b.im))`, the imaginary part `fma(a.re, b.im, a.im b.re)`, so the
    /// first product of each is not rounded. It differs from [`mul`] in the last bit of about a
    /// quarter of random products, and where `a.re b.re` overflows but the sum does not.
    /// numpy's reductions (`prod`, `cumprod`) multiply as [`mul`] does.
    pub fn multiply<T: Float>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
        Complex::new(a.re.mul_add(b.re, -(a.im * b.im)), a.re.mul_add(b.im, a.im * b.re))
    }

    /// `a * b` as C's `*` on `double complex` computes it (libgcc's `__muldc3`, C99 Annex G): the
    /// textbook formula, and where both parts come out NaN, infinities recovered (an infinite
    /// factor boxed to ±1 and NaNs in the other set to signed zeros). glibc's `cpow`, which numpy
    /// calls for non-integer exponents, multiplies this way.
    pub fn mul_annex_g(x: C, y: C) -> C {
        let (mut a, mut b, mut c_, mut d) = (x.re, x.im, y.re, y.im);
        let (ac, bd, ad, bc) = (a * c_, b * d, a * d, b * c_);
        let (re, im) = (ac - bd, ad + bc);
        if !(re.is_nan() && im.is_nan()) {
            return c(re, im);
        }
        let boxed = |v: f64| (if v.is_infinite() { 1.0f64 } else { 0.0 }).copysign(v);
        let zeroed = |v: f64| if v.is_nan() { 0.0f64.copysign(v) } else { v };
        let mut recalc = false;
        if a.is_infinite() || b.is_infinite() {
            (a, b, c_, d) = (boxed(a), boxed(b), zeroed(c_), zeroed(d));
            recalc = true;
        }
        if c_.is_infinite() || d.is_infinite() {
            (c_, d, a, b) = (boxed(c_), boxed(d), zeroed(a), zeroed(b));
            recalc = true;
        }
        if !recalc && (ac.is_infinite() || bd.is_infinite() || ad.is_infinite() || bc.is_infinite()) {
            (a, b, c_, d) = (zeroed(a), zeroed(b), zeroed(c_), zeroed(d));
            recalc = true;
        }
        if recalc { c(f64::INFINITY * (a * c_ - b * d), f64::INFINITY * (a * d + b * c_)) } else { c(re, im) }
    }

    /// `a / b` with numpy's algorithm (Smith's, scaled by the larger part of the divisor; a zero
    /// divisor divides each part by `+0`): no overflow for large divisors, `(1+1j)/0` is
    /// `inf+infj`. Generic so that complex64 divides in single precision as numpy does (where an
    /// intermediate overflows matters for infinities).
    pub fn div<T: Float>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
        let (br_abs, bi_abs) = (b.re.abs(), b.im.abs());
        if br_abs >= bi_abs {
            if br_abs == T::zero() && bi_abs == T::zero() {
                return Complex::new(a.re / br_abs, a.im / br_abs);
            }
            let rat = b.im / b.re;
            let scl = T::one() / (b.re + b.im * rat);
            Complex::new((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
        } else {
            let rat = b.re / b.im;
            let scl = T::one() / (b.im + b.re * rat);
            Complex::new((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
        }
    }

    /// `|z|` as numpy's `absolute` computes it: `L sqrt(fma(r, r, 1))`, `L` the larger part's
    /// magnitude and `r` the smaller's over it (no overflow or underflow); infinite where a part
    /// is, NaN where a part is NaN otherwise, 0 for 0. It differs from C's `hypot` in the last bit
    /// of about a quarter of random values (numpy's `sign` divides by `hypot`). Generic, so that
    /// complex64 is computed in single precision, as numpy's is.
    pub fn abs<T: Float>(z: Complex<T>) -> T {
        let (x, y) = (z.re.abs(), z.im.abs());
        if x.is_infinite() || y.is_infinite() {
            return T::infinity();
        }
        if x.is_nan() || y.is_nan() {
            return T::nan();
        }
        let (large, small) = if x >= y { (x, y) } else { (y, x) };
        if large == T::zero() {
            return large;
        }
        let r = small / large;
        large * r.mul_add(r, T::one()).sqrt()
    }

    /// `e^z`. `exp(x + 0i)` is `exp(x) + 0i` (no `inf * 0`), and `exp(x)` overflowing does not
    /// make the result overflow where `exp(x) cos(y)` is finite.
    pub fn exp(z: C) -> C {
        let (x, y) = (z.re, z.im);
        if y == 0.0 {
            return c(x.exp(), y);
        }
        if x.is_infinite() && !y.is_finite() {
            // C99 Annex G as glibc's cexp (which numpy calls): +inf + iy -> inf + i NaN,
            // -inf + iy -> 0 with y's sign on the imaginary zero.
            return if x > 0.0 { c(x, f64::NAN) } else { c(0.0, 0.0f64.copysign(y)) };
        }
        if x > 709.0 {
            // e^x = h * h without overflowing before the product does.
            let h = (0.5 * x).exp();
            return c(y.cos() * h * h, y.sin() * h * h);
        }
        let e = x.exp();
        c(e * y.cos(), e * y.sin())
    }

    /// `log |z|`, accurate near `|z| = 1` and for huge, tiny and subnormal parts.
    fn log_abs(x: f64, y: f64) -> f64 {
        let (ax, ay) = (x.abs(), y.abs());
        if ax.is_infinite() || ay.is_infinite() {
            return f64::INFINITY;
        }
        if ax.is_nan() || ay.is_nan() {
            return f64::NAN;
        }
        let (big, small) = if ax >= ay { (ax, ay) } else { (ay, ax) };
        if big == 0.0 {
            return f64::NEG_INFINITY;
        }
        if small == 0.0 {
            // On an axis, the real log's, rounded once (a subnormal part included).
            return big.ln();
        }
        if big > 0.5 && big < 2.0 {
            // |z|² - 1 = (big - 1)(big + 1) + small², without cancellation.
            return 0.5 * ((big - 1.0) * (big + 1.0) + small * small).ln_1p();
        }
        // Scale so that hypot keeps every digit of subnormal parts and never overflows.
        const SCALE: i32 = 600;
        if big < 2f64.powi(-500) {
            let s = 2f64.powi(SCALE);
            return hypot(ax * s, ay * s).ln() - f64::from(SCALE) * LN_2;
        }
        if big > 2f64.powi(1000) {
            let s = 2f64.powi(-SCALE);
            return hypot(ax * s, ay * s).ln() + f64::from(SCALE) * LN_2;
        }
        hypot(ax, ay).ln()
    }

    /// The principal logarithm: `log|z| + i arg z`; `log(-0 + 0i)` is `-inf + pi i`.
    pub fn log(z: C) -> C {
        c(log_abs(z.re, z.im), z.im.atan2(z.re))
    }

    /// `log(z) * log10(e)`: numpy multiplies (dividing by `ln 10` differs in the last place,
    /// and `log10(1e300)` would be just below 300).
    pub fn log10(z: C) -> C {
        let l = log(z);
        c(l.re * LOG10_E, l.im * LOG10_E)
    }

    /// The principal square root (Kahan's algorithm): the real part is never negative, the
    /// imaginary part has the sign of `z.im` (so `sqrt(-4 - 0i)` is `-2i`).
    pub fn sqrt(z: C) -> C {
        let (x, y) = (z.re, z.im);
        if x == 0.0 && y == 0.0 {
            return c(0.0, y);
        }
        if y.is_infinite() {
            return c(f64::INFINITY, y);
        }
        if x.is_nan() {
            return c(x, f64::NAN);
        }
        if x.is_infinite() {
            return match (x > 0.0, y.is_nan()) {
                (true, true) => c(x, y),
                (true, false) => c(x, 0.0f64.copysign(y)),
                // glibc's csqrt (numpy's) takes the infinity's sign from y, NaN or not.
                (false, true) => c(f64::NAN, f64::INFINITY.copysign(y)),
                (false, false) => c(0.0, f64::INFINITY.copysign(y)),
            };
        }
        if y.is_nan() {
            return c(f64::NAN, f64::NAN);
        }
        // Scale huge and tiny arguments (sqrt halves the exponent: scale by even powers of 2).
        let (ax, ay) = (x.abs(), y.abs());
        let (scale, unscale) = if ax.max(ay) > 2f64.powi(1000) {
            (2f64.powi(-2), 2.0)
        } else if ax.max(ay) < 2f64.powi(-1000) {
            (2f64.powi(108), 2f64.powi(-54))
        } else {
            (1.0, 1.0)
        };
        let (sx, sy) = (ax * scale, ay * scale);
        // `t * unscale` is exact: it is at least sqrt(2^-1074 / 2), far from the subnormals.
        let re = (0.5 * (sx + hypot(sx, sy))).sqrt() * unscale;
        // On the imaginary axis both parts are sqrt(|y| / 2), rounded once (as glibc's csqrt).
        // Elsewhere the other part is |y| / 2re, divided unscaled so that it rounds once: a
        // subnormal quotient computed scaled and then unscaled rounds twice (`sqrt(1e305 +
        // 1e-160j)` lost its last digits).
        let im = if x == 0.0 { re } else { ay / (2.0 * re) };
        if x >= 0.0 { c(re, im.copysign(y)) } else { c(im, re.copysign(y)) }
    }

    /// `(sinh x, cosh x)` halves of `e^|x|` for large `|x|` times `m`, without overflowing early:
    /// `m * e^|x| / 2`.
    fn half_exp_times(ax: f64, m: f64) -> f64 {
        let h = (0.5 * ax).exp();
        (m * h) * (0.5 * h)
    }

    /// `sinh z = sinh x cos y + i cosh x sin y`.
    pub fn sinh(z: C) -> C {
        let (x, y) = (z.re, z.im);
        if y == 0.0 {
            return c(x.sinh(), y);
        }
        if !y.is_finite() {
            return match x {
                _ if x == 0.0 => c(x, f64::NAN),
                _ if x.is_infinite() => c(f64::INFINITY, f64::NAN),
                _ => c(f64::NAN, f64::NAN),
            };
        }
        if x.is_finite() && x.abs() > 709.0 {
            let ax = x.abs();
            return c(half_exp_times(ax, y.cos()) * 1.0f64.copysign(x), half_exp_times(ax, y.sin()));
        }
        c(x.sinh() * y.cos(), x.cosh() * y.sin())
    }

    /// `cosh z = cosh x cos y + i sinh x sin y`.
    pub fn cosh(z: C) -> C {
        let (x, y) = (z.re, z.im);
        if y == 0.0 {
            // The imaginary part is sinh(x) * 0: a zero with the sign of x * y.
            let im = if x.is_nan() { y } else { 0.0f64.copysign(x) * y };
            return c(x.cosh(), im);
        }
        if !y.is_finite() {
            return if x.is_infinite() {
                c(f64::INFINITY, f64::NAN)
            } else {
                c(f64::NAN, if x == 0.0 { 0.0 } else { f64::NAN })
            };
        }
        if x.is_finite() && x.abs() > 709.0 {
            let ax = x.abs();
            return c(half_exp_times(ax, y.cos()), half_exp_times(ax, y.sin()) * 1.0f64.copysign(x));
        }
        c(x.cosh() * y.cos(), x.sinh() * y.sin())
    }

    /// `tanh z`, by Kahan's formula (no cancellation near the poles of `tan`).
    pub fn tanh(z: C) -> C {
        let (x, y) = (z.re, z.im);
        if x.is_nan() {
            return if y == 0.0 { c(x, y) } else { c(f64::NAN, f64::NAN) };
        }
        if x.is_infinite() {
            // The sign of `sin 2y`, from `sin y cos y` as glibc's `ctanh` (numpy's) takes it:
            // `2y` overflows past 2^1023, and `sin(±inf)` is a NaN of no defined sign.
            let im = if y.is_finite() { 0.0f64.copysign(y.sin() * y.cos()) } else { 0.0f64.copysign(y) };
            return c(1.0f64.copysign(x), im);
        }
        if !y.is_finite() {
            return if x == 0.0 { c(x, f64::NAN) } else { c(f64::NAN, f64::NAN) };
        }
        if x.abs() >= 22.0 {
            let e = (-2.0 * x.abs()).exp();
            return c(1.0f64.copysign(x), 4.0 * y.sin() * y.cos() * e);
        }
        let t = y.tan();
        let beta = 1.0 + t * t;
        let s = x.sinh();
        let rho = (1.0 + s * s).sqrt();
        let denom = 1.0 + beta * s * s;
        c(beta * rho * s / denom, t / denom)
    }

    /// `(y, x)` for `x + iy`: `sin` and `tan` are `sinh` and `tanh` with the parts swapped
    /// (`sin z = -i sinh(iz)`), which keeps Annex G's signs where `-i` would flip an infinity.
    fn swap(z: C) -> C {
        c(z.im, z.re)
    }

    /// `sin z`: `sinh` of the swapped argument, swapped back.
    pub fn sin(z: C) -> C {
        swap(sinh(swap(z)))
    }

    /// `cos z = cosh(i z)`.
    pub fn cos(z: C) -> C {
        cosh(times_i(z))
    }

    /// `tan z`: `tanh` of the swapped argument, swapped back.
    pub fn tan(z: C) -> C {
        swap(tanh(swap(z)))
    }

    /// Annex G's `casinh` where a part is infinite or NaN (`None` for finite arguments).
    fn asinh_special(z: C) -> Option<C> {
        let (x, y) = (z.re, z.im);
        if x.is_finite() && y.is_finite() {
            return None;
        }
        let (ax, ay) = (x.abs(), y.abs());
        let w = if ax.is_infinite() && ay.is_infinite() {
            c(f64::INFINITY, FRAC_PI_4)
        } else if ax.is_infinite() {
            c(f64::INFINITY, if ay.is_nan() { f64::NAN } else { 0.0 })
        } else if ay.is_infinite() {
            c(f64::INFINITY, if ax.is_nan() { f64::NAN } else { FRAC_PI_2 })
        } else if ax.is_nan() {
            c(f64::NAN, if y == 0.0 { 0.0 } else { f64::NAN })
        } else {
            c(f64::NAN, f64::NAN)
        };
        // Odd in x, and conj(asinh z) = asinh(conj z); NaNs keep no sign.
        let sign = |v: f64, s: f64| if v.is_nan() { v } else { v.copysign(s) };
        Some(c(sign(w.re, x), sign(w.im, y)))
    }

    /// `asinh z` for huge `|z|`: `log(2z)` (the neglected term is below `1/|z|²`).
    fn asinh_huge(z: C) -> C {
        let w = log(c(z.re.abs(), z.im.abs()));
        c((w.re + LN_2).copysign(z.re), w.im.copysign(z.im))
    }

    /// Beyond this `|z|`, [`asinh_huge`] is exact to double precision (and the products in
    /// Kahan's formulas could overflow).
    const HUGE: f64 = 1e150;

    fn is_huge(z: C) -> bool {
        z.re.abs() > HUGE || z.im.abs() > HUGE
    }

    /// `1 - z` with the real 1 (Kahan: the imaginary part is `-y`, so that the signed zero of
    /// `y` picks the side of a branch cut).
    fn one_minus(z: C) -> C {
        c(1.0 - z.re, -z.im)
    }

    /// `1 + z` with the real 1.
    fn one_plus(z: C) -> C {
        c(1.0 + z.re, z.im)
    }

    /// `arcsin z` (Kahan): `atan2(x, Re(√(1-z)√(1+z))) + i asinh(Im(conj(√(1-z))√(1+z)))`;
    /// the branch cuts `|x| > 1, y = ±0` follow the sign of `y`.
    pub fn asin(z: C) -> C {
        let iz = times_i(z);
        if let Some(w) = asinh_special(iz) {
            return times_minus_i(w);
        }
        if is_huge(z) {
            return times_minus_i(asinh_huge(iz));
        }
        if let Some((x, im)) = tiny_im_asin(z) {
            return c(x.asin(), im);
        }
        let (s1, s2) = (sqrt(one_minus(z)), sqrt(one_plus(z)));
        let re = z.re.atan2(mul(s1, s2).re);
        let im = mul(s1.conj(), s2).im.asinh();
        c(re, im)
    }

    /// Below this `|Im z|` (with `|Re z| < 1`), [`asin`] and [`acos`] use their first-order
    /// forms ([`tiny_im_asin`]): Kahan's formulas halve and divide `Im z` on the way, which a
    /// subnormal `Im z` does not survive (`asinh(5e-324)` came out 0).
    const TINY_IM: f64 = 2.409919865102884e-181; // 2^-600

    /// `asin z` for `|Re z| < 1` and `0 < |Im z| <` [`TINY_IM`]: `asin x + i y / √((1 - x)(1 + x))`,
    /// to double precision (the next terms are `y²` smaller than these, below 2^-1100 of them);
    /// `None` for other `z`. `acos z` is `acos x - i y / √((1 - x)(1 + x))` there.
    fn tiny_im_asin(z: C) -> Option<(f64, f64)> {
        (z.re.abs() < 1.0 && z.im != 0.0 && z.im.abs() < TINY_IM)
            .then(|| (z.re, z.im / ((1.0 - z.re) * (1.0 + z.re)).sqrt()))
    }

    /// `arccos z` (Kahan): `2 atan2(Re √(1-z), Re √(1+z)) + i asinh(Im(conj(√(1+z))√(1-z)))`.
    pub fn acos(z: C) -> C {
        let (x, y) = (z.re, z.im);
        if !x.is_finite() || !y.is_finite() {
            // Annex G's cacos for Im z >= 0; cacos(conj z) = conj(cacos z).
            let w = if x.is_nan() {
                c(f64::NAN, if y.is_infinite() { f64::NEG_INFINITY } else { f64::NAN })
            } else if y.is_nan() {
                if x.is_infinite() {
                    c(f64::NAN, f64::NEG_INFINITY)
                } else if x == 0.0 {
                    c(FRAC_PI_2, f64::NAN)
                } else {
                    c(f64::NAN, f64::NAN)
                }
            } else if y.is_infinite() {
                let re = match (x.is_infinite(), x > 0.0) {
                    (true, true) => FRAC_PI_4,
                    (true, false) => 3.0 * FRAC_PI_4,
                    (false, _) => FRAC_PI_2,
                };
                c(re, f64::NEG_INFINITY)
            } else {
                c(if x > 0.0 { 0.0 } else { PI }, f64::NEG_INFINITY)
            };
            // The sign bit of a NaN `y` counts too, as in glibc's cacos (numpy's).
            return if y.is_sign_negative() { w.conj() } else { w };
        }
        if is_huge(z) {
            // acos z = -i log(2z) + O(1/z²) (upper half plane; conjugate below).
            let l = log(c(x, y.abs()));
            return c(y.abs().atan2(x), -(l.re + LN_2).copysign(y));
        }
        if let Some((x, im)) = tiny_im_asin(z) {
            return c(x.acos(), -im);
        }
        let (s1, s2) = (sqrt(one_minus(z)), sqrt(one_plus(z)));
        // Right of the cut's branch point, `Re √(1-z)` is `|y| / 2√(x-1)`, which a subnormal
        // `y` does not survive (`arccos(2 + 5e-324j)` had real part 0); the real part is
        // `|y| / √(x² - 1)` there, to double precision (see `tiny_im_asin`).
        let re = if x > 1.0 && y != 0.0 && y.abs() < TINY_IM {
            y.abs() / ((x - 1.0) * (x + 1.0)).sqrt()
        } else {
            2.0 * s1.re.atan2(s2.re)
        };
        c(re, mul(s2.conj(), s1).im.asinh())
    }

    /// `atanh z` for finite `z`: `log1p(4x / ((1-x)² + y²)) / 4 + i atan2(2y, (1-x)(1+x) - y²) / 2`,
    /// computed for `|x|, |y|` and given the signs of `x` and `y` (the cuts `|x| > 1, y = ±0` take
    /// the sign of `y`).
    pub fn atanh(z: C) -> C {
        let (x, y) = (z.re, z.im);
        let (ax, ay) = (x.abs(), y.abs());
        let sign = |v: f64, s: f64| if v.is_nan() { v } else { v.copysign(s) };
        if ax.is_nan() || ay.is_nan() {
            let w = if ay.is_infinite() {
                c(0.0, FRAC_PI_2)
            } else if ax.is_infinite() || (ax == 0.0 && ay.is_nan()) {
                c(0.0, f64::NAN)
            } else {
                c(f64::NAN, f64::NAN)
            };
            return c(sign(w.re, x), sign(w.im, y));
        }
        if ax.is_infinite() || ay.is_infinite() || ax > HUGE || ay > HUGE {
            // atanh z = 1/z + ... → 0 + i π/2 (sign of y).
            let h = hypot(ax, ay);
            let re = if h.is_infinite() { 0.0 } else { (ax / h) / h };
            return c(re.copysign(x), FRAC_PI_2.copysign(y));
        }
        let d = (1.0 - ax) * (1.0 - ax) + ay * ay;
        let re = if d > 1e-280 {
            0.25 * (4.0 * ax / d).ln_1p()
        } else {
            // 4x/d is huge (or d underflows): log1p(v) is log(v), with log d from the scaled |1-x+iy|.
            0.25 * ((4.0 * ax).ln() - 2.0 * log_abs(1.0 - ax, ay))
        };
        let im = 0.5 * (2.0 * ay).atan2((1.0 - ax) * (1.0 + ax) - ay * ay);
        c(re.copysign(x), im.copysign(y))
    }

    /// `arcsinh z`: numpy's `casin` is `casinh` of the swapped parts, swapped back; this is the
    /// same identity read the other way.
    pub fn asinh(z: C) -> C {
        swap(asin(swap(z)))
    }

    /// `arccosh z` from `arccos z` (FreeBSD's `cacosh`): `±i acos z` with the sign that makes the
    /// real part non-negative, the imaginary part taking the sign of `Im z`, and Annex G's NaN
    /// cases (where glibc, which numpy calls, departs from FreeBSD at `±0 + i NaN`).
    pub fn acosh(z: C) -> C {
        let w = acos(z);
        let (rx, ry) = (w.re, w.im);
        if rx.is_nan() && ry.is_nan() {
            return c(ry, rx);
        }
        if rx.is_nan() {
            return c(ry.abs(), rx);
        }
        if ry.is_nan() {
            // acos(±0 + i NaN) = π/2 + i NaN; Annex G (and glibc, numpy's) give NaN + iπ/2.
            return c(ry, rx);
        }
        c(ry.abs(), rx.copysign(z.im))
    }

    /// `log(z) * log2(e)`, as numpy computes `log2` of complex numbers.
    pub fn log2(z: C) -> C {
        let l = log(z);
        c(l.re * std::f64::consts::LOG2_E, l.im * std::f64::consts::LOG2_E)
    }

    /// numpy's complex `log1p`: `log|1 + z| + i atan2(y, 1 + x)` (`nc_log1p`).
    pub fn log1p(z: C) -> C {
        let re = 1.0 + z.re;
        c(hypot(re, z.im).ln(), z.im.atan2(re))
    }

    /// numpy's complex `expm1` (`nc_expm1`): `expm1(x) cos y - 2 sin²(y/2) + i exp(x) sin y`.
    pub fn expm1(z: C) -> C {
        let a = (z.im / 2.0).sin();
        c(z.re.exp_m1() * z.im.cos() - 2.0 * a * a, z.re.exp() * z.im.sin())
    }

    /// `arctan z = -i atanh(i z)`.
    pub fn atan(z: C) -> C {
        times_minus_i(atanh(times_i(z)))
    }

    /// `a ** b` as numpy computes it (`npy_cpow`): `b == 0` gives 1; `0 ** b` is 0 when `Re b > 0`
    /// and NaN otherwise; integer exponents in (-100, 100) by repeated multiplication
    /// (exact for small ones), the same multiplications as numpy; otherwise glibc's `cpow`,
    /// `exp(b log a)` with C's complex product ([`mul_annex_g`]).
    pub fn pow(a: C, b: C) -> C {
        let one = c(1.0, 0.0);
        if b.re == 0.0 && b.im == 0.0 {
            return one;
        }
        if a.re == 0.0 && a.im == 0.0 {
            return if b.re > 0.0 { c(0.0, 0.0) } else { c(f64::NAN, f64::NAN) };
        }
        if b.im == 0.0 && b.re == b.re.trunc() && b.re.abs() < 100.0 {
            let n = b.re as i64;
            return match n {
                1 => a,
                2 => mul(a, a),
                3 => mul(mul(a, a), a),
                _ => {
                    let (mut acc, mut p, k) = (one, a, n.unsigned_abs());
                    let mut mask = 1u64;
                    loop {
                        if k & mask != 0 {
                            acc = mul(acc, p);
                        }
                        mask <<= 1;
                        if k < mask {
                            break;
                        }
                        p = mul(p, p);
                    }
                    if n < 0 { div(one, acc) } else { acc }
                }
            };
        }
        exp(mul_annex_g(b, log(a)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcd_and_lcm_of_magnitudes_are_the_definitions() {
        for a in 0u64..60 {
            for b in 0u64..60 {
                // The largest common divisor by trial; 0 only for gcd(0, 0).
                let by_trial = (1..=a.max(b)).rev().find(|d| a % d == 0 && b % d == 0).unwrap_or(0);
                assert_eq!(gcd_magnitudes(a, b), by_trial, "gcd({a}, {b})");
                let least = (1..=a * b).find(|m| m % a == 0 && m % b == 0).unwrap_or(0);
                assert_eq!(lcm_magnitudes(a, b), if a == 0 || b == 0 { 0 } else { least }, "lcm({a}, {b})");
            }
        }
        assert_eq!(gcd_magnitudes(1 << 63, 6), 2);
        assert_eq!(lcm_magnitudes(1 << 63, 6), (1u64 << 62).wrapping_mul(6));
    }

    /// `x · 2ⁿ` rounded to nearest, ties to even, from integers alone: `x` is `m · 2^e` with an
    /// integer `m`, and the result's grid below 2^-1022 is that of 2^-1074.
    fn ldexp_by_integers(x: f64, n: i64) -> f64 {
        let (m, e) = {
            let bits = x.to_bits();
            let biased = ((bits >> 52) & 0x7ff) as i64;
            let fraction = bits & ((1 << 52) - 1);
            if biased == 0 { (fraction, -1074) } else { (fraction | (1 << 52), biased - 1075) }
        };
        let sign = if x.is_sign_negative() { -1.0 } else { 1.0 };
        let exponent = e + n;
        if exponent >= -1074 {
            // On the grid of 2^-1074 with at most 53 significant bits: every halving is exact,
            // and doubling is exact until it overflows to infinity.
            let mut v = m as f64;
            for _ in 0..exponent.clamp(0, 3000) {
                v *= 2.0;
            }
            for _ in 0..(-exponent).max(0) {
                v /= 2.0;
            }
            return sign * v;
        }
        let shift = (-1074 - exponent) as u32;
        if shift >= 64 {
            return sign * 0.0;
        }
        let (quotient, remainder) = (m >> shift, m & ((1u64 << shift) - 1));
        let half = 1u64 << (shift - 1);
        let rounded =
            if remainder > half || (remainder == half && quotient & 1 == 1) { quotient + 1 } else { quotient };
        sign * rounded as f64 * f64::from_bits(1)
    }

    #[test]
    fn ldexp_rounds_once_and_frexp_inverts_it() {
        let values = [1.0, -1.5, 3.0, 0.7, 1.0 + f64::EPSILON, f64::MAX, f64::MIN_POSITIVE, 5e-324, -1e-310, 2.5e-308];
        for &x in &values {
            for n in [-2100, -1100, -1075, -1074, -1073, -1060, -1022, -53, -1, 0, 1, 52, 1023, 1024, 2046, 2100] {
                let (got, want) = (ldexp(x, n as f64), ldexp_by_integers(x, n));
                assert_eq!(got.to_bits(), want.to_bits(), "ldexp({x:e}, {n}) = {got:e}, want {want:e}");
            }
            let (m, e) = frexp(x);
            assert!((0.5..1.0).contains(&m.abs()), "frexp({x:e}) = ({m}, {e})");
            assert_eq!(ldexp(m, e.into()).to_bits(), x.to_bits(), "frexp({x:e}) = ({m}, {e})");
        }
        assert_eq!(ldexp(1.5, -1074.0), 2.0 * 5e-324, "a tie rounds to even");
        assert!(ldexp(1.0, 1e30).is_infinite() && ldexp(-0.0, 5.0).is_sign_negative() && ldexp(f64::NAN, 1.0).is_nan());
        for special in [0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(frexp(special), (special, 0));
        }
    }

    /// The canonical tree written level by level, as the module docs define it.
    fn level_by_level(mut level: Vec<String>) -> Option<String> {
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|p| if p.len() == 2 { format!("({}+{})", p[0], p[1]) } else { p[0].clone() })
                .collect();
        }
        level.pop()
    }

    fn shape(blocks: impl IntoIterator<Item = String>) -> Option<String> {
        let mut tree = BlockTree::new();
        let add = &mut |a: String, b: String| Ok::<_, ()>(format!("({a}+{b})"));
        for b in blocks {
            tree.push(b, add).unwrap();
        }
        tree.finish(add).unwrap()
    }

    #[test]
    fn the_streaming_tree_is_the_level_by_level_tree() {
        for n in 0..600 {
            let blocks: Vec<String> = (0..n).map(|k| format!("b{k}")).collect();
            assert_eq!(shape(blocks.clone()), level_by_level(blocks), "{n} blocks");
        }
    }

    #[test]
    fn aligned_runs_of_blocks_are_subtrees() {
        // What threads and GPU workgroups rely on: the trees of aligned runs of 2^k blocks (the
        // last run shorter), combined by the tree, are the tree of all blocks.
        for n in 1..300 {
            let blocks: Vec<String> = (0..n).map(|k| format!("b{k}")).collect();
            for k in 0..6 {
                let runs = blocks.chunks(1 << k).map(|run| shape(run.to_vec()).unwrap());
                assert_eq!(shape(runs), shape(blocks.clone()), "{n} blocks, runs of {}", 1 << k);
            }
        }
    }

    /// Within two ulps (the C library numpy calls and these algorithms may differ in the last place).
    fn close(got: f64, expected: f64) -> bool {
        (got - expected).abs() <= 2.0 * f64::EPSILON * expected.abs()
    }

    /// Expected values from numpy 2.4 (`np.arcsinh`, `np.arccosh`, ... on float64 scalars).
    #[test]
    fn inverse_hyperbolic_functions_match_numpy_at_the_extremes() {
        let max = f64::MAX;
        assert!(close(asinh(max), 710.475860073944));
        assert!(close(acosh(max), 710.475860073944));
        assert_eq!(asinh(1e-300), 1e-300);
        assert!(close(asinh(-0.3), -0.29567304756342244));
        assert!(close(acosh(1.0000001), 0.0004472135919037347));
        assert!(acosh(0.5).is_nan());
        assert!(close(atanh(0.5), 0.5493061443340549));
        assert_eq!(atanh(-1.0), f64::NEG_INFINITY);
        assert!(atanh(1.5).is_nan());
        assert!(asinh(-0.0).is_sign_negative());
    }

    #[test]
    fn logaddexp_keeps_infinities_and_large_values() {
        assert_eq!(logaddexp(f64::NEG_INFINITY, f64::NEG_INFINITY), f64::NEG_INFINITY);
        assert!(close(logaddexp(1000.0, 1000.0), 1000.6931471805599));
        assert_eq!(logaddexp(f64::INFINITY, f64::NEG_INFINITY), f64::INFINITY);
        assert!(logaddexp(f64::NAN, 1.0).is_nan());
    }

    #[test]
    fn nextafter_steps_one_ulp_and_keeps_the_target_when_equal() {
        assert_eq!(nextafter(0.0, -1.0), -5e-324);
        assert!(nextafter(0.0, -0.0).is_sign_negative());
        assert_eq!(nextafter_f32(1.0, 2.0), 1.000_000_1);
        assert_eq!(nextafter(1.0, 0.0), 1.0 - f64::EPSILON / 2.0);
        assert!(nextafter(f64::NAN, 0.0).is_nan());
    }
}
