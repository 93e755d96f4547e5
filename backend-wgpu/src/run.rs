//! Running a compiled program: buffers, dispatches, readback, errors.
//!
//! A run binds and checks the inputs ([`Signature::bind`]), sizes every buffer, reuses the GPU
//! buffers of the previous run where they are large enough (wrapped data is uploaded once),
//! copies the host inputs in through the program's staging buffer (`crate::upload`), records
//! every kernel into the same command buffer, copies the outputs and the control block into one
//! readback buffer, and waits for the mapping with a blocking `Device::poll` (no busy-waiting).
//! An out-of-range subscript recorded in the control block is [`Error::IndexOutOfBounds`].

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use pytato_core::array::DataRef;
use pytato_core::expr::Reduce;
use pytato_core::{ArrayData, Error, Result};
use pytato_runtime::ArrayDataView;
use pytato_runtime::backend::{NamedData, NamedViews, NamedViewsMut};
use pytato_runtime::binding::{Bound, Signature};
use pytato_runtime::device::{DeviceArray, DeviceInput, NamedDeviceArrays, NamedDeviceInputs};
use pytato_transform::kernel::{BufferId, BufferKind, Kernel, KernelProgram};

use crate::Wgpu;
use crate::bind::BindGroups;
use crate::deferred::{CONTROL_HEADER, Decode, RunStatus, input_statuses};
use crate::device::{Gpu, Pipeline};
use crate::resident::{GpuStorage, STORAGE_USAGE, map_for_reading, wrap};
use crate::transfer::{StorageBytes, bytes_into, from_bytes, to_bytes};
use crate::upload::{UploadStaging, upload};
use crate::wgsl::{self, IndexBounds, LoopPlan, TILE, Tiled, WORKGROUP_SIZE, storage_size};

/// Where the control block holds the current chunk of a kernel's output elements: `base` and
/// `slots`, two `u32` after the error record and `zero` (see `wgsl::Translator::main`).
const CHUNK_OFFSET: u64 = 40;
/// Where the control block holds the pass of a tree stage, `level` (a `u32` in the error
/// record's padding; see `wgsl::Translator::tree_stage`).
const LEVEL_OFFSET: u64 = 12;
/// The run's control table (see `execute`): `(0, 0)` to restore one chunk of all elements, then
/// the tree levels 0, 1 and 2, then the chunks' `(base, slots)` pairs, as `u32`.
const CONTROL_TABLE_HEADER: [u32; 5] = [0, 0, 0, 1, 2];
/// Where level `L` is in the control table: `LEVELS_AT + 4 L`.
const LEVELS_AT: u64 = 8;
/// Where the control block holds `coarse`, the log2 of the blocks per partial result of every
/// block-sums shader of the run (a `u32` after the chunk; see `wgsl::partial_count`).
const COARSE_OFFSET: usize = 48;
/// Offset of `sizes` in the control block (after `coarse` and 4 bytes of padding).
const SIZES_OFFSET: usize = 56;

/// One kernel ready to dispatch.
pub(crate) struct CompiledKernel {
    pub(crate) kernel: Kernel,
    /// Bound at `@binding(1)`, … in this order.
    pub(crate) buffers: Vec<BufferId>,
    pub(crate) pipeline: Arc<Pipeline>,
    /// Dispatched before the kernel, in this order: the block sums of its split reductions,
    /// bound after `buffers` in the kernel's shader.
    pub(crate) block_sums: Vec<CompiledBlockSums>,
    /// The loop statements of its shader.
    pub(crate) loops: LoopPlan,
    /// Set when the kernel is a matrix product in tiles: one workgroup per tile of the output.
    pub(crate) tiled: Option<Tiled>,
    /// The shader's constant table, bound last (see `wgsl::Shader::constants`).
    pub(crate) constants: Option<wgpu::Buffer>,
    /// Whether its shaders compute indices in 32 bits (see `KernelChoices`).
    pub(crate) narrow: bool,
    /// The block-sums shaders in runs of `2^coarse` blocks (see `wgsl::run_shaders`), in the
    /// order of `block_sums` (`None` for a carried product), compiled by the first run whose
    /// block sums of one element would not fit in a buffer.
    pub(crate) runs: OnceLock<Vec<Option<StageShader>>>,
}

/// A compiled shader of a reduction's stages: its pipeline, its constant table (bound last) and
/// its loop statements.
pub(crate) type StageShader = (Arc<Pipeline>, Option<wgpu::Buffer>, LoopPlan);

/// A kernel's compiled forms: with 64-bit indices (where the device has `SHADER_INT64`) and with
/// 32-bit ones (where the kernel is `wgsl::narrowable`, with the bounds a run checks); a run takes
/// the 32-bit one when its sizes fit.
///
/// A driver compiles each pipeline when it is created (NVIDIA's takes tens of milliseconds for a
/// kernel of DG), and most runs take the 32-bit form. So the 64-bit one is compiled with the
/// program only where it is the sole form, and otherwise by the first run whose sizes need it.
pub(crate) struct KernelChoices {
    pub(crate) wide: Option<OnceLock<CompiledKernel>>,
    pub(crate) narrow: Option<(CompiledKernel, IndexBounds)>,
}

/// What `cell` holds (a kernel's form), compiled by `compile` if it is not yet. (Two threads may
/// both compile it; one result is kept, and the pipeline cache shares their pipelines.)
fn compiled_once<T>(cell: &OnceLock<T>, compile: impl FnOnce() -> Result<T>) -> Result<&T> {
    if let Some(compiled) = cell.get() {
        return Ok(compiled);
    }
    let compiled = compile()?;
    Ok(cell.get_or_init(|| compiled))
}

