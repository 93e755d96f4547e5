//! numpy arrays in and out.
//!
//! Inputs are borrowed, not copied: a numpy array of any strides becomes an
//! [`ArrayDataView`] over numpy's own buffer (a compiled backend copies it only where it is not
//! row-major, as for any Rust view), and an output array the caller passes to `run_into` is
//! written in place. Results the library allocates move into numpy without a copy
//! ([`numpy::IntoPyArray`] hands the buffer over). Data wrappers copy numpy arrays, because the
//! DAG keeps its data for as long as it lives; an [`EvaluatedArray`]'s buffer, which the library
//! holds already, is shared.

use std::sync::Arc;

use numpy::{
    Element, IntoPyArray, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyReadwriteArrayDyn,
    PyUntypedArray, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};
use pytato::array::DataRef;
use pytato::{ArrayData, ArrayDataView, ArrayDataViewMut, DType};

use crate::errors::{Result, overflow_error, type_error, value_error};
use crate::evaluated::EvaluatedArray;

/// Calls `$m!` with every element type the library supports, as `Variant => type` pairs.
macro_rules! with_element_types {
    ($m:ident) => {
        $m! {
            Bool => bool, I8 => i8, I16 => i16, I32 => i32, I64 => i64,
            U8 => u8, U16 => u16, U32 => u32, U64 => u64,
            F16 => half::f16, F32 => f32, F64 => f64,
            C64 => num_complex::Complex32, C128 => num_complex::Complex64,
        }
    };
}

macro_rules! borrowed_enums {
    ($($variant:ident => $t:ty),* $(,)?) => {
        /// A numpy array borrowed for reading (numpy's borrow flag is held until it drops).
        enum ReadonlyArray<'py> {
            $($variant(PyReadonlyArrayDyn<'py, $t>),)*
        }

        /// A numpy array borrowed for writing.
        enum ReadwriteArray<'py> {
            $($variant(PyReadwriteArrayDyn<'py, $t>),)*
        }

        impl<'py> ReadonlyArray<'py> {
            /// Borrows `array` if its dtype is one the library supports; an error where it is
            /// being written (an output of the same run).
            fn of(array: &Bound<'py, PyAny>, what: &str) -> Option<PyResult<ReadonlyArray<'py>>> {
                $(if let Ok(a) = array.cast::<PyArrayDyn<$t>>() {
                    return Some(a.try_readonly().map(ReadonlyArray::$variant).map_err(|e| borrowed_elsewhere(what, e)));
                })*
                None
            }

            /// The bytes the array's elements span, as addresses.
            fn extent(&self) -> Option<std::ops::Range<usize>> {
                match self {
                    $(ReadonlyArray::$variant(a) => byte_extent(&a.as_array()),)*
                }
            }

            /// The view, in `flat_shape` where the array was borrowed flat.
            fn view(&self, flat_shape: Option<&[usize]>) -> ArrayDataView<'_> {
                match self {
                    $(ReadonlyArray::$variant(a) => match flat_shape {
                        None => a.as_array().into(),
                        Some(shape) => a.as_array().into_shape_with_order(ndarray::IxDyn(shape))
                            .expect("a flat borrow holds its shape's elements").into(),
                    },)*
                }
            }
        }

        impl<'py> ReadwriteArray<'py> {
            fn of(array: &Bound<'py, PyAny>, what: &str) -> Option<PyResult<ReadwriteArray<'py>>> {
                $(if let Ok(a) = array.cast::<PyArrayDyn<$t>>() {
                    return Some(a.try_readwrite().map(ReadwriteArray::$variant).map_err(|e| borrowed_elsewhere(what, e)));
                })*
                None
            }

            fn extent(&self) -> Option<std::ops::Range<usize>> {
                match self {
                    $(ReadwriteArray::$variant(a) => byte_extent(&a.as_array()),)*
                }
            }

            /// The mutable view, in `flat_shape` where the array was borrowed flat.
            fn view_mut(&mut self, flat_shape: Option<&[usize]>) -> ArrayDataViewMut<'_> {
                match self {
                    $(ReadwriteArray::$variant(a) => match flat_shape {
                        None => a.as_array_mut().into(),
                        Some(shape) => a.as_array_mut().into_shape_with_order(ndarray::IxDyn(shape))
                            .expect("a flat borrow holds its shape's elements").into(),
                    },)*
                }
            }
        }
    };
}
with_element_types!(borrowed_enums);

/// The addresses from the first byte of `view`'s elements to one past the last (any strides);
/// `None` for an empty array.
fn byte_extent<T>(view: &ndarray::ArrayViewD<'_, T>) -> Option<std::ops::Range<usize>> {
    if view.is_empty() {
        return None;
    }
    let size = std::mem::size_of::<T>() as isize;
    let (mut low, mut high) = (0isize, size);
    for (&len, &stride) in view.shape().iter().zip(view.strides()) {
        let reach = stride * size * (len as isize - 1);
        if reach < 0 { low += reach } else { high += reach }
    }
    let start = view.as_ptr() as isize;
    Some((start + low) as usize..(start + high) as usize)
}

/// The most axes rust-numpy's views have (it panics beyond them); numpy allows 64. An array of
/// more axes crosses as a flat row-major view of its elements, and gets its shape back on the
/// library's side.
const MAX_VIEW_AXES: usize = 32;

/// The most axes a numpy array has (numpy 2's `NPY_MAXDIMS`).
const NUMPY_MAX_AXES: usize = 64;

/// A numpy array borrowed for reading, as the library's view.
pub(crate) struct Borrowed<'py> {
    /// The numpy array borrowed (after any copy `borrow` made).
    object: Bound<'py, PyAny>,
    array: ReadonlyArray<'py>,
    /// The shape of an array of more than [`MAX_VIEW_AXES`] axes, borrowed flat.
    flat_shape: Option<Vec<usize>>,
}

impl Borrowed<'_> {
    /// The borrowed array as the library's view (no copy).
    pub(crate) fn view(&self) -> ArrayDataView<'_> {
        self.array.view(self.flat_shape.as_deref())
    }
}

