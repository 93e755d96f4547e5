//! An index lambda's expression as a list of entries in postorder (children first), both ways:
//! [`expr_to_entries`] lists the expression exactly (constants as numpy scalars of their dtype,
//! casts and operations by name), and [`expr_from_entries`] reads such a list back into the same
//! expression, node for node, without typing it again. `pytato_rs.scalar_expr` turns the entries
//! into pymbolic expressions for pytato's users; pickling keeps the entries themselves, so that
//! a pickled index lambda comes back equal to itself (typing a pymbolic expression again goes
//! through numpy's rules, which may build a differently shaped but equivalent expression, as for
//! integer powers, whose exponents the frontend checks in a node of their own).
//!
//! Both directions use an explicit stack: expressions may be deep.

use std::collections::BTreeMap;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pytato::expr::{BinaryOp, CompareOp, Func, MAX_DEPTH, Reduce, ReduceOp, ReductionBounds, UnaryOp};
use pytato::{Array, DType, Expr, ReductionDescriptor, Scalar};

use crate::array::PyArrayExpr;
use crate::convert::{dim_from_py, shape_from_py};
use crate::data::{borrow, to_numpy};
use crate::errors::{Result, lib, value_error};

/// `expr` as a list of its nodes in postorder (children first), each a tuple naming the node and
/// its own data (`("const", value)`, `("var", name)`, `("subscript", name, n_indices)`,
/// `("unary", op)`, `("binary", op)`, `("compare", op)`, `("if",)`, `("cast", dtype)`,
/// `("call", function, n_args)`, `("reduce", op, ((iname, lower, upper), ...), start)`, `start`
/// a complex product's first value or `None`): what `pytato_rs.scalar_expr` builds pymbolic
/// expressions from, and what [`expr_from_entries`] reads back exactly.
pub(crate) fn expr_to_entries<'py>(py: Python<'py>, expr: &Expr) -> PyResult<Bound<'py, PyList>> {
    let entries = PyList::empty(py);
    let dim = |d: &pytato::Dim| crate::convert::dim_to_py(py, d);
    // (node, whether its children are done)
    let mut stack = vec![(expr, false)];
    while let Some((node, children_done)) = stack.pop() {
        if !children_done {
            stack.push((node, true));
            stack.extend(node.children().into_iter().rev().map(|child| (child, false)));
            continue;
        }
        let entry = match node {
            Expr::Const(value) => {
                let data = pytato::ArrayData::from_scalars(value.dtype(), &[], [*value])
                    .expect("one scalar of its own dtype is a 0-d array");
                PyTuple::new(py, ["const".into_pyobject(py)?.into_any(), to_numpy(py, data)?.get_item(())?])?
            }
            Expr::Var(name) => PyTuple::new(py, ["var", name.as_ref()])?,
            Expr::Subscript(name, indices) => ("subscript", name.as_ref(), indices.len()).into_pyobject(py)?,
            Expr::Unary(op, _) => ("unary", format!("{op:?}")).into_pyobject(py)?,
            Expr::Binary(op, ..) => ("binary", format!("{op:?}")).into_pyobject(py)?,
            Expr::Compare(op, ..) => ("compare", op.symbol()).into_pyobject(py)?,
            Expr::If(..) => PyTuple::new(py, ["if"])?,
            Expr::Cast(dtype, _) => ("cast", dtype.to_string()).into_pyobject(py)?,
            Expr::Call(func, args) => ("call", func.name(), args.len()).into_pyobject(py)?,
            Expr::Reduce(reduce) => {
                let bounds = reduce
                    .inames
                    .iter()
                    .map(|b| {
                        PyTuple::new(
                            py,
                            [b.iname.as_ref().into_pyobject(py)?.into_any(), dim(&b.lower)?, dim(&b.upper)?],
                        )
                    })
                    .collect::<PyResult<Vec<_>>>()?;
                let start = match reduce.start {
                    Some(start) => {
                        let data = pytato::ArrayData::from_scalars(start.dtype(), &[], [start])
                            .expect("one scalar of its own dtype is a 0-d array");
                        to_numpy(py, data)?.get_item(())?
                    }
                    None => py.None().into_bound(py),
                };
                ("reduce", reduce.op.name(), PyTuple::new(py, bounds)?, start).into_pyobject(py)?
            }
        };
        entries.append(entry)?;
    }
    Ok(entries)
}

