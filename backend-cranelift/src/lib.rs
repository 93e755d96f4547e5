//! The Cranelift JIT backend: kernels compiled to native code.
//!
//! [`Cranelift::compile`] builds the kernel IR of the DAG
//! ([`pytato_transform::kernel::build_kernel_program`]: CSE, lowering, materialization, fusion),
//! translates each kernel into a Cranelift function (the module `codegen` documents the ABI) and
//! JIT-compiles them. Consecutive kernels over the same first axis that read each other's outputs
//! only in the same row share one function and compute row by row ([`grouped_kernels_run`]). Programs are **shape-polymorphic** (extents are computed from the size
//! parameters when a kernel starts) and **cached** by the DAG's structure: compiling a structurally
//! equal DAG again returns the program compiled the first time ([`cache_stats`] counts hits).
//!
//! Running a program checks every input with [`Signature::bind`] first, allocates outputs, reuses
//! temporaries from the previous run, and splits the outermost loop of each large kernel across
//! threads ([`Cranelift::with_threads`]; default: the environment variable `PYTATO_NUM_THREADS`,
//! else every core) on rayon's thread pool, which persists between kernels. A number of threads
//! asked for bounds the host steps of phased programs too (`Backend::host_threads`); otherwise
//! they run on rayon's global pool (`RAYON_NUM_THREADS`). A kernel with few
//! output elements (`sum(x)`, a norm, a dot product, the norms of three components) has its long
//! reductions split into parts the threads share ([`pytato_transform::split_reductions`]), with
//! the bits of one loop (a dot product so split sums by the summation scheme below, not through
//! the GEMM).
//!
//! Kernels that are floating-point matrix products (batched or not, DG's `ij,ej->ei`
//! included) run through the `gemm` crate's tuned kernels ([`gemm_kernels_run`] counts them):
//! they sum in the GEMM's order, with fused multiply-adds, as numpy's `@` does through BLAS. So
//! they agree with the loop nest to rounding, not bit for bit, and in special values but for
//! cases BLAS shares: a product that overflows inside a fused multiply-add is not rounded to ±inf
//! first (`inf + 1e308 * -2.5` stays `inf`, where the loop nest and numpy's elementwise `x * y`
//! give NaN); the complex kernels give NaN in both parts where a product has an infinite part
//! (numpy's `@` through zgemm often does too; the loop nest gives numpy's elementwise product,
//! `(-inf + 1j) * (1 + 0j) = -inf + nanj`); and float32 and complex64 products, summed in double
//! precision, are not rounded to single precision first (where the operands are large enough
//! for a product to overflow single precision, the loop nest computes the product instead, so
//! that overflows give its ±inf and NaN, as every backend and numpy do).
//! Every other sum follows `pytato_runtime::math`'s summation scheme, bit for bit with the
//! interpreter.
//!
//! Semantics are numpy's, as the reference interpreter's: integer `//` and `%` by zero give 0 and
//! never trap, `MIN // -1` wraps, NaN propagates through `maximum`/`minimum`, and a subscript that
//! is not proved in range at compile time (module `bounds`) is checked when it runs, so an index-array
//! value out of range is [`pytato_core::Error::IndexOutOfBounds`], never an access out of bounds.
//!
//! `PYTATO_DUMP=kernels` prints the kernel IR of every program compiled, `PYTATO_DUMP=clif` the
//! Cranelift IR of every kernel and `PYTATO_DUMP=asm` its machine code (comma-separate them).
//!
//! ```
//! use pytato_core::{ArrayData, DType, Dim};
//! use pytato_runtime::{backend::{Backend, NamedData}};
//! use pytato_frontend as pt;
//! use pytato_backend_cranelift::Cranelift;
//! let x = pt::placeholder("x", [Dim::param("n")], DType::I64)?;
//! let y = pt::floor_divide(&x, 2)?;
//! let program = Cranelift::new().compile(&(&y).into())?;
//! let inputs = NamedData::from([("x".to_string(), ArrayData::from(ndarray::arr1(&[-3i64, 4, 5]).into_dyn()))]);
//! let out = program.run(&inputs)?;
//! assert_eq!(out["_pt_out"].as_array::<i64>().unwrap().as_slice().unwrap(), &[-2, 2, 2]);
//! # Ok::<(), pytato_core::Error>(())
//! ```

mod codegen;
mod contraction;
mod groups;
mod helpers;
mod jit;
mod run;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pytato_core::{Array, Result};
use pytato_runtime::backend::{Backend, BackendRegistration, NamedData, NamedViews, NamedViewsMut, Outputs, Program};
use pytato_runtime::binding::Signature;
use pytato_transform::data_inputs::{DataInputs, data_as_inputs};
use pytato_transform::kernel::{CodegenOptions, dump_requested};
use pytato_transform::split_reductions::split_reductions;

