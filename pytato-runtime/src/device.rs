//! Arrays that stay with a backend between runs.
//!
//! A time loop on a GPU should upload its state once and read it back once, not at every step.
//! [`Backend::upload`](crate::backend::Backend::upload) copies an array to the backend's device,
//! [`Program::run_device`](crate::backend::Program::run_device) takes inputs from the host or from
//! the device and leaves its outputs on the device, and [`DeviceArray::to_host`] is the explicit
//! copy back. Backends that compute in host memory (the interpreter, the Cranelift JIT) hold
//! device arrays in host memory: for them the same code runs without copies of the device
//! arrays' data. [`DeviceArray`] itself is defined in `pytato_core::device` (a data wrapper
//! may hold one) and re-exported here.
//!
//! ```
//! use pytato_runtime::device::DeviceArray;
//! use pytato_core::{ArrayData, DType, Scalar};
//! let data = ArrayData::from_scalars(DType::F64, &[2], [Scalar::F64(1.0), Scalar::F64(2.0)]).unwrap();
//! let held = DeviceArray::host(data.clone());
//! assert_eq!((held.dtype(), held.shape()), (DType::F64, &[2usize][..]));
//! assert_eq!(held.to_host().unwrap(), data);
//! ```

use std::collections::BTreeMap;

pub use pytato_core::device::{DeviceArray, DeviceStorage};
use pytato_core::error::Result;
use pytato_core::view::ArrayDataView;

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