/// A numpy array borrowed for writing, as the library's mutable view.
pub(crate) struct BorrowedMut<'py> {
    object: Bound<'py, PyAny>,
    array: ReadwriteArray<'py>,
    flat_shape: Option<Vec<usize>>,
}

impl BorrowedMut<'_> {
    /// The borrowed array as the library's mutable view (no copy).
    pub(crate) fn view_mut(&mut self) -> ArrayDataViewMut<'_> {
        self.array.view_mut(self.flat_shape.as_deref())
    }
}

/// The shape of `array` where it has more axes than rust-numpy's views: the caller then borrows
/// it flat.
fn shape_beyond_views(array: &Bound<'_, PyAny>) -> Result<Option<Vec<usize>>> {
    let shape: Vec<usize> = array.getattr("shape")?.extract()?;
    Ok((shape.len() > MAX_VIEW_AXES).then_some(shape))
}

/// `obj` as a numpy array: arrays as they are, anything else through `numpy.asarray`. A
/// Python int beyond int64 and uint64 (numpy reads it as an object) is an `OverflowError`.
fn as_numpy<'py>(obj: &Bound<'py, PyAny>, what: &str) -> Result<Bound<'py, PyAny>> {
    if obj.is_instance_of::<PyUntypedArray>() {
        return Ok(obj.clone());
    }
    // numpy reads None as a 0-d object array, which would be refused for its dtype `object`.
    if obj.is_none() {
        return Err(type_error(format!("{what}: got None, not an array or a number")));
    }
    let array = obj.py().import("numpy")?.call_method1("asarray", (obj,))?;
    if obj.is_instance_of::<pyo3::types::PyInt>()
        && array.getattr("dtype")?.getattr("kind")?.extract::<String>()? == "O"
    {
        return Err(overflow_error(format!("{what}: the Python int {obj} is beyond the range of int64 and uint64")));
    }
    Ok(array)
}

/// numpy refused a borrow: the array is read-only (an output), or the same array is both an input
/// and an output of one run, which the library does not allow (a kernel would read what it has
/// already overwritten).
fn borrowed_elsewhere(what: &str, e: numpy::BorrowError) -> PyErr {
    value_error(format!(
        "{what}: {e} (an array cannot be both an input and an output of one run, and an output must be writeable)"
    ))
}

fn unsupported(what: &str, array: &Bound<'_, PyAny>) -> PyErr {
    let dtype = array.getattr("dtype").map(|d| d.to_string()).unwrap_or_else(|_| "?".into());
    type_error(format!(
        "{what}: numpy dtype {dtype} is not supported (supported: bool, int8..int64, uint8..uint64, \
         float16, float32, float64, complex64, complex128; outputs in native byte order)"
    ))
}

