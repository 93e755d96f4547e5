//! Evaluated arrays: results a program computed, held by the library rather than by numpy.
//!
//! An array context freezes lazy arrays into evaluated ones and thaws them back into the DAG.
//! The buffer is shared, never copied, on that round trip: `BoundProgram.evaluate` moves each
//! result into an [`EvaluatedArray`], `make_data_wrapper` (and any operation that wraps data)
//! wraps the same buffer, and a program takes it as an input without a copy. Only reading it
//! into numpy (`numpy.asarray`, `.get()`) copies, so that numpy never writes memory the DAG
//! reads. arraycontext tells frozen arrays from numpy arrays by type: an `EvaluatedArray` is not
//! a numpy array, and it carries the tags and axes of the expression it was computed from.
//!
//! On a backend with a GPU (wgpu) the buffer stays on the GPU: `evaluate` leaves its results
//! there (`Program::run_device`), wrapping one into a DAG binds that buffer where it is, and
//! only a read into numpy copies it to the host.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyFrozenSet, PyTuple};
use pytato::array::DataRef;

use crate::data::{borrow, numpy_dtype, shared_data, to_numpy};
use crate::errors::{Result, lib, type_error, value_error};
use crate::interrupt::interruptible;

/// An array a program computed: its shape, dtype, and the tags and axes of the expression it
/// was computed from. `numpy.asarray(a)` and `a.get()` copy it into numpy;
/// `make_data_wrapper(a)` puts it back into a DAG without a copy.
#[pyclass(module = "pytato_rs", name = "EvaluatedArray", frozen)]
pub(crate) struct EvaluatedArray {
    /// The buffer, in host memory or on a GPU.
    pub(crate) data: DataRef,
    /// A frozenset of tags.
    tags: Py<PyAny>,
    /// A tuple of `Axis` objects, one per axis, or `None` where none were given.
    axes: Py<PyAny>,
}

impl EvaluatedArray {
    /// `data` (shared with its other holders, a data wrapper's say) with no tags and no axes.
    pub(crate) fn new(py: Python<'_>, data: impl Into<DataRef>) -> Result<EvaluatedArray> {
        Ok(EvaluatedArray { data: data.into(), tags: PyFrozenSet::empty(py)?.into_any().unbind(), axes: py.None() })
    }
}

/// `data` moved into a numpy array: without a copy where nothing else holds it, else copied (a
/// download, without the GIL, where a GPU holds it). Pass a clone to keep the buffer.
pub(crate) fn into_numpy(py: Python<'_>, data: DataRef) -> Result<Bound<'_, PyAny>> {
    let host = interruptible(py, || data.to_host())?;
    drop(data);
    to_numpy(py, Arc::unwrap_or_clone(host))
}

/// A copy of `array` (a numpy array, or anything `numpy.asarray` takes) held by a backend
/// (`"wgpu"`: in a GPU buffer; the host backends: in host memory; default:
/// `default_backend_name()`), as an `EvaluatedArray` that programs and `make_data_wrapper` take
/// without another copy: pyopencl's `to_device`. An `EvaluatedArray` in host memory is copied
/// with its tags and axes; one a device holds already is returned as it is.
#[pyfunction]
#[pyo3(signature = (array, backend = None))]
pub(crate) fn to_device<'py>(
    py: Python<'py>,
    array: &Bound<'py, PyAny>,
    backend: Option<&str>,
) -> Result<Bound<'py, EvaluatedArray>> {
    let backend = crate::program::backend_by_name(backend)?;
    let Ok(evaluated) = array.cast::<EvaluatedArray>() else {
        let borrowed = borrow(array, "to_device")?;
        let view = borrowed.view();
        let held = py.detach(|| lib(backend.upload(&view)))?;
        return Bound::new(py, EvaluatedArray::new(py, held)?);
    };
    let this = evaluated.get();
    let Some(host) = this.data.as_host() else { return Ok(evaluated.clone()) };
    let held = py.detach(|| lib(backend.upload(&host.view())))?;
    Bound::new(py, with_metadata(held.into(), this.tags.bind(py), Some(this.axes.bind(py)))?)
}

