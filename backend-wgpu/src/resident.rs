//! Arrays held in GPU buffers between runs (`pytato_runtime::device`): uploads, the storage of
//! device arrays, and their copy back to the host.

use std::sync::Arc;

use pytato_core::{ArrayData, DType, Error, Result};
use pytato_runtime::ArrayDataView;
use pytato_runtime::device::{DeviceArray, DeviceStorage};

use crate::deferred::RunStatus;
use crate::device::Gpu;
use crate::spare::StorageBuffer;
use crate::transfer::{from_bytes, to_bytes};
use crate::upload::UploadStaging;
use crate::wgsl::storage_size;

/// The usages of every buffer the backend binds: storage, written by uploads, read back.
pub(crate) const STORAGE_USAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_DST).union(wgpu::BufferUsages::COPY_SRC);

/// A device array's elements in a storage buffer of the process's GPU, in the layout of
/// `crate::transfer` (the buffer may be longer).
pub(crate) struct GpuStorage {
    pub(crate) gpu: &'static Gpu,
    /// Shared with the arrays over the same elements; a spare when the last is dropped.
    pub(crate) buffer: Arc<StorageBuffer>,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    /// The run on device data that wrote the elements (`None`: an upload, or work over known
    /// good arrays): a failed one is reported whenever they are read (see `crate::deferred`).
    pub(crate) status: Option<Arc<RunStatus>>,
}

impl std::fmt::Debug for GpuStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "wgpu buffer of {} bytes on {}", self.buffer.size(), self.gpu.info.name)
    }
}

impl GpuStorage {
    /// The storage bytes the elements take.
    fn bytes(&self) -> u64 {
        self.shape.iter().product::<usize>() as u64 * storage_size(self.dtype) as u64
    }

    /// A handle of the buffer, to bind it (the storage keeps it from the spares meanwhile).
    pub(crate) fn handle(&self) -> wgpu::Buffer {
        wgpu::Buffer::clone(&self.buffer)
    }

    /// The storage of `array` if it is a buffer of `gpu`.
    pub(crate) fn of<'a>(array: &'a DeviceArray, gpu: &Gpu) -> Option<&'a GpuStorage> {
        array.storage().as_any().downcast_ref::<GpuStorage>().filter(|s| std::ptr::eq(s.gpu, gpu))
    }
}

