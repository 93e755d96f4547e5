//! Python values as the library's arguments: shapes, operands, axes, index keys, outputs.

use std::collections::HashMap;

use num_complex::Complex64;
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyComplex, PyDict, PyEllipsis, PyFloat, PyInt, PyList, PySlice, PyString, PyTuple};
use pytato::backend::Outputs;
use pytato::dtype::WeakScalar;
use pytato::{Array, DType, DictOfNamedArrays, Dim, Expr, NodeKind, Shape};
use pytato::{Axes, Idx, Operand};

use crate::array::{PyArrayExpr, PyDictOfNamedArrays};
use crate::data;
use crate::errors::{Result, index_error, lib, type_error, value_error};

/// One length of a shape: an `int`, the name of a size parameter (`"n"`), a size parameter
/// made by `make_size_param` or an affine expression of them (`2*n + 1`), or a length a shape
/// returned (`Dim`).
pub(crate) fn dim_from_py(item: &Bound<'_, PyAny>) -> Result<Dim> {
    if let Ok(dim) = item.cast::<PyDim>() {
        return Ok(dim.get().dim.clone());
    }
    if let Ok(name) = item.cast::<PyString>() {
        if !name.call_method0("isidentifier")?.extract::<bool>()? {
            return Err(value_error(format!(
                "a length given as a string names a size parameter, and {name:?} is not an identifier \
                 (write lengths that depend on one as expressions of make_size_param's arrays' shapes)"
            )));
        }
        return Ok(Dim::param(name.to_str()?));
    }
    if let Ok(array) = item.cast::<PyArrayExpr>() {
        let array = &array.get().array;
        return affine_length(array).ok_or_else(|| {
            type_error(format!(
                "a shape's length must be an int, a size parameter or an affine expression of size \
                 parameters (2*n + 1), not {}",
                array.summary()
            ))
        });
    }
    if item.is_instance_of::<PyBool>() {
        return Err(type_error("a shape's length must be an int, not a bool"));
    }
    let index = item.call_method0("__index__").map_err(|_| {
        type_error(format!(
            "a shape's length must be an int or a size parameter, not {}",
            item.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    let length = index.extract::<i64>().map_err(|_| {
        if index.lt(0).unwrap_or(false) {
            value_error(format!("a shape's length must not be negative, and {index} is"))
        } else {
            // numpy's ValueError ("Maximum allowed dimension exceeded")
            value_error(format!("a shape's length {index} is beyond the range of int64"))
        }
    })?;
    Ok(Dim::new(length))
}

/// The length a 0-d integer expression of size parameters stands for, where it is affine in
/// them: `2*n + 1` or `n - n` written with Python's operators on `make_size_param`'s arrays, as
/// pytato takes them in shapes. `None` for anything else. The expression's nodes are visited with
/// an explicit stack, children first.
fn affine_length(array: &Array) -> Option<Dim> {
    let mut lengths: HashMap<usize, Dim> = HashMap::new();
    let mut stack = vec![(array.clone(), false)];
    while let Some((node, children_done)) = stack.pop() {
        if lengths.contains_key(&node.id()) {
            continue;
        }
        if node.ndim() != 0 || !node.dtype().is_integer() {
            return None;
        }
        let length = match node.kind() {
            NodeKind::SizeParam { .. } => Dim::param(node.name()?),
            NodeKind::IndexLambda(lambda) if children_done => {
                let bound = |name: &str| lambda.bindings.get(name).and_then(|b| lengths.get(&b.id()));
                affine_expr(&lambda.expr, &bound)?
            }
            NodeKind::IndexLambda(lambda) => {
                stack.push((node.clone(), true));
                stack.extend(lambda.bindings.values().map(|b| (b.clone(), false)));
                continue;
            }
            _ => return None,
        };
        lengths.insert(node.id(), length);
    }
    lengths.remove(&array.id())
}

/// The affine length integer expression `expr` computes, its variables' lengths given by
/// `bound`.
fn affine_expr<'a>(expr: &Expr, bound: &impl Fn(&str) -> Option<&'a Dim>) -> Option<Dim> {
    use pytato::expr::{BinaryOp, UnaryOp};
    Some(match expr {
        Expr::Const(value) => Dim::new(i64::try_from(value.to_i128()?).ok()?),
        Expr::Var(name) => bound(name)?.clone(),
        Expr::Cast(dtype, inner) if dtype.is_integer() => affine_expr(inner, bound)?,
        Expr::Unary(UnaryOp::Neg, a) => affine_expr(a, bound)?.mul_int(-1).ok()?,
        Expr::Binary(op, a, b) => {
            let (a, b) = (affine_expr(a, bound)?, affine_expr(b, bound)?);
            match op {
                BinaryOp::Add => a.add(&b).ok()?,
                BinaryOp::Sub => a.sub(&b).ok()?,
                BinaryOp::Mul => a.mul(&b).ok()?,
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// A shape: one length or a sequence of lengths (see [`dim_from_py`]).
pub(crate) fn shape_from_py(shape: &Bound<'_, PyAny>) -> Result<Shape> {
    if shape.is_instance_of::<PyTuple>() || shape.is_instance_of::<PyList>() {
        let dims = shape.try_iter()?.map(|item| dim_from_py(&item?)).collect::<Result<Vec<_>>>()?;
        return Ok(Shape::from(dims));
    }
    Ok(Shape::from(vec![dim_from_py(shape)?]))
}

/// The new shape of a `reshape`, as numpy reads it: any negative length is the one unknown
/// length (numpy's `reshape(x, (2, -5))` is `(2, -1)`).
pub(crate) fn new_shape_from_py(shape: &Bound<'_, PyAny>) -> Result<Shape> {
    let dims = shape_from_py(shape)?
        .dims()
        .iter()
        .map(|d| if d.as_int().is_some_and(|n| n < 0) { Dim::from(-1) } else { d.clone() })
        .collect::<Vec<_>>();
    Ok(Shape::from(dims))
}

/// A shape as Python sees it: a tuple of ints, with a [`PyDim`] for each symbolic length.
pub(crate) fn shape_to_py<'py>(py: Python<'py>, shape: &Shape) -> Result<Bound<'py, PyTuple>> {
    let items = shape.dims().iter().map(|d| dim_to_py(py, d)).collect::<Result<Vec<_>>>()?;
    PyTuple::new(py, items)
}

/// A length as Python holds it: an `int` where it is a number, else a [`PyDim`].
pub(crate) fn dim_to_py<'py>(py: Python<'py>, dim: &Dim) -> Result<Bound<'py, PyAny>> {
    match dim.as_int() {
        Some(n) => Ok(n.into_pyobject(py)?.into_any()),
        None => Ok(Bound::new(py, PyDim { dim: dim.clone() })?.into_any()),
    }
}

/// A length given as any shape takes it (see [`dim_from_py`]), as a shape holds it: an `int`
/// or a `Dim` (`pytato_rs.utils` compares lengths so).
#[pyfunction]
pub(crate) fn _length<'py>(length: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
    dim_to_py(length.py(), &dim_from_py(length)?)
}

/// A length that is not a number until the program runs: `n`, `2*n + 1`. Shapes hold these
/// where a length is symbolic, and take them back; `+`, `-` and products with ints give
/// lengths again. Anywhere else a length is a 0-d `int64` array of its size parameters, as
/// pytato's are: `x - x.shape[0]`, `x.shape[0] / 2`, `pt.exp(x.shape[0])`.
#[pyclass(name = "Dim", module = "pytato_rs", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash)]
pub(crate) struct PyDim {
    pub(crate) dim: Dim,
}

#[pymethods]
impl PyDim {
    /// The names of the size parameters the length depends on.
    #[getter]
    fn params(&self) -> Vec<String> {
        self.dim.params().map(str::to_string).collect()
    }

    /// The constant part: `1` of `2*n + 1`.
    #[getter]
    fn constant(&self) -> i64 {
        self.dim.constant()
    }

    /// Each size parameter's coefficient: `{"n": 2}` of `2*n + 1`.
    #[getter]
    fn terms(&self) -> std::collections::BTreeMap<String, i64> {
        self.dim.terms().map(|(param, coefficient)| (param.to_string(), coefficient)).collect()
    }

    fn __repr__(&self) -> String {
        format!("Dim({:?})", self.dim.to_string())
    }

    fn __str__(&self) -> String {
        self.dim.to_string()
    }

    fn __add__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.length_or_array(other, "__add__", |a, b| a.add(b))
    }

    fn __radd__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.length_or_array(other, "__radd__", |a, b| b.add(a))
    }

    fn __sub__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.length_or_array(other, "__sub__", |a, b| a.sub(b))
    }

    fn __rsub__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.length_or_array(other, "__rsub__", |a, b| b.sub(a))
    }

    /// A number times a length is a length; a product with another length or an array is a 0-d
    /// array (a product of two symbolic lengths cannot be the length of a shape).
    fn __mul__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        if other.is_instance_of::<PyDim>() || other.is_instance_of::<PyArrayExpr>() {
            return self.as_array(other, "__mul__");
        }
        self.length_or_array(other, "__mul__", |a, b| a.mul(b))
    }

    fn __rmul__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        if other.is_instance_of::<PyDim>() || other.is_instance_of::<PyArrayExpr>() {
            return self.as_array(other, "__rmul__");
        }
        self.length_or_array(other, "__rmul__", |a, b| b.mul(a))
    }

    fn __truediv__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.as_array(other, "__truediv__")
    }

    fn __rtruediv__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.as_array(other, "__rtruediv__")
    }

    fn __floordiv__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.as_array(other, "__floordiv__")
    }

    fn __rfloordiv__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.as_array(other, "__rfloordiv__")
    }

    fn __mod__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.as_array(other, "__mod__")
    }

    fn __rmod__<'py>(&self, other: &Bound<'py, PyAny>) -> Result<Bound<'py, PyAny>> {
        self.as_array(other, "__rmod__")
    }

    fn __pow__<'py>(&self, other: &Bound<'py, PyAny>, modulo: Option<&Bound<'py, PyAny>>) -> Result<Bound<'py, PyAny>> {
        self.array(other.py())?.call_method1("__pow__", (other, modulo))
    }

    fn __rpow__<'py>(
        &self,
        other: &Bound<'py, PyAny>,
        modulo: Option<&Bound<'py, PyAny>>,
    ) -> Result<Bound<'py, PyAny>> {
        self.array(other.py())?.call_method1("__rpow__", (other, modulo))
    }

    fn __neg__<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        dim_to_py(py, &lib(self.dim.mul_int(-1))?)
    }

    /// The length `constant + sum(coefficient * parameter)` (how a `Dim` is pickled).
    #[new]
    fn new(constant: i64, terms: Vec<(String, i64)>) -> Result<PyDim> {
        let mut dim = Dim::new(constant);
        for (param, coefficient) in terms {
            dim = lib(dim.add(&lib(Dim::param(param).mul_int(coefficient))?))?;
        }
        Ok(PyDim { dim })
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, pyo3::types::PyType>, Bound<'py, PyTuple>)> {
        let dim = &slf.get().dim;
        let terms: Vec<(String, i64)> =
            dim.terms().map(|(param, coefficient)| (param.to_string(), coefficient)).collect();
        Ok((slf.get_type(), (dim.constant(), terms).into_pyobject(slf.py())?))
    }
}

