//! Shape manipulation: `reshape`, `ravel`, `transpose`, `swapaxes`, `moveaxis`, `roll`, `stack`,
//! `concatenate`, `broadcast_to`, `squeeze`, `expand_dims`.

use pytato_core::array::{Array, Order};
use pytato_core::error::{Error, Result};
use pytato_core::shape::{Dim, Shape, broadcast_shapes};

use super::reductions::Axes;

// Constructors `pytato-core` holds (the operators and indexing use them), as this module's own.
pub(crate) use pytato_core::basic::{broadcast_to, insert_unit_axes, normalize_axis, ravel, reshape};

/// `a` with its axes permuted (numpy `transpose`); `None` reverses them. Negative axes count from
/// the end.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3, 4], DType::F64).unwrap();
/// assert_eq!(pt::transpose(&a, None).unwrap().shape().to_string(), "(4, 3, 2)");
/// assert_eq!(pt::transpose(&a, Some(&[1, -1, 0][..])).unwrap().shape().to_string(), "(3, 4, 2)");
/// ```
#[track_caller]
pub fn transpose(a: &Array, axes: Option<&[i64]>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let ndim = a.ndim();
    let perm: Vec<usize> = match axes {
        None => (0..ndim).rev().collect(),
        Some(list) => {
            if list.len() != ndim {
                return Err(Error::invalid(
                    "transpose",
                    format!("axes {list:?} do not match an array of shape {}", a.shape()),
                ));
            }
            list.iter().map(|&ax| normalize_axis("transpose", ax, ndim, a.shape())).collect::<Result<_>>()?
        }
    };
    permute(a, perm)
}

/// `numpy.permute_dims`, the array API's name for [`transpose`] with explicit axes.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::F64).unwrap();
/// assert_eq!(pt::permute_dims(&a, &[1, 0]).unwrap().shape().to_string(), "(3, 2)");
/// ```
#[track_caller]
pub fn permute_dims(a: &Array, axes: &[i64]) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    transpose(a, Some(axes))
}

fn permute(a: &Array, perm: Vec<usize>) -> Result<Array> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) && perm.len() == a.ndim() {
        return Ok(a.clone());
    }
    Array::new_axis_permutation(a, perm).map_err(|e| e.renamed("AxisPermutation", "transpose"))
}

/// `a` with axes `axis1` and `axis2` exchanged (numpy `swapaxes`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3, 4], DType::F64).unwrap();
/// assert_eq!(pt::swapaxes(&a, 0, -1).unwrap().shape().to_string(), "(4, 3, 2)");
/// ```
#[track_caller]
pub fn swapaxes(a: &Array, axis1: i64, axis2: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let (i, j) = (
        normalize_axis("swapaxes", axis1, a.ndim(), a.shape())?,
        normalize_axis("swapaxes", axis2, a.ndim(), a.shape())?,
    );
    let mut perm: Vec<usize> = (0..a.ndim()).collect();
    perm.swap(i, j);
    permute(a, perm)
}

/// `a` with the axes `source` moved to positions `destination`, the others keeping their order
/// (numpy `moveaxis`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3, 4], DType::F64).unwrap();
/// assert_eq!(pt::moveaxis(&a, &[0], &[-1]).unwrap().shape().to_string(), "(3, 4, 2)");
/// ```
#[track_caller]
pub fn moveaxis(a: &Array, source: &[i64], destination: &[i64]) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "moveaxis";
    if source.len() != destination.len() {
        return Err(Error::invalid(op, format!("source {source:?} and destination {destination:?} differ in length")));
    }
    let ndim = a.ndim();
    // `resolve` rejects repeated axes; the order of `source` and `destination` pairs them up.
    let src = Axes::List(source.to_vec()).resolve(op, a.shape())?;
    Axes::List(destination.to_vec()).resolve(op, a.shape())?;
    let src_in_order: Vec<usize> =
        source.iter().map(|&s| normalize_axis(op, s, ndim, a.shape())).collect::<Result<_>>()?;
    let dst_in_order: Vec<usize> =
        destination.iter().map(|&d| normalize_axis(op, d, ndim, a.shape())).collect::<Result<_>>()?;
    let mut rest = (0..ndim).filter(|ax| !src.contains(ax));
    let mut perm = vec![usize::MAX; ndim];
    for (s, d) in src_in_order.iter().zip(&dst_in_order) {
        perm[*d] = *s;
    }
    for slot in perm.iter_mut().filter(|p| **p == usize::MAX) {
        *slot = rest.next().expect("as many free axes as free slots");
    }
    permute(a, perm)
}

