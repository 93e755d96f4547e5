//! The basic constructors that operators, indexing and assignment rest on: filled arrays
//! (`full`, `zeros`), `reshape`, `ravel`, `broadcast_to`, unit axes and the positions of nonzero
//! elements. `pytato-frontend` re-exports the public ones under numpy's names.

use crate::arith::not_equal;
use crate::array::{Array, Order};
use crate::dtype::{DType, WeakScalar};
use crate::error::{Error, Result};
use crate::expr::{CompareOp, Expr};
use crate::names::COUNT_PREFIX;
use crate::operand::LambdaBuilder;
use crate::scalar::Scalar;
use crate::shape::{Dim, Shape, SizePolynomial, broadcast_shapes};
use crate::size_check::SizeCheck;
use crate::tags::{CountNamed, ExpandedDimsReshape};

/// `axis` in `-ndim..ndim` as an index in `0..ndim`.
pub fn normalize_axis(op: &str, axis: i64, ndim: usize, shape: &Shape) -> Result<usize> {
    let n = ndim as i64;
    let a = if axis < 0 { axis + n } else { axis };
    if (0..n).contains(&a) {
        Ok(a as usize)
    } else {
        Err(Error::AxisOutOfRange { op: op.into(), axis, shape: shape.clone() })
    }
}

/// `a` with a new shape (numpy `reshape`). One length may be `-1`, inferred from the others;
/// symbolic shapes work when the inferred length is affine (`(n, 6)` to `(-1, 3)` gives `2*n`).
/// Returns `a` itself when the shape does not change.
///
/// ```
/// use pytato_core::{DType, Order};
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 6], DType::F64).unwrap();
/// assert_eq!(pt::reshape(&a, [3, -1], Order::C).unwrap().shape().to_string(), "(3, 4)");
/// assert!(pt::reshape(&a, [5, -1], Order::C).is_err());
/// // (n, m) flattened would be n·m long: not an affine length
/// let b = pt::placeholder("b", [pytato_core::Dim::param("n"), pytato_core::Dim::param("m")], DType::F64).unwrap();
/// assert!(pt::reshape(&b, [-1], Order::C).unwrap_err().to_string().contains("affine"));
/// ```
#[track_caller]
pub fn reshape(a: &Array, shape: impl Into<Shape>, order: Order) -> Result<Array> {
    let _site = crate::created_at::enter();
    let requested: Shape = shape.into();
    let shape = infer_shape("reshape", a, &requested)?;
    if shape == *a.shape() {
        return Ok(a.clone());
    }
    Array::new_reshape(a, shape, order).map_err(|e| match e {
        Error::ShapeMismatch { .. } => cannot_reshape(a, &requested),
        other => other,
    })
}

fn cannot_reshape(a: &Array, requested: &Shape) -> Error {
    Error::ShapeMismatch {
        op: "reshape".into(),
        expected: format!("a shape with as many elements as {requested}"),
        got: a.shape().clone(),
    }
}

/// Replaces a `-1` in `requested` by the length that keeps `a`'s size.
fn infer_shape(op: &str, a: &Array, requested: &Shape) -> Result<Shape> {
    let minus_one = Dim::new(-1);
    let unknown: Vec<usize> = (0..requested.ndim()).filter(|&i| requested[i] == minus_one).collect();
    match unknown[..] {
        [] => Ok(requested.clone()),
        [at] => {
            let mut dims = requested.dims().to_vec();
            dims[at] = Dim::new(1);
            let known = SizePolynomial::of(&Shape::from(dims.clone()), op)?;
            let total = SizePolynomial::of(a.shape(), op)?;
            let symbolic = a.shape().dims().iter().chain(&dims).any(|d| d.as_int().is_none());
            dims[at] = total.div_to_dim(&known).ok_or_else(|| {
                if !symbolic {
                    // An exact quotient beyond int64 (a shape whose size overflows int64) is no
                    // size mismatch: say what overflowed.
                    return match (total.as_int(), known.as_int()) {
                        (Some(t), Some(k)) if k != 0 && t % k == 0 => Error::Overflow {
                            op: op.into(),
                            what: format!(
                                "the length -1 stands for in {requested}: {} elements of {}",
                                t / k,
                                a.shape()
                            ),
                        },
                        _ => cannot_reshape(a, requested),
                    };
                }
                // Shapes are affine in size parameters: `(n, m)` to `(-1,)` would be `n·m`.
                Error::ShapeMismatch {
                    op: op.into(),
                    expected: format!(
                        "a shape whose -1 stands for an affine length of size parameters, or a divisor of the \
                         size, but {requested} would need the size of {} divided by the other lengths",
                        a.shape()
                    ),
                    got: a.shape().clone(),
                }
            })?;
            Ok(Shape::from(dims))
        }
        _ => Err(Error::invalid(op, format!("can only specify one unknown dimension in {requested}"))),
    }
}

/// `a` flattened to one axis in C order (numpy `ravel`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::I32).unwrap();
/// assert_eq!(pt::ravel(&a).unwrap().shape().to_string(), "(6,)");
/// ```
#[track_caller]
pub fn ravel(a: &Array) -> Result<Array> {
    let _site = crate::created_at::enter();
    reshape(a, [-1], Order::C)
}

