//! Host steps as kernels on device data (`pytato_runtime::device::DeviceSteps`): a program in
//! phases run with `run_device` scans, searches, sorts, compacts and scatters its arrays where
//! they are, on the GPU, instead of copying them to the host and back. The shaders are
//! `wgsl::steps`; results are the host steps' bit for bit. A step this module declines (see
//! [`GpuSteps::sort`] and [`GpuSteps::scatter`]) runs on the host.
//!
//! Sorts are radix sorts of order-preserving integer keys (one pass per 4-bit digit), stable as
//! numpy's `stable` sort is.
//!
//! Like a run on device data, a step only enqueues its dispatches: nothing waits, except for the
//! count of a compaction, a length the host must know to size the result (8 bytes read back). A
//! scatter, the one step that reads positions from the data, records a position out of range in
//! its control block and leaves that to `crate::deferred`, as a run on device data does.

use std::sync::Arc;

use pytato_core::array::{ScanOp, ScatterMode, Side, SortResult};
use pytato_core::{DType, Error, Result};
use pytato_runtime::ArrayDataView;
use pytato_runtime::device::{DeviceArray, DeviceStep, DeviceSteps};

use crate::deferred::{Decode, RunStatus, input_statuses};
use crate::device::{Gpu, Pipeline};
use crate::resident::{GpuStorage, STORAGE_USAGE, map_for_reading, rewrap, upload, wrap};
use crate::run::{Passes, control_block};
use crate::wgsl::steps::Ranking;
use crate::wgsl::{self, ShaderFeatures, storage_size};

/// The block length of a scan in parallel (see [`GpuSteps::encode_scan_in_blocks`]): rows of
/// more than twice this many elements are scanned in blocks, in the order
/// `pytato_runtime::scan` defines.
const SCAN_BLOCK: u64 = pytato_runtime::scan::SCAN_BLOCK as u64;

/// The step kernels of one GPU, with the features its shaders may use.
pub(crate) struct GpuSteps {
    pub(crate) gpu: &'static Gpu,
    pub(crate) features: ShaderFeatures,
    /// How sort passes rank a block's items (see `Wgpu::workgroup_sorts`).
    pub(crate) ranking: Ranking,
}

impl DeviceSteps for GpuSteps {
    fn run(&self, step: DeviceStep, operands: &[&DeviceArray]) -> Option<Result<DeviceArray>> {
        let operands: Vec<&GpuStorage> = operands.iter().map(|a| GpuStorage::of(a, self.gpu)).collect::<Option<_>>()?;
        if !self.features.i64 {
            return None;
        }
        // What a failed run wrote is refused; the result of a step over what unread runs wrote
        // carries their statuses (see `crate::deferred`).
        let inputs = match input_statuses(operands.iter().map(|o| &o.status)) {
            Ok(inputs) => inputs,
            Err(e) => return Some(Err(e)),
        };
        let result = match step {
            DeviceStep::Scan { axis, op } => Some(self.scan(operands[0], axis, op)),
            DeviceStep::SearchSorted(side) => Some(self.searchsorted(operands[0], operands[1], side)),
            // A 0-d mask has no axis to list positions along: the host's rule.
            DeviceStep::Nonzero if operands[0].shape.is_empty() => None,
            DeviceStep::Nonzero => Some(self.nonzero(operands[0])),
            DeviceStep::Sort { axis, descending, result } => self.sort(operands[0], axis, descending, result),
            DeviceStep::Scatter(mode) => self.scatter(operands[0], operands[1], operands[2], mode, inputs.clone()),
            _ => None,
        };
        Some(result?.map(|array| with_inputs(array, self.gpu, inputs)))
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
        let mut commands = Passes::begin(self.gpu, "scan");
        self.encode_scan(&mut commands, &x.buffer, &output, x.dtype, &x.shape, axis, op)?;
        self.gpu.submit(commands.finish())?;
        Ok(wrap(self.gpu, output, x.dtype, x.shape.clone(), None))
    }

