//! Arrays a backend holds: the elements of a [`DeviceArray`] may be in a GPU buffer rather than
//! host memory.
//!
//! The type is defined here, below the runtime that makes and runs them
//! (`pytato_runtime::device`), because a data wrapper may hold one: an array a program left on
//! the GPU goes back into a DAG without a copy to the host ([`crate::array::DataRef`]).
//!
//! ```
//! use pytato_core::device::DeviceArray;
//! use pytato_core::{ArrayData, DType, Scalar};
//! let data = ArrayData::from_scalars(DType::F64, &[2], [Scalar::F64(1.0), Scalar::F64(2.0)]).unwrap();
//! let held = DeviceArray::host(data.clone());
//! assert_eq!((held.dtype(), held.shape()), (DType::F64, &[2usize][..]));
//! assert_eq!(held.to_host().unwrap(), data);
//! ```

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use ndarray::IxDyn;

use crate::data::ArrayData;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::view::ArrayDataView;

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

/// Storage in host memory: what backends that compute on the host hold (shared, so that a
/// result moves into a data wrapper without a copy).
#[derive(Debug)]
struct HostStorage(Arc<ArrayData>);

impl DeviceStorage for HostStorage {
    fn to_host(&self) -> Result<ArrayData> {
        Ok(ArrayData::clone(&self.0))
    }
    fn as_host(&self) -> Option<&ArrayData> {
        Some(&self.0)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// An array held by a backend: the result of `Backend::upload` or an output of
/// `Program::run_device` (`pytato_runtime::backend`). Cloning shares the storage; the elements
/// are never written after the array is made.
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
        DeviceArray::host_shared(Arc::new(data))
    }

    /// `data`, held in host memory and shared with its other holders (no copy).
    pub fn host_shared(data: Arc<ArrayData>) -> DeviceArray {
        DeviceArray::new(data.dtype(), data.shape().to_vec(), Arc::new(HostStorage(data)))
    }

    /// The host array this holds, where it was made by [`DeviceArray::host`] or
    /// [`DeviceArray::host_shared`] (shared, not copied); `None` for a backend's own storage.
    pub fn host_data(&self) -> Option<&Arc<ArrayData>> {
        self.storage.as_any().downcast_ref::<HostStorage>().map(|h| &h.0)
    }

    /// Whether `self` and `other` hold the very same storage (clones of one array).
    pub fn same_storage(&self, other: &DeviceArray) -> bool {
        Arc::ptr_eq(&self.storage, &other.storage)
    }

    /// The address of the storage: what identifies it while it is alive (for hashing alongside
    /// [`DeviceArray::same_storage`]).
    pub fn storage_address(&self) -> usize {
        Arc::as_ptr(&self.storage) as *const () as usize
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
        crate::for_each_array_data!(&*self.zero, a => {
            ArrayDataView::from(a.broadcast(IxDyn(&self.shape)).expect("a 0-d array broadcasts to any shape"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scalar::Scalar;

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

    #[test]
    fn shared_host_data_is_not_copied_and_clones_share_storage() {
        let data = Arc::new(ArrayData::zeros(DType::F32, &[4]));
        let held = DeviceArray::host_shared(data.clone());
        assert!(Arc::ptr_eq(held.host_data().expect("host storage"), &data));
        let other = DeviceArray::host_shared(data);
        assert!(held.same_storage(&held.clone()) && !held.same_storage(&other));
        assert_eq!(held.storage_address(), held.clone().storage_address());
    }
}
