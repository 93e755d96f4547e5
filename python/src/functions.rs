//! The module's numpy-like functions, under pytato's (and numpy's) names.
//!
//! Each is a thin conversion of Python arguments to the Rust frontend's
//! (`pytato::frontend`); semantics, dtype rules and error messages are the library's.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyTuple};
use pytato as pt;
use pytato::dtype::WeakScalar;
use pytato::{Array, DType, Order};
use pytato::{Indexing, PadMode, ReduceOptions, ScanOptions, SortOptions, Split, TensordotAxes};

use crate::array::{PyArrayExpr, order_from_str, wrap};
use crate::convert::{
    PyDim, array_from_py, arrays_from_py, axes_from_py, axes_of, axis_of, dim_from_py, fill_value_from_py,
    index_array_from_py, ints_from_py, is_number, is_numpy_scalar, new_shape_from_py, operand_from_py, scalar_from_py,
    shape_from_py,
};
use crate::data::{dtype_from_py, shared_data};
use crate::errors::{Result, lib, type_error, value_error};
use crate::tags::tags_from_py;

/// An optional `dtype=` (pyo3 passes Python's `None` as `None`, here and for every optional
/// argument).
fn optional_dtype(dtype: Option<&Bound<'_, PyAny>>) -> Result<Option<DType>> {
    dtype.map(dtype_from_py).transpose()
}

fn tagged(array: pytato::Result<Array>, tags: Option<&Bound<'_, PyAny>>) -> Result<Array> {
    lib(lib(array)?.tagged_with(tags_from_py(tags)?))
}

// ---- inputs -------------------------------------------------------------------------------

/// A named input of the given shape and dtype, bound when the program runs (pytato's
/// `make_placeholder`).
#[pyfunction]
#[pyo3(signature = (name, shape, dtype = None, tags = None, axes = None))]
fn make_placeholder(
    name: Option<&str>,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    tags: Option<&Bound<'_, PyAny>>,
    axes: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let dtype = optional_dtype(dtype)?.unwrap_or(DType::F64);
    // An unnamed placeholder is an input of its own, named `_pt_in<k>` by the programs.
    with_axes(tagged(Array::new_placeholder(name, shape_from_py(shape)?, dtype), tags)?, axes)
}

/// `array` with the axis metadata `axes` (one object with `tags` per axis), where given.
fn with_axes(array: Array, axes: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    match axes.filter(|a| !a.is_none()) {
        None => wrap(Ok(array)),
        Some(axes) => wrap(array.with_axes(crate::graph::axis_metadata_from_py(axes)?)),
    }
}

/// A size parameter: a length named in shapes, bound from the inputs' shapes when the program
/// runs.
#[pyfunction]
#[pyo3(signature = (name, tags = None))]
fn make_size_param(name: &str, tags: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    wrap(Ok(tagged(pt::size_param(name), tags)?))
}

/// Data (a numpy array, copied, or an `EvaluatedArray`, shared) as a node of the DAG. `shape`,
/// where given, is the data's, with lengths that may be expressions of size parameters (pytato's
/// `shape=(n, 2)`: programs bind `n` from the data). The node's `.data` is the numpy array given
/// (see `data::remember_original`); the program reads the copy.
#[pyfunction]
#[pyo3(signature = (data, name = None, tags = None, shape = None, axes = None))]
fn make_data_wrapper(
    data: &Bound<'_, PyAny>,
    name: Option<&str>,
    tags: Option<&Bound<'_, PyAny>>,
    shape: Option<&Bound<'_, PyAny>>,
    axes: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let given = data;
    let data = shared_data(given, "make_data_wrapper")?;
    // `.data` gives back what the caller wrapped, as pytato's does: a numpy array, or another
    // library's array (pytato's `DataInterface`: a `shape` and a `dtype`; arraycontext's JAX
    // context thaws JAX arrays and reads them back through `.data`), which the library reads a
    // copy of. Not an evaluated array: its buffer is the library's own.
    if let pytato::array::DataRef::Host(copy) = &data
        && !given.is_instance_of::<crate::evaluated::EvaluatedArray>()
        && (given.is_instance_of::<numpy::PyUntypedArray>() || (given.hasattr("shape")? && given.hasattr("dtype")?))
    {
        crate::data::remember_original(copy, given);
    }
    let wrapper = match shape.filter(|s| !s.is_none()) {
        // Lengths may be expressions of size parameters, bound from the data when a program runs.
        Some(shape) => lib(pytato::Array::new_data_wrapper_with_shape(data, name, shape_from_py(shape)?))?,
        None => lib(pt::data_wrapper(data, name))?,
    };
    with_axes(lib(wrapper.tagged_with(tags_from_py(tags)?))?, axes)
}

// ---- elementwise --------------------------------------------------------------------------

/// numpy's function `name` of `args`, for arguments that are all numbers (pytato does the same:
/// `pt.exp(2.0)` is a numpy scalar, which code compares with `<`).
fn numpy_of_numbers<'py>(name: &str, args: &[&Bound<'py, PyAny>]) -> Result<Option<Bound<'py, PyAny>>> {
    numpy_of_numbers_with(name, args, None)
}

/// [`numpy_of_numbers`] with numpy's keyword arguments `kwargs`.
fn numpy_of_numbers_with<'py>(
    name: &str,
    args: &[&Bound<'py, PyAny>],
    kwargs: Option<&Bound<'py, PyDict>>,
) -> Result<Option<Bound<'py, PyAny>>> {
    for arg in args {
        if !is_number(arg)? {
            return Ok(None);
        }
    }
    let py = args[0].py();
    let numpy_name = name.trim_end_matches('_'); // `where_` is numpy's `where`
    let args = PyTuple::new(py, args)?;
    Ok(Some(py.import("numpy")?.getattr(numpy_name)?.call(args, kwargs)?))
}

/// A ufunc's `order=`: the memory layout numpy gives its result, which a lazy array has not, so
/// any of numpy's values is accepted and changes nothing.
fn check_ufunc_order(name: &str, order: &str) -> Result<()> {
    match order {
        "C" | "F" | "A" | "K" => Ok(()),
        other => Err(value_error(format!("{name}: order must be one of 'C', 'F', 'A' or 'K', not {other:?}"))),
    }
}

/// [`check_ufunc_order`] for the ufuncs written in Python (`pytato_rs._ufunc_keywords`).
#[pyfunction]
fn _check_ufunc_order(name: &str, order: &str) -> Result<()> {
    check_ufunc_order(name, order)
}

/// numpy's memory `order=` of a function that makes a new array: `None`, or one of `order`'s
/// letters in either case (`zeros` allows "CF", `asarray` "CFAK"); an expression has no memory
/// layout, so a valid order changes nothing.
fn check_creation_order(name: &str, order: Option<&str>, allowed: &str) -> Result<()> {
    let Some(order) = order else { return Ok(()) };
    let letter = order.to_ascii_uppercase();
    if letter.len() == 1 && allowed.contains(letter.as_str()) {
        return Ok(());
    }
    if letter.len() == 1 && "CFAK".contains(letter.as_str()) {
        return Err(value_error(format!("{name}: only 'C' or 'F' order is permitted, not {order:?}")));
    }
    Err(value_error(format!("{name}: order must be one of 'C', 'F', 'A' or 'K', not {order:?}")))
}

/// The keywords of numpy's `zeros`, `ones`, `empty` and `full` that a lazy array has no use
/// for: `order` ('C' or 'F') and `device` are checked, `like` is not used.
fn check_creation_keywords(name: &str, order: Option<&str>, device: Option<&Bound<'_, PyAny>>) -> Result<()> {
    check_creation_order(name, order, "CF")?;
    check_device(name, device)
}

/// numpy's `device=`: `None` or `"cpu"`, where results are returned.
fn check_device(name: &str, device: Option<&Bound<'_, PyAny>>) -> Result<()> {
    match device.filter(|d| !d.is_none()) {
        Some(d) if d.extract::<String>().ok().as_deref() != Some("cpu") => {
            Err(value_error(format!("{name}: device={d} is not supported; results are host arrays (\"cpu\")")))
        }
        _ => Ok(()),
    }
}

/// A ufunc's `dtype=` and `casting=` (numpy's defaults: `None`, `"same_kind"`).
struct UfuncKeywords<'a, 'py> {
    dtype: Option<&'a Bound<'py, PyAny>>,
    casting: &'a str,
}

impl<'py> UfuncKeywords<'_, 'py> {
    /// Whether both are numpy's defaults, so that the operation's own promotion decides.
    fn are_defaults(&self) -> bool {
        self.dtype.is_none_or(|d| d.is_none()) && self.casting == "same_kind"
    }

    /// As a dict for numpy.
    fn to_dict(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let kwargs = PyDict::new(py);
        if let Some(dtype) = self.dtype {
            kwargs.set_item("dtype", dtype)?;
        }
        kwargs.set_item("casting", self.casting)?;
        Ok(kwargs)
    }
}

/// numpy's ufunc `name` of `args` with `dtype=`/`casting=`: `f` of the operands cast to the loop
/// [`ufunc_loop`] picks, its result cast to the loop's output.
fn with_ufunc_keywords<'py>(
    name: &str,
    args: &[&Bound<'py, PyAny>],
    keywords: &UfuncKeywords<'_, 'py>,
    f: impl FnOnce(Vec<Array>) -> pytato::Result<Array>,
) -> Result<Bound<'py, PyAny>> {
    let py = args[0].py();
    if let Some(value) = numpy_of_numbers_with(name, args, Some(&keywords.to_dict(py)?))? {
        return Ok(value);
    }
    let (operands, out) = ufunc_loop(name, args, keywords)?;
    expression(py, f(operands).and_then(|r| if r.dtype() == out { Ok(r) } else { pt::astype(&r, out) }))
}

/// The loop numpy's own type resolution picks for ufunc `name` of `args` with the output dtype
/// `dtype` (`ufunc.resolve_dtypes`, which refuses the casts `casting` forbids): the operands cast
/// to its inputs (a Python number converted as numpy converts it, refusing an integer out of
/// range), and its output dtype.
fn ufunc_loop<'py>(
    name: &str,
    args: &[&Bound<'py, PyAny>],
    keywords: &UfuncKeywords<'_, 'py>,
) -> Result<(Vec<Array>, DType)> {
    let (operands, outputs) = ufunc_loop_with_outputs(name, args, keywords, 1)?;
    Ok((operands, outputs[0]))
}