impl KernelChoices {
    /// The form of the width the sizes `bound` gives and the buffer shapes `shapes` need;
    /// `compile_wide` compiles the 64-bit form if it is needed and not compiled yet.
    fn choose(
        &self,
        program: &KernelProgram,
        bound: &Bound<'_>,
        shapes: &[Vec<usize>],
        compile_wide: impl FnOnce() -> Result<CompiledKernel>,
    ) -> Result<&CompiledKernel> {
        if let Some((narrow, bounds)) = &self.narrow
            && bounds.fits(&|d| bound.eval(d), shapes)?
        {
            return Ok(narrow);
        }
        let Some(wide) = &self.wide else {
            let kernel =
                self.narrow.as_ref().map_or("a kernel".to_string(), |(k, _)| program.describe_buffer(k.kernel.output));
            return Err(Error::Unsupported {
                backend: "wgpu".into(),
                reason: format!(
                    "the kernel writing {kernel} needs 64-bit indices for these sizes (an index, size or buffer \
                     length reaches 2^31), and this adapter lacks SHADER_INT64"
                ),
            });
        };
        compiled_once(wide, compile_wide)
    }
}

/// The stages of one split reduction (see `wgsl::split_reductions`): its block sums, then their
/// tree (see `wgsl::BlockSums`).
pub(crate) struct CompiledBlockSums {
    pub(crate) pipeline: Arc<Pipeline>,
    pub(crate) reduce: Arc<Reduce>,
    /// Bytes per block sum.
    pub(crate) element_size: usize,
    /// The shader's constant table, bound last.
    pub(crate) constants: Option<wgpu::Buffer>,
    /// The tree stage: its pipeline, constant table and loop statements; `None` for a carried
    /// product (see `wgsl::BlockSums`).
    pub(crate) tree: Option<StageShader>,
    /// The loop statements of the block-sums shader.
    pub(crate) loops: LoopPlan,
}

impl CompiledBlockSums {
    /// The number of terms of the reduction, for sizes `bound` gives.
    fn terms(&self, bound: &Bound<'_>) -> Result<u64> {
        self.reduce.inames.iter().try_fold(1u64, |n, b| {
            let extent = (bound.eval(&b.upper)? - bound.eval(&b.lower)?).max(0) as u64;
            Ok(n.saturating_mul(extent))
        })
    }

    /// The slots of the partial results buffer for `elements` output elements: a carried
    /// product's product so far and count of chunks per element, else a partial result per
    /// element and run of `2^coarse` blocks.
    fn partials_slots(&self, elements: u64, bound: &Bound<'_>, coarse: u32) -> Result<u64> {
        Ok(match self.tree {
            None => elements.saturating_mul(2),
            Some(_) => elements.saturating_mul(wgsl::partial_count(wgsl::block_count(self.terms(bound)?), coarse)),
        })
    }

    /// The bytes of that buffer.
    fn partials_bytes(&self, elements: u64, bound: &Bound<'_>, coarse: u32) -> Result<u64> {
        Ok(self.partials_slots(elements, bound, coarse)?.saturating_mul(self.element_size as u64))
    }
}

/// The blocks per partial result of the block-sums shaders of a run, as `coarse` (`2^coarse`
/// blocks, see `wgsl::partial_count`): 0 (one block each, the most parallel) where the block
/// sums of one output element of every split reduction of `kernels` fit in `limit` bytes, else
/// the least that makes their partial results fit. `Unsupported` where a reduction has more
/// blocks than the shaders count in 32 bits (2^39 terms).
fn coarse_for(program: &KernelProgram, kernels: &[&CompiledKernel], bound: &Bound<'_>, limit: u64) -> Result<u32> {
    let mut coarse = 0;
    for kernel in kernels {
        for stage in kernel.block_sums.iter().filter(|stage| stage.tree.is_some()) {
            let terms = stage.terms(bound)?;
            let blocks = wgsl::block_count(terms);
            if blocks > u32::MAX as u64 {
                return Err(Error::Unsupported {
                    backend: "wgpu".into(),
                    reason: format!(
                        "a reduction of {terms} terms in the kernel writing {} has more than 2^32 blocks of {} \
                         terms, which the shaders count in 32 bits",
                        program.describe_buffer(kernel.kernel.output),
                        pytato_runtime::math::SUM_BLOCK
                    ),
                });
            }
            // What does not fit even at one partial result per element is `chunk_len`'s to refuse.
            let fit = (limit / stage.element_size as u64).max(1);
            while wgsl::partial_count(blocks, coarse) > fit {
                coarse += 1;
            }
        }
    }
    Ok(coarse)
}

impl CompiledKernel {
    /// How many output elements one chunk of the kernel covers (see `wgsl::Translator::main`):
    /// all `elements` where the partial results of each split reduction (`2^coarse` blocks each)
    /// fit in `limit` bytes, else as many as fit; `None` where one element's do not.
    fn chunk_len(&self, elements: u64, bound: &Bound<'_>, limit: u64, coarse: u32) -> Result<Option<u64>> {
        let mut len = elements;
        for stage in &self.block_sums {
            let per_element = stage.partials_bytes(1, bound, coarse)?;
            if per_element > limit {
                return Ok(None);
            }
            // An empty reduction takes no slots.
            if let Some(fit) = limit.checked_div(per_element) {
                len = len.min(fit);
            }
        }
        Ok(Some(len))
    }

    /// The most loop iterations, as a driver with a loop cap counts them (see `wgsl::LoopPlan`),
    /// that one invocation of any of the kernel's shaders runs for the sizes `bound` gives, with
    /// `2^coarse` blocks per partial result (from `runs`, the kernel's block-sums shaders in runs
    /// where `coarse` is above 0).
    fn loop_iterations(&self, bound: &Bound<'_>, coarse: u32, runs: Option<&[Option<StageShader>]>) -> Result<u128> {
        let size = |d: &pytato_core::Dim| bound.eval(d);
        let mut most = self.loops.iterations(&size, coarse)?;
        for (j, b) in self.block_sums.iter().enumerate() {
            let loops = match runs.and_then(|runs| runs[j].as_ref()) {
                Some((_, _, loops)) => loops,
                None => &b.loops,
            };
            most = most.max(loops.iterations(&size, coarse)?);
            if let Some((_, _, tree_loops)) = &b.tree {
                most = most.max(tree_loops.iterations(&size, coarse)?);
            }
        }
        Ok(most)
    }
}

