//! Host steps as kernels on device data (`pytato_runtime::device::DeviceSteps`): a program in
//! phases run with `run_device` scans, searches and compacts its arrays where they are, on the
//! GPU, instead of copying them to the host and back. The shaders are `wgsl::steps`; results are
//! the host steps' bit for bit. Steps without a kernel here (sorts, scatters) run on the host.
//!
//! Like a run on device data, a step only enqueues its dispatches: nothing waits, except for the
//! count of a compaction, a length the host must know to size the result (8 bytes read back). No
//! step can fail on the device (no index is read from the data), so none leaves a check to
//! `crate::deferred`.

use pytato_core::array::{ScanOp, Side};
use pytato_core::{DType, Error, Result};
use pytato_runtime::ArrayDataView;
use pytato_runtime::device::{DeviceArray, DeviceStep, DeviceSteps};

use crate::device::{Gpu, Pipeline};
use crate::resident::{GpuStorage, STORAGE_USAGE, map_for_reading, upload, wrap};
use crate::run::{control_block, dispatch};
use crate::wgsl::{self, ShaderFeatures, storage_size};

/// The block length of an integer scan in parallel (see [`GpuSteps::encode_scan_in_blocks`]):
/// rows of more than twice this many elements are scanned in blocks.
const SCAN_BLOCK: u64 = 1024;

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
            // A 0-d mask has no axis to list positions along: the host's rule.
            DeviceStep::Nonzero if operands[0].shape.is_empty() => None,
            DeviceStep::Nonzero => Some(self.nonzero(operands[0])),
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
        if axis >= x.shape.len() {
            return Err(internal(format!("a scan along axis {axis} of an array of shape {:?}", x.shape)));
        }
        let output = self.buffer(x.dtype, &x.shape)?;
        let mut encoder =
            self.gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("scan") });
        self.encode_scan(&mut encoder, &x.buffer, &output, x.dtype, &x.shape, axis, op)?;
        self.gpu.queue.submit([encoder.finish()]);
        Ok(wrap(self.gpu, output, x.dtype, x.shape.clone()))
    }

    /// Records the dispatches of a scan of `x` (of `dtype` and `shape`) along `axis` into `output`.
    #[allow(clippy::too_many_arguments)]
    fn encode_scan(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        x: &wgpu::Buffer,
        output: &wgpu::Buffer,
        dtype: DType,
        shape: &[usize],
        axis: usize,
        op: ScanOp,
    ) -> Result<()> {
        let len = shape[axis] as u64;
        let inner: u64 = shape[axis + 1..].iter().map(|&d| d as u64).product();
        let rows: u64 = shape[..axis].iter().map(|&d| d as u64).product::<u64>() * inner;
        if rows * len == 0 {
            return Ok(());
        }
        let shader = wgsl::steps::scan_shader(dtype, op, self.features)?;
        let pipeline = self.gpu.pipeline(&shader.source, &shader.writable, self.features)?;
        let integer = !dtype.is_inexact() && dtype != DType::Bool;
        if integer && len > 2 * SCAN_BLOCK {
            return self.encode_scan_in_blocks(encoder, &pipeline, x, output, dtype, (rows / inner, len, inner), op);
        }
        // One loop of `end - start` trips, which costs one more (its last exit test): under a
        // driver's cap on the iterations of an invocation, each dispatch scans a stretch the cap
        // allows, with a margin (see `wgsl::loops`).
        let stretch = self.gpu.loop_limit.map_or(len, |limit| limit.saturating_sub(16).max(1));
        let mut start = 0;
        while start < len {
            let end = (start + stretch).min(len);
            let control = self.control(&[rows, len, inner, start, end, len].map(|v| v as i64));
            dispatch(self.gpu, encoder, &pipeline, &control, &[x.clone(), output.clone()], rows)?;
            start = end;
        }
        Ok(())
    }

    /// An integer scan of `x`, of shape `(outer, len, inner)` along its middle axis, in parallel:
    /// blocks of [`SCAN_BLOCK`] scanned from their first element, their totals gathered and
    /// scanned (recursively), then each block combined with the total of the blocks before it.
    #[allow(clippy::too_many_arguments)]
    fn encode_scan_in_blocks(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        scan: &Pipeline,
        x: &wgpu::Buffer,
        output: &wgpu::Buffer,
        dtype: DType,
        (outer, len, inner): (u64, u64, u64),
        op: ScanOp,
    ) -> Result<()> {
        let blocks = len.div_ceil(SCAN_BLOCK);
        let elements = outer * len * inner;
        let control = self.control(&[outer * inner, len, inner, 0, len, SCAN_BLOCK].map(|v| v as i64));
        dispatch(self.gpu, encoder, scan, &control, &[x.clone(), output.clone()], outer * inner * blocks)?;
        let totals_shape = [outer as usize, blocks as usize, inner as usize];
        let totals = self.buffer(dtype, &totals_shape)?;
        let scanned = self.buffer(dtype, &totals_shape)?;
        let sizes = |count: u64| self.control(&[count, len, inner, blocks, SCAN_BLOCK].map(|v| v as i64));
        let gather = wgsl::steps::block_totals_shader(dtype, self.features)?;
        let gather = self.gpu.pipeline(&gather.source, &gather.writable, self.features)?;
        let count = outer * blocks * inner;
        dispatch(self.gpu, encoder, &gather, &sizes(count), &[output.clone(), totals.clone()], count)?;
        self.encode_scan(encoder, &totals, &scanned, dtype, &totals_shape, 1, op)?;
        let offsets = wgsl::steps::block_offsets_shader(dtype, op, self.features)?;
        let offsets = self.gpu.pipeline(&offsets.source, &offsets.writable, self.features)?;
        dispatch(self.gpu, encoder, &offsets, &sizes(elements), &[scanned, output.clone()], elements)
    }

    /// The row-major positions of the `true` elements of `mask`, `int64` of shape
    /// `(ndim, count)`: blocks counted, the counts scanned, the count read back (the one wait:
    /// the result's length), then each block's positions written; see `wgsl::steps`.
    fn nonzero(&self, mask: &GpuStorage) -> Result<DeviceArray> {
        let ndim = mask.shape.len();
        if mask.dtype != DType::Bool {
            return Err(internal(format!("a nonzero step got a {} mask", mask.dtype)));
        }
        let n: u64 = mask.shape.iter().map(|&d| d as u64).product();
        let blocks = n.div_ceil(wgsl::steps::MASK_BLOCK as u64);
        if blocks == 0 {
            return Ok(wrap(self.gpu, self.buffer(DType::I64, &[ndim, 0])?, DType::I64, vec![ndim, 0]));
        }
        let counts = self.buffer(DType::I64, &[blocks as usize])?;
        let offsets = self.buffer(DType::I64, &[blocks as usize])?;
        let mut encoder =
            self.gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("nonzero") });
        let count_shader = wgsl::steps::mask_counts_shader();
        let count_pipeline = self.gpu.pipeline(&count_shader.source, &count_shader.writable, self.features)?;
        let control = self.control(&[n as i64, blocks as i64]);
        dispatch(self.gpu, &mut encoder, &count_pipeline, &control, &[mask.buffer.clone(), counts.clone()], blocks)?;
        self.encode_scan(&mut encoder, &counts, &offsets, DType::I64, &[blocks as usize], 0, ScanOp::Sum)?;
        // The count: the last running count, read back.
        let staging = self.gpu.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pytato nonzero count"),
            size: 8,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(&offsets, (blocks - 1) * 8, &staging, 0, 8);
        self.gpu.queue.submit([encoder.finish()]);
        map_for_reading(self.gpu, &staging, 8)?;
        let count = {
            let view = staging.slice(..8).get_mapped_range().map_err(|e| internal(format!("reading a count: {e}")))?;
            i64::from_le_bytes(view[..8].try_into().expect("8 bytes"))
        };
        staging.unmap();
        let count = usize::try_from(count).map_err(|_| internal(format!("a mask with {count} true elements")))?;
        let shape = vec![ndim, count];
        let output = self.buffer(DType::I64, &shape)?;
        if count > 0 {
            let shader = wgsl::steps::mask_positions_shader(ndim);
            let pipeline = self.gpu.pipeline(&shader.source, &shader.writable, self.features)?;
            let mut sizes = vec![n as i64, blocks as i64, count as i64];
            sizes.extend(mask.shape.iter().map(|&d| d as i64));
            let control = self.control(&sizes);
            let mut encoder =
                self.gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("nonzero") });
            let buffers = [mask.buffer.clone(), offsets, output.clone()];
            dispatch(self.gpu, &mut encoder, &pipeline, &control, &buffers, blocks)?;
            self.gpu.queue.submit([encoder.finish()]);
        }
        Ok(wrap(self.gpu, output, DType::I64, shape))
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
