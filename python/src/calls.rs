//! Functions and calls: pytato's `trace_call`, `FunctionDefinition` and `Call`.
//!
//! A Python function over arrays is traced once over placeholders into a library `Function`, and
//! called with the arguments; the call's results are nodes of the DAG. Equal definitions are one
//! function, so a function called at many sites is compiled once where a backend outlines it.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pytato::Array;

use crate::array::PyArrayExpr;
use crate::convert::arrays_from_py;
use crate::errors::{Result, lib, type_error};
use crate::graph::node_object;

/// How the traced function returned its arrays, to return the call's results the same way.
enum Returned {
    One,
    Sequence,
    Named(Vec<String>),
}

/// The arrays a traced function returned: one array, a tuple or list of arrays, or a dict of
/// them.
fn returned_arrays(result: &Bound<'_, PyAny>) -> Result<(Returned, Vec<Array>)> {
    if let Ok(array) = result.cast::<PyArrayExpr>() {
        return Ok((Returned::One, vec![array.get().array.clone()]));
    }
    if let Ok(dict) = result.cast::<PyDict>() {
        let mut names = Vec::new();
        let mut arrays = Vec::new();
        for (name, array) in dict.iter() {
            names.push(name.extract::<String>()?);
            arrays.push(returned_array(&array)?);
        }
        return Ok((Returned::Named(names), arrays));
    }
    if result.is_instance_of::<PyTuple>() || result.is_instance_of::<PyList>() {
        let arrays = result.try_iter()?.map(|a| returned_array(&a?)).collect::<Result<_>>()?;
        return Ok((Returned::Sequence, arrays));
    }
    Err(type_error(format!(
        "a traced function must return an Array, a tuple or list of Arrays, or a dict of them, not {}",
        result.get_type().name()?
    )))
}

fn returned_array(obj: &Bound<'_, PyAny>) -> Result<Array> {
    obj.cast::<PyArrayExpr>()
        .map(|a| a.get().array.clone())
        .map_err(|_| type_error(format!("a traced function returned a {} where an Array belongs", obj.get_type())))
}

/// Traces `f` over placeholders shaped like `args` and calls the function so defined with `args`
/// (pytato's `trace_call`): returns what `f` returns (an array, a tuple, a dict), each array the
/// result of the call. `identifier` is pytato's name for the generated loopy function; no
/// backend here generates one, so it is checked to be a string and names nothing.
#[pyfunction]
#[pyo3(signature = (f, *args, identifier = None))]
pub(crate) fn trace_call<'py>(
    py: Python<'py>,
    f: &Bound<'py, PyAny>,
    args: &Bound<'py, PyTuple>,
    identifier: Option<&Bound<'py, PyAny>>,
) -> Result<Bound<'py, PyAny>> {
    if let Some(identifier) = identifier.filter(|i| !i.is_instance_of::<pyo3::types::PyString>()) {
        return Err(type_error(format!("trace_call: identifier must be a str, not {}", identifier.get_type().name()?)));
    }
    let arguments = arrays_from_py(args.as_any())?;
    let mut returned = None;
    let mut python_error = None;
    let traced = pytato::trace_call(
        |params| {
            let mut trace = || -> Result<Vec<Array>> {
                let params =
                    PyTuple::new(py, params.iter().map(|p| node_object(py, p)).collect::<PyResult<Vec<_>>>()?)?;
                let (how, arrays) = returned_arrays(&f.call1(params)?)?;
                returned = Some(how);
                Ok(arrays)
            };
            trace().map_err(|e| {
                python_error = Some(e);
                pytato::Error::invalid("trace_call", "the traced function raised an exception")
            })
        },
        &arguments.iter().collect::<Vec<_>>(),
    );
    if let Some(e) = python_error {
        return Err(e);
    }
    let results = lib(traced)?.iter().map(|r| node_object(py, r)).collect::<PyResult<Vec<_>>>()?;
    let mut results = results.into_iter();
    Ok(match returned.expect("a traced function that did not raise returned") {
        Returned::One => results.next().expect("one result").into_any(),
        Returned::Sequence => PyTuple::new(py, results)?.into_any(),
        Returned::Named(names) => {
            let dict = PyDict::new(py);
            for (name, result) in names.into_iter().zip(results) {
                dict.set_item(name, result)?;
            }
            dict.into_any()
        }
    })
}

/// A function definition (pytato's `FunctionDefinition`): its parameters (placeholders of its
/// own) and its results, a DAG of its own. Equal definitions are equal (and hash alike).
#[pyclass(name = "FunctionDefinition", module = "pytato_rs", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyFunctionDefinition {
    pub(crate) function: pytato::Function,
}

#[pymethods]
impl PyFunctionDefinition {
    /// The parameters' names.
    #[getter]
    fn parameters<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyFrozenSet>> {
        pyo3::types::PyFrozenSet::new(py, self.function.parameters().map(|(name, _)| name))
    }

    /// The results, by name (each an expression over the parameters).
    #[getter]
    fn returns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let returns = PyDict::new(py);
        for (name, result) in self.function.returns() {
            returns.set_item(name.as_ref(), node_object(py, result)?)?;
        }
        Ok(returns)
    }

    /// The definition's tags.
    #[getter]
    fn tags<'py>(&self, py: Python<'py>) -> Result<Bound<'py, pyo3::types::PyFrozenSet>> {
        crate::tags::tag_set_to_py(py, self.function.tags())
    }

    fn __repr__(&self) -> String {
        format!("{:?}", self.function)
    }
}

/// One call of a function (pytato's `Call`): the definition and the arguments by parameter
/// name. A call's results are `NamedCallResult` nodes, whose `call` this is.
#[pyclass(name = "Call", module = "pytato_rs", frozen)]
pub(crate) struct PyCall {
    pub(crate) function: pytato::Function,
    /// The arguments, in the order of the parameters' names.
    pub(crate) bindings: Vec<Array>,
}

#[pymethods]
impl PyCall {
    /// The function called.
    #[getter]
    fn function(&self) -> PyFunctionDefinition {
        PyFunctionDefinition { function: self.function.clone() }
    }

    /// The arguments, by parameter name.
    #[getter]
    fn bindings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let bindings = PyDict::new(py);
        for ((name, _), argument) in self.function.parameters().zip(&self.bindings) {
            bindings.set_item(name, node_object(py, argument)?)?;
        }
        Ok(bindings)
    }

    fn __repr__(&self) -> String {
        format!("Call({:?}, {} arguments)", self.function, self.bindings.len())
    }
}