/// `data` with `tags` and `axes`, checked: a frozenset, and `None` or a tuple with one entry per
/// axis.
fn with_metadata(data: DataRef, tags: &Bound<'_, PyAny>, axes: Option<&Bound<'_, PyAny>>) -> Result<EvaluatedArray> {
    let py = tags.py();
    if !tags.is_instance_of::<PyFrozenSet>() {
        return Err(type_error(format!("EvaluatedArray: tags must be a frozenset, not {}", tags.get_type().name()?)));
    }
    let axes = match axes.filter(|a| !a.is_none()) {
        None => py.None(),
        Some(a) => {
            let ndim = data.shape().len();
            match a.cast::<PyTuple>() {
                Ok(tuple) if tuple.len() == ndim => a.clone().unbind(),
                _ => {
                    return Err(value_error(format!(
                        "EvaluatedArray: axes must be a tuple of {ndim} Axis objects (one per axis of shape {:?}), not {a}",
                        data.shape()
                    )));
                }
            }
        }
    };
    Ok(EvaluatedArray { data, tags: tags.clone().unbind(), axes })
}

/// An evaluated array holding a copy of `data` (a numpy array) with `tags` and `axes`: what
/// pickles of evaluated arrays load with.
#[pyfunction]
pub(crate) fn _evaluated_array(
    data: &Bound<'_, PyAny>,
    tags: &Bound<'_, PyAny>,
    axes: Option<&Bound<'_, PyAny>>,
) -> Result<EvaluatedArray> {
    with_metadata(shared_data(data, "an evaluated array's data")?, tags, axes)
}

#[pymethods]
impl EvaluatedArray {
    /// The shape, a tuple of ints.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.data.shape())
    }

    /// The numpy dtype.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        numpy_dtype(py, self.data.dtype())
    }

    /// The number of axes.
    #[getter]
    fn ndim(&self) -> usize {
        self.data.shape().len()
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.data.shape().iter().product()
    }

    /// Whether a device (a GPU) holds the elements rather than host memory: results of
    /// `evaluate` on the wgpu backend stay on the GPU until read into numpy.
    #[getter]
    fn on_device(&self) -> bool {
        self.data.as_host().is_none()
    }

    /// The tags of the expression it was computed from (a frozenset).
    #[getter]
    fn tags(&self, py: Python<'_>) -> Py<PyAny> {
        self.tags.clone_ref(py)
    }

    /// The axes of the expression it was computed from (a tuple of `Axis`), or `None`.
    #[getter]
    fn axes(&self, py: Python<'_>) -> Py<PyAny> {
        self.axes.clone_ref(py)
    }

    /// The same buffer (no copy) with `tags` (a frozenset) and `axes` (a tuple of `Axis`, one
    /// per axis, or `None`).
    #[pyo3(signature = (tags, axes = None))]
    fn with_metadata(&self, tags: &Bound<'_, PyAny>, axes: Option<&Bound<'_, PyAny>>) -> Result<EvaluatedArray> {
        with_metadata(self.data.clone(), tags, axes)
    }

    /// Pickles as a copy of the values with the tags and axes.
    fn __reduce__<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyTuple>> {
        let rebuild = py.import("pytato_rs._native")?.getattr("_evaluated_array")?;
        let arguments =
            PyTuple::new(py, [self.get(py, None)?, self.tags.bind(py).clone(), self.axes.bind(py).clone()])?;
        PyTuple::new(py, [rebuild, arguments.into_any()])
    }

    /// A copy in a numpy array (numpy's array protocol: `dtype` converts it as `astype` does).
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> Result<Bound<'py, PyAny>> {
        if copy == Some(false) {
            return Err(value_error(
                "an EvaluatedArray cannot be read into numpy without a copy (its buffer may be read by DAGs)",
            ));
        }
        let array = self.get(py, None)?;
        match dtype.filter(|d| !d.is_none()) {
            Some(dtype) => Ok(array.call_method1("astype", (dtype,))?),
            None => Ok(array),
        }
    }

    /// A copy in a numpy array (as `pyopencl.array.Array.get`; from the GPU where one holds it).
    /// `queue` is pyopencl's and unused: a download waits for the work it needs.
    #[pyo3(signature = (queue = None))]
    fn get<'py>(&self, py: Python<'py>, queue: Option<&Bound<'py, PyAny>>) -> Result<Bound<'py, PyAny>> {
        let _ = queue;
        into_numpy(py, self.data.clone())
    }

    fn __len__(&self) -> Result<usize> {
        self.data.shape().first().copied().ok_or_else(|| type_error("len() of a 0-d EvaluatedArray"))
    }

    fn __repr__(&self, py: Python<'_>) -> Result<String> {
        Ok(format!("EvaluatedArray({}, dtype={})", self.get(py, None)?.repr()?, self.data.dtype()))
    }
}
