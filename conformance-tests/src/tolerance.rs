//! How close a backend's result must be to numpy's: the one place tolerances live.
//!
//! Integers and bools must match exactly. Floating point values must satisfy
//! `|got - expected| <= atol + rtol * |expected|` (for complex values with the modulus, as
//! numpy's `allclose`), with NaN matching NaN, infinities matching infinities of the same sign and
//! zeros matching zeros of the same sign. The tolerances allow for a different summation
//! order than numpy's pairwise sums and for other (correctly rounded to a few ulp) math libraries.

use pytato_core::{ArrayData, DType, Scalar};

/// `(rtol, atol)` for a dtype; `None` means exact.
pub fn tolerance(dtype: DType) -> Option<(f64, f64)> {
    match dtype {
        // float16 results are float32 results rounded: a float32 difference of an ulp (a sum
        // in another order) can move them by one float16 ulp, 2^-10 of the value.
        DType::F16 => Some((2e-3, 1e-5)),
        DType::F32 | DType::C64 => Some((2e-5, 1e-6)),
        DType::F64 | DType::C128 => Some((1e-10, 1e-13)),
        _ => None,
    }
}

/// `(rtol, atol)` for results computed through transcendental functions, by dtype: different
/// (correctly rounded to an ulp or two) implementations of `sin`, `exp`, ... agree to an ulp,
/// and a later ill-conditioned step (`arccos` near 1, a cancelling subtraction, `tan` near a pole)
/// multiplies that by its condition number. The differential fuzzer reports results that need
/// these tolerances separately from exact agreement.
pub fn transcendental_tolerance(dtype: DType) -> Option<(f64, f64)> {
    match dtype {
        DType::F16 => Some((1e-2, 1e-4)),
        DType::F32 | DType::C64 => Some((2e-3, 1e-5)),
        DType::F64 | DType::C128 => Some((1e-6, 1e-9)),
        _ => None,
    }
}

/// [`compare`] with [`transcendental_tolerance`].
pub fn compare_transcendental(got: &ArrayData, expected: &ArrayData) -> Result<(), String> {
    compare_with(got, expected, false, transcendental_tolerance(expected.dtype()))
}

/// `(rtol, atol)` of [`compare_reordered`] for programs that computed in single precision.
pub const SINGLE_REORDERED: (f64, f64) = (2e-4, 1e-5);

/// `(rtol, atol)` of [`compare_reordered`] for programs that computed in half precision: one
/// float16 rounding that goes the other way is 2^-10, and later steps can amplify it.
pub const HALF_REORDERED: (f64, f64) = (1e-2, 1e-3);

/// The lowest floating-point precision a program computes in on the way to its outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Precision {
    /// float16 somewhere.
    Half,
    /// float32 or complex64 somewhere, no float16.
    Single,
    /// Neither.
    Double,
}

impl Precision {
    /// The lowest precision among `dtypes`.
    pub fn lowest(dtypes: impl IntoIterator<Item = DType>) -> Precision {
        dtypes
            .into_iter()
            .map(|d| match d {
                DType::F16 => Precision::Half,
                DType::F32 | DType::C64 => Precision::Single,
                _ => Precision::Double,
            })
            .min()
            .unwrap_or(Precision::Double)
    }
}

fn close(got: f64, expected: f64, rtol: f64, atol: f64) -> bool {
    if expected.is_nan() || got.is_nan() {
        return expected.is_nan() && got.is_nan();
    }
    if expected.is_infinite() || got.is_infinite() {
        return got == expected;
    }
    if expected == 0.0 && got == 0.0 {
        // numpy decides the sign of a zero result (`-0.0 * 1`, `max(-0.0, 0.0)`, `clip` at a
        // tie): the sign is part of the value.
        return got.is_sign_negative() == expected.is_sign_negative();
    }
    (got - expected).abs() <= atol + rtol * expected.abs()
}

fn scalars_match(got: &Scalar, expected: &Scalar, tol: Option<(f64, f64)>) -> bool {
    match tol {
        None => got == expected,
        Some((rtol, atol)) if expected.dtype().is_complex() => {
            // Complex values as numpy's `allclose` compares them: the distance against the
            // modulus (a tiny real part next to a huge imaginary one carries the rounding of the
            // larger), non-finite parts exactly.
            let (g, e) = (got.to_complex64(), expected.to_complex64());
            if !(e.re.is_finite() && e.im.is_finite() && g.re.is_finite() && g.im.is_finite()) {
                return close(g.re, e.re, rtol, atol) && close(g.im, e.im, rtol, atol);
            }
            (g - e).norm() <= atol + rtol * e.norm()
        }
        Some((rtol, atol)) => close(got.to_f64(), expected.to_f64(), rtol, atol),
    }
}

