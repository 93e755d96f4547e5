//! Arrays that stay with a backend between runs.
//!
//! A time loop on a GPU should upload its state once and read it back once, not at every step.
//! [`Backend::upload`](crate::backend::Backend::upload) copies an array to the backend's device,
//! [`Program::run_device`](crate::backend::Program::run_device) takes inputs from the host or from
//! the device and leaves its outputs on the device, and [`DeviceArray::to_host`] is the explicit
//! copy back. Backends that compute in host memory (the interpreter, the Cranelift JIT) hold
//! device arrays in host memory: for them the same code runs without copies of the device
//! arrays' data.
//!
//! ```
//! use pytato_runtime::device::DeviceArray;
//! use pytato_core::{ArrayData, DType, Scalar};
//! let data = ArrayData::from_scalars(DType::F64, &[2], [Scalar::F64(1.0), Scalar::F64(2.0)]).unwrap();
//! let held = DeviceArray::host(data.clone());
//! assert_eq!((held.dtype(), held.shape()), (DType::F64, &[2usize][..]));
//! assert_eq!(held.to_host().unwrap(), data);
//! ```

use std::any::Any;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use ndarray::IxDyn;
use pytato_core::data::ArrayData;
use pytato_core::dtype::DType;
use pytato_core::error::{Error, Result};
use pytato_core::view::ArrayDataView;

/// Where a backend keeps the elements of one [`DeviceArray`].
pub trait DeviceStorage: Send + Sync + fmt::Debug {
    /// A copy of the elements on the host, in an array of the device array's dtype and shape.
    fn to_host(&self) -> Result<ArrayData>;
    /// The elements, where they are in host memory already.
    fn as_host(&self) -> Option<&ArrayData> {
        None
    }
    /// The storage as `Any`, for a backend to recognize its own.
    fn as_any(&self) -> &dyn Any;
}

/// Storage in host memory: what backends that compute on the host hold.
#[derive(Debug)]
struct HostStorage(ArrayData);

impl DeviceStorage for HostStorage {
    fn to_host(&self) -> Result<ArrayData> {
        Ok(self.0.clone())
    }
    fn as_host(&self) -> Option<&ArrayData> {
        Some(&self.0)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// An array held by a backend: the result of
/// [`Backend::upload`](crate::backend::Backend::upload) or an output of
/// [`Program::run_device`](crate::backend::Program::run_device). Cloning shares the storage; the
/// elements are never written after the array is made.
#[derive(Clone)]
pub struct DeviceArray {
    dtype: DType,
    shape: Vec<usize>,
    storage: Arc<dyn DeviceStorage>,
    /// A 0-d zero of the dtype, broadcast into [`DeviceArray::stand_in`].
    zero: Arc<ArrayData>,
}

impl fmt::Debug for DeviceArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DeviceArray({} {:?}, {:?})", self.dtype, self.shape, self.storage)
    }
}

impl DeviceArray {
    /// An array of `dtype` and `shape` whose elements `storage` holds (for backends).
    pub fn new(dtype: DType, shape: Vec<usize>, storage: Arc<dyn DeviceStorage>) -> DeviceArray {
        DeviceArray { dtype, shape, storage, zero: Arc::new(ArrayData::zeros(dtype, &[])) }
    }

    /// `data`, held in host memory.
    pub fn host(data: ArrayData) -> DeviceArray {
        DeviceArray::new(data.dtype(), data.shape().to_vec(), Arc::new(HostStorage(data)))
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Where the elements are.
    pub fn storage(&self) -> &dyn DeviceStorage {
        &*self.storage
    }

    /// Copies the elements to the host.
    pub fn to_host(&self) -> Result<ArrayData> {
        let data = self.storage.to_host()?;
        if data.dtype() != self.dtype || data.shape() != self.shape.as_slice() {
            return Err(Error::Internal {
                backend: format!("{:?}", self.storage),
                message: format!(
                    "a device array of {} {:?} came back as {} {:?}",
                    self.dtype,
                    self.shape,
                    data.dtype(),
                    data.shape()
                ),
            });
        }
        Ok(data)
    }

    /// A view of this array's dtype and shape whose elements are all zero (one element, broadcast):
    /// what checking an input's dtype and shape needs, without its data.
    pub fn stand_in(&self) -> ArrayDataView<'_> {
        pytato_core::for_each_array_data!(&*self.zero, a => {
            ArrayDataView::from(a.broadcast(IxDyn(&self.shape)).expect("a 0-d array broadcasts to any shape"))
        })
    }
}

