//! The transformations users call (`pytato_rs.transform`), drawing and analysis.
//!
//! Each takes what pytato's do (an `Array`, a `DictOfNamedArrays` or a dict of arrays) and
//! returns the same kind of object.

use std::cell::RefCell;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use pytato::transform::{analysis, cse, dce, draw, einsum, materialize, unify_tags};

use crate::array::PyArrayExpr;
use crate::convert::{outputs_from_py, outputs_to_py};
use crate::errors::{Result, lib};
use crate::tags::is_instance;

/// Common-subexpression elimination: structurally equal nodes become one node.
#[pyfunction]
fn deduplicate<'py>(py: Python<'py>, expr: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
    outputs_to_py(py, lib(cse::deduplicate(&outputs_from_py(expr)?))?)
}

/// Removes nodes no output depends on (sends kept for their effect).
#[pyfunction]
fn eliminate_dead_code<'py>(py: Python<'py>, expr: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
    outputs_to_py(py, lib(dce::eliminate_dead_code(&outputs_from_py(expr)?))?)
}

/// Propagates axis tags of class `tag_t` (default: every tag given from Python) along the
/// operations, as pytato's `unify_axes_tags` does.
#[pyfunction]
#[pyo3(signature = (expr, *, tag_t = None))]
fn unify_axes_tags<'py>(
    py: Python<'py>,
    expr: &Bound<'py, PyAny>,
    tag_t: Option<&Bound<'py, PyAny>>,
) -> Result<Bound<'py, PyAny>> {
    // The pass's filter cannot fail: the first Python error is kept and raised afterwards.
    let error: RefCell<Option<PyErr>> = RefCell::new(None);
    let unified = unify_tags::unify_axes_tags(&outputs_from_py(expr)?, |tag| {
        is_instance(tag, tag_t).unwrap_or_else(|e| {
            error.borrow_mut().get_or_insert(e);
            false
        })
    });
    if let Some(e) = error.into_inner() {
        return Err(e);
    }
    outputs_to_py(py, lib(unified)?)
}

/// Squeezes the length-1 axes of einsum operands that broadcast against a longer axis of the
/// same index (pytato's `rewrite_einsums_with_no_broadcasts`).
#[pyfunction]
fn rewrite_einsums_with_no_broadcasts<'py>(py: Python<'py>, expr: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
    outputs_to_py(py, lib(einsum::remove_broadcasts_in_einsums(&outputs_from_py(expr)?))?)
}

/// Tags the nodes pytato's MPMS rule stores (more than one user and more than one stored
/// predecessor) `ImplStored`.
#[pyfunction]
fn materialize_with_mpms<'py>(py: Python<'py>, expr: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
    outputs_to_py(py, lib(materialize::materialize(&outputs_from_py(expr)?, &mut materialize::Mpms))?)
}

/// The DAG in Graphviz's dot language.
#[pyfunction]
fn get_dot_graph(expr: &Bound<'_, PyAny>) -> Result<String> {
    Ok(draw::to_dot(&outputs_from_py(expr)?))
}

/// The DAG as an SVG drawing (laid out in Rust; no Graphviz needed).
#[pyfunction]
fn get_svg_graph(expr: &Bound<'_, PyAny>) -> Result<String> {
    lib(draw::to_svg(&outputs_from_py(expr)?))
}

/// The DAG as a self-contained HTML page with an SVG drawing (laid out in Rust; no Graphviz
/// needed).
#[pyfunction]
#[pyo3(signature = (expr, title = "pytato DAG"))]
fn get_html_graph(expr: &Bound<'_, PyAny>, title: &str) -> Result<String> {
    lib(draw::to_html(&outputs_from_py(expr)?, title))
}

/// `expr` alone as an `IndexLambda` reading its children (pytato's `to_index_lambda`); inputs
/// and index lambdas come back as they are.
#[pyfunction]
fn to_index_lambda(expr: PyRef<'_, PyArrayExpr>) -> Result<Py<PyArrayExpr>> {
    crate::array::object(lib(pytato::transform::lower::lower_node(&expr.array))?)
}

