//! Running a partition: each part compiled once by a backend, messages overlapped with parts.
//!
//! A run posts the sends of user inputs at once, then loops: it takes every message that has
//! arrived (checking its dtype and shape against the receive), runs the first part whose receives
//! and needed parts are there, and sends what it computed for other ranks as soon as it has run.
//! Parts come in the partition's order, those feeding sends first, so a rank sends as early as it
//! can; parts that need no message run while messages are in flight.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use pytato_core::distributed::CommTag;
use pytato_core::error::Mismatch;
use pytato_core::{ArrayData, Error, Result};
use pytato_runtime::ArrayDataView;
use pytato_runtime::backend::{Backend, NamedData, NamedViews, Outputs};

use crate::comm::{Communicator, Exchange, MAX_WIRE_TAG, WireTag, check_peer};
use crate::message;
use crate::numbering::number_distributed_tags;
use crate::partition::{DistributedPartition, find_distributed_partition};
use crate::verify::verify_distributed_partition;

/// A partition compiled for a backend: run it with [`DistributedProgram::run`] on every rank.
///
/// Inputs are checked before any message leaves, and mismatched sends and receives are found when
/// the program is compiled, on every rank alike; a message whose shape or dtype differs from its
/// receive's (ranks given other sizes) is a typed error. An error while a part runs (an index out
/// of bounds, say) stops only its own rank: the others wait for its messages until the
/// [timeout](DistributedProgram::with_timeout) ([`DistributedProgram::DEFAULT_TIMEOUT`] unless set,
/// or the environment variable `PYTATO_DISTRIBUTED_TIMEOUT` in seconds) ends the wait with an
/// error naming the rank and the messages waited for (under MPI, a process that exits with an
/// error makes `mpirun` end the job).
///
/// ```
/// use pytato_core::{ArrayData, DType};
/// use pytato_frontend as pt;
/// use pytato_runtime::backend::NamedData;
/// use pytato_core::distributed::{make_distributed_recv, make_distributed_send, staple_distributed_send};
/// use pytato_distributed::{Communicator, DistributedProgram, LocalCommunicator};
///
/// // Two ranks swap their vectors and add them.
/// let handles: Vec<_> = LocalCommunicator::group(2)
///     .into_iter()
///     .map(|comm| {
///         std::thread::spawn(move || -> pytato_core::Result<Vec<f64>> {
///             let other = 1 - comm.rank();
///             let x = pt::placeholder("x", [2], DType::F64)?;
///             let theirs = make_distributed_recv(other, "swap", [2], DType::F64)?;
///             let sum = staple_distributed_send(&(&x + &theirs), make_distributed_send(&x, other, "swap")?)?;
///             let backend = pytato_backend_interp::Interpreter;
///             let program = DistributedProgram::compile(&backend, &comm, &(&sum).into())?;
///             let x = ArrayData::from(ndarray::arr1(&[comm.rank() as f64, 10.0]).into_dyn());
///             let out = program.run(&comm, &NamedData::from([("x".to_string(), x)]))?;
///             Ok(out["_pt_out"].to_scalars().iter().map(|s| s.to_f64()).collect())
///         })
///     })
///     .collect();
/// for h in handles {
///     assert_eq!(h.join().unwrap().unwrap(), vec![1.0, 20.0]);
/// }
/// ```
pub struct DistributedProgram {
    partition: DistributedPartition,
    /// One program per part.
    programs: Vec<Box<dyn pytato_runtime::backend::Program>>,
    /// The wire tag of every send and receive.
    send_tags: Vec<WireTag>,
    recv_tags: Vec<WireTag>,
    /// For each received array, the sends that forward it.
    forwards: HashMap<String, Vec<usize>>,
    timeout: Option<Duration>,
}

/// What one run did, for reports: messages and bytes each way, and where the time went.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Messages this rank sent.
    pub messages_sent: usize,
    /// Bytes this rank sent (headers included).
    pub bytes_sent: usize,
    /// Messages this rank received.
    pub messages_received: usize,
    /// Bytes this rank received.
    pub bytes_received: usize,
    /// Time spent running parts.
    pub compute: Duration,
    /// Time spent with nothing to run, waiting for messages.
    pub waiting: Duration,
    /// The whole run.
    pub total: Duration,
}