/// [`ufunc_loop`] of a ufunc with `outputs` outputs (`modf`, `frexp`): `dtype=` is the dtype of
/// every output, as numpy reads it, and the loop's output dtypes come back in order.
fn ufunc_loop_with_outputs<'py>(
    name: &str,
    args: &[&Bound<'py, PyAny>],
    keywords: &UfuncKeywords<'_, 'py>,
    outputs: usize,
) -> Result<(Vec<Array>, Vec<DType>)> {
    let py = args[0].py();
    let numpy = py.import("numpy")?;
    let ufunc = numpy.getattr(name)?;
    if !ufunc.is_instance(&numpy.getattr("ufunc")?)? {
        return Err(type_error(format!("{name}() takes no dtype= or casting= (it is no numpy ufunc)")));
    }
    let mut given = Vec::with_capacity(args.len() + 1);
    for arg in args {
        given.push(match arg.cast::<PyArrayExpr>() {
            Ok(array) => crate::data::numpy_dtype(py, array.get().array.dtype()),
            // A Python number stays weak (its type), as numpy resolves it.
            Err(_) if is_number(arg)? && !is_numpy_scalar(arg)? => arg.get_type().into_any(),
            Err(_) => numpy.call_method1("asarray", (arg,))?.getattr("dtype")?,
        });
    }
    given.extend((0..outputs).map(|_| py.None().into_bound(py)));
    let kwargs = PyDict::new(py);
    if let Some(dtype) = keywords.dtype.filter(|d| !d.is_none()) {
        let mut signature = vec![py.None().into_bound(py); args.len()];
        let dtype = numpy.call_method1("dtype", (dtype,))?;
        signature.extend((0..outputs).map(|_| dtype.clone()));
        kwargs.set_item("signature", PyTuple::new(py, signature)?)?;
    }
    kwargs.set_item("casting", keywords.casting)?;
    let resolved = ufunc.call_method("resolve_dtypes", (PyTuple::new(py, given)?,), Some(&kwargs))?;
    let loop_dtypes: Vec<DType> = resolved.try_iter()?.map(|d| dtype_from_py(&d?)).collect::<Result<Vec<_>>>()?;
    let mut operands = Vec::with_capacity(args.len());
    for (arg, &dtype) in args.iter().zip(&loop_dtypes) {
        let array = match arg.cast::<PyArrayExpr>() {
            Ok(array) => array.get().array.clone(),
            Err(_) => array_from_py(&crate::data::numpy_dtype(py, dtype).call_method1("type", (arg,))?)?,
        };
        operands.push(lib(pt::astype(&array, dtype))?);
    }
    Ok((operands, loop_dtypes[args.len()..].to_vec()))
}

/// [`ufunc_loop`] for the elementwise functions the package writes in Python: the operands cast
/// to the loop numpy picks, and its output dtype.
#[pyfunction]
#[pyo3(signature = (name, args, dtype = None, casting = "same_kind"))]
fn _ufunc_operands<'py>(
    name: &str,
    args: &Bound<'py, PyTuple>,
    dtype: Option<&Bound<'py, PyAny>>,
    casting: &str,
) -> Result<(Vec<Py<PyArrayExpr>>, Bound<'py, PyAny>)> {
    let py = args.py();
    let args: Vec<Bound<'py, PyAny>> = args.iter().collect();
    let refs: Vec<&Bound<'py, PyAny>> = args.iter().collect();
    let (operands, out) = ufunc_loop(name, &refs, &UfuncKeywords { dtype, casting })?;
    let operands = operands.into_iter().map(|a| wrap(Ok(a))).collect::<Result<Vec<_>>>()?;
    Ok((operands, crate::data::numpy_dtype(py, out)))
}

fn expression<'py>(py: Python<'py>, array: pytato::Result<Array>) -> Result<Bound<'py, PyAny>> {
    Ok(wrap(array)?.into_bound(py).into_any())
}

macro_rules! unary_functions {
    ($($name:ident => $f:path;)*) => {
        $(
            #[pyfunction]
            fn $name(x: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
                wrap($f(&array_from_py(x)?))
            }
        )*
        fn add_unary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
}

unary_functions! {
    matrix_transpose => pt::matrix_transpose;
    unique_values => pt::unique_values; flatnonzero => pt::flatnonzero; argwhere => pt::argwhere;
}

/// numpy's `ravel(a, order="C")`.
#[pyfunction]
#[pyo3(signature = (a, order = "C"))]
fn ravel(a: &Bound<'_, PyAny>, order: &str) -> Result<Py<PyArrayExpr>> {
    wrap(pt::reshape(&array_from_py(a)?, [-1], crate::array::order_from_str(order)?))
}

/// Elementwise functions of one argument: of a number alone, numpy's (see [`numpy_of_numbers`]);
/// numpy's ufunc keywords `dtype=` and `casting=` (see [`with_ufunc_keywords`]) and `order=`
/// (see [`check_ufunc_order`]).
macro_rules! elementwise_unary_functions {
    ($($name:ident => $f:path;)*) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (x, /, *, dtype = None, casting = "same_kind", order = "K"))]
            fn $name<'py>(
                x: &Bound<'py, PyAny>,
                dtype: Option<&Bound<'py, PyAny>>,
                casting: &str,
                order: &str,
            ) -> Result<Bound<'py, PyAny>> {
                check_ufunc_order(stringify!($name), order)?;
                let keywords = UfuncKeywords { dtype, casting };
                if !keywords.are_defaults() {
                    return with_ufunc_keywords(stringify!($name), &[x], &keywords, |operands| $f(&operands[0]));
                }
                if let Some(value) = numpy_of_numbers(stringify!($name), &[x])? {
                    return Ok(value);
                }
                expression(x.py(), $f(&array_from_py(x)?))
            }
        )*
        fn add_elementwise_unary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
}

elementwise_unary_functions! {
    abs => pt::abs; negative => pt::negative; positive => pt::positive; invert => pt::invert;
    logical_not => pt::logical_not; sqrt => pt::sqrt; exp => pt::exp; expm1 => pt::expm1;
    log => pt::log; log10 => pt::log10; log2 => pt::log2; log1p => pt::log1p;
    sin => pt::sin; cos => pt::cos; tan => pt::tan; arcsin => pt::arcsin; arccos => pt::arccos;
    arctan => pt::arctan; sinh => pt::sinh; cosh => pt::cosh; tanh => pt::tanh;
    arcsinh => pt::arcsinh; arccosh => pt::arccosh; arctanh => pt::arctanh;
    floor => pt::floor; ceil => pt::ceil; trunc => pt::trunc; rint => pt::rint; sign => pt::sign;
    signbit => pt::signbit; isnan => pt::isnan; isinf => pt::isinf; isfinite => pt::isfinite;
    square => pt::square; reciprocal => pt::reciprocal; conj => pt::conj; real => pt::real;
    imag => pt::imag; spacing => pt::spacing; cbrt => pt::cbrt; exp2 => pt::exp2;
}

/// Elementwise functions of two arguments: of numbers alone, numpy's (see [`numpy_of_numbers`]).
macro_rules! binary_functions {
    ($($name:ident => $f:path;)*) => {
        $(
            #[pyfunction]
            #[pyo3(signature = (x1, x2, /, *, dtype = None, casting = "same_kind", order = "K"))]
            fn $name<'py>(
                x1: &Bound<'py, PyAny>,
                x2: &Bound<'py, PyAny>,
                dtype: Option<&Bound<'py, PyAny>>,
                casting: &str,
                order: &str,
            ) -> Result<Bound<'py, PyAny>> {
                check_ufunc_order(stringify!($name), order)?;
                let keywords = UfuncKeywords { dtype, casting };
                if !keywords.are_defaults() {
                    return with_ufunc_keywords(stringify!($name), &[x1, x2], &keywords, |operands| {
                        let [x1, x2] = <[Array; 2]>::try_from(operands).expect("two operands");
                        $f(x1, x2)
                    });
                }
                if let Some(value) = numpy_of_numbers(stringify!($name), &[x1, x2])? {
                    return Ok(value);
                }
                expression(x1.py(), $f(operand_from_py(x1)?, operand_from_py(x2)?))
            }
        )*
        fn add_binary(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
}

binary_functions! {
    add => pt::add; subtract => pt::subtract; multiply => pt::multiply; divide => pt::divide;
    floor_divide => pt::floor_divide; remainder => pt::remainder; power => pt::power;
    bitwise_and => pt::bitwise_and; bitwise_or => pt::bitwise_or; bitwise_xor => pt::bitwise_xor;
    left_shift => pt::left_shift; right_shift => pt::right_shift;
    logical_and => pt::logical_and; logical_or => pt::logical_or; logical_xor => pt::logical_xor;
    maximum => pt::maximum; minimum => pt::minimum;
    equal => pt::equal; not_equal => pt::not_equal; less => pt::less; less_equal => pt::less_equal;
    greater => pt::greater; greater_equal => pt::greater_equal;
    arctan2 => pt::arctan2; hypot => pt::hypot; logaddexp => pt::logaddexp;
    copysign => pt::copysign; nextafter => pt::nextafter; fmax => pt::fmax; fmin => pt::fmin;
    fmod => pt::fmod; logaddexp2 => pt::logaddexp2; gcd => pt::gcd; lcm => pt::lcm; ldexp => pt::ldexp;
}

/// `x` where `condition`, else `y` (numpy's `where` with three arguments); with the condition
/// alone, its `nonzero`, as numpy's.
#[pyfunction(name = "where")]
#[pyo3(signature = (condition, x = None, y = None))]
fn where_<'py>(
    condition: &Bound<'py, PyAny>,
    x: Option<&Bound<'py, PyAny>>,
    y: Option<&Bound<'py, PyAny>>,
) -> Result<Bound<'py, PyAny>> {
    let (x, y) = match (x, y) {
        (Some(x), Some(y)) => (x, y),
        (None, None) => return Ok(nonzero(condition.py(), condition)?.into_any()),
        _ => return Err(value_error("where: either both or neither of x and y should be given")),
    };
    if let Some(value) = numpy_of_numbers("where_", &[condition, x, y])? {
        return Ok(value);
    }
    expression(x.py(), pt::where_(operand_from_py(condition)?, operand_from_py(x)?, operand_from_py(y)?))
}

#[pyfunction]
#[pyo3(signature = (x, dtype, /, *, copy = true))]
fn astype(x: &Bound<'_, PyAny>, dtype: &Bound<'_, PyAny>, copy: bool) -> Result<Py<PyArrayExpr>> {
    let _ = copy; // expressions are immutable: a copy and a view are the same
    wrap(pt::astype(&array_from_py(x)?, dtype_from_py(dtype)?))
}

/// numpy's `round(a, decimals=0, out=None)`: `decimals` is a C int there, so one beyond it is
/// an OverflowError (pyo3's, as numpy's), not the NaNs a huge power of ten would give.
#[pyfunction]
#[pyo3(signature = (a, decimals = 0, out = None))]
fn round(a: &Bound<'_, PyAny>, decimals: i32, out: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    no_out("round", out)?;
    let decimals = i64::from(decimals);
    let a = array_from_py(a)?;
    wrap(if decimals == 0 { pt::round(&a) } else { pt::round_decimals(&a, decimals) })
}