/// The number of nodes, as pytato's `get_num_nodes`: with `count_duplicates` (the default, as
/// upstream's), nodes equal in structure but built apart count apart; without, once.
#[pyfunction]
#[pyo3(signature = (expr, count_duplicates = None))]
fn get_num_nodes(expr: &Bound<'_, PyAny>, count_duplicates: Option<bool>) -> Result<usize> {
    let outputs = outputs_from_py(expr)?;
    Ok(if count_duplicates.unwrap_or(true) {
        analysis::num_nodes(&outputs)
    } else {
        analysis::num_nodes_deduplicated(&outputs)
    })
}

/// `{node type: count}`.
#[pyfunction]
fn get_node_type_counts<'py>(py: Python<'py>, expr: &Bound<'py, PyAny>) -> Result<Bound<'py, PyDict>> {
    let counts = PyDict::new(py);
    for (kind, n) in analysis::node_type_counts(&outputs_from_py(expr)?) {
        counts.set_item(kind, n)?;
    }
    Ok(counts)
}

/// The length of the longest path from an output to an input.
#[pyfunction]
fn get_max_node_depth(expr: &Bound<'_, PyAny>) -> Result<usize> {
    Ok(analysis::depth(&outputs_from_py(expr)?))
}

/// Every call replaced by the function's body over the call's arguments, nested calls included
/// (pytato's `inline_calls`).
#[pyfunction]
fn inline_calls<'py>(py: Python<'py>, expr: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
    outputs_to_py(py, lib(pytato::function::inline_calls(&outputs_from_py(expr)?))?)
}

/// Every function called, in bodies too, tagged to be inlined by every backend; the calls stay
/// in the DAG (pytato's `tag_all_calls_to_be_inlined`).
#[pyfunction]
fn tag_all_calls_to_be_inlined<'py>(py: Python<'py>, expr: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
    outputs_to_py(py, lib(pytato::function::tag_all_calls_to_be_inlined(&outputs_from_py(expr)?))?)
}

/// The number of call sites (pytato's `get_num_call_sites`): distinct calls (one function with one
/// list of arguments, however many of its results are used) in the DAG and, once per distinct
/// function, in function bodies.
#[pyfunction]
fn get_num_call_sites(expr: &Bound<'_, PyAny>) -> Result<usize> {
    Ok(analysis::num_call_sites(&outputs_from_py(expr)?))
}

/// The data flow from the placeholders into the outputs as an SVG document (pytato's
/// `show_fancy_placeholder_data_flow` draws it).
#[pyfunction]
fn get_placeholder_data_flow_svg(expr: &Bound<'_, PyAny>) -> Result<String> {
    lib(draw::dot_to_svg(&draw::placeholder_data_flow_dot(&outputs_from_py(expr)?)))
}

/// The data flow from the placeholders into the outputs in Graphviz's dot language.
#[pyfunction]
fn get_placeholder_data_flow_dot(expr: &Bound<'_, PyAny>) -> Result<String> {
    Ok(draw::placeholder_data_flow_dot(&outputs_from_py(expr)?))
}

/// Adds the transformations to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(deduplicate, m)?)?;
    m.add_function(wrap_pyfunction!(to_index_lambda, m)?)?;
    m.add_function(wrap_pyfunction!(eliminate_dead_code, m)?)?;
    m.add_function(wrap_pyfunction!(unify_axes_tags, m)?)?;
    m.add_function(wrap_pyfunction!(materialize_with_mpms, m)?)?;
    m.add_function(wrap_pyfunction!(rewrite_einsums_with_no_broadcasts, m)?)?;
    m.add_function(wrap_pyfunction!(get_dot_graph, m)?)?;
    m.add_function(wrap_pyfunction!(get_html_graph, m)?)?;
    m.add_function(wrap_pyfunction!(get_svg_graph, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_nodes, m)?)?;
    m.add_function(wrap_pyfunction!(get_node_type_counts, m)?)?;
    m.add_function(wrap_pyfunction!(get_max_node_depth, m)?)?;
    m.add_function(wrap_pyfunction!(inline_calls, m)?)?;
    m.add_function(wrap_pyfunction!(tag_all_calls_to_be_inlined, m)?)?;
    m.add_function(wrap_pyfunction!(get_num_call_sites, m)?)?;
    m.add_function(wrap_pyfunction!(get_placeholder_data_flow_svg, m)?)?;
    m.add_function(wrap_pyfunction!(get_placeholder_data_flow_dot, m)?)?;
    Ok(())
}
