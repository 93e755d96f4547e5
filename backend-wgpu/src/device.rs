//! The process's GPU: adapter choice, device, and the pipeline cache.
//!
//! One device serves every program of the process. The adapter is wgpu's default (high
//! performance preference), or the first whose name contains `PYTATO_WGPU_ADAPTER`
//! (case-insensitive) or whose index in wgpu's adapter list it is. The device is requested with the
//! adapter's own limits and with `SHADER_F64` and `SHADER_INT64` where the adapter has them.
//!
//! Shaders are parsed and validated by naga before wgpu sees them: a module naga rejects is an
//! [`Error::Internal`] carrying the start of the WGSL source and naga's message, and a shader
//! larger than [`MAX_SHADER_BYTES`] is [`Error::Unsupported`] before any driver compiles it.
//! Pipelines are cached by their WGSL source, so programs that generate the same kernel share one
//! pipeline; the cache keeps the [`PIPELINE_CACHE`] most recently used (a program holds its own
//! pipelines for as long as it lives), so the memory of a process that compiles ever new programs
//! stays flat.
//!
//! A device does not survive `fork()` (multiprocessing's default start method on Linux): in a
//! child process every use of the parent's device is an [`Error::Unsupported`] that says so,
//! where it would hang in the driver.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use pytato_core::{Error, Result};

use crate::deferred::DeferredChecks;
use crate::profile::Profiler;
use crate::resident::TransferStaging;
use crate::spare::SpareBuffers;
use crate::wgsl::ShaderFeatures;

/// The environment variable that picks an adapter by name or index.
pub const ADAPTER_VAR: &str = "PYTATO_WGPU_ADAPTER";

/// The device every wgpu program runs on.
pub(crate) struct Gpu {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: wgpu::AdapterInfo,
    pub(crate) features: ShaderFeatures,
    pub(crate) limits: wgpu::Limits,
    /// The most iterations a loop statement may run in one invocation, where the driver stops
    /// loops silently: Mesa's llvmpipe (lavapipe) ends every loop after 65,535 iterations
    /// (counted over the whole invocation, not per entry into the loop).
    pub(crate) loop_limit: Option<u64>,
    /// Cached pipelines by key, with the tick of their last use.
    pipelines: Mutex<PipelineCache>,
    /// How many pipelines this process created (each one a driver compiles).
    pub(crate) pipelines_created: std::sync::atomic::AtomicU64,
    /// Constant tables by content: the kernels of a long chain share one.
    constant_tables: Mutex<HashMap<Vec<u32>, wgpu::Buffer>>,
    /// The process that opened the device.
    pid: u32,
    /// Errors of runs on device data not read yet, and the count of the host's waits.
    pub(crate) checks: DeferredChecks,
    /// Held by every submission and every poll, so that wgpu's queue maintenance never runs on
    /// two threads at once (see [`Gpu::submit`]).
    maintenance: Mutex<()>,
    /// Storage buffers of dropped device arrays (see `crate::spare`).
    pub(crate) spares: Mutex<SpareBuffers>,
    /// The staging buffers of [`Backend::upload`](pytato_runtime::backend::Backend::upload)s and
    /// of downloads (`crate::resident`), reused by the next of each.
    pub(crate) transfer_staging: Mutex<TransferStaging>,
    /// How many staging buffers [`Gpu::staging_buffer`] created.
    pub(crate) staging_buffers_created: std::sync::atomic::AtomicU64,
    /// How many storage buffers [`Gpu::storage_buffer`] created (not taken from the spares).
    pub(crate) storage_buffers_created: std::sync::atomic::AtomicU64,
    /// How many bind groups dispatches created (not taken from a program's, `crate::bind`).
    pub(crate) bind_groups_created: std::sync::atomic::AtomicU64,
    /// Timestamps of every dispatch, where `PYTATO_PROFILE=gpu` asks (see `crate::profile`).
    pub(crate) profiler: Option<Profiler>,
}

/// The most pipelines the cache keeps (as the Cranelift backend keeps 64 programs).
pub(crate) const PIPELINE_CACHE: usize = 64;

/// The largest WGSL module handed to a driver: larger ones (thousands of operations inlined
/// into one kernel) take drivers' compilers minutes and gigabytes, or crash them.
pub(crate) const MAX_SHADER_BYTES: usize = 4 << 20;