impl DistributedProgram {
    /// Collective: partitions `outputs` ([`find_distributed_partition`]), numbers its tags
    /// ([`number_distributed_tags`], from 0), checks it against every rank's
    /// ([`verify_distributed_partition`]) and compiles each part with `backend`.
    pub fn compile(backend: &dyn Backend, comm: &dyn Communicator, outputs: &Outputs) -> Result<DistributedProgram> {
        let partition = find_distributed_partition(comm.rank(), outputs)?;
        let (partition, _) = number_distributed_tags(comm, &partition, 0)?;
        verify_distributed_partition(comm, &partition)?;
        DistributedProgram::from_partition(backend, partition)
    }

    /// Compiles the parts of a partition whose tags are numbered ([`number_distributed_tags`]);
    /// verifying it is up to the caller. Not collective.
    pub fn from_partition(backend: &dyn Backend, partition: DistributedPartition) -> Result<DistributedProgram> {
        let rank = partition.rank;
        let wire_tag = |tag: &CommTag| match tag {
            CommTag::Int(i) if (0..=i64::from(MAX_WIRE_TAG)).contains(i) => Ok(*i as WireTag),
            other => Err(Error::invalid(
                "DistributedProgram",
                format!(
                    "rank {rank}: tag {other} is not a number in 0..={MAX_WIRE_TAG}; number the tags first \
                     (number_distributed_tags)"
                ),
            )),
        };
        let send_tags = partition.sends.iter().map(|s| wire_tag(&s.comm_tag)).collect::<Result<_>>()?;
        let recv_tags = partition.receives.iter().map(|r| wire_tag(&r.comm_tag)).collect::<Result<_>>()?;
        let mut forwards: HashMap<String, Vec<usize>> = HashMap::new();
        for (k, s) in partition.sends.iter().enumerate() {
            if s.part.is_none() && partition.receives.iter().any(|r| r.name == s.data) {
                forwards.entry(s.data.clone()).or_default().push(k);
            }
        }
        let programs = partition
            .parts
            .iter()
            .map(|part| backend.compile(&Outputs::Named(part.outputs.clone())))
            .collect::<Result<_>>()?;
        let timeout = default_timeout()?;
        Ok(DistributedProgram { partition, programs, send_tags, recv_tags, forwards, timeout })
    }

    /// How long a run waits, with no message arriving and nothing to run, before it gives up:
    /// ten minutes, unless [`DistributedProgram::with_timeout`] or `PYTATO_DISTRIBUTED_TIMEOUT`
    /// (seconds; `0` waits for ever) says otherwise.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

    /// Gives up (an [`Error::Communication`] naming the rank and the missing messages) when no
    /// message arrives and nothing can run for `timeout`.
    pub fn with_timeout(mut self, timeout: Duration) -> DistributedProgram {
        self.timeout = Some(timeout);
        self
    }

    /// How long a run waits without progress before it gives up (`None`: for ever).
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Waits for messages as long as it takes (a rank that stops leaves the others waiting).
    pub fn without_timeout(mut self) -> DistributedProgram {
        self.timeout = None;
        self
    }

    /// The partition this program runs.
    pub fn partition(&self) -> &DistributedPartition {
        &self.partition
    }

    /// Runs on this rank; every rank of `comm` runs its own program at the same time.
    pub fn run(&self, comm: &dyn Communicator, inputs: &NamedData) -> Result<NamedData> {
        Ok(self.run_views(comm, &pytato_runtime::backend::views(inputs))?.0)
    }

