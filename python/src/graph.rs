//! The DAG as pytato's Python code reads it: each node's fields under pytato's names
//! (`expr.array`, `expr.bindings`, `expr.indices`, ...), its children in a fixed order, and the
//! same node over other children. `pytato_rs.array`'s node classes and `pytato_rs.transform`'s
//! mappers are written on these.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::exceptions::PyAttributeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple, PyWeakrefMethods, PyWeakrefReference};
use pytato::array::{ScanOp, ScatterMode, Side, SortResult};
use pytato::{Array, IndexItem, NodeKind};

use crate::array::{PyArrayExpr, PyDictOfNamedArrays};
use crate::errors::{Result, lib, value_error};
use crate::tags::tags_from_py;

/// The live object of each node, by node id, as weak references: a node has one object while
/// any is alive, and each object keeps its children's alive ([`child_objects`]). Entries whose
/// object died are dropped when the table has doubled since it was last swept.
struct Objects {
    live: HashMap<usize, Py<PyWeakrefReference>>,
    sweep_at: usize,
}

static OBJECTS: Mutex<Option<Objects>> = Mutex::new(None);

/// Runs `f` on the table. No Python code runs inside (finalizers that build arrays would come
/// back here), so the lock is never taken twice.
fn with_objects<T>(f: impl FnOnce(&mut Objects) -> T) -> T {
    let mut table = OBJECTS.lock().unwrap_or_else(|e| e.into_inner());
    f(table.get_or_insert_with(|| Objects { live: HashMap::new(), sweep_at: 1024 }))
}

/// The object of node `array`: the live one where there is one, else a new one (registered).
/// Ids are unique while the node lives, and an object keeps its node alive.
pub(crate) fn node_object<'py>(py: Python<'py>, array: &Array) -> PyResult<Bound<'py, PyArrayExpr>> {
    let known = with_objects(|table| table.live.get(&array.id()).map(|w| w.clone_ref(py)));
    if let Some(object) = known.and_then(|w| w.bind(py).upgrade()).and_then(|o| o.cast_into::<PyArrayExpr>().ok()) {
        return Ok(object);
    }
    let object = Bound::new(py, PyArrayExpr::from(array.clone()))?;
    register(&object)?;
    Ok(object)
}

/// Records `object` as its node's object, unless the node has a live one.
fn register(object: &Bound<'_, PyArrayExpr>) -> PyResult<()> {
    let py = object.py();
    let weak = PyWeakrefReference::new(object)?.unbind();
    let id = object.get().array.id();
    let stale = with_objects(|table| {
        if table.live.get(&id).is_some_and(|w| w.bind(py).upgrade().is_some()) {
            return Vec::new();
        }
        table.live.insert(id, weak);
        if table.live.len() < table.sweep_at {
            return Vec::new();
        }
        let dead: Vec<usize> =
            table.live.iter().filter(|(_, w)| w.bind(py).upgrade().is_none()).map(|(id, _)| *id).collect();
        let removed = dead.iter().filter_map(|id| table.live.remove(id)).collect();
        table.sweep_at = (2 * table.live.len()).max(1024);
        removed
    });
    // dead weak references are released outside the lock
    drop(stale);
    Ok(())
}

/// The objects of `node`'s children (in `NodeKind::children`'s order), made once through
/// [`node_object`] and kept by `node`'s object, which is registered as its node's object if
/// none was.
pub(crate) fn child_objects<'a>(node: &'a Bound<'_, PyArrayExpr>) -> PyResult<&'a [Py<PyArrayExpr>]> {
    let this = node.get();
    if let Some(children) = this.children.get() {
        return Ok(children);
    }
    let py = node.py();
    register(node)?;
    let made = this
        .array
        .children()
        .into_iter()
        .map(|child| Ok(node_object(py, child)?.unbind()))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(this.children.get_or_init(|| made))
}

thread_local! {
    /// The objects whose last references [`release`] is dropping, while it runs.
    static RELEASING: RefCell<Option<Vec<Py<PyArrayExpr>>>> = const { RefCell::new(None) };
}

