//! Runs on device data only enqueue: their error checks are read at the next point where the host
//! waits for the GPU anyway.
//!
//! A kernel that finds an index out of range (or an integer raised to a negative power) records it
//! in the run's control block. A run on host data reads that block back with its outputs, so it
//! reports its own error. A run on device data (`Program::run_device`) reads nothing back: it
//! copies its control header into a small staging buffer of its own (kept for a later run once
//! read), in the same submission, and leaves it here. The next wait of the enqueuing thread on this
//! GPU (a run on host data, a download of a device array, `Backend::synchronize`) reads that
//! thread's pending headers and reports the first failed run, naming the run and the program, and
//! how many failed after it. Nothing is skipped: a header leaves the list only once it has been
//! read. Errors stay with the thread that enqueued the run, so one thread's failure never surfaces
//! in another's call (a thread that never waits again never sees its runs' errors, as with any
//! asynchronous queue).
//!
//! The outputs of a failed run hold what its kernels left, which is not numpy's result. So each
//! device array a run on device data writes carries its run's [`RunStatus`]: once a wait has read
//! that run's header, the array reports the run's error whenever it is downloaded or given to
//! another run, every time (not once, as the wait does): its values are never handed on as if
//! they were good. A run that reads a device array written by a run not yet read links that
//! run's status into its own, so that what a failed run wrote poisons everything computed from
//! it; once a run is read and found good, the links to good runs are dropped, and so a time loop
//! keeps no chain of statuses.
//!
//! Between two waits the statuses of a time loop's runs form a chain of up to [`MAX_PENDING`]
//! unread runs, and every run asks of each array it reads whether a failure lies below it. What a
//! walk finds can only change when a wait reads a header, so each status remembers the count of
//! reads ([`READS`]) at which a walk last found no failure below it, and at which it was last
//! found not yet good: a walk stops at a status whose answer is that of the current count. A run
//! then visits the statuses of its own inputs only, not the chain below them (the walks of a loop
//! of `n` runs were `n^2 / 2` visits).
//!
//! [`DeferredChecks::waits`] counts the host's waits, so a test can hold a time loop of device
//! runs to none. A thread with [`MAX_PENDING`] unread runs waits for them at its next run, so
//! neither the staging buffers nor the queue grow without bound.

use std::collections::HashMap;
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

/// How many control headers have been read (see the module docs): a status's remembered answers
/// hold while this count is unchanged. One count for the process, as there is one GPU.
static READS: AtomicU64 = AtomicU64::new(0);

/// Turns a run's control header (the error flag first) into its error, if it failed.
pub(crate) type Decode = Arc<dyn Fn(&[u8]) -> Option<Error> + Send + Sync>;

/// What is known of the run that wrote a device array (see the module docs).
pub(crate) struct RunStatus {
    run: u64,
    /// The count of headers read whose changes this status's remembered answers follow:
    /// [`READS`], or a test's own count.
    reads: &'static AtomicU64,
    state: Mutex<State>,
}

struct State {
    /// The run's own error once its header is read (`Some(None)`: it found none).
    own: Option<Option<Error>>,
    /// The statuses of the device arrays it read that were not known to be good when it was
    /// enqueued (unread runs, or runs that read such arrays).
    inputs: Vec<Arc<RunStatus>>,
    /// The count of reads at which a search last found no failure here or below (see the module
    /// docs): while the count is unchanged, none is.
    clean_at: Option<u64>,
    /// The count of reads at which this status was last found not known good: while the count
    /// is unchanged, it is not.
    pending_at: Option<u64>,
}

impl RunStatus {
    fn new(
        run: u64,
        own: Option<Option<Error>>,
        inputs: Vec<Arc<RunStatus>>,
        reads: &'static AtomicU64,
    ) -> Arc<RunStatus> {
        let state = State { own, inputs, clean_at: None, pending_at: None };
        Arc::new(RunStatus { run, reads, state: Mutex::new(state) })
    }