/// Everything compiled for one DAG: shared by every program of a structurally equal DAG (the
/// program cache), immutable; each program keeps its own [`Pool`] of buffers.
pub(crate) struct Compiled {
    pub(crate) signature: Signature,
    pub(crate) program: KernelProgram,
    pub(crate) kernels: Vec<KernelChoices>,
    /// The backend (its settings) that compiled the kernels, for the forms compiled later.
    backend: Wgpu,
}

/// GPU buffers a program keeps between its runs (freed with the program).
#[derive(Default)]
pub(crate) struct Pool {
    /// By program buffer index: the buffer and whether it holds this program's wrapped data.
    buffers: HashMap<usize, (wgpu::Buffer, bool)>,
    /// By kernel index and split reduction: the block sums.
    block_sums: HashMap<(usize, usize), wgpu::Buffer>,
    control: Option<wgpu::Buffer>,
    /// The bytes last written to `control`: while a run's are the same, only its header, which
    /// the kernels write, is zeroed (see `execute`).
    control_written: Vec<u8>,
    /// The values the run's dispatches copy into the control block (see `execute`).
    control_table: Option<wgpu::Buffer>,
    staging: Option<wgpu::Buffer>,
    /// The host inputs' way to the GPU (see `crate::upload`).
    upload: Option<UploadStaging>,
    /// The bind groups of the last runs, for the next (see `crate::bind`).
    bind_groups: BindGroups,
}

fn internal(message: String) -> Error {
    Error::Internal { backend: "wgpu".into(), message }
}

/// A buffer of at least `size` bytes from `slot`, reallocated only when too small.
fn reuse<'a>(
    gpu: &Gpu,
    slot: &'a mut Option<wgpu::Buffer>,
    size: u64,
    usage: wgpu::BufferUsages,
    label: &str,
) -> Result<&'a wgpu::Buffer> {
    if slot.as_ref().is_none_or(|b| b.size() < size) {
        *slot = None; // the old buffer goes before the new one comes
        let descriptor = wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false };
        *slot = Some(gpu.create_buffer(&descriptor, || format!("the {label}"))?);
    }
    Ok(slot.as_ref().expect("just filled"))
}

impl Compiled {
    pub(crate) fn new(
        signature: Signature,
        program: KernelProgram,
        kernels: Vec<KernelChoices>,
        backend: Wgpu,
    ) -> Compiled {
        Compiled { signature, program, kernels, backend }
    }

    /// Runs on borrowed inputs; the outputs are fresh arrays.
    pub(crate) fn run(&self, gpu: &Gpu, pool: &Mutex<Pool>, inputs: &NamedViews<'_>) -> Result<NamedData> {
        let bound = self.signature.bind(inputs)?;
        self.execute(gpu, pool, inputs, &HashMap::new(), None, &bound, |readback, _| {
            let mut result = NamedData::new();
            for (name, id) in &self.program.outputs {
                let buffer = &self.program.buffers[id.0];
                let data = match &buffer.kind {
                    BufferKind::Output => readback
                        .bytes_of(id.0)
                        .map(|b| from_bytes(buffer.dtype, &readback.shapes[id.0], b))
                        .transpose()?,
                    BufferKind::Input => inputs.get(&*buffer.name).map(ArrayDataView::to_owned),
                    BufferKind::Data(d) => Some(Arc::unwrap_or_clone(d.to_host()?)),
                    BufferKind::Temporary => None,
                };
                result.insert(name.clone(), data.ok_or_else(|| internal(format!("output {name} was not computed")))?);
            }
            Ok(result)
        })
    }

    /// Runs on borrowed inputs and writes the outputs into `targets`, straight from the mapped
    /// readback buffer.
    pub(crate) fn run_into(
        &self,
        gpu: &Gpu,
        pool: &Mutex<Pool>,
        inputs: &NamedViews<'_>,
        targets: &mut NamedViewsMut<'_>,
    ) -> Result<()> {
        let bound = self.signature.bind(inputs)?;
        self.signature.check_outputs(&bound, targets)?;
        self.execute(gpu, pool, inputs, &HashMap::new(), None, &bound, |readback, _| {
            for (name, id) in &self.program.outputs {
                let buffer = &self.program.buffers[id.0];
                let target = targets.get_mut(name.as_str()).expect("checked by check_outputs");
                let fits = match &buffer.kind {
                    BufferKind::Output => readback.bytes_of(id.0).and_then(|b| bytes_into(b, target)),
                    BufferKind::Input => inputs.get(&*buffer.name).and_then(|v| target.assign(v)),
                    BufferKind::Data(d) => target.assign(&d.to_host()?.view()),
                    BufferKind::Temporary => None,
                };
                fits.ok_or_else(|| internal(format!("output {name} does not fit the checked array")))?;
            }
            Ok(())
        })
    }

