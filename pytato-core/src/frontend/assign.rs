//! Partial replacement: numpy's `x[items] = value` as a value. Arrays are immutable, so
//! [`set_index`] returns a new array, `x` with the region `x[items]` replaced by `value`
//! (broadcast to the region's shape and cast to `x`'s dtype, as numpy's `__setitem__` does), and
//! `x` itself is unchanged. The region is a basic index (integers, slices with any step, new
//! axes, an ellipsis); the result is one index lambda that selects, element by element, between
//! `value` (inside the region) and `x`, so it fuses with what surrounds it.
//!
//! ```
//! use pytato_core::{frontend as pt, s, DType};
//! let x = pt::placeholder("x", [4, 5], DType::F64).unwrap();
//! let v = pt::placeholder("v", [5], DType::F64).unwrap();
//! // x[1:3, :] = v, and x[:, ::2] = 0
//! let y = pt::set_index(&x, &s![1..3, ..], &v).unwrap();
//! let z = pt::set_index(&y, &s![.., ..;2], 0.0).unwrap();
//! assert_eq!((z.shape().to_string(), z.dtype()), ("(4, 5)".to_string(), DType::F64));
//! ```

use crate::array::Array;
use crate::array::Order;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::expr::{BinaryOp, CompareOp, Expr};
use crate::scalar::Scalar;
use crate::shape::{Dim, Shape, broadcast_shapes};

use super::indexing::{Idx, expand_items, normalize_int, normalize_slice};
use super::operand::{LambdaBuilder, Operand, cast_expr};
use super::shape_ops::reshape;

/// `x` with `x[items]` replaced by `value`: numpy's `x[items] = value`, returned as a new array
/// (see the [module docs](self)). `value` is an array or a scalar; it must broadcast to the
/// region's shape, and is cast to `x`'s dtype (a float into an integer array truncates, as in
/// numpy; a Python-style integer scalar out of the dtype's range is an error, as in numpy 2).
///
/// A boolean mask over the leading axes (`x[mask] = v`, `x[mask, :] = v`) is supported where `v`
/// broadcasts to every selected position (a scalar, or an array of the trailing axes' shape).
/// Integer index arrays (a scatter) and values with one entry per selected position are not
/// supported yet: [`Error::InvalidArgument`].
pub fn set_index(x: &Array, items: &[Idx], value: impl Into<Operand>) -> Result<Array> {
    let op = "set_index";
    let value = value.into();
    if let [Idx::Array(mask), rest @ ..] = items
        && mask.dtype() == DType::Bool
        && rest.iter().all(is_full)
    {
        return set_mask(x, mask, value);
    }
    let expanded = expand_items(op, items, x)?;
    if expanded.iter().any(|i| matches!(i, Idx::Array(_))) {
        return Err(Error::invalid(op, "index arrays in an assignment (a scatter) are not supported yet"));
    }
    let region = x.index(items).map_err(|e| e.renamed("index", op))?;
    let region_shape = region.shape();
    let value = drop_leading_ones(value, region_shape.ndim())?;
    let value_shape = value.shape();
    let fits = broadcast_shapes(op, &[&value_shape, region_shape]).is_ok_and(|s| &s == region_shape);
    if !fits {
        return Err(Error::invalid(
            op,
            format!(
                "a value of shape {value_shape} cannot be broadcast to the region of shape {region_shape} (of an array \
                 of shape {})",
                x.shape()
            ),
        ));
    }

    let mut builder = LambdaBuilder::new(x.shape().clone());
    // Whether the output index lies in the region, and its position in the region, axis by axis.
    let mut inside: Vec<Expr> = Vec::new();
    let mut positions: Vec<Expr> = Vec::new();
    let mut axis = 0;
    for item in &expanded {
        let i = Expr::iname(axis);
        match item {
            Idx::NewAxis => positions.push(Expr::i64(0)),
            Idx::Int(k) => {
                let k = normalize_int(op, *k, axis, x)?;
                inside.push(i.compare(CompareOp::Eq, builder.dim(&k)?));
                axis += 1;
            }
            Idx::Slice { start, stop, step } => {
                let slice = normalize_slice(op, *start, *stop, *step, axis, x)?;
                let (first, end) = (builder.dim(&slice.start)?, builder.dim(&slice.stop)?);
                let size = slice.step.unsigned_abs() as i64;
                // The distance from the slice's first index, in its direction.
                let (distance, after_first, before_end) = if slice.step > 0 {
                    (
                        i.clone().binary(BinaryOp::Sub, first.clone()),
                        i.clone().compare(CompareOp::Ge, first),
                        i.compare(CompareOp::Lt, end),
                    )
                } else {
                    (
                        first.clone().binary(BinaryOp::Sub, i.clone()),
                        i.clone().compare(CompareOp::Le, first),
                        i.compare(CompareOp::Gt, end),
                    )
                };
                inside.extend([after_first, before_end]);
                if size == 1 {
                    positions.push(distance);
                } else {
                    let on_step = distance.clone().binary(BinaryOp::Rem, Expr::i64(size));
                    inside.push(on_step.compare(CompareOp::Eq, Expr::i64(0)));
                    positions.push(distance.binary(BinaryOp::FloorDiv, Expr::i64(size)));
                }
                axis += 1;
            }
            Idx::Ellipsis | Idx::Array(_) => unreachable!("expanded, and rejected above"),
        }
    }

    let new = match &value {
        Operand::Array(v) => {
            let read = builder.read_broadcast_at(v, region_shape, &positions);
            cast_expr(read, v.dtype(), x.dtype())
        }
        Operand::Scalar(s) => Expr::Const(Scalar::from_weak(s, x.dtype())?),
    };
    let expr = match inside.into_iter().reduce(|a, b| a.binary(BinaryOp::LogicalAnd, b)) {
        Some(cond) => {
            let old = builder.read_broadcast(x);
            Expr::if_then_else(cond, new, old)
        }
        None => new,
    };
    builder.finish(expr)
}