/// The pipeline cache: least recently used out first.
#[derive(Default)]
struct PipelineCache {
    entries: HashMap<String, (Arc<Pipeline>, u64)>,
    tick: u64,
}

impl PipelineCache {
    fn get(&mut self, key: &str) -> Option<Arc<Pipeline>> {
        self.tick += 1;
        let tick = self.tick;
        self.entries.get_mut(key).map(|(p, used)| {
            *used = tick;
            p.clone()
        })
    }

    fn insert(&mut self, key: String, pipeline: Arc<Pipeline>) {
        self.tick += 1;
        self.entries.insert(key, (pipeline, self.tick));
        while self.entries.len() > PIPELINE_CACHE {
            let oldest = self.entries.iter().min_by_key(|(_, (_, used))| *used).map(|(k, _)| k.clone());
            self.entries.remove(&oldest.expect("a full cache has entries"));
        }
    }
}

/// A compute pipeline and the layout of its bind group.
pub(crate) struct Pipeline {
    /// What the shader computes, for profiles (of the first shader compiled into it: shaders
    /// that differ only in comments share a pipeline).
    pub(crate) label: String,
    pub(crate) pipeline: wgpu::ComputePipeline,
    pub(crate) layout: wgpu::BindGroupLayout,
}

/// The process's device, or why there is none: opened on first use.
static GPU: OnceLock<std::result::Result<Gpu, String>> = OnceLock::new();

/// The process's device, opened on first use; the error says why there is none.
pub(crate) fn gpu() -> std::result::Result<&'static Gpu, String> {
    GPU.get_or_init(open).as_ref().map_err(Clone::clone)
}

/// How long a wait for the GPU sleeps before it checks for an interrupt again.
const INTERRUPT_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Blocks until `gpu` has finished the work submitted so far, waking every
/// [`INTERRUPT_POLL`] to check for an interrupt ([`pytato_runtime::interrupt`]): then
/// [`pytato_core::Error::Interrupted`] naming `op`, the work going on on the GPU.
pub(crate) fn wait_interruptibly(gpu: &Gpu, op: &str) -> pytato_core::Result<()> {
    loop {
        pytato_runtime::interrupt::check(op)?;
        let timed = wgpu::PollType::Wait { submission_index: None, timeout: Some(INTERRUPT_POLL) };
        let polled = gpu.poll(timed);
        // Lets a thread that waits to submit take the lock before this one polls again.
        std::thread::yield_now();
        match polled {
            Ok(_) => return Ok(()),
            Err(wgpu::PollError::Timeout) => continue,
            Err(e) => {
                return Err(pytato_core::Error::Internal { backend: "wgpu".into(), message: format!("{op}: {e}") });
            }
        }
    }
}

/// [`wait_interruptibly`] on the process's device, where this process has opened it (it opens
/// none).
pub(crate) fn wait_until_idle() -> pytato_core::Result<()> {
    match GPU.get() {
        Some(Ok(gpu)) => wait_interruptibly(gpu, "waiting for the GPU to finish"),
        _ => Ok(()),
    }
}

fn no_adapter(why: &str) -> String {
    format!(
        "{why}. Install a Vulkan driver (on Debian or Ubuntu, `apt-get install mesa-vulkan-drivers` provides \
         lavapipe, which runs on the CPU), or choose another adapter with {ADAPTER_VAR}=<name or index>"
    )
}