    /// Runs on inputs from the host or held on this GPU, and leaves the outputs on the GPU (see
    /// `Program::run_device`). Only enqueues: an error the kernels find is reported at the next
    /// wait (see `crate::deferred`).
    pub(crate) fn run_device(
        self: &Arc<Self>,
        gpu: &'static Gpu,
        pool: &Mutex<Pool>,
        inputs: &NamedDeviceInputs<'_>,
    ) -> Result<NamedDeviceArrays> {
        // Device arrays of another backend come through the host.
        let copied: BTreeMap<&str, ArrayData> = inputs
            .iter()
            .filter_map(|(name, input)| match input {
                DeviceInput::Device(d) if GpuStorage::of(d, gpu).is_none() && d.storage().as_host().is_none() => {
                    Some(d.to_host().map(|h| (*name, h)))
                }
                _ => None,
            })
            .collect::<Result<_>>()?;
        let mut resident = HashMap::new();
        let mut views = NamedViews::new();
        // What a failed run wrote is refused; what unread runs wrote links their statuses.
        let mut statuses = Vec::new();
        for (name, input) in inputs {
            let view = match input {
                DeviceInput::Host(v) => v.reborrow(),
                DeviceInput::Device(d) => match (GpuStorage::of(d, gpu), d.storage().as_host()) {
                    (Some(storage), _) => {
                        resident.insert(*name, storage.handle());
                        statuses.push(&storage.status);
                        // Checked by dtype and shape; the elements are on the GPU.
                        d.stand_in()
                    }
                    (None, Some(host)) => host.view(),
                    (None, None) => copied[name].view(),
                },
            };
            views.insert(*name, view);
        }
        let bound = self.signature.bind(&views)?;
        // Back-pressure: a thread with many unread runs waits for them here (and hears of theirs).
        if gpu.checks.full() {
            gpu.checks.check(gpu, None)?;
        }
        let statuses = input_statuses(statuses.into_iter().chain(self.held_statuses(gpu)))?;
        let this = Arc::clone(self);
        let decode: Decode = Arc::new(move |header| this.control_error(header));
        self.execute(gpu, pool, &views, &resident, Some((decode, statuses)), &bound, |readback, pool| {
            let mut taken: HashMap<usize, DeviceArray> = HashMap::new();
            let mut result = NamedDeviceArrays::new();
            for (name, id) in &self.program.outputs {
                let buffer = &self.program.buffers[id.0];
                let array = match &buffer.kind {
                    BufferKind::Output => match taken.get(&id.0) {
                        Some(a) => a.clone(),
                        None => {
                            // The program's next run allocates a new buffer for this output.
                            let (gpu_buffer, _) = pool
                                .buffers
                                .remove(&id.0)
                                .ok_or_else(|| internal(format!("output {name} has no buffer")))?;
                            let shape = readback.shapes[id.0].clone();
                            let a = wrap(gpu, gpu_buffer, buffer.dtype, shape, readback.status.clone());
                            taken.insert(id.0, a.clone());
                            a
                        }
                    },
                    BufferKind::Input => match inputs.get(&*buffer.name) {
                        Some(DeviceInput::Device(d)) => (*d).clone(),
                        _ => DeviceArray::host(views[&*buffer.name].to_owned()),
                    },
                    BufferKind::Data(DataRef::Device(d)) => d.clone(),
                    BufferKind::Data(DataRef::Host(d)) => DeviceArray::host_shared(d.clone()),
                    BufferKind::Temporary => return Err(internal(format!("output {name} is a temporary"))),
                };
                result.insert(name.clone(), array);
            }
            Ok(result)
        })
    }

    /// The run statuses of the data wrappers over arrays `gpu` holds (see `crate::deferred`).
    fn held_statuses<'a>(&'a self, gpu: &'a Gpu) -> impl Iterator<Item = &'a Option<Arc<RunStatus>>> {
        self.program.buffers.iter().filter_map(move |b| match &b.kind {
            BufferKind::Data(DataRef::Device(a)) => GpuStorage::of(a, gpu).map(|s| &s.status),
            _ => None,
        })
    }

