//! Proving subscripts in bounds at compile time, so that only the others pay for a check.
//!
//! An index expression built from inames, size parameters and `int64` constants with `+`, `-`,
//! `*`, `//`, `%` and `if` has a range over the kernel's iteration space that is an interval of
//! affine [`Dim`]s. When that interval provably lies in `[0, extent - 1]` for *every* binding of
//! the size parameters, the subscript needs no run-time check. Everything else (index arrays,
//! casts, anything this analysis does not understand) is checked when it runs.
//!
//! Soundness: the interval over-approximates the values the expression takes on a non-empty
//! iteration space (an empty one reads nothing), so a proof is never wrong; failing to prove
//! only costs a comparison.

use std::collections::HashMap;
use std::sync::Arc;

use pytato_core::expr::{BinaryOp, Expr, UnaryOp};
use pytato_core::names::{Reserved, classify};
use pytato_core::{Dim, Scalar};

/// An inclusive interval `[lo, hi]`.
type Interval = (Dim, Dim);

/// The ranges of the variables an index expression may use.
pub struct Ranges<'a> {
    /// The output buffer's shape: iname `_k` runs over `[0, output[k] - 1]`.
    pub output: &'a [Dim],
    /// Reduction inames in scope, with their half-open bounds `[lower, upper)`.
    pub reductions: HashMap<Arc<str>, (Dim, Dim)>,
    /// The size parameters of the program.
    pub size_params: &'a [String],
    /// Buffers whose every element lies in `[0, extent - 1]`, with that extent, by name: the
    /// index arrays `normalize_index` checked ([`KernelProgram::normalized_indices`]), on a
    /// backend where a failed check stops the run before any later read of the buffer (empty
    /// where errors are reported later, as on a GPU).
    ///
    /// [`KernelProgram::normalized_indices`]: crate::kernel::KernelProgram::normalized_indices
    pub index_buffers: HashMap<Arc<str>, Dim>,
}

impl Ranges<'_> {
    /// Whether `index` provably lies in `[0, extent - 1]` wherever it is evaluated.
    pub fn proves_in_bounds(&self, index: &Expr, extent: &Dim) -> bool {
        let Some((lo, hi)) = self.interval(index) else { return false };
        let room = extent.sub(&hi).and_then(|d| d.sub(&Dim::new(1)));
        lo.is_provably_nonnegative() && room.is_ok_and(|d| d.is_provably_nonnegative())
    }

    /// The interval of an `int64` expression, or `None` where it is not understood.
    pub(crate) fn interval(&self, e: &Expr) -> Option<Interval> {
        match e {
            Expr::Const(Scalar::I64(v)) => Some((Dim::new(*v), Dim::new(*v))),
            Expr::Var(name) => match classify(name) {
                Some(Reserved::Iname(k)) => Some((Dim::new(0), self.output.get(k)?.sub(&Dim::new(1)).ok()?)),
                Some(Reserved::ReductionIname(_)) => {
                    let (lower, upper) = self.reductions.get(name)?;
                    Some((lower.clone(), upper.sub(&Dim::new(1)).ok()?))
                }
                _ if self.size_params.iter().any(|p| p == &**name) => {
                    let p = Dim::param(name.clone());
                    Some((p.clone(), p))
                }
                _ => None,
            },
            Expr::Unary(UnaryOp::Neg, a) => {
                let (lo, hi) = self.interval(a)?;
                Some((hi.mul_int(-1).ok()?, lo.mul_int(-1).ok()?))
            }
            Expr::Binary(op, a, b) => self.binary(*op, a, b),
            Expr::Subscript(name, _) => {
                let extent = self.index_buffers.get(name)?;
                Some((Dim::new(0), extent.sub(&Dim::new(1)).ok()?))
            }
            Expr::If(_, a, b) => {
                let (alo, ahi) = self.interval(a)?;
                let (blo, bhi) = self.interval(b)?;
                Some((ordered(alo, blo)?.0, ordered(ahi, bhi)?.1))
            }
            _ => None,
        }
    }

    fn binary(&self, op: BinaryOp, a: &Expr, b: &Expr) -> Option<Interval> {
        let (alo, ahi) = self.interval(a)?;
        let (blo, bhi) = self.interval(b)?;
        match op {
            BinaryOp::Add => Some((alo.add(&blo).ok()?, ahi.add(&bhi).ok()?)),
            BinaryOp::Sub => Some((alo.sub(&bhi).ok()?, ahi.sub(&blo).ok()?)),
            BinaryOp::Mul => {
                // Either side a constant, or both provably non-negative and the product affine.
                if let (Some(c), true) = (blo.as_int(), blo == bhi) {
                    scale((alo, ahi), c)
                } else if let (Some(c), true) = (alo.as_int(), alo == ahi) {
                    scale((blo, bhi), c)
                } else if alo.is_provably_nonnegative() && blo.is_provably_nonnegative() {
                    Some((alo.mul(&blo).ok()?, ahi.mul(&bhi).ok()?))
                } else {
                    None
                }
            }
            BinaryOp::FloorDiv => {
                // A non-negative dividend over a positive constant stays in [0, dividend].
                let c = blo.as_int().filter(|&c| c >= 1 && blo == bhi)?;
                match (alo.as_int(), ahi.as_int()) {
                    (Some(lo), Some(hi)) => Some((Dim::new(lo.div_euclid(c)), Dim::new(hi.div_euclid(c)))),
                    _ if alo.is_provably_nonnegative() => Some((Dim::new(0), ahi)),
                    _ => None,
                }
            }
            // Python's `%` with a divisor of at least 1 lies in [0, divisor - 1].
            BinaryOp::Rem if blo.sub(&Dim::new(1)).is_ok_and(|d| d.is_provably_nonnegative()) => {
                Some((Dim::new(0), bhi.sub(&Dim::new(1)).ok()?))
            }
            _ => None,
        }
    }
}

