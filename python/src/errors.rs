//! The library's errors as Python exceptions.
//!
//! Every [`pytato::Error`] kind has an exception class of its own, defined in Python
//! (`pytato_rs/exceptions.py`) so that it can derive from both `PytatoError` and the builtin
//! exception a Python user would catch (`ShapeMismatchError` is a `ValueError`,
//! `AxisOutOfRangeError` an `IndexError`, ...). The package registers the classes when it is
//! imported; the message is the library's own, and the exception's `kind` attribute is
//! [`pytato::Error::kind`].

use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyType};

/// `{kind: exception class}`, registered by `pytato_rs/exceptions.py`.
static EXCEPTION_CLASSES: PyOnceLock<Py<PyDict>> = PyOnceLock::new();

/// Registers the exception class of each error kind (called once, by the package's
/// `exceptions` module).
#[pyfunction]
pub(crate) fn _register_exceptions(py: Python<'_>, classes: Bound<'_, PyDict>) -> PyResult<()> {
    for (kind, class) in classes.iter() {
        if !class.is_instance_of::<PyType>() {
            return Err(PyTypeError::new_err(format!("the exception for {kind} is not a class")));
        }
    }
    EXCEPTION_CLASSES
        .set(py, classes.unbind())
        .map_err(|_| PyRuntimeError::new_err("pytato_rs: exception classes registered twice"))
}

/// A library error on its way to Python: `?` on a `pytato::Result` inside a `#[pyfunction]`
/// converts through this type.
pub(crate) struct Error(pub(crate) pytato::Error);

impl From<pytato::Error> for Error {
    fn from(e: pytato::Error) -> Error {
        Error(e)
    }
}

impl From<Error> for PyErr {
    fn from(Error(e): Error) -> PyErr {
        if let pytato::Error::Interrupted { .. } = &e {
            return crate::interrupt::keyboard_interrupt(e.to_string());
        }
        // Before the package has registered its classes (importing `_native` on its own), a
        // `RuntimeError` with the library's message. A mismatch across ranks has a class per
        // problem (pytato's `MissingSendError`, ...) where the package registered one.
        if let pytato::Error::DistributedMismatch { problem, .. } = &e {
            let refined = format!("DistributedMismatch:{}", problem.name());
            if let Some(class) = registered(&refined) {
                return Python::attach(|py| PyErr::from_type(class.into_bound(py), (e.to_string(),)));
            }
        }
        // Index arrays whose lengths do not broadcast, found when the program runs (the counts
        // of masks): numpy's `IndexError`, as where the lengths are known when indexing.
        if let pytato::Error::BroadcastMismatch { op, .. } = &e
            && op == "index"
        {
            return of_kind("IndexBroadcast", e.to_string());
        }
        of_kind(e.kind(), e.to_string())
    }
}

/// The class the package registered under `key`, if any.
fn registered(key: &str) -> Option<Py<PyType>> {
    Python::attach(|py| {
        let classes = EXCEPTION_CLASSES.get(py)?;
        let class = classes.bind(py).get_item(key).ok().flatten()?;
        class.cast_into::<PyType>().ok().map(Bound::unbind)
    })
}

/// The exception of the package's class for error kind `kind` (see `pytato_rs/exceptions.py`),
/// with `message`; a `RuntimeError` before the classes are registered.
fn of_kind(kind: &str, message: String) -> PyErr {
    match registered(kind) {
        Some(class) => Python::attach(|py| PyErr::from_type(class.into_bound(py), (message,))),
        None => PyRuntimeError::new_err(format!("{kind}: {message}")),
    }
}

/// A Python argument of the wrong type: `pytato_rs.ArgumentTypeError`, a `PytatoError` and a
/// `TypeError`. Every error the package raises is a `PytatoError`, as the README promises.
pub(crate) fn type_error(message: impl Into<String>) -> PyErr {
    of_kind("ArgumentType", message.into())
}

/// An argument out of its domain: `pytato_rs.InvalidArgumentError` (a `ValueError`).
pub(crate) fn value_error(message: impl Into<String>) -> PyErr {
    of_kind("InvalidArgument", message.into())
}

/// A number beyond every dtype's range: `pytato_rs.ScalarOutOfRangeError` (an `OverflowError`).
pub(crate) fn overflow_error(message: impl Into<String>) -> PyErr {
    of_kind("ScalarOutOfRange", message.into())
}

/// An index outside its range: `pytato_rs.IndexOutOfRangeError` (an `IndexError`).
pub(crate) fn index_error(message: impl Into<String>) -> PyErr {
    of_kind("IndexOutOfRange", message.into())
}

/// An exception of `pytato_rs.diagnostic` (pytato's `pytato.diagnostic` classes), by name.
pub(crate) fn diagnostic(name: &str, message: String) -> PyErr {
    Python::attach(|py| {
        let class = py.import("pytato_rs.diagnostic").and_then(|m| Ok(m.getattr(name)?.cast_into::<PyType>()?));
        match class {
            Ok(class) => PyErr::from_type(class, (message,)),
            Err(e) => e,
        }
    })
}

/// A library result of indexing, its errors raised as numpy raises them: an invalid index (too
/// many of them, a zero step) is `pytato_rs.InvalidIndexError`, an index of a dtype that does
/// not index (floats) `pytato_rs.IndexDTypeError`, a mask of the wrong shape
/// `pytato_rs.IndexShapeError` and index arrays that do not broadcast
/// `pytato_rs.IndexBroadcastError`, each also an `IndexError`.
pub(crate) fn indexing<T>(result: pytato::Result<T>) -> Result<T> {
    result.map_err(|e| match e.kind() {
        "InvalidArgument" => of_kind("InvalidIndex", e.to_string()),
        "UnsupportedDType" => of_kind("IndexDType", e.to_string()),
        "ShapeMismatch" => of_kind("IndexShape", e.to_string()),
        "BroadcastMismatch" => of_kind("IndexBroadcast", e.to_string()),
        _ => Error(e).into(),
    })
}

/// A name a mapping does not hold: `pytato_rs.MissingKeyError` (a `KeyError`).
pub(crate) fn key_error(message: impl Into<String>) -> PyErr {
    of_kind("MissingKey", message.into())
}

/// The result of a binding that can fail with a library error or a Python error.
pub(crate) type Result<T> = std::result::Result<T, PyErr>;

/// Converts a library result for Python.
pub(crate) fn lib<T>(result: pytato::Result<T>) -> Result<T> {
    result.map_err(|e| Error(e).into())
}