/// numpy's `clip(a, a_min, a_max)`; the Array API's `min=`/`max=` keywords too.
#[pyfunction]
#[pyo3(signature = (a, a_min = None, a_max = None, *, min = None, max = None))]
fn clip(
    a: &Bound<'_, PyAny>,
    a_min: Option<&Bound<'_, PyAny>>,
    a_max: Option<&Bound<'_, PyAny>>,
    min: Option<&Bound<'_, PyAny>>,
    max: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let bound = |b: Option<&Bound<'_, PyAny>>| b.map(operand_from_py).transpose();
    wrap(pt::clip(&array_from_py(a)?, bound(a_min.or(min))?, bound(a_max.or(max))?))
}

// ---- reductions ---------------------------------------------------------------------------

/// The reductions that share numpy's `axis`/`dtype`/`keepdims`/`initial` arguments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Reduction {
    Sum,
    Prod,
    Max,
    Min,
    Mean,
    All,
    Any,
}

/// One reduction with numpy's arguments (methods and functions share it).
pub(crate) fn reduce(
    kind: Reduction,
    a: &Array,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    initial: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    reduce_where(kind, a, axis, dtype, keepdims, initial, None)
}

/// [`reduce`] with numpy's `where=`: the elements where the mask (broadcast to `a`'s shape) is
/// false count as the reduction's identity (`initial` for max and min, which have none, as in
/// numpy), and a mean divides by the number of elements where it is true.
pub(crate) fn reduce_where(
    kind: Reduction,
    a: &Array,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    initial: Option<&Bound<'_, PyAny>>,
    mask: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    // numpy's mean counts the elements of the axes it names, which refuses the 0-d rule.
    let axes = if matches!(kind, Reduction::Mean) { axes_from_py(axis)? } else { axes_of(a, axis)? };
    let mut options = ReduceOptions::axes(axes.clone()).keepdims(keepdims);
    if let Some(dtype) = optional_dtype(dtype)? {
        options = options.dtype(dtype);
    }
    if let Some(initial) = initial {
        options = options.initial(scalar_from_py(initial, "initial")?);
    }
    // Python's `True` is numpy's default, no mask (numpy's `np.True_` is a mask, which max and
    // min refuse without `initial`).
    let no_mask = |m: &&Bound<'_, PyAny>| m.is_none() || m.is(pyo3::types::PyBool::new(m.py(), true));
    if let Some(mask) = mask.filter(|m| !no_mask(m)) {
        let name = format!("{kind:?}").to_lowercase();
        let fill: pt::Operand = match (kind, &options.initial) {
            (Reduction::Sum | Reduction::Mean, _) => pt::Operand::from(0),
            (Reduction::Prod, _) => pt::Operand::from(1),
            (Reduction::All, _) => pt::Operand::from(true),
            (Reduction::Any, _) => pt::Operand::from(false),
            (Reduction::Max | Reduction::Min, Some(initial)) => pt::Operand::Scalar(*initial),
            (Reduction::Max | Reduction::Min, None) => {
                return Err(value_error(format!(
                    "{name}: a reduction without an identity needs `initial` to use a where mask (numpy's rule)"
                )));
            }
        };
        let mask = array_from_py(mask)?;
        if mask.dtype() != pytato::DType::Bool {
            // numpy casts `where` to bool under the 'safe' rule, which only bools pass.
            return Err(type_error(format!(
                "{name}: cannot cast the where mask from dtype('{}') to dtype('bool') according to the rule 'safe'",
                mask.dtype()
            )));
        }
        let mask = lib(pt::broadcast_to(&mask, a.shape().clone()))?;
        let mut masked = lib(pt::where_(pt::Operand::from(&mask), a, fill))?;
        if matches!(kind, Reduction::Max | Reduction::Min) {
            // `initial` is taken in the array's dtype, as numpy takes it.
            masked = lib(pt::astype(&masked, a.dtype()))?;
        }
        if kind == Reduction::Mean {
            // numpy: the masked sum over the count of true elements, in the sum's dtype.
            let sum_dtype = options.dtype.unwrap_or(match a.dtype() {
                pytato::DType::F16 => pytato::DType::F32,
                d if d.is_inexact() => d,
                _ => pytato::DType::F64,
            });
            let result_dtype =
                if a.dtype() == pytato::DType::F16 && options.dtype.is_none() { a.dtype() } else { sum_dtype };
            let total = lib(pt::sum(&masked, ReduceOptions { dtype: Some(sum_dtype), ..options.clone() }))?;
            let count = lib(pt::count_nonzero(&mask, ReduceOptions::axes(axes).keepdims(keepdims)))?;
            return wrap(pt::divide(&total, &count).and_then(|mean| pt::astype(&mean, result_dtype)));
        }
        return reduce_where(kind, &masked, axis, dtype, keepdims, initial, None);
    }
    wrap(match kind {
        Reduction::Sum => pt::sum(a, options),
        Reduction::Prod => pt::prod(a, options),
        Reduction::Max => pt::max(a, options),
        Reduction::Min => pt::min(a, options),
        Reduction::Mean => pt::mean(a, options),
        Reduction::All => pt::all(a, options),
        Reduction::Any => pt::any(a, options),
    })
}

/// [`no_out`] for the functions written in Python.
#[pyfunction]
#[pyo3(signature = (name, out = None))]
fn _no_out(name: &str, out: Option<&Bound<'_, PyAny>>) -> Result<()> {
    no_out(name, out)
}

/// numpy's `out=`, which a lazy expression cannot write: `None`, or a `TypeError`.
pub(crate) fn no_out(name: &str, out: Option<&Bound<'_, PyAny>>) -> Result<()> {
    match out {
        Some(out) if !out.is_none() => {
            Err(type_error(format!("{name}: out= cannot be written by a lazy expression; use the result")))
        }
        _ => Ok(()),
    }
}