/// A length as a 0-d `int64` expression: its constant plus each size parameter (a
/// `SizeParam` node, as `make_size_param` makes it) times its coefficient. This is how pytato's
/// `x.shape[0]` takes part in arithmetic: `x - x.shape[0]`, `pt.exp(n)`.
pub(crate) fn length_array(length: &Dim) -> Result<Array> {
    let constant = || lib(pytato::full(Shape::scalar(), length.constant(), DType::I64));
    let mut sum = if length.constant() != 0 { Some(constant()?) } else { None };
    for (param, coefficient) in length.terms() {
        let mut term = lib(pytato::size_param(param))?;
        if coefficient != 1 {
            term = lib(pytato::multiply(Operand::Array(term), Operand::Scalar(WeakScalar::Int(coefficient.into()))))?;
        }
        sum = Some(match sum {
            None => term,
            Some(sum) => lib(pytato::add(Operand::Array(sum), Operand::Array(term)))?,
        });
    }
    sum.map_or_else(constant, Ok)
}

impl PyDim {
    /// The length as a 0-d `int64` expression (see [`length_array`]).
    fn array<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        Ok(crate::array::wrap(Ok(length_array(&self.dim)?))?.into_bound(py).into_any())
    }

    /// `self op other` with the length as an array (`method` is the array's operator):
    /// `NotImplemented` for an operand arrays do not take either.
    fn as_array<'py>(&self, other: &Bound<'py, PyAny>, method: &str) -> Result<Bound<'py, PyAny>> {
        self.array(other.py())?.call_method1(method, (other,))
    }

    /// `self op other` as a length (`length_op`) where `other` is a length (an int, a `Dim`, a
    /// size parameter's expression), else as an array (`method`): `n + 1` is a length, `n + x`
    /// and `n * 0.5` are arrays, as pytato's size parameters are.
    fn length_or_array<'py>(
        &self,
        other: &Bound<'py, PyAny>,
        method: &str,
        length_op: fn(&Dim, &Dim) -> pytato::Result<Dim>,
    ) -> Result<Bound<'py, PyAny>> {
        let is_length = other.is_instance_of::<PyDim>()
            || other.is_exact_instance_of::<PyInt>()
            || other.cast::<PyArrayExpr>().is_ok_and(|a| affine_length(&a.get().array).is_some());
        if !is_length {
            return self.as_array(other, method);
        }
        dim_to_py(other.py(), &lib(length_op(&self.dim, &dim_from_py(other)?))?)
    }
}

