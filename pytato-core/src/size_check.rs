//! Conditions on the sizes that a node needs, checked once a program's sizes are known.
//!
//! Lengths are symbolic (affine in size parameters and counts), so some of numpy's errors cannot
//! be decided when the DAG is built: `x[4]` of an `x` of length `n`, `argmax` over an axis of
//! length `n`, a mask that may select nothing. A node states what it needs as [`SizeCheck`]s
//! ([`Array::size_checks`](crate::Array::size_checks): those of its index items, and those an
//! [`IndexLambda`](crate::array::IndexLambda) carries), and
//! `Signature::bind` checks every one of them for the bound
//! sizes before anything runs, on every backend and in every phase of a program with counts.
//!
//! ```
//! use pytato_core::{s, DType, Dim};
//! use pytato_frontend as pt;
//! use pytato_core::size_check::SizeCheck;
//! let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
//! let y = pt::set_index(&x, &s![4], 9.0).unwrap();   // numpy's x[4] = 9: needs n > 4
//! assert!(matches!(y.size_checks()[..], [SizeCheck::InRange { .. }]));
//! let m = pt::max(&x, None).unwrap();                 // needs n > 0
//! assert!(matches!(m.size_checks()[..], [SizeCheck::NonEmpty { axis: 0, .. }]));
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::array::{Array, IndexItem, NodeKind, NormalizedSlice};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::shape::{Dim, EvalDimError, Shape};
use crate::tags::LengthBounds;

/// One condition on the sizes under which a node is defined; see the [module docs](self).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SizeCheck {
    /// A reduction without an identity (`max`, `min`, `argmax`, `argmin`) over axis `axis` of an
    /// array of shape `shape`: that axis must not be empty (numpy raises `ValueError`).
    NonEmpty {
        /// The operation, for the message.
        op: Arc<str>,
        /// The shape of the array reduced.
        shape: Shape,
        /// The reduced axis.
        axis: usize,
    },
    /// An integer index into axis `axis` of an array of shape `shape`, already normalized (a
    /// negative index counts from the end: `n - 5`): it must lie in `0..len` (numpy raises
    /// `IndexError`), for reads (`x[4]`) and writes (`x[4] = v`) alike.
    InRange {
        /// The operation, for the message.
        op: Arc<str>,
        /// The normalized index.
        index: Dim,
        /// The indexed axis.
        axis: usize,
        /// The shape of the array indexed.
        shape: Shape,
    },
    /// A length that broadcasts against `to` at run time: it equals `to` or is 1 (the positions of
    /// a boolean mask, whose count the data decides, broadcast against other index arrays:
    /// numpy raises `IndexError` where they do not fit).
    Broadcast {
        /// The operation, for the message.
        op: Arc<str>,
        /// The length that must fit.
        length: Dim,
        /// The length it broadcasts to.
        to: Dim,
    },
    /// A slice of axis `axis` of an array of shape `shape`: where it selects anything, its first
    /// and last indices lie inside the axis. (numpy would clip it; slices of symbolic axes are
    /// decided when the DAG is built, so a slice that does not fit is an error instead.)
    SliceInside {
        /// The operation, for the message.
        op: Arc<str>,
        /// The normalized slice.
        slice: NormalizedSlice,
        /// The sliced axis.
        axis: usize,
        /// The shape of the array sliced.
        shape: Shape,
    },
}

impl SizeCheck {
    /// The checks of indexing an array of shape `shape` with `items` (integers and slices; index
    /// arrays are checked value by value when the program runs). Items whose validity does not
    /// depend on the sizes give no check.
    pub fn for_index_items(op: &str, shape: &Shape, items: &[IndexItem]) -> Vec<SizeCheck> {
        let op: Arc<str> = op.into();
        let mut checks = Vec::new();
        for (axis, item) in items.iter().enumerate() {
            let symbolic = |d: &Dim| d.as_int().is_none() || shape[axis].as_int().is_none();
            match item {
                IndexItem::Int(index) if symbolic(index) => {
                    checks.push(SizeCheck::InRange { op: op.clone(), index: index.clone(), axis, shape: shape.clone() })
                }
                IndexItem::Slice(slice) if symbolic(&slice.start) || symbolic(&slice.stop) => checks
                    .push(SizeCheck::SliceInside { op: op.clone(), slice: slice.clone(), axis, shape: shape.clone() }),
                _ => {}
            }
        }
        checks
    }

    /// The size parameters the check reads.
    pub fn params(&self) -> Vec<&str> {
        let dims: Vec<&Dim> = match self {
            SizeCheck::NonEmpty { shape, .. } => shape.dims().iter().collect(),
            SizeCheck::InRange { index, shape, .. } => shape.dims().iter().chain([index]).collect(),
            SizeCheck::Broadcast { length, to, .. } => vec![length, to],
            SizeCheck::SliceInside { slice, shape, .. } => {
                shape.dims().iter().chain([&slice.start, &slice.stop]).collect()
            }
        };
        dims.into_iter().flat_map(Dim::params).collect()
    }