/// Drops a dead object's references to its children's objects. Each can be the last reference
/// and free a child, which drops its own children's: done with a queue instead of nested
/// deallocations, so that freeing the objects of a chain of 10^6 nodes needs no deep stack.
pub(crate) fn release(children: Vec<Py<PyArrayExpr>>) {
    let first = RELEASING.with(|queue| {
        let mut queue = queue.borrow_mut();
        match queue.as_mut() {
            Some(pending) => {
                pending.extend(children);
                None
            }
            None => {
                *queue = Some(Vec::new());
                Some(children)
            }
        }
    });
    let Some(mut batch) = first else { return };
    while !batch.is_empty() {
        // Dropping may free objects, whose own `release` queues their children.
        drop(batch);
        batch = RELEASING.with(|queue| std::mem::take(queue.borrow_mut().as_mut().expect("set above")));
    }
    RELEASING.with(|queue| *queue.borrow_mut() = None);
}

/// The field `name` of `node`'s node under pytato's name for its node class, or an
/// `AttributeError`. Arrays come as the nodes' objects ([`child_objects`]).
pub(crate) fn field<'py>(node: &Bound<'py, PyArrayExpr>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = node.py();
    let array = &node.get().array;
    child_objects(node)?;
    let node = |a: &Array| -> PyResult<Bound<'py, PyAny>> { Ok(node_object(py, a)?.into_any()) };
    let nodes = |arrays: &[Array]| -> PyResult<Bound<'py, PyAny>> {
        Ok(PyTuple::new(py, arrays.iter().map(node).collect::<PyResult<Vec<_>>>()?)?.into_any())
    };
    let int = |v: i64| -> PyResult<Bound<'py, PyAny>> { Ok(v.into_pyobject(py)?.into_any()) };
    let value = match (array.kind(), name) {
        (
            NodeKind::Reshape { array, .. }
            | NodeKind::Roll { array, .. }
            | NodeKind::AxisPermutation { array, .. }
            | NodeKind::BasicIndex { array, .. }
            | NodeKind::AdvancedIndexInContiguousAxes { array, .. }
            | NodeKind::AdvancedIndexInNoncontiguousAxes { array, .. }
            | NodeKind::Scatter { array, .. }
            | NodeKind::Sort { array, .. }
            | NodeKind::Scan { array, .. },
            "array",
        ) => node(array)?,
        (NodeKind::Reshape { .. }, "newshape") => crate::convert::shape_to_py(py, array.shape())?.into_any(),
        (NodeKind::Reshape { order, .. }, "order") => {
            let order = if *order == pytato::Order::F { "F" } else { "C" };
            order.into_pyobject(py)?.into_any()
        }
        (NodeKind::Roll { shift, .. }, "shift") => int(*shift)?,
        (
            NodeKind::Roll { axis, .. }
            | NodeKind::Stack { axis, .. }
            | NodeKind::Concatenate { axis, .. }
            | NodeKind::Sort { axis, .. }
            | NodeKind::Scan { axis, .. },
            "axis",
        ) => int(*axis as i64)?,
        (NodeKind::AxisPermutation { axes, .. }, "axis_permutation") => {
            PyTuple::new(py, axes.iter().copied())?.into_any()
        }
        (NodeKind::Stack { arrays, .. } | NodeKind::Concatenate { arrays, .. }, "arrays") => nodes(arrays)?,
        (
            NodeKind::BasicIndex { indices, .. }
            | NodeKind::AdvancedIndexInContiguousAxes { indices, .. }
            | NodeKind::AdvancedIndexInNoncontiguousAxes { indices, .. },
            "indices",
        ) => {
            let items = indices.iter().map(|item| index_item(py, item)).collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, items)?.into_any()
        }
        (NodeKind::IndexLambda(lambda), "bindings") => {
            let dict = PyDict::new(py);
            for (name, bound) in &lambda.bindings {
                dict.set_item(name.as_ref(), node(bound)?)?;
            }
            dict.into_any()
        }
        (NodeKind::CallResult { bindings, .. }, "bindings") => nodes(bindings)?,
        (NodeKind::CallResult { function, bindings, .. }, "call") => {
            let call = crate::calls::PyCall { function: function.clone(), bindings: bindings.clone() };
            Bound::new(py, call)?.into_any()
        }
        (NodeKind::IndexLambda(lambda), "expr") => {
            let expr = pymbolic_expr(py, &lambda.expr)?;
            let module = py.import("pytato_rs.scalar_expr")?;
            module.getattr("without_implied_casts")?.call1((node_object(py, array)?, expr))?
        }
        // The expression with every cast, those promotion implies too (pytato's repr shows them).
        (NodeKind::IndexLambda(lambda), "_expr_with_casts") => pymbolic_expr(py, &lambda.expr)?,
        // The expression exactly, as a tuple of entries (see `expr_entries.rs`): what pickling keeps.
        (NodeKind::IndexLambda(lambda), "_expr_entries") => {
            PyTuple::new(py, crate::expr_entries::expr_to_entries(py, &lambda.expr)?)?.into_any()
        }
        (NodeKind::IndexLambda(lambda), "var_to_reduction_descr") => {
            let dict = PyDict::new(py);
            for (iname, descriptor) in &lambda.reduction_descriptors {
                dict.set_item(iname.as_ref(), reduction_descriptor(py, descriptor)?)?;
            }
            dict.into_any()
        }
        (NodeKind::Einsum(einsum), "redn_axis_to_redn_descr") => {
            let reduction_axis = py.import("pytato_rs.array")?.getattr("EinsumReductionAxis")?;
            let dict = PyDict::new(py);
            for r in einsum.reduction_indices() {
                let descriptor = einsum.reduction_descriptors.get(&r).cloned().unwrap_or_default();
                dict.set_item(reduction_axis.call1((r,))?, reduction_descriptor(py, &descriptor)?)?;
            }
            dict.into_any()
        }
        (NodeKind::Einsum(einsum), "args") => nodes(&einsum.args)?,
        (NodeKind::Einsum(einsum), "access_descriptors") => {
            let module = py.import("pytato_rs.array")?;
            let (elementwise, reduction) =
                (module.getattr("EinsumElementwiseAxis")?, module.getattr("EinsumReductionAxis")?);
            let per_arg = einsum
                .access
                .iter()
                .map(|axes| {
                    let descriptors = axes
                        .iter()
                        .map(|axis| match axis {
                            pytato::EinsumAxis::Elementwise(i) => elementwise.call1((*i,)),
                            pytato::EinsumAxis::Reduction(i) => reduction.call1((*i,)),
                        })
                        .collect::<PyResult<Vec<_>>>()?;
                    PyTuple::new(py, descriptors)
                })
                .collect::<PyResult<Vec<_>>>()?;
            PyTuple::new(py, per_arg)?.into_any()
        }
        // The array the wrapper was made of, as in pytato; else the values as a new numpy array.
        (NodeKind::DataWrapper { data, .. }, "data") => {
            match data.as_host().and_then(|h| crate::data::original_of(py, h)) {
                Some(original) => original,
                None => crate::evaluated::into_numpy(py, data.clone())?,
            }
        }
        // The wrapped buffer itself, shared (array contexts freeze a thawed array without a copy).
        (NodeKind::DataWrapper { data, .. }, "_evaluated") => {
            Bound::new(py, crate::evaluated::EvaluatedArray::new(py, data.clone())?)?.into_any()
        }
        (NodeKind::NamedArray { container, name }, "expr") => match container.get(name) {
            Some(entry) => node(entry)?,
            None => return Err(PyAttributeError::new_err(format!("no entry '{name}' in its dictionary"))),
        },
        (NodeKind::NamedArray { container, .. }, "_container") => {
            Bound::new(py, PyDictOfNamedArrays { dict: container.clone() })?.into_any()
        }
        (NodeKind::Nonzero { mask, .. }, "mask") => node(mask)?,
        (NodeKind::Scatter { positions, .. }, "positions") => node(positions)?,
        (NodeKind::Scatter { values, .. } | NodeKind::SearchSorted { values, .. }, "values") => node(values)?,
        (NodeKind::SearchSorted { sorted, .. }, "sorted") => node(sorted)?,
        (NodeKind::Sort { descending, .. }, "descending") => descending.into_pyobject(py)?.to_owned().into_any(),
        (NodeKind::Sort { result, .. }, "result") => name_of(SORT_RESULTS, result).into_pyobject(py)?.into_any(),
        (NodeKind::Scan { op, .. }, "op") => name_of(SCAN_OPS, op).into_pyobject(py)?.into_any(),
        (NodeKind::SearchSorted { side, .. }, "side") => name_of(SIDES, side).into_pyobject(py)?.into_any(),
        (NodeKind::Nonzero { count, .. }, "count") => count.as_ref().into_pyobject(py)?.into_any(),
        (NodeKind::Scatter { mode, .. }, "mode") => name_of(SCATTER_MODES, mode).into_pyobject(py)?.into_any(),
        (NodeKind::DistributedRecv { src_rank, .. }, "src_rank") => int(*src_rank as i64)?,
        (NodeKind::DistributedRecv { comm_tag, .. }, "comm_tag") => crate::distributed::comm_tag_to_py(py, comm_tag)?,
        (NodeKind::DistributedSendRefHolder { send, .. }, "send") => {
            Bound::new(py, crate::distributed::PyDistributedSend { send: send.clone() })?.into_any()
        }
        (NodeKind::DistributedSendRefHolder { passthrough, .. }, "passthrough_data") => node(passthrough)?,
        _ => {
            return Err(PyAttributeError::new_err(format!(
                "'{}' ({}) has no attribute '{name}'",
                array.kind_name(),
                "a pytato_rs array node"
            )));
        }
    };
    Ok(value)
}