/// The reductions with numpy's positional order, `out` included: `sum(a, axis, dtype, out,
/// keepdims, initial, where)` where numpy has a `dtype`, `max(a, axis, out, keepdims, initial,
/// where)` where it has none (the library's `dtype` then comes by keyword only).
macro_rules! reductions {
    ($($name:ident => $kind:ident, $signature:tt;)*) => {
        $(reductions!(@one $name, $kind, $signature);)*
        fn add_reductions(m: &Bound<'_, PyModule>) -> PyResult<()> {
            $(m.add_function(wrap_pyfunction!($name, m)?)?;)*
            Ok(())
        }
    };
    (@one $name:ident, $kind:ident, with_dtype) => {
        #[pyfunction]
        #[pyo3(signature = (a, axis = None, dtype = None, out = None, keepdims = false, initial = None, r#where = None))]
        #[allow(clippy::too_many_arguments)]
        fn $name(
            a: &Bound<'_, PyAny>,
            axis: Option<&Bound<'_, PyAny>>,
            dtype: Option<&Bound<'_, PyAny>>,
            out: Option<&Bound<'_, PyAny>>,
            keepdims: bool,
            initial: Option<&Bound<'_, PyAny>>,
            r#where: Option<&Bound<'_, PyAny>>,
        ) -> Result<Py<PyArrayExpr>> {
            no_out(stringify!($name), out)?;
            reduce_where(Reduction::$kind, &array_from_py(a)?, axis, dtype, keepdims, initial, r#where)
        }
    };
    (@one $name:ident, $kind:ident, without_dtype) => {
        #[pyfunction]
        #[pyo3(signature = (a, axis = None, out = None, keepdims = false, initial = None, r#where = None, *, dtype = None))]
        #[allow(clippy::too_many_arguments)]
        fn $name(
            a: &Bound<'_, PyAny>,
            axis: Option<&Bound<'_, PyAny>>,
            out: Option<&Bound<'_, PyAny>>,
            keepdims: bool,
            initial: Option<&Bound<'_, PyAny>>,
            r#where: Option<&Bound<'_, PyAny>>,
            dtype: Option<&Bound<'_, PyAny>>,
        ) -> Result<Py<PyArrayExpr>> {
            no_out(stringify!($name), out)?;
            reduce_where(Reduction::$kind, &array_from_py(a)?, axis, dtype, keepdims, initial, r#where)
        }
    };
}

reductions! {
    sum => Sum, with_dtype; prod => Prod, with_dtype; mean => Mean, with_dtype;
    amax => Max, without_dtype; amin => Min, without_dtype; max => Max, without_dtype; min => Min, without_dtype;
    all => All, without_dtype; any => Any, without_dtype;
}

#[allow(clippy::too_many_arguments)]
fn moment(
    a: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    ddof: f64,
    keepdims: bool,
    correction: Option<f64>,
    mean: Option<&Bound<'_, PyAny>>,
    root: bool,
) -> Result<Py<PyArrayExpr>> {
    let mut options = ReduceOptions::axes(axes_from_py(axis)?).keepdims(keepdims);
    if let Some(dtype) = optional_dtype(dtype)? {
        options = options.dtype(dtype);
    }
    let a = array_from_py(a)?;
    let correction = correction.unwrap_or(ddof);
    wrap(match (mean.filter(|m| !m.is_none()).map(array_from_py).transpose()?, root) {
        (Some(m), true) => pt::std_about(&a, &m, options, correction),
        (Some(m), false) => pt::var_about(&a, &m, options, correction),
        (None, true) => pt::std(&a, options, correction),
        (None, false) => pt::var(&a, options, correction),
    })
}

/// Variance: numpy's `ddof` (or the Array API's `correction`) and `mean` (the mean, kept dims,
/// already computed).
#[pyfunction]
#[pyo3(signature = (a, axis = None, dtype = None, out = None, ddof = 0.0, keepdims = false, *, correction = None, mean = None))]
#[allow(clippy::too_many_arguments)]
fn var(
    a: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    ddof: f64,
    keepdims: bool,
    correction: Option<f64>,
    mean: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    no_out("var", out)?;
    moment(a, axis, dtype, ddof, keepdims, correction, mean, false)
}

/// Standard deviation: numpy's `ddof` (or the Array API's `correction`) and `mean`, as `var`.
#[pyfunction(name = "std")]
#[pyo3(signature = (a, axis = None, dtype = None, out = None, ddof = 0.0, keepdims = false, *, correction = None, mean = None))]
#[allow(clippy::too_many_arguments)]
fn std_deviation(
    a: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    out: Option<&Bound<'_, PyAny>>,
    ddof: f64,
    keepdims: bool,
    correction: Option<f64>,
    mean: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    no_out("std", out)?;
    moment(a, axis, dtype, ddof, keepdims, correction, mean, true)
}

/// numpy's `argmax`, `argmin`, `nanargmax` and `nanargmin` (a slice of NaNs only fails the
/// program when it runs, numpy's `ValueError`), with numpy's positional `out`.
macro_rules! index_reductions {
    ($($name:ident),*) => {$(
        #[doc = concat!("numpy's `", stringify!($name), "`.")]
        #[pyfunction]
        #[pyo3(signature = (a, axis = None, out = None, *, keepdims = false))]
        fn $name(
            a: &Bound<'_, PyAny>,
            axis: Option<i64>,
            out: Option<&Bound<'_, PyAny>>,
            keepdims: bool,
        ) -> Result<Py<PyArrayExpr>> {
            no_out(stringify!($name), out)?;
            let a = array_from_py(a)?;
            wrap(pt::$name(&a, axis_of(&a, axis), keepdims))
        }
    )*};
}

index_reductions!(argmax, argmin, nanargmax, nanargmin);

/// `a` (int64) where it is not negative; a negative element fails the program when it runs
/// with numpy's `ValueError` of `check`: `"choice"` (`choose`), `"coordinate"`
/// (`ravel_multi_index`), `"flat_index"` (`unravel_index`), `"bincount_negative"` or
/// `"bincount_length"` (`bincount`). For the functions written in Python that numpy makes refuse
/// values.
#[pyfunction]
fn _require_non_negative(a: &Bound<'_, PyAny>, check: &str) -> Result<Py<PyArrayExpr>> {
    let check = match check {
        "choice" => pytato::ValueCheck::ChoiceOutOfRange,
        "coordinate" => pytato::ValueCheck::CoordinateOutOfRange,
        "flat_index" => pytato::ValueCheck::FlatIndexOutOfRange,
        "bincount_negative" => pytato::ValueCheck::BincountNegative,
        "bincount_length" => pytato::ValueCheck::BincountBeyondMinlength,
        other => return Err(value_error(format!("no value check is named {other:?}"))),
    };
    wrap(pt::require_non_negative(&array_from_py(a)?, check))
}

#[pyfunction]
#[pyo3(signature = (a, axis = None, *, keepdims = false))]
fn count_nonzero(a: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> Result<Py<PyArrayExpr>> {
    let a = array_from_py(a)?;
    wrap(pt::count_nonzero(&a, pt::ReduceOptions::axes(axes_of(&a, axis)?).keepdims(keepdims)))
}

// ---- scans, sorting, searching -------------------------------------------------------------

/// numpy's `cumsum(a, axis=None, dtype=None)`: flattened without an axis; `dtype` accumulates in
/// that dtype (the Array API's `cumulative_sum` of it).
#[pyfunction]
#[pyo3(signature = (a, axis = None, dtype = None))]
fn cumsum(a: &Bound<'_, PyAny>, axis: Option<i64>, dtype: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    let a = array_from_py(a)?;
    let axis = axis_of(&a, axis);
    match optional_dtype(dtype)? {
        None => wrap(pt::cumsum(&a, axis)),
        Some(dtype) => wrap(numpy_scan_in(&a, axis, dtype, pt::cumulative_sum)),
    }
}

/// numpy's `cumprod(a, axis=None, dtype=None)` (see [`cumsum`]).
#[pyfunction]
#[pyo3(signature = (a, axis = None, dtype = None))]
fn cumprod(a: &Bound<'_, PyAny>, axis: Option<i64>, dtype: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    let a = array_from_py(a)?;
    let axis = axis_of(&a, axis);
    match optional_dtype(dtype)? {
        None => wrap(pt::cumprod(&a, axis)),
        Some(dtype) => wrap(numpy_scan_in(&a, axis, dtype, pt::cumulative_prod)),
    }
}

/// A numpy scan (flattened without an axis) accumulating in `dtype`.
fn numpy_scan_in(
    a: &Array,
    axis: Option<i64>,
    dtype: pytato::DType,
    scan: fn(&Array, ScanOptions) -> pytato::Result<Array>,
) -> pytato::Result<Array> {
    let (a, axis) = match axis {
        Some(axis) => (a.clone(), axis),
        None => (pt::ravel(a)?, 0),
    };
    scan(&a, ScanOptions { axis: Some(axis), dtype: Some(dtype), include_initial: false })
}

/// The Array API's scan arguments; a missing axis of an array of more than one dimension is
/// the library's error.
fn scan_options(axis: Option<i64>, dtype: Option<&Bound<'_, PyAny>>, include_initial: bool) -> Result<ScanOptions> {
    Ok(ScanOptions { axis, dtype: optional_dtype(dtype)?, include_initial })
}

/// A scan's operand as numpy takes it: a 0-d array scans as an array of one element.
fn scanned(x: &Bound<'_, PyAny>) -> Result<Array> {
    let x = array_from_py(x)?;
    Ok(if x.ndim() == 0 { lib(pt::reshape(&x, [1], Order::C))? } else { x })
}

/// The Array API's `cumulative_sum`.
#[pyfunction]
#[pyo3(signature = (x, axis = None, dtype = None, include_initial = false))]
fn cumulative_sum(
    x: &Bound<'_, PyAny>,
    axis: Option<i64>,
    dtype: Option<&Bound<'_, PyAny>>,
    include_initial: bool,
) -> Result<Py<PyArrayExpr>> {
    wrap(pt::cumulative_sum(&scanned(x)?, scan_options(axis, dtype, include_initial)?))
}

/// The Array API's `cumulative_prod`.
#[pyfunction]
#[pyo3(signature = (x, axis = None, dtype = None, include_initial = false))]
fn cumulative_prod(
    x: &Bound<'_, PyAny>,
    axis: Option<i64>,
    dtype: Option<&Bound<'_, PyAny>>,
    include_initial: bool,
) -> Result<Py<PyArrayExpr>> {
    wrap(pt::cumulative_prod(&scanned(x)?, scan_options(axis, dtype, include_initial)?))
}

/// `sort` or `argsort` (`op`, `f`) with numpy's arguments: any `kind=` numpy names (the library's
/// sorts are stable, which each kind allows, as `stable=` asks), no `order=` (fields of structured
/// arrays, which the library has not).
#[allow(clippy::too_many_arguments)]
fn numpy_sort(
    op: &str,
    f: fn(&Array, SortOptions) -> pytato::Result<Array>,
    a: &Array,
    axis: Option<i64>,
    kind: Option<&str>,
    order: Option<&Bound<'_, PyAny>>,
    descending: bool,
    stable: bool,
) -> Result<Py<PyArrayExpr>> {
    let _ = stable;
    if let Some(kind) = kind
        && !["quicksort", "mergesort", "heapsort", "stable"].contains(&kind)
    {
        return Err(value_error(format!(
            "{op}: kind must be one of quicksort, mergesort, heapsort, stable, not {kind:?}"
        )));
    }
    if order.is_some_and(|o| !o.is_none()) {
        return Err(value_error(format!("{op}: order= sorts structured arrays by fields, which arrays here have not")));
    }
    wrap(f(a, sort_options(axis, descending)))
}

fn sort_options(axis: Option<i64>, descending: bool) -> SortOptions {
    match axis {
        Some(axis) => SortOptions::axis(axis),
        None => SortOptions::flattened(),
    }
    .descending(descending)
}

/// A stable sort (NaN last), along `axis` or flattened (`axis=None`).
#[pyfunction]
#[pyo3(signature = (a, axis = Some(-1), kind = None, order = None, *, descending = false, stable = true))]
fn sort(
    a: &Bound<'_, PyAny>,
    axis: Option<i64>,
    kind: Option<&str>,
    order: Option<&Bound<'_, PyAny>>,
    descending: bool,
    stable: bool,
) -> Result<Py<PyArrayExpr>> {
    numpy_sort("sort", pt::sort, &array_from_py(a)?, axis, kind, order, descending, stable)
}

/// The indices that sort `a` (stable).
#[pyfunction]
#[pyo3(signature = (a, axis = Some(-1), kind = None, order = None, *, descending = false, stable = true))]
fn argsort(
    a: &Bound<'_, PyAny>,
    axis: Option<i64>,
    kind: Option<&str>,
    order: Option<&Bound<'_, PyAny>>,
    descending: bool,
    stable: bool,
) -> Result<Py<PyArrayExpr>> {
    let a = array_from_py(a)?;
    numpy_sort("argsort", pt::argsort, &a, axis_of(&a, axis), kind, order, descending, stable)
}

#[pyfunction]
#[pyo3(signature = (a, v, side = "left", sorter = None))]
fn searchsorted(
    a: &Bound<'_, PyAny>,
    v: &Bound<'_, PyAny>,
    side: &str,
    sorter: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let side = crate::graph::from_name("side", crate::graph::SIDES, side)?;
    let sorter = sorter.map(array_from_py).transpose()?;
    wrap(pt::searchsorted(&array_from_py(a)?, &array_from_py(v)?, side, sorter.as_ref()))
}

fn tuple_of<'py>(py: Python<'py>, arrays: Vec<Array>) -> Result<Bound<'py, PyTuple>> {
    PyTuple::new(py, arrays.iter().map(|a| crate::graph::node_object(py, a)).collect::<PyResult<Vec<_>>>()?)
}

/// The indices of the non-zero elements, one array per axis (lengths decided by the data).
#[pyfunction]
fn nonzero<'py>(py: Python<'py>, a: &Bound<'py, PyAny>) -> Result<Bound<'py, PyTuple>> {
    tuple_of(py, lib(pt::nonzero(&array_from_py(a)?))?)
}

/// The complex array of real parts `re` and imaginary parts `im`, built exactly (signs of zero
/// and infinities kept, as `re + im * 1j` does not).
#[pyfunction]
fn _complex_from_parts(re: &Bound<'_, PyAny>, im: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::complex_from_parts(&array_from_py(re)?, &array_from_py(im)?))
}

/// numpy's `modf`: `(fractional parts, integral parts)`, both with the argument's sign; with
/// numpy's ufunc keywords (see [`two_output_ufunc`]).
#[pyfunction]
#[pyo3(signature = (x, /, *, dtype = None, casting = "same_kind", order = "K"))]
fn modf<'py>(
    x: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    casting: &str,
    order: &str,
) -> Result<Bound<'py, PyTuple>> {
    two_output_ufunc("modf", x, &UfuncKeywords { dtype, casting }, order, pt::modf)
}

/// numpy's `frexp`: `(mantissas, exponents)`, the exponents as `int32`; with numpy's ufunc
/// keywords (see [`two_output_ufunc`]).
#[pyfunction]
#[pyo3(signature = (x, /, *, dtype = None, casting = "same_kind", order = "K"))]
fn frexp<'py>(
    x: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    casting: &str,
    order: &str,
) -> Result<Bound<'py, PyTuple>> {
    two_output_ufunc("frexp", x, &UfuncKeywords { dtype, casting }, order, pt::frexp)
}