/// `value` with leading axes of length 1 beyond `ndim` axes dropped, as numpy's `__setitem__`
/// drops them (`x[0] = ones((1, n))`).
fn drop_leading_ones(value: Operand, ndim: usize) -> Result<Operand> {
    match value {
        Operand::Array(v)
            if v.ndim() > ndim && v.shape().dims()[..v.ndim() - ndim].iter().all(|d| *d == Dim::new(1)) =>
        {
            let kept = Shape::from(v.shape().dims()[v.ndim() - ndim..].to_vec());
            Ok(Operand::Array(reshape(&v, kept, Order::C)?))
        }
        other => Ok(other),
    }
}

/// Whether `item` selects a whole axis (`:` or `...`).
fn is_full(item: &Idx) -> bool {
    matches!(item, Idx::Ellipsis | Idx::Slice { start: None, stop: None, step: 1 })
}

/// `x[mask] = value` for a boolean `mask` over the leading axes of `x`, where `value` has no
/// axis for the selected positions (it broadcasts to `x.shape[mask.ndim:]`): `where(mask, value,
/// x)`, each selected position taking all of `value`. A value with one entry per selected
/// position needs the positions counted (data-dependent shapes), which is not supported yet.
fn set_mask(x: &Array, mask: &Array, value: Operand) -> Result<Array> {
    let op = "set_index";
    let lead = mask.ndim();
    if lead > x.ndim() || mask.shape().dims() != &x.shape().dims()[..lead] {
        return Err(Error::invalid(
            op,
            format!(
                "a boolean mask of shape {} does not match the leading axes of an array of shape {}",
                mask.shape(),
                x.shape()
            ),
        ));
    }
    let trailing = Shape::from(x.shape().dims()[lead..].to_vec());
    let value = drop_leading_ones(value, trailing.ndim())?;
    let value_shape = value.shape();
    let fits = broadcast_shapes(op, &[&value_shape, &trailing]).is_ok_and(|s| s == trailing);
    if !fits {
        return Err(Error::invalid(
            op,
            format!(
                "a value of shape {value_shape} for the positions a mask of shape {} selects in an array of shape {}: \
                 values broadcast to each selected position ({trailing}) are supported; one value per selected \
                 position needs data-dependent shapes, which are not supported yet",
                mask.shape(),
                x.shape()
            ),
        ));
    }
    let mut builder = LambdaBuilder::new(x.shape().clone());
    let selected = builder.read_at(mask, (0..lead).map(Expr::iname).collect());
    let new = match &value {
        Operand::Array(v) => {
            let positions: Vec<Expr> = (lead..x.ndim()).map(Expr::iname).collect();
            let read = builder.read_broadcast_at(v, &trailing, &positions);
            cast_expr(read, v.dtype(), x.dtype())
        }
        Operand::Scalar(s) => Expr::Const(Scalar::from_weak(s, x.dtype())?),
    };
    let old = builder.read_broadcast(x);
    builder.finish(Expr::if_then_else(selected, new, old))
}