    /// Records the dispatches of a scan of `x` (of `dtype` and `shape`) along `axis` into `output`.
    #[allow(clippy::too_many_arguments)]
    fn encode_scan(
        &self,
        commands: &mut Passes,
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
        let pipeline = self.gpu.pipeline(&shader.label, &shader.source, &shader.writable, self.features)?;
        // Every scan but a float product runs long rows in blocks (`pytato_runtime::scan`).
        let in_blocks = op == ScanOp::Sum || !dtype.is_inexact();
        if in_blocks && len > 2 * SCAN_BLOCK {
            return self.encode_scan_in_blocks(commands, &pipeline, x, output, dtype, (rows / inner, len, inner), op);
        }
        // One loop of `end - start` trips, which costs one more (its last exit test): under a
        // driver's cap on the iterations of an invocation, each dispatch scans a stretch the cap
        // allows, with a margin (see `wgsl::loops`).
        let stretch = self.gpu.loop_limit.map_or(len, |limit| limit.saturating_sub(16).max(1));
        let mut start = 0;
        while start < len {
            let end = (start + stretch).min(len);
            let control = self.control(&[rows, len, inner, start, end, len].map(|v| v as i64))?;
            commands.dispatch_with(self.gpu, &pipeline, &control, &[x.clone(), output.clone()], rows)?;
            start = end;
        }
        Ok(())
    }

