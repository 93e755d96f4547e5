//! An index lambda's size checks ([`SizeCheck`]: what the run-time sizes must satisfy) as
//! Python tuples, so that pickling, `copy.deepcopy` and `copy(...)` of an index lambda keep them.
//! Without them, `max` over a symbolic axis that is empty at run time gives `-inf` where numpy
//! raises, and an integer index past a symbolic length reads what the expression clamps to.
//!
//! The tuples, lengths as shapes hold them (`int` or `Dim`):
//! `("non_empty", op, shape, axis)`, `("in_range", op, index, axis, shape)`,
//! `("broadcast", op, length, to)`, `("slice_inside", op, start, stop, step, axis, shape)`.

use pyo3::prelude::*;
use pyo3::types::PyTuple;
use pytato::NormalizedSlice;
use pytato::size_check::SizeCheck;

use crate::convert::{dim_from_py, dim_to_py, shape_from_py, shape_to_py};
use crate::errors::{Result, value_error};

/// `checks` as a tuple of tuples (see the module docs); a tuple, so that persistent keys
/// (pytools' `KeyBuilder`) take it.
pub(crate) fn checks_to_py<'py>(py: Python<'py>, checks: &[SizeCheck]) -> Result<Bound<'py, PyTuple>> {
    let items = checks
        .iter()
        .map(|check| {
            let tuple = match check {
                SizeCheck::NonEmpty { op, shape, axis } => {
                    ("non_empty", &**op, shape_to_py(py, shape)?, *axis).into_pyobject(py)?.into_any()
                }
                SizeCheck::InRange { op, index, axis, shape } => {
                    ("in_range", &**op, dim_to_py(py, index)?, *axis, shape_to_py(py, shape)?)
                        .into_pyobject(py)?
                        .into_any()
                }
                SizeCheck::Broadcast { op, length, to } => {
                    ("broadcast", &**op, dim_to_py(py, length)?, dim_to_py(py, to)?).into_pyobject(py)?.into_any()
                }
                SizeCheck::SliceInside { op, slice, axis, shape } => (
                    "slice_inside",
                    &**op,
                    dim_to_py(py, &slice.start)?,
                    dim_to_py(py, &slice.stop)?,
                    slice.step,
                    *axis,
                    shape_to_py(py, shape)?,
                )
                    .into_pyobject(py)?
                    .into_any(),
            };
            Ok(tuple)
        })
        .collect::<Result<Vec<_>>>()?;
    PyTuple::new(py, items)
}

/// The checks `checks_to_py` wrote.
pub(crate) fn checks_from_py(checks: &Bound<'_, PyAny>) -> Result<Vec<SizeCheck>> {
    checks
        .try_iter()?
        .map(|item| {
            let item = item?;
            let check = check_from_py(&item)?;
            // what evaluating a check indexes and divides by (a hand-made tuple may not fit)
            let fits = match &check {
                SizeCheck::NonEmpty { shape, axis, .. } | SizeCheck::InRange { shape, axis, .. } => {
                    *axis < shape.ndim()
                }
                SizeCheck::SliceInside { shape, axis, slice, .. } => *axis < shape.ndim() && slice.step != 0,
                SizeCheck::Broadcast { .. } => true,
            };
            if !fits {
                return Err(value_error(format!(
                    "a size check {item} whose axis is not one of its shape's, or whose step is 0"
                )));
            }
            Ok(check)
        })
        .collect()
}

fn check_from_py(item: &Bound<'_, PyAny>) -> Result<SizeCheck> {
    let tuple = item.cast::<PyTuple>().map_err(|_| value_error(format!("a size check is a tuple, not {item}")))?;
    let kind: String = tuple.get_item(0)?.extract()?;
    let op = || -> Result<std::sync::Arc<str>> { Ok(tuple.get_item(1)?.extract::<String>()?.into()) };
    let field = |i: usize| tuple.get_item(i);
    let malformed = || value_error(format!("a malformed size check {item}"));
    match (kind.as_str(), tuple.len()) {
        ("non_empty", 4) => {
            Ok(SizeCheck::NonEmpty { op: op()?, shape: shape_from_py(&field(2)?)?, axis: field(3)?.extract()? })
        }
        ("in_range", 5) => Ok(SizeCheck::InRange {
            op: op()?,
            index: dim_from_py(&field(2)?)?,
            axis: field(3)?.extract()?,
            shape: shape_from_py(&field(4)?)?,
        }),
        ("broadcast", 4) => {
            Ok(SizeCheck::Broadcast { op: op()?, length: dim_from_py(&field(2)?)?, to: dim_from_py(&field(3)?)? })
        }
        ("slice_inside", 7) => Ok(SizeCheck::SliceInside {
            op: op()?,
            slice: NormalizedSlice {
                start: dim_from_py(&field(2)?)?,
                stop: dim_from_py(&field(3)?)?,
                step: field(4)?.extract()?,
            },
            axis: field(5)?.extract()?,
            shape: shape_from_py(&field(6)?)?,
        }),
        _ => Err(malformed()),
    }
}