impl Array {
    /// `self` with `self[items]` replaced by `value`; see [`set_index`].
    pub fn set_index(&self, items: impl AsRef<[Idx]>, value: impl Into<Operand>) -> Result<Array> {
        set_index(self, items.as_ref(), value)
    }
}

#[cfg(test)]
mod tests {
    use crate::frontend as pt;
    use crate::{DType, Dim, Error, s};

    #[test]
    fn bad_assignments_are_typed_errors_naming_the_operation_and_shapes() {
        let x = pt::placeholder("x", [4, 5], DType::F64).unwrap();
        let wrong = pt::placeholder("w", [3], DType::F64).unwrap();
        match x.set_index(s![1..3, ..], &wrong) {
            Err(Error::InvalidArgument { op, message }) => {
                assert_eq!(op, "set_index");
                assert!(message.contains("(3,)") && message.contains("(2, 5)"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let i = pt::placeholder("i", [2], DType::I64).unwrap();
        assert!(matches!(x.set_index(s![&i], 0.0), Err(Error::InvalidArgument { .. })));
        assert!(matches!(x.set_index(s![4], 0.0), Err(Error::IndexOutOfRange { .. })));
        assert!(matches!(x.set_index(s![0, 0, 0], 0.0), Err(Error::InvalidArgument { .. })));
        // numpy 2 refuses a Python integer out of the target's range.
        let small = pt::placeholder("b", [3], DType::I8).unwrap();
        assert!(small.set_index(s![0], 300).is_err());
        assert!(small.set_index(s![0], 100).is_ok());
    }

    #[test]
    fn masks_must_match_the_leading_axes_and_values_must_not_need_a_count() {
        let x = pt::placeholder("x", [4, 3], DType::F64).unwrap();
        let rows = pt::placeholder("m", [4], DType::Bool).unwrap();
        let wrong = pt::placeholder("w", [3], DType::Bool).unwrap();
        assert!(matches!(x.set_index(s![&wrong], 0.0), Err(Error::InvalidArgument { .. })));
        // One value per selected row would need the rows counted first.
        let per_row = pt::placeholder("v", [2, 3], DType::F64).unwrap();
        match x.set_index(s![&rows], &per_row) {
            Err(Error::InvalidArgument { message, .. }) => assert!(message.contains("data-dependent"), "{message}"),
            other => panic!("{other:?}"),
        }
        let row = pt::placeholder("r", [3], DType::F64).unwrap();
        assert_eq!(x.set_index(s![&rows, ..], &row).unwrap().shape(), x.shape());
    }

    #[test]
    fn the_result_has_the_arrays_shape_and_dtype() {
        let x = pt::placeholder("x", [Dim::param("n"), Dim::new(3)], DType::I32).unwrap();
        let v = pt::placeholder("v", [3], DType::F64).unwrap();
        let y = x.set_index(s![1..], &v).unwrap();
        assert_eq!((y.shape(), y.dtype()), (x.shape(), DType::I32));
        // A stepped slice of a symbolic axis has no affine length: the same error as indexing.
        assert_eq!(x.set_index(s![1..;2], &v).unwrap_err().kind(), x.index(s![1..;2]).unwrap_err().kind());
    }
}