/// A ufunc of one operand and two results, `f`, with numpy's keywords: `order=` checked (see
/// [`check_ufunc_order`]); `dtype=` and `casting=` pick numpy's loop (`dtype=` is the dtype of
/// both results, so `frexp` refuses any but its own), whose input the operand is cast to and
/// whose outputs the results are cast to. Of a number with keywords, numpy's own results.
fn two_output_ufunc<'py>(
    name: &str,
    x: &Bound<'py, PyAny>,
    keywords: &UfuncKeywords<'_, 'py>,
    order: &str,
    f: impl FnOnce(&Array) -> pytato::Result<(Array, Array)>,
) -> Result<Bound<'py, PyTuple>> {
    let py = x.py();
    check_ufunc_order(name, order)?;
    if keywords.are_defaults() {
        let (first, second) = lib(f(&array_from_py(x)?))?;
        return tuple_of(py, vec![first, second]);
    }
    if let Some(values) = numpy_of_numbers_with(name, &[x], Some(&keywords.to_dict(py)?))? {
        return Ok(values.cast_into::<PyTuple>()?);
    }
    let (operands, outputs) = ufunc_loop_with_outputs(name, &[x], keywords, 2)?;
    let (first, second) = lib(f(&operands[0]))?;
    let cast =
        |result: Array, dtype: DType| if result.dtype() == dtype { Ok(result) } else { pt::astype(&result, dtype) };
    tuple_of(py, vec![lib(cast(first, outputs[0]))?, lib(cast(second, outputs[1]))?])
}

/// `(values, counts)`.
#[pyfunction]
fn unique_counts<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> Result<Bound<'py, PyTuple>> {
    let u = lib(pt::unique_counts(&array_from_py(x)?))?;
    tuple_of(py, vec![u.values, u.counts])
}

/// `(values, inverse_indices)`.
#[pyfunction]
fn unique_inverse<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> Result<Bound<'py, PyTuple>> {
    let u = lib(pt::unique_inverse(&array_from_py(x)?))?;
    tuple_of(py, vec![u.values, u.inverse_indices])
}

/// `(values, indices, inverse_indices, counts)`.
#[pyfunction]
fn unique_all<'py>(py: Python<'py>, x: &Bound<'py, PyAny>) -> Result<Bound<'py, PyTuple>> {
    let u = lib(pt::unique_all(&array_from_py(x)?))?;
    tuple_of(py, vec![u.values, u.indices, u.inverse_indices, u.counts])
}

/// numpy's `unique` of the flattened array: `(values, indices, inverse_indices, counts)`, NaNs
/// merged where `equal_nan` (the Python wrapper picks the parts asked for).
#[pyfunction]
fn _unique<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, equal_nan: bool) -> Result<Bound<'py, PyTuple>> {
    let u = lib(pt::unique(&array_from_py(x)?, equal_nan))?;
    tuple_of(py, vec![u.values, u.indices, u.inverse_indices, u.counts])
}

/// numpy's `unique(x)` without `return_*`, NaNs merged: its hash table's values.
#[pyfunction]
fn _unique_values_equal_nan(x: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::unique_values_equal_nan(&array_from_py(x)?))
}

/// The elements of `arr` where `condition` is nonzero, flattened (numpy `extract`).
#[pyfunction]
fn extract(condition: &Bound<'_, PyAny>, arr: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::extract(&array_from_py(condition)?, &array_from_py(arr)?))
}

/// The slices of `a` along `axis` where the 1-d `condition` is nonzero (numpy `compress`).
#[pyfunction]
#[pyo3(signature = (condition, a, axis = None))]
fn compress(condition: &Bound<'_, PyAny>, a: &Bound<'_, PyAny>, axis: Option<i64>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::compress(&array_from_py(condition)?, &array_from_py(a)?, axis))
}

/// The length of axis `axis` of `a` (its size for `None`, the flattened array's): `None` for an
/// axis out of range (the operation's own error to give), `Some(None)` for a symbolic length.
fn axis_length(a: &Array, axis: Option<i64>) -> Option<Option<i64>> {
    match axis {
        None => Some(a.shape().dims().iter().try_fold(1i64, |n, d| n.checked_mul(d.as_int()?))),
        Some(k) => {
            let k = usize::try_from(if k < 0 { k + a.ndim() as i64 } else { k }).ok()?;
            a.shape().dims().get(k).map(|d| d.as_int())
        }
    }
}

/// numpy's `take(a, indices, axis=None, mode="raise")`: `"wrap"` reads index `i` at `i mod n`,
/// `"clip"` at `i` clipped to `0..n` (negative indices read the first element), for an axis of
/// known length `n`.
/// `take`'s indices: numpy reads numbers and sequences of them (anything but arrays) as
/// `numpy.array(indices, dtype=intp)` does (`0.5` is `0`, `[1.5]` is `[1]`, `[]` is empty),
/// and arrays as index arrays (which must be integers).
fn take_indices_from_py(indices: &Bound<'_, PyAny>) -> Result<Array> {
    let is_array = indices.is_instance_of::<PyArrayExpr>()
        || indices.is_instance_of::<PyDim>()
        || indices.is_instance_of::<numpy::PyUntypedArray>();
    if !is_array {
        let numpy = indices.py().import("numpy")?;
        // Sequences of expressions (numpy reads them as objects) are index arrays below.
        let of_numbers = match numpy.call_method1("asarray", (indices,)) {
            Ok(plain) => plain.getattr("dtype")?.getattr("kind")?.extract::<String>()? != "O",
            Err(_) => false,
        };
        if of_numbers {
            let kwargs = PyDict::new(indices.py());
            kwargs.set_item("dtype", numpy.getattr("int64")?)?;
            return array_from_py(&numpy.call_method("array", (indices,), Some(&kwargs))?);
        }
    }
    index_array_from_py(indices)
}

#[pyfunction]
#[pyo3(signature = (a, indices, axis = None, out = None, mode = "raise"))]
fn take(
    a: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    axis: Option<i64>,
    out: Option<&Bound<'_, PyAny>>,
    mode: &str,
) -> Result<Py<PyArrayExpr>> {
    no_out("take", out)?;
    let (a, indices) = (array_from_py(a)?, take_indices_from_py(indices)?);
    let axis = axis_of(&a, axis);
    let length = |a: &Array| -> Result<i64> {
        axis_length(a, axis).flatten().filter(|&n| n > 0).ok_or_else(|| {
            value_error(format!("take: mode={mode:?} needs an axis of known, non-zero length (shape {})", a.shape()))
        })
    };
    let indices = match mode {
        "raise" => indices,
        "wrap" => lib(pt::remainder(&indices, length(&a)?))?,
        "clip" => lib(pt::clip(&indices, Some(0.into()), Some((length(&a)? - 1).into())))?,
        other => return Err(value_error(format!("take: mode must be \"raise\", \"wrap\" or \"clip\", not {other:?}"))),
    };
    wrap(pt::take(&a, &indices, axis))
}

/// numpy's `take_along_axis(arr, indices, axis=-1)`; `axis=None` reads the flattened array
/// through 1-d indices.
#[pyfunction]
#[pyo3(signature = (a, indices, axis = Some(-1)))]
fn take_along_axis(a: &Bound<'_, PyAny>, indices: &Bound<'_, PyAny>, axis: Option<i64>) -> Result<Py<PyArrayExpr>> {
    let (a, indices) = (array_from_py(a)?, array_from_py(indices)?);
    match axis {
        Some(axis) => wrap(pt::take_along_axis(&a, &indices, axis)),
        None if indices.ndim() != 1 => Err(value_error(format!(
            "take_along_axis: with axis=None the indices must have a single axis, not shape {}",
            indices.shape()
        ))),
        None => wrap(pt::take_along_axis(&lib(pt::ravel(&a))?, &indices, 0)),
    }
}

// ---- shapes -------------------------------------------------------------------------------

/// numpy's `reshape(a, /, shape, order="C", *, newshape=None, copy=None)`: `newshape` is numpy's
/// older name of `shape`; `copy` is accepted and has no effect (a lazy array is never a view).
#[pyfunction]
#[pyo3(signature = (a, /, shape = None, order = "C", *, newshape = None, copy = None))]
fn reshape(
    a: &Bound<'_, PyAny>,
    shape: Option<&Bound<'_, PyAny>>,
    order: &str,
    newshape: Option<&Bound<'_, PyAny>>,
    copy: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let _ = copy;
    let shape = match (shape, newshape) {
        (Some(shape), None) | (None, Some(shape)) => shape,
        (Some(_), Some(_)) => {
            return Err(type_error("reshape: shape and newshape (its older name) cannot both be given"));
        }
        (None, None) => return Err(type_error("reshape() missing 1 required argument: 'shape'")),
    };
    wrap(pt::reshape(&array_from_py(a)?, new_shape_from_py(shape)?, order_from_str(order)?))
}

#[pyfunction]
#[pyo3(signature = (a, axes = None))]
fn transpose(a: &Bound<'_, PyAny>, axes: Option<Vec<i64>>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::transpose(&array_from_py(a)?, axes.as_deref()))
}

/// numpy's `permute_dims(a, axes=None)`: `transpose`, the axes reversed without `axes`.
#[pyfunction]
#[pyo3(signature = (a, axes = None))]
fn permute_dims(a: &Bound<'_, PyAny>, axes: Option<Vec<i64>>) -> Result<Py<PyArrayExpr>> {
    match axes {
        Some(axes) => wrap(pt::permute_dims(&array_from_py(a)?, &axes)),
        None => wrap(pt::transpose(&array_from_py(a)?, None)),
    }
}

#[pyfunction]
fn swapaxes(a: &Bound<'_, PyAny>, axis1: i64, axis2: i64) -> Result<Py<PyArrayExpr>> {
    wrap(pt::swapaxes(&array_from_py(a)?, axis1, axis2))
}

#[pyfunction]
fn moveaxis(
    a: &Bound<'_, PyAny>,
    source: &Bound<'_, PyAny>,
    destination: &Bound<'_, PyAny>,
) -> Result<Py<PyArrayExpr>> {
    wrap(pt::moveaxis(&array_from_py(a)?, &ints_from_py(source)?, &ints_from_py(destination)?))
}

/// `roll(a, shift, axis=None)`; `shift` and `axis` may be tuples.
#[pyfunction]
#[pyo3(signature = (a, shift, axis = None))]
fn roll(a: &Bound<'_, PyAny>, shift: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    let a = array_from_py(a)?;
    match axis {
        // numpy rolls the flattened array by each shift in turn.
        None => {
            let mut rolled = a;
            for shift in ints_from_py(shift)? {
                rolled = lib(pt::roll(&rolled, shift, None))?;
            }
            wrap(Ok(rolled))
        }
        Some(axis) => {
            let (shifts, axes) = (ints_from_py(shift)?, ints_from_py(axis)?);
            if let ([shift], [axis]) = (shifts.as_slice(), axes.as_slice()) {
                wrap(pt::roll(&a, *shift, Some(*axis)))
            } else {
                wrap(pt::roll_axes(&a, &shifts, &axes))
            }
        }
    }
}

/// numpy's `stack(arrays, axis=0, *, dtype=None, casting="same_kind")`.
#[pyfunction]
#[pyo3(signature = (arrays, axis = 0, *, dtype = None, casting = "same_kind"))]
fn stack(
    arrays: &Bound<'_, PyAny>,
    axis: i64,
    dtype: Option<&Bound<'_, PyAny>>,
    casting: &str,
) -> Result<Py<PyArrayExpr>> {
    let arrays = cast_to_join(arrays, optional_dtype(dtype)?, casting)?;
    wrap(pt::stack(&arrays, axis))
}