    /// Checks the condition for the sizes `sizes` (every parameter it reads must be bound).
    pub fn verify(&self, sizes: &BTreeMap<String, i64>) -> Result<()> {
        let eval = |d: &Dim| {
            d.eval(|p| sizes.get(p).copied()).map_err(|e| match e {
                EvalDimError::Unbound(p) => Error::SizeBinding { param: p, detail: "no value bound".into() },
                EvalDimError::Overflow(d) => {
                    Error::InvalidForSizes { op: "shape".into(), detail: format!("{d} overflows") }
                }
            })
        };
        let with_sizes = |shape: &Shape| -> Result<String> {
            let lengths = shape.dims().iter().map(eval).collect::<Result<Vec<i64>>>()?;
            let lengths: Vec<String> = lengths.iter().map(i64::to_string).collect();
            let bound: Vec<String> = shape.params().map(|p| format!("{p} = {}", sizes[p])).collect();
            Ok(if bound.is_empty() {
                format!("shape ({})", lengths.join(", "))
            } else {
                format!("shape {shape} = ({}) with {}", lengths.join(", "), bound.join(", "))
            })
        };
        match self {
            SizeCheck::NonEmpty { op, shape, axis } => {
                if eval(&shape[*axis])? > 0 {
                    return Ok(());
                }
                Err(Error::InvalidForSizes {
                    op: op.to_string(),
                    detail: format!(
                        "zero-size reduction along axis {axis} of an array of {} has no identity",
                        with_sizes(shape)?
                    ),
                })
            }
            SizeCheck::InRange { op, index, axis, shape } => {
                let (value, len) = (eval(index)?, eval(&shape[*axis])?);
                if (0..len).contains(&value) {
                    return Ok(());
                }
                // Report the index as the user wrote it: a negative one was normalized to `len + i`.
                let written = match index.sub(&shape[*axis]).ok().and_then(|d| d.as_int()) {
                    Some(i) if i < 0 => i,
                    _ => value,
                };
                Err(Error::IndexOutOfBounds {
                    op: op.to_string(),
                    index: written,
                    axis: *axis,
                    length: usize::try_from(len).unwrap_or(0),
                })
            }
            SizeCheck::Broadcast { op, length, to } => {
                let (l, t) = (eval(length)?, eval(to)?);
                if l == t || l == 1 {
                    return Ok(());
                }
                Err(Error::BroadcastMismatch {
                    op: op.to_string(),
                    shapes: vec![Shape::from(vec![Dim::new(l)]), Shape::from(vec![Dim::new(t)])],
                })
            }
            SizeCheck::SliceInside { op, slice, axis, shape } => {
                let (start, stop, len) = (eval(&slice.start)?, eval(&slice.stop)?, eval(&shape[*axis])?);
                // In i128: any i64 bounds and step (numpy takes `::-2**63`) without overflow.
                let (start, stop, step) = (start as i128, stop as i128, slice.step as i128);
                let n = if step > 0 {
                    (stop - start + step - 1).div_euclid(step).max(0)
                } else {
                    (start - stop - step - 1).div_euclid(-step).max(0)
                };
                let outside = |i: i128, what: &str| -> Result<()> {
                    if (0..len as i128).contains(&i) {
                        return Ok(());
                    }
                    Err(Error::InvalidForSizes {
                        op: op.to_string(),
                        detail: format!(
                            "{what} {i} of the slice {}:{}:{step} is outside axis {axis} of length {len} ({})",
                            slice.start,
                            slice.stop,
                            with_sizes(shape)?
                        ),
                    })
                };
                if n > 0 {
                    outside(start, "first index")?;
                    outside(start + (n - 1) * step, "last index")?;
                }
                Ok(())
            }
        }
    }
}

/// Adds to `out` the size parameters `node` mentions: in its shape, its index items, its reduction
/// bounds, or as a `SizeParam` node itself.
pub fn node_size_params(node: &Array, out: &mut BTreeSet<String>) {
    out.extend(node.shape().params().map(str::to_string));
    // The bounds of ranged lengths (datashape's `Var(0, n)`) are checked against the sizes.
    for LengthBounds(bounds) in node.tags_of_type::<LengthBounds>() {
        out.extend(bounds.iter().flat_map(|(_, lo, hi)| lo.params().chain(hi.params())).map(str::to_string));
    }
    match node.kind() {
        NodeKind::SizeParam { name } => {
            out.insert(name.to_string());
        }
        NodeKind::IndexLambda(il) => {
            il.expr.walk(&mut |e| {
                if let Expr::Reduce(r) = e {
                    for b in &r.inames {
                        out.extend(b.lower.params().chain(b.upper.params()).map(str::to_string));
                    }
                }
            });
            out.extend(il.checks.iter().flat_map(SizeCheck::params).map(str::to_string));
        }
        NodeKind::BasicIndex { indices, .. }
        | NodeKind::AdvancedIndexInContiguousAxes { indices, .. }
        | NodeKind::AdvancedIndexInNoncontiguousAxes { indices, .. } => {
            for item in indices {
                match item {
                    IndexItem::Int(d) => out.extend(d.params().map(str::to_string)),
                    IndexItem::Slice(s) => out.extend(s.start.params().chain(s.stop.params()).map(str::to_string)),
                    IndexItem::Array(_) => {}
                }
            }
        }
        _ => {}
    }
}