/// A Python scalar as numpy 2 treats it in arithmetic with an array: weakly typed. Only Python's
/// own `bool`, `int`, `float` and `complex` are weak (NEP 50): numpy's `float64` and
/// `complex128` derive from `float` and `complex`, but are typed scalars (see
/// [`numpy_scalar`]).
fn weak_scalar(obj: &Bound<'_, PyAny>) -> Result<Option<WeakScalar>> {
    Ok(Some(if let Ok(b) = obj.cast_exact::<PyBool>() {
        WeakScalar::Bool(b.is_true())
    } else if obj.is_exact_instance_of::<PyInt>() {
        WeakScalar::Int(
            obj.extract::<i128>()
                .map_err(|_| value_error(format!("the Python int {obj} is out of range of every integer dtype")))?,
        )
    } else if let Ok(f) = obj.cast_exact::<PyFloat>() {
        WeakScalar::Float(f.value())
    } else if let Ok(c) = obj.cast_exact::<PyComplex>() {
        WeakScalar::Complex(Complex64::new(c.real(), c.imag()))
    } else {
        return Ok(None);
    }))
}

/// Whether `obj` is a numpy scalar (`np.float32(1)`, `np.bool_(True)`, ...).
pub(crate) fn is_numpy_scalar(obj: &Bound<'_, PyAny>) -> Result<bool> {
    let generic = obj.py().import("numpy")?.getattr("generic")?;
    obj.is_instance(&generic)
}