    /// The error a run's control header records, if a kernel found one.
    fn control_error(&self, header: &[u8]) -> Option<Error> {
        let word = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().expect("4 bytes"));
        let long = |at: usize| i64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"));
        (word(0) != 0).then(|| self.program.index_error(word(4) as i32 as i64, word(8) as i64, long(16), long(24)))
    }

    /// Uploads the inputs (except those in `resident`, bound as they are), runs every kernel and
    /// hands the mapped readback to `read`, with the buffer pool. With `deferred` (a run on device
    /// data), the outputs are not read back (`read` takes their buffers from the pool, and the
    /// run's status, linked to the given statuses of its device inputs) and nothing waits: the
    /// control header is left to `crate::deferred`, decoded by `deferred`. Otherwise the run
    /// waits, and reports the errors of earlier runs on device data before its own, and then
    /// that of a failed run that computed a device array it read.
    #[allow(clippy::too_many_arguments)]
    fn execute<R>(
        &self,
        gpu: &Gpu,
        pool: &Mutex<Pool>,
        inputs: &NamedViews<'_>,
        resident: &HashMap<&str, wgpu::Buffer>,
        deferred: Option<(Decode, Vec<Arc<RunStatus>>)>,
        bound: &Bound<'_>,
        read: impl FnOnce(&Readback<'_>, &mut Pool) -> Result<R>,
    ) -> Result<R> {
        let program = &self.program;
        let (sizes, shapes) = program.bind_sizes(bound)?;
        let bytes: Vec<u64> = program
            .buffers
            .iter()
            .zip(&shapes)
            .map(|(b, s)| {
                let n = s.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
                n.and_then(|n| n.checked_mul(storage_size(b.dtype) as u64)).unwrap_or(u64::MAX)
            })
            .collect();
        let limit = gpu.limits.max_storage_buffer_binding_size.min(gpu.limits.max_buffer_size);
        let kernels: Vec<&CompiledKernel> = self
            .kernels
            .iter()
            .zip(&program.kernels)
            .map(|(choices, kernel)| {
                let compile = || self.backend.compile_kernel(program, &program.buffer_ids(), kernel, false);
                choices.choose(program, bound, &shapes, compile)
            })
            .collect::<Result<_>>()?;
        for (i, b) in program.buffers.iter().enumerate() {
            if bytes[i] > limit {
                // `u64::MAX` stands for a size that does not fit in 64 bits.
                let needs = if bytes[i] == u64::MAX { "more than 2^64".to_string() } else { bytes[i].to_string() };
                return Err(Error::Unsupported {
                    backend: "wgpu".into(),
                    reason: format!(
                        "{} ({} of shape {:?}) needs {needs} bytes on the GPU; the adapter binds at most {limit} bytes \
                         per storage buffer",
                        program.describe_buffer(BufferId(i)),
                        b.dtype,
                        shapes[i]
                    ),
                });
            }
        }

        let scratch = self.backend.scratch_bytes();
        let coarse = coarse_for(program, &kernels, bound, scratch)?;
        // Each kernel's block-sums shaders in runs of blocks, where the run needs them.
        let runs: Vec<Option<&[Option<StageShader>]>> = kernels
            .iter()
            .map(|k| match coarse > 0 && !k.block_sums.is_empty() {
                true => {
                    let compile = || self.backend.compile_runs(program, &k.kernel, k.narrow);
                    compiled_once(&k.runs, compile).map(|runs| Some(runs.as_slice()))
                }
                false => Ok(None),
            })
            .collect::<Result<_>>()?;
        if let Some(limit) = gpu.loop_limit {
            let in_runs = match coarse {
                0 => String::new(),
                _ => format!(
                    "; one element's block sums exceed {scratch} bytes, so each invocation sums runs of {} blocks",
                    1u64 << coarse
                ),
            };
            for (compiled, runs) in kernels.iter().zip(&runs) {
                let trips = compiled.loop_iterations(bound, coarse, *runs)?;
                if trips > limit as u128 {
                    return Err(Error::Unsupported {
                        backend: "wgpu".into(),
                        reason: format!(
                            "the kernel writing {} runs up to {trips} loop iterations per invocation for these \
                             sizes; this adapter's driver ({}) stops all loops of an invocation after {limit} \
                             iterations in all, so the result would be wrong (a reduction inside another \
                             reduction runs in one loop{in_runs})",
                            program.describe_buffer(compiled.kernel.output),
                            gpu.info.driver
                        ),
                    });
                }
            }
        }
        // Data wrappers of arrays this GPU holds are bound where they are (no copy).
        let held: HashMap<usize, wgpu::Buffer> = program
            .buffers
            .iter()
            .enumerate()
            .filter_map(|(i, b)| match &b.kind {
                BufferKind::Data(DataRef::Device(a)) => GpuStorage::of(a, gpu).map(|s| (i, s.handle())),
                _ => None,
            })
            .collect();
        let mut pool = pool.lock().unwrap_or_else(|p| p.into_inner());
        // Buffers: every buffer has at least one element's room, so that a checked read that
        // failed can read element 0.
        for (i, b) in program.buffers.iter().enumerate() {
            if held.contains_key(&i) || (matches!(b.kind, BufferKind::Input) && resident.contains_key(&*b.name)) {
                continue;
            }
            let size = bytes[i].max(16).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
            let fresh = pool.buffers.get(&i).is_none_or(|(buf, _)| buf.size() < size);
            if fresh {
                pool.buffers.remove(&i); // the old buffer goes before the new one comes
                let what =
                    || format!("{} ({} of shape {:?})", program.describe_buffer(BufferId(i)), b.dtype, shapes[i]);
                pool.buffers.insert(i, (gpu.storage_buffer(size, &b.name, what)?, false));
            }
            let (buffer, uploaded) = pool.buffers.get_mut(&i).expect("just ensured");
            if let BufferKind::Data(d) = &b.kind
                && !*uploaded
            {
                // Host data, or a device array held elsewhere (copied through the host once).
                let what = || format!("data {} ({} of shape {:?})", b.name, b.dtype, shapes[i]);
                write(gpu, buffer, &to_bytes(&d.to_host()?.view())?, what)?;
                *uploaded = true;
            }
        }
        pool.bind_groups.begin_run();
        let mut encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("pytato") });
        // The inputs from the host, through the program's upload staging buffer: copied first.
        let Pool { buffers, upload: upload_staging, .. } = &mut *pool;
        let host_inputs: Vec<(&wgpu::Buffer, StorageBytes<'_>)> = program
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| matches!(b.kind, BufferKind::Input) && !resident.contains_key(&*b.name))
            .map(|(i, b)| {
                let data = inputs
                    .get(&*b.name)
                    .ok_or_else(|| internal(format!("input {} passed the checks but is absent", b.name)))?;
                Ok((&buffers[&i].0, to_bytes(data)?))
            })
            .collect::<Result<_>>()?;
        let parts: Vec<(&wgpu::Buffer, &[u8])> =
            host_inputs.iter().map(|(buffer, bytes)| (*buffer, &**bytes)).collect();
        let uploaded = upload(gpu, upload_staging, &mut encoder, &parts)?;
        let mut control = control_block(&sizes);
        control[COARSE_OFFSET..COARSE_OFFSET + 4].copy_from_slice(&coarse.to_le_bytes());
        let same_block =
            pool.control.as_ref().is_some_and(|b| b.size() >= control.len() as u64) && pool.control_written == control;
        let control_buffer =
            reuse(gpu, &mut pool.control, control.len() as u64, STORAGE_USAGE, "pytato control block")?.clone();
        if same_block {
            // The sizes are the last run's: only the header differs, where a kernel that failed
            // a check wrote (the chunk and level fields that copies set are restored by the end
            // of every run). Zeroed on the GPU in order with the dispatches, rather than the whole
            // block staged again (a buffer wgpu creates and frees per run).
            encoder.clear_buffer(&control_buffer, 0, Some(CONTROL_HEADER));
        } else {
            gpu.write_buffer(&control_buffer, &control, || "the control block".into())?;
            pool.control_written = control;
        }

        // Each kernel's output elements and chunks of them (see `CompiledKernel::chunk_len`): the
        // length of one, and where its entries start in the control table, whose `(base, slots)`
        // pairs of `u32` are copied into the control block before each chunk's dispatches. Its
        // first entry, `(0, 0)`, restores one chunk of all elements after a chunked kernel; the
        // tree stage's passes copy their level from it too.
        let mut table: Vec<u32> = CONTROL_TABLE_HEADER.to_vec();
        let mut tree_passes = false;
        let mut chunking = Vec::with_capacity(kernels.len());
        for kernel in &kernels {
            let elements: u64 = shapes[kernel.kernel.output.0].iter().map(|&d| d as u64).product();
            grid(elements, gpu.limits.max_compute_workgroups_per_dimension)?;
            for stage in kernel.block_sums.iter().filter(|stage| stage.tree.is_some()) {
                let partials = wgsl::partial_count(wgsl::block_count(stage.terms(bound)?), coarse);
                tree_passes |= wgsl::tree_passes(partials).len() > 1;
            }
            let Some(len) = kernel.chunk_len(elements, bound, scratch, coarse)? else {
                return Err(Error::Unsupported {
                    backend: "wgpu".into(),
                    reason: format!(
                        "a reduction in the kernel writing {} needs more than {scratch} bytes of partial results \
                         for one output element, the most one buffer may take on this adapter",
                        program.describe_buffer(kernel.kernel.output)
                    ),
                });
            };
            if len >= elements {
                chunking.push((elements, elements, None));
                continue;
            }
            chunking.push((elements, len, Some(table.len() as u64 * 4)));
            for base in (0..elements).step_by(len as usize) {
                // Both fit: `grid` checked that `elements` does.
                table.extend([base as u32, len as u32]);
            }
        }
        let control_table = match table.len() > CONTROL_TABLE_HEADER.len() || tree_passes {
            false => None,
            true => {
                let bytes: Vec<u8> = table.iter().flat_map(|v| v.to_le_bytes()).collect();
                let label = "pytato control table";
                let buffer = reuse(gpu, &mut pool.control_table, bytes.len() as u64, STORAGE_USAGE, label)?.clone();
                gpu.write_buffer(&buffer, &bytes, || "the control table".into())?;
                Some(buffer)
            }
        };

        let mut commands = Passes::new(encoder);
        for (k, ((kernel, &(elements, slots, entries)), runs)) in kernels.iter().zip(&chunking).zip(&runs).enumerate() {
            if elements == 0 {
                continue;
            }
            let bindings = |pool: &Pool| -> Vec<wgpu::Buffer> {
                let buffer = |id: &BufferId| match (held.get(&id.0), resident.get(&*program.buffers[id.0].name)) {
                    (Some(b), _) => b.clone(),
                    (None, Some(b)) if matches!(program.buffers[id.0].kind, BufferKind::Input) => b.clone(),
                    _ => pool.buffers[&id.0].0.clone(),
                };
                kernel.buffers.iter().map(buffer).collect()
            };
            let mut block_sums = Vec::with_capacity(kernel.block_sums.len());
            for (j, stage) in kernel.block_sums.iter().enumerate() {
                let size =
                    stage.partials_bytes(slots, bound, coarse)?.max(16).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
                let partials = match pool.block_sums.get(&(k, j)).filter(|b| b.size() >= size) {
                    Some(kept) => kept.clone(),
                    None => {
                        pool.block_sums.remove(&(k, j)); // the old buffer goes before the new one comes
                        let descriptor = wgpu::BufferDescriptor {
                            label: Some("pytato block sums"),
                            size,
                            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                            mapped_at_creation: false,
                        };
                        let output = program.describe_buffer(kernel.kernel.output);
                        gpu.create_buffer(&descriptor, || format!("the partial sums of a reduction in {output}"))?
                    }
                };
                pool.block_sums.insert((k, j), partials.clone());
                block_sums.push(partials);
            }
            for (c, base) in (0..elements).step_by(slots as usize).enumerate() {
                let in_chunk = slots.min(elements - base);
                if let (Some(table), Some(entries)) = (&control_table, entries) {
                    commands.encoder().copy_buffer_to_buffer(
                        table,
                        entries + 8 * c as u64,
                        &control_buffer,
                        CHUNK_OFFSET,
                        8,
                    );
                }
                for (j, stage) in kernel.block_sums.iter().enumerate() {
                    let terms = stage.terms(bound)?;
                    let parts = wgsl::partial_count(wgsl::block_count(terms), coarse);
                    // A carried product: one dispatch per chunk of terms, an invocation per
                    // element; else an invocation per element and partial result.
                    let (dispatches, invocations) = match stage.tree {
                        None => (terms.div_ceil(wgsl::CARRY_CHUNK), in_chunk),
                        Some(_) => (1, slots.saturating_mul(parts)),
                    };
                    if invocations == 0 || dispatches == 0 {
                        continue;
                    }
                    let partials = &block_sums[j];
                    let (pipeline, constants) = match runs.and_then(|runs| runs[j].as_ref()) {
                        Some((pipeline, constants, _)) => (pipeline, constants),
                        None => (&stage.pipeline, &stage.constants),
                    };
                    // The kernel's buffers, the partial results of the split reductions before
                    // this one (its guard may read them), its own; the tree reads its own only.
                    let mut buffers = bindings(&pool);
                    let stage_buffers: Vec<wgpu::Buffer> = (buffers.iter().chain(&block_sums[..j]).cloned())
                        .chain([partials.clone()])
                        .chain(constants.clone())
                        .collect();
                    buffers.push(partials.clone());
                    if stage.tree.is_none() {
                        // Every element starts with no chunk of terms done.
                        commands.encoder().clear_buffer(partials, 0, None);
                    }
                    for _ in 0..dispatches {
                        let group = pool.bind_groups.get(gpu, pipeline, &control_buffer, &stage_buffers);
                        commands.dispatch(gpu, pipeline, &group, invocations)?;
                    }
                    // For long reductions only (see `read_block_sums`): workgroups per element and
                    // group of partial results, in passes of one group per element at the end.
                    if let Some((tree_pipeline, tree_constants, _)) = &stage.tree
                        && parts > wgsl::TREE_STAGE_BLOCKS as u64
                    {
                        buffers.extend(tree_constants.clone());
                        let passes = wgsl::tree_passes(parts);
                        // Past one pass, each pass's level is copied into the control block, and
                        // level 0 after the last, which the one-pass tree stages take as it is.
                        let levels = (passes.len() > 1)
                            .then(|| control_table.as_ref().expect("a run of tree passes has a control table"));
                        for (level, &groups) in passes.iter().enumerate() {
                            if let Some(table) = levels {
                                let at = LEVELS_AT + 4 * level as u64;
                                commands.encoder().copy_buffer_to_buffer(table, at, &control_buffer, LEVEL_OFFSET, 4);
                            }
                            let invocations = in_chunk.saturating_mul(groups).saturating_mul(WORKGROUP_SIZE as u64);
                            let group = pool.bind_groups.get(gpu, tree_pipeline, &control_buffer, &buffers);
                            commands.dispatch(gpu, tree_pipeline, &group, invocations)?;
                        }
                        if let Some(table) = levels {
                            commands.encoder().copy_buffer_to_buffer(
                                table,
                                LEVELS_AT,
                                &control_buffer,
                                LEVEL_OFFSET,
                                4,
                            );
                        }
                    }
                }
                let mut buffers = bindings(&pool);
                buffers.extend(block_sums.iter().cloned());
                buffers.extend(kernel.constants.clone());
                let invocations = match &kernel.tiled {
                    Some(product) => {
                        let side = |axis: usize| (shapes[kernel.kernel.output.0][axis] as u64).div_ceil(TILE as u64);
                        side(product.row_axis) * side(product.column_axis) * WORKGROUP_SIZE as u64
                    }
                    None => in_chunk,
                };
                let group = pool.bind_groups.get(gpu, &kernel.pipeline, &control_buffer, &buffers);
                commands.dispatch(gpu, &kernel.pipeline, &group, invocations)?;
            }
            if let (Some(table), Some(_)) = (&control_table, entries) {
                commands.encoder().copy_buffer_to_buffer(table, 0, &control_buffer, CHUNK_OFFSET, 8);
            }
        }
        let mut encoder = commands.finish();

        if let Some((decode, inputs)) = deferred {
            let status = gpu.checks.defer(gpu, &mut encoder, &control_buffer, decode, inputs)?;
            gpu.submit(encoder)?;
            if let Some(uploaded) = &uploaded {
                uploaded.remap();
            }
            let no_outputs = HashMap::new();
            let readback =
                Readback { view: &[], shapes: &shapes, bytes: &bytes, offsets: &no_outputs, status: Some(status) };
            return read(&readback, &mut pool);
        }

        // Readback: the control header, then each output buffer, into one staging buffer.
        let outputs: Vec<usize> = {
            let mut seen = Vec::new();
            for (_, id) in &program.outputs {
                if matches!(program.buffers[id.0].kind, BufferKind::Output) && !seen.contains(&id.0) {
                    seen.push(id.0);
                }
            }
            seen
        };
        let mut offsets = HashMap::new();
        let mut total = CONTROL_HEADER;
        for &i in &outputs {
            offsets.insert(i, total);
            total += bytes[i].next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
        }
        if pool.staging.as_ref().is_none_or(|b| b.size() < total) {
            pool.staging = None; // the old buffer goes before the new one comes
            pool.staging = Some(gpu.staging_buffer(total, wgpu::MapMode::Read, "pytato readback")?);
        }
        let staging = pool.staging.clone().expect("just ensured");
        encoder.copy_buffer_to_buffer(&control_buffer, 0, &staging, 0, CONTROL_HEADER);
        for &i in &outputs {
            if bytes[i] > 0 {
                let size = bytes[i].next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
                encoder.copy_buffer_to_buffer(&pool.buffers[&i].0, 0, &staging, offsets[&i], size);
            }
        }
        gpu.submit(encoder)?;
        if let Some(uploaded) = &uploaded {
            uploaded.remap();
        }
        let mapped = map_for_reading(gpu, &staging, total);
        if let Err(e) = mapped {
            // The mapping may still be pending: this buffer must never be mapped again.
            pool.staging = None;
            return Err(e);
        }
        // Unmapped on every path from here, a panic included, so the next run can map it again.
        let _unmap = Unmap(&staging);
        let view = staging
            .slice(..total)
            .get_mapped_range()
            .map_err(|e| internal(format!("reading the staging buffer: {e}")))?;
        let readback = Readback { view: &view, shapes: &shapes, bytes: &bytes, offsets: &offsets, status: None };
        // Earlier runs on device data have finished too: their errors come first.
        gpu.checks.check(gpu, self.control_error(&view[..CONTROL_HEADER as usize]))?;
        input_statuses(self.held_statuses(gpu))?;
        read(&readback, &mut pool)
    }
}

