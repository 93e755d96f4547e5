//! Partial replacement: numpy's `x[items] = value` and `np.add.at(x, items, value)` as values.
//! Arrays are immutable, so [`set_index`] and [`add_at`] return a new array and `x` itself is
//! unchanged.
//!
//! Where the region is a basic index (integers, slices with any step, new axes, an ellipsis) or a
//! boolean mask over the leading axes whose value fits every selected position, the result is one
//! index lambda that selects, element by element, between the new value and `x`, so it fuses with
//! what surrounds it. Index arrays and one value per masked position make a
//! [`Scatter`](crate::NodeKind::Scatter): the positions of the region are worked out by indexing
//! an array of flat positions exactly as `x[items]` would index `x` (numpy's shape rules, negative
//! indices, range checks), and the values land there in row-major order of the region, so of
//! repeated positions the last one wins (what numpy does, though it does not promise it).
//!
//! ```
//! use pytato_core::{s, DType};
//! use pytato_frontend as pt;
//! let x = pt::placeholder("x", [4, 5], DType::F64).unwrap();
//! let v = pt::placeholder("v", [5], DType::F64).unwrap();
//! // x[1:3, :] = v, and x[:, ::2] = 0
//! let y = pt::set_index(&x, &s![1..3, ..], &v).unwrap();
//! let z = pt::set_index(&y, &s![.., ..;2], 0.0).unwrap();
//! assert_eq!((z.shape().to_string(), z.dtype()), ("(4, 5)".to_string(), DType::F64));
//! // x[i] = 1.0 and np.add.at(x, i, 1.0) with an index array: scatters.
//! let i = pt::placeholder("i", [7], DType::I64).unwrap();
//! assert_eq!(x.set_index(s![&i], 1.0).unwrap().kind_name(), "Scatter");
//! assert_eq!(pt::add_at(&x, &s![&i, 2], 1.0).unwrap().shape(), x.shape());
//! ```

use crate::array::{Array, IndexItem, Order, ScatterMode};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::expr::{BinaryOp, CompareOp, Expr};
use crate::scalar::Scalar;
use crate::shape::{Dim, Shape, broadcast_shapes};
use crate::size_check::SizeCheck;

use crate::arith::{add, astype};
use crate::basic::full;
use crate::basic::{broadcast_when_run, reshape};
use crate::indexing::{Idx, booleans_as_axes, expand_items, normalize_int, normalize_slice};
use crate::operand::{LambdaBuilder, Operand, cast_expr};

/// `x` with `x[items]` replaced by `value`: numpy's `x[items] = value`, returned as a new array
/// (see the [module docs](self)). `value` is an array or a scalar; it must broadcast to the
/// region's shape, and is cast to `x`'s dtype (a float into an integer array truncates, as in
/// numpy; a Python-style integer scalar out of the dtype's range is an error, as in numpy 2).
///
/// Index arrays and boolean masks may appear anywhere (numpy's rules, as in
/// [`index`](crate::indexing::index)); see the [module docs](self) for how each form is computed and which
/// write wins.
#[track_caller]
pub fn set_index(x: &Array, items: &[Idx], value: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    let op = "set_index";
    let value = value.into();
    let (with_axes, items_there, new_axes) = booleans_as_axes(x, items)?;
    if !new_axes.is_empty() {
        // `x[True] = v` writes `x` with a new axis of length 1; the result has `x`'s shape.
        let written = set_index(&with_axes, &items_there, value)?;
        return reshape(&written, x.shape().clone(), Order::C);
    }
    if let [Idx::Array(mask), rest @ ..] = items
        && mask.dtype() == DType::Bool
        && rest.iter().all(is_full)
        && let Some(result) = set_mask(x, mask, &value)?
    {
        return Ok(result);
    }
    if items.iter().any(|i| matches!(i, Idx::Array(_))) {
        return scatter(op, x, items, value, ScatterMode::Set);
    }
    let expanded = expand_items(op, items, x)?;
    let region = x.index(items).map_err(|e| e.renamed("index", op))?;
    let region_shape = region.shape();
    let value = drop_leading_ones(value, region_shape.ndim())?;
    check_fits(op, &value, region_shape, x)?;

    let mut builder = LambdaBuilder::new(x.shape().clone());
    // Whether the output index lies in the region, and its position in the region, axis by axis.
    let mut inside: Vec<Expr> = Vec::new();
    let mut positions: Vec<Expr> = Vec::new();
    // The integers and slices, as a basic index holds them: written where they fit the sizes.
    let mut items: Vec<IndexItem> = Vec::new();
    let mut axis = 0;
    for item in &expanded {
        let i = Expr::iname(axis);
        match item {
            Idx::NewAxis => positions.push(Expr::i64(0)),
            Idx::Int(k) => {
                let k = normalize_int(op, *k, axis, x)?;
                inside.push(i.compare(CompareOp::Eq, builder.dim(&k)?));
                items.push(IndexItem::Int(k));
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
                items.push(IndexItem::Slice(slice));
                axis += 1;
            }
            Idx::Ellipsis | Idx::Array(_) | Idx::Bool(_) => unreachable!("expanded, and rejected above"),
        }
    }

    let new = match &value {
        Operand::Array(v) => {
            let read = builder.read_broadcast_at(v, region_shape, &positions);
            cast_expr(read, v.dtype(), x.dtype())
        }
        Operand::Scalar(s) => Expr::Const(Scalar::assign_weak(op, s, x.dtype())?),
    };
    let expr = match inside.into_iter().reduce(|a, b| a.binary(BinaryOp::LogicalAnd, b)) {
        Some(cond) => {
            let old = builder.read_broadcast(x);
            Expr::if_then_else(cond, new, old)
        }
        None => new,
    };
    builder.finish(expr)?.with_size_checks(SizeCheck::for_index_items(op, x.shape(), &items))
}