use crate::run::Compiled;

/// The Cranelift JIT backend, registered as `"cranelift"` (the default backend when linked).
#[derive(Clone, Debug)]
pub struct Cranelift {
    threads: usize,
    /// Whether `threads` was asked for (`PYTATO_NUM_THREADS`, [`Cranelift::with_threads`]); if not,
    /// host steps run on rayon's global pool, which `RAYON_NUM_THREADS` sizes.
    threads_asked: bool,
    codegen: CodegenOptions,
}

inventory::submit! {
    BackendRegistration {
        name: "cranelift",
        description: "Cranelift JIT: fused kernels compiled to native code, threaded, cached",
        priority: 30,
        constructor: || Ok(Box::new(Cranelift::new())),
    }
}

impl Default for Cranelift {
    fn default() -> Cranelift {
        Cranelift::new()
    }
}

impl Cranelift {
    /// A backend using `PYTATO_NUM_THREADS` threads if that is set, else every core.
    pub fn new() -> Cranelift {
        let asked: Option<usize> = std::env::var("PYTATO_NUM_THREADS").ok().and_then(|v| v.trim().parse().ok());
        let threads = asked.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        Cranelift { threads: threads.max(1), threads_asked: asked.is_some(), codegen: CodegenOptions::default() }
    }

    /// The same backend, running programs on at most `threads` threads (at least 1), host steps
    /// (sorts, scans, compactions, scatters) included.
    pub fn with_threads(self, threads: usize) -> Cranelift {
        Cranelift { threads: threads.max(1), threads_asked: true, ..self }
    }

    /// The same backend, generating code under `codegen` (inlining limits, a transformation of
    /// each kernel program before translation). Programs compiled under other options are cached
    /// apart.
    pub fn with_codegen(self, codegen: CodegenOptions) -> Cranelift {
        Cranelift { codegen, ..self }
    }

    /// The number of threads programs compiled by this backend run on.
    pub fn threads(&self) -> usize {
        self.threads
    }
}

impl Backend for Cranelift {
    fn name(&self) -> &str {
        "cranelift"
    }

    /// Host steps (sorts, scans, compactions, scatters) run on as many threads as kernels do,
    /// where a number was asked for.
    fn host_threads(&self) -> Option<usize> {
        self.threads_asked.then_some(self.threads)
    }

    /// Host steps' fresh results are backed by transparent huge pages where large, as this
    /// backend's own outputs are (see `run::advise_huge_pages`).
    fn fresh_memory_advice(&self) -> Option<pytato_runtime::spare::FreshMemoryAdvice> {
        Some(run::advise_huge_pages)
    }

    fn inline_rule(&self) -> pytato_core::function::InlineRule {
        self.codegen.calls
    }

    fn compile(&self, outputs: &Outputs) -> Result<Box<dyn Program>> {
        // A DAG without data wrappers is its own key: a hit needs no pass over the DAG. (The
        // cache holds only DAGs without wrappers, so a DAG with some never matches here.)
        let key = self.codegen.cache_key();
        if let Some(compiled) = lookup(outputs.structural_hash(), &outputs.entries(), key) {
            HITS.fetch_add(1, Ordering::Relaxed);
            let data = DataInputs { outputs: outputs.clone(), data: Vec::new() };
            return Ok(Box::new(CraneliftProgram { compiled, threads: self.threads, data }));
        }
        if let Some(program) = pytato_runtime::backend::compile_calls_and_phases(self, outputs) {
            return program;
        }
        // Data wrappers are compiled as inputs: a DAG rebuilt over other data is the same program.
        let data = data_as_inputs(outputs)?.to_host()?;
        let compiled = cached_or_compile(&data.outputs, &self.codegen)?;
        Ok(Box::new(CraneliftProgram { compiled, threads: self.threads, data }))
    }
}

/// How many compilations the process-wide program cache answered, and how many it did not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Compilations answered from the cache.
    pub hits: u64,
    /// Compilations that compiled.
    pub misses: u64,
}

static HITS: AtomicU64 = AtomicU64::new(0);
static MISSES: AtomicU64 = AtomicU64::new(0);

/// The program cache's counters since the process started.
pub fn cache_stats() -> CacheStats {
    CacheStats { hits: HITS.load(Ordering::Relaxed), misses: MISSES.load(Ordering::Relaxed) }
}

