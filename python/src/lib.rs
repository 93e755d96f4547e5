//! Python bindings: the extension module `pytato_rs._native`, wrapped by the Python package
//! `pytato_rs` (`python/pytato_rs`), which gives pytato's API on this library.
//!
//! | module | what it binds |
//! | --- | --- |
//! | `array` | the `Array` and `DictOfNamedArrays` classes: operators, methods, tags |
//! | `distributed` | sends, receives and their fields (pytato's distributed nodes) |
//! | `functions` | the numpy-like functions (`make_placeholder`, `einsum`, `sum`, ...) |
//! | `graph` | nodes' fields under pytato's names, children, the same node over other children |
//! | `calls` | `trace_call`: Python functions traced into the library's functions |
//! | `program` | `generate` and `BoundProgram`: compile, run on numpy arrays without the GIL |
//! | `evaluated` | `EvaluatedArray`: results held by the library, back into DAGs without a copy |
//! | `interrupt` | Ctrl-C during a run: `KeyboardInterrupt` |
//! | `scalar_expr` | pymbolic expressions typed into the library's (`pt.IndexLambda(expr=...)`) |
//! | `transform` | `deduplicate`, `unify_axes_tags`, drawing, analysis |
//! | `convert`, `data`, `tags`, `errors` | Python values, numpy arrays, tags and exceptions |
//!
//! Build and install with maturin (`maturin develop` in a virtual environment, or `maturin
//! build` and `pip install` the wheel); `cargo xtask ci` runs the Python tests.

mod array;
mod calls;
mod convert;
mod data;
mod distributed;
mod errors;
mod evaluated;
mod expr_entries;
mod functions;
mod graph;
mod interrupt;
mod program;
mod scalar_expr;
mod size_checks;
mod tags;
mod transform;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<array::PyArrayExpr>()?;
    m.add_class::<array::PyDictOfNamedArrays>()?;
    m.add_class::<convert::PyDim>()?;
    m.add_class::<evaluated::EvaluatedArray>()?;
    m.add_function(wrap_pyfunction!(evaluated::_evaluated_array, m)?)?;
    m.add_function(wrap_pyfunction!(evaluated::to_device, m)?)?;
    m.add_function(wrap_pyfunction!(array::make_dict_of_named_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(graph::_host_step_node, m)?)?;
    m.add_function(wrap_pyfunction!(calls::trace_call, m)?)?;
    m.add_class::<calls::PyFunctionDefinition>()?;
    m.add_class::<calls::PyCall>()?;
    m.add_function(wrap_pyfunction!(convert::_length, m)?)?;
    m.add_function(wrap_pyfunction!(scalar_expr::_index_lambda, m)?)?;
    m.add_function(wrap_pyfunction!(expr_entries::_index_lambda_from_entries, m)?)?;
    m.add_function(wrap_pyfunction!(errors::_register_exceptions, m)?)?;
    m.add_function(wrap_pyfunction!(interrupt::_install_interrupt_handler, m)?)?;
    m.add_function(wrap_pyfunction!(interrupt::_wait_until_idle, m)?)?;
    m.add_function(wrap_pyfunction!(tags::_set_traceback_tags, m)?)?;
    functions::register(m)?;
    distributed::register(m)?;
    program::register(m)?;
    transform::register(m)?;
    Ok(())
}