/// A reduction's descriptor as pytato's `ReductionDescriptor` (its tags).
fn reduction_descriptor<'py>(py: Python<'py>, descriptor: &pytato::ReductionDescriptor) -> PyResult<Bound<'py, PyAny>> {
    let tags = crate::tags::tag_set_to_py(py, &descriptor.tags)?;
    py.import("pytato_rs.array")?.getattr("ReductionDescriptor")?.call1((tags,))
}

/// An index item as pytato's `indices` hold it: an int (a `Dim` where symbolic), a slice of
/// normalized bounds, or an index array.
fn index_item<'py>(py: Python<'py>, item: &IndexItem) -> PyResult<Bound<'py, PyAny>> {
    let dim = |d: &pytato::Dim| crate::convert::dim_to_py(py, d);
    Ok(match item {
        IndexItem::Int(d) => dim(d)?,
        IndexItem::Slice(s) => {
            let slice = py.import("builtins")?.getattr("slice")?;
            slice.call1((dim(&s.start)?, dim(&s.stop)?, s.step))?
        }
        IndexItem::Array(a) => node_object(py, a)?.into_any(),
    })
}

/// The same node over `children` (in [`children`]'s order), checked again; the node itself when
/// every child is the same node.
pub(crate) fn with_children(array: &Array, children: Vec<PyRef<'_, PyArrayExpr>>) -> Result<Py<PyArrayExpr>> {
    crate::array::wrap(array.with_children(children.iter().map(|c| c.array.clone()).collect()))
}