    /// [`DistributedProgram::run`] on borrowed views, with what the run did.
    pub fn run_views(&self, comm: &dyn Communicator, inputs: &NamedViews<'_>) -> Result<(NamedData, RunStats)> {
        let p = &self.partition;
        let rank = comm.rank();
        if rank != p.rank {
            return Err(Error::invalid(
                "DistributedProgram::run",
                format!("the program was partitioned for rank {} and runs on rank {rank}", p.rank),
            ));
        }
        if let Some(unknown) = inputs.keys().find(|k| !p.user_inputs.contains(**k)) {
            return Err(Error::UnknownInput {
                name: unknown.to_string(),
                known: p.user_inputs.iter().cloned().collect(),
            });
        }
        // Before any message: a rank that fails later leaves the others waiting.
        for (name, (shape, dtype)) in &p.required_inputs {
            let Some(view) = inputs.get(name.as_str()) else {
                return Err(Error::MissingInput { name: name.clone(), expected: format!("{dtype} of shape {shape}") });
            };
            if view.dtype() != *dtype {
                return Err(Error::InputDType { name: name.clone(), expected: *dtype, got: view.dtype() });
            }
            // Lengths with size parameters are checked by the parts' programs.
            let fits = view.ndim() == shape.ndim()
                && shape.dims().iter().zip(view.shape()).all(|(d, &n)| d.as_int().is_none_or(|k| k == n as i64));
            if !fits {
                return Err(Error::InputShape {
                    name: name.clone(),
                    expected: shape.clone(),
                    got: view.shape().to_vec(),
                    detail: String::new(),
                });
            }
        }
        for s in &p.sends {
            check_peer("send", comm, s.dest_rank)?;
        }
        for r in &p.receives {
            check_peer("receive", comm, r.src_rank)?;
        }
        let mut state = RunState { values: HashMap::new(), stats: RunStats::default() };
        let start = Instant::now();
        comm.exchange(&mut |ex| self.run_session(ex, rank, inputs, &mut state))?;
        state.stats.total = start.elapsed();
        let outputs = p
            .outputs
            .iter()
            .enumerate()
            .map(|(k, (user, value))| {
                // A value is moved into the last output that returns it (a copy costs as much as
                // an elementwise kernel: the DG stage's `u` and `k`, every stage), copied for
                // those before.
                let returned_later = p.outputs[k + 1..].iter().any(|(_, v)| v == value);
                let data = if returned_later { state.values.get(value).cloned() } else { state.values.remove(value) };
                let data = match data {
                    Some(data) => data,
                    None => {
                        inputs.get(value.as_str()).map(ArrayDataView::to_owned).ok_or_else(|| Error::MissingInput {
                            name: value.clone(),
                            expected: format!("the input that output {user:?} returns"),
                        })?
                    }
                };
                Ok((user.clone(), data))
            })
            .collect::<Result<_>>()?;
        Ok((outputs, state.stats))
    }

