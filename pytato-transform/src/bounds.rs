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
//!
//! Inside a lazily evaluated branch, what its condition says of an iname holds too
//! ([`Ranges::assume`]): in `if _0 < 8 { x[_0] } else { y[_0 - 8] }` (a lowered concatenation)
//! both reads are proved. A code generator may assume a condition only where the code it emits
//! under the assumption runs only when the condition is so (a real branch, not a `select` of
//! both sides).

use std::collections::HashMap;
use std::sync::Arc;

use pytato_core::expr::{BinaryOp, CompareOp, Expr, UnaryOp};
use pytato_core::names::{Reserved, classify};
use pytato_core::{Dim, Scalar};

/// An inclusive interval `[lo, hi]`.
pub type Interval = (Dim, Dim);

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
    /// Narrower ranges of inames (output or reduction) that enclosing branch conditions give
    /// ([`Ranges::assume`]), by name; empty outside any branch.
    pub assumed: HashMap<Arc<str>, Interval>,
}

/// What [`Ranges::assume`] replaced, for [`Ranges::restore`].
#[must_use = "restore the ranges when the branch ends"]
pub struct Assumed(Vec<(Arc<str>, Option<Interval>)>);

/// A bound one comparison gives an iname: `iname <= v` or `iname >= v`.
enum Bound {
    Upper(Dim),
    Lower(Dim),
}