/// The mapped staging bytes of a run: the control header, then each output buffer.
struct Readback<'a> {
    view: &'a [u8],
    shapes: &'a [Vec<usize>],
    bytes: &'a [u64],
    offsets: &'a HashMap<usize, u64>,
    /// A run on device data's status, which its outputs carry.
    status: Option<Arc<RunStatus>>,
}

impl Readback<'_> {
    /// The storage bytes of output buffer `i`.
    fn bytes_of(&self, i: usize) -> Option<&[u8]> {
        let at = *self.offsets.get(&i)? as usize;
        self.view.get(at..at + self.bytes[i] as usize)
    }
}

/// Unmaps a mapped buffer when dropped (declared before the mapped view, so dropped after it).
struct Unmap<'a>(&'a wgpu::Buffer);

impl Drop for Unmap<'_> {
    fn drop(&mut self) {
        self.0.unmap();
    }
}

fn write(gpu: &Gpu, buffer: &wgpu::Buffer, data: &[u8], what: impl FnOnce() -> String) -> Result<()> {
    // `write_buffer` needs a multiple of 4 bytes; storage sizes are 4, 8 or 16 per element.
    match data.is_empty() {
        true => Ok(()),
        false => gpu.write_buffer(buffer, data, what),
    }
}

/// The bytes of a control block: no error yet, `zero`, and `sizes`.
pub(crate) fn control_block(sizes: &[i64]) -> Vec<u8> {
    let mut control = vec![0u8; SIZES_OFFSET];
    for s in sizes {
        control.extend_from_slice(&s.to_le_bytes());
    }
    // A runtime-sized array needs room for one element.
    control.resize(control.len().max(SIZES_OFFSET + 8), 0);
    control
}

