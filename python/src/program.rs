//! Compiling a DAG for a backend and running it on numpy arrays.
//!
//! A run borrows its numpy inputs (no copy), releases the GIL while the backend computes (other
//! Python threads go on; several threads may run programs at once), and hands its results to
//! numpy without a copy. As with numpy's own loops that run without the GIL, other threads must
//! not write an array while a run reads or writes it: the borrows hold the arrays alive and keep
//! Rust code from aliasing them, but numpy's Python API does not check them.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pytato::array::DataRef;
use pytato::backend::{Backend, NamedViews, NamedViewsMut, Outputs, Program, SINGLE_OUTPUT_NAME};
use pytato::device::{DeviceInput, NamedDeviceInputs};

use crate::convert::outputs_from_py;
use crate::data::{Borrowed, BorrowedMut, borrow, borrow_mut, check_no_shared_memory};
use crate::errors::{Result, lib, type_error, value_error};
use crate::evaluated::{EvaluatedArray, into_numpy};
use crate::interrupt::interruptible;

/// The backend named `name`, or the default one (`PYTATO_BACKEND`, else the most preferred).
/// Backends are made once per name and kept: making one costs more than compiling a program
/// the backend has cached.
pub(crate) fn backend_by_name(name: Option<&str>) -> Result<Arc<dyn Backend>> {
    static MADE: Mutex<BTreeMap<String, Arc<dyn Backend>>> = Mutex::new(BTreeMap::new());
    let key = match name {
        Some(name) => name.to_string(),
        None => format!("(default, PYTATO_BACKEND={:?})", std::env::var("PYTATO_BACKEND").ok()),
    };
    if let Some(backend) = MADE.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(backend.clone());
    }
    let backend: Arc<dyn Backend> = Arc::from(lib(match name {
        Some(name) => pytato::backend(name),
        None => pytato::default_backend(),
    })?);
    MADE.lock().unwrap_or_else(|e| e.into_inner()).insert(key, backend.clone());
    Ok(backend)
}

/// The linked backends, most preferred first: `[(name, description)]`.
#[pyfunction]
fn backends() -> Vec<(&'static str, &'static str)> {
    pytato::backends().into_iter().map(|b| (b.name, b.description)).collect()
}

/// The name of the backend `generate` uses when none is given.
#[pyfunction]
fn default_backend_name() -> Result<String> {
    Ok(backend_by_name(None)?.name().to_string())
}

/// Compiles `expr` (an `Array`, a `DictOfNamedArrays` or a dict of arrays) for a backend
/// (`"cranelift"`, `"interp"`, `"wgpu"`; default: `default_backend_name()`). The program is
/// compiled once and runs as often as it is called.
#[pyfunction]
#[pyo3(signature = (expr, backend = None))]
fn generate(py: Python<'_>, expr: &Bound<'_, PyAny>, backend: Option<&str>) -> Result<BoundProgram> {
    let outputs = outputs_from_py(expr)?;
    let backend = backend_by_name(backend)?;
    let single = matches!(outputs, Outputs::Single(_));
    // Compiling is pure Rust: other Python threads run meanwhile. It may wait for a GPU (data
    // wrappers of GPU arrays, copied for a host backend), which checks for Ctrl-C.
    let program = interruptible(py, || backend.compile(&outputs))?;
    Ok(BoundProgram { program: Arc::from(program), backend: backend.name().to_string(), single })
}

/// A compiled program. Call it with its inputs as keyword arguments (numpy arrays, or anything
/// `numpy.asarray` takes): it returns a numpy array for a program of one array, a dict of numpy
/// arrays for a program of named arrays.
#[pyclass(module = "pytato_rs", frozen)]
pub(crate) struct BoundProgram {
    program: Arc<dyn Program>,
    backend: String,
    /// Made from one array (not a dictionary): calls return the array itself.
    single: bool,
}

/// An input of a run: a numpy array borrowed for reading, or an evaluated array's buffer (in
/// host memory or on a GPU).
pub(crate) enum Input<'py> {
    Numpy(Borrowed<'py>),
    Evaluated(DataRef),
}