/// Whether `array` is a numpy array of bools some of whose bytes are neither 0 nor 1: numpy
/// lets a `uint8` array be viewed as `bool`, and such bytes are not Rust `bool`s (reading one is
/// undefined behaviour), so they never reach the library as such.
fn has_bool_bytes_beyond_one(array: &Bound<'_, PyAny>) -> Result<bool> {
    let dtype = array.getattr("dtype")?;
    if dtype.getattr("kind")?.extract::<String>()? != "b" || array.getattr("size")?.extract::<usize>()? == 0 {
        return Ok(false);
    }
    // Each byte of memory once: a broadcast axis (stride 0) is read at its first index only, so
    // that a view of one element standing for 2^40 is checked at once, not in minutes.
    let strides: Vec<isize> = array.getattr("strides")?.extract()?;
    let py = array.py();
    let slices = strides
        .iter()
        .map(|&stride| match stride {
            0 => PySlice::new(py, 0, 1, 1),
            _ => PySlice::full(py),
        })
        .collect::<Vec<_>>();
    let distinct = match slices.is_empty() {
        true => array.clone(),
        false => array.get_item(PyTuple::new(py, slices)?)?,
    };
    let bytes = distinct.call_method1("view", ("uint8",))?;
    Ok(bytes.call_method0("max")?.extract::<u8>()? > 1)
}

/// Whether `obj` is a `numpy.ma.MaskedArray`, whose mask `numpy.asarray` drops.
fn is_masked_array(obj: &Bound<'_, PyAny>) -> Result<bool> {
    // Plain arrays, the common case, without an import.
    if !obj.is_instance_of::<PyUntypedArray>() || obj.get_type().name()? == "ndarray" {
        return Ok(false);
    }
    let masked = obj.py().import("numpy.ma")?.getattr("MaskedArray")?;
    obj.is_instance(&masked)
}

/// numpy's `flags.aligned` of an array.
fn is_aligned(array: &Bound<'_, PyAny>) -> Result<bool> {
    array.getattr("flags")?.getattr("aligned")?.extract()
}

/// Whether two elements of `array` share memory (a stride of 0 over an axis longer than 1, or
/// strides too small for the elements below them), which a writeable numpy view may do
/// (`as_strided`) but a Rust mutable view may not.
fn overlaps_itself(array: &Bound<'_, PyUntypedArray>) -> bool {
    let itemsize = array.dtype().itemsize() as u128;
    let mut axes: Vec<(u128, u128)> = array
        .shape()
        .iter()
        .zip(array.strides())
        .filter(|(len, _)| **len > 1)
        .map(|(&len, &stride)| (stride.unsigned_abs() as u128, len as u128))
        .collect();
    axes.sort();
    // The bytes spanned by the axes so far; the next stride must step past all of them.
    let mut reach = itemsize;
    for (stride, len) in axes {
        if stride < reach {
            return true;
        }
        reach += stride * (len - 1);
    }
    false
}

/// Borrows `obj` (a numpy array, or anything `numpy.asarray` takes) for reading. `what` names
/// the array in errors. A boolean array with bytes other than 0 and 1 is read as numpy reads
/// it (any non-zero byte is `True`): through a normalized copy.
pub(crate) fn borrow<'py>(obj: &Bound<'py, PyAny>, what: &str) -> Result<Borrowed<'py>> {
    if is_masked_array(obj)? {
        return Err(type_error(format!(
            "{what}: numpy masked arrays are not supported (their masks would be dropped): pass \
             `a.filled(value)` or `a.data`"
        )));
    }
    let mut array = as_numpy(obj, what)?;
    if has_bool_bytes_beyond_one(&array)? {
        array = array.call_method1("view", ("uint8",))?.call_method1("__ne__", (0,))?;
    }
    // Numbers in the other byte order (big-endian data from a file, say) are read as numpy reads
    // them: through a copy in the machine's order.
    let dtype = array.getattr("dtype")?;
    if !dtype.getattr("isnative")?.extract::<bool>()? && "biufc".contains(dtype.getattr("kind")?.extract::<char>()?) {
        array = array.call_method1("astype", (dtype.call_method1("newbyteorder", ("=",))?,))?;
    }
    // Rust reads elements at their natural alignment: an unaligned array (a view of bytes at an
    // odd offset, which numpy allows) is read through an aligned copy.
    if !is_aligned(&array)? {
        array = array.call_method0("copy")?;
    }
    let flat_shape = shape_beyond_views(&array)?;
    if flat_shape.is_some() {
        // A row-major view of the elements (a copy only where they are not row-major already).
        array = array.py().import("numpy")?.call_method1("ravel", (&array,))?;
    }
    let borrowed = ReadonlyArray::of(&array, what).unwrap_or_else(|| Err(unsupported(what, &array)))?;
    Ok(Borrowed { object: array, array: borrowed, flat_shape })
}