/// `a` rolled by `shift` places along `axis` (numpy `roll`); `None` rolls the flattened array and
/// restores the shape.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::F64).unwrap();
/// assert_eq!(pt::roll(&a, -1, Some(1)).unwrap().shape(), a.shape());
/// assert_eq!(pt::roll(&a, 5, None).unwrap().shape(), a.shape());
/// ```
#[track_caller]
pub fn roll(a: &Array, shift: i64, axis: Option<i64>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    match axis {
        Some(axis) => Array::new_roll(a, shift, normalize_axis("roll", axis, a.ndim(), a.shape())?),
        None => {
            let flat = ravel(a)?;
            let rolled = if flat.ndim() == 0 { flat } else { Array::new_roll(&flat, shift, 0)? };
            reshape(&rolled, a.shape().clone(), Order::C)
        }
    }
}

/// Arrays of one shape joined along a new axis (numpy `stack`); dtypes promote.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3], DType::F32).unwrap();
/// let b = pt::placeholder("b", [3], DType::F64).unwrap();
/// let s = pt::stack(&[a, b], -1).unwrap();
/// assert_eq!((s.shape().to_string(), s.dtype()), ("(3, 2)".into(), DType::F64));
/// ```
#[track_caller]
pub fn stack(arrays: &[Array], axis: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let first = arrays.first().ok_or_else(|| Error::invalid("stack", "need at least one array to stack"))?;
    let axis = normalize_axis("stack", axis, first.ndim() + 1, first.shape())?;
    Array::new_stack(arrays.to_vec(), axis).map_err(|e| e.renamed("Stack", "stack"))
}

/// Arrays joined along an existing axis (numpy `concatenate`); dtypes promote.
///
/// ```
/// use pytato_core::{DType, Dim};
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [Dim::param("n"), Dim::new(2)], DType::I32).unwrap();
/// let b = pt::placeholder("b", [1, 2], DType::I32).unwrap();
/// assert_eq!(pt::concatenate(&[a, b], 0).unwrap().shape().to_string(), "(n + 1, 2)");
/// ```
#[track_caller]
pub fn concatenate(arrays: &[Array], axis: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let op = "concatenate";
    let first = arrays.first().ok_or_else(|| Error::invalid(op, "need at least one array to concatenate"))?;
    if first.ndim() == 0 {
        return Err(Error::invalid(op, "zero-dimensional arrays cannot be concatenated"));
    }
    let axis = normalize_axis(op, axis, first.ndim(), first.shape())?;
    if arrays.len() == 1 {
        return Ok(first.clone());
    }
    Array::new_concatenate(arrays.to_vec(), axis).map_err(|e| e.renamed("Concatenate", op))
}

