//! pymbolic expressions as the library's scalar expressions: what `pt.IndexLambda(expr=...)` and
//! `replace_if_different(expr=...)` build from.
//!
//! pymbolic's expressions are untyped (Python numbers, `Sum`, `Quotient`, ...), the library's are
//! strictly typed (both operands of an operation have one dtype; casts are explicit). Each
//! operation is therefore typed by the frontend function of the same meaning, applied to 0-d
//! stand-ins of its operands' dtypes (Python numbers passed as themselves, so they stay weak as in
//! numpy 2): the function's result is an index lambda over the stand-ins, whose expression, with
//! the operands substituted for the stand-ins, is the typed operation. So `3 * x[_0]` over a
//! `float64` `x` becomes exactly what `3 * x` builds, by the same dtype rules, without a second
//! copy of them.
//!
//! `pytato_rs.scalar_expr.to_postorder` walks the pymbolic expression (without recursion) into the
//! entries read here.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use pytato::expr::ReduceOp;
use pytato::names::{Reserved, classify};
use pytato::{Array, DType, Expr, NodeKind, ReductionDescriptor, Scalar, Shape};

use crate::array::{PyArrayExpr, wrap};
use crate::convert::{scalar_from_py, shape_from_py};
use crate::data::dtype_from_py;
use crate::errors::{Result, lib, type_error, value_error};
use crate::expr_entries::within_depth;
use crate::tags::tags_from_py;

/// A typed subexpression with its depth, or a Python number still weakly typed (numpy 2's NEP
/// 50). Depths are kept as items are built, so that an expression deeper than an index lambda
/// takes is refused as soon as it passes [`within_depth`]'s bound (a deeper one would recurse as
/// deep when it is dropped), without walking the whole expression at each step.
enum Item {
    Typed(Expr, DType, usize),
    Number(Py<PyAny>),
}

/// What an expression reads: its output axes and its bindings.
struct Scope<'a> {
    ndim: usize,
    bindings: &'a BTreeMap<Arc<str>, Array>,
}

impl Scope<'_> {
    /// The dtype of variable `name` read without subscripts: an iname, a reduction iname or a
    /// 0-d binding.
    fn variable(&self, name: &str) -> Result<DType> {
        match classify(name) {
            Some(Reserved::Iname(axis)) if axis < self.ndim => return Ok(DType::I64),
            Some(Reserved::ReductionIname(_)) => return Ok(DType::I64),
            _ => {}
        }
        match self.bindings.get(name) {
            Some(array) if array.ndim() == 0 => Ok(array.dtype()),
            Some(array) => Err(value_error(format!(
                "the expression reads binding '{name}' (shape {}) without subscripts",
                array.shape()
            ))),
            None => Err(value_error(format!(
                "the expression reads '{name}', which is neither an iname of the result's {} axes, \
                 a reduction iname nor one of the bindings {:?}",
                self.ndim,
                self.bindings.keys().collect::<Vec<_>>()
            ))),
        }
    }

    /// The dtype of binding `name` read with `n` subscripts.
    fn subscripted(&self, name: &str, n: usize) -> Result<DType> {
        match self.bindings.get(name) {
            Some(array) if array.ndim() == n => Ok(array.dtype()),
            Some(array) => Err(value_error(format!(
                "the expression reads binding '{name}' of shape {} with {n} subscripts",
                array.shape()
            ))),
            None => Err(value_error(format!(
                "the expression subscripts '{name}', which is not one of the bindings {:?}",
                self.bindings.keys().collect::<Vec<_>>()
            ))),
        }
    }
}

impl Item {
    /// A typed item of depth `depth`; an error beyond [`within_depth`]'s bound.
    fn typed_of_depth(expr: Expr, dtype: DType, depth: usize) -> Result<Item> {
        Ok(Item::Typed(expr, dtype, within_depth(depth)?))
    }

    /// The item's depth (a number is a constant, one level).
    fn depth(&self) -> usize {
        match self {
            Item::Typed(_, _, depth) => *depth,
            Item::Number(_) => 1,
        }
    }

