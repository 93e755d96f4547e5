//! Symbolic shapes.
//!
//! An axis length is a [`Dim`]: an affine expression `c + a₁·n₁ + … + aₖ·nₖ` with integer
//! coefficients over named size variables. A size variable is a [`SizeParam`](crate::array::NodeKind::SizeParam)
//! name, or (in a later issue) a data-dependent count from the reserved `_pt_shp` namespace. Keeping
//! lengths affine makes equality decidable: a `Dim` is stored in a normal form (terms sorted by name,
//! no zero coefficients), so two lengths are equal exactly when their normal forms are.
//!
//! Size variables stand for non-negative integers. A length that is negative for every such value
//! (`-3`, `-n - 1`) is rejected where a shape is built; one that may be negative (`n - 4`) is checked
//! once the sizes are bound.
//!
//! ```
//! use pytato_core::shape::{Dim, Shape, broadcast_shapes};
//! let n = Dim::param("n");
//! let len = n.mul_int(2).unwrap().add(&Dim::from(1)).unwrap();
//! assert_eq!(len.to_string(), "2*n + 1");
//! let a = Shape::from(vec![len.clone(), Dim::from(1)]);
//! let b = Shape::from(vec![Dim::from(3)]);
//! assert_eq!(broadcast_shapes("add", &[&a, &b]).unwrap().to_string(), "(2*n + 1, 3)");
//! ```

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

/// One axis length: an affine integer expression over named size variables.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Dim {
    constant: i64,
    /// Sorted by name; no zero coefficients. This normal form is what makes `==` decide equality.
    terms: Vec<(Arc<str>, i64)>,
}

impl Dim {
    /// A concrete length.
    pub const fn new(value: i64) -> Dim {
        Dim { constant: value, terms: Vec::new() }
    }

    /// The size variable `name` with coefficient 1. The name is not validated here: the array node
    /// that introduces it is.
    pub fn param(name: impl Into<Arc<str>>) -> Dim {
        Dim { constant: 0, terms: vec![(name.into(), 1)] }
    }