fn open() -> std::result::Result<Gpu, String> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = match std::env::var(ADAPTER_VAR) {
        Ok(wanted) if !wanted.trim().is_empty() => {
            let wanted = wanted.trim().to_lowercase();
            let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
            let names: Vec<String> = adapters.iter().map(|a| a.get_info().name).collect();
            adapters
                .into_iter()
                .enumerate()
                .find(|(i, a)| i.to_string() == wanted || a.get_info().name.to_lowercase().contains(&wanted))
                .map(|(_, a)| a)
                .ok_or_else(|| {
                    no_adapter(&format!("no adapter matches {ADAPTER_VAR}={wanted:?}; adapters: {names:?}"))
                })?
        }
        _ => pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| no_adapter(&format!("no GPU adapter found ({e})")))?,
    };
    let info = adapter.get_info();
    let mut wanted = wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_INT64;
    if crate::profile::requested() {
        wanted |= wgpu::Features::TIMESTAMP_QUERY;
    }
    let required_features = adapter.features() & wanted;
    let limits = adapter.limits();
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("pytato"),
        required_features,
        required_limits: limits.clone(),
        memory_hints: wgpu::MemoryHints::Performance,
        ..Default::default()
    }))
    .map_err(|e| format!("adapter {} ({:?}) refused a device: {e}", info.name, info.backend))?;
    // Errors are caught by error scopes where they can happen; anything else is a bug worth a
    // message rather than wgpu's default panic.
    device.on_uncaptured_error(Arc::new(|e| eprintln!("pytato wgpu: uncaptured device error: {e}")));
    let features = ShaderFeatures {
        // The float64 library and conversions are written with 64-bit integers.
        f64: required_features.contains(wgpu::Features::SHADER_F64)
            && required_features.contains(wgpu::Features::SHADER_INT64),
        i64: required_features.contains(wgpu::Features::SHADER_INT64),
    };
    let loop_limit = (info.driver == "llvmpipe" || info.name.contains("llvmpipe")).then_some(65_535);
    let profiler = required_features.contains(wgpu::Features::TIMESTAMP_QUERY).then(|| Profiler::new(&device, &queue));
    if crate::profile::requested() && profiler.is_none() {
        eprintln!("pytato wgpu: {} has no timestamp queries; PYTATO_PROFILE=gpu times nothing", info.name);
    }
    Ok(Gpu {
        device,
        queue,
        info,
        features,
        limits,
        loop_limit,
        pipelines: Mutex::new(PipelineCache::default()),
        pipelines_created: std::sync::atomic::AtomicU64::new(0),
        constant_tables: Mutex::new(HashMap::new()),
        pid: std::process::id(),
        checks: DeferredChecks::default(),
        maintenance: Mutex::new(()),
        spares: Mutex::new(SpareBuffers::default()),
        storage_buffers_created: std::sync::atomic::AtomicU64::new(0),
        bind_groups_created: std::sync::atomic::AtomicU64::new(0),
        staging_buffers_created: std::sync::atomic::AtomicU64::new(0),
        transfer_staging: Mutex::new(TransferStaging::default()),
        profiler,
    })
}

