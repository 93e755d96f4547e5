//! Runs on device data only enqueue: their error checks are read at the next point where the host
//! waits for the GPU anyway.
//!
//! A kernel that finds an index out of range (or an integer raised to a negative power) records
//! it in the run's control block. A run on host data reads that block back with its outputs, so
//! it reports its own error. A run on device data (`Program::run_device`) reads nothing back: it
//! copies its control header into a small staging buffer of its own, in the same submission, and
//! leaves it here. The next wait of the enqueuing thread on this GPU (a run on host data, a
//! download of a device array, `Backend::synchronize`) reads that thread's pending headers and
//! reports the first failed run, naming the run and the program, and how many failed after it.
//! Nothing is skipped: a header leaves the list only once it has been read. Errors stay with the
//! thread that enqueued the run, so one thread's failure never surfaces in another's call (a
//! thread that never waits again never sees its runs' errors, as with any asynchronous queue).
//!
//! [`DeferredChecks::waits`] counts the host's waits, so a test can hold a time loop of device
//! runs to none. A thread with [`MAX_PENDING`] unread runs waits for them at its next run, so
//! neither the staging buffers nor the queue grow without bound.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::ThreadId;

use pytato_core::{Error, Result};

use crate::device::Gpu;

/// Bytes of a control block's header: the error flag and what the check found.
pub(crate) const CONTROL_HEADER: u64 = 32;

/// The most runs on device data a thread leaves unread: a time loop that never waits would
/// otherwise keep a staging buffer per step and queue work without bound. The run after that many
/// waits for them (one wait per this many runs) and reports what they found.
pub(crate) const MAX_PENDING: usize = 256;

/// Turns a run's control header (the error flag first) into its error, if it failed.
pub(crate) type Decode = Arc<dyn Fn(&[u8]) -> Option<Error> + Send + Sync>;

/// A run on device data whose control header has not been read.
struct Pending {
    staging: wgpu::Buffer,
    run: u64,
    decode: Decode,
    /// The thread that enqueued the run: its next wait reports the error.
    thread: ThreadId,
}

/// The checks of one GPU's runs on device data, and its count of host waits.
#[derive(Default)]
pub(crate) struct DeferredChecks {
    pending: Mutex<Vec<Pending>>,
    runs: AtomicU64,
    waits: AtomicU64,
}

impl DeferredChecks {
    /// Whether the calling thread has [`MAX_PENDING`] runs unread: then its next run waits for
    /// them first (see [`MAX_PENDING`]).
    pub(crate) fn full(&self) -> bool {
        let here = std::thread::current().id();
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).iter().filter(|p| p.thread == here).count()
            >= MAX_PENDING
    }

    /// Records, in `encoder`, a copy of the header of `control` for the run being encoded, to be
    /// read at the next wait. Returns the run's number (from 1, counted over the process).
    pub(crate) fn defer(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        control: &wgpu::Buffer,
        decode: Decode,
    ) -> u64 {
        let staging = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("pytato deferred check"),
            size: CONTROL_HEADER,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_buffer_to_buffer(control, 0, &staging, 0, CONTROL_HEADER);
        let run = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).push(Pending {
            staging,
            run,
            decode,
            thread: std::thread::current().id(),
        });
        run
    }

    /// Blocks until the GPU has finished the work submitted so far: the only place the backend
    /// waits (counted). An interrupt ([`pytato_runtime::interrupt`]) ends the wait with
    /// [`Error::Interrupted`]; the work goes on on the GPU, and a mapping requested before the
    /// wait may then still be pending.
    pub(crate) fn wait(&self, gpu: &Gpu) -> Result<()> {
        self.waits.fetch_add(1, Ordering::Relaxed);
        crate::device::wait_interruptibly(gpu, "waiting for the GPU")
    }

    /// Blocks until the GPU has finished the work submitted so far, whatever is requested
    /// meanwhile (not counted: it follows a [`DeferredChecks::wait`] and waits for little more
    /// than copies of control headers).
    fn wait_uninterrupted(&self, gpu: &Gpu) -> Result<()> {
        gpu.poll(wgpu::PollType::wait_indefinitely())
            .map(|_| ())
            .map_err(|e| internal(format!("waiting for the GPU: {e}")))
    }

    /// An explicit synchronization: waits for the GPU and reports what pending runs found.
    pub(crate) fn synchronize(&self, gpu: &Gpu) -> Result<()> {
        let here = std::thread::current().id();
        if !self.pending.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|p| p.thread == here) {
            self.wait(gpu)?;
        }
        // With runs pending, the check waits.
        self.check(gpu, None)
    }

    /// How many times the host has waited for this GPU.
    pub(crate) fn waits(&self) -> u64 {
        self.waits.load(Ordering::Relaxed)
    }

    /// Reads the header of every pending run (after a wait, when some are pending) and returns
    /// the first failed run's error; `then` is the error of the run that waited, if it failed, to
    /// be reported after the earlier ones.
    ///
    /// An interrupt stops the wait before any header is taken from the list, so that none is
    /// lost: the next wait reads them.
    pub(crate) fn check(&self, gpu: &Gpu, then: Option<Error>) -> Result<()> {
        let here = std::thread::current().id();
        if self.pending.lock().unwrap_or_else(|p| p.into_inner()).iter().any(|p| p.thread == here) {
            self.wait(gpu)?;
        }
        let pending: Vec<Pending> = {
            let mut all = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            let (mine, others) = std::mem::take(&mut *all).into_iter().partition(|p| p.thread == here);
            *all = others;
            mine
        };
        let mut failures: Vec<(Option<u64>, Error)> = Vec::new();
        if !pending.is_empty() {
            let (sender, receiver) = std::sync::mpsc::channel();
            for (i, p) in pending.iter().enumerate() {
                let sender = sender.clone();
                p.staging.slice(..).map_async(wgpu::MapMode::Read, move |r| {
                    let _ = sender.send((i, r));
                });
            }
            drop(sender);
            self.wait_uninterrupted(gpu)?;
            let mut mapped = vec![false; pending.len()];
            for (i, r) in receiver.iter() {
                r.map_err(|e| internal(format!("mapping a deferred check: {e}")))?;
                mapped[i] = true;
            }
            for (p, mapped) in pending.iter().zip(mapped) {
                if !mapped {
                    return Err(internal(format!("the check of run {} on device data never completed", p.run)));
                }
                let view = p
                    .staging
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| internal(format!("reading a deferred check: {e}")))?;
                if let Some(e) = (p.decode)(&view) {
                    failures.push((Some(p.run), e));
                }
            }
        }
        failures.extend(then.map(|e| (None, e)));
        let later = failures.len().saturating_sub(1);
        match failures.into_iter().next() {
            None => Ok(()),
            Some((None, e)) => Err(e),
            Some((Some(run), e)) => Err(reported_late(e, run, later)),
        }
    }
}

/// `e`, found by run `run` on device data and reported at a later wait, with that said where the
/// error names its operation (its kind is unchanged).
fn reported_late(e: Error, run: u64, later: usize) -> Error {
    let more = if later > 0 { format!("; {later} later run(s) failed too") } else { String::new() };
    let note = |op: String| format!("{op} (in run {run} on device data, reported at the next wait{more})");
    match e {
        Error::IndexOutOfBounds { op, index, axis, length } => {
            Error::IndexOutOfBounds { op: note(op), index, axis, length }
        }
        Error::InvalidArgument { op, message } => Error::InvalidArgument { op: note(op), message },
        other => other,
    }
}

fn internal(message: String) -> Error {
    Error::Internal { backend: "wgpu".into(), message }
}
