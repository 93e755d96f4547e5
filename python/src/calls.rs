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
use crate::errors::{Result, lib, type_error, value_error};
use crate::graph::node_object;
use crate::tags::tags_from_py;

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

/// How a call of a definition returns its results (pytato's `ReturnType`), read from the
/// results' names as pytato names them: one result `_` is an array, any other names a dict.
/// pytato's tuples name their results `_0`, `_1`, ..., names the library reserves for index
/// lambdas' inames (a `ReservedNameError`); `trace_call` returns tuples itself.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum ReturnType {
    Array,
    DictOfArrays,
}

impl ReturnType {
    fn of(function: &pytato::Function) -> ReturnType {
        let one = function.returns().len() == 1 && function.returns().contains_key("_");
        if one { ReturnType::Array } else { ReturnType::DictOfArrays }
    }

    /// The name of the member of `pytato_rs.function.ReturnType`.
    fn name(self) -> &'static str {
        match self {
            ReturnType::Array => "ARRAY",
            ReturnType::DictOfArrays => "DICT_OF_ARRAYS",
        }
    }
}

#[pymethods]
impl PyFunctionDefinition {
    /// A definition from pytato's fields: `parameters` (names), `return_type`
    /// (`pytato_rs.function.ReturnType`), `returns` (a mapping of names to arrays over
    /// placeholders named like the parameters) and `tags`. Each parameter must be read by
    /// `returns` (its placeholder gives the argument's shape and dtype); the results' names must
    /// suit `return_type` (one result `_` for an array).
    #[new]
    #[pyo3(signature = (parameters, return_type, returns, tags = None))]
    fn new(
        parameters: &Bound<'_, PyAny>,
        return_type: &Bound<'_, PyAny>,
        returns: &Bound<'_, PyAny>,
        tags: Option<&Bound<'_, PyAny>>,
    ) -> Result<Self> {
        let names: Vec<String> = parameters.try_iter()?.map(|n| n?.extract::<String>()).collect::<PyResult<_>>()?;
        let mut results: Vec<(String, Array)> = Vec::new();
        for item in returns.call_method0("items")?.try_iter()? {
            let (name, array): (String, Bound<'_, PyAny>) = item?.extract()?;
            let array = array.cast::<PyArrayExpr>().map_err(|_| {
                type_error(format!("FunctionDefinition: the result {name:?} is a {}, not an Array", array.get_type()))
            })?;
            results.push((name, array.get().array.clone()));
        }
        let inputs = lib(pytato::array::collect_inputs(results.iter().map(|(_, a)| a)))?;
        let placeholders = names
            .iter()
            .map(|name| match inputs.named.get(name) {
                Some(p) if matches!(p.kind(), pytato::NodeKind::Placeholder { .. }) => Ok(p.clone()),
                _ => Err(value_error(format!(
                    "FunctionDefinition: the results do not read a placeholder named {name:?}, so the parameter has no shape or dtype"
                ))),
            })
            .collect::<Result<Vec<_>>>()?;
        let tags = lib(pytato::TagSet::new().union(tags_from_py(tags)?))?;
        let returns = results.iter().map(|(n, a)| (n.as_str(), a.clone())).collect();
        let function = lib(pytato::Function::new(placeholders, returns, tags))?;
        let wanted: String = return_type.getattr("name")?.extract()?;
        let actual = ReturnType::of(&function);
        if wanted != actual.name() {
            return Err(value_error(format!(
                "FunctionDefinition: results named {:?} are returned as {}, not {wanted}",
                function.returns().keys().collect::<Vec<_>>(),
                actual.name()
            )));
        }
        Ok(PyFunctionDefinition { function })
    }

    /// How a call returns the results (`pytato_rs.function.ReturnType`), by their names.
    #[getter]
    fn return_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("pytato_rs.function")?.getattr("ReturnType")?.getattr(ReturnType::of(&self.function).name())
    }

    /// Calls the function with one array per parameter, by name (pytato's call): returns the
    /// result `_` for an array, and a `constantdict` (a dict where constantdict is not
    /// installed) of every result by name otherwise. A missing
    /// or extra argument is a `TypeError`; a wrong dtype or shape a `ValueError`.
    #[pyo3(signature = (**arguments))]
    fn __call__<'py>(&self, py: Python<'py>, arguments: Option<&Bound<'py, PyDict>>) -> Result<Bound<'py, PyAny>> {
        let mut given: Vec<(String, Array)> = Vec::new();
        for (name, array) in arguments.map(|a| a.iter().collect::<Vec<_>>()).unwrap_or_default() {
            let name: String = name.extract()?;
            let array = array.cast::<PyArrayExpr>().map_err(|_| {
                type_error(format!("the argument {name:?} of a function call is a {}, not an Array", array.get_type()))
            })?;
            given.push((name, array.get().array.clone()));
        }
        let missing: Vec<&str> =
            self.function.parameters().map(|(n, _)| n).filter(|n| !given.iter().any(|(g, _)| g == n)).collect();
        let extra: Vec<&str> = given
            .iter()
            .map(|(g, _)| g.as_str())
            .filter(|g| !self.function.parameters().any(|(n, _)| n == *g))
            .collect();
        if !missing.is_empty() || !extra.is_empty() {
            return Err(type_error(format!("a function call's arguments: missing {missing:?}, extra {extra:?}")));
        }
        for (name, parameter) in self.function.parameters() {
            let (_, argument) = given.iter().find(|(g, _)| g == name).expect("checked above");
            if argument.dtype() != parameter.dtype() || argument.shape() != parameter.shape() {
                return Err(value_error(format!(
                    "the argument {name:?} of a function call is {} of shape {:?}; the parameter is {} of shape {:?}",
                    argument.dtype(),
                    argument.shape(),
                    parameter.dtype(),
                    parameter.shape()
                )));
            }
        }
        let bindings: Vec<(&str, &Array)> = given.iter().map(|(n, a)| (n.as_str(), a)).collect();
        let results = lib(self.function.call(&bindings))?;
        Ok(match ReturnType::of(&self.function) {
            ReturnType::Array => node_object(py, &results["_"])?.into_any(),
            ReturnType::DictOfArrays => {
                let dict = PyDict::new(py);
                for (name, result) in &results {
                    dict.set_item(name, node_object(py, result)?)?;
                }
                match py.import("constantdict") {
                    Ok(module) => module.getattr("constantdict")?.call1((dict,))?,
                    Err(_) => dict.into_any(),
                }
            }
        })
    }

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