/// A run's (or a step's) commands, its consecutive dispatches in one compute pass: within a pass
/// wgpu orders each dispatch's writes before the next one's reads, as it does between passes, and
/// a pass costs the host more than a dispatch (wgpu sets up and tears down its tracking for
/// each). Any other command ends the pass. Where `PYTATO_PROFILE=gpu` times dispatches, each has
/// a pass of its own, whose timestamps are the dispatch's.
pub(crate) struct Passes {
    /// The pass open, if any. `'static`: wgpu keeps the encoder locked while it is open, and
    /// [`Passes::encoder`] ends it before handing the encoder out. Declared before `encoder`, so
    /// that where a run stops early it ends before the encoder is dropped.
    pass: Option<wgpu::ComputePass<'static>>,
    encoder: wgpu::CommandEncoder,
}

impl Passes {
    pub(crate) fn new(encoder: wgpu::CommandEncoder) -> Passes {
        Passes { pass: None, encoder }
    }

    /// A new encoder's commands, labelled `label`.
    pub(crate) fn begin(gpu: &Gpu, label: &str) -> Passes {
        Passes::new(gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) }))
    }

    /// The encoder, for a command other than a dispatch: the open pass ends first.
    pub(crate) fn encoder(&mut self) -> &mut wgpu::CommandEncoder {
        self.pass = None;
        &mut self.encoder
    }

    /// Records a dispatch of `pipeline` with `bind_group` over `invocations` invocations.
    pub(crate) fn dispatch(
        &mut self,
        gpu: &Gpu,
        pipeline: &Pipeline,
        bind_group: &wgpu::BindGroup,
        invocations: u64,
    ) -> Result<()> {
        let grid = grid(invocations, gpu.limits.max_compute_workgroups_per_dimension)?;
        if gpu.profiler.is_some() || self.pass.is_none() {
            self.pass = None;
            let timestamp_writes = gpu.profiler.as_ref().and_then(|p| p.next_pass(&pipeline.label));
            let descriptor = wgpu::ComputePassDescriptor { label: None, timestamp_writes };
            self.pass = Some(self.encoder.begin_compute_pass(&descriptor).forget_lifetime());
        }
        let pass = self.pass.as_mut().expect("a pass is open");
        pass.set_pipeline(&pipeline.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(grid.0, grid.1, 1);
        Ok(())
    }

    /// Records a dispatch of `pipeline` over `invocations` invocations with `control` bound at 0
    /// and `buffers` after it, in a bind group of its own (a step's; a run's come from
    /// `crate::bind`'s cache).
    pub(crate) fn dispatch_with(
        &mut self,
        gpu: &Gpu,
        pipeline: &Pipeline,
        control: &wgpu::Buffer,
        buffers: &[wgpu::Buffer],
        invocations: u64,
    ) -> Result<()> {
        let bound: Vec<wgpu::Buffer> = std::iter::once(control).chain(buffers).cloned().collect();
        let group = crate::bind::create(gpu, pipeline, &bound);
        self.dispatch(gpu, pipeline, &group, invocations)
    }

    /// The encoder, every pass ended.
    pub(crate) fn finish(mut self) -> wgpu::CommandEncoder {
        self.pass = None;
        self.encoder
    }
}