/// One input of [`Program::run_device`](crate::backend::Program::run_device).
#[derive(Clone, Debug)]
pub enum DeviceInput<'a> {
    /// An array on the host (copied to the device by the run, where the backend has one).
    Host(ArrayDataView<'a>),
    /// An array the backend holds.
    Device(&'a DeviceArray),
}

impl<'a> From<ArrayDataView<'a>> for DeviceInput<'a> {
    fn from(view: ArrayDataView<'a>) -> DeviceInput<'a> {
        DeviceInput::Host(view)
    }
}

impl<'a> From<&'a DeviceArray> for DeviceInput<'a> {
    fn from(array: &'a DeviceArray) -> DeviceInput<'a> {
        DeviceInput::Device(array)
    }
}

/// The inputs of [`Program::run_device`](crate::backend::Program::run_device), by name.
pub type NamedDeviceInputs<'a> = BTreeMap<&'a str, DeviceInput<'a>>;

/// The outputs of [`Program::run_device`](crate::backend::Program::run_device), by name.
pub type NamedDeviceArrays = BTreeMap<String, DeviceArray>;

/// A host step ([`crate::phases`]) that a backend may run as kernels on its own device arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeviceStep {
    /// Running sums or products along `axis`, in numpy's order (see [`crate::scan`]); one operand.
    Scan {
        /// The axis scanned.
        axis: usize,
        /// Sums or products.
        op: pytato_core::array::ScanOp,
    },
    /// The positions of the values (second operand) in the sorted 1-d first operand, in numpy's
    /// order (see [`crate::sort::searchsorted`]): `int64` of the values' shape.
    SearchSorted(pytato_core::array::Side),
    /// The positions of the `true` elements of a `bool` mask of one or more axes, in row-major
    /// order (see [`crate::phases::nonzero`]): `int64` of shape `(ndim, count)`. The count is a
    /// length the host needs, so this step waits for it.
    Nonzero,
    /// A stable sort along `axis` in numpy's order (see [`crate::sort::sort`]): the sorted values,
    /// or the `int64` indices along the axis that sort them; one operand.
    Sort {
        /// The axis sorted along.
        axis: usize,
        /// Largest first (equal elements still in their order, NaN first).
        descending: bool,
        /// The values or the indices.
        result: pytato_core::array::SortResult,
    },
    /// The first operand with the third written to (or added at) the flat positions of the second
    /// (`int64`, negative from the end), in row-major order of the positions (see
    /// [`crate::phases::scatter`]). A position out of range is an
    /// [`IndexOutOfBounds`](pytato_core::Error::IndexOutOfBounds) error naming the first such
    /// position, which a device may report at its next wait, as a run on device data does.
    Scatter(pytato_core::array::ScatterMode),
}

/// The host steps a backend runs on its device (see [`Backend::device_steps`](crate::backend::Backend::device_steps)).
///
/// A program compiled in phases ([`crate::phases`]) and run on device data hands each step to
/// [`DeviceSteps::run`]; where that gives `None`, the step's operands are copied to the host, the
/// host computes it and [`DeviceSteps::upload`] puts its result back. Either way the result is the
/// host step's, bit for bit.
pub trait DeviceSteps: Send + Sync {
    /// Enqueues `step` on `operands` (arrays of this backend's device, of the dtypes and shapes the
    /// step's node was built with) and returns its result, which stays on the device; `None` where
    /// this backend has no kernel for the step on these operands.
    fn run(&self, step: DeviceStep, operands: &[&DeviceArray]) -> Option<Result<DeviceArray>>;

    /// Copies `data` to the device (a step the host computed, an operand the caller passed on the host).
    fn upload(&self, data: &ArrayDataView<'_>) -> Result<DeviceArray>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use pytato_core::scalar::Scalar;

    #[test]
    fn stand_ins_have_the_dtype_and_shape_and_zeros() {
        for dtype in DType::ALL {
            for shape in [vec![], vec![0], vec![3, 0, 2], vec![2, 3]] {
                let a = DeviceArray::host(ArrayData::zeros(dtype, &shape));
                let v = a.stand_in();
                assert_eq!((v.dtype(), v.shape()), (dtype, shape.as_slice()));
                assert!((0..v.len()).all(|i| v.get_flat(i) == Some(Scalar::zero(dtype))));
            }
        }
    }

    #[test]
    fn host_arrays_come_back_unchanged() {
        let data = ArrayData::from_scalars(DType::I16, &[3], [-1i64, 0, 7].map(|v| Scalar::I64(v).cast(DType::I16)))
            .expect("three int16 values");
        let held = DeviceArray::host(data.clone());
        assert_eq!(held.storage().as_host(), Some(&data));
        assert_eq!(held.clone().to_host().unwrap(), data);
    }
}
