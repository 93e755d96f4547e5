//! `float16` conversions with numpy's rounding, bit for bit.
//!
//! `float16` is a storage type here (see [`DType::F16`](crate::DType::F16)): values are widened
//! to `float32` to compute and rounded back after each operation, as numpy's own `float16` loops
//! do. These three conversions are numpy's (`npy_halfbits_to_floatbits`,
//! `npy_floatbits_to_halfbits`, `npy_doublebits_to_halfbits`), ported on bits so that they give
//! the same answer on every CPU and in every backend (the WGSL library ports them again):
//!
//! - rounding is to nearest, ties to even, **directly** from the source precision. `float64` to
//!   `float16` in particular is not `float64 -> float32 -> float16`, which rounds twice and is
//!   wrong near ties (`1 + 2^-11 + 2^-40` is `1 + 2^-10` in numpy, `1` through `float32`); this is
//!   also why `half::f16::from_f64` is not used (it goes through `float32` on CPUs with F16C);
//! - values beyond `65520` become infinities; tiny ones become subnormals or signed zeros;
//! - NaN keeps its sign and the top bits of its payload (a payload that would vanish keeps the
//!   lowest bit set), so no conversion turns a NaN into an infinity.
//!
//! ```
//! use pytato_core::half_float::{f16_from_f64, f16_to_f32};
//! assert_eq!(f16_from_f64(1.0 + 2f64.powi(-11) + 2f64.powi(-40)).to_f64(), 1.0 + 2f64.powi(-10));
//! assert_eq!(f16_from_f64(65520.0).to_f64(), f64::INFINITY);
//! assert_eq!(f16_to_f32(f16_from_f64(-0.0)).to_bits(), (-0.0f32).to_bits());
//! ```

use half::f16;

/// A `float16` widened to `float32`: exact (every `float16` is a `float32`), NaN payloads kept.
pub fn f16_to_f32(h: f16) -> f32 {
    f32::from_bits(f16_bits_to_f32_bits(h.to_bits()))
}

/// [`f16_to_f32`] on bits.
pub fn f16_bits_to_f32_bits(h: u16) -> u32 {
    let h = u32::from(h);
    let sign = (h & 0x8000) << 16;
    let exp = h & 0x7c00;
    let sig = h & 0x03ff;
    match exp {
        0 if sig == 0 => sign,
        0 => {
            // A subnormal: normalize the significand.
            let shift = sig.leading_zeros() - 21; // bits until the leading one reaches bit 10
            let sig = (sig << shift) & 0x03ff;
            let exp = 113 - shift; // 127 - 15 + 1 - shift
            sign | (exp << 23) | (sig << 13)
        }
        0x7c00 => sign | 0x7f80_0000 | (sig << 13),
        _ => sign | ((exp + 0x1c000) << 13) | (sig << 13),
    }
}

/// `x` rounded to the nearest `float16`, ties to even (numpy's `float32` to `float16` cast).
pub fn f16_from_f32(x: f32) -> f16 {
    f16::from_bits(f32_bits_to_f16_bits(x.to_bits()))
}

/// [`f16_from_f32`] on bits.
pub fn f32_bits_to_f16_bits(f: u32) -> u16 {
    let sign = ((f & 0x8000_0000) >> 16) as u16;
    let exp = f & 0x7f80_0000;
    if exp >= 0x4780_0000 {
        // Infinity, NaN, or too large: an infinity (or NaN with the top of its payload).
        let sig = f & 0x007f_ffff;
        if exp == 0x7f80_0000 && sig != 0 {
            let nan = 0x7c00 | (sig >> 13) as u16;
            return sign | if nan == 0x7c00 { 0x7c01 } else { nan };
        }
        return sign | 0x7c00;
    }
    if exp <= 0x3800_0000 {
        // A subnormal float16 or a signed zero.
        if exp < 0x3300_0000 {
            return sign;
        }
        // Shift onto float16's subnormal grid (at most 11 bits are lost, all within `f & 0x7ff`),
        // then round on the 13 bits float32 has beyond float16: add half an ulp unless the value
        // is exactly a tie with an even result.
        let sig = (0x0080_0000 | (f & 0x007f_ffff)) >> (113 - (exp >> 23));
        let tie_even = (sig & 0x3fff) == 0x1000 && (f & 0x7ff) == 0;
        let sig = if tie_even { sig } else { sig + 0x1000 };
        // A carry out of the significand makes the smallest normal, which is right.
        return sign | (sig >> 13) as u16;
    }
    let h_exp = ((exp - 0x3800_0000) >> 13) as u16;
    let mut sig = f & 0x007f_ffff;
    if (sig & 0x3fff) != 0x1000 {
        sig += 0x1000;
    }
    // A carry out of the significand moves to the next binade (or to infinity), which is right.
    sign | (h_exp + (sig >> 13) as u16)
}

/// `x` rounded to the nearest `float16`, ties to even, in one rounding (numpy's `float64` to
/// `float16` cast).
pub fn f16_from_f64(x: f64) -> f16 {
    f16::from_bits(f64_bits_to_f16_bits(x.to_bits()))
}