/// numpy's `concatenate(arrays, axis=0, *, dtype=None, casting="same_kind")`; `axis=None` joins
/// the arrays flattened.
#[pyfunction]
#[pyo3(signature = (arrays, axis = Some(0), *, dtype = None, casting = "same_kind"))]
fn concatenate(
    arrays: &Bound<'_, PyAny>,
    axis: Option<i64>,
    dtype: Option<&Bound<'_, PyAny>>,
    casting: &str,
) -> Result<Py<PyArrayExpr>> {
    let arrays = cast_to_join(arrays, optional_dtype(dtype)?, casting)?;
    match axis {
        Some(axis) => wrap(pt::concatenate(&arrays, axis)),
        // numpy: the arrays flattened, then joined.
        None => {
            let flat = arrays.iter().map(pt::ravel).collect::<pytato::Result<Vec<_>>>();
            wrap(flat.and_then(|flat| pt::concatenate(&flat, 0)))
        }
    }
}

/// The arrays to join, each converted to `dtype` where one is given. As numpy joins them, each
/// must convert to the result's dtype (`dtype`, or the arrays' result type) under the `casting`
/// rule, which numpy's own `can_cast` decides (a bad rule is its `ValueError`).
fn cast_to_join(given: &Bound<'_, PyAny>, dtype: Option<DType>, casting: &str) -> Result<Vec<Array>> {
    let arrays = arrays_from_py(given)?;
    let Some(target) = dtype.or_else(|| pytato::dtype::result_type_many(arrays.iter().map(Array::dtype))) else {
        return Ok(arrays);
    };
    let py = given.py();
    let numpy = py.import("numpy")?;
    let target_py = crate::data::numpy_dtype(py, target);
    for a in &arrays {
        let from = crate::data::numpy_dtype(py, a.dtype());
        if !numpy.call_method1("can_cast", (&from, &target_py, casting))?.extract::<bool>()? {
            return Err(type_error(format!(
                "Cannot cast array data from {} to {} according to the rule '{casting}'",
                from.repr()?,
                target_py.repr()?
            )));
        }
    }
    match dtype {
        Some(dtype) => lib(arrays.iter().map(|a| pt::astype(a, dtype)).collect()),
        None => Ok(arrays),
    }
}

#[pyfunction]
fn broadcast_to(a: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::broadcast_to(&array_from_py(a)?, shape_from_py(shape)?))
}

#[pyfunction]
#[pyo3(signature = (*arrays))]
fn broadcast_arrays<'py>(py: Python<'py>, arrays: &Bound<'py, PyTuple>) -> Result<Bound<'py, PyTuple>> {
    tuple_of(py, lib(pt::broadcast_arrays(&arrays_from_py(arrays.as_any())?))?)
}

#[pyfunction]
#[pyo3(signature = (a, axis = None))]
fn squeeze(a: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    let a = array_from_py(a)?;
    wrap(pt::squeeze(&a, axes_of(&a, axis)?))
}

#[pyfunction]
fn expand_dims(a: &Bound<'_, PyAny>, axis: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::expand_dims(&array_from_py(a)?, axes_from_py(Some(axis))?))
}

#[pyfunction]
#[pyo3(signature = (a, axis = None))]
fn flip(a: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    let axes = axis.map(ints_from_py).transpose()?;
    wrap(pt::flip(&array_from_py(a)?, axes.as_deref()))
}

/// numpy's `repeat(a, repeats, axis=None)`; `repeats` a count, or a sequence of counts, one per
/// element along the axis (or one for all), known when the expression is built: the elements
/// are gathered by an index array (`numpy.repeat` of the positions), for an axis of known length.
#[pyfunction]
#[pyo3(signature = (a, repeats, axis = None))]
fn repeat(a: &Bound<'_, PyAny>, repeats: &Bound<'_, PyAny>, axis: Option<i64>) -> Result<Py<PyArrayExpr>> {
    let array = array_from_py(a)?;
    if let Ok(count) = repeats.extract::<i64>() {
        return wrap(pt::repeat(&array, count, axis));
    }
    if repeats.cast::<PyArrayExpr>().is_ok() {
        return Err(type_error(
            "repeat: counts given as an expression make a length the data decides; pass them as numbers",
        ));
    }
    // A numpy array of counts as the list of its numbers.
    let repeats = if repeats.hasattr("tolist")? { repeats.call_method0("tolist")? } else { repeats.clone() };
    let counts: Vec<i64> = match repeats.extract::<i64>() {
        Ok(count) => vec![count],
        Err(_) => crate::convert::ints_from_py(&repeats)?,
    };
    if let Some(&negative) = counts.iter().find(|&&c| c < 0) {
        return Err(value_error(format!("repeat: repeats may not contain negative values, got {negative}")));
    }
    let (array, axis) = match axis {
        // numpy repeats a 0-d array along an axis as the 1-d array of its element
        Some(axis) if array.ndim() > 0 => (array, axis),
        Some(axis) => (lib(pt::ravel(&array))?, axis),
        None => (lib(pt::ravel(&array))?, 0),
    };
    let length = axis_length(&array, Some(axis));
    let Some(Some(length)) = length else {
        // An axis out of range is `pt::repeat`'s error to give; a symbolic one cannot be gathered.
        if length.is_none() {
            return wrap(pt::repeat(&array, 1, Some(axis)));
        }
        return Err(value_error(format!(
            "repeat: counts per element need an axis of known length (shape {})",
            array.shape()
        )));
    };
    let counts = match counts.len() {
        1 => vec![counts[0]; usize::try_from(length).unwrap_or(0)],
        n if n as i64 == length => counts,
        n => {
            return Err(value_error(format!(
                "repeat: {n} counts for an axis of length {length} (shape {}): give one, or one per element",
                array.shape()
            )));
        }
    };
    let total = counts.iter().try_fold(0i64, |t, &c| t.checked_add(c)).ok_or_else(|| {
        crate::errors::Error(pytato::Error::Overflow { op: "repeat".into(), what: "the total count".into() })
    })?;
    // The index array is made now: memory that cannot be had is a MemoryError, not an abort.
    let mut positions: Vec<i64> = Vec::new();
    usize::try_from(total).ok().and_then(|n| positions.try_reserve_exact(n).ok()).ok_or_else(|| {
        crate::errors::Error(pytato::Error::OutOfMemory {
            op: "repeat".into(),
            bytes: (total as u64).saturating_mul(8),
            what: format!("the {total} positions of the repeated elements"),
        })
    })?;
    positions.extend(counts.iter().enumerate().flat_map(|(i, &c)| std::iter::repeat_n(i as i64, c as usize)));
    let index = lib(pt::data_wrapper(
        pytato::ArrayData::from(ndarray::ArrayD::from_shape_vec(vec![positions.len()], positions).expect("one axis")),
        None,
    ))?;
    wrap(pt::take(&array, &index, Some(axis)))
}

#[pyfunction]
fn tile(a: &Bound<'_, PyAny>, reps: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::tile(&array_from_py(a)?, &ints_from_py(reps)?))
}

#[pyfunction]
#[pyo3(signature = (a, n = 1, axis = -1, prepend = None, append = None))]
fn diff(
    a: &Bound<'_, PyAny>,
    n: i64,
    axis: i64,
    prepend: Option<&Bound<'_, PyAny>>,
    append: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let n = usize::try_from(n).map_err(|_| value_error(format!("order must be non-negative but got {n}")))?;
    let operand = |x: Option<&Bound<'_, PyAny>>| x.map(operand_from_py).transpose();
    wrap(pt::diff_with(&array_from_py(a)?, n, axis, operand(prepend)?, operand(append)?))
}

/// `split(a, sections_or_indices, axis=0)`: an int splits into equal parts, a sequence at
/// those positions.
#[pyfunction]
#[pyo3(signature = (a, indices_or_sections, axis = 0))]
fn split<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    indices_or_sections: &Bound<'py, PyAny>,
    axis: i64,
) -> Result<Bound<'py, PyTuple>> {
    let parts = match indices_or_sections.extract::<usize>() {
        Ok(n) => Split::Sections(n),
        Err(_) => Split::Indices(indices_or_sections.extract()?),
    };
    tuple_of(py, lib(pt::split(&array_from_py(a)?, parts, axis))?)
}

#[pyfunction]
#[pyo3(signature = (x, axis = 0))]
fn unstack<'py>(py: Python<'py>, x: &Bound<'py, PyAny>, axis: i64) -> Result<Bound<'py, PyTuple>> {
    tuple_of(py, lib(pt::unstack(&array_from_py(x)?, axis))?)
}

#[pyfunction]
#[pyo3(signature = (a, k = 0))]
fn tril(a: &Bound<'_, PyAny>, k: i64) -> Result<Py<PyArrayExpr>> {
    wrap(pt::tril(&array_from_py(a)?, k))
}

#[pyfunction]
#[pyo3(signature = (a, k = 0))]
fn triu(a: &Bound<'_, PyAny>, k: i64) -> Result<Py<PyArrayExpr>> {
    wrap(pt::triu(&array_from_py(a)?, k))
}

/// numpy's `pad` with modes `constant` (`constant_values`), `edge`, `reflect`, `symmetric` and
/// `wrap`; `pad_width` is an int, a `(before, after)` pair, or a pair per axis.
#[pyfunction]
#[pyo3(signature = (array, pad_width, mode = "constant", constant_values = None))]
fn pad(
    array: &Bound<'_, PyAny>,
    pad_width: &Bound<'_, PyAny>,
    mode: &str,
    constant_values: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let width: pt::PadWidth = if let Ok(w) = pad_width.extract::<usize>() {
        w.into()
    } else if let Ok(pair) = pad_width.extract::<(usize, usize)>() {
        pair.into()
    } else if let Ok(pairs) = pad_width.extract::<Vec<(usize, usize)>>() {
        pairs.into()
    } else {
        let single: Vec<usize> = pad_width
            .extract()
            .map_err(|_| type_error("pad_width must be an int, a (before, after) pair, or a pair per axis"))?;
        match single.as_slice() {
            [w] => (*w).into(),
            _ => {
                return Err(value_error("pad_width must be an int, a (before, after) pair, or a pair per axis"));
            }
        }
    };
    let mode = match mode {
        "constant" => PadMode::Constant(match constant_values {
            Some(c) => scalar_from_py(c, "constant_values")?,
            None => pytato::dtype::WeakScalar::Int(0),
        }),
        "edge" => PadMode::Edge,
        "reflect" => PadMode::Reflect,
        "symmetric" => PadMode::Symmetric,
        "wrap" => PadMode::Wrap,
        other => {
            return Err(value_error(format!(
                "pad mode {other:?} is not supported (constant, edge, reflect, symmetric, wrap)"
            )));
        }
    };
    wrap(pt::pad_with(&array_from_py(array)?, width, mode))
}