/// Borrows a numpy array for writing. `what` names the array in errors.
pub(crate) fn borrow_mut<'py>(obj: &Bound<'py, PyAny>, what: &str) -> Result<BorrowedMut<'py>> {
    if !obj.is_instance_of::<PyUntypedArray>() {
        return Err(type_error(format!(
            "{what}: an output array must be a numpy.ndarray, not {}",
            obj.get_type().name()?
        )));
    }
    if !is_aligned(obj)? {
        return Err(value_error(format!(
            "{what}: the output array is not aligned to its element size (numpy's flags.aligned is false): \
             outputs are written in place, pass an aligned array"
        )));
    }
    if let Ok(array) = obj.cast::<PyUntypedArray>()
        && overlaps_itself(array)
    {
        return Err(value_error(format!(
            "{what}: the output array has elements that share memory (shape {:?}, strides {:?}): each \
             element must have memory of its own",
            array.shape(),
            array.strides()
        )));
    }
    // A boolean output's bytes are overwritten: bytes beyond 1 are cleared first, so that no
    // invalid `bool` is ever in a Rust view.
    if has_bool_bytes_beyond_one(obj)? {
        obj.call_method1("view", ("uint8",))?.call_method1("fill", (0,))?;
    }
    let flat_shape = shape_beyond_views(obj)?;
    let flat = match &flat_shape {
        None => obj.clone(),
        Some(shape) => {
            if !obj.getattr("flags")?.getattr("c_contiguous")?.extract::<bool>()? {
                return Err(value_error(format!(
                    "{what}: an output array of more than {MAX_VIEW_AXES} axes (shape {shape:?}) must be \
                     C-contiguous: it is written through a flat view of its elements"
                )));
            }
            obj.call_method1("reshape", (-1,))?
        }
    };
    let array = ReadwriteArray::of(&flat, what).unwrap_or_else(|| Err(unsupported(what, obj)))?;
    Ok(BorrowedMut { object: flat, array, flat_shape })
}

/// Refuses a run whose output shares memory with one of its inputs or with another output.
/// numpy's borrow flags catch views of one base array; arrays over the same memory with
/// different bases (two `numpy.frombuffer` of one buffer, say) reach here. A kernel writing in
/// place would read what it has already overwritten, and Rust's views must not alias.
/// `numpy.shares_memory` decides exactly, and is asked only where the spans overlap, so that
/// interleaved views (`a[::2]` out, `a[1::2]` in) pass.
pub(crate) fn check_no_shared_memory<'a, 'py: 'a>(
    outputs: &[(&str, &BorrowedMut<'py>)],
    inputs: impl Iterator<Item = (&'a str, &'a Borrowed<'py>)>,
) -> Result<()> {
    // Each array's span once; names are formatted only for an error.
    let outputs: Vec<_> = outputs.iter().map(|&(name, o)| (name, &o.object, o.array.extent())).collect();
    let inputs: Vec<_> = inputs.map(|(name, i)| (name, &i.object, i.array.extent())).collect();
    for (k, (name, out, span)) in outputs.iter().enumerate() {
        let Some(span) = span else { continue };
        let others = outputs[k + 1..].iter().map(|o| ("output", o)).chain(inputs.iter().map(|i| ("input", i)));
        for (kind, (other_name, other, other_span)) in others {
            let overlaps = other_span.as_ref().is_some_and(|o| span.start < o.end && o.start < span.end);
            if overlaps && out.py().import("numpy")?.call_method1("shares_memory", (out, other))?.extract::<bool>()? {
                return Err(value_error(format!(
                    "output {name:?} and {kind} {other_name:?} share memory (an array cannot be both an input and \
                     an output of one run, and outputs cannot overlap): pass an input's copy"
                )));
            }
        }
    }
    Ok(())
}

/// `obj`'s data for a data wrapper: an [`EvaluatedArray`]'s own buffer (shared, no copy, on the
/// host or on a GPU), else a copy of the numpy array `obj` is or converts to.
/// The caller's numpy arrays that data wrappers copied, by the address of the copy: pytato's
/// `DataWrapper.data` is the array it was given, and code that compares arrays by identity or
/// memory (`deduplicate_data_wrappers`) reads it. An entry holds the caller's array for as long
/// as the copy lives (as pytato holds it for as long as the wrapper lives); entries whose copy
/// died are dropped as new ones come.
struct Original {
    copy: std::sync::Weak<ArrayData>,
    array: Py<PyAny>,
}

static ORIGINALS: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<usize, Original>>> =
    std::sync::LazyLock::new(Default::default);

/// Remembers that `copy` is the library's copy of `array` (a numpy array, or another library's).
pub(crate) fn remember_original(copy: &Arc<ArrayData>, array: &Bound<'_, PyAny>) {
    let mut originals = ORIGINALS.lock().unwrap_or_else(|p| p.into_inner());
    // Amortized: a sweep at every power of two leaves the live entries.
    if originals.len() >= 64 && originals.len().is_power_of_two() {
        originals.retain(|_, o| o.copy.strong_count() > 0);
    }
    // An entry of a dead copy at the same address is replaced.
    originals
        .insert(Arc::as_ptr(copy) as usize, Original { copy: Arc::downgrade(copy), array: array.clone().unbind() });
}

/// The array `copy` was made of, where a data wrapper made it and it is still alive.
pub(crate) fn original_of<'py>(py: Python<'py>, copy: &Arc<ArrayData>) -> Option<Bound<'py, PyAny>> {
    let originals = ORIGINALS.lock().unwrap_or_else(|p| p.into_inner());
    let entry = originals.get(&(Arc::as_ptr(copy) as usize))?;
    let alive = entry.copy.upgrade().is_some_and(|c| Arc::ptr_eq(&c, copy));
    alive.then(|| entry.array.bind(py).clone())
}