/// [`f16_from_f64`] on bits.
pub fn f64_bits_to_f16_bits(d: u64) -> u16 {
    let sign = ((d & 0x8000_0000_0000_0000) >> 48) as u16;
    let exp = d & 0x7ff0_0000_0000_0000;
    if exp >= 0x40f0_0000_0000_0000 {
        let sig = d & 0x000f_ffff_ffff_ffff;
        if exp == 0x7ff0_0000_0000_0000 && sig != 0 {
            let nan = 0x7c00 | (sig >> 42) as u16;
            return sign | if nan == 0x7c00 { 0x7c01 } else { nan };
        }
        return sign | 0x7c00;
    }
    if exp <= 0x3f00_0000_0000_0000 {
        if exp < 0x3e60_0000_0000_0000 {
            return sign;
        }
        let e = exp >> 52;
        let sig = 0x0010_0000_0000_0000 | (d & 0x000f_ffff_ffff_ffff);
        // float64 has room to shift the significand left onto float16's subnormal grid (numpy's
        // trick): bit 53 of the shifted value is float16's last bit.
        let sig = sig << (e - 998);
        let half_ulp = 0x0010_0000_0000_0000u64;
        let tie_even = (sig & 0x003f_ffff_ffff_ffff) == half_ulp;
        let sig = if tie_even { sig } else { sig + half_ulp };
        return sign | (sig >> 53) as u16;
    }
    let h_exp = ((exp - 0x3f00_0000_0000_0000) >> 42) as u16;
    let mut sig = d & 0x000f_ffff_ffff_ffff;
    if (sig & 0x0000_07ff_ffff_ffff) != 0x0000_0200_0000_0000 {
        sig += 0x0000_0200_0000_0000;
    }
    sign | (h_exp + (sig >> 42) as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every finite float16, as f64, in increasing order of magnitude (positive ones).
    fn positive_finite() -> impl Iterator<Item = (u16, f64)> {
        (0u16..0x7c00).map(|b| (b, f64::from(f16_to_f32(f16::from_bits(b)))))
    }

    #[test]
    fn widening_is_exact_and_agrees_with_half() {
        for b in 0..=u16::MAX {
            let ours = f16_to_f32(f16::from_bits(b));
            let theirs = f16::from_bits(b).to_f32();
            if theirs.is_nan() {
                assert!(ours.is_nan() && ours.is_sign_negative() == theirs.is_sign_negative(), "{b:#x}");
            } else {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "{b:#x}");
            }
        }
    }

    #[test]
    fn every_float16_and_every_midpoint_round_as_the_definition_says() {
        // Independent oracle: each float16 converts to itself; values just off each midpoint go
        // to the nearer neighbour; exact midpoints go to the even one.
        let values: Vec<(u16, f64)> = positive_finite().collect();
        for w in values.windows(2) {
            let ((lo_bits, lo), (hi_bits, hi)) = (w[0], w[1]);
            let mid = (lo + hi) / 2.0; // exact in f64
            let even = if lo_bits & 1 == 0 { lo_bits } else { hi_bits };
            for (x, want) in
                [(lo, lo_bits), (hi, hi_bits), (mid, even), (mid - mid * 1e-12, lo_bits), (mid + mid * 1e-12, hi_bits)]
            {
                for sign in [1.0, -1.0] {
                    let want = want | if sign < 0.0 { 0x8000 } else { 0 };
                    assert_eq!(f64_bits_to_f16_bits((sign * x).to_bits()), want, "f64 {x:e}");
                    let x32 = (sign * x) as f32;
                    if f64::from(x32) == sign * x {
                        assert_eq!(f32_bits_to_f16_bits(x32.to_bits()), want, "f32 {x:e}");
                    }
                }
            }
        }
    }

    #[test]
    fn float32_rounding_agrees_with_half_everywhere_but_nan_payloads() {
        // half's from_f32 is IEEE rounding (hardware on F16C CPUs); sample the whole range.
        let mut bits = 0u32;
        loop {
            let x = f32::from_bits(bits);
            let ours = f16_from_f32(x);
            let theirs = f16::from_f32(x);
            if x.is_nan() {
                assert!(ours.is_nan());
            } else {
                assert_eq!(ours.to_bits(), theirs.to_bits(), "{x:e} ({bits:#x})");
            }
            let (next, overflow) = bits.overflowing_add(0x1357);
            if overflow {
                break;
            }
            bits = next;
        }
    }

    #[test]
    fn overflow_underflow_and_double_rounding() {
        assert_eq!(f16_from_f64(65519.99).to_f64(), 65504.0);
        assert_eq!(f16_from_f64(65520.0).to_f64(), f64::INFINITY);
        assert_eq!(f16_from_f64(-1e300).to_f64(), f64::NEG_INFINITY);
        assert_eq!(f16_from_f64(2f64.powi(-25)).to_bits(), 0); // a tie, to even (zero)
        assert_eq!(f16_from_f64(2f64.powi(-25) * 1.000001).to_bits(), 1);
        assert_eq!(f16_from_f64(-1e-300).to_bits(), 0x8000);
        // One rounding, not two: through float32 this would be 1.0.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f16_from_f64(x).to_f64(), 1.0 + 2f64.powi(-10));
        assert_eq!(f16_from_f32(x as f32).to_f64(), 1.0);
        assert!(f16_from_f64(f64::NAN).is_nan());
        assert!(f16_from_f64(-f64::NAN).is_sign_negative());
        // A NaN whose payload lives only in low bits stays a NaN.
        assert!(f16_from_f64(f64::from_bits(0x7ff0_0000_0000_0001)).is_nan());
        assert!(f16_from_f32(f32::from_bits(0x7f80_0001)).is_nan());
    }
}