// ---- creation -----------------------------------------------------------------------------

/// numpy's `zeros`, `ones` and `empty` (an expression's "uninitialized" elements are zeros):
/// `order` ('C' or 'F') is checked and changes nothing, `like` is not used.
macro_rules! filled_creations {
    ($($name:ident),*) => {$(
        #[doc = concat!("numpy's `", stringify!($name), "`: `order` ('C' or 'F') is checked and changes nothing.")]
        #[pyfunction]
        #[pyo3(signature = (shape, dtype = None, order = None, *, device = None, like = None))]
        fn $name(
            shape: &Bound<'_, PyAny>,
            dtype: Option<&Bound<'_, PyAny>>,
            order: Option<&str>,
            device: Option<&Bound<'_, PyAny>>,
            like: Option<&Bound<'_, PyAny>>,
        ) -> Result<Py<PyArrayExpr>> {
            let _ = like;
            check_creation_keywords(stringify!($name), order, device)?;
            wrap(pt::$name(shape_from_py(shape)?, optional_dtype(dtype)?.unwrap_or(DType::F64)))
        }
    )*};
}

filled_creations!(zeros, ones, empty);

/// numpy's `full`; `order` ('C' or 'F') is checked and changes nothing, `like` is not used.
#[pyfunction]
#[pyo3(signature = (shape, fill_value, dtype = None, order = None, *, device = None, like = None))]
fn full(
    shape: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    order: Option<&str>,
    device: Option<&Bound<'_, PyAny>>,
    like: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let _ = like;
    check_creation_keywords("full", order, device)?;
    let shape = shape_from_py(shape)?;
    let dtype = optional_dtype(dtype)?;
    if is_array_fill(fill_value) {
        return array_filled(shape, fill_value, dtype);
    }
    let (value, dtype) = fill_value_from_py(fill_value, dtype)?;
    wrap(pt::full(shape, value, dtype))
}

/// Whether `full`'s or `full_like`'s fill value is an array (an expression, a numpy array or a
/// symbolic length) rather than a number.
fn is_array_fill(fill_value: &Bound<'_, PyAny>) -> bool {
    fill_value.cast::<PyArrayExpr>().is_ok()
        || fill_value.cast::<numpy::PyUntypedArray>().is_ok()
        || fill_value.cast::<crate::convert::PyDim>().is_ok()
}

/// numpy's `full` and `full_like` with an array fill: copied into `shape` (broadcast) and cast
/// unsafely (numpy's `copyto(..., casting="unsafe")`), in the fill's dtype where none is given;
/// a symbolic length fills as the 0-d int64 array it is when the program runs.
fn array_filled(shape: pytato::Shape, fill_value: &Bound<'_, PyAny>, dtype: Option<DType>) -> Result<Py<PyArrayExpr>> {
    let fill = array_from_py(fill_value)?;
    let filled = lib(pt::broadcast_to(&fill, shape))?;
    wrap(pt::astype(&filled, dtype.unwrap_or(fill.dtype())))
}

/// numpy's `zeros_like`, `ones_like`, `empty_like` and `full_like`: `fill` in `a`'s shape (linked
/// to `a`, see `pt::full_like`) and dtype, or in `shape` where given. `order` and `subok` are
/// accepted and mean nothing here (an expression has no memory layout or subclass); `device`
/// must be `None` or `"cpu"` (where results are returned).
fn filled_like(
    name: &str,
    a: &Bound<'_, PyAny>,
    fill: WeakScalar,
    dtype: Option<&Bound<'_, PyAny>>,
    shape: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    check_device(name, device)?;
    let a = array_from_py(a)?;
    let dtype = optional_dtype(dtype)?;
    match shape.filter(|s| !s.is_none()) {
        Some(shape) => wrap(pt::full(shape_from_py(shape)?, fill, dtype.unwrap_or(a.dtype()))),
        None => wrap(pt::full_like(&a, fill, dtype)),
    }
}

#[pyfunction]
#[pyo3(signature = (a, dtype = None, order = "K", subok = true, shape = None, *, device = None))]
fn zeros_like(
    a: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    order: &str,
    subok: bool,
    shape: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let _ = (order, subok);
    filled_like("zeros_like", a, WeakScalar::Int(0), dtype, shape, device)
}

#[pyfunction]
#[pyo3(signature = (a, dtype = None, order = "K", subok = true, shape = None, *, device = None))]
fn ones_like(
    a: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    order: &str,
    subok: bool,
    shape: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let _ = (order, subok);
    filled_like("ones_like", a, WeakScalar::Int(1), dtype, shape, device)
}

/// As `zeros_like`: an expression's "uninitialized" elements are zeros.
#[pyfunction]
#[pyo3(signature = (a, dtype = None, order = "K", subok = true, shape = None, *, device = None))]
fn empty_like(
    a: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    order: &str,
    subok: bool,
    shape: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let _ = (order, subok);
    filled_like("empty_like", a, WeakScalar::Int(0), dtype, shape, device)
}

#[pyfunction]
#[pyo3(signature = (a, fill_value, dtype = None, order = "K", subok = true, shape = None, *, device = None))]
#[allow(clippy::too_many_arguments)]
fn full_like(
    a: &Bound<'_, PyAny>,
    fill_value: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    order: &str,
    subok: bool,
    shape: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let _ = (order, subok);
    if is_array_fill(fill_value) {
        check_device("full_like", device)?;
        let a = array_from_py(a)?;
        let shape = match shape.filter(|s| !s.is_none()) {
            Some(shape) => shape_from_py(shape)?,
            None => a.shape().clone(),
        };
        return array_filled(shape, fill_value, Some(optional_dtype(dtype)?.unwrap_or(a.dtype())));
    }
    let target = match optional_dtype(dtype)? {
        Some(dtype) => dtype,
        None => array_from_py(a)?.dtype(),
    };
    let (value, _) = fill_value_from_py(fill_value, Some(target))?;
    filled_like("full_like", a, value, dtype, shape, device)
}

/// numpy's (and the Array API's) `asarray`: an expression as it is, other data wrapped (a copy
/// the DAG keeps); in `dtype` where given. `order` is checked and changes nothing; `copy=False`
/// is numpy's `ValueError` where a copy is needed (a new dtype, or data that is not an
/// expression, which the library copies); `like` is not used.
#[pyfunction]
#[pyo3(signature = (a, dtype = None, order = None, *, device = None, copy = None, like = None))]
fn asarray(
    a: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    order: Option<&str>,
    device: Option<&Bound<'_, PyAny>>,
    copy: Option<bool>,
    like: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let _ = like;
    check_creation_order("asarray", order, "CFAK")?;
    check_device("asarray", device)?;
    let is_expression = a.cast::<PyArrayExpr>().is_ok();
    let array = array_from_py(a)?;
    let dtype = optional_dtype(dtype)?;
    if copy == Some(false) && (!is_expression || dtype.is_some_and(|d| d != array.dtype())) {
        return Err(value_error(format!(
            "asarray: unable to avoid a copy with copy=False ({}); pass copy=None to allow one",
            if is_expression { "a new dtype" } else { "data becomes an expression through a copy the DAG keeps" }
        )));
    }
    wrap(pt::asarray(&array, dtype))
}

#[pyfunction]
#[pyo3(signature = (N, M = None, k = 0, dtype = None))]
#[allow(non_snake_case)] // numpy's argument names
fn eye(
    N: &Bound<'_, PyAny>,
    M: Option<&Bound<'_, PyAny>>,
    k: i64,
    dtype: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let m = M.map(dim_from_py).transpose()?;
    wrap(pt::eye(dim_from_py(N)?, m, k, optional_dtype(dtype)?.unwrap_or(DType::F64)))
}

/// `arange(stop)`, `arange(start, stop[, step])`; a symbolic `stop` (`x.shape[0]`) with start 0
/// and step 1.
#[pyfunction]
#[pyo3(signature = (start, stop = None, step = None, dtype = None))]
fn arange(
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let symbolic_stop = match stop {
        Some(stop) => stop.cast::<PyDim>().ok().map(|d| (Some(start), d.get().dim.clone())),
        None => start.cast::<PyDim>().ok().map(|d| (None, d.get().dim.clone())),
    };
    if let Some((start, stop)) = symbolic_stop {
        let is_int = |x: Option<&Bound<'_, PyAny>>, k: i64| {
            x.is_none_or(|x| x.is_exact_instance_of::<PyInt>() && x.extract::<i64>().is_ok_and(|v| v == k))
        };
        if !is_int(start, 0) || !is_int(step, 1) {
            return Err(value_error(format!(
                "arange with the symbolic stop {stop} takes start 0 and step 1 (its length is then {stop}; \
                 other starts and steps give lengths that are not affine in the size parameters)"
            )));
        }
        return wrap(pt::arange_symbolic(stop, optional_dtype(dtype)?));
    }
    let value = |x: &Bound<'_, PyAny>, what| scalar_from_py(x, what);
    let (start, stop) = match stop {
        Some(stop) => (value(start, "start")?, value(stop, "stop")?),
        None => (pytato::dtype::WeakScalar::Int(0), value(start, "stop")?),
    };
    let step = match step {
        Some(step) => value(step, "step")?,
        None => pytato::dtype::WeakScalar::Int(1),
    };
    wrap(pt::arange(start, stop, step, optional_dtype(dtype)?))
}

#[pyfunction]
#[pyo3(signature = (start, stop, num, endpoint, compute, dtype))]
fn _linspace(
    start: &Bound<'_, PyAny>,
    stop: &Bound<'_, PyAny>,
    num: i64,
    endpoint: bool,
    compute: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    let num = usize::try_from(num).map_err(|_| {
        crate::errors::Error(pytato::Error::NegativeLength { op: "linspace".into(), length: num.to_string() })
    })?;
    let (start, stop) = (scalar_from_py(start, "start")?, scalar_from_py(stop, "stop")?);
    if let Some(compute) = optional_dtype(compute)? {
        return wrap(pt::linspace_computed_in(start, stop, num, endpoint, compute, optional_dtype(dtype)?));
    }
    wrap(pt::linspace(start, stop, num, endpoint, optional_dtype(dtype)?))
}

/// numpy's `meshgrid`; `sparse=True` leaves each grid with length 1 on the other axes, `copy`
/// means nothing for expressions.
#[pyfunction]
#[pyo3(signature = (*arrays, indexing = "xy", sparse = false, copy = true))]
fn meshgrid<'py>(
    py: Python<'py>,
    arrays: &Bound<'py, PyTuple>,
    indexing: &str,
    sparse: bool,
    copy: bool,
) -> Result<Bound<'py, PyTuple>> {
    let _ = copy;
    let indexing = match indexing {
        "xy" => Indexing::Xy,
        "ij" => Indexing::Ij,
        other => return Err(value_error(format!("indexing must be \"xy\" or \"ij\", not {other:?}"))),
    };
    let arrays = arrays_from_py(arrays.as_any())?;
    let grids = if sparse { pt::meshgrid_sparse(&arrays, indexing) } else { pt::meshgrid(&arrays, indexing) };
    tuple_of(py, lib(grids)?)
}

