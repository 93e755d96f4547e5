//! The threads host steps ([`crate::phases`]) run on: rayon's global pool (sized by
//! `RAYON_NUM_THREADS`, else every core), or a pool of the number of threads a backend runs its
//! own work on ([`Backend::host_threads`](crate::backend::Backend::host_threads)), so that a
//! backend told to use two threads (MPI ranks sharing a node's cores) does not sort on sixteen.
//!
//! Pools are built once per size and shared by every program, so their threads persist between
//! runs as rayon's global ones do. The steps' results do not depend on the pool: every host step
//! gives the same bits on any number of threads.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rayon::ThreadPool;

/// Where a program's host steps run.
#[derive(Clone, Default)]
pub(crate) struct HostThreads {
    /// `None`: rayon's global pool.
    pool: Option<Arc<ThreadPool>>,
}

impl HostThreads {
    /// Host steps on `threads` threads; `None`, or the global pool's size, is the global pool.
    /// Should a pool fail to start (the system refusing threads), steps run on the global pool:
    /// the bound is a matter of speed, never of results.
    pub(crate) fn new(threads: Option<usize>) -> HostThreads {
        let pool = threads.filter(|&n| n >= 1 && n != rayon::current_num_threads()).and_then(shared_pool);
        HostThreads { pool }
    }

    /// Runs `step` on these threads.
    pub(crate) fn run<R: Send>(&self, step: impl FnOnce() -> R + Send) -> R {
        let counted = || {
            LATEST_THREADS.store(rayon::current_num_threads(), Ordering::Relaxed);
            step()
        };
        match &self.pool {
            Some(pool) => pool.install(counted),
            None => counted(),
        }
    }
}

static LATEST_THREADS: AtomicUsize = AtomicUsize::new(0);

/// The number of threads of the pool the latest host step of this process ran on (0 before the
/// first): for tests and diagnostics.
pub fn latest_host_step_threads() -> usize {
    LATEST_THREADS.load(Ordering::Relaxed)
}

/// The process's pool of `threads` threads, built on first use.
fn shared_pool(threads: usize) -> Option<Arc<ThreadPool>> {
    static POOLS: Mutex<BTreeMap<usize, Arc<ThreadPool>>> = Mutex::new(BTreeMap::new());
    // A panic while the lock was held left the map as it was: keep using it.
    let mut pools = POOLS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(pool) = pools.get(&threads) {
        return Some(pool.clone());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(move |i| format!("pytato-host-{threads}-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    pools.insert(threads, pool.clone());
    Some(pool)
}
