//! The `Array` and `DictOfNamedArrays` classes: lazy expressions with pytato's methods.

use std::sync::OnceLock;

use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFrozenSet, PyTuple};
use pytato as pt;
use pytato::{Array, DType, DictOfNamedArrays, Order};

use crate::convert::{axes_of, index_from_py, known_operand, new_shape_from_py, operand_from_py, shape_to_py};
use crate::data::{dtype_from_py, numpy_dtype};
use crate::errors::{Result, key_error, lib, type_error, value_error};
use crate::functions::{self, Reduction};
use crate::tags::{tag_set_to_py, tags_from_py};

/// An array expression: a node of the DAG. Nothing is computed until a program made by
/// `generate` runs. `==` compares structure (as in pytato); `<`, `<=`, `>`, `>=` are
/// elementwise, like `pt.less` and friends.
#[pyclass(name = "Array", module = "pytato_rs", frozen, weakref)]
pub(crate) struct PyArrayExpr {
    pub(crate) array: Array,
    /// The objects of the node's children, made when the graph below is first read and kept
    /// while this object lives (see [`crate::graph::child_objects`]): one object per node of a
    /// DAG being traversed, so that `is` and `id()`, by which pytato code keys its caches, mean
    /// the node.
    pub(crate) children: OnceLock<Vec<Py<PyArrayExpr>>>,
}

impl From<Array> for PyArrayExpr {
    fn from(array: Array) -> PyArrayExpr {
        PyArrayExpr { array, children: OnceLock::new() }
    }
}

impl Drop for PyArrayExpr {
    fn drop(&mut self) {
        if let Some(children) = self.children.take() {
            crate::graph::release(children);
        }
    }
}

/// A result of an operation, as the Python class (tagged with where it was created, where
/// traceback tags are on).
/// `pytato_rs.<name>(array, *args, **kwargs)`: numpy's array methods that are its functions.
fn as_function(
    array: &Bound<'_, PyArrayExpr>,
    name: &str,
    args: &Bound<'_, PyTuple>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let py = array.py();
    let function = py.import("pytato_rs")?.getattr(name)?;
    let mut all = vec![array.clone().into_any()];
    all.extend(args.iter());
    Ok(function.call(PyTuple::new(py, all)?, kwargs)?.unbind())
}

pub(crate) fn wrap(result: pytato::Result<Array>) -> Result<Py<PyArrayExpr>> {
    object(crate::tags::with_traceback_tag(lib(result)?)?)
}

/// The Python object of `array`: the node's live one where it has one (see
/// [`crate::graph::node_object`]), so that a function returning a node it was given returns
/// the very object (`x.astype(x.dtype) is x`).
pub(crate) fn object(array: Array) -> Result<Py<PyArrayExpr>> {
    Python::attach(|py| Ok(crate::graph::node_object(py, &array)?.unbind()))
}

/// `a op b` with `other` converted as numpy converts operands.
/// An operand as an array (a scalar as a 0-d constant of its default dtype): `@` has no weak
/// scalars, numpy refuses them.
fn operand_array(operand: pt::Operand) -> pytato::Result<Array> {
    match operand {
        pt::Operand::Array(a) => Ok(a),
        pt::Operand::Scalar(s) => {
            Err(pytato::Error::invalid("matmul", format!("a scalar ({s:?}) is not a matrix; use *")))
        }
    }
}

/// `a op other` (or `other op a`, `reversed`), or `NotImplemented` for an operand the library
/// does not know (see [`known_operand`]), as numpy's and pytato's operators do.
fn binary(
    a: &Array,
    other: &Bound<'_, PyAny>,
    reversed: bool,
    op: fn(pt::Operand, pt::Operand) -> pytato::Result<Array>,
) -> Result<Py<PyAny>> {
    let py = other.py();
    let Some(other) = known_operand(other)? else { return Ok(py.NotImplemented()) };
    let this = pt::Operand::Array(a.clone());
    Ok(wrap(if reversed { op(other, this) } else { op(this, other) })?.into_any())
}