/// A numpy scalar as a 0-d constant of its own dtype: numpy 2 (NEP 50) types it strongly, so
/// `float32_array * np.float64(2)` is `float64`, as in numpy and pytato.
fn numpy_scalar(obj: &Bound<'_, PyAny>) -> Result<Array> {
    let dtype = data::dtype_from_py(&obj.getattr("dtype")?)?;
    let value = scalar_from_py(obj, "a numpy scalar")?;
    lib(pytato::full(Shape::scalar(), value, dtype))
}

/// Whether `obj` is a number rather than an array: a Python `bool`, `int`, `float` or
/// `complex`, or a numpy scalar. Functions of numbers alone are numpy's (`pt.exp(2.0)` is
/// `np.exp(2.0)`, as in pytato).
pub(crate) fn is_number(obj: &Bound<'_, PyAny>) -> Result<bool> {
    Ok(weak_scalar(obj)?.is_some() || is_numpy_scalar(obj)?)
}

/// A scalar argument that must be a Python number (a fill value, a padding constant).
pub(crate) fn scalar_from_py(obj: &Bound<'_, PyAny>, what: &str) -> Result<WeakScalar> {
    if let Some(s) = weak_scalar(obj)? {
        return Ok(s);
    }
    // numpy scalars: their value (numpy's `item()` gives the Python number).
    if obj.hasattr("item")?
        && obj.hasattr("dtype")?
        && let Some(s) = weak_scalar(&obj.call_method0("item")?)?
    {
        return Ok(s);
    }
    Err(type_error(format!("{what} must be a number, not {}", obj.get_type().name()?)))
}