    /// The item as a typed expression: a Python number takes its own default dtype.
    fn typed(self, py: Python<'_>) -> Result<(Expr, DType)> {
        match self {
            Item::Typed(expr, dtype, _) => Ok((expr, dtype)),
            Item::Number(number) => {
                let number = number.bind(py);
                let value = scalar_from_py(number, "a constant")?;
                let dtype = match number.getattr("dtype") {
                    Ok(dtype) => dtype_from_py(&dtype)?,
                    Err(_) => value.default_dtype(),
                };
                Ok((Expr::Const(lib(Scalar::from_weak(&value, dtype))?), dtype))
            }
        }
    }
}

/// Applies the module's function `name` (numpy's name: `add`, `where`, `sin`, ...) to `items`,
/// through 0-d stand-ins, and returns the typed result (see the module docs).
fn apply(native: &Bound<'_, PyModule>, name: &str, items: Vec<Item>) -> Result<Item> {
    let py = native.py();
    if name == "ldexp"
        && let Some(scaled) = library_ldexp(py, &items)?
    {
        return Ok(scaled);
    }
    let Ok(function) = native.getattr(name) else { return library_function(py, name, items) };
    let mut stand_ins: HashMap<usize, (Expr, DType)> = HashMap::new();
    // each stand-in as a variable of its own, with its operand's depth
    let mut markers: HashMap<usize, (Expr, DType)> = HashMap::new();
    let mut marker_depths: HashMap<Arc<str>, usize> = HashMap::new();
    let mut args = Vec::with_capacity(items.len());
    for item in items {
        match item {
            // numpy scalars are typed: a stand-in of their dtype
            Item::Number(number) if !number.bind(py).hasattr("dtype")? => args.push(number.into_bound(py)),
            item => {
                let depth = item.depth();
                let (expr, dtype) = item.typed(py)?;
                let stand_in = lib(Array::new_placeholder(None, Shape::scalar(), dtype))?;
                let marker: Arc<str> = format!("operand {}", markers.len()).into();
                markers.insert(stand_in.id(), (Expr::Var(marker.clone()), dtype));
                marker_depths.insert(marker, depth);
                stand_ins.insert(stand_in.id(), (expr, dtype));
                args.push(Bound::new(py, PyArrayExpr::from(stand_in))?.into_any());
            }
        }
    }
    let result = function.call1(PyTuple::new(py, args)?)?;
    let Ok(array) = result.cast::<PyArrayExpr>() else {
        // numbers alone: numpy computed the value
        return Ok(Item::Number(result.unbind()));
    };
    let array = array.get().array.clone();
    let not_scalar = || value_error(format!("'{name}' of scalars gave {}, not a scalar expression", array.summary()));
    // the depth from the result over its operands as leaves, before the operands are put in
    let depth = within_depth(composed_depth(&substituted(&array, &markers).ok_or_else(not_scalar)?, &marker_depths))?;
    let expr = substituted(&array, &stand_ins).ok_or_else(not_scalar)?;
    Ok(Item::Typed(expr, array.dtype(), depth))
}