impl DeviceStorage for GpuStorage {
    fn to_host(&self) -> Result<ArrayData> {
        self.gpu.same_process()?;
        let size = self.bytes().next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        if size == 0 {
            return Ok(ArrayData::zeros(self.dtype, &self.shape));
        }
        let kept = self.gpu.transfer().downloads.take().filter(|b| b.size() >= size);
        let staging = match kept {
            Some(staging) => staging,
            None => self.gpu.staging_buffer(size, wgpu::MapMode::Read, "pytato download")?,
        };
        let mut encoder = self.gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        encoder.copy_buffer_to_buffer(&self.buffer, 0, &staging, 0, size);
        self.gpu.submit(encoder)?;
        // On an error the mapping may still be pending: the buffer is dropped, never reused.
        map_for_reading(self.gpu, &staging, size)?;
        let data = {
            let view = staging
                .slice(..size)
                .get_mapped_range()
                .map_err(|e| internal(format!("reading a downloaded buffer: {e}")))?;
            from_bytes(self.dtype, &self.shape, &view[..self.bytes() as usize])
        };
        staging.unmap();
        if staging.size() <= TransferStaging::MAX_KEPT {
            self.gpu.transfer().downloads = Some(staging);
        }
        let data = data?;
        // Runs on device data before this download have finished: a failed one is reported here,
        // and so, every time, is the failure of the run that computed these elements.
        self.gpu.checks.check(self.gpu, None)?;
        match self.status.as_ref().and_then(RunStatus::failure) {
            Some(e) => Err(e),
            None => Ok(data),
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// `data` in a new storage buffer of `gpu`.
pub(crate) fn upload(gpu: &'static Gpu, data: &ArrayDataView<'_>) -> Result<DeviceArray> {
    // Checked before any copy: a broadcast view of a few bytes may stand for terabytes.
    let elements = data.shape().iter().try_fold(1u64, |n, &d| n.checked_mul(d as u64));
    let stored = elements.and_then(|n| n.checked_mul(crate::wgsl::storage_size(data.dtype()) as u64));
    let size = stored.and_then(|b| b.max(16).checked_next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT));
    let limit = gpu.limits.max_storage_buffer_binding_size.min(gpu.limits.max_buffer_size);
    let size = match size {
        Some(size) if size <= limit => size,
        _ => {
            let needs = size.map_or("more than 2^64".to_string(), |s| s.to_string());
            return Err(Error::Unsupported {
                backend: "wgpu".into(),
                reason: format!(
                    "uploading {} of shape {:?} needs {needs} bytes on the GPU; the adapter binds at most {limit} \
                     bytes per storage buffer",
                    data.dtype(),
                    data.shape(),
                ),
            });
        }
    };
    let bytes = to_bytes(data)?;
    let what = || format!("an uploaded array ({} of shape {:?})", data.dtype(), data.shape());
    let buffer = gpu.storage_buffer(size, "pytato device array", what)?;
    if !bytes.is_empty() {
        // Through the GPU's upload staging buffer (see `crate::upload`) where it is mapped again
        // by now (a poll that does not wait lets a finished copy's mapping complete); large
        // uploads through one of their own, not kept.
        let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        let parts = [(&buffer, &*bytes)];
        let kept = bytes.len() as u64 <= TransferStaging::MAX_KEPT;
        let uploaded = if kept {
            let mut transfer = gpu.transfer();
            if transfer.uploads.as_ref().is_some_and(|u| !u.is_mapped()) {
                // Only what already finished: never a wait.
                let _ = gpu.poll(wgpu::PollType::Poll);
            }
            crate::upload::upload(gpu, &mut transfer.uploads, &mut encoder, &parts)?
        } else {
            crate::upload::upload(gpu, &mut None, &mut encoder, &parts)?
        };
        // Submitted at once: wgpu keeps every dropped buffer until the next submission, so
        // uploads in a loop without a run in between grew without bound (200 uploads of 8 MB held
        // 1.2 GB). The submission does not wait.
        gpu.submit(encoder)?;
        if let Some(uploaded) = uploaded.filter(|_| kept) {
            uploaded.remap();
        }
    }
    Ok(wrap(gpu, buffer, data.dtype(), data.shape().to_vec(), None))
}

/// The staging buffers of standalone transfers, each reused by the next of its kind: a download
/// waits for its mapping anyway and unmaps it after reading; an upload's is mapped again after its
/// copy (see `crate::upload`).
#[derive(Default)]
pub(crate) struct TransferStaging {
    pub(crate) uploads: Option<UploadStaging>,
    pub(crate) downloads: Option<wgpu::Buffer>,
}

impl TransferStaging {
    /// The largest staging buffer kept for reuse (host memory, pinned on a discrete GPU): larger
    /// transfers take one of their own, freed after.
    pub(crate) const MAX_KEPT: u64 = 256 << 20;
}

/// A device array whose elements `buffer` (of `gpu`, held by nothing else) holds, written by the
/// run of `status` (see [`GpuStorage::status`]).
pub(crate) fn wrap(
    gpu: &'static Gpu,
    buffer: wgpu::Buffer,
    dtype: DType,
    shape: Vec<usize>,
    status: Option<Arc<RunStatus>>,
) -> DeviceArray {
    let buffer = Arc::new(StorageBuffer::new(gpu, buffer));
    DeviceArray::new(dtype, shape.clone(), Arc::new(GpuStorage { gpu, buffer, dtype, shape, status }))
}

/// The elements of `storage` as a device array written by the run of `status` (sharing its buffer).
pub(crate) fn rewrap(storage: &GpuStorage, status: Option<Arc<RunStatus>>) -> DeviceArray {
    let shared = GpuStorage { buffer: Arc::clone(&storage.buffer), shape: storage.shape.clone(), status, ..*storage };
    DeviceArray::new(storage.dtype, storage.shape.clone(), Arc::new(shared))
}

/// Maps the first `size` bytes of `staging` for reading, after the work submitted so far, with
/// a blocking wait (no busy-waiting). On an error the mapping may still be pending: the buffer
/// must not be mapped again.
pub(crate) fn map_for_reading(gpu: &Gpu, staging: &wgpu::Buffer, size: u64) -> Result<()> {
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.slice(..size).map_async(wgpu::MapMode::Read, move |r| {
        let _ = sender.send(r);
    });
    gpu.checks
        .wait(gpu)
        .and_then(|_| receiver.recv().map_err(|e| internal(format!("the readback never completed: {e}"))))
        .and_then(|r| r.map_err(|e| internal(format!("mapping the staging buffer: {e}"))))
}

fn internal(message: String) -> Error {
    Error::Internal { backend: "wgpu".into(), message }
}
