//! The wgpu backend: kernels as WGSL compute shaders, validated by naga, run through wgpu.
//!
//! [`Wgpu::compile`] builds the kernel IR of the DAG
//! ([`pytato_transform::kernel::build_kernel_program`]: CSE, lowering, materialization, fusion),
//! translates every kernel into a WGSL module (module `wgsl`: one invocation per output element,
//! reductions as loops), validates it with naga and creates its pipeline (cached by WGSL source,
//! module `device`). Programs are shape-polymorphic: the size parameters travel in a control
//! buffer.
//!
//! # Devices and dtypes
//!
//! The device comes from wgpu's default adapter, or the one `PYTATO_WGPU_ADAPTER` names (a
//! substring of its name, or its index). `bool`, `int32`, `uint32` and `float32` are native;
//! `int8`/`int16`/`uint8`/`uint16` and `bool` are widened to 32 bits in storage and wrapped back
//! into range in shaders; `int64`/`uint64` need `SHADER_INT64`, which every program needs anyway
//! (indices are `int64`); `float64` and `complex128` need `SHADER_F64` (float64 transcendental
//! functions are computed by our own WGSL library, see `wgsl::library`); complex numbers are
//! `vec2` pairs. What the adapter cannot do is [`Error::Unsupported`] when compiling, with the
//! reason; never a silent wrong result.
//!
//! # Semantics
//!
//! numpy's, as the interpreter's and the same values (`pytato_runtime::math` is the definition the
//! WGSL library ports): integer `//` and `%` by zero give 0, `MIN // -1` wraps, float `//` and `%`
//! rest on an exact `fmod`, NaN propagates through `maximum`/`minimum` and compares as IEEE says,
//! float-to-integer casts give numpy's x86-64 results, complex functions follow C99 Annex G, sums
//! follow the shared summation scheme, index-array values out of range are
//! [`Error::IndexOutOfBounds`] and are never read. WGSL lets drivers assume that no value is NaN
//! or infinite, and lavapipe folds `x - x` and `x * 0` to 0: NaN is tested by its bits, and float
//! operands and constants are made opaque to the driver (module `wgsl::library`), so the IEEE
//! result survives. float32 and complex64 math goes through the float64 library where the adapter
//! has `SHADER_F64` (WGSL's float32 built-ins are a few digits short); `sin`, `cos` and `tan` of
//! huge arguments reduce exactly (Payne–Hanek). The float64 functions are within a few ulps of
//! libm; `power` is rounded once from double-double, as glibc's is, so that it agrees with numpy
//! to the last bit but where the power is a hair from a tie, and exactly where it is a float64.
//!
//! # Limits
//!
//! More than 65,535 workgroups use a second grid dimension. A buffer larger than the adapter's
//! `max_storage_buffer_binding_size`, or a kernel binding more storage buffers than
//! `max_storage_buffers_per_shader_stage`, is [`Error::Unsupported`] with the sizes involved.
//! llvmpipe stops all loops of an invocation after 65,535 iterations in all (nested loops, exit
//! tests and loops in branches not taken included) and says nothing: each shader records its
//! loops (`wgsl::LoopPlan`) and a run whose loops would be cut short is `Unsupported` there. Every
//! reduction that may be long splits into short loops: sums, extrema, `all` and `any` into blocks
//! combined in a tree, float products (which multiply in order) into a chain of dispatches of
//! 2^15 terms each, carrying each element's product, also in the branches of a `where` (where the
//! branch is taken). Only a long reduction inside another reduction stays in one loop.
//!
//! ```no_run
//! use pytato_core::{ArrayData, DType, Dim};
//! use pytato_runtime::{backend::{Backend, NamedData}};
//! use pytato_frontend as pt;
//! use pytato_backend_wgpu::Wgpu;
//! let x = pt::placeholder("x", [Dim::param("n")], DType::F32)?;
//! let y = pt::sin(&x)? * 2.0;
//! let program = Wgpu::new()?.compile(&(&y).into())?;
//! let inputs = NamedData::from([("x".to_string(), ArrayData::from(ndarray::arr1(&[0.0f32, 1.0]).into_dyn()))]);
//! let out = program.run(&inputs)?;
//! println!("{:?}", out["_pt_out"]);
//! # Ok::<(), pytato_core::Error>(())
//! ```

mod bind;
mod cache;
mod deferred;
mod device;
mod huge_pages;
pub mod profile;
mod resident;
mod run;
mod spare;
mod steps;
mod transfer;
mod upload;
mod wgsl;