    /// The value, if the length does not depend on any size variable.
    pub fn as_int(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// `true` when the length is a plain integer.
    pub fn is_concrete(&self) -> bool {
        self.terms.is_empty()
    }

    /// The constant part.
    pub fn constant(&self) -> i64 {
        self.constant
    }

    /// The `(variable, coefficient)` terms, sorted by name.
    pub fn terms(&self) -> impl Iterator<Item = (&str, i64)> {
        self.terms.iter().map(|(n, c)| (&**n, *c))
    }

    /// The names of the size variables the length depends on.
    pub fn params(&self) -> impl Iterator<Item = &str> {
        self.terms.iter().map(|(n, _)| &**n)
    }

    /// `true` when the length is negative whatever non-negative values its variables take.
    pub fn is_provably_negative(&self) -> bool {
        self.constant < 0 && self.terms.iter().all(|(_, c)| *c <= 0)
    }

    /// `true` when the length is at least zero whatever non-negative values its variables take.
    pub fn is_provably_nonnegative(&self) -> bool {
        self.constant >= 0 && self.terms.iter().all(|(_, c)| *c >= 0)
    }

    fn combine(&self, other: &Dim, sign: i64, op: &str) -> Result<Dim> {
        let overflow = || Error::Overflow {
            op: op.to_string(),
            what: format!("`{self}` {} `{other}`", if sign > 0 { "+" } else { "-" }),
        };
        let constant =
            other.constant.checked_mul(sign).and_then(|c| self.constant.checked_add(c)).ok_or_else(overflow)?;
        let mut terms: BTreeMap<Arc<str>, i64> = self.terms.iter().cloned().collect();
        for (name, coeff) in &other.terms {
            let entry = terms.entry(name.clone()).or_insert(0);
            *entry = coeff.checked_mul(sign).and_then(|c| entry.checked_add(c)).ok_or_else(overflow)?;
        }
        Ok(Dim { constant, terms: terms.into_iter().filter(|(_, c)| *c != 0).collect() })
    }

    /// `self + other`.
    pub fn add(&self, other: &Dim) -> Result<Dim> {
        self.combine(other, 1, "shape addition")
    }

    /// `self - other`.
    pub fn sub(&self, other: &Dim) -> Result<Dim> {
        self.combine(other, -1, "shape subtraction")
    }

    /// `self * k` for an integer `k`.
    pub fn mul_int(&self, k: i64) -> Result<Dim> {
        let overflow = || Error::Overflow { op: "shape multiplication".into(), what: format!("`{self}` * {k}") };
        if k == 0 {
            return Ok(Dim::new(0));
        }
        let constant = self.constant.checked_mul(k).ok_or_else(overflow)?;
        let terms = self
            .terms
            .iter()
            .map(|(n, c)| c.checked_mul(k).map(|c| (n.clone(), c)).ok_or_else(overflow))
            .collect::<Result<_>>()?;
        Ok(Dim { constant, terms })
    }

    /// `self * other`; at least one side must be concrete, or the product is not affine.
    pub fn mul(&self, other: &Dim) -> Result<Dim> {
        match (self.as_int(), other.as_int()) {
            (_, Some(k)) => self.mul_int(k),
            (Some(k), None) => other.mul_int(k),
            (None, None) => Err(Error::NonAffine {
                op: "shape multiplication".into(),
                lhs: self.to_string(),
                rhs: other.to_string(),
            }),
        }
    }

    /// `self / k` when every coefficient and the constant are divisible by `k`; `None` otherwise.
    pub fn div_exact(&self, k: i64) -> Option<Dim> {
        if k == 0 || self.constant % k != 0 || self.terms.iter().any(|(_, c)| c % k != 0) {
            return None;
        }
        Some(Dim { constant: self.constant / k, terms: self.terms.iter().map(|(n, c)| (n.clone(), c / k)).collect() })
    }

    /// The value under an assignment of the size variables; `None` names the first unbound variable.
    pub fn eval(&self, lookup: impl Fn(&str) -> Option<i64>) -> std::result::Result<i64, EvalDimError> {
        let mut acc = self.constant as i128;
        for (name, coeff) in &self.terms {
            let value = lookup(name).ok_or_else(|| EvalDimError::Unbound(name.to_string()))?;
            acc += *coeff as i128 * value as i128;
        }
        i64::try_from(acc).map_err(|_| EvalDimError::Overflow(self.to_string()))
    }
}

/// Why a [`Dim`] could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalDimError {
    /// A size variable with no value.
    Unbound(String),
    /// The value does not fit `i64`.
    Overflow(String),
}

impl From<i64> for Dim {
    fn from(value: i64) -> Dim {
        Dim::new(value)
    }
}

/// Panics for lengths beyond `i64::MAX`, which no array can have.
impl From<usize> for Dim {
    fn from(value: usize) -> Dim {
        Dim::new(i64::try_from(value).expect("axis length fits i64"))
    }
}

impl From<i32> for Dim {
    fn from(value: i32) -> Dim {
        Dim::new(value.into())
    }
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for (name, coeff) in &self.terms {
            let magnitude = coeff.unsigned_abs();
            match (first, *coeff < 0) {
                (true, false) => {}
                (true, true) => f.write_str("-")?,
                (false, false) => f.write_str(" + ")?,
                (false, true) => f.write_str(" - ")?,
            }
            if magnitude != 1 {
                write!(f, "{magnitude}*")?;
            }
            f.write_str(name)?;
            first = false;
        }
        match (first, self.constant) {
            (true, c) => write!(f, "{c}"),
            (false, 0) => Ok(()),
            (false, c) if c < 0 => write!(f, " - {}", c.unsigned_abs()),
            (false, c) => write!(f, " + {c}"),
        }
    }
}

impl fmt::Debug for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The shape of an array: one [`Dim`] per axis. Printed the way numpy prints shapes: `(3,)`, `(n, 4)`.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Shape(Vec<Dim>);

impl Shape {
    /// The shape of a 0-d array.
    pub fn scalar() -> Shape {
        Shape(Vec::new())
    }