impl Gpu {
    /// A new buffer as `descriptor` says, or [`Error::OutOfMemory`] for `what` (the buffer's
    /// contents, for the message) where the device cannot have it.
    ///
    /// wgpu does not fail a creation: a buffer it could not allocate is invalid (each use is a
    /// validation error, and a submission that uses one does nothing), and the error goes to the
    /// device's handler, which only prints. A run that went on would return outputs no kernel
    /// wrote. So every buffer is created here, in an error scope of its own that catches running
    /// out of memory (a scope is this thread's, and popping it waits for nothing on the native
    /// backends).
    pub(crate) fn create_buffer(
        &self,
        descriptor: &wgpu::BufferDescriptor<'_>,
        what: impl FnOnce() -> String,
    ) -> Result<wgpu::Buffer> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let buffer = self.device.create_buffer(descriptor);
        match pollster::block_on(scope.pop()) {
            None => Ok(buffer),
            Some(e) => Err(out_of_memory(descriptor.size, what(), e)),
        }
    }

    /// `queue.write_buffer` of `data` at the start of `buffer`, or [`Error::OutOfMemory`] where
    /// the queue cannot have the staging memory the write takes (as large as `data`); `what`
    /// names the data, as for [`Gpu::create_buffer`].
    pub(crate) fn write_buffer(&self, buffer: &wgpu::Buffer, data: &[u8], what: impl FnOnce() -> String) -> Result<()> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        self.queue.write_buffer(buffer, 0, data);
        match pollster::block_on(scope.pop()) {
            None => Ok(()),
            Some(e) => Err(out_of_memory(data.len() as u64, format!("staging {}", what()), e)),
        }
    }

    /// A new staging buffer of `size` bytes, host memory the GPU copies from (`Write`: mapped at
    /// creation) or into (`Read`), or [`Error::OutOfMemory`] (see [`Gpu::create_buffer`]).
    pub(crate) fn staging_buffer(&self, size: u64, mode: wgpu::MapMode, label: &str) -> Result<wgpu::Buffer> {
        let (usage, mapped_at_creation) = match mode {
            wgpu::MapMode::Read => (wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST, false),
            wgpu::MapMode::Write => (wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC, true),
        };
        let descriptor = wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation };
        let buffer = self.create_buffer(&descriptor, || format!("a staging buffer ({label})"))?;
        self.staging_buffers_created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(buffer)
    }

    /// The staging buffers of standalone transfers (see [`TransferStaging`]).
    pub(crate) fn transfer(&self) -> std::sync::MutexGuard<'_, TransferStaging> {
        self.transfer_staging.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A storage buffer (`crate::resident::STORAGE_USAGE`) of `size` bytes holding `what`: a
    /// spare of a dropped device array where there is one of that size (see `crate::spare`), else
    /// a new one, or [`Error::OutOfMemory`] (see [`Gpu::create_buffer`]).
    pub(crate) fn storage_buffer(&self, size: u64, label: &str, what: impl FnOnce() -> String) -> Result<wgpu::Buffer> {
        if let Some(spare) = self.spares.lock().unwrap_or_else(|p| p.into_inner()).take(size) {
            return Ok(spare);
        }
        let descriptor = wgpu::BufferDescriptor {
            label: Some(label),
            size,
            usage: crate::resident::STORAGE_USAGE,
            mapped_at_creation: false,
        };
        let buffer = self.create_buffer(&descriptor, what)?;
        self.storage_buffers_created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(buffer)
    }

    /// Finishes `encoder` and submits its commands to the queue, or returns the error for which
    /// wgpu refused them.
    ///
    /// wgpu reports a command it cannot record (a pipeline or buffer the device could not create,
    /// a binding beyond a limit) when the encoder is finished, and a bad submission when it is
    /// submitted, both to the device's error handler, and the submission then does nothing: a
    /// run that went on would read back outputs no kernel wrote. Error scopes around both catch
    /// it (see [`Gpu::create_buffer`]).
    ///
    /// Every submission and poll of the device goes through [`Gpu::submit`] and [`Gpu::poll`],
    /// which hold one lock: wgpu-core 30 panics ("If the queue is empty, the current submission
    /// index ... should be at least the wait submission index") when a poll whose wait timed out
    /// finds the queue emptied by another thread's maintenance between its reading of the fence
    /// and its own maintenance, and a submission maintains the queue too (gfx-rs/wgpu#9958, not
    /// in a release yet). Ranks run as threads of one process met it.
    pub(crate) fn submit(&self, encoder: wgpu::CommandEncoder) -> Result<wgpu::SubmissionIndex> {
        let invalid = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let out_of_memory = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let index = self.submit_unprofiled([encoder.finish()]);
        // Popped in reverse order, each once.
        let errors = [pollster::block_on(out_of_memory.pop()), pollster::block_on(invalid.pop())];
        if let Some(e) = errors.into_iter().flatten().next() {
            return Err(Error::Internal {
                backend: "wgpu".into(),
                message: format!("wgpu refused a submission of commands, which did not run: {e}"),
            });
        }
        if let Some(profiler) = &self.profiler {
            profiler.collect(self);
        }
        Ok(index)
    }

    /// [`Gpu::submit`] without reading the profiler's timestamps (which it submits itself).
    pub(crate) fn submit_unprofiled(
        &self,
        commands: impl IntoIterator<Item = wgpu::CommandBuffer>,
    ) -> wgpu::SubmissionIndex {
        let _one_at_a_time = self.maintenance.lock().unwrap_or_else(|p| p.into_inner());
        self.queue.submit(commands)
    }

    /// Polls the device (see [`Gpu::submit`] for the lock it holds meanwhile).
    pub(crate) fn poll(&self, poll: wgpu::PollType) -> std::result::Result<wgpu::PollStatus, wgpu::PollError> {
        let _one_at_a_time = self.maintenance.lock().unwrap_or_else(|p| p.into_inner());
        self.device.poll(poll)
    }

    /// An error where this process is not the one that opened the device: a forked child, in
    /// which the driver's state is the parent's and any use may hang.
    pub(crate) fn same_process(&self) -> Result<()> {
        let pid = std::process::id();
        if pid == self.pid {
            return Ok(());
        }
        Err(Error::Unsupported {
            backend: "wgpu".into(),
            reason: format!(
                "this process ({pid}) was forked from the one that opened the GPU device ({}), and a GPU device \
                 does not survive fork(): start worker processes with multiprocessing's 'spawn' or 'forkserver' \
                 method, or use the wgpu backend only in processes that are not forked after using it",
                self.pid
            ),
        })
    }

    /// A storage buffer holding a shader's constant table (see `wgsl::Shader::constants`),
    /// written once; `None` for a shader without constants.
    /// Tables with equal contents are one buffer (the cache keeps at most [`PIPELINE_CACHE`]
    /// tables; a kernel holds its own for as long as it lives).
    pub(crate) fn constant_table(&self, words: &[u32]) -> Result<Option<wgpu::Buffer>> {
        if words.is_empty() {
            return Ok(None);
        }
        let mut tables = self.constant_tables.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(buffer) = tables.get(words) {
            return Ok(Some(buffer.clone()));
        }
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let descriptor = wgpu::BufferDescriptor {
            label: Some("pytato constants"),
            size: bytes.len() as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: true,
        };
        let buffer = self.create_buffer(&descriptor, || "a shader's constant table".into())?;
        buffer
            .get_mapped_range_mut(..)
            .map_err(|e| Error::Internal { backend: "wgpu".into(), message: format!("writing a constant table: {e}") })?
            .copy_from_slice(&bytes);
        buffer.unmap();
        if tables.len() >= PIPELINE_CACHE {
            tables.clear();
        }
        tables.insert(words.to_vec(), buffer.clone());
        Ok(Some(buffer))
    }

    /// One line naming the adapter, its backend and driver.
    pub(crate) fn describe(&self) -> String {
        let i = &self.info;
        format!("{} ({:?}, {:?}, driver {} {})", i.name, i.backend, i.device_type, i.driver, i.driver_info)
    }

    /// The pipeline of a WGSL module whose storage buffers are bound at 0, 1, …, read-write where
    /// `writable` says so: from the cache, or validated by naga (allowing what `features` has)
    /// and created.
    pub(crate) fn pipeline(
        &self,
        label: &str,
        source: &str,
        writable: &[bool],
        features: ShaderFeatures,
    ) -> Result<Arc<Pipeline>> {
        // Keyed by what validation allowed too: a shader accepted with 64-bit integers is checked
        // again for a compilation that must not use them.
        // Comments (buffer names, for readers) do not change a pipeline: kernels that differ only
        // in them (the steps of a long chain) share one.
        let key = format!("{}\n{}", features.i64, without_comments(source));
        if let Some(p) = self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(p);
        }
        if source.len() > MAX_SHADER_BYTES {
            return Err(Error::Unsupported {
                backend: "wgpu".into(),
                reason: format!(
                    "a kernel's shader is {} bytes of WGSL, more than the {MAX_SHADER_BYTES} this backend hands a \
                     driver; store more of the DAG (KernelOptions::max_inline_size) so that kernels are smaller",
                    source.len()
                ),
            });
        }
        Self::validate(source, features)?;
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = self.device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("pytato kernel"),
            source: wgpu::ShaderSource::Wgsl(source.into()),
        });
        // An explicit layout: an automatic one would drop buffers the shader declares but never
        // reads (the argument of `zeros_like`, say).
        let entries: Vec<wgpu::BindGroupLayoutEntry> = writable
            .iter()
            .enumerate()
            .map(|(k, &write)| wgpu::BindGroupLayoutEntry {
                binding: k as u32,
                visibility: wgpu::ShaderStages::COMPUTE,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Storage { read_only: !write },
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            })
            .collect();
        let layout = self.device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("pytato kernel"),
            entries: &entries,
        });
        let pipeline_layout = self.device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("pytato kernel"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("pytato kernel"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(Error::Internal {
                backend: "wgpu".into(),
                message: format!("wgpu rejected a shader naga accepted: {e}\n--- WGSL ---\n{}", source_start(source)),
            });
        }
        self.pipelines_created.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let pipeline = Arc::new(Pipeline { label: label.to_string(), pipeline, layout });
        self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).insert(key, pipeline.clone());
        Ok(pipeline)
    }

    /// Parses and validates `source` with naga, with the capabilities of this device.
    fn validate(source: &str, features: ShaderFeatures) -> Result<()> {
        use naga::valid::{Capabilities, ValidationFlags, Validator};
        let internal = |what: &str, message: String| Error::Internal {
            backend: "wgpu".into(),
            message: format!("naga {what} the generated WGSL: {message}\n--- WGSL ---\n{}", source_start(source)),
        };
        let module =
            naga::front::wgsl::parse_str(source).map_err(|e| internal("could not parse", e.emit_to_string(source)))?;
        let mut capabilities = Capabilities::empty();
        capabilities.set(Capabilities::FLOAT64, features.f64);
        capabilities.set(Capabilities::SHADER_INT64, features.i64);
        Validator::new(ValidationFlags::all(), capabilities)
            .validate(&module)
            .map_err(|e| internal("rejected", e.emit_to_string(source)))?;
        Ok(())
    }

    /// How many pipelines are cached.
    pub(crate) fn cached_pipelines(&self) -> usize {
        self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).entries.len()
    }
}