/// `ldexp` with its exponent in the mantissa's float dtype, as the library holds it (numpy's
/// `ldexp` refuses a float exponent; the library's frontend casts an integer one to the float dtype
/// it computes in, exactly, as it clamps it to ±2200 first): typed as that call, the exponent (a
/// number or a float expression) in the mantissa's dtype. `None` for an integer exponent, which
/// numpy's function types. Without this, reading `.expr` of such an index lambda, pickling it
/// and the mappers that rebuild it raised numpy's refusal.
fn library_ldexp(py: Python<'_>, items: &[Item]) -> Result<Option<Item>> {
    let [mantissa, exponent] = items else { return Ok(None) };
    let (mantissa, dtype) = match mantissa {
        Item::Typed(expr, dtype, _) => (expr.clone(), *dtype),
        // a constant the library read in place: a numpy scalar of its dtype
        Item::Number(number) if number.bind(py).hasattr("dtype")? => Item::Number(number.clone_ref(py)).typed(py)?,
        Item::Number(_) => return Ok(None),
    };
    let is_float = |d: &DType| d.is_inexact() && !d.is_complex();
    if !is_float(&dtype) {
        return Ok(None);
    }
    let exponent = match exponent {
        Item::Typed(expr, d, _) if *d == dtype => expr.clone(),
        Item::Typed(expr, d, _) if is_float(d) => expr.clone().cast(dtype),
        Item::Typed(..) => return Ok(None),
        Item::Number(number) => {
            let value = scalar_from_py(number.bind(py), "a constant")?;
            if !matches!(value, pytato::dtype::WeakScalar::Float(_)) {
                return Ok(None);
            }
            Expr::Const(lib(Scalar::from_weak(&value, dtype))?)
        }
    };
    // the call over the operands, the exponent perhaps cast: at most two levels more
    let depth = 2 + items.iter().map(Item::depth).max().unwrap_or(1);
    Ok(Some(Item::typed_of_depth(Expr::call(pytato::expr::Func::Ldexp, vec![mantissa, exponent]), dtype, depth)?))
}

/// A call of one of the library's own functions that numpy has no function for (`zero`, which
/// `zeros_like` uses to keep its argument, `normalize_index`, ...), its arguments of one dtype.
fn library_function(py: Python<'_>, name: &str, items: Vec<Item>) -> Result<Item> {
    let func = pytato::expr::Func::ALL
        .into_iter()
        .find(|f| f.name() == name)
        .ok_or_else(|| value_error(format!("no function '{name}' for a scalar expression")))?;
    let depth = 1 + items.iter().map(Item::depth).max().unwrap_or(0);
    let typed = items.into_iter().map(|item| item.typed(py)).collect::<Result<Vec<_>>>()?;
    if typed.len() != func.arity() || typed.iter().any(|(_, d)| *d != typed[0].1) {
        return Err(type_error(format!(
            "'{name}' takes {} arguments of one dtype, not {:?}",
            func.arity(),
            typed.iter().map(|(_, d)| d.to_string()).collect::<Vec<_>>()
        )));
    }
    let dtype =
        func.result_dtype(typed[0].1).map_err(|why| type_error(format!("'{name}' of dtype {}: {why}", typed[0].1)))?;
    Item::typed_of_depth(Expr::call(func, typed.into_iter().map(|(e, _)| e).collect()), dtype, depth)
}

/// The expression `array` computes with the stand-ins replaced by their expressions, or `None`
/// where it is not a 0-d expression over the stand-ins and constants.
fn substituted(array: &Array, stand_ins: &HashMap<usize, (Expr, DType)>) -> Option<Expr> {
    if let Some((expr, _)) = stand_ins.get(&array.id()) {
        return Some(expr.clone());
    }
    let NodeKind::IndexLambda(lambda) = array.kind() else { return None };
    if array.ndim() != 0 || !lambda.reduction_descriptors.is_empty() {
        return None;
    }
    let mut reads = HashMap::new();
    for (name, bound) in &lambda.bindings {
        reads.insert(name.clone(), substituted(bound, stand_ins)?);
    }
    Some(lambda.expr.rewrite(&mut |e| match e {
        Expr::Var(name) => reads.get(name).cloned(),
        _ => None,
    }))
}

/// The depth of `expr` with each variable of `leaf_depths` standing for a subexpression of that
/// depth (a walk of `expr` alone).
fn composed_depth(expr: &Expr, leaf_depths: &HashMap<Arc<str>, usize>) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(expr, 1)];
    while let Some((e, level)) = stack.pop() {
        let here = match e {
            Expr::Var(name) => leaf_depths.get(name).map_or(level, |depth| level - 1 + depth),
            _ => level,
        };
        deepest = deepest.max(here);
        stack.extend(e.children().into_iter().map(|c| (c, level + 1)));
    }
    deepest
}