/// `x` with `value` added at `x[items]`, once per occurrence of each position: numpy's
/// `np.add.at(x, items, value)`, returned as a new array. Each sum is computed as numpy computes
/// it: in the promoted dtype of `x` and `value` (a scalar `value` takes its default dtype, `int64`
/// for an integer, as `np.add.at` does), cast back to `x`'s dtype after every addition, in
/// row-major order of the region.
///
/// ```
/// use pytato_core::{s, DType};
/// use pytato_frontend as pt;
/// let counts = pt::zeros([10], DType::I64).unwrap();
/// let bins = pt::placeholder("bins", [1000], DType::I64).unwrap();
/// let histogram = pt::add_at(&counts, &s![&bins], 1).unwrap();
/// assert_eq!(histogram.shape().to_string(), "(10,)");
/// ```
#[track_caller]
pub fn add_at(x: &Array, items: &[Idx], value: impl Into<Operand>) -> Result<Array> {
    let _site = crate::created_at::enter();
    let op = "add_at";
    let value = match value.into() {
        Operand::Scalar(s) => Operand::Array(full(Shape::scalar(), s, None)?),
        array => array,
    };
    let (with_axes, items_there, new_axes) = booleans_as_axes(x, items)?;
    if !new_axes.is_empty() {
        let added = add_at(&with_axes, &items_there, value)?;
        return reshape(&added, x.shape().clone(), Order::C);
    }
    if items.iter().any(|i| matches!(i, Idx::Array(_))) {
        return scatter(op, x, items, value, ScatterMode::Add);
    }
    // A basic index selects each position once: x[items] = x[items] + value.
    let region = x.index(items).map_err(|e| e.renamed("index", op))?;
    let value = drop_leading_ones(value, region.ndim())?;
    check_fits(op, &value, region.shape(), x)?;
    let Operand::Array(value) = value else { unreachable!("made an array above") };
    let sum = add(&region, &value).map_err(|e| e.renamed("add", op))?;
    set_index(x, items, &sum).map_err(|e| e.renamed("set_index", op))
}

impl Array {
    /// `np.add.at(self, items, value)` as a new array; see [`add_at`].
    #[track_caller]
    pub fn add_at(&self, items: impl AsRef<[Idx]>, value: impl Into<Operand>) -> Result<Array> {
        let _site = crate::created_at::enter();
        add_at(self, items.as_ref(), value)
    }
}