    /// Builds a shape from concrete lengths.
    pub fn from_ints(lengths: &[i64]) -> Shape {
        Shape(lengths.iter().map(|&n| Dim::new(n)).collect())
    }

    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.0.len()
    }

    /// The axis lengths.
    pub fn dims(&self) -> &[Dim] {
        &self.0
    }

    /// The lengths as integers, if all are concrete.
    pub fn as_ints(&self) -> Option<Vec<i64>> {
        self.0.iter().map(Dim::as_int).collect()
    }

    /// `true` when every length is a plain integer.
    pub fn is_concrete(&self) -> bool {
        self.0.iter().all(Dim::is_concrete)
    }

    /// The number of elements, if the shape is concrete; `None` also when the product overflows.
    pub fn size(&self) -> Option<i64> {
        self.0.iter().try_fold(1i64, |acc, d| d.as_int().and_then(|n| acc.checked_mul(n)))
    }

    /// Checks that no length is provably negative; `op` names the operation for the error.
    pub fn validate(&self, op: &str) -> Result<()> {
        match self.0.iter().find(|d| d.is_provably_negative()) {
            Some(d) => Err(Error::NegativeLength { op: op.to_string(), length: d.to_string() }),
            None => Ok(()),
        }
    }

    /// The names of all size variables the shape depends on.
    pub fn params(&self) -> impl Iterator<Item = &str> {
        self.0.iter().flat_map(Dim::params)
    }

    /// Consumes the shape, giving its lengths.
    pub fn into_dims(self) -> Vec<Dim> {
        self.0
    }
}

impl std::ops::Index<usize> for Shape {
    type Output = Dim;
    fn index(&self, axis: usize) -> &Dim {
        &self.0[axis]
    }
}

impl From<Vec<Dim>> for Shape {
    fn from(dims: Vec<Dim>) -> Shape {
        Shape(dims)
    }
}

impl From<&[usize]> for Shape {
    fn from(dims: &[usize]) -> Shape {
        Shape(dims.iter().map(|&n| Dim::from(n)).collect())
    }
}

impl From<Vec<i64>> for Shape {
    fn from(dims: Vec<i64>) -> Shape {
        Shape::from_ints(&dims)
    }
}

impl From<&[i64]> for Shape {
    fn from(dims: &[i64]) -> Shape {
        Shape::from_ints(dims)
    }
}

impl From<&Shape> for Shape {
    fn from(shape: &Shape) -> Shape {
        shape.clone()
    }
}

impl<const N: usize> From<[Dim; N]> for Shape {
    fn from(dims: [Dim; N]) -> Shape {
        Shape(dims.into())
    }
}

impl<const N: usize> From<[i64; N]> for Shape {
    fn from(dims: [i64; N]) -> Shape {
        Shape::from_ints(&dims)
    }
}