/// The workgroup grid for `elements` invocations: `x` up to the per-dimension limit, `y` rows of it.
pub(crate) fn grid(elements: u64, per_dimension: u32) -> Result<(u32, u32)> {
    let groups = elements.div_ceil(WORKGROUP_SIZE as u64);
    let x = groups.min(per_dimension as u64).max(1);
    let y = groups.div_ceil(x);
    if y > per_dimension as u64 || elements > u32::MAX as u64 {
        return Err(Error::Unsupported {
            backend: "wgpu".into(),
            reason: format!("a kernel of {elements} elements exceeds the dispatch grid of this adapter"),
        });
    }
    Ok((x as u32, y as u32))
}

#[cfg(test)]
mod tests {
    use super::{Passes, grid};

    /// A run that stops while a pass is open (an error returned between two dispatches) drops
    /// its commands without a panic, and the device goes on working.
    #[test]
    fn commands_dropped_with_a_pass_open_end_it_quietly() {
        let Some(gpu) = crate::device::test_gpu() else { return };
        for _ in 0..2 {
            let encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
            let mut commands = Passes::new(encoder);
            let pass = commands.encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            commands.pass = Some(pass.forget_lifetime());
            drop(commands);
        }
        let encoder = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        let mut commands = Passes::new(encoder);
        commands.pass = Some(commands.encoder.begin_compute_pass(&Default::default()).forget_lifetime());
        gpu.submit(commands.finish()).expect("an empty pass is valid");
        gpu.poll(wgpu::PollType::wait_indefinitely()).expect("the device works on");
    }

    #[test]
    fn large_dispatches_use_a_second_grid_dimension() {
        assert_eq!(grid(1, 65535).unwrap(), (1, 1));
        assert_eq!(grid(256 * 65535, 65535).unwrap(), (65535, 1));
        // One more workgroup than a row holds: a second row.
        assert_eq!(grid(256 * 65535 + 1, 65535).unwrap(), (65535, 2));
        let (x, y) = grid(3_000_000_000, 65535).unwrap();
        assert!(x as u64 * y as u64 * 256 >= 3_000_000_000);
        assert!(grid(u32::MAX as u64 + 1, 65535).is_err());
    }
}