    /// The status of work with no check of its own (a step that cannot fail) over arrays of the
    /// `inputs` statuses: `None` where there are none, so that the result is known good.
    pub(crate) fn derived(inputs: Vec<Arc<RunStatus>>) -> Option<Arc<RunStatus>> {
        let reads = inputs.first()?.reads;
        Some(RunStatus::new(0, Some(None), inputs, reads))
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether this run and everything it read are known to be good; drops the links to those
    /// that are. A walk in post-order that settles each status once (links meet again: a
    /// multistep method reads the last two steps' arrays), holding one lock at a time.
    fn is_good(self: &Arc<RunStatus>) -> bool {
        let reads = self.reads.load(Ordering::SeqCst);
        let mut good: HashMap<*const RunStatus, bool> = HashMap::new();
        let mut stack = vec![(Arc::clone(self), false)];
        while let Some((status, inputs_settled)) = stack.pop() {
            let key = Arc::as_ptr(&status);
            if good.contains_key(&key) {
                continue;
            }
            if inputs_settled {
                let mut state = status.state();
                state.inputs.retain(|input| !good[&Arc::as_ptr(input)]);
                let settled = state.inputs.is_empty();
                if !settled {
                    state.pending_at = Some(reads);
                }
                good.insert(key, settled);
                continue;
            }
            let mut state = status.state();
            if state.pending_at == Some(reads) {
                good.insert(key, false);
                continue;
            }
            if !matches!(state.own, Some(None)) {
                state.pending_at = Some(reads);
                good.insert(key, false);
                continue;
            }
            let inputs = state.inputs.clone();
            drop(state);
            stack.push((status, true));
            stack.extend(inputs.into_iter().filter(|i| !good.contains_key(&Arc::as_ptr(i))).map(|i| (i, false)));
        }
        good[&Arc::as_ptr(self)]
    }

    /// The error of a failed run among this one and those whose arrays it read, transitively,
    /// as far as waits have read them; `None` while none is known to have failed.
    pub(crate) fn failure(self: &Arc<RunStatus>) -> Option<Error> {
        self.search().0
    }

    /// [`RunStatus::failure`], and how many statuses the search visited: each at most once, so
    /// that links that meet again (a multistep method reads the last two steps' arrays, unread)
    /// are not walked once per path, which grows exponentially with the steps; and none below a
    /// status found clean since the last read (see the module docs).
    fn search(self: &Arc<RunStatus>) -> (Option<Error>, usize) {
        // Loaded before any state: a read that lands during the search counts past it, so what
        // this search marks is stale at once rather than wrong.
        let reads = self.reads.load(Ordering::SeqCst);
        let mut seen: std::collections::HashSet<*const RunStatus> = std::collections::HashSet::new();
        let mut stack = vec![Arc::clone(self)];
        let mut clean = Vec::new();
        while let Some(status) = stack.pop() {
            if !seen.insert(Arc::as_ptr(&status)) {
                continue;
            }
            let state = status.state();
            if let Some(Some(e)) = &state.own {
                return (Some(computed_by_failed_run(e.clone(), status.run)), seen.len());
            }
            if state.clean_at != Some(reads) {
                stack.extend(state.inputs.iter().cloned());
                drop(state);
                clean.push(status);
            }
        }
        for status in clean {
            status.state().clean_at = Some(reads);
        }
        (None, seen.len())
    }

    /// Records what the run's header says, and drops the links to runs known to be good. The
    /// count of reads moves after the header is recorded, so that no answer remembered before
    /// it holds after it.
    fn read(self: &Arc<RunStatus>, own: Option<Error>) {
        self.state().own = Some(own);
        self.reads.fetch_add(1, Ordering::SeqCst);
        self.is_good();
    }
}

/// The statuses of `arrays` that a run reading them must link (see the module docs), or the
/// error of a failed run one of them came from: such an array is refused.
pub(crate) fn input_statuses<'a>(
    arrays: impl IntoIterator<Item = &'a Option<Arc<RunStatus>>>,
) -> Result<Vec<Arc<RunStatus>>> {
    let mut linked = Vec::new();
    for status in arrays.into_iter().flatten() {
        if let Some(e) = status.failure() {
            return Err(e);
        }
        if !status.is_good() && !linked.iter().any(|s| Arc::ptr_eq(s, status)) {
            linked.push(Arc::clone(status));
        }
    }
    Ok(linked)
}

/// A run on device data whose control header has not been read.
struct Pending {
    staging: wgpu::Buffer,
    status: Arc<RunStatus>,
    decode: Decode,
    /// The thread that enqueued the run: its next wait reports the error.
    thread: ThreadId,
}