/// The library's expression of the postorder `entries` of a pymbolic expression (see
/// `pytato_rs.scalar_expr.to_postorder` for the entries).
fn expression(native: &Bound<'_, PyModule>, entries: &Bound<'_, PyList>, scope: &Scope<'_>) -> Result<(Expr, DType)> {
    let py = native.py();
    let mut stack: Vec<Item> = Vec::new();
    let pop = |stack: &mut Vec<Item>, n: usize| -> Result<Vec<Item>> {
        if stack.len() < n {
            return Err(value_error("a malformed expression: an operation with too few operands"));
        }
        Ok(stack.split_off(stack.len() - n))
    };
    for entry in entries.iter() {
        let entry = entry.cast_into::<PyTuple>()?;
        let kind: String = entry.get_item(0)?.extract()?;
        let item = match kind.as_str() {
            "const" => Item::Number(entry.get_item(1)?.unbind()),
            "var" => {
                let name: String = entry.get_item(1)?.extract()?;
                Item::Typed(Expr::var(&name), scope.variable(&name)?, 1)
            }
            "subscript" => {
                let (name, n): (String, usize) = (entry.get_item(1)?.extract()?, entry.get_item(2)?.extract()?);
                let dtype = scope.subscripted(&name, n)?;
                let indices = pop(&mut stack, n)?;
                let depth = 1 + indices.iter().map(Item::depth).max().unwrap_or(0);
                let indices = indices
                    .into_iter()
                    .map(|index| {
                        let (index, index_dtype) = index.typed(py)?;
                        if !index_dtype.is_integer() {
                            return Err(type_error(format!(
                                "an index of '{name}' has dtype {index_dtype}, not an integer dtype"
                            )));
                        }
                        Ok(index)
                    })
                    .collect::<Result<Vec<_>>>()?;
                Item::typed_of_depth(Expr::subscript(&name, indices), dtype, depth)?
            }
            "apply" => {
                let (name, n): (String, usize) = (entry.get_item(1)?.extract()?, entry.get_item(2)?.extract()?);
                let operands = pop(&mut stack, n)?;
                apply(native, &name, operands)?
            }
            "fold" => {
                let (name, n): (String, usize) = (entry.get_item(1)?.extract()?, entry.get_item(2)?.extract()?);
                let mut operands = pop(&mut stack, n)?.into_iter();
                let first = operands.next().ok_or_else(|| value_error(format!("'{name}' of no operands")))?;
                operands.try_fold(first, |acc, next| apply(native, &name, vec![acc, next]))?
            }
            "sum" => {
                let negated: Vec<bool> = entry.get_item(1)?.extract()?;
                let mut terms = pop(&mut stack, negated.len())?.into_iter().zip(negated);
                let (first, first_negated) = terms.next().ok_or_else(|| value_error("a sum of no terms"))?;
                let first = if first_negated { apply(native, "negative", vec![first])? } else { first };
                terms.try_fold(first, |acc, (term, negated)| {
                    apply(native, if negated { "subtract" } else { "add" }, vec![acc, term])
                })?
            }
            "cast" => {
                let operand = pop(&mut stack, 1)?.into_iter().next().expect("one operand");
                let depth = operand.depth();
                let (expr, dtype) = operand.typed(py)?;
                let to = dtype_from_py(&entry.get_item(1)?)?;
                if dtype == to {
                    Item::Typed(expr, to, depth)
                } else {
                    Item::typed_of_depth(expr.cast(to), to, depth + 1)?
                }
            }
            "reduce" => {
                let name: String = entry.get_item(1)?.extract()?;
                let op = ReduceOp::ALL
                    .into_iter()
                    .find(|op| op.name() == name)
                    .ok_or_else(|| value_error(format!("no reduction '{name}'")))?;
                let inames = crate::expr_entries::reduction_bounds_from_py(&entry.get_item(2)?)?;
                let body = pop(&mut stack, 1)?.into_iter().next().expect("one operand");
                let mut depth = body.depth();
                let (mut body, mut dtype) = body.typed(py)?;
                if matches!(op, ReduceOp::All | ReduceOp::Any) && dtype != DType::Bool {
                    (body, dtype, depth) = (body.cast(DType::Bool), DType::Bool, depth + 1);
                }
                if !op.accepts(dtype) {
                    return Err(type_error(format!("a {name} reduction of dtype {dtype}")));
                }
                // A complex product's first value (`ProductReductionOperation(start=...)`).
                let start = match entry.len() {
                    4 if !entry.get_item(3)?.is_none() => Some(entry.get_item(3)?),
                    _ => None,
                };
                match start {
                    Some(start) if op == ReduceOp::Product && dtype.is_complex() => {
                        let start = scalar_from_py(&start, "a product's start value")?;
                        let start = lib(Scalar::assign_weak("reduce", &start, dtype))?;
                        Item::typed_of_depth(Expr::product_from(start, inames, body), dtype, depth + 1)?
                    }
                    Some(_) => {
                        return Err(type_error(format!(
                            "a start value is for complex products, not a {name} reduction of dtype {dtype}"
                        )));
                    }
                    None => Item::typed_of_depth(Expr::reduce(op, inames, body), dtype, depth + 1)?,
                }
            }
            other => return Err(value_error(format!("an expression entry of unknown kind {other:?}"))),
        };
        stack.push(item);
    }
    match (stack.pop(), stack.is_empty()) {
        (Some(item), true) => item.typed(py),
        _ => Err(value_error("a malformed expression: not one value")),
    }
}