/// `a` broadcast to `shape` (numpy `broadcast_to`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 1], DType::F64).unwrap();
/// assert_eq!(pt::broadcast_to(&a, [2, 3, 4]).unwrap().shape().to_string(), "(2, 3, 4)");
/// assert!(pt::broadcast_to(&a, [4, 4]).is_err());
/// ```
#[track_caller]
pub fn broadcast_to(a: &Array, shape: impl Into<Shape>) -> Result<Array> {
    let _site = crate::created_at::enter();
    let shape = shape.into();
    shape.validate("broadcast_to")?;
    if shape == *a.shape() {
        return Ok(a.clone());
    }
    let fits =
        a.ndim() <= shape.ndim() && broadcast_shapes("broadcast_to", &[a.shape(), &shape]).is_ok_and(|b| b == shape);
    if !fits {
        return Err(Error::BroadcastMismatch { op: "broadcast_to".into(), shapes: vec![a.shape().clone(), shape] });
    }
    let mut builder = LambdaBuilder::new(shape);
    let read = builder.read_broadcast(a);
    builder.finish(read)
}

/// `a` broadcast to `shape` as numpy broadcasts when the program runs: lengths known now must fit
/// now (`None` where they do not); where a length of `a` or of `shape` is decided later (the
/// count a mask selects, a size parameter), `a` is read at 0 along that axis where its length
/// turns out to be 1, and the two lengths are checked when the sizes are known
/// ([`SizeCheck::Broadcast`], an error naming `op`).
pub(crate) fn broadcast_when_run(op: &str, a: &Array, shape: &Shape) -> Result<Option<Array>> {
    if broadcast_shapes(op, &[a.shape(), shape]).is_ok_and(|s| &s == shape) {
        return broadcast_to(a, shape.clone()).map(Some);
    }
    let Some(offset) = shape.ndim().checked_sub(a.ndim()) else { return Ok(None) };
    let mut builder = LambdaBuilder::new(shape.clone());
    let mut checks = Vec::new();
    let mut at = Vec::with_capacity(a.ndim());
    for (k, length) in a.shape().dims().iter().enumerate() {
        let to = &shape[offset + k];
        at.push(if length == to {
            Expr::iname(offset + k)
        } else if length.as_int() == Some(1) {
            Expr::i64(0)
        } else if length.is_concrete() && to.is_concrete() {
            return Ok(None);
        } else {
            let one = builder.dim(length)?.compare(CompareOp::Eq, Expr::i64(1));
            checks.push(SizeCheck::Broadcast { op: op.into(), length: length.clone(), to: to.clone() });
            Expr::if_then_else(one, Expr::i64(0), Expr::iname(offset + k))
        });
    }
    let read = builder.read_at(a, at);
    builder.finish(read)?.with_size_checks(checks).map(Some)
}

/// `a` reshaped with length-1 axes at `positions` (sorted) of the result, tagged
/// [`ExpandedDimsReshape`].
pub fn insert_unit_axes(a: &Array, positions: &[usize]) -> Result<Array> {
    if positions.is_empty() {
        return Ok(a.clone());
    }
    let mut old = a.shape().dims().iter();
    let dims: Vec<Dim> = (0..a.ndim() + positions.len())
        .map(|i| if positions.contains(&i) { Dim::new(1) } else { old.next().expect("enough axes").clone() })
        .collect();
    Array::new_reshape(a, Shape::from(dims), Order::C)?.tagged(ExpandedDimsReshape(positions.to_vec()))
}

/// An array of `shape` filled with `value`; the dtype is `dtype`, or the value's own (`int64`,
/// `float64`, `complex128` or `bool`) as in numpy's `full`.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::full([2, 3], 7, None).unwrap().dtype(), DType::I64);
/// assert_eq!(pt::full([2, 3], 7, DType::F32).unwrap().dtype(), DType::F32);
/// ```
#[track_caller]
pub fn full(shape: impl Into<Shape>, value: impl Into<WeakScalar>, dtype: impl Into<Option<DType>>) -> Result<Array> {
    let _site = crate::created_at::enter();
    let value = value.into();
    let dtype = dtype.into().unwrap_or(value.default_dtype());
    let shape = shape.into();
    shape.validate("full")?;
    LambdaBuilder::new(shape).finish(Expr::Const(Scalar::from_weak(&value, dtype)?))
}

/// An array of zeros (numpy `zeros`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// assert_eq!(pt::zeros([4], DType::C64).unwrap().dtype(), DType::C64);
/// ```
#[track_caller]
pub fn zeros(shape: impl Into<Shape>, dtype: DType) -> Result<Array> {
    let _site = crate::created_at::enter();
    full(shape, 0, dtype)
}

/// The positions of the nonzero elements of `a` (at least one axis) as one `int64` array of shape
/// `(a.ndim, count)`: the node behind every selection here.
pub fn nonzero_positions(op: &str, a: &Array) -> Result<Array> {
    if a.ndim() == 0 {
        return Err(Error::invalid(
            op,
            "a 0-d array has no positions to select (numpy: calling nonzero on 0d arrays is not allowed); use \
             atleast_1d first",
        ));
    }
    let named = a.tags_of_type::<CountNamed>().next().map(|t| t.0.clone());
    let mask = if a.dtype() == DType::Bool { a.clone() } else { not_equal(a, 0)? };
    let count = named.unwrap_or_else(|| format!("{COUNT_PREFIX}{:016x}", mask.structural_hash()));
    Array::new_nonzero(&mask, &count)
}