/// `a` without length-1 axes (numpy `squeeze`): all of them, or the ones listed, which must have
/// length 1.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [1, 3, 1], DType::F64).unwrap();
/// assert_eq!(pt::squeeze(&a, None).unwrap().shape().to_string(), "(3,)");
/// assert_eq!(pt::squeeze(&a, 0).unwrap().shape().to_string(), "(3, 1)");
/// assert!(pt::squeeze(&a, 1).is_err());
/// ```
#[track_caller]
pub fn squeeze(a: &Array, axes: impl Into<Axes>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let one = Dim::new(1);
    let axes = match axes.into() {
        Axes::All => (0..a.ndim()).filter(|&i| a.shape()[i] == one).collect(),
        list => {
            let axes = list.resolve("squeeze", a.shape())?;
            if let Some(&bad) = axes.iter().find(|&&i| a.shape()[i] != one) {
                return Err(Error::invalid(
                    "squeeze",
                    format!("cannot select axis {bad} of an array of shape {}: its length is not 1", a.shape()),
                ));
            }
            axes
        }
    };
    if axes.is_empty() {
        return Ok(a.clone());
    }
    // Position 0 of each squeezed axis, as pytato builds it: an index says which axes remain
    // (tag unification follows the kept axes through it), where a reshape to the shorter shape
    // would not (see `pytato_transform::unify_tags`).
    let items: Vec<super::Idx> =
        (0..a.ndim()).map(|i| if axes.contains(&i) { super::Idx::Int(0) } else { super::Idx::full() }).collect();
    super::index(a, &items)
}

/// `a` with length-1 axes inserted at positions `axes` of the result (numpy `expand_dims`);
/// negative positions count from the end of the result. The reshape is tagged
/// [`ExpandedDimsReshape`](pytato_core::tags::ExpandedDimsReshape).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::F64).unwrap();
/// assert_eq!(pt::expand_dims(&a, [0, -1]).unwrap().shape().to_string(), "(1, 3, 4, 1)");
/// ```
#[track_caller]
pub fn expand_dims(a: &Array, axes: impl Into<Axes>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let list = match axes.into() {
        Axes::All => return Err(Error::invalid("expand_dims", "needs explicit axes")),
        Axes::List(l) => l,
    };
    let out_ndim = a.ndim() + list.len();
    let out_shape = Shape::from(vec![Dim::new(1); out_ndim]);
    let positions = Axes::List(list).resolve("expand_dims", &out_shape).map_err(|e| match e {
        Error::AxisOutOfRange { axis, .. } => {
            Error::AxisOutOfRange { op: "expand_dims".into(), axis, shape: a.shape().clone() }
        }
        other => other,
    })?;
    insert_unit_axes(a, &positions)
}

/// `a` with the order of elements reversed along `axes` (all axes when `None`; numpy `flip`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::F64).unwrap();
/// assert_eq!(pt::flip(&a, Some(&[-1])).unwrap().shape().to_string(), "(2, 3)");
/// ```
#[track_caller]
pub fn flip(a: &Array, axes: Option<&[i64]>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let mut flipped = vec![axes.is_none(); a.ndim()];
    for &axis in axes.unwrap_or(&[]) {
        let k = normalize_axis("flip", axis, a.ndim(), a.shape())?;
        if std::mem::replace(&mut flipped[k], true) {
            return Err(Error::invalid("flip", format!("axis {axis} repeated in {axes:?}")));
        }
    }
    let items: Vec<super::Idx> =
        flipped.iter().map(|&f| super::Idx::Slice { start: None, stop: None, step: if f { -1 } else { 1 } }).collect();
    super::index(a, &items)
}

/// The transpose of the last two axes (the Array API's `matrix_transpose`, numpy's `.mT`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [4, 2, 3], DType::F64).unwrap();
/// assert_eq!(pt::matrix_transpose(&a).unwrap().shape().to_string(), "(4, 3, 2)");
/// ```
#[track_caller]
pub fn matrix_transpose(a: &Array) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if a.ndim() < 2 {
        return Err(Error::invalid("matrix_transpose", format!("needs at least 2 axes, got shape {}", a.shape())));
    }
    swapaxes(a, -1, -2)
}