use std::collections::HashMap;
use std::sync::Arc;

use pytato_core::array::DataRef;
use pytato_core::{Error, Result};
use pytato_runtime::ArrayDataView;
use pytato_runtime::backend::{Backend, BackendRegistration, NamedData, NamedViews, NamedViewsMut, Outputs, Program};
use pytato_runtime::binding::Signature;
use pytato_runtime::device::{DeviceArray, NamedDeviceArrays, NamedDeviceInputs};
use pytato_transform::kernel::{BufferId, BufferKind, CodegenOptions, Kernel, KernelProgram, dump_requested};

pub use cache::cache_stats;
pub use device::ADAPTER_VAR;

/// Blocks until the GPU has finished all work this process submitted, where the process opened
/// one (it opens none), or until an interrupt is requested ([`Error::Interrupted`]). A run
/// stopped by an interrupt (`pytato_runtime::interrupt`) leaves its work running on the GPU; a
/// process about to exit calls this first, because a CPU driver (lavapipe) runs that work on
/// threads of the process, which exit must not tear down under a running shader (a process that
/// exited during one was seen to crash).
pub fn wait_until_idle() -> Result<()> {
    device::wait_until_idle()
}

use crate::device::{Gpu, Pipeline};
use crate::run::{Compiled, CompiledBlockSums, CompiledKernel, KernelChoices, Pool};
use crate::wgsl::steps::Ranking;

/// The environment variable that makes a missing adapter an error in the test suites (CI sets
/// it, so that lavapipe failing to load cannot pass silently).
pub const REQUIRE_VAR: &str = "PYTATO_REQUIRE_WGPU";

/// The environment variable that makes the backend take the code paths it takes on GPUs on any
/// adapter (tiled matrix products, sorts ranked by workgroups), so that CI runs them on lavapipe (`cargo xtask ci` runs the
/// conformance suite this way too). float32 held in float64, the other GPU-specific choice, is
/// every adapter's path where it has float64.
pub const GPU_PATHS_VAR: &str = "PYTATO_WGPU_GPU_PATHS";

/// The wgpu backend, registered as `"wgpu"`.
#[derive(Clone)]
pub struct Wgpu {
    gpu: &'static Gpu,
    tiled_products: bool,
    workgroup_sorts: bool,
    int64: bool,
    codegen: CodegenOptions,
    /// The most bytes the partial results of one reduction may take (see
    /// [`Wgpu::with_scratch_limit`]); `None`: what the adapter binds.
    scratch_limit: Option<u64>,
}

impl std::fmt::Debug for Wgpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wgpu").field("adapter", &self.gpu.describe()).finish()
    }
}

inventory::submit! {
    BackendRegistration {
        name: "wgpu",
        description: "wgpu: fused kernels as WGSL compute shaders on the GPU (Vulkan, Metal, DX12)",
        priority: 20,
        constructor: || Ok(Box::new(Wgpu::new()?)),
    }
}

impl Wgpu {
    /// The backend on the process's GPU; [`Error::Unsupported`] saying why and how to get a
    /// driver when there is no adapter.
    pub fn new() -> Result<Wgpu> {
        let gpu = device::gpu().map_err(|reason| Error::Unsupported { backend: "wgpu".into(), reason })?;
        gpu.same_process()?;
        // `PYTATO_WGPU_GPU_PATHS=1` takes a GPU's code paths on any adapter, so that a CPU
        // driver (lavapipe, in CI) runs what GPUs run.
        let gpu_paths = std::env::var(GPU_PATHS_VAR).is_ok_and(|v| !v.is_empty() && v != "0");
        let on_gpu = gpu_paths || gpu.info.device_type != wgpu::DeviceType::Cpu;
        Ok(Wgpu {
            gpu,
            tiled_products: on_gpu,
            workgroup_sorts: on_gpu,
            int64: true,
            codegen: CodegenOptions::default(),
            scratch_limit: None,
        })
    }

    /// The same backend, generating code under `codegen` (inlining limits, a transformation of
    /// each kernel program before translation).
    pub fn with_codegen(self, codegen: CodegenOptions) -> Wgpu {
        Wgpu { codegen, ..self }
    }