/// Borrows every input for reading.
pub(crate) fn borrow_inputs<'py>(inputs: Option<&Bound<'py, PyDict>>) -> Result<Vec<(String, Input<'py>)>> {
    let Some(inputs) = inputs else { return Ok(Vec::new()) };
    inputs
        .iter()
        .map(|(name, value)| {
            let name: String = name.extract()?;
            let data = match value.cast::<EvaluatedArray>() {
                Ok(evaluated) => Input::Evaluated(evaluated.get().data.clone()),
                Err(_) => Input::Numpy(borrow(&value, &format!("input {name:?}"))?),
            };
            Ok((name, data))
        })
        .collect()
}

/// Whether a GPU holds one of the inputs.
fn any_on_device(borrowed: &[(String, Input<'_>)]) -> bool {
    borrowed.iter().any(|(_, input)| matches!(input, Input::Evaluated(DataRef::Device(_))))
}

/// The inputs for `Program::run_device`: evaluated arrays a GPU holds are passed as they are.
fn device_inputs<'a>(borrowed: &'a [(String, Input<'_>)]) -> NamedDeviceInputs<'a> {
    let input = |input: &'a Input<'_>| match input {
        Input::Numpy(numpy) => DeviceInput::Host(numpy.view()),
        Input::Evaluated(DataRef::Host(data)) => DeviceInput::Host(data.view()),
        Input::Evaluated(DataRef::Device(array)) => DeviceInput::Device(array),
    };
    borrowed.iter().map(|(name, data)| (name.as_str(), input(data))).collect()
}

/// Copies the inputs a GPU holds to the host, for a run on host views.
pub(crate) fn download(py: Python<'_>, borrowed: &mut [(String, Input<'_>)]) -> Result<()> {
    for (_, input) in borrowed.iter_mut() {
        if let Input::Evaluated(data @ DataRef::Device(_)) = input {
            let device = &*data;
            *data = DataRef::Host(interruptible(py, || device.to_host())?);
        }
    }
    Ok(())
}

/// Host views of the inputs (after [`download`]).
pub(crate) fn host_views<'a>(borrowed: &'a [(String, Input<'_>)]) -> Result<NamedViews<'a>> {
    let view = |input: &'a Input<'_>| match input {
        Input::Numpy(numpy) => Ok(numpy.view()),
        Input::Evaluated(data) => data.as_host().map(|d| d.view()).ok_or_else(|| {
            value_error("an input on the GPU was not copied to the host (a bug in pytato_rs: please report it)")
        }),
    };
    borrowed.iter().map(|(name, input)| Ok((name.as_str(), view(input)?))).collect()
}

impl BoundProgram {
    /// Runs the program on `inputs` and hands each result to `to_py`: the result itself for a
    /// program of one array, a dict by output name otherwise. Results stay where the backend
    /// leaves them (`Program::run_device`: on the GPU for wgpu) when `keep` is set or an input
    /// is on the GPU; otherwise the run reads them back with its own wait (`run_views`).
    fn run_with<'py>(
        &self,
        py: Python<'py>,
        inputs: Option<&Bound<'py, PyDict>>,
        keep: bool,
        to_py: impl Fn(Python<'py>, DataRef) -> Result<Bound<'py, PyAny>>,
    ) -> Result<Bound<'py, PyAny>> {
        let borrowed = borrow_inputs(inputs)?;
        let program = &self.program;
        let mut results: BTreeMap<String, DataRef> = if keep || any_on_device(&borrowed) {
            let inputs = device_inputs(&borrowed);
            let results = interruptible(py, || program.run_device(&inputs))?;
            results.into_iter().map(|(name, array)| (name, DataRef::from(array))).collect()
        } else {
            let views = host_views(&borrowed)?;
            let results = interruptible(py, || program.run_views(&views))?;
            results.into_iter().map(|(name, data)| (name, DataRef::from(data))).collect()
        };
        if self.single {
            let result = results
                .remove(SINGLE_OUTPUT_NAME)
                .ok_or_else(|| value_error("the program returned no result (a backend error: please report it)"))?;
            return to_py(py, result);
        }
        let dict = PyDict::new(py);
        for (name, data) in results {
            dict.set_item(name, to_py(py, data)?)?;
        }
        Ok(dict.into_any())
    }
}

#[pymethods]
impl BoundProgram {
    #[pyo3(signature = (**inputs))]
    fn __call__<'py>(&self, py: Python<'py>, inputs: Option<&Bound<'py, PyDict>>) -> Result<Bound<'py, PyAny>> {
        self.run_with(py, inputs, false, into_numpy)
    }

    /// Runs the program as a call does, but returns its results as `EvaluatedArray`s (the
    /// library keeps the buffers, on the GPU for wgpu; `make_data_wrapper` puts them into a DAG
    /// without a copy).
    #[pyo3(signature = (**inputs))]
    fn evaluate<'py>(&self, py: Python<'py>, inputs: Option<&Bound<'py, PyDict>>) -> Result<Bound<'py, PyAny>> {
        self.run_with(py, inputs, true, |py, data| Ok(Bound::new(py, EvaluatedArray::new(py, data)?)?.into_any()))
    }

    /// Runs the program writing its results into arrays the caller keeps (no allocation):
    /// `out` maps output names to numpy arrays of the right dtype and shape (for a program of
    /// one array, `out` may be that array). Inputs are keyword arguments, as for a call.
    #[pyo3(signature = (out, **inputs))]
    fn run_into(&self, py: Python<'_>, out: &Bound<'_, PyAny>, inputs: Option<&Bound<'_, PyDict>>) -> Result<()> {
        let mut targets: Vec<(String, BorrowedMut<'_>)> = match out.cast::<PyDict>() {
            Ok(dict) => dict
                .iter()
                .map(|(name, value)| {
                    let name: String = name.extract()?;
                    let data = borrow_mut(&value, &format!("output {name:?}"))?;
                    Ok((name, data))
                })
                .collect::<Result<_>>()?,
            Err(_) if self.single => vec![(SINGLE_OUTPUT_NAME.to_string(), borrow_mut(out, "the output")?)],
            Err(_) => {
                return Err(type_error("out must be a dict of output names to numpy arrays"));
            }
        };
        let mut borrowed = borrow_inputs(inputs)?;
        let numpy_inputs = borrowed.iter().filter_map(|(name, input)| match input {
            Input::Numpy(numpy) => Some((name.as_str(), numpy)),
            Input::Evaluated(_) => None,
        });
        let named_targets: Vec<_> = targets.iter().map(|(n, t)| (n.as_str(), t)).collect();
        check_no_shared_memory(&named_targets, numpy_inputs)?;
        download(py, &mut borrowed)?;
        let views = host_views(&borrowed)?;
        let mut outputs: NamedViewsMut<'_> = targets.iter_mut().map(|(n, d)| (n.as_str(), d.view_mut())).collect();
        let program = &self.program;
        interruptible(py, || program.run_into(&views, &mut outputs))
    }

    /// The names the program takes as inputs.
    #[getter]
    fn input_names(&self) -> Vec<String> {
        self.program.input_names()
    }

    /// The names of its outputs (`["_pt_out"]` for a program of one array).
    #[getter]
    fn output_names(&self) -> Vec<String> {
        self.program.output_names()
    }

    /// The backend it was compiled for.
    #[getter]
    fn backend(&self) -> &str {
        &self.backend
    }

    /// The program's signature in datashape (`{u: n, float64} -> {_pt_out: n, float64}`), or
    /// `None` where the backend gives none.
    #[getter]
    fn datashape(&self) -> Option<String> {
        self.program.datashape().map(|t| t.to_string())
    }

    fn __repr__(&self) -> String {
        format!(
            "BoundProgram(backend={:?}, inputs={:?}, outputs={:?})",
            self.backend,
            self.program.input_names(),
            self.program.output_names()
        )
    }
}

/// Adds the compilation functions and classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(backends, m)?)?;
    m.add_function(wrap_pyfunction!(default_backend_name, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_class::<BoundProgram>()?;
    Ok(())
}