/// Each element of `a` repeated `repeats` times along `axis` (numpy `repeat` with one count; `a`
/// flattened first when `axis` is `None`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::I32).unwrap();
/// assert_eq!(pt::repeat(&a, 2, Some(1)).unwrap().shape().to_string(), "(2, 6)");
/// ```
#[track_caller]
pub fn repeat(a: &Array, repeats: i64, axis: Option<i64>) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if repeats < 0 {
        return Err(Error::invalid("repeat", format!("repeats must be non-negative, got {repeats}")));
    }
    let (a, axis) = match axis {
        // numpy repeats a 0-d array along axis 0 (or -1) as the 1-d array of its element
        Some(axis) if a.ndim() > 0 => (a.clone(), normalize_axis("repeat", axis, a.ndim(), a.shape())?),
        Some(axis) => (ravel(a)?, normalize_axis("repeat", axis, 1, &Shape::from(vec![Dim::new(1)]))?),
        None => (ravel(a)?, 0),
    };
    // Each element gets a new axis of length `repeats` right after `axis`, merged into it.
    let mut spread: Vec<Dim> = a.shape().dims().to_vec();
    spread.insert(axis + 1, Dim::new(repeats));
    let expanded = expand_dims(&a, [axis as i64 + 1])?;
    let broadcast = broadcast_to(&expanded, Shape::from(spread))?;
    let mut merged: Vec<Dim> = a.shape().dims().to_vec();
    merged[axis] = merged[axis].mul_int(repeats)?;
    reshape(&broadcast, Shape::from(merged), Order::C)
}

/// The `n`-th discrete difference along `axis` (numpy `diff` without `prepend`/`append`):
/// `a[1:] - a[:-1]`, `n` times; for bools `!=`, as numpy computes it.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [5, 3], DType::F64).unwrap();
/// assert_eq!(pt::diff(&a, 2, 0).unwrap().shape().to_string(), "(3, 3)");
/// ```
#[track_caller]
pub fn diff(a: &Array, n: usize, axis: i64) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    diff_with(a, n, axis, None, None)
}

/// [`diff`] of `a` with `prepend` and `append` joined to it along `axis` first (numpy `diff` with
/// `prepend=`/`append=`, the Array API's `diff`). A scalar, or an array without the axis's
/// length, is broadcast to `a`'s shape with length 1 along `axis`, as numpy does for scalars.
/// `n = 0` is `a` itself, as in numpy (nothing is joined, the axis is not checked).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [5, 3], DType::F64).unwrap();
/// let d = pt::diff_with(&a, 1, 0, Some(0.into()), None).unwrap();
/// assert_eq!(d.shape().to_string(), "(5, 3)");
/// ```
#[track_caller]
pub fn diff_with(
    a: &Array,
    n: usize,
    axis: i64,
    prepend: Option<super::Operand>,
    append: Option<super::Operand>,
) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if n == 0 {
        return Ok(a.clone()); // numpy's: `a` itself, whatever the axis or the values to join
    }
    let k = normalize_axis("diff", axis, a.ndim(), a.shape())?;
    let a = &if prepend.is_none() && append.is_none() {
        a.clone()
    } else {
        // A scalar or 0-d value stands for a slab of length 1 along the axis; other arrays are
        // joined as they are (numpy broadcasts only 0-d ones: a `(1,)` prepended to a matrix is
        // an error, not a column).
        let mut slab = a.shape().dims().to_vec();
        slab[k] = Dim::new(1);
        let slab = Shape::from(slab);
        let as_slab = |v: super::Operand| -> Result<Array> {
            match v {
                super::Operand::Array(x) if x.ndim() == 0 => broadcast_to(&x, slab.clone()),
                super::Operand::Array(x) => Ok(x),
                super::Operand::Scalar(s) => super::full(slab.clone(), s, None),
            }
        };
        let mut parts = Vec::new();
        parts.extend(prepend.map(as_slab).transpose()?);
        parts.push(a.clone());
        parts.extend(append.map(as_slab).transpose()?);
        concatenate(&parts, k as i64)?
    };
    let along = |start: Option<i64>, stop: Option<i64>| -> Vec<super::Idx> {
        (0..a.ndim())
            .map(|j| {
                if j == k {
                    super::Idx::Slice { start, stop, step: 1 }
                } else {
                    super::Idx::Slice { start: None, stop: None, step: 1 }
                }
            })
            .collect()
    };
    let mut out = a.clone();
    for _ in 0..n {
        let (later, earlier) =
            (super::index(&out, &along(Some(1), None))?, super::index(&out, &along(None, Some(-1)))?);
        out = if out.dtype() == pytato_core::DType::Bool {
            super::not_equal(&later, &earlier)?
        } else {
            super::subtract(&later, &earlier)?
        };
    }
    Ok(out)
}