#[pymethods]
impl PyArrayExpr {
    /// The shape: ints, and a `Dim` for each length given by size parameters.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyTuple>> {
        shape_to_py(py, self.array.shape())
    }

    /// The numpy dtype.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        numpy_dtype(py, self.array.dtype())
    }

    #[getter]
    fn ndim(&self) -> usize {
        self.array.ndim()
    }

    /// The number of elements; an error where a length is symbolic.
    #[getter]
    fn size(&self) -> Result<i64> {
        let shape = self.array.shape();
        shape.size().ok_or_else(|| {
            let why = if shape.is_concrete() { "overflows 64 bits" } else { "is not known until the program runs" };
            value_error(format!("the size of an array of shape {shape} {why}"))
        })
    }

    /// The bytes of one element (numpy's `itemsize`).
    #[getter]
    fn itemsize(&self) -> usize {
        self.array.dtype().itemsize()
    }

    /// The bytes of the result, `size * itemsize` (numpy's `nbytes`); an error where a length is
    /// symbolic.
    #[getter]
    fn nbytes(&self) -> Result<i64> {
        let itemsize = self.array.dtype().itemsize() as i64;
        self.size()?.checked_mul(itemsize).ok_or_else(|| {
            value_error(format!("the bytes of an array of shape {} overflow 64 bits", self.array.shape()))
        })
    }

    /// The name of a placeholder, size parameter, named data wrapper or a dictionary's entry
    /// (`NamedArray`); `None` otherwise.
    #[getter]
    fn name(&self) -> Option<String> {
        match self.array.kind() {
            pytato::NodeKind::NamedArray { name, .. } => Some(name.to_string()),
            _ => self.array.name().map(str::to_string),
        }
    }

    /// The tags, as a frozenset.
    #[getter]
    fn tags<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        Ok(tag_set_to_py(py, self.array.tags())?.into_any())
    }

    /// The tags that are instances of `tag_type`, as a frozenset (pytato's `tags_of_type`).
    fn tags_of_type<'py>(&self, py: Python<'py>, tag_type: &Bound<'py, PyAny>) -> Result<Bound<'py, PyFrozenSet>> {
        tags_of_type(py, self.array.tags(), tag_type)
    }

    /// Tags that do not take part in equality: where the node was created (`CreatedAt`, see
    /// `pytato_rs.set_traceback_tag_enabled`).
    #[getter]
    fn non_equality_tags<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyFrozenSet>> {
        crate::tags::non_equality_tags_to_py(py, self.array.tags())
    }

    /// One `Axis` (with its `tags`) per axis.
    #[getter]
    fn axes<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyTuple>> {
        let axis_class = py.import("pytato_rs.tags")?.getattr("Axis")?;
        let axes = self
            .array
            .axes()
            .iter()
            .map(|axis| axis_class.call1((tag_set_to_py(py, &axis.tags)?,)))
            .collect::<PyResult<Vec<_>>>()?;
        PyTuple::new(py, axes)
    }

    /// The kind of node (`"Placeholder"`, `"IndexLambda"`, `"Einsum"`, ...).
    #[getter]
    fn node_type(&self) -> &'static str {
        self.array.kind_name()
    }

    /// The node's fields under pytato's names for its class (`array`, `arrays`, `axis`,
    /// `bindings`, `indices`, `data`, ...; see `graph`): an `AttributeError` for others.
    fn __getattr__<'py>(slf: &Bound<'py, Self>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        crate::graph::field(slf, name)
    }

    /// The node's identity: equal for two handles of one node, different for equal nodes built
    /// apart (what pytato's `count_duplicates` and multiplicities count).
    #[getter]
    fn _node_id(&self) -> usize {
        self.array.id()
    }

    /// The arrays this node uses, in a fixed order per kind (bindings by name, operands in
    /// order, index arrays by axis): what mappers visit.
    fn _children(slf: &Bound<'_, Self>) -> PyResult<Vec<Py<PyArrayExpr>>> {
        Ok(crate::graph::child_objects(slf)?.iter().map(|c| c.clone_ref(slf.py())).collect())
    }

    /// The same node over other children (in `_children()`'s order), checked again; the node
    /// itself when every child is the same.
    fn _with_children(&self, children: Vec<PyRef<'_, PyArrayExpr>>) -> Result<Py<PyArrayExpr>> {
        crate::graph::with_children(&self.array, children)
    }

    /// An index lambda's conditions on the run-time sizes as tuples (`()` for other nodes), for
    /// pickling (see `size_checks.rs`).
    #[getter]
    fn _size_checks<'py>(&self, py: Python<'py>) -> Result<Bound<'py, pyo3::types::PyTuple>> {
        match self.array.kind() {
            pytato::NodeKind::IndexLambda(lambda) => crate::size_checks::checks_to_py(py, &lambda.checks),
            _ => crate::size_checks::checks_to_py(py, &[]),
        }
    }

    /// The index lambda with the size checks `_size_checks` gave added.
    fn _with_size_checks(&self, checks: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        let checks = crate::size_checks::checks_from_py(checks)?;
        if checks.is_empty() {
            return object(self.array.clone());
        }
        wrap(self.array.with_size_checks(checks))
    }

    /// The node with the fields given replaced (children by their field names, `tags`,
    /// `axes`), as pytato's `replace_if_different`: the node itself when nothing differs.
    #[pyo3(signature = (**changes))]
    fn replace_if_different(&self, changes: Option<&Bound<'_, PyDict>>) -> Result<Py<PyArrayExpr>> {
        object(crate::graph::replace(&self.array, changes)?)
    }

    /// pytato's `copy`: [`PyArrayExpr::replace_if_different`] (nodes are immutable, so an
    /// unchanged copy is the node itself).
    #[pyo3(signature = (**changes))]
    fn copy(&self, changes: Option<&Bound<'_, PyDict>>) -> Result<Py<PyArrayExpr>> {
        self.replace_if_different(changes)
    }

    /// pytato's `with_tagged_reduction`: the index lambda with `tags` added to reduction iname
    /// `axis` (a `str`, `_rN`), or the einsum with them added to reduction `axis` (an
    /// `EinsumReductionAxis`, as `access_descriptors` give it). An axis that is not one of the
    /// node's reductions is `pytato_rs.diagnostic.NotAReductionAxis`; a string for an einsum, a
    /// `TypeError`.
    fn with_tagged_reduction(
        &self,
        py: Python<'_>,
        axis: &Bound<'_, PyAny>,
        tags: &Bound<'_, PyAny>,
    ) -> Result<Py<PyArrayExpr>> {
        let not_a_reduction = |what: String| crate::errors::diagnostic("NotAReductionAxis", what);
        let wanted = match self.array.kind() {
            pytato::NodeKind::IndexLambda(lambda) => {
                let iname: String = axis
                    .extract()
                    .map_err(|_| type_error(format!("an IndexLambda's reduction is named by a str, not {axis}")))?;
                match pytato::names::classify(&iname) {
                    Some(pytato::names::Reserved::ReductionIname(r))
                        if lambda.reduction_descriptors.contains_key(iname.as_str()) =>
                    {
                        r
                    }
                    _ => {
                        return Err(not_a_reduction(format!(
                            "'{iname}' is not a reduction iname of {}",
                            self.array.summary()
                        )));
                    }
                }
            }
            pytato::NodeKind::Einsum(einsum) => {
                let reduction_axis = py.import("pytato_rs.array")?.getattr("EinsumReductionAxis")?;
                if !axis.is_instance(&reduction_axis)? {
                    return Err(type_error(format!(
                        "an Einsum's reduction is named by an EinsumReductionAxis (see access_descriptors), not {axis}"
                    )));
                }
                let r: usize = axis.getattr("dim")?.extract()?;
                if !einsum.reduction_indices().contains(&r) {
                    return Err(not_a_reduction(format!("reduction {r} is not one of {}'s", self.array.summary())));
                }
                r
            }
            _ => return Err(not_a_reduction(format!("{} has no reductions", self.array.summary()))),
        };
        let added = tags_from_py(Some(tags))?;
        wrap(self.array.map_reduction_tags(|r, current| {
            if r == wanted { current.union(added.iter().cloned()) } else { Ok(current.clone()) }
        }))
    }

    /// The array with `tags` added (one tag or an iterable of tags).
    fn tagged(&self, tags: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        wrap(self.array.tagged_with(tags_from_py(Some(tags))?))
    }

    /// The array with exactly `tags` (pytools' `Taggable._with_new_tags`, which meshmode calls
    /// to restore unpickled arrays' tags).
    fn _with_new_tags(&self, tags: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        let changes = PyDict::new(tags.py());
        changes.set_item("tags", tags)?;
        self.replace_if_different(Some(&changes))
    }

    /// The array without `tags`.
    fn without_tags(&self, tags: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        let remove = lib(pytato::TagSet::new().union(tags_from_py(Some(tags))?))?;
        object(self.array.without_tags(&remove))
    }

    /// The array with `tags` added to axis `iaxis`.
    fn with_tagged_axis(&self, iaxis: i64, tags: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        let axis = usize::try_from(iaxis).ok().filter(|&a| a < self.array.ndim()).ok_or_else(|| {
            crate::errors::Error(pytato::Error::AxisOutOfRange {
                op: "with_tagged_axis".into(),
                axis: iaxis,
                shape: self.array.shape().clone(),
            })
        })?;
        let mut axes = self.array.axes().to_vec();
        axes[axis].tags = lib(axes[axis].tags.union(tags_from_py(Some(tags))?))?;
        wrap(self.array.with_axes(axes))
    }

    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        wrap(Ok(crate::errors::indexing(pt::index(&self.array, &index_from_py(key)?))?))
    }

    /// Functional indexed updates, as in JAX: `x.at[i, 1:].set(v)` is `x` with those elements
    /// replaced by `v`; `x.at[i].add(v)` adds `v` there, repeated indices adding up (numpy's
    /// `np.add.at`). `x` itself does not change.
    #[getter]
    fn at(&self) -> IndexUpdate {
        IndexUpdate { array: self.array.clone() }
    }

    fn __len__(&self) -> Result<usize> {
        match self.array.shape().dims().first() {
            None => Err(type_error("len() of a 0-dimensional array")),
            Some(d) => d
                .as_int()
                .map(|n| n as usize)
                .ok_or_else(|| type_error(format!("len() of an array whose first length is {d}"))),
        }
    }

    fn __add__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::add(a, b))
    }

    fn __radd__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::add(a, b))
    }

    fn __sub__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::subtract(a, b))
    }

    fn __rsub__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::subtract(a, b))
    }

    fn __mul__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::multiply(a, b))
    }

    fn __rmul__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::multiply(a, b))
    }

    fn __truediv__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::divide(a, b))
    }

    fn __rtruediv__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::divide(a, b))
    }

    fn __floordiv__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::floor_divide(a, b))
    }

    fn __rfloordiv__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::floor_divide(a, b))
    }

    fn __mod__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::remainder(a, b))
    }

    fn __rmod__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::remainder(a, b))
    }

    fn __and__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::bitwise_and(a, b))
    }

    fn __rand__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::bitwise_and(a, b))
    }

    fn __or__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::bitwise_or(a, b))
    }

    fn __ror__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::bitwise_or(a, b))
    }

    fn __xor__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::bitwise_xor(a, b))
    }

    fn __rxor__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::bitwise_xor(a, b))
    }

    fn __lshift__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::left_shift(a, b))
    }

    fn __rlshift__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::left_shift(a, b))
    }

    fn __rshift__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::right_shift(a, b))
    }

    fn __rrshift__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::right_shift(a, b))
    }

    fn __pow__(&self, other: &Bound<'_, PyAny>, modulo: Option<&Bound<'_, PyAny>>) -> Result<Py<PyAny>> {
        no_modulo(modulo)?;
        if let Some(result) = numpy_scalar_power(&self.array, other)? {
            return Ok(wrap(result)?.into_any());
        }
        binary(&self.array, other, false, |a, b| pt::power(a, b))
    }

    fn __rpow__(&self, other: &Bound<'_, PyAny>, modulo: Option<&Bound<'_, PyAny>>) -> Result<Py<PyAny>> {
        no_modulo(modulo)?;
        binary(&self.array, other, true, |a, b| pt::power(a, b))
    }

    /// The subarrays along the first axis, as numpy iterates (its length must be known).
    fn __iter__<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        let length = self.__len__()?;
        let items =
            (0..length as i64).map(|i| wrap(pt::index(&self.array, &[pt::Idx::Int(i)]))).collect::<Result<Vec<_>>>()?;
        Ok(PyTuple::new(py, items)?.into_any().try_iter()?.into_any())
    }

    /// An expression is immutable: `copy.copy` gives it back (pickling a deep DAG to copy it took
    /// minutes). `copy.deepcopy` still copies, data wrappers' arrays included.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __neg__(&self) -> Result<Py<PyArrayExpr>> {
        wrap(pt::negative(&self.array))
    }

    fn __pos__(&self) -> Result<Py<PyArrayExpr>> {
        wrap(pt::positive(&self.array))
    }

    fn __abs__(&self) -> Result<Py<PyArrayExpr>> {
        wrap(pt::abs(&self.array))
    }

    fn __invert__(&self) -> Result<Py<PyArrayExpr>> {
        wrap(pt::invert(&self.array))
    }

    fn __matmul__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, false, |a, b| pt::matmul(&operand_array(a)?, &operand_array(b)?))
    }

    fn __rmatmul__(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyAny>> {
        binary(&self.array, other, true, |a, b| pt::matmul(&operand_array(a)?, &operand_array(b)?))
    }

    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> Result<Py<PyAny>> {
        let py = other.py();
        let structural = |negate: bool| -> Result<Py<PyAny>> {
            let equal = other.cast::<PyArrayExpr>().is_ok_and(|o| o.get().array == self.array);
            Ok((equal != negate).into_pyobject(py)?.to_owned().into_any().unbind())
        };
        let elementwise =
            |f: fn(pt::Operand, pt::Operand) -> pytato::Result<Array>| binary(&self.array, other, false, f);
        match op {
            CompareOp::Eq => structural(false),
            CompareOp::Ne => structural(true),
            CompareOp::Lt => elementwise(|a, b| pt::less(a, b)),
            CompareOp::Le => elementwise(|a, b| pt::less_equal(a, b)),
            CompareOp::Gt => elementwise(|a, b| pt::greater(a, b)),
            CompareOp::Ge => elementwise(|a, b| pt::greater_equal(a, b)),
        }
    }

    /// Pickling: the DAG's nodes in postorder, rebuilt with the functions that make them
    /// (`pytato_rs._pickle`).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let module = slf.py().import("pytato_rs._pickle")?;
        Ok((module.getattr("rebuild")?, (module.getattr("records")?.call1((slf,))?,)))
    }

    /// The structural hash: equal DAGs hash alike (arrays are dictionary keys in pytato code).
    fn __hash__(&self) -> u64 {
        self.array.structural_hash()
    }

    fn __bool__(&self) -> Result<bool> {
        Err(value_error("the truth value of an array expression is undefined (nothing is computed yet)"))
    }

    /// numpy must not turn an expression into an object array: compute it with `generate`.
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__(&self, dtype: Option<&Bound<'_, PyAny>>, copy: Option<bool>) -> Result<Py<PyAny>> {
        let _ = (dtype, copy);
        Err(type_error("a pytato_rs.Array is a lazy expression: compute it with pytato_rs.generate(expr)(**inputs)"))
    }

    /// numpy's ufuncs on expressions build expressions: `np.sin(expr)` is `pt.sin(expr)` and
    /// `numpy_array + expr` an expression over the data; a numpy array of objects (a container
    /// of arrays) takes the ufunc element by element. See `pytato_rs._interop.array_ufunc`.
    #[pyo3(signature = (ufunc, method, *inputs, **kwargs))]
    fn __array_ufunc__(
        &self,
        ufunc: &Bound<'_, PyAny>,
        method: &str,
        inputs: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> Result<Py<PyAny>> {
        let interop = ufunc.py().import("pytato_rs._interop")?;
        Ok(interop.getattr("array_ufunc")?.call1((ufunc, method, inputs, kwargs))?.unbind())
    }

    /// numpy's functions (`np.sum(x)`, `np.where(c, x, y)`, `np.concatenate([x, y])`) on the
    /// library's expressions: the library's function of the same name, lazily; numpy's own
    /// implementation for functions the library lacks (`pytato_rs._interop.array_function`).
    fn __array_function__(
        &self,
        func: &Bound<'_, PyAny>,
        types: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: &Bound<'_, PyDict>,
    ) -> Result<Py<PyAny>> {
        let interop = func.py().import("pytato_rs._interop")?;
        Ok(interop.getattr("array_function")?.call1((func, types, args, kwargs))?.unbind())
    }

    /// pytato's `repr`: the node's fields, nodes below three levels shown as `(...)`
    /// (`pytato_rs._repr`); the library's compact form where that cannot run (no pymbolic).
    fn __repr__(slf: &Bound<'_, Self>) -> String {
        let pytatos = || -> PyResult<String> {
            slf.py().import("pytato_rs._repr")?.getattr("array_repr")?.call1((slf,))?.extract()
        };
        pytatos().unwrap_or_else(|_| slf.get().array.repr(2))
    }

    fn __str__(&self) -> String {
        self.array.summary()
    }

    /// The transpose (axes reversed).
    #[getter(T)]
    fn transpose_property(&self) -> Result<Py<PyArrayExpr>> {
        wrap(pt::transpose(&self.array, None))
    }

    #[getter]
    fn real(&self) -> Result<Py<PyArrayExpr>> {
        wrap(pt::real(&self.array))
    }

    #[getter]
    fn imag(&self) -> Result<Py<PyArrayExpr>> {
        wrap(pt::imag(&self.array))
    }

    /// numpy's `ndarray.conj()`: the complex conjugate; any other array is returned as it is (the
    /// function `conj` makes bools `int8`, the method does not).
    fn conj(slf: &Bound<'_, Self>) -> Result<Py<PyArrayExpr>> {
        if slf.get().array.dtype().is_complex() { wrap(pt::conj(&slf.get().array)) } else { Ok(slf.clone().unbind()) }
    }

    fn conjugate(slf: &Bound<'_, Self>) -> Result<Py<PyArrayExpr>> {
        Self::conj(slf)
    }

    /// The transpose of the last two axes (the Array API's `mT`).
    #[getter(mT)]
    fn matrix_transpose_property(&self) -> Result<Py<PyArrayExpr>> {
        wrap(pt::matrix_transpose(&self.array))
    }

    /// numpy's `astype`; `copy` changes nothing (expressions are immutable).
    #[pyo3(signature = (dtype, order = "K", casting = "unsafe", subok = true, copy = true))]
    fn astype(
        &self,
        dtype: &Bound<'_, PyAny>,
        order: &str,
        casting: &str,
        subok: bool,
        copy: bool,
    ) -> Result<Py<PyArrayExpr>> {
        let _ = (order, subok, copy);
        if casting != "unsafe" {
            return Err(value_error(format!(
                "astype: casting={casting:?} is not supported (numpy's default, \"unsafe\", is)"
            )));
        }
        wrap(pt::astype(&self.array, dtype_from_py(dtype)?))
    }

    /// `reshape(2, 3)`, `reshape((2, 3))`, `reshape(-1, order="F")`.
    #[pyo3(signature = (*shape, order = "C"))]
    fn reshape(&self, shape: &Bound<'_, PyTuple>, order: &str) -> Result<Py<PyArrayExpr>> {
        let shape = match shape.len() {
            1 => new_shape_from_py(&shape.get_item(0)?)?,
            _ => new_shape_from_py(shape.as_any())?,
        };
        wrap(pt::reshape(&self.array, shape, order_from_str(order)?))
    }

    #[pyo3(signature = (*axes))]
    fn transpose(&self, axes: &Bound<'_, PyTuple>) -> Result<Py<PyArrayExpr>> {
        let axes: Option<Vec<i64>> = match axes.len() {
            0 => None,
            1 if axes.get_item(0)?.is_none() => None,
            1 => Some(crate::convert::ints_from_py(&axes.get_item(0)?)?),
            _ => Some(axes.extract()?),
        };
        wrap(pt::transpose(&self.array, axes.as_deref()))
    }

    #[pyo3(signature = (order = "C"))]
    fn ravel(&self, order: &str) -> Result<Py<PyArrayExpr>> {
        wrap(pt::reshape(&self.array, [-1], order_from_str(order)?))
    }

    #[pyo3(signature = (order = "C"))]
    fn flatten(&self, order: &str) -> Result<Py<PyArrayExpr>> {
        self.ravel(order)
    }

    // numpy's methods that return new arrays, as the module's functions of the same names with
    // the array first (`x.argmax(axis=0)` is `pytato_rs.argmax(x, axis=0)`).

    #[pyo3(signature = (*args, **kwargs))]
    fn argmax(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "argmax", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn argmin(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "argmin", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn argsort(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "argsort", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn clip(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "clip", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn cumsum(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "cumsum", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn cumprod(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "cumprod", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn diagonal(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "diagonal", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn trace(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "trace", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn nonzero(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "nonzero", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn repeat(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "repeat", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn round(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "round", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn searchsorted(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "searchsorted", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn std(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "std", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn var(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "var", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn swapaxes(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "swapaxes", args, kwargs)
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn take(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        as_function(slf, "take", args, kwargs)
    }

    #[pyo3(signature = (axis = None))]
    fn squeeze(&self, axis: Option<&Bound<'_, PyAny>>) -> Result<Py<PyArrayExpr>> {
        wrap(pt::squeeze(&self.array, axes_of(&self.array, axis)?))
    }

    fn dot(&self, other: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        wrap(pt::dot(&self.array, &crate::convert::array_from_py(other)?))
    }

    #[pyo3(signature = (axis = None, dtype = None, out = None, keepdims = false, initial = None))]
    fn sum(
        &self,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        initial: Option<&Bound<'_, PyAny>>,
    ) -> Result<Py<PyArrayExpr>> {
        functions::no_out("sum", out)?;
        functions::reduce(Reduction::Sum, &self.array, axis, dtype, keepdims, initial)
    }

    #[pyo3(signature = (axis = None, dtype = None, out = None, keepdims = false, initial = None))]
    fn prod(
        &self,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        initial: Option<&Bound<'_, PyAny>>,
    ) -> Result<Py<PyArrayExpr>> {
        functions::no_out("prod", out)?;
        functions::reduce(Reduction::Prod, &self.array, axis, dtype, keepdims, initial)
    }

    #[pyo3(signature = (axis = None, out = None, keepdims = false, initial = None))]
    fn max(
        &self,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        initial: Option<&Bound<'_, PyAny>>,
    ) -> Result<Py<PyArrayExpr>> {
        functions::no_out("max", out)?;
        functions::reduce(Reduction::Max, &self.array, axis, None, keepdims, initial)
    }

    #[pyo3(signature = (axis = None, out = None, keepdims = false, initial = None))]
    fn min(
        &self,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        initial: Option<&Bound<'_, PyAny>>,
    ) -> Result<Py<PyArrayExpr>> {
        functions::no_out("min", out)?;
        functions::reduce(Reduction::Min, &self.array, axis, None, keepdims, initial)
    }

    #[pyo3(signature = (axis = None, dtype = None, out = None, keepdims = false))]
    fn mean(
        &self,
        axis: Option<&Bound<'_, PyAny>>,
        dtype: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> Result<Py<PyArrayExpr>> {
        functions::no_out("mean", out)?;
        functions::reduce(Reduction::Mean, &self.array, axis, dtype, keepdims, None)
    }

    #[pyo3(signature = (axis = None, out = None, keepdims = false))]
    fn all(
        &self,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> Result<Py<PyArrayExpr>> {
        functions::no_out("all", out)?;
        functions::reduce(Reduction::All, &self.array, axis, None, keepdims, None)
    }

    #[pyo3(signature = (axis = None, out = None, keepdims = false))]
    fn any(
        &self,
        axis: Option<&Bound<'_, PyAny>>,
        out: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
    ) -> Result<Py<PyArrayExpr>> {
        functions::no_out("any", out)?;
        functions::reduce(Reduction::Any, &self.array, axis, None, keepdims, None)
    }
}

/// `array.at`: indexing it names the elements to update.
#[pyclass(module = "pytato_rs", frozen)]
pub(crate) struct IndexUpdate {
    array: Array,
}

#[pymethods]
impl IndexUpdate {
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> Result<IndexedUpdate> {
        Ok(IndexedUpdate { array: self.array.clone(), items: index_from_py(key)? })
    }
}

/// `array.at[key]`: `set` or `add` values there.
#[pyclass(module = "pytato_rs", frozen)]
pub(crate) struct IndexedUpdate {
    array: Array,
    items: Vec<pt::Idx>,
}

#[pymethods]
impl IndexedUpdate {
    /// The array with the indexed elements replaced by `values` (broadcast).
    fn set(&self, values: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        wrap(pt::set_index(&self.array, &self.items, operand_from_py(values)?))
    }

    /// The array with `values` added at the indexed elements; repeated indices add up.
    fn add(&self, values: &Bound<'_, PyAny>) -> Result<Py<PyArrayExpr>> {
        wrap(pt::add_at(&self.array, &self.items, operand_from_py(values)?))
    }
}

/// `pow(a, b, modulo)` has no array meaning.
/// numpy's `ndarray.__pow__` computes three exponents given as Python scalars by other ufuncs
/// (its `fast_scalar_power`): `x ** 2` is `square(x)`, and for float and complex arrays `x ** -1`
/// is `reciprocal(x)` and `x ** 0.5` is `sqrt(x)`. Only an exact Python `int` or `float` takes
/// that path, as in numpy. Where `power` gives other values or dtypes it is taken here: the
/// square of bools (int8, where `power` gives int64) and of complex numbers, the reciprocal of
/// complex numbers, the square root of float16 and complex numbers (special values differ:
/// `(nan+infj) ** 0.5` is `inf+infj`); float32 and float64 `** 0.5` are `sqrt` in `power`
/// itself. Elsewhere the expression stays a power, as pytato writes it, with the same values.
/// `None` where `power` is numpy's result.
fn numpy_scalar_power(a: &Array, exponent: &Bound<'_, PyAny>) -> Result<Option<pytato::Result<Array>>> {
    use pyo3::types::{PyFloat, PyInt};
    let dtype = a.dtype();
    let complex = dtype.is_complex();
    if exponent.is_exact_instance_of::<PyInt>() {
        let Ok(e) = exponent.extract::<i64>() else { return Ok(None) };
        return Ok(match e {
            2 if complex || dtype == DType::Bool => Some(pt::square(a)),
            -1 if complex => Some(pt::reciprocal(a)),
            _ => None,
        });
    }
    if exponent.is_exact_instance_of::<PyFloat>()
        && (complex || dtype == DType::F16)
        && exponent.extract::<f64>()? == 0.5
    {
        return Ok(Some(pt::sqrt(a)));
    }
    Ok(None)
}

fn no_modulo(modulo: Option<&Bound<'_, PyAny>>) -> Result<()> {
    match modulo {
        Some(m) if !m.is_none() => Err(type_error("pow() with a modulo is not supported for arrays")),
        _ => Ok(()),
    }
}

/// The tags of `tags` that are instances of `tag_type`, as a frozenset.
fn tags_of_type<'py>(
    py: Python<'py>,
    tags: &pytato::TagSet,
    tag_type: &Bound<'py, PyAny>,
) -> Result<Bound<'py, PyFrozenSet>> {
    let mut chosen = Vec::new();
    for tag in tag_set_to_py(py, tags)?.iter() {
        if tag.is_instance(tag_type)? {
            chosen.push(tag);
        }
    }
    PyFrozenSet::new(py, chosen)
}

/// numpy's `order=`.
pub(crate) fn order_from_str(order: &str) -> Result<Order> {
    match order {
        "C" => Ok(Order::C),
        "F" => Ok(Order::F),
        // numpy's "A" and "K" follow an array's layout in memory, which a lazy array has not.
        "A" | "K" => Err(value_error(format!(
            "order {order:?} follows an array's layout in memory, which a lazy array has not: say \"C\" or \"F\""
        ))),
        other => Err(value_error(format!("order must be \"C\" or \"F\", not {other:?}"))),
    }
}

/// Named array expressions, the result of a program with several outputs (pytato's
/// `DictOfNamedArrays`): a read-only mapping from names to arrays.
#[pyclass(name = "DictOfNamedArrays", module = "pytato_rs", frozen, mapping)]
pub(crate) struct PyDictOfNamedArrays {
    pub(crate) dict: DictOfNamedArrays,
}

#[pymethods]
impl PyDictOfNamedArrays {
    /// The entry `name` as a `NamedArray` node (pytato's: its `expr` is the array stored under
    /// the name, its `_container` this dictionary).
    fn __getitem__(&self, name: &str) -> Result<Py<PyArrayExpr>> {
        if self.dict.get(name).is_none() {
            return Err(key_error(name.to_string()));
        }
        wrap(Array::new_named_array(&self.dict, name))
    }

    fn __len__(&self) -> usize {
        self.dict.len()
    }

    fn __contains__(&self, name: &str) -> bool {
        self.dict.get(name).is_some()
    }

    fn __iter__<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        Ok(PyTuple::new(py, self.keys())?.into_any().try_iter()?.into_any())
    }

    fn keys(&self) -> Vec<String> {
        self.dict.names().map(str::to_string).collect()
    }

    fn values(&self) -> Result<Vec<Py<PyArrayExpr>>> {
        self.dict.names().map(|name| self.__getitem__(name)).collect()
    }

    fn items(&self) -> Result<Vec<(String, Py<PyArrayExpr>)>> {
        self.dict.names().map(|name| Ok((name.to_string(), self.__getitem__(name)?))).collect()
    }

    #[getter]
    fn tags<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>> {
        Ok(tag_set_to_py(py, self.dict.tags())?.into_any())
    }

    /// The stored arrays by name, as a new dict: pytato's `_data`, which code written for pytato
    /// reads (arraycontext's `compile` does). The arrays themselves, not `NamedArray` nodes.
    #[getter]
    fn _data<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyDict>> {
        let data = PyDict::new(py);
        for (name, array) in self.dict.iter() {
            data.set_item(name, wrap(Ok(array.clone()))?)?;
        }
        Ok(data)
    }

    /// The tags that are instances of `tag_type`, as a frozenset.
    fn tags_of_type<'py>(&self, py: Python<'py>, tag_type: &Bound<'py, PyAny>) -> Result<Bound<'py, PyFrozenSet>> {
        tags_of_type(py, self.dict.tags(), tag_type)
    }

    fn tagged(&self, tags: &Bound<'_, PyAny>) -> Result<PyDictOfNamedArrays> {
        let mut dict = self.dict.clone();
        for tag in tags_from_py(Some(tags))? {
            dict = lib(dict.tagged_ref(tag))?;
        }
        Ok(PyDictOfNamedArrays { dict })
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<PyDictOfNamedArrays>().is_ok_and(|o| o.get().dict == self.dict)
    }

    /// Pickling: each entry's DAG (see `PyArrayExpr::__reduce__`).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        let module = slf.py().import("pytato_rs._pickle")?;
        Ok((module.getattr("rebuild_dict")?, (module.getattr("dict_records")?.call1((slf,))?,)))
    }

    fn __hash__(&self) -> u64 {
        pytato::backend::Outputs::Named(self.dict.clone()).structural_hash()
    }

    fn __repr__(&self) -> String {
        let entries: Vec<String> = self.dict.iter().map(|(n, a)| format!("{n:?}: {}", a.summary())).collect();
        format!("DictOfNamedArrays({{{}}})", entries.join(", "))
    }
}

/// `make_dict_of_named_arrays({"name": array, ...})`.
#[pyfunction]
pub(crate) fn make_dict_of_named_arrays(data: &Bound<'_, PyDict>) -> Result<PyDictOfNamedArrays> {
    Ok(PyDictOfNamedArrays { dict: crate::convert::dict_of_named_arrays(data)? })
}