/// `array` with the fields named in `changes` replaced (pytato's `replace_if_different` and
/// `copy`): the children under their field names (`array`, `arrays`, `args`, `bindings` by
/// name, `mask`, `positions`, `values`, `sorted`, `passthrough_data`), `tags` and `axes` (one
/// object with `tags` per axis), and an index lambda's `expr`, `shape`, `dtype` and
/// `var_to_reduction_descr` (through `pytato_rs.array.IndexLambda`). The node itself when nothing
/// differs.
pub(crate) fn replace(array: &Array, changes: Option<&Bound<'_, PyDict>>) -> Result<Array> {
    let Some(changes) = changes else { return Ok(array.clone()) };
    if let NodeKind::IndexLambda(_) = array.kind() {
        // A new expression, shape or dtype makes a new index lambda: pytato's constructor builds it.
        for field in ["expr", "shape", "dtype", "var_to_reduction_descr"] {
            if changes.contains(field)? {
                let py = changes.py();
                let node = node_object(py, array)?;
                let rebuilt =
                    py.import("pytato_rs.array")?.getattr("_replaced_index_lambda")?.call1((node, changes))?;
                return Ok(rebuilt.extract::<PyRef<'_, PyArrayExpr>>()?.array.clone());
            }
        }
    }
    let mut children: Vec<Array> = array.children().into_iter().cloned().collect();
    let (mut tags, mut axes) = (None, None);
    for (key, value) in changes.iter() {
        let name: String = key.extract()?;
        let one = |v: &Bound<'_, PyAny>| -> Result<Array> { Ok(v.extract::<PyRef<'_, PyArrayExpr>>()?.array.clone()) };
        let all = |v: &Bound<'_, PyAny>| -> Result<Vec<Array>> { v.try_iter()?.map(|item| one(&item?)).collect() };
        match (array.kind(), name.as_str()) {
            (_, "tags") => tags = Some(tags_from_py(Some(&value))?),
            (_, "axes") => axes = Some(axis_metadata_from_py(&value)?),
            (
                NodeKind::Reshape { .. }
                | NodeKind::Roll { .. }
                | NodeKind::AxisPermutation { .. }
                | NodeKind::BasicIndex { .. }
                | NodeKind::AdvancedIndexInContiguousAxes { .. }
                | NodeKind::AdvancedIndexInNoncontiguousAxes { .. }
                | NodeKind::Sort { .. }
                | NodeKind::Scan { .. }
                | NodeKind::Scatter { .. },
                "array",
            )
            | (NodeKind::Nonzero { .. }, "mask")
            | (NodeKind::SearchSorted { .. }, "sorted")
            | (NodeKind::DistributedSendRefHolder { .. }, "passthrough_data") => children[0] = one(&value)?,
            (NodeKind::Scatter { .. }, "positions") => children[1] = one(&value)?,
            (NodeKind::Scatter { .. }, "values") => children[2] = one(&value)?,
            (NodeKind::SearchSorted { .. }, "values") => children[1] = one(&value)?,
            (NodeKind::Stack { .. } | NodeKind::Concatenate { .. }, "arrays") | (NodeKind::Einsum(_), "args") => {
                children = all(&value)?;
            }
            (NodeKind::IndexLambda(lambda), "bindings") => {
                if value.len()? != lambda.bindings.len() {
                    return Err(value_error(format!(
                        "bindings {value} for an IndexLambda reading {:?}",
                        lambda.bindings.keys().collect::<Vec<_>>()
                    )));
                }
                children =
                    lambda.bindings.keys().map(|name| one(&value.get_item(name.as_ref())?)).collect::<Result<_>>()?;
            }
            _ => {
                return Err(value_error(format!(
                    "a {} has no field '{name}' that can be replaced (children, tags and axes can)",
                    array.kind_name()
                )));
            }
        }
    }
    let mut result = lib(array.with_children(children))?;
    if let Some(tags) = tags {
        // `tags` are the ones in equality; where the node was built stays
        let kept = result.tags().iter().filter(|t| t.get().ignored_for_equality()).cloned();
        let tags = tag_set(tags.into_iter().chain(kept).collect())?;
        if !tags.identical(result.tags()) {
            result = result.with_tags(tags);
        }
    }
    if let Some(axes) = axes
        && axes.as_slice() != result.axes()
    {
        result = lib(result.with_axes(axes))?;
    }
    Ok(result)
}