/// An `int64` array of `x`'s shape holding each element's flat row-major position: indexing it
/// as `x[items]` gives the positions a scatter writes.
fn flat_positions(x: &Array) -> Result<Array> {
    let mut builder = LambdaBuilder::new(x.shape().clone());
    let mut position = Expr::i64(0);
    for (axis, len) in x.shape().dims().iter().enumerate() {
        position = if axis == 0 {
            Expr::iname(0)
        } else {
            let len = builder.dim(len)?;
            position.binary(BinaryOp::Mul, len).binary(BinaryOp::Add, Expr::iname(axis))
        };
    }
    builder.finish(position)
}

/// `x` with `value` scattered into the region `x[items]` (see the [module docs](self)): values are
/// broadcast to the region and, to replace, cast to `x`'s dtype as `__setitem__` casts.
fn scatter(op: &str, x: &Array, items: &[Idx], value: Operand, mode: ScatterMode) -> Result<Array> {
    let positions = match items {
        // One integer array into a vector (a histogram): its values are the positions, negative
        // ones counting from the end, as the scatter reads them; no array of positions is made.
        [Idx::Array(i)] if x.ndim() == 1 && i.dtype().is_integer() => astype(i, DType::I64)?,
        _ => flat_positions(x)?.index(items).map_err(|e| e.renamed("index", op))?,
    };
    let region = positions.shape().clone();
    let value = drop_leading_ones(value, region.ndim())?;
    let values = match (value, mode) {
        (Operand::Scalar(s), _) => {
            Scalar::assign_weak(op, &s, x.dtype())?; // numpy's checks of `x[i] = value`; in range, `full` casts alike
            full(region.clone(), s, x.dtype())?
        }
        (Operand::Array(v), ScatterMode::Set) => astype(&broadcast_value(op, &v, &region, x)?, x.dtype())?,
        (Operand::Array(v), ScatterMode::Add) => broadcast_value(op, &v, &region, x)?,
    };
    Array::new_scatter(x, &positions, &values, mode)
}

/// `value` broadcast to the region (of `x`) it is assigned to, as numpy broadcasts it when the
/// assignment runs ([`broadcast_when_run`]); an error showing the shapes where lengths known now
/// do not fit.
fn broadcast_value(op: &str, value: &Array, region: &Shape, x: &Array) -> Result<Array> {
    broadcast_when_run(op, value, region)?.ok_or_else(|| misfit(op, value.shape(), region, x))
}

/// Whether `value` broadcasts to the region (of `x`) it is assigned to now; an error showing the
/// shapes otherwise.
fn check_fits(op: &str, value: &Operand, region: &Shape, x: &Array) -> Result<()> {
    let value_shape = value.shape();
    let fits = broadcast_shapes(op, &[&value_shape, region]).is_ok_and(|s| &s == region);
    if fits { Ok(()) } else { Err(misfit(op, &value_shape, region, x)) }
}

