//! Host steps as kernels on device data (`pytato_runtime::device::DeviceSteps`): a program in
//! phases run with `run_device` scans and searches its arrays where they are, on the GPU, instead
//! of copying them to the host and back. The shaders are `wgsl::steps`; results are the host
//! steps' bit for bit. Steps without a kernel here (sorts, scatters, nonzero) run on the host.
//!
//! Like a run on device data, a step only enqueues its dispatches: nothing waits. Neither step can
//! fail on the device (no index is read from the data), so none leaves a check to
//! `crate::deferred`.

use pytato_core::array::{ScanOp, Side};
use pytato_core::{DType, Error, Result};
use pytato_runtime::ArrayDataView;
use pytato_runtime::device::{DeviceArray, DeviceStep, DeviceSteps};

use crate::device::Gpu;
use crate::resident::{GpuStorage, STORAGE_USAGE, upload, wrap};
use crate::run::{control_block, dispatch};
use crate::wgsl::{self, ShaderFeatures, storage_size};

/// The step kernels of one GPU, with the features its shaders may use.
pub(crate) struct GpuSteps {
    pub(crate) gpu: &'static Gpu,
    pub(crate) features: ShaderFeatures,
}

impl DeviceSteps for GpuSteps {
    fn run(&self, step: DeviceStep, operands: &[&DeviceArray]) -> Option<Result<DeviceArray>> {
        let operands: Vec<&GpuStorage> = operands.iter().map(|a| GpuStorage::of(a, self.gpu)).collect::<Option<_>>()?;
        if !self.features.i64 {
            return None;
        }
        match step {
            DeviceStep::Scan { axis, op } => Some(self.scan(operands[0], axis, op)),
            DeviceStep::SearchSorted(side) => Some(self.searchsorted(operands[0], operands[1], side)),
            _ => None,
        }
    }

    fn upload(&self, data: &ArrayDataView<'_>) -> Result<DeviceArray> {
        self.gpu.same_process()?;
        upload(self.gpu, data)
    }
}

impl GpuSteps {
    /// Running sums or products of `x` along `axis`; see `wgsl::steps`.
    fn scan(&self, x: &GpuStorage, axis: usize, op: ScanOp) -> Result<DeviceArray> {
        let shape = &x.shape;
        if axis >= shape.len() {
            return Err(internal(format!("a scan along axis {axis} of an array of shape {shape:?}")));
        }
        let len = shape[axis] as u64;
        let inner: u64 = shape[axis + 1..].iter().map(|&d| d as u64).product();
        let rows: u64 = shape[..axis].iter().map(|&d| d as u64).product::<u64>() * inner;
        let output = self.buffer(x.dtype, shape)?;
        if rows * len == 0 {
            return Ok(wrap(self.gpu, output, x.dtype, shape.clone()));
        }
        let shader = wgsl::steps::scan_shader(x.dtype, op, self.features)?;
        let pipeline = self.gpu.pipeline(&shader.source, &shader.writable, self.features)?;
        // One loop of `end - start` trips, which costs one more (its last exit test): under a
        // driver's cap on the iterations of an invocation, each dispatch scans a stretch the cap
        // allows, with a margin (see `wgsl::loops`).
        let stretch = self.gpu.loop_limit.map_or(len, |limit| limit.saturating_sub(16).max(1));
        let mut encoder =
            self.gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("scan") });
        let mut start = 0;
        while start < len {
            let end = (start + stretch).min(len);
            let sizes = [rows, len, inner, start, end].map(|v| v as i64);
            let control = self.control(&sizes);
            dispatch(self.gpu, &mut encoder, &pipeline, &control, &[x.buffer.clone(), output.clone()], rows)?;
            start = end;
        }
        self.gpu.queue.submit([encoder.finish()]);
        Ok(wrap(self.gpu, output, x.dtype, shape.clone()))
    }

    /// The position of each of `values` in the sorted 1-d `sorted`; see `wgsl::steps`.
    fn searchsorted(&self, sorted: &GpuStorage, values: &GpuStorage, side: Side) -> Result<DeviceArray> {
        if sorted.shape.len() != 1 || sorted.dtype != values.dtype {
            return Err(internal(format!(
                "a search in a sorted {} array of shape {:?} for {} values",
                sorted.dtype, sorted.shape, values.dtype
            )));
        }
        let count: u64 = values.shape.iter().map(|&d| d as u64).product();
        let output = self.buffer(DType::I64, &values.shape)?;
        if count == 0 {
            return Ok(wrap(self.gpu, output, DType::I64, values.shape.clone()));
        }
        let shader = wgsl::steps::searchsorted_shader(sorted.dtype, side, self.features)?;
        let pipeline = self.gpu.pipeline(&shader.source, &shader.writable, self.features)?;
        let control = self.control(&[sorted.shape[0] as i64, count as i64]);
        let mut encoder =
            self.gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("searchsorted") });
        let buffers = [sorted.buffer.clone(), values.buffer.clone(), output.clone()];
        dispatch(self.gpu, &mut encoder, &pipeline, &control, &buffers, count)?;
        self.gpu.queue.submit([encoder.finish()]);
        Ok(wrap(self.gpu, output, DType::I64, values.shape.clone()))
    }

    /// A storage buffer for an array of `dtype` and `shape`, or why the adapter cannot bind one.
    /// Every index a shader computes (`u32`) stays below its element count, which fits 32 bits.
    fn buffer(&self, dtype: DType, shape: &[usize]) -> Result<wgpu::Buffer> {
        let elements = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
        let bytes = elements.and_then(|n| n.checked_mul(storage_size(dtype) as u64));
        let limit = self.gpu.limits.max_storage_buffer_binding_size.min(self.gpu.limits.max_buffer_size);
        match (elements, bytes) {
            (Some(n), Some(bytes)) if n <= u32::MAX as u64 && bytes <= limit => {
                Ok(self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("pytato step result"),
                    size: bytes.max(16).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
                    usage: STORAGE_USAGE,
                    mapped_at_creation: false,
                }))
            }
            _ => Err(Error::Unsupported {
                backend: "wgpu".into(),
                reason: format!(
                    "a step's result of {dtype} and shape {shape:?} exceeds what the adapter binds ({limit} bytes per \
                     storage buffer, 2^32 elements per kernel)"
                ),
            }),
        }
    }

    /// A control block holding `sizes`, written before the next submission.
    fn control(&self, sizes: &[i64]) -> wgpu::Buffer {
        let bytes = control_block(sizes);
        let buffer = self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pytato step control"),
            size: bytes.len() as u64,
            usage: STORAGE_USAGE,
            mapped_at_creation: false,
        });
        self.gpu.queue.write_buffer(&buffer, 0, &bytes);
        buffer
    }
}

fn internal(message: String) -> Error {
    Error::Internal { backend: "wgpu".into(), message }
}