/// What numpy's `full` and `full_like` fill with: a Python number as the library takes it (an
/// int out of `dtype`'s range is numpy's `OverflowError`), a numpy scalar in `dtype` (its own
/// where none is given) by numpy's unsafe cast, as `copyto(..., casting='unsafe')` casts it;
/// the dtype to fill in comes with it.
pub(crate) fn fill_value_from_py(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> Result<(WeakScalar, Option<DType>)> {
    if !is_numpy_scalar(obj)? {
        return Ok((scalar_from_py(obj, "fill_value")?, dtype));
    }
    let target = match dtype {
        Some(dtype) => dtype,
        None => data::dtype_from_py(&obj.getattr("dtype")?)?,
    };
    let cast = obj.call_method1("astype", (data::numpy_dtype(obj.py(), target),))?;
    Ok((scalar_from_py(&cast, "fill_value")?, Some(target)))
}

/// An operand of arithmetic: an array expression, a Python scalar (weakly typed, as numpy 2
/// does), a numpy scalar (a constant of its dtype), or numpy data (a numpy array, or a list
/// numpy reads as one, wrapped with its own dtype). `None` for anything else, numpy arrays of
/// objects included: an operator then returns `NotImplemented`, so that the other operand's
/// reflected method answers (a container of arrays maps itself over its elements).
pub(crate) fn known_operand(obj: &Bound<'_, PyAny>) -> Result<Option<Operand>> {
    if let Ok(array) = obj.cast::<PyArrayExpr>() {
        return Ok(Some(Operand::Array(array.get().array.clone())));
    }
    if let Ok(length) = obj.cast::<PyDim>() {
        return Ok(Some(Operand::Array(length_array(&length.get().dim)?)));
    }
    if let Some(scalar) = weak_scalar(obj)? {
        return Ok(Some(Operand::Scalar(scalar)));
    }
    if is_numpy_scalar(obj)? {
        return Ok(Some(Operand::Array(numpy_scalar(obj)?)));
    }
    if let Ok(array) = obj.cast::<PyUntypedArray>() {
        if array.dtype().getattr("kind")?.extract::<String>()? == "O" {
            return Ok(None);
        }
        return Ok(Some(Operand::Array(wrap_data(obj)?)));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        return Ok(Some(Operand::Array(wrap_data(obj)?)));
    }
    Ok(None)
}

/// An operand of a function (see [`known_operand`]); anything else is a `TypeError`.
pub(crate) fn operand_from_py(obj: &Bound<'_, PyAny>) -> Result<Operand> {
    known_operand(obj)?.ok_or_else(|| {
        let name = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        type_error(format!("expected an array, a number or numpy data, not {name}"))
    })
}

/// An array argument: an array expression, a symbolic length (see [`length_array`]), a numpy
/// scalar (a 0-d constant of its dtype), or numpy data wrapped as a data wrapper.
pub(crate) fn array_from_py(obj: &Bound<'_, PyAny>) -> Result<Array> {
    if let Ok(array) = obj.cast::<PyArrayExpr>() {
        return Ok(array.get().array.clone());
    }
    if let Ok(length) = obj.cast::<PyDim>() {
        return length_array(&length.get().dim);
    }
    if is_numpy_scalar(obj)? {
        return numpy_scalar(obj);
    }
    wrap_data(obj)
}

/// Arrays given as a sequence.
pub(crate) fn arrays_from_py(objs: &Bound<'_, PyAny>) -> Result<Vec<Array>> {
    objs.try_iter()?.map(|a| array_from_py(&a?)).collect()
}

/// An index array argument (`x[[1, 2]]`, `take(x, [])`): as [`array_from_py`], except that a
/// Python sequence numpy reads as an empty array of another dtype than ints or bools (`[]` is
/// float64 to `numpy.asarray`) is an empty int64 array, as numpy's indexing and `take` read it.
pub(crate) fn index_array_from_py(obj: &Bound<'_, PyAny>) -> Result<Array> {
    if !(obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>()) {
        return array_from_py(obj);
    }
    let numpy = obj.py().import("numpy")?;
    let mut data = numpy.call_method1("asarray", (obj,))?;
    let kind: String = data.getattr("dtype")?.getattr("kind")?.extract()?;
    if data.getattr("size")?.extract::<usize>()? == 0 && !"biu".contains(kind.as_str()) {
        data = data.call_method1("astype", (numpy.getattr("int64")?,))?;
    }
    wrap_data(&data)
}

fn wrap_data(obj: &Bound<'_, PyAny>) -> Result<Array> {
    let data = data::shared_data(obj, "an operand")?;
    lib(pytato::data_wrapper(data, None))
}

/// numpy's `axis=`: `None` for every axis, an int, or a sequence of ints.
pub(crate) fn axes_from_py(axis: Option<&Bound<'_, PyAny>>) -> Result<Axes> {
    match axis {
        None => Ok(Axes::All),
        Some(a) if a.is_none() => Ok(Axes::All),
        Some(a) => Ok(Axes::List(ints_from_py(a)?)),
    }
}

/// numpy's `axis=` for an operation on `a`, with numpy's legacy rule for 0-d arrays: an integer
/// axis of 0 or -1 (not a tuple) names no axis at all, "for backwards compatibility" (numpy's
/// `PyArray_ConvertMultiAxis`, behind its reductions and `squeeze`): `sum(x, axis=0)` of a 0-d
/// `x` is `x`.
pub(crate) fn axes_of(a: &Array, axis: Option<&Bound<'_, PyAny>>) -> Result<Axes> {
    match axis {
        Some(obj) if a.ndim() == 0 && obj.is_instance_of::<PyInt>() && matches!(obj.extract::<i64>(), Ok(0 | -1)) => {
            Ok(Axes::All)
        }
        _ => axes_from_py(axis),
    }
}

/// numpy's single `axis=` for an operation on `a`, with numpy's legacy rule for 0-d arrays: an
/// axis of 0 or -1 is `None` (numpy's `PyArray_CheckAxis`, behind `argmax`, `argsort`, `cumsum`
/// and `take`, which then work on the flattened array).
pub(crate) fn axis_of(a: &Array, axis: Option<i64>) -> Option<i64> {
    if a.ndim() == 0 && matches!(axis, Some(0 | -1)) { None } else { axis }
}

/// An int or a sequence of ints, as a list.
pub(crate) fn ints_from_py(obj: &Bound<'_, PyAny>) -> Result<Vec<i64>> {
    if obj.is_instance_of::<PyTuple>() || obj.is_instance_of::<PyList>() {
        Ok(obj.extract()?)
    } else {
        Ok(vec![obj.extract()?])
    }
}

/// numpy's index key: ints, slices, `None`, `...`, index arrays and boolean masks, alone or in
/// a tuple.
pub(crate) fn index_from_py(key: &Bound<'_, PyAny>) -> Result<Vec<Idx>> {
    let item = |item: &Bound<'_, PyAny>| -> Result<Idx> {
        if item.is_none() {
            return Ok(Idx::NewAxis);
        }
        if item.is_instance_of::<PyEllipsis>() {
            return Ok(Idx::Ellipsis);
        }
        if let Ok(slice) = item.cast::<PySlice>() {
            let bound = |name: &str| -> Result<Option<i64>> {
                let value = slice.getattr(name)?;
                if value.is_none() {
                    return Ok(None);
                }
                let index = value.call_method0("__index__").map_err(|_| {
                    let what = value.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                    type_error(format!(
                        "slice indices must be integers or None or have an __index__ method, not {what} \
                         (slice bounds are numbers here; x[:x.shape[0]] is x[:])"
                    ))
                })?;
                // Python clamps slice bounds beyond its index range (`PySlice_Unpack`), and so
                // does numpy: `x[:10**20]` is `x[:]`.
                Ok(Some(match index.extract::<i64>() {
                    Ok(i) => i,
                    Err(_) if index.lt(0)? => i64::MIN,
                    Err(_) => i64::MAX,
                }))
            };
            let step = bound("step")?.unwrap_or(1);
            return Ok(Idx::Slice { start: bound("start")?, stop: bound("stop")?, step });
        }
        // A tuple inside the key's tuple is a sequence of indices, as a list is (`x[(0, 1),]`).
        if item.is_instance_of::<PyArrayExpr>()
            || item.is_instance_of::<PyDim>()
            || item.is_instance_of::<PyList>()
            || item.is_instance_of::<PyTuple>()
            || item.is_instance_of::<PyUntypedArray>()
        {
            // A symbolic length (`x[x.shape[0] - 1]`) indexes as the 0-d int64 array it is.
            return Ok(Idx::Array(index_array_from_py(item)?));
        }
        // `x[True]`, `x[np.True_]`: a boolean scalar adds an axis of length 1 or 0 (numpy's rule).
        if let Ok(b) = item.cast::<PyBool>() {
            return Ok(Idx::Bool(b.is_true()));
        }
        if is_numpy_scalar(item)? && item.getattr("dtype")?.getattr("kind")?.extract::<String>()? == "b" {
            return Ok(Idx::Bool(item.is_truthy()?));
        }
        // Python and numpy integers; then other array-likes.
        if let Ok(i) = item.call_method0("__index__") {
            // numpy refuses an integer beyond its index range as no index at all.
            return Ok(Idx::Int(i.extract().map_err(|_| {
                index_error(format!("the index {i} is beyond the range of int64 and indexes no axis"))
            })?));
        }
        if item.hasattr("__array__")? {
            return Ok(Idx::Array(array_from_py(item)?));
        }
        Err(index_error(format!(
            "only integers, slices, None, ..., and integer or boolean arrays are indices, not {}",
            item.get_type().name()?
        )))
    };
    if let Ok(tuple) = key.cast::<PyTuple>() { tuple.iter().map(|i| item(&i)).collect() } else { Ok(vec![item(key)?]) }
}