    /// Limits the memory the partial results of one reduction take on the device to `bytes`.
    /// A long reduction runs in stages: block sums of every output element in parallel, then
    /// their tree. Where the block sums of a run would take more than the limit (by default, and
    /// never more than, what the adapter binds per buffer: 128 MiB on lavapipe, where a product
    /// of two 1500×1500 matrices needs 216 MB), the kernel runs over its output elements in
    /// chunks whose block sums fit, one chunk after another: the same shaders, the same bits.
    /// Only a reduction whose block sums for one element exceed the limit is
    /// [`Error::Unsupported`].
    pub fn with_scratch_limit(self, bytes: u64) -> Wgpu {
        Wgpu { scratch_limit: Some(bytes), ..self }
    }

    /// The most bytes the partial results of one reduction may take (see
    /// [`Wgpu::with_scratch_limit`]) on this adapter.
    pub(crate) fn scratch_bytes(&self) -> u64 {
        let binds = self.gpu.limits.max_storage_buffer_binding_size.min(self.gpu.limits.max_buffer_size);
        self.scratch_limit.map_or(binds, |limit| limit.min(binds))
    }

    /// With `false`, compiles as if the adapter lacked `SHADER_INT64`: only kernels with 32-bit
    /// indices (see [`Wgpu::int64`]), validated without 64-bit integers. For checking that a
    /// program runs on such adapters.
    pub fn with_int64(self, on: bool) -> Wgpu {
        Wgpu { int64: on, ..self }
    }

    /// Whether shaders may use 64-bit integers (`SHADER_INT64`, and not turned off with
    /// [`Wgpu::with_int64`]). Kernels whose index arithmetic fits 32 bits for a run's sizes run
    /// with 32-bit indices either way; without 64-bit integers, other kernels (int64 data, indices
    /// that may reach 2^31) are [`Error::Unsupported`].
    pub fn int64(&self) -> bool {
        self.features().i64
    }

    /// What shaders may use. The float64 library and conversions are written with 64-bit
    /// integers, so float64 goes with them (adapters without `SHADER_INT64` rarely have float64).
    fn features(&self) -> wgsl::ShaderFeatures {
        let mut features = self.gpu.features;
        features.i64 &= self.int64;
        features.f64 &= features.i64;
        features
    }

    /// Whether matrix products run in tiles in workgroup memory (see [`Wgpu::tiled_products`]).
    pub fn with_tiled_products(self, on: bool) -> Wgpu {
        Wgpu { tiled_products: on, ..self }
    }

    /// Whether kernels that are products of two matrices run as tiles of 64×64 output elements
    /// per workgroup, the operands' blocks shared in workgroup memory and each invocation
    /// computing a 4×4 block in registers. Tiled products sum in BLAS's order (a chain of `fma`
    /// per element, see `wgsl::tiled`), so they agree with untiled ones to rounding, not bit for
    /// bit. On by default on GPUs, off on CPU adapters, where one loop per element is faster.
    pub fn tiled_products(&self) -> bool {
        self.tiled_products
    }

    /// Whether sorts on device data (and the scatters built on them) rank a block's items by
    /// workgroups (see [`Wgpu::workgroup_sorts`]).
    pub fn with_workgroup_sorts(self, on: bool) -> Wgpu {
        Wgpu { workgroup_sorts: on, ..self }
    }

    /// Whether each pass of a radix sort on device data (sorts, argsorts, and the scatters built
    /// on them) reads a block of 256 items with a workgroup, an item per invocation, ranking them
    /// by a running sum in workgroup memory, rather than with one invocation walking the block
    /// (the results are the same). On by default on GPUs, off on CPU adapters: on lavapipe the
    /// workgroup's barriers cost more than the walk (a sort of 10^6 float64: 4.9 s, against 1.0 s).
    pub fn workgroup_sorts(&self) -> bool {
        self.workgroup_sorts
    }

    /// How many times this process has waited for the GPU (runs on host data, downloads,
    /// [`Backend::synchronize`]). Runs on device data (`Program::run_device`) only enqueue work:
    /// a time loop of them waits for nothing, and this count shows it.
    pub fn host_waits(&self) -> u64 {
        self.gpu.checks.waits()
    }

