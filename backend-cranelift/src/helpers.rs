//! Functions JIT code calls for what has no Cranelift instruction: transcendental functions (the
//! platform's libm, through Rust's `f64` methods; float64 `sin` and `cos` are inline polynomials,
//! see `codegen::trig`, and come here only for huge arguments), numpy's float `//` and `%`, integer
//! powers and complex arithmetic beyond `+ - *`. numpy's semantics come from
//! `pytato_runtime::math`, which the interpreter calls too.
//!
//! Every helper works in `f64` (and complex in pairs of `f64`): `float32` and `complex64` values
//! are widened before the call and narrowed after, which is at least as accurate as computing in
//! single precision. Complex results are written through an out-pointer to two `f64`s, which keeps
//! every signature within what any calling convention returns in registers.

use num_complex::Complex64;
use pytato_core::DType;
use pytato_core::expr::Func;
use pytato_runtime::math::{self, complex};

/// A real function of one `f64`, by its address.
pub(crate) fn real_unary(func: Func) -> Option<usize> {
    use Func::*;
    let f: extern "C" fn(f64) -> f64 = match func {
        Exp => exp,
        Log => ln,
        Log10 => log10,
        Sin => sin,
        Cos => cos,
        Tan => tan,
        Arcsin => asin,
        Arccos => acos,
        Arctan => atan,
        Sinh => sinh,
        Cosh => cosh,
        Tanh => tanh,
        Arcsinh => asinh,
        Arccosh => acosh,
        Arctanh => atanh,
        Expm1 => expm1,
        Log1p => log1p,
        Log2 => log2,
        Cbrt => cbrt,
        Exp2 => exp2,
        _ => return None,
    };
    Some(f as usize)
}

macro_rules! real_unary_helpers {
    ($($name:ident => $method:ident),* $(,)?) => {$(
        extern "C" fn $name(x: f64) -> f64 {
            x.$method()
        }
    )*};
}

real_unary_helpers! {
    exp => exp, ln => ln, log10 => log10, sin => sin, cos => cos, tan => tan, asin => asin,
    acos => acos, atan => atan, sinh => sinh, cosh => cosh, tanh => tanh, expm1 => exp_m1,
    log1p => ln_1p, log2 => log2, cbrt => cbrt, exp2 => exp2,
}

extern "C" fn asinh(x: f64) -> f64 {
    math::asinh(x)
}

extern "C" fn acosh(x: f64) -> f64 {
    math::acosh(x)
}

extern "C" fn atanh(x: f64) -> f64 {
    math::atanh(x)
}

/// The `float16` with bits `bits` (in the low 16 bits) as `float32`: exact.
pub(crate) extern "C" fn f16_to_f32(bits: u32) -> f32 {
    f32::from_bits(pytato_core::half_float::f16_bits_to_f32_bits(bits as u16))
}

/// `x` rounded to `float16` (numpy's rounding), its bits in the low 16 bits.
pub(crate) extern "C" fn f32_to_f16(x: f32) -> u32 {
    pytato_core::half_float::f32_bits_to_f16_bits(x.to_bits()).into()
}

/// `x` rounded to `float16` in one step (numpy's rounding), its bits in the low 16 bits.
pub(crate) extern "C" fn f64_to_f16(x: f64) -> u32 {
    pytato_core::half_float::f64_bits_to_f16_bits(x.to_bits()).into()
}

/// `hypot(a, b)` as numpy's (glibc's; an infinite argument gives `inf`, even with a NaN): see
/// `pytato_runtime::math::hypot`.
pub(crate) extern "C" fn hypot(a: f64, b: f64) -> f64 {
    pytato_runtime::math::hypot(a, b)
}

/// numpy's `logaddexp`.
pub(crate) extern "C" fn logaddexp(a: f64, b: f64) -> f64 {
    math::logaddexp(a, b)
}

/// `nextafter` in double precision.
pub(crate) extern "C" fn nextafter(a: f64, b: f64) -> f64 {
    math::nextafter(a, b)
}

/// `nextafter` in single precision, for float32 values passed widened (exactly) to `f64`.
pub(crate) extern "C" fn nextafter_f32(a: f64, b: f64) -> f64 {
    math::nextafter_f32(a as f32, b as f32).into()
}

/// `x ** y` for floats.
pub(crate) extern "C" fn pow(x: f64, y: f64) -> f64 {
    x.powf(y)
}

/// `arctan2(y, x)`.
pub(crate) extern "C" fn atan2(y: f64, x: f64) -> f64 {
    y.atan2(x)
}