pub(crate) fn shared_data(obj: &Bound<'_, PyAny>, what: &str) -> Result<DataRef> {
    if let Ok(evaluated) = obj.cast::<EvaluatedArray>() {
        return Ok(evaluated.get().data.clone());
    }
    Ok(DataRef::Host(Arc::new(crate::errors::lib(borrow(obj, what)?.view().try_to_owned(what))?)))
}

/// Moves a result into a numpy array: no copy for the row-major arrays the compiled backends
/// return; an array of another layout (the interpreter's flips, say) is made row-major first.
/// A result of more axes than numpy's 64 (the library has no limit) is numpy's `ValueError`.
pub(crate) fn to_numpy(py: Python<'_>, data: ArrayData) -> Result<Bound<'_, PyAny>> {
    fn move_to_numpy<T: Element + Clone>(py: Python<'_>, a: ndarray::ArrayD<T>) -> Result<Bound<'_, PyAny>> {
        let a = if a.is_standard_layout() { a } else { a.as_standard_layout().into_owned() };
        if a.ndim() <= MAX_VIEW_AXES {
            return Ok(a.into_pyarray(py).into_any());
        }
        if a.ndim() > NUMPY_MAX_AXES {
            return Err(value_error(format!(
                "a result of {} axes cannot be a numpy array (numpy allows at most {NUMPY_MAX_AXES}); its shape is {:?}",
                a.ndim(),
                a.shape()
            )));
        }
        // Beyond rust-numpy's axes: moved flat, then reshaped by numpy (a view, no copy).
        let shape = a.shape().to_vec();
        let flat = a.into_shape_with_order(ndarray::IxDyn(&[shape.iter().product()])).expect("row-major");
        flat.into_pyarray(py).into_any().call_method1("reshape", (shape,))
    }
    macro_rules! by_variant {
        ($($variant:ident => $t:ty),* $(,)?) => {
            match data {
                $(ArrayData::$variant(a) => move_to_numpy(py, a),)*
            }
        };
    }
    with_element_types!(by_variant)
}

/// The numpy dtype object of `dtype`.
pub(crate) fn numpy_dtype(py: Python<'_>, dtype: DType) -> Bound<'_, PyAny> {
    fn descr<T: Element>(py: Python<'_>) -> Bound<'_, PyAny> {
        T::get_dtype(py).into_any()
    }
    macro_rules! by_dtype {
        ($($variant:ident => $t:ty),* $(,)?) => {
            match dtype {
                $(DType::$variant => descr::<$t>(py),)*
            }
        };
    }
    with_element_types!(by_dtype)
}

/// The library's dtype for a numpy dtype, a scalar type (`numpy.float32`, `float`) or a name
/// (`"float32"`, `"f8"`): whatever `numpy.dtype` takes, as numpy reads it.
pub(crate) fn dtype_from_py(obj: &Bound<'_, PyAny>) -> Result<DType> {
    let name: String = obj.py().import("numpy")?.call_method1("dtype", (obj,))?.getattr("name")?.extract()?;
    DType::from_name(&name).ok_or_else(|| {
        type_error(format!("dtype {name:?} is not supported (supported: {})", DType::ALL.map(|d| d.name()).join(", ")))
    })
}