/// A numpy scalar as the library's scalar of its dtype, bit for bit.
fn scalar_from_numpy(value: &Bound<'_, PyAny>) -> Result<Scalar> {
    let array = value.py().import("numpy")?.call_method1("asarray", (value,))?;
    let borrowed = borrow(&array, "a constant of an expression")?;
    let view = borrowed.view();
    if view.ndim() != 0 {
        return Err(value_error(format!(
            "a constant of an expression is one number, not an array of shape {:?}",
            view.shape()
        )));
    }
    Ok(view.get(&[]).expect("a 0-d array has one element"))
}

/// `depth`, where an index lambda takes an expression that deep ([`MAX_DEPTH`]); an error
/// otherwise. Readers of expressions from Python check it as they build, since building a deeper
/// one and dropping it would recurse as deep.
pub(crate) fn within_depth(depth: usize) -> Result<usize> {
    if depth > MAX_DEPTH {
        return Err(value_error(format!("an expression more than {MAX_DEPTH} levels deep")));
    }
    Ok(depth)
}

/// A reduction's `((iname, lower, upper), ...)` as an entry lists them (pymbolic's too).
pub(crate) fn reduction_bounds_from_py(bounds: &Bound<'_, PyAny>) -> Result<Vec<ReductionBounds>> {
    bounds
        .try_iter()?
        .map(|item| {
            let (iname, lower, upper): (String, Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
            Ok(ReductionBounds { iname: iname.into(), lower: dim_from_py(&lower)?, upper: dim_from_py(&upper)? })
        })
        .collect()
}

/// The operation of `table` whose `name` is `wanted`; a `ValueError` naming the kind otherwise.
fn named<T: Copy>(kind: &str, table: &[T], name: impl Fn(T) -> String, wanted: &str) -> Result<T> {
    table
        .iter()
        .copied()
        .find(|op| name(*op) == wanted)
        .ok_or_else(|| value_error(format!("an expression entry names no {kind} {wanted:?}")))
}

/// The expression that [`expr_to_entries`] listed as `entries`. Malformed entries (unknown
/// kinds or names, too few operands) are a `ValueError`; whether the expression is well typed is
/// for the index lambda built from it to check.
pub(crate) fn expr_from_entries(entries: &Bound<'_, PyAny>) -> Result<Expr> {
    // Each entry's expression and its depth: a list may describe a deeper expression than any
    // index lambda takes (`MAX_DEPTH`), which is refused before it is built (dropping it would
    // recurse as deep).
    let mut stack: Vec<(Expr, usize)> = Vec::new();
    let malformed = || value_error("a malformed expression: an operation with too few operands");
    for entry in entries.try_iter()? {
        let entry = entry?;
        let entry =
            entry.cast::<PyTuple>().map_err(|_| value_error(format!("an expression entry {entry} is not a tuple")))?;
        let kind: String = entry.get_item(0)?.extract()?;
        let field = |i: usize| entry.get_item(i);
        let mut deepest = 0;
        let mut pop = |n: usize| -> Result<Vec<Expr>> {
            let at = stack.len().checked_sub(n).ok_or_else(malformed)?;
            let popped = stack.split_off(at);
            deepest = popped.iter().map(|(_, depth)| *depth).fold(deepest, usize::max);
            Ok(popped.into_iter().map(|(expr, _)| expr).collect())
        };
        let node = match kind.as_str() {
            "const" => Expr::Const(scalar_from_numpy(&field(1)?)?),
            "var" => Expr::var(&field(1)?.extract::<String>()?),
            "subscript" => {
                let name: String = field(1)?.extract()?;
                Expr::subscript(&name, pop(field(2)?.extract()?)?)
            }
            "unary" => {
                let op =
                    named("unary operation", &UnaryOp::ALL, |op| format!("{op:?}"), &field(1)?.extract::<String>()?)?;
                let [a] = <[Expr; 1]>::try_from(pop(1)?).map_err(|_| malformed())?;
                Expr::Unary(op, Arc::new(a))
            }
            "binary" => {
                let op =
                    named("binary operation", &BinaryOp::ALL, |op| format!("{op:?}"), &field(1)?.extract::<String>()?)?;
                let [a, b] = <[Expr; 2]>::try_from(pop(2)?).map_err(|_| malformed())?;
                Expr::Binary(op, Arc::new(a), Arc::new(b))
            }
            "compare" => {
                let op = named(
                    "comparison",
                    &CompareOp::ALL,
                    |op| op.symbol().to_string(),
                    &field(1)?.extract::<String>()?,
                )?;
                let [a, b] = <[Expr; 2]>::try_from(pop(2)?).map_err(|_| malformed())?;
                Expr::Compare(op, Arc::new(a), Arc::new(b))
            }
            "if" => {
                let [c, a, b] = <[Expr; 3]>::try_from(pop(3)?).map_err(|_| malformed())?;
                Expr::If(Arc::new(c), Arc::new(a), Arc::new(b))
            }
            "cast" => {
                let name: String = field(1)?.extract()?;
                let dtype = DType::from_name(&name)
                    .ok_or_else(|| value_error(format!("a cast to an unknown dtype {name:?}")))?;
                let [a] = <[Expr; 1]>::try_from(pop(1)?).map_err(|_| malformed())?;
                Expr::Cast(dtype, Arc::new(a))
            }
            "call" => {
                let func = named("function", &Func::ALL, |f| f.name().to_string(), &field(1)?.extract::<String>()?)?;
                Expr::Call(func, pop(field(2)?.extract()?)?.into())
            }
            "reduce" => {
                let op =
                    named("reduction", &ReduceOp::ALL, |op| op.name().to_string(), &field(1)?.extract::<String>()?)?;
                let inames = reduction_bounds_from_py(&field(2)?)?;
                let start = match entry.len() {
                    4 if !field(3)?.is_none() => Some(scalar_from_numpy(&field(3)?)?),
                    _ => None,
                };
                let [body] = <[Expr; 1]>::try_from(pop(1)?).map_err(|_| malformed())?;
                Expr::Reduce(Arc::new(Reduce { op, inames, body, start }))
            }
            other => return Err(value_error(format!("an expression entry of unknown kind {other:?}"))),
        };
        stack.push((node, within_depth(deepest + 1)?));
    }
    match <[(Expr, usize); 1]>::try_from(stack) {
        Ok([(expr, _)]) => Ok(expr),
        Err(_) => Err(value_error("a malformed expression: not one value")),
    }
}

/// The index lambda of an expression listed by [`expr_to_entries`] (what pickling keeps), over
/// `bindings`, with its reduction descriptors' tags: the node it was listed from, exactly.
#[pyfunction]
pub(crate) fn _index_lambda_from_entries(
    entries: &Bound<'_, PyAny>,
    shape: &Bound<'_, PyAny>,
    bindings: &Bound<'_, PyDict>,
    reduction_tags: &Bound<'_, PyDict>,
) -> Result<Py<PyArrayExpr>> {
    let expr = expr_from_entries(entries)?;
    let bindings = bindings
        .iter()
        .map(|(name, array)| {
            Ok((name.extract::<String>()?.into(), array.extract::<PyRef<'_, PyArrayExpr>>()?.array.clone()))
        })
        .collect::<Result<BTreeMap<Arc<str>, Array>>>()?;
    let descriptors = reduction_tags
        .iter()
        .map(|(iname, tags)| {
            let tags = lib(pytato::TagSet::new().union(crate::tags::tags_from_py(Some(&tags))?))?;
            Ok((iname.extract::<String>()?.into(), ReductionDescriptor { tags }))
        })
        .collect::<Result<BTreeMap<Arc<str>, ReductionDescriptor>>>()?;
    crate::array::wrap(Array::new_index_lambda(expr, shape_from_py(shape)?, bindings, descriptors))
}