/// `a` rolled by `shifts[i]` along `axes[i]` for every `i` (numpy `roll` with tuples of shifts and
/// axes, the Array API's `roll`): one shift with several axes rolls each by it, several shifts with
/// one axis add up, as numpy broadcasts them.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 4], DType::F64).unwrap();
/// assert_eq!(pt::roll_axes(&a, &[1, -2], &[0, 1]).unwrap().shape(), a.shape());
/// assert!(pt::roll_axes(&a, &[1, 2, 3], &[0, 1]).is_err());
/// ```
#[track_caller]
pub fn roll_axes(a: &Array, shifts: &[i64], axes: &[i64]) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    let pairs: Vec<(i64, i64)> = match (shifts.len(), axes.len()) {
        (s, n) if s == n => shifts.iter().copied().zip(axes.iter().copied()).collect(),
        (1, _) => axes.iter().map(|&ax| (shifts[0], ax)).collect(),
        (_, 1) => shifts.iter().map(|&s| (s, axes[0])).collect(),
        (s, n) => {
            return Err(Error::invalid(
                "roll",
                format!("{s} shifts and {n} axes do not broadcast against each other (array of shape {})", a.shape()),
            ));
        }
    };
    let mut out = a.clone();
    for (shift, axis) in pairs {
        out = roll(&out, shift, Some(axis))?;
    }
    Ok(out)
}

/// `a` repeated `reps[k]` times along each axis `k` (numpy `tile`): with fewer `reps` than axes,
/// the leading axes are not repeated; with more, `a` gets leading axes of length 1 first.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::I32).unwrap();
/// assert_eq!(pt::tile(&a, &[2]).unwrap().shape().to_string(), "(2, 6)");
/// assert_eq!(pt::tile(&a, &[2, 1, 3]).unwrap().shape().to_string(), "(2, 2, 9)");
/// ```
#[track_caller]
pub fn tile(a: &Array, reps: &[i64]) -> Result<Array> {
    let _site = pytato_core::created_at::enter();
    if let Some(&r) = reps.iter().find(|&&r| r < 0) {
        return Err(Error::invalid("tile", format!("repetitions must be non-negative, got {r} in {reps:?}")));
    }
    let ndim = a.ndim().max(reps.len());
    let lead: Vec<i64> = (0..(ndim - a.ndim()) as i64).collect();
    let a = if lead.is_empty() { a.clone() } else { expand_dims(a, lead)? };
    let reps: Vec<i64> = std::iter::repeat_n(1, ndim - reps.len()).chain(reps.iter().copied()).collect();
    // Axis k of length n becomes (reps[k], n), broadcast, then merged: the copies follow each other.
    let expanded = expand_dims(&a, (0..ndim as i64).map(|k| 2 * k).collect::<Vec<_>>())?;
    let mut spread = Vec::with_capacity(2 * ndim);
    let mut merged = Vec::with_capacity(ndim);
    for (len, &r) in a.shape().dims().iter().zip(&reps) {
        spread.push(Dim::new(r));
        spread.push(len.clone());
        merged.push(len.mul_int(r)?);
    }
    reshape(&broadcast_to(&expanded, Shape::from(spread))?, Shape::from(merged), Order::C)
}