impl FromIterator<Dim> for Shape {
    fn from_iter<I: IntoIterator<Item = Dim>>(iter: I) -> Shape {
        Shape(iter.into_iter().collect())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{d}")?;
        }
        if self.0.len() == 1 {
            f.write_str(",")?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The number of elements of a shape as a polynomial in its size variables, so that two symbolic
/// shapes can be checked for equal size (`(n, 3)` and `(3*n,)`, say) without knowing `n`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SizePolynomial(BTreeMap<Vec<Arc<str>>, i128>);

impl SizePolynomial {
    /// The polynomial of `shape`; an error if a coefficient overflows.
    pub fn of(shape: &Shape, op: &str) -> Result<SizePolynomial> {
        let overflow = || Error::Overflow { op: op.to_string(), what: format!("the size of shape {shape}") };
        let mut poly: BTreeMap<Vec<Arc<str>>, i128> = BTreeMap::from([(Vec::new(), 1)]);
        for dim in shape.dims() {
            let mut factor: Vec<(Option<&Arc<str>>, i128)> = vec![(None, dim.constant.into())];
            factor.extend(dim.terms.iter().map(|(n, c)| (Some(n), i128::from(*c))));
            let mut next = BTreeMap::new();
            for (monomial, coeff) in &poly {
                for (var, c) in &factor {
                    let mut m = monomial.clone();
                    if let Some(v) = var {
                        let at = m.partition_point(|x| x <= *v);
                        m.insert(at, (*v).clone());
                    }
                    let product = coeff.checked_mul(*c).ok_or_else(overflow)?;
                    let entry: &mut i128 = next.entry(m).or_insert(0);
                    *entry = entry.checked_add(product).ok_or_else(overflow)?;
                }
            }
            poly = next.into_iter().filter(|(_, c)| *c != 0).collect();
        }
        Ok(SizePolynomial(poly))
    }

    /// `self / divisor` as an affine length, when `divisor` is a single term `c·m` that divides
    /// every term of `self` and leaves a result of degree at most one (`6n / 3 = 2n`,
    /// `3nm / n = 3m`); `None` otherwise.
    pub fn div_to_dim(&self, divisor: &SizePolynomial) -> Option<Dim> {
        let [(monomial, c)] = <[_; 1]>::try_from(divisor.0.iter().collect::<Vec<_>>()).ok()?;
        let mut dim = Dim::new(0);
        for (m, coeff) in &self.0 {
            if coeff % c != 0 {
                return None;
            }
            let q = i64::try_from(coeff / c).ok()?;
            let mut rest = m.clone();
            for v in monomial {
                let at = rest.iter().position(|x| x == v)?;
                rest.remove(at);
            }
            let term = match &rest[..] {
                [] => Dim::new(q),
                [v] => Dim::param(v.clone()).mul_int(q).ok()?,
                _ => return None,
            };
            dim = dim.add(&term).ok()?;
        }
        Some(dim)
    }

    /// The value, if the polynomial is a constant.
    pub fn as_int(&self) -> Option<i128> {
        match self.0.len() {
            0 => Some(0),
            1 => self.0.get(&Vec::new()).copied(),
            _ => None,
        }
    }
}

/// numpy broadcasting of several shapes, right-aligned.
///
/// Per axis, lengths equal to a concrete 1 stretch to the others; the remaining lengths must all be
/// equal (as affine expressions). Two different symbolic lengths (`n` and `m`) do not broadcast: which
/// one is 1 at run time cannot be known when the DAG is built.
pub fn broadcast_shapes(op: &str, shapes: &[&Shape]) -> Result<Shape> {
    let ndim = shapes.iter().map(|s| s.ndim()).max().unwrap_or(0);
    let one = Dim::new(1);
    let mut out = Vec::with_capacity(ndim);
    for axis in 0..ndim {
        let mut result: Option<&Dim> = None;
        for shape in shapes {
            let Some(offset) = (axis + shape.ndim()).checked_sub(ndim) else {
                continue;
            };
            let d = &shape.0[offset];
            if *d == one {
                continue;
            }
            match result {
                None => result = Some(d),
                Some(r) if r == d => {}
                Some(_) => {
                    return Err(Error::BroadcastMismatch {
                        op: op.to_string(),
                        shapes: shapes.iter().map(|s| (*s).clone()).collect(),
                    });
                }
            }
        }
        out.push(result.cloned().unwrap_or_else(|| one.clone()));
    }
    Ok(Shape(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n() -> Dim {
        Dim::param("n")
    }
    fn m() -> Dim {
        Dim::param("m")
    }

    #[test]
    fn affine_arithmetic_normalises() {
        let a = n().mul_int(2).unwrap().add(&Dim::new(1)).unwrap();
        let b = Dim::new(1).add(&n()).unwrap().add(&n()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.sub(&n()).unwrap().sub(&n()).unwrap(), Dim::new(1));
        assert!(a.sub(&b).unwrap().as_int() == Some(0));
        // Terms are ordered by name whatever the order they were added in.
        assert_eq!(n().add(&m()).unwrap(), m().add(&n()).unwrap());
        assert_eq!(n().add(&m()).unwrap().to_string(), "m + n");
    }

    #[test]
    fn display() {
        assert_eq!(Dim::new(-3).to_string(), "-3");
        assert_eq!(n().mul_int(-2).unwrap().add(&Dim::new(5)).unwrap().to_string(), "-2*n + 5");
        assert_eq!(n().sub(&Dim::new(1)).unwrap().to_string(), "n - 1");
        assert_eq!(Shape::from([3]).to_string(), "(3,)");
        assert_eq!(Shape::scalar().to_string(), "()");
    }

    #[test]
    fn non_affine_product_is_an_error() {
        let err = n().mul(&m()).unwrap_err();
        assert!(matches!(err, Error::NonAffine { .. }));
        assert!(err.to_string().contains("`n` and `m`"), "{err}");
        assert_eq!(n().mul(&Dim::new(3)).unwrap(), n().mul_int(3).unwrap());
    }

    #[test]
    fn overflow_is_an_error() {
        assert!(matches!(Dim::new(i64::MAX).add(&Dim::new(1)), Err(Error::Overflow { .. })));
        assert!(matches!(n().mul_int(i64::MAX).unwrap().mul_int(2), Err(Error::Overflow { .. })));
    }

    #[test]
    fn negativity() {
        assert!(Dim::new(-1).is_provably_negative());
        assert!(n().mul_int(-1).unwrap().sub(&Dim::new(1)).unwrap().is_provably_negative());
        assert!(!n().sub(&Dim::new(4)).unwrap().is_provably_negative());
        let err = Shape::from(vec![Dim::new(2), Dim::new(-1)]).validate("Placeholder").unwrap_err();
        assert_eq!(err.to_string(), "Placeholder: axis length -1 is negative");
    }

    #[test]
    fn eval() {
        let d = n().mul_int(3).unwrap().add(&m()).unwrap().sub(&Dim::new(2)).unwrap();
        let v = d.eval(|name| match name {
            "n" => Some(4),
            "m" => Some(5),
            _ => None,
        });
        assert_eq!(v, Ok(15));
        assert_eq!(d.eval(|_| None), Err(EvalDimError::Unbound("m".into())));
    }

    #[test]
    fn size_polynomials() {
        let a = Shape::from(vec![n(), Dim::new(3)]);
        let b = Shape::from(vec![n().mul_int(3).unwrap()]);
        let c = Shape::from(vec![Dim::new(3), n()]);
        let pa = SizePolynomial::of(&a, "t").unwrap();
        assert_eq!(pa, SizePolynomial::of(&b, "t").unwrap());
        assert_eq!(pa, SizePolynomial::of(&c, "t").unwrap());
        let d = Shape::from(vec![n().add(&Dim::new(1)).unwrap(), m()]);
        let e = Shape::from(vec![m(), n()]);
        assert_ne!(SizePolynomial::of(&d, "t").unwrap(), SizePolynomial::of(&e, "t").unwrap());
        assert_eq!(SizePolynomial::of(&Shape::from([2, 0, 5]), "t").unwrap().as_int(), Some(0));
        assert_eq!(SizePolynomial::of(&Shape::scalar(), "t").unwrap().as_int(), Some(1));
        let p = |s: Shape| SizePolynomial::of(&s, "t").unwrap();
        let six_n = p(Shape::from(vec![n(), Dim::new(6)]));
        assert_eq!(six_n.div_to_dim(&p(Shape::from([3]))), Some(n().mul_int(2).unwrap()));
        assert_eq!(six_n.div_to_dim(&p(Shape::from(vec![n()]))), Some(Dim::new(6)));
        assert_eq!(six_n.div_to_dim(&p(Shape::from([4]))), None);
        assert_eq!(six_n.div_to_dim(&p(Shape::from([0]))), None);
        let nm = p(Shape::from(vec![n(), m()]));
        assert_eq!(nm.div_to_dim(&p(Shape::from([1]))), None, "n*m is not affine");
        assert_eq!(nm.div_to_dim(&p(Shape::from(vec![m()]))), Some(n()));
    }

    #[test]
    fn broadcasting() {
        let s = |d: Vec<Dim>| Shape::from(d);
        let a = s(vec![n(), Dim::new(1), Dim::new(3)]);
        let b = s(vec![Dim::new(4), Dim::new(1)]);
        assert_eq!(broadcast_shapes("add", &[&a, &b]).unwrap(), s(vec![n(), Dim::new(4), Dim::new(3)]));
        // n with n, and n with 1.
        let c = s(vec![n()]);
        let d = s(vec![Dim::new(1)]);
        assert_eq!(broadcast_shapes("add", &[&c, &d]).unwrap(), c);
        assert_eq!(broadcast_shapes("add", &[&c, &c]).unwrap(), c);
        // n with m, and 2 with 3, do not broadcast.
        let err = broadcast_shapes("add", &[&c, &s(vec![m()])]).unwrap_err();
        assert_eq!(err.to_string(), "add: shapes (n,) and (m,) cannot be broadcast together");
        assert!(broadcast_shapes("mul", &[&Shape::from([2]), &Shape::from([3])]).is_err());
        // Zero-length axes broadcast with 1 and with 0 only.
        assert_eq!(
            broadcast_shapes("add", &[&Shape::from([0, 3]), &Shape::from([1, 3])]).unwrap(),
            Shape::from([0, 3])
        );
        assert_eq!(broadcast_shapes("add", &[]).unwrap(), Shape::scalar());
    }
}
