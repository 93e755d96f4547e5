//! The program cache: compiling a DAG structurally equal to one compiled before (under the same
//! options and adapter settings) returns the kernels, shaders and pipelines compiled then, as the
//! Cranelift backend does. Only the compiled code is shared: each program keeps its own buffers,
//! freed with it. A data wrapper is equal only to a wrapper of the same buffer, so a hit holds the
//! same data. The cache keeps the [`CACHE_CAPACITY`] most recently compiled DAGs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use pytato_core::Array;
use pytato_runtime::backend::Outputs;
use pytato_transform::kernel::{CodegenKey, CodegenOptions};

use crate::run::Compiled;

/// Programs kept; the oldest is dropped beyond this.
const CACHE_CAPACITY: usize = 64;

/// What besides the DAG decides the compiled code: the code generation options' key, the options
/// themselves (which keep a transformation, and so its key, alive), and the backend's settings
/// (tiled products, 64-bit integers).
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) codegen: CodegenOptions,
    pub(crate) tiled_products: bool,
    pub(crate) int64: bool,
    pub(crate) scratch_limit: Option<u64>,
}

impl Settings {
    fn key(&self) -> (CodegenKey, bool, bool, Option<u64>) {
        (self.codegen.cache_key(), self.tiled_products, self.int64, self.scratch_limit)
    }
}

struct Entry {
    hash: u64,
    entries: Vec<(String, Array)>,
    settings: Settings,
    compiled: Arc<Compiled>,
}

fn cache() -> &'static Mutex<Vec<Entry>> {
    static CACHE: OnceLock<Mutex<Vec<Entry>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Vec::new()))
}

static HITS: AtomicU64 = AtomicU64::new(0);
static MISSES: AtomicU64 = AtomicU64::new(0);

/// The code compiled before for a DAG equal to `outputs` under `settings`, moved to the back (most
/// recently used).
pub(crate) fn lookup(outputs: &Outputs, settings: &Settings) -> Option<Arc<Compiled>> {
    let (hash, entries, key) = (outputs.structural_hash(), outputs.entries(), settings.key());
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    let at = cache.iter().position(|e| e.hash == hash && e.settings.key() == key && e.entries == entries);
    match at {
        Some(at) => {
            let entry = cache.remove(at);
            let compiled = entry.compiled.clone();
            cache.push(entry);
            HITS.fetch_add(1, Ordering::Relaxed);
            Some(compiled)
        }
        None => {
            MISSES.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

/// Whether a DAG equal to `outputs` under `settings` is cached (counting nothing).
pub(crate) fn contains(outputs: &Outputs, settings: &Settings) -> bool {
    let (hash, entries, key) = (outputs.structural_hash(), outputs.entries(), settings.key());
    let cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    cache.iter().any(|e| e.hash == hash && e.settings.key() == key && e.entries == entries)
}

/// Keeps `compiled`, the code of `outputs` under `settings`.
pub(crate) fn insert(outputs: &Outputs, settings: &Settings, compiled: Arc<Compiled>) {
    let mut cache = cache().lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= CACHE_CAPACITY {
        cache.remove(0);
    }
    cache.push(Entry {
        hash: outputs.structural_hash(),
        entries: outputs.entries(),
        settings: settings.clone(),
        compiled,
    });
}

/// How many compilations the program cache answered (`hits`) and how many compiled (`misses`)
/// since the process started.
pub fn cache_stats() -> (u64, u64) {
    (HITS.load(Ordering::Relaxed), MISSES.load(Ordering::Relaxed))
}