/// The arrays broadcast to their common shape (numpy `broadcast_arrays`).
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [3, 1], DType::F64).unwrap();
/// let b = pt::placeholder("b", [4], DType::I8).unwrap();
/// let out = pt::broadcast_arrays(&[a, b]).unwrap();
/// assert_eq!(out[1].shape().to_string(), "(3, 4)");
/// ```
#[track_caller]
pub fn broadcast_arrays(arrays: &[Array]) -> Result<Vec<Array>> {
    let _site = pytato_core::created_at::enter();
    let shapes: Vec<&Shape> = arrays.iter().map(Array::shape).collect();
    let shape = broadcast_shapes("broadcast_arrays", &shapes)?;
    arrays.iter().map(|a| broadcast_to(a, shape.clone())).collect()
}

/// The slices of `a` along `axis`, in order (numpy `unstack`, the inverse of [`stack`]); the axis
/// length must be known.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// let a = pt::placeholder("a", [2, 3], DType::F64).unwrap();
/// let parts = pt::unstack(&a, 1).unwrap();
/// assert_eq!((parts.len(), parts[0].shape().to_string()), (3, "(2,)".into()));
/// ```
#[track_caller]
pub fn unstack(a: &Array, axis: i64) -> Result<Vec<Array>> {
    let _site = pytato_core::created_at::enter();
    if a.ndim() == 0 {
        return Err(Error::invalid("unstack", "a zero-dimensional array has no axis to unstack"));
    }
    let axis = normalize_axis("unstack", axis, a.ndim(), a.shape())?;
    let len = a.shape()[axis]
        .as_int()
        .ok_or_else(|| Error::invalid("unstack", format!("axis {axis} of shape {} has no known length", a.shape())))?;
    (0..len)
        .map(|i| {
            let mut items = vec![super::Idx::full(); axis];
            items.push(super::Idx::Int(i));
            super::index(a, &items)
        })
        .collect()
}

/// How [`split`] divides an axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Split {
    /// Into this many equal parts (the length must be a multiple).
    Sections(usize),
    /// At these positions (sorted; parts may be empty, as in numpy).
    Indices(Vec<i64>),
}

/// `a` cut into parts along `axis` (numpy `split`): into equal sections, or at indices.
///
/// ```
/// use pytato_core::DType;
/// use pytato_frontend as pt;
/// use pytato_frontend::Split;
/// let a = pt::placeholder("a", [6, 2], DType::F64).unwrap();
/// assert_eq!(pt::split(&a, Split::Sections(3), 0).unwrap().len(), 3);
/// let parts = pt::split(&a, Split::Indices(vec![1, 4]), 0).unwrap();
/// assert_eq!(parts[1].shape().to_string(), "(3, 2)");
/// ```
#[track_caller]
pub fn split(a: &Array, parts: Split, axis: i64) -> Result<Vec<Array>> {
    let _site = pytato_core::created_at::enter();
    if a.ndim() == 0 {
        return Err(Error::invalid("split", "a zero-dimensional array has no axis to split"));
    }
    let axis = normalize_axis("split", axis, a.ndim(), a.shape())?;
    let bounds: Vec<(Option<i64>, Option<i64>)> = match parts {
        Split::Sections(0) => return Err(Error::invalid("split", "the number of sections must be positive")),
        Split::Sections(count) => {
            let len = a.shape()[axis].as_int().ok_or_else(|| {
                Error::invalid("split", format!("axis {axis} of shape {} has no known length", a.shape()))
            })?;
            if len % count as i64 != 0 {
                return Err(Error::invalid(
                    "split",
                    format!("axis {axis} of shape {} does not divide into {count} equal sections", a.shape()),
                ));
            }
            let step = len / count as i64;
            (0..count as i64).map(|i| (Some(i * step), Some((i + 1) * step))).collect()
        }
        Split::Indices(at) => {
            let starts = std::iter::once(None).chain(at.iter().map(|&i| Some(i)));
            let stops = at.iter().map(|&i| Some(i)).chain(std::iter::once(None));
            starts.zip(stops).collect()
        }
    };
    bounds
        .into_iter()
        .map(|(start, stop)| {
            let mut items = vec![super::Idx::full(); axis];
            items.push(super::Idx::Slice { start, stop, step: 1 });
            super::index(a, &items)
        })
        .collect()
}