/// numpy's `floor_divide` for floats.
pub(crate) extern "C" fn floor_div(a: f64, b: f64) -> f64 {
    math::floor_divide(a, b)
}

/// The address of numpy's `floor_divide` for floats of `dtype` (float32 or float64).
pub(crate) fn floor_div_for(dtype: DType) -> usize {
    if dtype == DType::F32 { floor_div_f32 as *const () as usize } else { floor_div as *const () as usize }
}

/// The address of numpy's `remainder` for floats of `dtype` (float32 or float64).
pub(crate) fn remainder_for(dtype: DType) -> usize {
    if dtype == DType::F32 { remainder_f32 as *const () as usize } else { remainder as *const () as usize }
}

/// numpy's `floor_divide` for float32 values (widened to `f64`, exactly): in float32 steps, as
/// numpy's; the float32 result widened.
pub(crate) extern "C" fn floor_div_f32(a: f64, b: f64) -> f64 {
    f64::from(math::floor_divide(a as f32, b as f32))
}

/// numpy's `remainder` for float32 values (see [`floor_div_f32`]).
pub(crate) extern "C" fn remainder_f32(a: f64, b: f64) -> f64 {
    f64::from(math::remainder(a as f32, b as f32))
}

/// C's `fmod` (exact: float32 arguments widened to `f64` give float32's result).
pub(crate) extern "C" fn fmod(a: f64, b: f64) -> f64 {
    a % b
}

/// numpy's `gcd` on magnitudes (`math::gcd_magnitudes`).
pub(crate) extern "C" fn gcd(a: u64, b: u64) -> u64 {
    math::gcd_magnitudes(a, b)
}

/// numpy's `lcm` on magnitudes (`math::lcm_magnitudes`).
pub(crate) extern "C" fn lcm(a: u64, b: u64) -> u64 {
    math::lcm_magnitudes(a, b)
}

/// C's `ldexp` with an integral float exponent (`math::ldexp`).
pub(crate) extern "C" fn ldexp(x: f64, n: f64) -> f64 {
    math::ldexp(x, n)
}

/// The mantissa of C's `frexp`.
pub(crate) extern "C" fn frexp_mantissa(x: f64) -> f64 {
    math::frexp(x).0
}

/// The exponent of C's `frexp`, sign-extended to 64 bits.
pub(crate) extern "C" fn frexp_exponent(x: f64) -> i64 {
    math::frexp(x).1.into()
}

/// numpy's `remainder` for floats.
pub(crate) extern "C" fn remainder(a: f64, b: f64) -> f64 {
    math::remainder(a, b)
}

/// `base ** exp` for signed integers, wrapping; negative exponents truncate (0 unless the base
/// is 1 or -1). Narrower signed dtypes are computed here after sign extension and wrapped by the
/// caller, which gives the same bits.
pub(crate) extern "C" fn int_pow(base: i64, exp: i64) -> i64 {
    if exp < 0 {
        return match base {
            1 => 1,
            -1 if exp % 2 == 0 => 1,
            -1 => -1,
            _ => 0,
        };
    }
    uint_pow(base as u64, exp as u64) as i64
}

/// `base ** exp` for unsigned integers, wrapping.
pub(crate) extern "C" fn uint_pow(mut base: u64, mut exp: u64) -> u64 {
    let mut acc: u64 = 1;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exp >>= 1;
    }
    acc
}

/// Writes `z` to `out[0..2]`.
///
/// # Safety
/// `out` points to two writable `f64`s: JIT code passes a 16-byte stack slot.
unsafe fn write_complex(out: *mut f64, z: Complex64) {
    // SAFETY: the caller's contract; see above.
    unsafe {
        *out = z.re;
        *out.add(1) = z.im;
    }
}

/// numpy's complex64 `absolute` (`complex::abs` in single precision) of the parts `re`, `im`
/// (float32 values, passed widened).
pub(crate) extern "C" fn complex64_abs(re: f64, im: f64) -> f64 {
    complex::abs(num_complex::Complex32::new(re as f32, im as f32)).into()
}