    /// How many storage buffers this process has created for runs' buffers and device arrays
    /// (not counting those reused from dropped device arrays: a time loop of `run_device` calls
    /// creates none after its first steps, and wgpu zero-fills none).
    pub fn storage_buffers_created(&self) -> u64 {
        self.gpu.storage_buffers_created.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many staging buffers (host memory the GPU copies from or into) this process has
    /// created: a program's runs on host data, uploads and downloads of up to 256 MiB, and the
    /// checks of runs on device data once a wait has read them reuse theirs, so a loop of them
    /// creates none after its first steps.
    pub fn staging_buffers_created(&self) -> u64 {
        self.gpu.staging_buffers_created.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many bind groups (the buffers a dispatch binds) this process has created: a program
    /// keeps those of its last runs, so a time loop of `run_device` calls, whose arrays come back
    /// to the same buffers, creates none after its first steps.
    pub fn bind_groups_created(&self) -> u64 {
        self.gpu.bind_groups_created.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How many compute pipelines this process has created on the GPU (not counting those the
    /// pipeline cache answered). A driver compiles each one, so this is what a compile costs.
    pub fn pipelines_created(&self) -> u64 {
        self.gpu.pipelines_created.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Whether compiling `outputs` with this backend now would reuse the code compiled for a
    /// structurally equal DAG (see [`cache_stats`]).
    pub fn is_cached(&self, outputs: &Outputs) -> bool {
        cache::contains(outputs, &self.cache_settings())
    }

    fn cache_settings(&self) -> cache::Settings {
        cache::Settings {
            codegen: self.codegen.clone(),
            tiled_products: self.tiled_products,
            int64: self.int64,
            scratch_limit: self.scratch_limit,
        }
    }

    /// The adapter programs run on: name, backend, device type and driver.
    pub fn adapter(&self) -> String {
        self.gpu.describe()
    }

    /// Whether shaders may use float64 and complex128 (`SHADER_F64`, with 64-bit integers).
    /// Where they may, float32 and complex64 are held exactly in float64 (module `wgsl`), and no
    /// float32 result depends on the driver.
    pub fn has_f64(&self) -> bool {
        self.features().f64
    }

    /// Whether the driver flushes float32 subnormals to zero where shaders compute float32
    /// natively (adapters without float64): a probe, run once, multiplying the smallest
    /// subnormal's double by one half. Vulkan allows the flush; numpy's results keep them, so on
    /// such an adapter a program whose float32 values reach below `1.2e-38` can differ from
    /// numpy's there. Without it (or with float64, where float32 never meets the driver) results
    /// are numpy's.
    pub fn flushes_float32_subnormals(&self) -> Result<bool> {
        use std::sync::OnceLock;
        static FLUSHES: OnceLock<std::result::Result<bool, Error>> = OnceLock::new();
        FLUSHES
            .get_or_init(|| {
                let native = self.clone().with_int64(false);
                let x = pytato_core::Array::new_placeholder(Some("x"), [1].into(), pytato_core::DType::F32)?;
                let half = pytato_core::arith::multiply(&x, 0.5)?;
                let program = native.compile(&(&half).into())?;
                let tiny = pytato_core::ArrayData::from(ndarray::arr1(&[f32::from_bits(2)]).into_dyn());
                let out = program.run(&NamedData::from([("x".to_string(), tiny)]))?;
                Ok(out["_pt_out"].get_flat(0).is_some_and(|v| v.to_f64() == 0.0))
            })
            .clone()
    }

    /// The most loop iterations one invocation may run, all its loops together, where the driver
    /// silently stops longer loops (Mesa's llvmpipe: 65,535); programs whose loops need more are
    /// [`Error::Unsupported`] there.
    pub fn loop_limit(&self) -> Option<u64> {
        self.gpu.loop_limit
    }

    /// How many compute pipelines the process has created (the cache is keyed by WGSL source).
    pub fn cached_pipelines(&self) -> usize {
        self.gpu.cached_pipelines()
    }

    /// The WGSL modules of `outputs`' kernels, in execution order (what [`Backend::compile`]
    /// would validate and run).
    pub fn wgsl(&self, outputs: &Outputs) -> Result<Vec<String>> {
        let program = self.kernel_options().build(outputs)?;
        let names = program.buffer_ids();
        program
            .kernels
            .iter()
            .map(|k| {
                let shaders = wgsl::kernel_shaders(
                    &program,
                    &names,
                    k,
                    self.features(),
                    self.tiled_products,
                    !self.features().i64,
                )?;
                let mut sources: Vec<String> = shaders.block_sums.into_iter().map(|b| b.shader.source).collect();
                sources.push(shaders.kernel.source);
                Ok(sources)
            })
            .collect::<Result<Vec<_>>>()
            .map(|per_kernel| per_kernel.into_iter().flatten().collect())
    }
}

impl Wgpu {
    /// The code generation options, with kernels split to read no more buffers than a shader
    /// binds on this adapter (besides the control block, the output, two block sums and the constant
    /// table).
    fn kernel_options(&self) -> CodegenOptions {
        let mut options = self.codegen.clone();
        let bindable = (self.gpu.limits.max_storage_buffers_per_shader_stage as usize).saturating_sub(5).max(1);
        options.kernel.max_buffers = options.kernel.max_buffers.min(bindable);
        options
    }

    /// The pipeline of one shader of `kernel`, or why the adapter cannot bind its buffers.
    fn pipeline(&self, program: &KernelProgram, kernel: &Kernel, shader: &wgsl::Shader) -> Result<Arc<Pipeline>> {
        if dump_requested("wgsl") {
            eprintln!("{}", shader.source);
        }
        let max_bindings = self.gpu.limits.max_storage_buffers_per_shader_stage as usize;
        let bindings = shader.writable.len();
        if bindings > max_bindings {
            return Err(Error::Unsupported {
                backend: "wgpu".into(),
                reason: format!(
                    "kernel writing {} reads {} buffers; with its output, block sums and control block it needs \
                     {bindings} storage bindings, and the adapter allows {max_bindings} per shader stage",
                    program.buffers[kernel.output.0].name,
                    shader.buffers.len() - 1,
                ),
            });
        }
        self.gpu.pipeline(&shader.label, &shader.source, &shader.writable, self.features())
    }
}

impl Wgpu {
    /// One form of `kernel`'s shaders, compiled (`narrow`: with 32-bit indices, see
    /// `wgsl::kernel_shaders`).
    pub(crate) fn compile_kernel(
        &self,
        program: &KernelProgram,
        names: &HashMap<&str, BufferId>,
        kernel: &Kernel,
        narrow: bool,
    ) -> Result<CompiledKernel> {
        let features = self.features();
        let shaders = wgsl::kernel_shaders(program, names, kernel, features, self.tiled_products, narrow)?;
        let mut block_sums = Vec::with_capacity(shaders.block_sums.len());
        for b in shaders.block_sums {
            block_sums.push(CompiledBlockSums {
                pipeline: self.pipeline(program, kernel, &b.shader)?,
                reduce: b.reduce,
                element_size: b.element_size,
                constants: self.gpu.constant_table(&b.shader.constants)?,
                tree: match b.tree {
                    Some(tree) => Some((
                        self.pipeline(program, kernel, &tree)?,
                        self.gpu.constant_table(&tree.constants)?,
                        tree.loops,
                    )),
                    None => None,
                },
                loops: b.shader.loops,
            });
        }
        Ok(CompiledKernel {
            kernel: kernel.clone(),
            pipeline: self.pipeline(program, kernel, &shaders.kernel)?,
            constants: self.gpu.constant_table(&shaders.kernel.constants)?,
            buffers: shaders.kernel.buffers,
            loops: shaders.kernel.loops,
            block_sums,
            tiled: shaders.tiled,
            narrow,
            runs: std::sync::OnceLock::new(),
        })
    }

    /// `kernel`'s block-sums shaders in runs of blocks (see `wgsl::run_shaders`), compiled
    /// (`narrow`: with 32-bit indices).
    pub(crate) fn compile_runs(
        &self,
        program: &KernelProgram,
        kernel: &Kernel,
        narrow: bool,
    ) -> Result<Vec<Option<run::StageShader>>> {
        let names = program.buffer_ids();
        let shaders = wgsl::run_shaders(program, &names, kernel, self.features(), narrow)?;
        shaders
            .into_iter()
            .map(|shader| {
                shader
                    .map(|s| Ok((self.pipeline(program, kernel, &s)?, self.gpu.constant_table(&s.constants)?, s.loops)))
                    .transpose()
            })
            .collect()
    }
}

impl Backend for Wgpu {
    fn name(&self) -> &str {
        "wgpu"
    }

    fn upload(&self, data: &ArrayDataView<'_>) -> Result<DeviceArray> {
        self.gpu.same_process()?;
        resident::upload(self.gpu, data)
    }

    fn inline_rule(&self) -> pytato_core::function::InlineRule {
        self.codegen.calls
    }

    fn synchronize(&self) -> Result<()> {
        self.gpu.same_process()?;
        self.gpu.checks.synchronize(self.gpu)
    }

    /// Scans, searches, sorts, compactions and scatters run as kernels on device data (see `steps`).
    fn device_steps(&self) -> Option<Arc<dyn pytato_runtime::device::DeviceSteps>> {
        let ranking = if self.workgroup_sorts { Ranking::Workgroup } else { Ranking::Walk };
        Some(Arc::new(steps::GpuSteps { gpu: self.gpu, features: self.features(), ranking }))
    }

    fn compile(&self, outputs: &Outputs) -> Result<Box<dyn Program>> {
        self.gpu.same_process()?;
        if let Some(program) = pytato_runtime::backend::compile_calls_and_phases(self, outputs) {
            return program;
        }
        let settings = self.cache_settings();
        if let Some(compiled) = cache::lookup(outputs, &settings) {
            return Ok(Box::new(WgpuProgram::new(compiled, self.gpu)));
        }
        let signature = Signature::new(outputs)?;
        let program = self.kernel_options().build(outputs)?;
        if dump_requested("kernels") {
            eprintln!("{program}");
        }
        let names = program.buffer_ids();
        let mut kernels = Vec::with_capacity(program.kernels.len());
        for kernel in &program.kernels {
            let features = self.features();
            let narrow = wgsl::narrowable(&program, &names, kernel, features.i64)?;
            let form = |narrow: bool| self.compile_kernel(&program, &names, kernel, narrow);
            // The 64-bit form waits for a run that needs it, unless it is the only one (see
            // `KernelChoices`).
            let wide = match (features.i64, &narrow) {
                (false, _) => None,
                (true, Some(_)) => Some(std::sync::OnceLock::new()),
                (true, None) => Some(std::sync::OnceLock::from(form(false)?)),
            };
            let narrow = narrow.map(|bounds| Ok::<_, Error>((form(true)?, bounds))).transpose()?;
            let choices = KernelChoices { wide, narrow };
            if choices.wide.is_none() && choices.narrow.is_none() {
                return Err(Error::Unsupported {
                    backend: "wgpu".into(),
                    reason: format!(
                        "the kernel writing {} computes 64-bit integers (int64 data, or index arithmetic this \
                         backend cannot bound to 32 bits), and this adapter lacks SHADER_INT64",
                        program.describe_buffer(kernel.output)
                    ),
                });
            }
            kernels.push(choices);
        }
        // A DAG over arrays the GPU holds is not cached: the cache would keep their buffers alive,
        // and a DAG is equal only to one over the same buffers, which a time loop never rebuilds.
        let holds_device_data = program.buffers.iter().any(|b| matches!(b.kind, BufferKind::Data(DataRef::Device(_))));
        let compiled = Arc::new(Compiled::new(signature, program, kernels, self.clone()));
        if !holds_device_data {
            cache::insert(outputs, &settings, compiled.clone());
        }
        Ok(Box::new(WgpuProgram::new(compiled, self.gpu)))
    }
}

/// A compiled program: the code (shared with every program of an equal DAG) and its own buffers.
struct WgpuProgram {
    compiled: Arc<Compiled>,
    pool: std::sync::Mutex<Pool>,
    gpu: &'static Gpu,
}

impl WgpuProgram {
    fn new(compiled: Arc<Compiled>, gpu: &'static Gpu) -> WgpuProgram {
        WgpuProgram { compiled, pool: std::sync::Mutex::new(Pool::default()), gpu }
    }
}

impl Program for WgpuProgram {
    fn input_names(&self) -> Vec<String> {
        self.compiled.signature.input_names()
    }

    fn output_names(&self) -> Vec<String> {
        self.compiled.signature.outputs().iter().map(|(n, _)| n.clone()).collect()
    }

    fn datashape(&self) -> Option<pytato_datashape::Type> {
        Some(self.compiled.signature.datashape_with_inputs(&self.input_names()))
    }

    fn run_views(&self, inputs: &NamedViews<'_>) -> Result<NamedData> {
        self.gpu.same_process()?;
        self.compiled.run(self.gpu, &self.pool, inputs)
    }

    fn run_into(&self, inputs: &NamedViews<'_>, outputs: &mut NamedViewsMut<'_>) -> Result<()> {
        self.gpu.same_process()?;
        self.compiled.run_into(self.gpu, &self.pool, inputs, outputs)
    }

    fn run_device(&self, inputs: &NamedDeviceInputs<'_>) -> Result<NamedDeviceArrays> {
        self.gpu.same_process()?;
        self.compiled.run_device(self.gpu, &self.pool, inputs)
    }
}