    fn run_session(
        &self,
        ex: &mut dyn Exchange,
        rank: usize,
        inputs: &NamedViews<'_>,
        state: &mut RunState,
    ) -> Result<()> {
        let p = &self.partition;
        // User inputs sent as they are go out first.
        for (k, s) in p.sends.iter().enumerate() {
            if s.part.is_none()
                && let Some(view) = inputs.get(s.data.as_str())
            {
                state.send(ex, s.dest_rank, self.send_tags[k], &view.reborrow())?;
            }
        }
        let mut pending: BTreeSet<usize> = (0..p.receives.len()).collect();
        let mut done = vec![false; p.parts.len()];
        let mut idle_since: Option<Instant> = None;
        loop {
            // An idle stretch ends where the iteration that makes progress begins: the part that
            // iteration runs counts as computing, not as waiting.
            let iteration = Instant::now();
            let mut progress = false;
            // Take what has arrived.
            for k in pending.clone() {
                let r = &p.receives[k];
                let Some(bytes) = ex.try_receive(r.src_rank, self.recv_tags[k])? else { continue };
                state.stats.messages_received += 1;
                state.stats.bytes_received += bytes.len();
                let data = check_message(rank, r, &bytes)?;
                pending.remove(&k);
                progress = true;
                for &s in self.forwards.get(&r.name).into_iter().flatten() {
                    state.send(ex, p.sends[s].dest_rank, self.send_tags[s], &data.view())?;
                }
                state.values.insert(r.name.clone(), data);
            }
            // Run what can run.
            for (id, part) in p.parts.iter().enumerate() {
                let ready = !done[id]
                    && part.needed_parts.iter().all(|&n| done[n])
                    && part.received.iter().all(|name| state.values.contains_key(name));
                if !ready {
                    continue;
                }
                let started = Instant::now();
                let program = &self.programs[id];
                let mut views: NamedViews<'_> = BTreeMap::new();
                for name in program.input_names() {
                    if let Some((key, data)) = state.values.get_key_value(&name) {
                        views.insert(key.as_str(), data.view());
                    } else if let Some((key, view)) = inputs.get_key_value(name.as_str()) {
                        views.insert(key, view.reborrow());
                    } else {
                        return Err(Error::MissingInput {
                            name,
                            expected: format!("an input of part {id} of the distributed program on rank {rank}"),
                        });
                    }
                }
                let outputs: NamedData = program
                    .run_views(&views)?
                    .into_iter()
                    .map(|(key, data)| (format!("_pt_dist_{key}"), data))
                    .collect();
                drop(views);
                state.stats.compute += started.elapsed();
                for &s in &part.sends {
                    let send = &p.sends[s];
                    state.send(ex, send.dest_rank, self.send_tags[s], &outputs[&send.data].view())?;
                }
                state.values.extend(outputs);
                done[id] = true;
                progress = true;
                // Messages that arrived meanwhile first, then the earliest part that can run:
                // the parts that feed sends come first.
                break;
            }
            if pending.is_empty() && done.iter().all(|&d| d) {
                if let Some(since) = idle_since {
                    state.stats.waiting += iteration.duration_since(since);
                }
                return Ok(());
            }
            if progress {
                if let Some(since) = idle_since.take() {
                    state.stats.waiting += iteration.duration_since(since);
                }
                continue;
            }
            let since = *idle_since.get_or_insert_with(Instant::now);
            // Nothing to do but wait for messages: a stop may end the wait (a peer that never
            // sends would otherwise hold this rank until the timeout, or for ever).
            pytato_runtime::interrupt::check("DistributedProgram::run")?;
            if let Some(limit) = self.timeout
                && since.elapsed() > limit
            {
                let missing: Vec<String> = pending
                    .iter()
                    .map(|&k| {
                        let r = &p.receives[k];
                        format!("{} from rank {} with tag {}", r.node.summary(), r.src_rank, self.recv_tags[k])
                    })
                    .collect();
                return Err(Error::Communication {
                    op: "DistributedProgram::run".into(),
                    rank,
                    message: format!("no message for {limit:?}; still waiting for {}", missing.join(", ")),
                });
            }
            if since.elapsed() < Duration::from_micros(200) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }
}

struct RunState {
    /// Received arrays and part outputs, by value name.
    values: HashMap<String, ArrayData>,
    stats: RunStats,
}

impl RunState {
    fn send(&mut self, ex: &mut dyn Exchange, dest: usize, tag: WireTag, data: &ArrayDataView<'_>) -> Result<()> {
        let bytes = message::encode(data);
        self.stats.messages_sent += 1;
        self.stats.bytes_sent += bytes.len();
        ex.send(dest, tag, bytes)
    }
}

/// The array in `bytes`, if it is what receive `r` expects.
/// The timeout programs start with: [`DistributedProgram::DEFAULT_TIMEOUT`], or
/// `PYTATO_DISTRIBUTED_TIMEOUT` seconds (`0`: none).
fn default_timeout() -> Result<Option<Duration>> {
    let Ok(text) = std::env::var("PYTATO_DISTRIBUTED_TIMEOUT") else {
        return Ok(Some(DistributedProgram::DEFAULT_TIMEOUT));
    };
    let seconds: f64 = text.trim().parse().ok().filter(|s: &f64| s.is_finite() && *s >= 0.0).ok_or_else(|| {
        Error::invalid(
            "DistributedProgram",
            format!("PYTATO_DISTRIBUTED_TIMEOUT={text:?} is not a number of seconds (0 waits for ever)"),
        )
    })?;
    Ok((seconds > 0.0).then(|| Duration::from_secs_f64(seconds)))
}

fn check_message(rank: usize, r: &crate::partition::Receive, bytes: &[u8]) -> Result<ArrayData> {
    let (header, data) = message::decode(bytes).map_err(|why| Error::Communication {
        op: "receive".into(),
        rank,
        message: format!(
            "the message from rank {} with tag {} for {}: {why}",
            r.src_rank,
            r.comm_tag,
            r.node.summary()
        ),
    })?;
    let expected: Vec<usize> = r.shape.as_ints().expect("concrete").iter().map(|&n| n as usize).collect();
    if header.dtype != r.dtype || header.shape != expected {
        return Err(Error::DistributedMismatch {
            op: "receive".into(),
            rank,
            problem: Mismatch::Mismatched,
            message: format!(
                "rank {} sent {} of shape {:?} with tag {}, but {} expects {} of shape {:?}",
                r.src_rank,
                header.dtype,
                header.shape,
                r.comm_tag,
                r.node.summary(),
                r.dtype,
                expected
            ),
        });
    }
    Ok(data)
}