/// The error of a value of shape `value` that does not broadcast to its region (of `x`).
fn misfit(op: &str, value: &Shape, region: &Shape, x: &Array) -> Error {
    Error::invalid(
        op,
        format!(
            "a value of shape {value} cannot be broadcast to the region of shape {region} (of an array of shape {})",
            x.shape()
        ),
    )
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
/// x)`, each selected position taking all of `value`. `None` when `value` does not broadcast so
/// (one value per selected position, say): that is a scatter.
fn set_mask(x: &Array, mask: &Array, value: &Operand) -> Result<Option<Array>> {
    let lead = mask.ndim();
    if lead > x.ndim() || mask.shape().dims() != &x.shape().dims()[..lead] {
        return Ok(None); // the scatter's indexing reports the mismatch as indexing does
    }
    let trailing = Shape::from(x.shape().dims()[lead..].to_vec());
    let value = drop_leading_ones(value.clone(), trailing.ndim())?;
    let value_shape = value.shape();
    let fits = broadcast_shapes("set_index", &[&value_shape, &trailing]).is_ok_and(|s| s == trailing);
    if !fits {
        return Ok(None);
    }
    let mut builder = LambdaBuilder::new(x.shape().clone());
    let selected = builder.read_at(mask, (0..lead).map(Expr::iname).collect());
    let new = match &value {
        Operand::Array(v) => {
            let positions: Vec<Expr> = (lead..x.ndim()).map(Expr::iname).collect();
            let read = builder.read_broadcast_at(v, &trailing, &positions);
            cast_expr(read, v.dtype(), x.dtype())
        }
        Operand::Scalar(s) => Expr::Const(Scalar::assign_weak("set_index", s, x.dtype())?),
    };
    let old = builder.read_broadcast(x);
    builder.finish(Expr::if_then_else(selected, new, old)).map(Some)
}

impl Array {
    /// `self` with `self[items]` replaced by `value`; see [`set_index`].
    #[track_caller]
    pub fn set_index(&self, items: impl AsRef<[Idx]>, value: impl Into<Operand>) -> Result<Array> {
        let _site = crate::created_at::enter();
        set_index(self, items.as_ref(), value)
    }
}

#[cfg(test)]
mod tests {
    use crate::pt;
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
        match x.set_index(s![&i], &wrong) {
            Err(Error::InvalidArgument { op, message }) => {
                assert_eq!(op, "set_index");
                assert!(message.contains("(3,)") && message.contains("(2, 5)"), "{message}");
            }
            other => panic!("{other:?}"),
        }
        let f = pt::placeholder("f", [2], DType::F64).unwrap();
        assert!(matches!(x.set_index(s![&f], 0.0), Err(Error::UnsupportedDType { .. })));
        assert!(matches!(x.set_index(s![4], 0.0), Err(Error::IndexOutOfRange { .. })));
        assert!(matches!(x.set_index(s![0, 0, 0], 0.0), Err(Error::InvalidArgument { .. })));
        // numpy 2 refuses a Python integer out of the target's range.
        let small = pt::placeholder("b", [3], DType::I8).unwrap();
        assert!(small.set_index(s![0], 300).is_err());
        assert!(small.set_index(s![0], 100).is_ok());
    }

    #[test]
    fn masks_must_match_the_axes_they_index() {
        let x = pt::placeholder("x", [4, 3], DType::F64).unwrap();
        let rows = pt::placeholder("m", [4], DType::Bool).unwrap();
        let wrong = pt::placeholder("w", [3], DType::Bool).unwrap();
        assert!(matches!(x.set_index(s![&wrong], 0.0), Err(Error::ShapeMismatch { .. })));
        // A value for every selected row broadcasts: one select, no scatter.
        let row = pt::placeholder("r", [3], DType::F64).unwrap();
        let y = x.set_index(s![&rows, ..], &row).unwrap();
        assert_eq!((y.shape(), y.kind_name()), (x.shape(), "IndexLambda"));
        // One value per selected row is a scatter; its values must have the selection's shape.
        let selected = x.index(s![&rows]).unwrap();
        let doubled = &selected * 2.0;
        assert_eq!(x.set_index(s![&rows], &doubled).unwrap().kind_name(), "Scatter");
        // Two rows of values fit a selection of two rows: the count is the data's, so it is
        // checked when the program runs, as numpy checks it then.
        let per_row = pt::placeholder("v", [2, 3], DType::F64).unwrap();
        assert_eq!(x.set_index(s![&rows], &per_row).unwrap().kind_name(), "Scatter");
        // Lengths known now must fit now.
        let too_wide = pt::placeholder("v", [2, 4], DType::F64).unwrap();
        assert!(matches!(x.set_index(s![&rows], &too_wide), Err(Error::InvalidArgument { .. })));
    }

    #[test]
    fn add_at_adds_in_the_promoted_dtype_and_keeps_the_arrays() {
        let x = pt::placeholder("x", [5], DType::I8).unwrap();
        let i = pt::placeholder("i", [3], DType::I64).unwrap();
        let v = pt::placeholder("v", [3], DType::F64).unwrap();
        let y = x.add_at(s![&i], &v).unwrap();
        assert_eq!((y.shape(), y.dtype()), (x.shape(), DType::I8));
        let crate::NodeKind::Scatter { values, mode, .. } = y.kind() else { panic!("{}", y.kind_name()) };
        assert_eq!((values.dtype(), *mode), (DType::F64, crate::array::ScatterMode::Add));
        // A Python integer is an int64 array to np.add.at, so 300 is no range error.
        assert!(x.add_at(s![&i], 300).is_ok());
        // A basic index selects each position once: no scatter.
        assert_eq!(x.add_at(s![1..3], 1).unwrap().kind_name(), "IndexLambda");
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