/// One `pytato::Axis` per item of `axes` (objects with `tags`, as `pytato_rs.tags.Axis`).
pub(crate) fn axis_metadata_from_py(axes: &Bound<'_, PyAny>) -> Result<Vec<pytato::Axis>> {
    axes.try_iter()?
        .map(|axis| Ok(pytato::Axis { tags: tag_set(tags_from_py(Some(&axis?.getattr("tags")?))?)? }))
        .collect()
}

/// A tag set of `tags` (a node carries one tag per unique family).
fn tag_set(tags: Vec<pytato::tags::TagRef>) -> Result<pytato::TagSet> {
    lib(pytato::TagSet::new().union(tags))
}

/// `expr` as pytato's pymbolic expression, casts included (`pytato_rs.scalar_expr`).
fn pymbolic_expr<'py>(py: Python<'py>, expr: &pytato::Expr) -> PyResult<Bound<'py, PyAny>> {
    let entries = crate::expr_entries::expr_to_entries(py, expr)?;
    py.import("pytato_rs.scalar_expr")?.getattr("from_postorder")?.call1((entries,))
}

/// The Python names of the host steps' parameters, read as node fields ([`field`]), taken back by
/// [`_host_step_node`] and, for `side`, by `searchsorted`.
const SORT_RESULTS: &[(SortResult, &str)] = &[(SortResult::Values, "values"), (SortResult::Indices, "indices")];
const SCAN_OPS: &[(ScanOp, &str)] = &[(ScanOp::Sum, "sum"), (ScanOp::Product, "product")];
pub(crate) const SIDES: &[(Side, &str)] = &[(Side::Left, "left"), (Side::Right, "right")];
const SCATTER_MODES: &[(ScatterMode, &str)] = &[(ScatterMode::Set, "set"), (ScatterMode::Add, "add")];