/// How many kernels ran as matrix products through the `gemm` crate since the process started:
/// floating-point kernels that are (batched) matrix products of two stored arrays
/// ([`pytato_transform::contraction`]), such as `a @ b` or DG's `einsum("ij,ej->ei", d, u)`
/// (float32 and complex64 ones as float64 and complex128 GEMMs, rounded once). They are summed
/// in the GEMM's order, with fused multiply-adds, as BLAS does: equal to the loop nest's results
/// up to rounding, not bit for bit.
pub fn gemm_kernels_run() -> u64 {
    contraction::RUN.load(Ordering::Relaxed)
}

/// How many kernel launches were split across threads since the process started: a kernel runs
/// on several threads where its work (expression nodes per element times elements) is large
/// enough to pay for waking them, and on the caller's thread otherwise.
pub fn kernels_split() -> u64 {
    run::SPLIT.load(Ordering::Relaxed)
}

/// How many kernels ran in a launch group with others since the process started: consecutive
/// kernels over the same first axis, where each reads what the earlier ones wrote only in the
/// same row (a Runge–Kutta stage's `k` and then `u`), are one function that computes them row by
/// row, so that the later ones read the earlier ones' results from the cache.
pub fn grouped_kernels_run() -> u64 {
    run::GROUPED.load(Ordering::Relaxed)
}

/// Programs kept; the oldest is dropped beyond this.
const CACHE_CAPACITY: usize = 64;

/// The DAG's hash and outputs, the options' key and the options (which keep a transformation, and
/// so its key, alive), and the program.
type CacheEntry = (u64, Vec<(String, Array)>, pytato_transform::kernel::CodegenKey, CodegenOptions, Arc<Compiled>);

fn cache() -> &'static Mutex<Vec<CacheEntry>> {
    static CACHE: OnceLock<Mutex<Vec<CacheEntry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
}

/// The cached program of a DAG structurally equal to `entries` (of structural hash `hash`),
/// compiled under options of key `key`.
fn lookup(hash: u64, entries: &[(String, Array)], key: pytato_transform::kernel::CodegenKey) -> Option<Arc<Compiled>> {
    let cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    cache.iter().find(|(h, e, k, _, _)| *h == hash && *k == key && e.as_slice() == entries).map(|(.., c)| c.clone())
}

/// Whether compiling `outputs` now would be answered from the cache: a structurally equal DAG,
/// or one that differs only in the arrays its data wrappers hold, was compiled before and is
/// still cached.
pub fn is_cached(outputs: &Outputs) -> bool {
    let key = CodegenOptions::default().cache_key();
    data_as_inputs(outputs).is_ok_and(|d| lookup(d.outputs.structural_hash(), &d.outputs.entries(), key).is_some())
}

/// The compiled program of a structurally equal DAG under the same options, or a new one.
fn cached_or_compile(outputs: &Outputs, codegen: &CodegenOptions) -> Result<Arc<Compiled>> {
    let hash = outputs.structural_hash();
    let entries = outputs.entries();
    let key = codegen.cache_key();
    if let Some(compiled) = lookup(hash, &entries, key) {
        HITS.fetch_add(1, Ordering::Relaxed);
        return Ok(compiled);
    }
    MISSES.fetch_add(1, Ordering::Relaxed);
    let signature = Signature::new(outputs)?;
    let program = codegen.build(outputs)?;
    let (program, splits) = split_reductions(program, run::PARALLEL_THRESHOLD);
    if dump_requested("kernels") {
        eprintln!("{program}");
    }
    let compiled = Arc::new(Compiled::new(signature, program, splits, codegen.simd)?);
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= CACHE_CAPACITY {
        cache.remove(0);
    }
    cache.push((hash, entries, key, codegen.clone(), compiled.clone()));
    Ok(compiled)
}

struct CraneliftProgram {
    compiled: Arc<Compiled>,
    threads: usize,
    /// The data the compiled program takes as inputs.
    data: DataInputs,
}

impl Program for CraneliftProgram {
    fn input_names(&self) -> Vec<String> {
        self.data.user_inputs(self.compiled.signature.input_names())
    }

    fn output_names(&self) -> Vec<String> {
        self.compiled.signature.outputs().iter().map(|(n, _)| n.clone()).collect()
    }

    fn datashape(&self) -> Option<pytato_datashape::Type> {
        Some(self.compiled.signature.datashape_with_inputs(&self.input_names()))
    }

    fn run_views(&self, inputs: &NamedViews<'_>) -> Result<NamedData> {
        let inputs = self.data.bind(inputs, &|| self.input_names())?;
        self.compiled.run(&inputs, self.threads).map_err(|e| self.data.user_error(e))
    }

    fn run_into(&self, inputs: &NamedViews<'_>, outputs: &mut NamedViewsMut<'_>) -> Result<()> {
        let inputs = self.data.bind(inputs, &|| self.input_names())?;
        self.compiled.run_into(&inputs, outputs, self.threads).map_err(|e| self.data.user_error(e))
    }
}