fn scale((lo, hi): Interval, c: i64) -> Option<Interval> {
    let (a, b) = (lo.mul_int(c).ok()?, hi.mul_int(c).ok()?);
    Some(if c >= 0 { (a, b) } else { (b, a) })
}

/// `(smaller, larger)` of two `Dim`s, where that order is provable for every binding.
fn ordered(a: Dim, b: Dim) -> Option<(Dim, Dim)> {
    if b.sub(&a).ok()?.is_provably_nonnegative() {
        Some((a, b))
    } else if a.sub(&b).ok()?.is_provably_nonnegative() {
        Some((b, a))
    } else {
        None
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    fn ranges<'a>(output: &'a [Dim], params: &'a [String]) -> Ranges<'a> {
        Ranges { output, reductions: HashMap::new(), size_params: params, index_buffers: HashMap::new() }
    }

    /// A read through an index array that `normalize_index` checked is proved for the extent it
    /// was checked against (and no larger one), and only where the backend states the fact.
    #[test]
    fn reads_through_checked_index_arrays_are_proved_where_stated() {
        let (n, m) = (Dim::param("n"), Dim::param("m"));
        let params = vec!["n".to_string(), "m".to_string()];
        let out = [m.clone()];
        let mut r = ranges(&out, &params);
        let gathered = Expr::subscript("ix", vec![Expr::iname(0)]);
        assert!(!r.proves_in_bounds(&gathered, &n), "no fact stated");
        r.index_buffers.insert("ix".into(), n.clone());
        assert!(r.proves_in_bounds(&gathered, &n));
        assert!(!r.proves_in_bounds(&gathered, &n.sub(&Dim::new(1)).unwrap()));
        assert!(!r.proves_in_bounds(&gathered, &m));
        let shifted = gathered.binary(BinaryOp::Add, Expr::i64(1));
        assert!(r.proves_in_bounds(&shifted, &n.add(&Dim::new(1)).unwrap()));
        assert!(!r.proves_in_bounds(&shifted, &n));
    }

    #[test]
    fn shifted_and_rolled_reads_are_proved() {
        let n = Dim::param("n");
        let params = vec!["n".to_string()];
        let out = [n.sub(&Dim::new(1)).unwrap()];
        let r = ranges(&out, &params);
        // x[_0 + 1] with _0 < n - 1 reads x of length n in bounds.
        let shifted = Expr::iname(0).binary(BinaryOp::Add, Expr::i64(1));
        assert!(r.proves_in_bounds(&shifted, &n));
        // ... but not x of length n - 1.
        assert!(!r.proves_in_bounds(&shifted, &out[0]));
        // (_0 - 1) % 8 on a concrete axis of 8.
        let out8 = [Dim::new(8)];
        let r8 = ranges(&out8, &params);
        let rolled = Expr::iname(0).binary(BinaryOp::Sub, Expr::i64(1)).binary(BinaryOp::Rem, Expr::i64(8));
        assert!(r8.proves_in_bounds(&rolled, &Dim::new(8)));
        // % by a symbolic length may be % 0 at run time: not proved.
        let rolled_n = Expr::iname(0).binary(BinaryOp::Rem, Expr::var("n"));
        assert!(!r.proves_in_bounds(&rolled_n, &n));
    }

    #[test]
    fn data_dependent_and_negative_indices_are_not_proved() {
        let out = [Dim::new(4)];
        let r = ranges(&out, &[]);
        let gathered = Expr::subscript("idx", vec![Expr::iname(0)]);
        assert!(!r.proves_in_bounds(&gathered, &Dim::new(100)));
        let reversed = Expr::i64(2).binary(BinaryOp::Sub, Expr::iname(0));
        assert!(!r.proves_in_bounds(&reversed, &Dim::new(4)), "reaches -1");
        let reversed = Expr::i64(3).binary(BinaryOp::Sub, Expr::iname(0));
        assert!(r.proves_in_bounds(&reversed, &Dim::new(4)));
    }
}