/// The name of `value` in `table`.
fn name_of<T: PartialEq>(table: &[(T, &'static str)], value: &T) -> &'static str {
    table.iter().find(|(v, _)| v == value).map(|(_, name)| *name).expect("every value is named")
}

/// The value `name` stands for in `table`; a `ValueError` that lists the names otherwise.
pub(crate) fn from_name<T: Copy>(what: &str, table: &[(T, &str)], name: &str) -> Result<T> {
    match table.iter().find(|(_, n)| *n == name) {
        Some((value, _)) => Ok(*value),
        None => {
            let names: Vec<String> = table.iter().map(|(_, n)| format!("{n:?}")).collect();
            Err(value_error(format!("{what} must be {}, not {name:?}", names.join(" or "))))
        }
    }
}

/// A host step's node from its kind's fields (as [`field`] gives them) and its children, as
/// pickling rebuilds it: the node itself, not the frontend function that made it (which adds
/// casts and wrappers that are nodes of their own in the pickled DAG).
#[pyfunction]
#[pyo3(signature = (kind, children, fields))]
pub(crate) fn _host_step_node(
    kind: &str,
    children: Vec<PyRef<'_, PyArrayExpr>>,
    fields: &Bound<'_, PyDict>,
) -> Result<Py<PyArrayExpr>> {
    let children: Vec<Array> = children.iter().map(|c| c.array.clone()).collect();
    let get = |name: &str| -> Result<Bound<'_, PyAny>> {
        fields.get_item(name)?.ok_or_else(|| value_error(format!("{kind}: no field {name}")))
    };
    let named = |name: &str| -> Result<String> { get(name)?.extract() };
    let node = match (kind, children.as_slice()) {
        ("Nonzero", [mask]) => Array::new_nonzero(mask, &named("count")?),
        ("Sort", [array]) => Array::new_sort(
            array,
            get("axis")?.extract()?,
            get("descending")?.extract()?,
            from_name("result", SORT_RESULTS, &named("result")?)?,
        ),
        ("Scan", [array]) => Array::new_scan(array, get("axis")?.extract()?, from_name("op", SCAN_OPS, &named("op")?)?),
        ("SearchSorted", [sorted, values]) => {
            Array::new_search_sorted(sorted, values, from_name("side", SIDES, &named("side")?)?)
        }
        ("Scatter", [array, positions, values]) => {
            Array::new_scatter(array, positions, values, from_name("mode", SCATTER_MODES, &named("mode")?)?)
        }
        _ => return Err(value_error(format!("no host step {kind} of {} children", children.len()))),
    };
    crate::array::wrap(node)
}