/// `Ok` when `got` matches `expected` in dtype, shape and values; otherwise what differs.
pub fn compare(got: &ArrayData, expected: &ArrayData) -> Result<(), String> {
    compare_with(got, expected, false, tolerance(expected.dtype()))
}

/// [`compare`] for results of different orders of operation (the differential fuzzer compares
/// programs that numpy evaluates with its own loops, reassociations and BLAS):
///
/// - a NaN matches an infinity, and a complex value with a NaN part matches any complex value
///   that is not finite: whether `inf - inf` occurs, and which parts of an overflowed complex
///   result are NaN and which infinite, depends on the order of the products and sums (`s * sum(x)`
///   and `sum(s * x)` differ there); that the result is not finite does not;
/// - where the program computed something in single (half) precision on the way, floats are
///   compared with [`SINGLE_REORDERED`] ([`HALF_REORDERED`]) whatever their dtype: numpy's math
///   functions are a few ulp from the library's (correctly rounded) ones and BLAS sums in its own
///   order, and a composition of such steps (`sin(y @ y)`) amplifies that beyond one operation's
///   tolerance.
pub fn compare_reordered(got: &ArrayData, expected: &ArrayData, precision: Precision) -> Result<(), String> {
    let inexact = expected.dtype().is_inexact();
    let tol = match precision {
        Precision::Half if inexact => Some(HALF_REORDERED),
        Precision::Single if inexact => Some(SINGLE_REORDERED),
        _ => tolerance(expected.dtype()),
    };
    compare_with(got, expected, true, tol)
}

fn non_finite(z: num_complex::Complex64) -> bool {
    !z.re.is_finite() || !z.im.is_finite()
}

/// `reordered`: for [`compare_reordered`].
fn compare_with(got: &ArrayData, expected: &ArrayData, reordered: bool, tol: Option<(f64, f64)>) -> Result<(), String> {
    if got.dtype() != expected.dtype() {
        return Err(format!("dtype {} instead of {}", got.dtype(), expected.dtype()));
    }
    if got.shape() != expected.shape() {
        return Err(format!("shape {:?} instead of {:?}", got.shape(), expected.shape()));
    }
    let (g, e) = (got.to_scalars(), expected.to_scalars());
    let nan_part = |s: &Scalar| {
        let z = s.to_complex64();
        z.re.is_nan() || z.im.is_nan()
    };
    let reordered_match = |g: &Scalar, e: &Scalar| {
        reordered
            && expected.dtype().is_inexact()
            && (nan_part(g) || nan_part(e))
            && non_finite(g.to_complex64())
            && non_finite(e.to_complex64())
    };
    let bad: Vec<usize> =
        (0..e.len()).filter(|&i| !scalars_match(&g[i], &e[i], tol) && !reordered_match(&g[i], &e[i])).collect();
    match bad.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{} of {} values differ; first at flat index {i}: got {}, expected {} (tolerance {tol:?})",
            bad.len(),
            e.len(),
            g[i],
            e[i]
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::arr1;

    fn f64s(v: &[f64]) -> ArrayData {
        ArrayData::from(arr1(v).into_dyn())
    }

    #[test]
    fn tolerances() {
        assert!(
            compare(&f64s(&[1.0, f64::NAN, f64::INFINITY]), &f64s(&[1.0 + 1e-12, f64::NAN, f64::INFINITY])).is_ok()
        );
        assert!(compare(&f64s(&[1.0]), &f64s(&[1.0 + 1e-6])).is_err());
        assert!(compare(&f64s(&[f64::NAN]), &f64s(&[0.0])).is_err());
        assert!(compare(&f64s(&[f64::NEG_INFINITY]), &f64s(&[f64::INFINITY])).is_err());
        let ints = ArrayData::from(arr1(&[1i32, 2]).into_dyn());
        assert!(compare(&ints, &ints).is_ok());
        assert!(compare(&ints, &f64s(&[1.0, 2.0])).unwrap_err().contains("dtype"));
        assert!(compare(&f64s(&[1.0]), &f64s(&[1.0, 2.0])).unwrap_err().contains("shape"));
    }
}