/// WGSL without its `//` comments (WGSL has no string literals that could hold `//`).
/// The error of a buffer (or a write's staging) of `bytes` holding `what` that the device could
/// not have, `error` being wgpu's words for it.
fn out_of_memory(bytes: u64, what: String, error: wgpu::Error) -> Error {
    Error::OutOfMemory { op: "wgpu".into(), bytes, what: format!("{what} on the GPU ({error})") }
}

fn without_comments(source: &str) -> String {
    source
        .lines()
        .map(|line| line.split_once("//").map_or(line, |(code, _)| code).trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first lines of a shader, for error messages (a whole shader can be megabytes).
fn source_start(source: &str) -> String {
    const SHOWN: usize = 16 << 10;
    if source.len() <= SHOWN {
        return source.to_string();
    }
    let cut = source.floor_char_boundary(SHOWN);
    format!("{}\n... ({} more bytes)", &source[..cut], source.len() - cut)
}

/// For unit tests: the process's GPU, or `None` (with a message) where there is none and none is
/// required (`PYTATO_REQUIRE_WGPU`).
#[cfg(test)]
pub(crate) fn test_gpu() -> Option<&'static Gpu> {
    match gpu() {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var(crate::REQUIRE_VAR).is_ok_and(|v| !v.is_empty() && v != "0") => {
            panic!("{} is set but there is no wgpu adapter: {e}", crate::REQUIRE_VAR)
        }
        Err(e) => {
            eprintln!("skipped: no wgpu adapter: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commands wgpu refuses (a copy from a buffer made without `COPY_SRC`) are an error of the
    /// submission, not a submission that silently does nothing; the next one runs.
    #[test]
    fn a_refused_submission_is_an_error_and_the_device_goes_on() {
        let Some(gpu) = test_gpu() else { return };
        let buffer = |usage: wgpu::BufferUsages| {
            let descriptor = wgpu::BufferDescriptor { label: None, size: 16, usage, mapped_at_creation: false };
            gpu.create_buffer(&descriptor, || "a test buffer".into()).unwrap()
        };
        let to = buffer(wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::MAP_READ);
        let copy = |from: &wgpu::Buffer| {
            let mut encoder = gpu.device.create_command_encoder(&Default::default());
            encoder.copy_buffer_to_buffer(from, 0, &to, 0, 16);
            gpu.submit(encoder)
        };
        match copy(&buffer(wgpu::BufferUsages::STORAGE)) {
            Err(Error::Internal { message, .. }) => assert!(message.contains("did not run"), "{message}"),
            other => panic!("expected an internal error, got {other:?}"),
        }
        let from = buffer(wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::MAP_WRITE);
        copy(&from).expect("a valid copy after a refused one");
        crate::resident::map_for_reading(gpu, &to, 16).expect("the copy ran");
    }

    #[test]
    fn invalid_wgsl_is_an_internal_error_with_the_source_and_nagas_message() {
        let Ok(gpu) = gpu() else {
            eprintln!("skipped: no wgpu adapter");
            return;
        };
        let source = "@compute @workgroup_size(1) fn main() { let x: u32 = 1.5; }";
        match gpu.pipeline("test", source, &[true], gpu.features) {
            Err(Error::Internal { message, .. }) => {
                assert!(message.contains("--- WGSL ---") && message.contains(source), "{message}");
                assert!(message.contains("naga"), "{message}");
            }
            Err(other) => panic!("expected an internal error, got {other}"),
            Ok(_) => panic!("invalid WGSL was accepted"),
        }
    }
}