/// pytato's `IndexLambda(expr, shape, dtype, bindings, var_to_reduction_descr)` (tags and axes
/// are added by `pytato_rs.array`): `expr` (postorder entries of a pymbolic expression) computed
/// in the dtypes numpy's rules give, then cast to `dtype` where that differs (as pytato's code
/// generators assign it); `dtype=None` keeps the computed dtype.
#[pyfunction]
#[pyo3(signature = (entries, shape, dtype, bindings, reduction_descriptors = None))]
pub(crate) fn _index_lambda(
    py: Python<'_>,
    entries: &Bound<'_, PyList>,
    shape: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    bindings: &Bound<'_, PyDict>,
    reduction_descriptors: Option<&Bound<'_, PyDict>>,
) -> Result<Py<PyArrayExpr>> {
    let shape = shape_from_py(shape)?;
    let dtype = if dtype.is_none() { None } else { Some(dtype_from_py(dtype)?) };
    let bindings = bindings
        .iter()
        .map(|(name, array)| {
            Ok((name.extract::<String>()?.into(), array.extract::<PyRef<'_, PyArrayExpr>>()?.array.clone()))
        })
        .collect::<Result<BTreeMap<Arc<str>, Array>>>()?;
    let native = py.import("pytato_rs._native")?;
    let scope = Scope { ndim: shape.ndim(), bindings: &bindings };
    let (expr, computed) = expression(&native, entries, &scope)?;
    let expr = match dtype {
        Some(dtype) if dtype != computed => expr.cast(dtype),
        _ => expr,
    };
    // A reduction without a descriptor gets an untagged one.
    let mut descriptors: BTreeMap<Arc<str>, ReductionDescriptor> = BTreeMap::new();
    expr.walk(&mut |e| {
        if let Expr::Reduce(reduce) = e {
            for bounds in &reduce.inames {
                descriptors.entry(bounds.iname.clone()).or_default();
            }
        }
    });
    for (iname, descriptor) in reduction_descriptors.into_iter().flat_map(|d| d.iter()) {
        let tags = lib(pytato::TagSet::new().union(tags_from_py(Some(&descriptor.getattr("tags")?))?))?;
        descriptors.insert(iname.extract::<String>()?.into(), ReductionDescriptor { tags });
    }
    wrap(Array::new_index_lambda(expr, shape, bindings, descriptors))
}