/// A complex function of one complex argument; `func` is the index of the function in
/// [`Func::ALL`]. `abs` writes the modulus to `out[0]` and 0 to `out[1]`.
///
/// # Safety
/// `out` points to two writable `f64`s.
pub(crate) unsafe extern "C" fn complex_unary(func: i64, re: f64, im: f64, out: *mut f64) {
    use Func::*;
    let z = Complex64::new(re, im);
    let r = match Func::ALL.get(func as usize) {
        Some(Abs) => Complex64::new(complex::abs(z), 0.0),
        Some(Sqrt) => complex::sqrt(z),
        Some(Exp) => complex::exp(z),
        Some(Log) => complex::log(z),
        Some(Log10) => complex::log10(z),
        Some(Sin) => complex::sin(z),
        Some(Cos) => complex::cos(z),
        Some(Tan) => complex::tan(z),
        Some(Arcsin) => complex::asin(z),
        Some(Arccos) => complex::acos(z),
        Some(Arctan) => complex::atan(z),
        Some(Sinh) => complex::sinh(z),
        Some(Cosh) => complex::cosh(z),
        Some(Tanh) => complex::tanh(z),
        Some(Arcsinh) => complex::asinh(z),
        Some(Arccosh) => complex::acosh(z),
        Some(Arctanh) => complex::atanh(z),
        Some(Expm1) => complex::expm1(z),
        Some(Log1p) => complex::log1p(z),
        Some(Log2) => complex::log2(z),
        Some(Rint) => Complex64::new(z.re.round_ties_even(), z.im.round_ties_even()),
        // The code generator calls this only for the functions above.
        _ => Complex64::new(f64::NAN, f64::NAN),
    };
    // SAFETY: the caller's contract.
    unsafe { write_complex(out, r) }
}

/// `a / b` for complex numbers, numpy's algorithm (`pytato_runtime::math::complex::div`).
///
/// # Safety
/// `out` points to two writable `f64`s.
pub(crate) unsafe extern "C" fn complex_div(ar: f64, ai: f64, br: f64, bi: f64, out: *mut f64) {
    let r = complex::div(Complex64::new(ar, ai), Complex64::new(br, bi));
    // SAFETY: the caller's contract.
    unsafe { write_complex(out, r) }
}

/// `a / b` for complex64 numbers passed as `f64`s (exact), divided in single precision as numpy
/// does.
///
/// # Safety
/// `out` points to two writable `f64`s.
pub(crate) unsafe extern "C" fn complex64_div(ar: f64, ai: f64, br: f64, bi: f64, out: *mut f64) {
    let narrow = |re: f64, im: f64| num_complex::Complex32::new(re as f32, im as f32);
    let r = complex::div(narrow(ar, ai), narrow(br, bi));
    // SAFETY: the caller's contract.
    unsafe { write_complex(out, Complex64::new(r.re.into(), r.im.into())) }
}

/// `a ** b` for complex numbers, numpy's rules (`pytato_runtime::math::complex::pow`).
///
/// # Safety
/// `out` points to two writable `f64`s.
pub(crate) unsafe extern "C" fn complex_pow(ar: f64, ai: f64, br: f64, bi: f64, out: *mut f64) {
    let r = complex::pow(Complex64::new(ar, ai), Complex64::new(br, bi));
    // SAFETY: the caller's contract.
    unsafe { write_complex(out, r) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_floor_division_follows_numpy() {
        // Expected values from numpy 2: np.floor_divide / np.remainder.
        assert_eq!(floor_div(-7.5, 2.0), -4.0);
        assert_eq!(remainder(-7.5, 2.0), 0.5);
        assert_eq!(floor_div(7.0, -2.0), -4.0);
        assert_eq!(remainder(7.0, -2.0), -1.0);
        assert!(remainder(1.0, 0.0).is_nan());
        assert_eq!(floor_div(1.0, 0.0), f64::INFINITY);
    }

    #[test]
    fn integer_powers_wrap_and_truncate() {
        assert_eq!(int_pow(3, 4), 81);
        assert_eq!(int_pow(2, 64), 0);
        assert_eq!(int_pow(2, -1), 0);
        assert_eq!(int_pow(-1, -3), -1);
        assert_eq!(int_pow(-1, -4), 1);
        assert_eq!(uint_pow(u64::MAX, 2), 1);
    }

    #[test]
    fn complex_helpers_write_both_parts() {
        let mut out = [0.0f64; 2];
        // SAFETY: `out` holds two f64s.
        unsafe { complex_div(1.0, 1.0, 0.0, 2.0, out.as_mut_ptr()) };
        assert_eq!(out, [0.5, -0.5]);
        // SAFETY: as above.
        unsafe {
            complex_unary(Func::ALL.iter().position(|&f| f == Func::Abs).unwrap() as i64, 3.0, 4.0, out.as_mut_ptr())
        };
        assert_eq!(out, [5.0, 0.0]);
    }
}