/// The checks of one GPU's runs on device data, and its count of host waits.
#[derive(Default)]
pub(crate) struct DeferredChecks {
    pending: Mutex<Vec<Pending>>,
    /// Staging buffers whose header has been read, unmapped, for the next runs: a time loop
    /// creates none after its first [`MAX_PENDING`] runs (a buffer made and freed per run costs
    /// the host a creation, and wgpu's maintenance at a later submission a destruction).
    free: Mutex<Vec<wgpu::Buffer>>,
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
    /// read at the next wait. Returns the run's status (its number counted from 1 over the
    /// process), linked to the `inputs` statuses of the device arrays it reads
    /// ([`input_statuses`]).
    pub(crate) fn defer(
        &self,
        gpu: &Gpu,
        encoder: &mut wgpu::CommandEncoder,
        control: &wgpu::Buffer,
        decode: Decode,
        inputs: Vec<Arc<RunStatus>>,
    ) -> Result<Arc<RunStatus>> {
        let reused = self.free.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let staging = match reused {
            Some(staging) => staging,
            None => gpu.staging_buffer(CONTROL_HEADER, wgpu::MapMode::Read, "pytato deferred check")?,
        };
        encoder.copy_buffer_to_buffer(control, 0, &staging, 0, CONTROL_HEADER);
        let run = self.runs.fetch_add(1, Ordering::Relaxed) + 1;
        let status = RunStatus::new(run, None, inputs, &READS);
        self.pending.lock().unwrap_or_else(|p| p.into_inner()).push(Pending {
            staging,
            status: Arc::clone(&status),
            decode,
            thread: std::thread::current().id(),
        });
        Ok(status)
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
            // In the order the runs were enqueued: a run's inputs are read before it.
            for (p, mapped) in pending.iter().zip(mapped) {
                if !mapped {
                    return Err(internal(format!("the check of run {} on device data never completed", p.status.run)));
                }
                let view = p
                    .staging
                    .slice(..)
                    .get_mapped_range()
                    .map_err(|e| internal(format!("reading a deferred check: {e}")))?;
                let own = (p.decode)(&view);
                drop(view);
                if let Some(e) = &own {
                    failures.push((Some(p.status.run), e.clone()));
                }
                p.status.read(own);
            }
            let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
            for p in pending {
                p.staging.unmap();
                if free.len() < MAX_PENDING {
                    free.push(p.staging);
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
    noted(e, &format!("in run {run} on device data, reported at the next wait{more}"))
}

/// `e`, the error of run `run` on device data, reported when an array that run computed (or one
/// computed from it) is read or used: its values are what the failed run left.
fn computed_by_failed_run(e: Error, run: u64) -> Error {
    noted(e, &format!("in run {run} on device data, which computed this array"))
}

/// `e` with `note` after the operation it names, where it names one (its kind is unchanged).
fn noted(e: Error, note: &str) -> Error {
    let op = |op: String| format!("{op} ({note})");
    match e {
        Error::IndexOutOfBounds { op: name, index, axis, length } => {
            Error::IndexOutOfBounds { op: op(name), index, axis, length }
        }
        Error::InvalidArgument { op: name, message } => Error::InvalidArgument { op: op(name), message },
        other => other,
    }
}

fn internal(message: String) -> Error {
    Error::Internal { backend: "wgpu".into(), message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out_of_range(index: i64) -> Error {
        Error::IndexOutOfBounds { op: "an index array".into(), index, axis: 0, length: 3 }
    }

    /// A count of reads of the test's own, so that the reads of tests running at the same time
    /// do not move it.
    fn own_count() -> &'static AtomicU64 {
        Box::leak(Box::new(AtomicU64::new(0)))
    }

    /// Runs `1..=n`, each reading the previous one's output, enqueued before any is read.
    fn chain(n: u64) -> Vec<Arc<RunStatus>> {
        let reads = own_count();
        let mut runs: Vec<Arc<RunStatus>> = Vec::new();
        for run in 1..=n {
            let inputs = input_statuses(runs.last().map(|r| Some(Arc::clone(r))).iter()).unwrap();
            runs.push(RunStatus::new(run, None, inputs, reads));
        }
        runs
    }

    /// Runs `1..=n` of a two-step method: runs 1 and 2 read nothing, each later one the outputs
    /// of the two before it, all unread (links that meet again).
    fn two_step_chain(n: u64) -> Vec<Arc<RunStatus>> {
        let reads = own_count();
        let mut runs: Vec<Arc<RunStatus>> = Vec::new();
        for run in 1..=n {
            let inputs = match runs.as_slice() {
                [.., before, last] => input_statuses([&Some(Arc::clone(last)), &Some(Arc::clone(before))]).unwrap(),
                _ => Vec::new(),
            };
            runs.push(RunStatus::new(run, None, inputs, reads));
        }
        runs
    }

    #[test]
    fn a_time_loop_of_good_runs_keeps_no_chain_of_statuses() {
        let runs = chain(1000);
        assert!(runs[999].failure().is_none(), "unread runs are not failures");
        assert!(!runs[999].is_good(), "unread runs are not known good");
        for r in &runs {
            r.read(None);
        }
        assert!(runs[999].is_good());
        assert!(runs.iter().all(|r| r.state().inputs.is_empty()), "each read dropped its link");
        // Steps (derived statuses) between runs are pruned alike.
        let reads = own_count();
        let first = RunStatus::new(1, None, Vec::new(), reads);
        let step = RunStatus::derived(vec![Arc::clone(&first)]).unwrap();
        let second = RunStatus::new(2, None, input_statuses([&Some(Arc::clone(&step))]).unwrap(), reads);
        first.read(None);
        second.read(None);
        assert!(second.is_good() && second.state().inputs.is_empty());
        assert!(RunStatus::derived(Vec::new()).is_none(), "work over good arrays needs no status");
    }

    #[test]
    fn a_search_visits_each_status_once_where_links_meet_again() {
        let runs = two_step_chain(200);
        // As no run has been read, every search found nothing: mark them unsearched.
        for r in &runs {
            r.state().clean_at = None;
        }
        let (failure, visited) = runs[199].search();
        assert!(failure.is_none());
        assert_eq!(visited, 200, "each status once (walking every path would visit about 2^139)");
        runs[0].read(Some(out_of_range(9)));
        let (failure, visited) = runs[199].search();
        assert!(matches!(failure, Some(Error::IndexOutOfBounds { index: 9, .. })));
        assert!(visited <= 200);
    }

    #[test]
    fn steps_between_runs_keep_no_chain_either() {
        // run -> step -> step -> run -> ...: each run reads what two steps made of the last run.
        let reads = own_count();
        let mut runs: Vec<Arc<RunStatus>> = Vec::new();
        let mut last: Option<Arc<RunStatus>> = None;
        for run in 1..=300u64 {
            let inputs = input_statuses([&last]).unwrap();
            let status = RunStatus::new(run, None, inputs, reads);
            let step = RunStatus::derived(input_statuses([&Some(Arc::clone(&status))]).unwrap());
            last = RunStatus::derived(input_statuses([&step]).unwrap());
            runs.push(status);
        }
        for r in &runs {
            r.read(None);
        }
        assert!(runs.iter().all(|r| r.state().inputs.is_empty()), "each read dropped its links");
        assert!(last.unwrap().is_good());
    }

    #[test]
    fn runs_between_waits_search_only_their_own_inputs() {
        // A time loop of 1000 runs, none read: each run searches below the array it reads, as
        // `input_statuses` does, and so visits that array's status and the one below it, whose
        // search the run before made; not the whole chain (about 500,000 visits in all).
        let reads = own_count();
        let mut runs: Vec<Arc<RunStatus>> = Vec::new();
        let mut visits = 0;
        for run in 1..=1000u64 {
            if let Some(last) = runs.last() {
                let (failure, visited) = last.search();
                assert!(failure.is_none());
                visits += visited;
            }
            let inputs = input_statuses(runs.last().map(|r| Some(Arc::clone(r))).iter()).unwrap();
            runs.push(RunStatus::new(run, None, inputs, reads));
        }
        assert!(visits <= 2 * 1000, "{visits} visits");
        // A read moves the count, so that the next search walks again and finds the failure.
        runs[0].read(Some(out_of_range(4)));
        assert!(matches!(runs[999].failure(), Some(Error::IndexOutOfBounds { index: 4, .. })));
        assert!(runs[999].failure().is_some(), "every time, not once");
        // And a good read makes an array good that was not.
        let other = chain(3);
        assert!(!other[2].is_good());
        for r in &other {
            r.read(None);
        }
        assert!(other[2].is_good() && other[2].failure().is_none());
    }

    #[test]
    fn reading_a_multistep_loop_after_a_failure_settles_each_status_once() {
        let runs = two_step_chain(200);
        // Walking every path below each run as it is read would take about 2^139 steps.
        runs[0].read(Some(out_of_range(5)));
        for r in &runs[1..] {
            r.read(None);
        }
        assert!(
            runs[1..].iter().skip(1).all(|r| matches!(r.failure(), Some(Error::IndexOutOfBounds { index: 5, .. })))
        );
        assert!(runs[1].failure().is_none(), "run 2 read nothing of run 1");
    }

    #[test]
    fn what_a_failed_run_wrote_poisons_everything_computed_from_it() {
        let runs = chain(10);
        for (k, r) in runs.iter().enumerate() {
            r.read((k == 3).then(|| out_of_range(7)));
        }
        for r in &runs[..3] {
            assert!(r.failure().is_none() && r.is_good());
        }
        for r in &runs[3..] {
            match r.failure() {
                Some(Error::IndexOutOfBounds { op, index: 7, .. }) => {
                    assert!(op.contains("in run 4 on device data"), "{op}")
                }
                other => panic!("{other:?}"),
            }
            // Every time, not once.
            assert!(r.failure().is_some());
        }
        // A run reading such an array is refused before it is enqueued.
        assert!(matches!(input_statuses([&Some(Arc::clone(&runs[9]))]), Err(Error::IndexOutOfBounds { .. })));
        assert!(input_statuses([&Some(Arc::clone(&runs[2])), &None]).unwrap().is_empty(), "good inputs link nothing");
    }
}