// ---- linear algebra -----------------------------------------------------------------------

/// `einsum("ij,jk->ik", a, b)`.
#[pyfunction]
#[pyo3(signature = (subscripts, *operands, optimize = None))]
fn einsum(
    subscripts: &str,
    operands: &Bound<'_, PyTuple>,
    optimize: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    // numpy's contraction-order search: the library's passes order contractions themselves.
    let _ = optimize;
    // A wrong spec is reported as such before the operands are converted (numpy's order).
    lib(pt::check_einsum_subscripts(subscripts, operands.len()))?;
    let arrays = arrays_from_py(operands.as_any())?;
    wrap(pt::einsum(subscripts, &arrays.iter().collect::<Vec<_>>()))
}

/// numpy's `matmul`, with the ufunc keywords `dtype=`, `casting=` (the operands cast to the loop
/// numpy picks, see [`with_ufunc_keywords`]) and `order=` (see [`check_ufunc_order`]).
#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, dtype = None, casting = "same_kind", order = "K"))]
fn matmul<'py>(
    x1: &Bound<'py, PyAny>,
    x2: &Bound<'py, PyAny>,
    dtype: Option<&Bound<'py, PyAny>>,
    casting: &str,
    order: &str,
) -> Result<Bound<'py, PyAny>> {
    check_ufunc_order("matmul", order)?;
    let keywords = UfuncKeywords { dtype, casting };
    if !keywords.are_defaults() {
        return with_ufunc_keywords("matmul", &[x1, x2], &keywords, |o| pt::matmul(&o[0], &o[1]));
    }
    expression(x1.py(), pt::matmul(&array_from_py(x1)?, &array_from_py(x2)?))
}

#[pyfunction]
fn dot(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::dot(&array_from_py(a)?, &array_from_py(b)?))
}

#[pyfunction]
fn vdot(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
    wrap(pt::vdot(&array_from_py(a)?, &array_from_py(b)?))
}

/// numpy's `vecdot` (the first operand conjugated), with the ufunc keywords as [`matmul`] and
/// `keepdims` (the contracted axis kept, of length 1, where `axis` puts it in the result).
#[pyfunction]
#[pyo3(signature = (x1, x2, /, *, axis = -1, keepdims = false, dtype = None, casting = "same_kind", order = "K"))]
fn vecdot<'py>(
    x1: &Bound<'py, PyAny>,
    x2: &Bound<'py, PyAny>,
    axis: i64,
    keepdims: bool,
    dtype: Option<&Bound<'py, PyAny>>,
    casting: &str,
    order: &str,
) -> Result<Bound<'py, PyAny>> {
    check_ufunc_order("vecdot", order)?;
    let product = |a: &Array, b: &Array| -> pytato::Result<Array> {
        let result = pt::vecdot(a, b, axis)?;
        if !keepdims {
            return Ok(result);
        }
        // `axis` counts in the broadcast operands, which have one axis more than the result.
        let ndim = result.ndim() as i64 + 1;
        pt::expand_dims(&result, if axis < 0 { axis + ndim } else { axis })
    };
    let keywords = UfuncKeywords { dtype, casting };
    if !keywords.are_defaults() {
        return with_ufunc_keywords("vecdot", &[x1, x2], &keywords, |o| product(&o[0], &o[1]));
    }
    expression(x1.py(), product(&array_from_py(x1)?, &array_from_py(x2)?))
}

/// numpy's `diagonal(a, offset=0, axis1=0, axis2=1)`.
#[pyfunction]
#[pyo3(signature = (a, offset = 0, axis1 = 0, axis2 = 1))]
fn diagonal(a: &Bound<'_, PyAny>, offset: i64, axis1: i64, axis2: i64) -> Result<Py<PyArrayExpr>> {
    wrap(pt::diagonal(&array_from_py(a)?, offset, axis1, axis2))
}

/// numpy's `trace(a, offset=0, axis1=0, axis2=1, dtype=None)`.
#[pyfunction]
#[pyo3(signature = (a, offset = 0, axis1 = 0, axis2 = 1, dtype = None))]
fn trace(
    a: &Bound<'_, PyAny>,
    offset: i64,
    axis1: i64,
    axis2: i64,
    dtype: Option<&Bound<'_, PyAny>>,
) -> Result<Py<PyArrayExpr>> {
    wrap(pt::trace(&array_from_py(a)?, offset, axis1, axis2, optional_dtype(dtype)?))
}

/// `tensordot(a, b, axes=2)`; `axes` is a count or a pair of axis lists.
#[pyfunction]
#[pyo3(signature = (a, b, axes = None))]
fn tensordot(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>, axes: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
    let axes = match axes {
        None => TensordotAxes::Count(2),
        Some(axes) => match axes.extract::<usize>() {
            Ok(n) => TensordotAxes::Count(n),
            Err(_) => {
                let (a_axes, b_axes): (Bound<'_, PyAny>, Bound<'_, PyAny>) = axes.extract()?;
                TensordotAxes::Pairs(ints_from_py(&a_axes)?, ints_from_py(&b_axes)?)
            }
        },
    };
    wrap(pt::tensordot(&array_from_py(a)?, &array_from_py(b)?, axes))
}

/// Names numpy and the Array API give the same functions.
const ALIASES: &[(&str, &str)] = &[
    ("absolute", "abs"),
    ("true_divide", "divide"),
    ("mod", "remainder"),
    ("pow", "power"),
    ("bitwise_not", "invert"),
    ("bitwise_invert", "invert"),
    ("bitwise_left_shift", "left_shift"),
    ("bitwise_right_shift", "right_shift"),
    ("conjugate", "conj"),
    ("acos", "arccos"),
    ("asin", "arcsin"),
    ("atan", "arctan"),
    ("atan2", "arctan2"),
    ("acosh", "arccosh"),
    ("asinh", "arcsinh"),
    ("atanh", "arctanh"),
    ("concat", "concatenate"),
];

/// Adds every function to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    add_unary(m)?;
    add_elementwise_unary(m)?;
    add_binary(m)?;
    add_reductions(m)?;
    for f in [
        wrap_pyfunction!(make_placeholder, m)?,
        wrap_pyfunction!(make_size_param, m)?,
        wrap_pyfunction!(make_data_wrapper, m)?,
        wrap_pyfunction!(where_, m)?,
        wrap_pyfunction!(astype, m)?,
        wrap_pyfunction!(round, m)?,
        wrap_pyfunction!(clip, m)?,
        wrap_pyfunction!(var, m)?,
        wrap_pyfunction!(std_deviation, m)?,
        wrap_pyfunction!(argmax, m)?,
        wrap_pyfunction!(nanargmax, m)?,
        wrap_pyfunction!(nanargmin, m)?,
        wrap_pyfunction!(_require_non_negative, m)?,
        wrap_pyfunction!(argmin, m)?,
        wrap_pyfunction!(count_nonzero, m)?,
        wrap_pyfunction!(cumsum, m)?,
        wrap_pyfunction!(cumprod, m)?,
        wrap_pyfunction!(cumulative_sum, m)?,
        wrap_pyfunction!(cumulative_prod, m)?,
        wrap_pyfunction!(sort, m)?,
        wrap_pyfunction!(argsort, m)?,
        wrap_pyfunction!(searchsorted, m)?,
        wrap_pyfunction!(nonzero, m)?,
        wrap_pyfunction!(modf, m)?,
        wrap_pyfunction!(frexp, m)?,
        wrap_pyfunction!(_complex_from_parts, m)?,
        wrap_pyfunction!(unique_counts, m)?,
        wrap_pyfunction!(unique_inverse, m)?,
        wrap_pyfunction!(unique_all, m)?,
        wrap_pyfunction!(_unique, m)?,
        wrap_pyfunction!(_unique_values_equal_nan, m)?,
        wrap_pyfunction!(_check_ufunc_order, m)?,
        wrap_pyfunction!(_no_out, m)?,
        wrap_pyfunction!(_ufunc_operands, m)?,
        wrap_pyfunction!(ravel, m)?,
        wrap_pyfunction!(diagonal, m)?,
        wrap_pyfunction!(trace, m)?,
        wrap_pyfunction!(extract, m)?,
        wrap_pyfunction!(compress, m)?,
        wrap_pyfunction!(take, m)?,
        wrap_pyfunction!(take_along_axis, m)?,
        wrap_pyfunction!(reshape, m)?,
        wrap_pyfunction!(transpose, m)?,
        wrap_pyfunction!(permute_dims, m)?,
        wrap_pyfunction!(swapaxes, m)?,
        wrap_pyfunction!(moveaxis, m)?,
        wrap_pyfunction!(roll, m)?,
        wrap_pyfunction!(stack, m)?,
        wrap_pyfunction!(concatenate, m)?,
        wrap_pyfunction!(broadcast_to, m)?,
        wrap_pyfunction!(broadcast_arrays, m)?,
        wrap_pyfunction!(squeeze, m)?,
        wrap_pyfunction!(expand_dims, m)?,
        wrap_pyfunction!(flip, m)?,
        wrap_pyfunction!(repeat, m)?,
        wrap_pyfunction!(tile, m)?,
        wrap_pyfunction!(diff, m)?,
        wrap_pyfunction!(split, m)?,
        wrap_pyfunction!(unstack, m)?,
        wrap_pyfunction!(tril, m)?,
        wrap_pyfunction!(triu, m)?,
        wrap_pyfunction!(pad, m)?,
        wrap_pyfunction!(zeros, m)?,
        wrap_pyfunction!(ones, m)?,
        wrap_pyfunction!(empty, m)?,
        wrap_pyfunction!(full, m)?,
        wrap_pyfunction!(zeros_like, m)?,
        wrap_pyfunction!(ones_like, m)?,
        wrap_pyfunction!(empty_like, m)?,
        wrap_pyfunction!(full_like, m)?,
        wrap_pyfunction!(asarray, m)?,
        wrap_pyfunction!(eye, m)?,
        wrap_pyfunction!(arange, m)?,
        wrap_pyfunction!(_linspace, m)?,
        wrap_pyfunction!(meshgrid, m)?,
        wrap_pyfunction!(einsum, m)?,
        wrap_pyfunction!(matmul, m)?,
        wrap_pyfunction!(dot, m)?,
        wrap_pyfunction!(vdot, m)?,
        wrap_pyfunction!(vecdot, m)?,
        wrap_pyfunction!(tensordot, m)?,
    ] {
        m.add_function(f)?;
    }
    let namespace: Bound<'_, PyDict> = m.dict();
    for (alias, name) in ALIASES {
        m.add(*alias, namespace.get_item(*name)?.expect("the aliased function is registered"))?;
    }
    Ok(())
}