    /// A scan of `x`, of shape `(outer, len, inner)` along its middle axis, in parallel (an
    /// integer scan, or a float sum): blocks of [`SCAN_BLOCK`] scanned from their first element,
    /// their totals gathered and scanned (recursively), then each block combined with the total
    /// of the blocks before it, `before + running`, the order of `pytato_runtime::scan`.
    #[allow(clippy::too_many_arguments)]
    fn encode_scan_in_blocks(
        &self,
        commands: &mut Passes,
        scan: &Pipeline,
        x: &wgpu::Buffer,
        output: &wgpu::Buffer,
        dtype: DType,
        (outer, len, inner): (u64, u64, u64),
        op: ScanOp,
    ) -> Result<()> {
        let blocks = len.div_ceil(SCAN_BLOCK);
        let elements = outer * len * inner;
        let control = self.control(&[outer * inner, len, inner, 0, len, SCAN_BLOCK].map(|v| v as i64))?;
        commands.dispatch_with(self.gpu, scan, &control, &[x.clone(), output.clone()], outer * inner * blocks)?;
        let totals_shape = [outer as usize, blocks as usize, inner as usize];
        let totals = self.buffer(dtype, &totals_shape)?;
        let scanned = self.buffer(dtype, &totals_shape)?;
        let sizes = |count: u64| self.control(&[count, len, inner, blocks].map(|v| v as i64));
        let gather = wgsl::steps::block_totals_shader(dtype, self.features)?;
        let gather = self.gpu.pipeline(&gather.label, &gather.source, &gather.writable, self.features)?;
        let count = outer * blocks * inner;
        commands.dispatch_with(self.gpu, &gather, &sizes(count)?, &[output.clone(), totals.clone()], count)?;
        self.encode_scan(commands, &totals, &scanned, dtype, &totals_shape, 1, op)?;
        let offsets = wgsl::steps::block_offsets_shader(dtype, op, self.features)?;
        let offsets = self.gpu.pipeline(&offsets.label, &offsets.source, &offsets.writable, self.features)?;
        commands.dispatch_with(self.gpu, &offsets, &sizes(elements)?, &[scanned, output.clone()], elements)
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
            return Ok(wrap(self.gpu, self.buffer(DType::I64, &[ndim, 0])?, DType::I64, vec![ndim, 0], None));
        }
        let counts = self.buffer(DType::I64, &[blocks as usize])?;
        let offsets = self.buffer(DType::I64, &[blocks as usize])?;
        let mut commands = Passes::begin(self.gpu, "nonzero");
        let count_shader = wgsl::steps::mask_counts_shader();
        let count_pipeline =
            self.gpu.pipeline(&count_shader.label, &count_shader.source, &count_shader.writable, self.features)?;
        let control = self.control(&[n as i64, blocks as i64])?;
        commands.dispatch_with(self.gpu, &count_pipeline, &control, &[mask.handle(), counts.clone()], blocks)?;
        self.encode_scan(&mut commands, &counts, &offsets, DType::I64, &[blocks as usize], 0, ScanOp::Sum)?;
        // The count: the last running count, read back.
        let staging = self.gpu.staging_buffer(8, wgpu::MapMode::Read, "pytato nonzero count")?;
        commands.encoder().copy_buffer_to_buffer(&offsets, (blocks - 1) * 8, &staging, 0, 8);
        self.gpu.submit(commands.finish())?;
        map_for_reading(self.gpu, &staging, 8)?;
        let count = {
            let view = staging.slice(..8).get_mapped_range().map_err(|e| internal(format!("reading a count: {e}")))?;
            i64::from_le_bytes(view[..8].try_into().expect("8 bytes"))
        };
        staging.unmap();
        // (A mask a failed run computed gives a count of at most its length; the positions carry
        // that run's status, see `GpuSteps::run`.)
        let count = usize::try_from(count).map_err(|_| internal(format!("a mask with {count} true elements")))?;
        let shape = vec![ndim, count];
        let output = self.buffer(DType::I64, &shape)?;
        if count > 0 {
            let shader = wgsl::steps::mask_positions_shader(ndim);
            let pipeline = self.gpu.pipeline(&shader.label, &shader.source, &shader.writable, self.features)?;
            let mut sizes = vec![n as i64, blocks as i64, count as i64];
            sizes.extend(mask.shape.iter().map(|&d| d as i64));
            let control = self.control(&sizes)?;
            let mut commands = Passes::begin(self.gpu, "nonzero");
            let buffers = [mask.handle(), offsets, output.clone()];
            commands.dispatch_with(self.gpu, &pipeline, &control, &buffers, blocks)?;
            self.gpu.submit(commands.finish())?;
        }
        Ok(wrap(self.gpu, output, DType::I64, shape, None))
    }

    /// `x` sorted stably along `axis` in numpy's order, or the `int64` indices along `axis` that
    /// sort it: a radix sort, one pass per digit of the elements' keys, least significant first
    /// (each pass counts the digits of every block of a row, scans the counts into places and
    /// moves each element to its place, keeping the order of equal digits), then the result
    /// written from the final order; see `wgsl::steps`. `None` (the host sorts) where the counts,
    /// 16 per block of a row, exceed what the adapter binds.
    fn sort(&self, x: &GpuStorage, axis: usize, descending: bool, result: SortResult) -> Option<Result<DeviceArray>> {
        if axis >= x.shape.len() {
            return Some(Err(internal(format!("a sort along axis {axis} of an array of shape {:?}", x.shape))));
        }
        let n: u64 = x.shape.iter().map(|&d| d as u64).product();
        let len = x.shape[axis] as u64;
        let blocks = if n == 0 { 0 } else { n / len * len.div_ceil(wgsl::steps::SORT_BLOCK as u64) };
        let counts = usize::try_from(blocks * 16).ok()?;
        if !self.fits(DType::U32, &[counts]) {
            return None;
        }
        Some(self.sort_in_passes(x, (n, len, blocks), axis, descending, result))
    }

    /// [`GpuSteps::sort`] of `x`, of `n` elements whose sorted axis is `len` long, in `blocks`
    /// blocks of rows.
    fn sort_in_passes(
        &self,
        x: &GpuStorage,
        (n, len, blocks): (u64, u64, u64),
        axis: usize,
        descending: bool,
        result: SortResult,
    ) -> Result<DeviceArray> {
        let dtype = match result {
            SortResult::Values => x.dtype,
            SortResult::Indices => DType::I64,
        };
        let output = self.buffer(dtype, &x.shape)?;
        if n == 0 {
            return Ok(wrap(self.gpu, output, dtype, x.shape.clone(), None));
        }
        let inner: u64 = x.shape[axis + 1..].iter().map(|&d| d as u64).product();
        let mut commands = Passes::begin(self.gpu, "sort");
        let digits = wgsl::steps::sort_digits(x.dtype);
        let (order, values) =
            self.encode_radix_sort(&mut commands, &x.buffer, x.dtype, (n, len, inner, blocks), digits, descending)?;
        let write = wgsl::steps::sort_result_shader(x.dtype, result, self.features)?;
        let write = self.gpu.pipeline(&write.label, &write.source, &write.writable, self.features)?;
        let control = self.control(&[n as i64, len as i64, inner as i64])?;
        let sorted = match result {
            SortResult::Values => values,
            SortResult::Indices => order,
        };
        commands.dispatch_with(self.gpu, &write, &control, &[sorted, output.clone()], n)?;
        self.gpu.submit(commands.finish())?;
        Ok(wrap(self.gpu, output, dtype, x.shape.clone(), None))
    }

    /// Records a stable radix sort of the `n` items of `x` (of `dtype`), rows of `len` along an
    /// axis followed by axes of `inner` elements, in `blocks` blocks of [`wgsl::steps::SORT_BLOCK`]
    /// items of a row, by the `digits` least significant digits of their keys (see
    /// [`GpuSteps::sort`]). Returns the final order (for each item, the flat index of its element)
    /// and the items' values in it: each pass moves an item's value with its element, so that the
    /// next one reads values in order rather than from anywhere in `x`.
    fn encode_radix_sort(
        &self,
        commands: &mut Passes,
        x: &wgpu::Buffer,
        dtype: DType,
        (n, len, inner, blocks): (u64, u64, u64, u64),
        digits: u32,
        descending: bool,
    ) -> Result<(wgpu::Buffer, wgpu::Buffer)> {
        let counts_len = [blocks as usize * 16];
        let (counts, places) = (self.buffer(DType::U32, &counts_len)?, self.buffer(DType::U32, &counts_len)?);
        // The order and the values after each pass, alternately in one and the other.
        let orders = [self.buffer(DType::U32, &[n as usize])?, self.buffer(DType::U32, &[n as usize])?];
        let values = [self.buffer(dtype, &[n as usize])?, self.buffer(dtype, &[n as usize])?];
        let count = wgsl::steps::sort_counts_shader(dtype, self.ranking, self.features)?;
        let count = self.gpu.pipeline(&count.label, &count.source, &count.writable, self.features)?;
        let place = wgsl::steps::sort_place_shader(dtype, self.ranking, self.features)?;
        let place = self.gpu.pipeline(&place.label, &place.source, &place.writable, self.features)?;
        let per_row = len.div_ceil(wgsl::steps::SORT_BLOCK as u64);
        // At least one pass, which also writes the first order.
        let digits = digits.max(1) as usize;
        for digit in 0..digits {
            let (order, next) = (&orders[digit % 2], &orders[(digit + 1) % 2]);
            let (vals, next_vals) = (&values[digit % 2], &values[(digit + 1) % 2]);
            let sizes = [blocks, len, inner, per_row, digit as u64, u64::from(digit == 0), u64::from(descending)];
            let control = self.control(&sizes.map(|v| v as i64))?;
            let buffers = [x.clone(), vals.clone(), counts.clone()];
            let invocations = self.ranking.invocations(blocks);
            commands.dispatch_with(self.gpu, &count, &control, &buffers, invocations)?;
            self.encode_scan(commands, &counts, &places, DType::U32, &counts_len, 0, ScanOp::Sum)?;
            let buffers = [x.clone(), order.clone(), vals.clone(), places.clone(), next.clone(), next_vals.clone()];
            commands.dispatch_with(self.gpu, &place, &control, &buffers, invocations)?;
        }
        let last = digits % 2;
        Ok((orders[last].clone(), values[last].clone()))
    }

    /// `array` with `values` set at (or added at) the flat `positions`, in the host's order (see
    /// `wgsl::steps`): positions checked and made slots, the writes sorted stably by slot, each
    /// slot's writes applied by one invocation. A position out of range is recorded in the control
    /// block, reported at the next wait (see `crate::deferred`). `None` (the host scatters) for
    /// values of another dtype set (which no scatter node holds: `Array::new_scatter` refuses it)
    /// and for counts that exceed what the adapter binds.
    fn scatter(
        &self,
        array: &GpuStorage,
        positions: &GpuStorage,
        values: &GpuStorage,
        mode: ScatterMode,
        inputs: Vec<Arc<RunStatus>>,
    ) -> Option<Result<DeviceArray>> {
        let m: u64 = positions.shape.iter().map(|&d| d as u64).product();
        let blocks = m.div_ceil(wgsl::steps::SORT_BLOCK as u64);
        if mode == ScatterMode::Set && values.dtype != array.dtype {
            return None;
        }
        if !self.fits(DType::U32, &[usize::try_from(blocks * 16).ok()?]) {
            return None;
        }
        Some(self.scatter_sorted(array, positions, values, mode, (m, blocks), inputs))
    }

    /// [`GpuSteps::scatter`] of `m` writes, sorted in `blocks` blocks.
    fn scatter_sorted(
        &self,
        array: &GpuStorage,
        positions: &GpuStorage,
        values: &GpuStorage,
        mode: ScatterMode,
        (m, blocks): (u64, u64),
        inputs: Vec<Arc<RunStatus>>,
    ) -> Result<DeviceArray> {
        if positions.dtype != DType::I64 || positions.shape != values.shape {
            return Err(internal(format!(
                "a scatter of {} values of shape {:?} at {} positions of shape {:?}",
                values.dtype, values.shape, positions.dtype, positions.shape
            )));
        }
        let length: u64 = array.shape.iter().map(|&d| d as u64).product();
        let output = self.buffer(array.dtype, &array.shape)?;
        let mut commands = Passes::begin(self.gpu, "scatter");
        commands.encoder().copy_buffer_to_buffer(
            &array.buffer,
            0,
            &output,
            0,
            length * storage_size(array.dtype) as u64,
        );
        if m > 0 {
            let slots = self.buffer(DType::U32, &[m as usize])?;
            let pipeline = |shader: wgsl::Shader| {
                self.gpu.pipeline(&shader.label, &shader.source, &shader.writable, self.features)
            };
            let checks = self.control(&[m as i64, length as i64])?;
            let slot_pipeline = pipeline(wgsl::steps::scatter_slots_shader())?;
            commands.dispatch_with(self.gpu, &slot_pipeline, &checks, &[positions.handle(), slots.clone()], m)?;
            let error = pipeline(wgsl::steps::scatter_error_shader())?;
            commands.dispatch_with(self.gpu, &error, &checks, std::slice::from_ref(&positions.buffer), 1)?;
            // Slots up to `length` (one past the end: a position out of range).
            let digits = (u64::BITS - length.leading_zeros()).div_ceil(4);
            let (order, sorted) =
                self.encode_radix_sort(&mut commands, &slots, DType::U32, (m, m, 1, blocks), digits, false)?;
            let buffers = [sorted, order, values.handle(), output.clone()];
            match mode {
                ScatterMode::Set => {
                    let set = pipeline(wgsl::steps::scatter_set_shader(array.dtype, self.features)?)?;
                    let control = self.control(&[m as i64, length as i64])?;
                    commands.dispatch_with(self.gpu, &set, &control, &buffers, m)?;
                }
                ScatterMode::Add => {
                    let shader = wgsl::steps::scatter_add_shader(array.dtype, values.dtype, self.features)?;
                    let constants = self.gpu.constant_table(&shader.constants)?;
                    let buffers: Vec<wgpu::Buffer> = buffers.into_iter().chain(constants).collect();
                    let add = pipeline(shader)?;
                    // Each invocation walks at most a stretch a driver's loop cap allows (with a
                    // margin, see `wgsl::loops`); each dispatch continues the sums of the last.
                    let stretch = self.gpu.loop_limit.map_or(m, |limit| limit.saturating_sub(16).max(1));
                    let mut lo = 0;
                    while lo < m {
                        let hi = (lo + stretch).min(m);
                        let control = self.control(&[m, length, lo, hi].map(|v| v as i64))?;
                        commands.dispatch_with(self.gpu, &add, &control, &buffers, hi - lo)?;
                        lo = hi;
                    }
                }
            }
            let decode: Decode = Arc::new(|header: &[u8]| {
                let long = |at: usize| i64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
                (header[..4] != [0; 4]).then(|| Error::IndexOutOfBounds {
                    op: "scatter".into(),
                    index: long(16),
                    axis: 0,
                    length: long(24) as usize,
                })
            });
            let status = self.gpu.checks.defer(self.gpu, commands.encoder(), &checks, decode, inputs)?;
            self.gpu.submit(commands.finish())?;
            return Ok(wrap(self.gpu, output, array.dtype, array.shape.clone(), Some(status)));
        }
        self.gpu.submit(commands.finish())?;
        Ok(wrap(self.gpu, output, array.dtype, array.shape.clone(), None))
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
            return Ok(wrap(self.gpu, output, DType::I64, values.shape.clone(), None));
        }
        let shader = wgsl::steps::searchsorted_shader(sorted.dtype, side, self.features)?;
        let pipeline = self.gpu.pipeline(&shader.label, &shader.source, &shader.writable, self.features)?;
        let control = self.control(&[sorted.shape[0] as i64, count as i64])?;
        let mut commands = Passes::begin(self.gpu, "searchsorted");
        let buffers = [sorted.handle(), values.handle(), output.clone()];
        commands.dispatch_with(self.gpu, &pipeline, &control, &buffers, count)?;
        self.gpu.submit(commands.finish())?;
        Ok(wrap(self.gpu, output, DType::I64, values.shape.clone(), None))
    }

    /// A storage buffer for an array of `dtype` and `shape`, or why the adapter cannot bind one.
    /// Every index a shader computes (`u32`) stays below its element count, which fits 32 bits.
    fn buffer(&self, dtype: DType, shape: &[usize]) -> Result<wgpu::Buffer> {
        match self.bytes(dtype, shape) {
            // A new buffer, never a spare (`crate::spare`): the steps' shaders were written
            // against wgpu's zero-filled new buffers, and not each was checked to write all it
            // reads.
            Some(bytes) => {
                let descriptor = wgpu::BufferDescriptor {
                    label: Some("pytato step result"),
                    size: bytes.max(16).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT),
                    usage: STORAGE_USAGE,
                    mapped_at_creation: false,
                };
                self.gpu.create_buffer(&descriptor, || format!("a step's array ({dtype} of shape {shape:?})"))
            }
            None => Err(Error::Unsupported {
                backend: "wgpu".into(),
                reason: format!(
                    "a step's result of {dtype} and shape {shape:?} exceeds what the adapter binds ({} bytes per \
                     storage buffer, 2^32 elements per kernel)",
                    self.binding_limit()
                ),
            }),
        }
    }

    /// Whether the adapter binds a storage buffer of `dtype` and `shape` (see [`GpuSteps::buffer`]).
    fn fits(&self, dtype: DType, shape: &[usize]) -> bool {
        self.bytes(dtype, shape).is_some()
    }

    /// The bytes of a storage buffer of `dtype` and `shape`, if the adapter binds one and its
    /// element count fits 32 bits.
    fn bytes(&self, dtype: DType, shape: &[usize]) -> Option<u64> {
        let elements = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))?;
        let bytes = elements.checked_mul(storage_size(dtype) as u64)?;
        (elements <= u32::MAX as u64 && bytes <= self.binding_limit()).then_some(bytes)
    }

    /// The largest storage buffer the adapter binds, in bytes.
    fn binding_limit(&self) -> u64 {
        self.gpu.limits.max_storage_buffer_binding_size.min(self.gpu.limits.max_buffer_size)
    }

    /// A control block holding `sizes`, written before the next submission.
    fn control(&self, sizes: &[i64]) -> Result<wgpu::Buffer> {
        let bytes = control_block(sizes);
        let descriptor = wgpu::BufferDescriptor {
            label: Some("pytato step control"),
            size: bytes.len() as u64,
            usage: STORAGE_USAGE,
            mapped_at_creation: false,
        };
        let buffer = self.gpu.create_buffer(&descriptor, || "a step's control block".into())?;
        self.gpu.write_buffer(&buffer, &bytes, || "a step's control block".into())?;
        Ok(buffer)
    }
}

/// `array`, the result of a step over arrays of the `inputs` statuses, carrying them (a scatter's
/// result carries its own run's status, linked to them already).
fn with_inputs(array: DeviceArray, gpu: &'static Gpu, inputs: Vec<Arc<RunStatus>>) -> DeviceArray {
    match GpuStorage::of(&array, gpu) {
        Some(storage) if storage.status.is_none() && !inputs.is_empty() => rewrap(storage, RunStatus::derived(inputs)),
        _ => array,
    }
}

fn internal(message: String) -> Error {
    Error::Internal { backend: "wgpu".into(), message }
}
