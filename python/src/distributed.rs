//! pytato's distributed nodes from Python (`pytato.distributed`'s constructors): sends stapled
//! to arrays, receives, and their fields. Partitioning and running them over `mpi4py` are not
//! bound yet.

use pyo3::prelude::*;
use pyo3::types::{PyInt, PyString, PyTuple};
use pytato::Array;
use pytato::distributed::{self, CommTag, DistributedSend};

use crate::array::{PyArrayExpr, wrap};
use crate::convert::shape_from_py;
use crate::data::dtype_from_py;
use crate::errors::{Result, lib, type_error};
use crate::tags::tags_from_py;

/// A send of an array to another rank (pytato's `DistributedSend`): it has no value of its own;
/// `make_distributed_send_ref_holder` staples it to an array.
#[pyclass(name = "DistributedSend", module = "pytato_rs", frozen)]
pub(crate) struct PyDistributedSend {
    pub(crate) send: DistributedSend,
}

#[pymethods]
impl PyDistributedSend {
    /// The array sent.
    #[getter]
    fn data(&self, py: Python<'_>) -> PyResult<Py<PyArrayExpr>> {
        Ok(crate::graph::node_object(py, &self.send.data)?.unbind())
    }

    /// The receiving rank.
    #[getter]
    fn dest_rank(&self) -> usize {
        self.send.dest_rank
    }

    /// The message's tag.
    #[getter]
    fn comm_tag<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        comm_tag_to_py(py, &self.send.comm_tag)
    }

    fn __repr__(&self) -> String {
        format!(
            "DistributedSend(data={}, dest_rank={}, comm_tag={:?})",
            self.send.data.summary(),
            self.send.dest_rank,
            self.send.comm_tag
        )
    }
}

/// A communication tag from Python: an `int`, a `str`, or a tuple of tags.
pub(crate) fn comm_tag_from_py(tag: &Bound<'_, PyAny>) -> Result<CommTag> {
    if let Ok(text) = tag.cast::<PyString>() {
        return Ok(CommTag::from(text.to_str()?));
    }
    if tag.is_instance_of::<PyInt>() {
        return Ok(CommTag::Int(tag.extract()?));
    }
    if let Ok(items) = tag.cast::<PyTuple>() {
        return Ok(CommTag::tuple(items.iter().map(|item| comm_tag_from_py(&item)).collect::<Result<Vec<_>>>()?));
    }
    Err(type_error(format!(
        "a communication tag is an int, a str or a tuple of them (every rank must order them alike), not {}",
        tag.get_type().name()?
    )))
}

/// A communication tag as Python holds it.
pub(crate) fn comm_tag_to_py<'py>(py: Python<'py>, tag: &CommTag) -> PyResult<Bound<'py, PyAny>> {
    Ok(match tag {
        CommTag::Int(n) => n.into_pyobject(py)?.into_any(),
        CommTag::Str(s) => s.as_ref().into_pyobject(py)?.into_any(),
        CommTag::Tuple(items) => {
            PyTuple::new(py, items.iter().map(|t| comm_tag_to_py(py, t)).collect::<PyResult<Vec<_>>>()?)?.into_any()
        }
    })
}

fn array(obj: &Bound<'_, PyAny>) -> Result<Array> {
    Ok(obj.cast::<PyArrayExpr>().map_err(|_| type_error("expected an array expression"))?.get().array.clone())
}

/// A send of `sent_data` to `dest_rank` with `comm_tag`.
#[pyfunction]
fn make_distributed_send(
    sent_data: &Bound<'_, PyAny>,
    dest_rank: usize,
    comm_tag: &Bound<'_, PyAny>,
) -> Result<PyDistributedSend> {
    Ok(PyDistributedSend {
        send: lib(distributed::make_distributed_send(&array(sent_data)?, dest_rank, comm_tag_from_py(comm_tag)?))?,
    })
}

/// `passthrough_data` carrying `send`: the send happens when a DAG holding the result runs.
#[pyfunction]
fn make_distributed_send_ref_holder(
    send: PyRef<'_, PyDistributedSend>,
    passthrough_data: &Bound<'_, PyAny>,
) -> Result<Py<PyArrayExpr>> {
    wrap(distributed::staple_distributed_send(&array(passthrough_data)?, send.send.clone()))
}

/// `stapled_to` carrying a send of `sent_data` to `dest_rank` with `comm_tag`.
#[pyfunction]
fn staple_distributed_send(
    sent_data: &Bound<'_, PyAny>,
    dest_rank: usize,
    comm_tag: &Bound<'_, PyAny>,
    stapled_to: &Bound<'_, PyAny>,
) -> Result<Py<PyArrayExpr>> {
    let send = lib(distributed::make_distributed_send(&array(sent_data)?, dest_rank, comm_tag_from_py(comm_tag)?))?;
    wrap(distributed::staple_distributed_send(&array(stapled_to)?, send))
}

/// The array rank `src_rank` sends with `comm_tag`, of `shape` and `dtype`.
#[pyfunction]
#[pyo3(signature = (src_rank, comm_tag, shape, dtype = None, axes = None, tags = None))]
fn make_distributed_recv(
    src_rank: usize,
    comm_tag: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    axes: Option<&Bound<'_, PyAny>>,
    tags: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let dtype = match dtype {
        Some(d) => dtype_from_py(d)?,
        None => pytato::DType::F64,
    };
    let mut recv =
        lib(distributed::make_distributed_recv(src_rank, comm_tag_from_py(comm_tag)?, shape_from_py(shape)?, dtype))?;
    recv = lib(recv.tagged_with(tags_from_py(tags)?))?;
    if let Some(axes) = axes {
        recv = lib(recv.with_axes(crate::graph::axis_metadata_from_py(axes)?))?;
    }
    wrap(Ok(recv))
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDistributedSend>()?;
    m.add_function(wrap_pyfunction!(make_distributed_send, m)?)?;
    m.add_function(wrap_pyfunction!(make_distributed_send_ref_holder, m)?)?;
    m.add_function(wrap_pyfunction!(staple_distributed_send, m)?)?;
    m.add_function(wrap_pyfunction!(make_distributed_recv, m)?)?;
    Ok(())
}