impl Ranges<'_> {
    /// Whether `index` provably lies in `[0, extent - 1]` wherever it is evaluated.
    pub fn proves_in_bounds(&self, index: &Expr, extent: &Dim) -> bool {
        let Some((lo, hi)) = self.interval(index) else { return false };
        let room = extent.sub(&hi).and_then(|d| d.sub(&Dim::new(1)));
        lo.is_provably_nonnegative() && room.is_ok_and(|d| d.is_provably_nonnegative())
    }

    /// Narrows the inames' ranges by what `cond` says of them where it is `holds` (true or
    /// false): comparisons of an iname plus a fixed offset with a fixed value, and their
    /// conjunctions (disjunctions where `cond` fails) and negations. Other conditions add
    /// nothing. Call it only for code that runs only where `cond` is `holds` (see the module
    /// docs), and [`Ranges::restore`] what it returns when that code ends.
    pub fn assume(&mut self, cond: &Expr, holds: bool) -> Assumed {
        let mut bounds = Vec::new();
        self.facts(cond, holds, &mut bounds);
        let mut replaced = Vec::new();
        for (name, bound) in bounds {
            let Some((lo, hi)) = self.interval(&Expr::Var(name.clone())) else { continue };
            // The tighter of the two where provable; the branch's own bound otherwise (both hold).
            let narrowed = match bound {
                Bound::Upper(v) => (lo, ordered(hi, v.clone()).map_or(v, |(smaller, _)| smaller)),
                Bound::Lower(v) => (ordered(lo, v.clone()).map_or(v, |(_, larger)| larger), hi),
            };
            replaced.push((name.clone(), self.assumed.insert(name, narrowed)));
        }
        Assumed(replaced)
    }

    /// Undoes an [`Ranges::assume`] (the latest one first, when they nest).
    pub fn restore(&mut self, assumed: Assumed) {
        for (name, before) in assumed.0.into_iter().rev() {
            match before {
                Some(interval) => self.assumed.insert(name, interval),
                None => self.assumed.remove(&name),
            };
        }
    }

    /// The bounds on inames that `cond` being `holds` implies.
    fn facts(&self, cond: &Expr, holds: bool, out: &mut Vec<(Arc<str>, Bound)>) {
        match cond {
            Expr::Unary(UnaryOp::LogicalNot, a) => self.facts(a, !holds, out),
            Expr::Binary(BinaryOp::LogicalAnd, a, b) if holds => {
                self.facts(a, true, out);
                self.facts(b, true, out);
            }
            Expr::Binary(BinaryOp::LogicalOr, a, b) if !holds => {
                self.facts(a, false, out);
                self.facts(b, false, out);
            }
            Expr::Compare(op, a, b) => {
                let op = if holds { *op } else { negated(*op) };
                // `iname + offset op value`, or `value op iname + offset` turned around.
                let (name, offset, value, op) = if let (Some((n, o)), Some(v)) = (self.iname_plus(a), self.point(b)) {
                    (n, o, v, op)
                } else if let (Some(v), Some((n, o))) = (self.point(a), self.iname_plus(b)) {
                    (n, o, v, mirrored(op))
                } else {
                    return;
                };
                let Ok(v) = value.sub(&offset) else { return };
                let one = Dim::new(1);
                let bounds = match op {
                    CompareOp::Lt => v.sub(&one).ok().map(|v| vec![Bound::Upper(v)]),
                    CompareOp::Le => Some(vec![Bound::Upper(v)]),
                    CompareOp::Gt => v.add(&one).ok().map(|v| vec![Bound::Lower(v)]),
                    CompareOp::Ge => Some(vec![Bound::Lower(v)]),
                    CompareOp::Eq => Some(vec![Bound::Upper(v.clone()), Bound::Lower(v)]),
                    CompareOp::Ne => None,
                };
                out.extend(bounds.into_iter().flatten().map(|b| (name.clone(), b)));
            }
            _ => {}
        }
    }

    /// `e` as an iname plus a fixed offset (`_0`, `_0 - 8`, `n + _r0`).
    fn iname_plus(&self, e: &Expr) -> Option<(Arc<str>, Dim)> {
        match e {
            Expr::Var(name) if matches!(classify(name), Some(Reserved::Iname(_) | Reserved::ReductionIname(_))) => {
                Some((name.clone(), Dim::new(0)))
            }
            Expr::Binary(BinaryOp::Add, a, b) => {
                if let (Some((n, o)), Some(p)) = (self.iname_plus(a), self.point(b)) {
                    Some((n, o.add(&p).ok()?))
                } else {
                    let (p, (n, o)) = (self.point(a)?, self.iname_plus(b)?);
                    Some((n, o.add(&p).ok()?))
                }
            }
            Expr::Binary(BinaryOp::Sub, a, b) => {
                let (n, o) = self.iname_plus(a)?;
                Some((n, o.sub(&self.point(b)?).ok()?))
            }
            _ => None,
        }
    }

    /// The one value an expression of constants and size parameters has.
    fn point(&self, e: &Expr) -> Option<Dim> {
        let (lo, hi) = self.interval(e)?;
        (lo == hi).then_some(lo)
    }

    /// `e` without the index arithmetic that undoes itself, where its top node is such:
    /// `a // c * c + a % c` is `a` (for any integer `a` and constant `c != 0`, wrapping included),
    /// and where `b` provably lies in `[0, c - 1]` and `a * c + b` is understood (no overflow),
    /// `(a * c + b) // c` is `a` and `(a * c + b) % c` is `b`; `b // c` is `0` and `b % c` is `b`.
    /// Composing reshapes makes these (flattening the unravelled position of a reshape of a
    /// reshape): without them, a chain of reshapes doubles its index expression at each step.
    /// `None` where nothing applies. Only `int64` constants match, so only integer arithmetic
    /// is rewritten.
    pub fn simplified(&self, e: &Expr) -> Option<Expr> {
        let Expr::Binary(op, x, y) = e else { return None };
        if let (Expr::Const(Scalar::I64(a)), Expr::Const(Scalar::I64(b))) = (&**x, &**y) {
            // Constants of a lowering (`3 * 4` for the stride of an axis), as the backends'
            // wrapping int64 arithmetic computes them.
            return match op {
                BinaryOp::Add => Some(Expr::i64(a.wrapping_add(*b))),
                BinaryOp::Sub => Some(Expr::i64(a.wrapping_sub(*b))),
                BinaryOp::Mul => Some(Expr::i64(a.wrapping_mul(*b))),
                _ => None,
            };
        }
        match op {
            BinaryOp::Add => {
                // q * c + a % c where q is a // c (as simplified: a reshape's unravelled
                // position of several axes writes `f // 12 * 3 + f // 4 % 3`, and `f // 12` is
                // `(f // 4) // 3`).
                let undone = |p: &Expr, r: &Expr| {
                    let Expr::Binary(BinaryOp::Rem, a, c2) = r else { return None };
                    let Expr::Binary(BinaryOp::Mul, q, c1) = p else { return None };
                    if nonzero_const(c1).is_none() || c1 != c2 {
                        return None;
                    }
                    let quotient = self.simplest(Expr::Binary(BinaryOp::FloorDiv, a.clone(), c2.clone()));
                    (**q == quotient).then(|| (**a).clone())
                };
                let commuted = |p: &Expr| match p {
                    Expr::Binary(BinaryOp::Mul, a, b) if matches!(**a, Expr::Const(_)) => {
                        Expr::Binary(BinaryOp::Mul, b.clone(), a.clone())
                    }
                    other => other.clone(),
                };
                undone(&commuted(x), y).or_else(|| undone(&commuted(y), x))
            }
            BinaryOp::FloorDiv | BinaryOp::Rem => {
                let c = nonzero_const(y).filter(|&c| c > 0)?;
                // (f // m) // c is f // (m * c) for positive m and c.
                if let (BinaryOp::FloorDiv, Expr::Binary(BinaryOp::FloorDiv, f, m)) = (op, &**x)
                    && let Some(mc) = nonzero_const(m).filter(|&m| m > 0).and_then(|m| m.checked_mul(c))
                {
                    return Some(self.simplest(Expr::Binary(BinaryOp::FloorDiv, f.clone(), Expr::i64(mc).into())));
                }
                let below_c = |b: &Expr| {
                    let (lo, hi) = self.interval(b)?;
                    (lo.is_provably_nonnegative() && Dim::new(c - 1).sub(&hi).ok()?.is_provably_nonnegative())
                        .then_some(())
                };
                if below_c(x).is_some() {
                    return Some(if *op == BinaryOp::Rem { (**x).clone() } else { Expr::i64(0) });
                }
                self.interval(x)?;
                let Expr::Binary(BinaryOp::Add, p, q) = &**x else { return None };
                let split = |m: &Expr, b: &Expr| {
                    let Expr::Binary(BinaryOp::Mul, a, k) = m else { return None };
                    (nonzero_const(k) == Some(c) && below_c(b).is_some()).then(|| (**a).clone())
                };
                let (a, b) = match (split(p, q), split(q, p)) {
                    (Some(a), _) => (a, (**q).clone()),
                    (None, Some(a)) => (a, (**p).clone()),
                    (None, None) => return None,
                };
                Some(if *op == BinaryOp::Rem { b } else { a })
            }
            _ => None,
        }
    }

    /// `e` after [`Ranges::simplified`] for as long as it applies (each step makes `e` smaller).
    fn simplest(&self, mut e: Expr) -> Expr {
        while let Some(simpler) = self.simplified(&e) {
            e = simpler;
        }
        e
    }

    /// The interval of an `int64` expression, or `None` where it is not understood.
    pub(crate) fn interval(&self, e: &Expr) -> Option<Interval> {
        match e {
            Expr::Const(Scalar::I64(v)) => Some((Dim::new(*v), Dim::new(*v))),
            Expr::Var(name) if self.assumed.contains_key(name) => self.assumed.get(name).cloned(),
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

/// The value of a non-zero `int64` constant.
fn nonzero_const(e: &Expr) -> Option<i64> {
    match e {
        Expr::Const(Scalar::I64(c)) if *c != 0 => Some(*c),
        _ => None,
    }
}

/// The comparison that holds where `op` fails (indices are integers: no NaN).
fn negated(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Lt => CompareOp::Ge,
        CompareOp::Le => CompareOp::Gt,
        CompareOp::Gt => CompareOp::Le,
        CompareOp::Ge => CompareOp::Lt,
        CompareOp::Eq => CompareOp::Ne,
        CompareOp::Ne => CompareOp::Eq,
    }
}

/// `op` with its operands swapped: `a < b` is `b > a`.
fn mirrored(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Lt => CompareOp::Gt,
        CompareOp::Le => CompareOp::Ge,
        CompareOp::Gt => CompareOp::Lt,
        CompareOp::Ge => CompareOp::Le,
        other => other,
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
        Ranges {
            output,
            reductions: HashMap::new(),
            size_params: params,
            index_buffers: HashMap::new(),
            assumed: HashMap::new(),
        }
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

    /// A lowered concatenation of `x` (length n) and `y` (length m): `if _0 < n { x[_0] } else
    /// { y[_0 - n] }`. Each read is proved only under its branch's assumption, which restoring
    /// takes back.
    #[test]
    fn branch_conditions_prove_the_reads_of_their_branches() {
        let (n, m) = (Dim::param("n"), Dim::param("m"));
        let params = vec!["n".to_string(), "m".to_string()];
        let out = [n.add(&m).unwrap()];
        let mut r = ranges(&out, &params);
        let cond = Expr::iname(0).compare(CompareOp::Lt, Expr::var("n"));
        let (first, second) = (Expr::iname(0), Expr::iname(0).binary(BinaryOp::Sub, Expr::var("n")));
        assert!(!r.proves_in_bounds(&first, &n) && !r.proves_in_bounds(&second, &m));
        let assumed = r.assume(&cond, true);
        assert!(r.proves_in_bounds(&first, &n));
        assert!(!r.proves_in_bounds(&second, &m), "negative in the first branch");
        r.restore(assumed);
        assert!(!r.proves_in_bounds(&first, &n));
        let assumed = r.assume(&cond, false);
        assert!(r.proves_in_bounds(&second, &m));
        assert!(!r.proves_in_bounds(&first, &n));
        r.restore(assumed);
        assert!(r.assumed.is_empty());
    }

    /// Offsets on either side, negations, conjunctions where they hold and disjunctions where
    /// they fail; nested assumptions restore in order; conditions that say nothing of an iname
    /// (a data-dependent one, `!=`) prove nothing.
    #[test]
    fn compound_and_shifted_conditions() {
        let out = [Dim::new(100)];
        let mut r = ranges(&out, &[]);
        let i = || Expr::iname(0);
        let within = |r: &Ranges<'_>, lo: i64, len: i64| {
            r.proves_in_bounds(&i().binary(BinaryOp::Sub, Expr::i64(lo)), &Dim::new(len))
        };
        // 10 <= _0 + 5  and  _0 - 3 < 40: _0 in [5, 42].
        let lower = Expr::i64(10).compare(CompareOp::Le, i().binary(BinaryOp::Add, Expr::i64(5)));
        let upper = i().binary(BinaryOp::Sub, Expr::i64(3)).compare(CompareOp::Lt, Expr::i64(40));
        let both = lower.clone().binary(BinaryOp::LogicalAnd, upper.clone());
        let assumed = r.assume(&both, true);
        assert!(within(&r, 5, 38) && !within(&r, 5, 37) && !within(&r, 6, 38));
        // Nested: not (_0 > 20), so _0 in [5, 20].
        let inner =
            r.assume(&Expr::Unary(UnaryOp::LogicalNot, Arc::new(i().compare(CompareOp::Gt, Expr::i64(20)))), true);
        assert!(within(&r, 5, 16) && !within(&r, 5, 15));
        r.restore(inner);
        assert!(within(&r, 5, 38) && !within(&r, 5, 16));
        r.restore(assumed);
        // Where a conjunction fails, either side may: nothing is known.
        let assumed = r.assume(&both, false);
        assert!(r.assumed.is_empty());
        r.restore(assumed);
        // Where a disjunction fails, both sides fail: _0 + 5 < 10, and 0 != _0 (which bounds
        // nothing): _0 in [0, 4].
        let either = lower.binary(BinaryOp::LogicalOr, Expr::i64(0).compare(CompareOp::Eq, i()));
        let assumed = r.assume(&either, false);
        assert!(within(&r, 0, 5) && !within(&r, 0, 4));
        r.restore(assumed);
        for nothing in [
            i().compare(CompareOp::Ne, Expr::i64(3)),
            Expr::subscript("idx", vec![i()]).compare(CompareOp::Lt, Expr::i64(3)),
            i().compare(CompareOp::Lt, Expr::subscript("idx", vec![i()])),
        ] {
            let assumed = r.assume(&nothing, true);
            assert!(r.assumed.is_empty(), "{nothing}");
            r.restore(assumed);
        }
    }

    /// The index arithmetic of a reshape of a reshape undoes itself; nothing else changes: the
    /// rules are checked against Python's `//` and `%` on every value of the inames.
    #[test]
    fn index_arithmetic_that_undoes_itself_is_simplified() {
        let out = [Dim::new(7), Dim::new(10)];
        let r = ranges(&out, &[]);
        let (i, j) = (Expr::iname(0), Expr::iname(1));
        let c = |v: i64| Expr::i64(v);
        let flat = i.clone().binary(BinaryOp::Mul, c(10)).binary(BinaryOp::Add, j.clone());
        let floor = |a: &Expr, k: i64| a.clone().binary(BinaryOp::FloorDiv, c(k));
        let rem = |a: &Expr, k: i64| a.clone().binary(BinaryOp::Rem, c(k));
        let cases = [
            // a // c * c + a % c, either way round, any a and c != 0.
            (floor(&flat, 3).binary(BinaryOp::Mul, c(3)).binary(BinaryOp::Add, rem(&flat, 3)), Some(flat.clone())),
            (rem(&i, -4).binary(BinaryOp::Add, floor(&i, -4).binary(BinaryOp::Mul, c(-4))), Some(i.clone())),
            // Constants folded; floor divisions composed; several unravelled axes.
            (c(3).binary(BinaryOp::Mul, c(4)), Some(c(12))),
            (floor(&floor(&flat, 4), 3), Some(floor(&flat, 12))),
            (
                floor(&flat, 12).binary(BinaryOp::Mul, c(3)).binary(BinaryOp::Add, rem(&floor(&flat, 4), 3)),
                Some(floor(&flat, 4)),
            ),
            (
                c(3).binary(BinaryOp::Mul, floor(&flat, 12)).binary(BinaryOp::Add, rem(&floor(&flat, 4), 3)),
                Some(floor(&flat, 4)),
            ),
            (floor(&flat, 12).binary(BinaryOp::Mul, c(3)).binary(BinaryOp::Add, rem(&floor(&flat, 4), 2)), None),
            (floor(&flat, 10), Some(i.clone())),
            (rem(&flat, 10), Some(j.clone())),
            (floor(&j, 10), Some(c(0))),
            (rem(&j, 10), Some(j.clone())),
            // _1 may reach 10 with + 1, and 9 // 5 is not 0: unchanged.
            (floor(&flat.clone().binary(BinaryOp::Add, c(1)), 10), None),
            (floor(&j, 5), None),
            (floor(&flat, 3).binary(BinaryOp::Mul, c(3)).binary(BinaryOp::Add, rem(&flat, 4)), None),
            (floor(&flat, 0).binary(BinaryOp::Mul, c(0)).binary(BinaryOp::Add, rem(&flat, 0)), None),
            // A data-dependent term has no range.
            (
                floor(
                    &i.clone()
                        .binary(BinaryOp::Mul, c(10))
                        .binary(BinaryOp::Add, Expr::subscript("x", vec![j.clone()])),
                    10,
                ),
                None,
            ),
        ];
        let value = |e: &Expr, iv: i64, jv: i64| -> i64 {
            let sub = e.rewrite(&mut |x| match x {
                Expr::Var(n) if &**n == "_0" => Some(c(iv)),
                Expr::Var(n) if &**n == "_1" => Some(c(jv)),
                _ => None,
            });
            eval(&sub)
        };
        for (e, want) in cases {
            let got = r.simplified(&e);
            assert_eq!(got, want, "{e}");
            if let Some(s) = got {
                for (iv, jv) in (0..7).flat_map(|a| (0..10).map(move |b| (a, b))) {
                    assert_eq!(value(&s, iv, jv), value(&e, iv, jv), "{e} at ({iv}, {jv})");
                }
            }
        }
    }

    /// Python's integer arithmetic on constant expressions.
    fn eval(e: &Expr) -> i64 {
        match e {
            Expr::Const(Scalar::I64(v)) => *v,
            Expr::Binary(op, a, b) => {
                let (x, y) = (eval(a), eval(b));
                match op {
                    BinaryOp::Add => x + y,
                    BinaryOp::Sub => x - y,
                    BinaryOp::Mul => x * y,
                    BinaryOp::FloorDiv => x.div_euclid(y) - i64::from(y < 0 && x.rem_euclid(y) != 0),
                    BinaryOp::Rem => x - y * (x.div_euclid(y) - i64::from(y < 0 && x.rem_euclid(y) != 0)),
                    other => panic!("{other:?}"),
                }
            }
            other => panic!("{other}"),
        }
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