/// What a program computes: one array, a `DictOfNamedArrays`, or a mapping of names to arrays.
pub(crate) fn outputs_from_py(expr: &Bound<'_, PyAny>) -> Result<Outputs> {
    if let Ok(array) = expr.cast::<PyArrayExpr>() {
        return Ok(Outputs::Single(array.get().array.clone()));
    }
    if let Ok(dict) = expr.cast::<PyDictOfNamedArrays>() {
        return Ok(Outputs::Named(dict.get().dict.clone()));
    }
    if let Ok(dict) = expr.cast::<PyDict>() {
        return Ok(Outputs::Named(dict_of_named_arrays(dict)?));
    }
    Err(type_error(format!(
        "expected an Array, a DictOfNamedArrays or a dict of arrays, not {}",
        expr.get_type().name()?
    )))
}

/// `{name: array}` as a `DictOfNamedArrays`.
pub(crate) fn dict_of_named_arrays(dict: &Bound<'_, PyDict>) -> Result<DictOfNamedArrays> {
    let entries = dict
        .iter()
        .map(|(name, array)| {
            let name = name
                .extract::<String>()
                .map_err(|_| type_error(format!("the names of named arrays are strings, not {}", name.get_type())))?;
            // `a == b` of two arrays is pytato's structural equality, a Python bool: as an output
            // it would be a constant where `equal(a, b)` was meant.
            if array.is_instance_of::<pyo3::types::PyBool>() {
                return Err(type_error(format!(
                    "output {name:?} is a Python bool, not an array: `==` between arrays compares the \
                     expressions (pytato's structural equality); pytato_rs.equal(a, b) compares elements"
                )));
            }
            Ok((name, array_from_py(&array)?))
        })
        .collect::<Result<Vec<_>>>()?;
    lib(DictOfNamedArrays::new(entries.iter().map(|(n, a)| (n.as_str(), a.clone()))))
}

/// Outputs as the Python object of the same kind.
pub(crate) fn outputs_to_py(py: Python<'_>, outputs: Outputs) -> Result<Bound<'_, PyAny>> {
    Ok(match outputs {
        Outputs::Single(array) => crate::graph::node_object(py, &array)?.into_any(),
        Outputs::Named(dict) => Bound::new(py, PyDictOfNamedArrays { dict })?.into_any(),
    })
}
