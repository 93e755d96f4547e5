//! Stopping runs in progress from outside: Ctrl-C.
//!
//! A run can take long (a large program on the interpreter, an accidental O(n²) reduction, a wait
//! for the GPU or for another rank's message). [`request`] asks every run in progress to stop: each
//! backend checks the request between kernels, between chunks of rows inside a long kernel, while
//! it waits for its device, between the phases of a program and while a distributed run waits for
//! messages, and a run that sees it ends with [`Error::Interrupted`]. Outputs written in place
//! ([`Program::run_into`](crate::backend::Program::run_into)) may then be partly written; nothing
//! else is left behind (work already handed to a GPU finishes there, its buffers kept alive by
//! the driver until then).
//!
//! The request is process-wide, as a signal is, and stays until [`clear`]ed: whoever handles the
//! interrupt clears it before running again. Runs started while it stands stop at their first
//! check. The Python package sets it from its `SIGINT` handler and clears it when a run, a
//! compile or a download starts, raising `KeyboardInterrupt` for one it stopped. A Rust program can do the same with a signal
//! crate, for example `signal_hook::flag::register(SIGINT, pytato_runtime::interrupt::flag())`.
//!
//! A distributed run stopped part way leaves the messages it sent in flight, and a later run may
//! take them in place of its own: after a stop, ranks should end or start their exchange afresh,
//! as after an MPI abort.
//!
//! What a check cannot reach: Cranelift's kernels check between rows of their first axis (every
//! 1024 rows, or every row where a row is about a second of work or more), so one element (a
//! reduction of 10^10 terms into a single output element, on one thread; on several, such a
//! reduction runs in 64 parts, checked between parts) runs to its end; so do one matrix product
//! through the GEMM, one host sort or scan, and one GPU dispatch. The interpreter checks every
//! few thousand elements or terms.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

use pytato_core::{Error, Result};

/// The request, shared with whatever sets it (a signal handler holds a clone).
static REQUESTED: LazyLock<Arc<AtomicBool>> = LazyLock::new(|| Arc::new(AtomicBool::new(false)));

/// Asks every run in progress, and every run started before [`clear`], to stop.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Withdraws the request: runs started from now on run to their end.
pub fn clear() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Whether a stop is requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// The flag itself, for a signal handler to set (setting it is [`request`]).
pub fn flag() -> Arc<AtomicBool> {
    Arc::clone(&REQUESTED)
}

/// `Err(Error::Interrupted)` naming `op` if a stop is requested: the check every backend makes.
pub fn check(op: &str) -> Result<()> {
    if requested() { Err(Error::Interrupted { op: op.into() }) } else { Ok(()) }
}
