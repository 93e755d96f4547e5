//! The communicator: what the distributed layer needs from a message-passing library, and an
//! in-process implementation (threads as ranks) for tests and machines without MPI.
//!
//! The trait is small on purpose: rank and size, an all-gather of bytes (for the collective
//! steps: numbering tags, verifying a partition), and an *exchange session* in which messages are
//! sent without blocking and received by polling. A session owns the buffers of its sends and
//! returns only when every send has completed, which is how MPI's non-blocking sends stay safe
//! without `unsafe` (see `crate::mpi`).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use pytato_core::{Error, Result};

/// A message tag on the wire. MPI guarantees tags up to [`MAX_WIRE_TAG`].
pub type WireTag = i32;

/// The largest tag every MPI implementation accepts (`MPI_TAG_UB` is at least this).
pub const MAX_WIRE_TAG: WireTag = 32767;

/// A group of ranks that exchange messages: an MPI communicator, or [`LocalCommunicator`]s.
pub trait Communicator {
    /// This process's rank, `0..size`.
    fn rank(&self) -> usize;
    /// The number of ranks.
    fn size(&self) -> usize;
    /// Collective: every rank's `bytes`, in rank order. Every rank must call it, in the same
    /// order relative to the other collectives.
    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// Runs `session`, which sends and receives through an [`Exchange`]; returns when `session`
    /// has returned and every message it sent has left this rank's buffers.
    fn exchange(&self, session: &mut dyn FnMut(&mut dyn Exchange) -> Result<()>) -> Result<()>;
}

/// Point-to-point messages within [`Communicator::exchange`].
pub trait Exchange {
    /// Starts sending `message` to `dest` with `tag` and returns at once. Messages from one rank to
    /// another with one tag arrive in the order they were sent.
    fn send(&mut self, dest: usize, tag: WireTag, message: Vec<u8>) -> Result<()>;
    /// The next message from `src` with `tag`, if one has arrived; never blocks.
    fn try_receive(&mut self, src: usize, tag: WireTag) -> Result<Option<Vec<u8>>>;
}

/// Where a message goes: (source, destination, tag).
type Route = (usize, usize, WireTag);

/// A message in flight: when it arrives, and its bytes.
type Letter = (Instant, Vec<u8>);

/// Mailboxes and the all-gather state that the ranks of one [`LocalCommunicator::group`] share.
#[derive(Default)]
struct Shared {
    /// Messages in flight, by (source, destination, tag), oldest first.
    mail: Mutex<HashMap<Route, VecDeque<Letter>>>,
    gather: Mutex<Gather>,
    gathered: Condvar,
}

/// The all-gather in progress (`round`), and the results of complete rounds that some ranks
/// have not picked up yet (with how many have not).
#[derive(Default)]
struct Gather {
    round: u64,
    contributions: Vec<Option<Vec<u8>>>,
    results: HashMap<u64, (Vec<Vec<u8>>, usize)>,
}

/// A rank of an in-process group: threads stand in for MPI processes. Make the group with
/// [`LocalCommunicator::group`] and move one communicator into each thread.
///
/// ```
/// use pytato_distributed::{Communicator, LocalCommunicator};
/// let ranks = LocalCommunicator::group(3);
/// let handles: Vec<_> = ranks
///     .into_iter()
///     .map(|comm| std::thread::spawn(move || comm.all_gather(&[comm.rank() as u8]).unwrap()))
///     .collect();
/// for h in handles {
///     assert_eq!(h.join().unwrap(), vec![vec![0], vec![1], vec![2]]);
/// }
/// ```
pub struct LocalCommunicator {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
    /// How long a message takes to arrive.
    latency: Duration,
}

impl LocalCommunicator {
    /// `size` ranks that talk to each other, rank `k` at index `k`.
    pub fn group(size: usize) -> Vec<LocalCommunicator> {
        Self::group_with_latency(size, Duration::ZERO)
    }

    /// [`LocalCommunicator::group`] whose messages arrive `latency` after they are sent, as over
    /// a network: to see what a schedule hides of it (`distributed_dg --local N --latency MS`).
    pub fn group_with_latency(size: usize, latency: Duration) -> Vec<LocalCommunicator> {
        let shared = Arc::new(Shared::default());
        shared.gather.lock().expect("fresh").contributions = vec![None; size];
        (0..size).map(|rank| LocalCommunicator { rank, size, shared: shared.clone(), latency }).collect()
    }
}

fn poisoned(rank: usize) -> Error {
    Error::Communication { op: "local communicator".into(), rank, message: "another rank panicked".into() }
}

impl Communicator for LocalCommunicator {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut g = self.shared.gather.lock().map_err(|_| poisoned(self.rank))?;
        // A rank returns from a round only after it completed, and completing it empties every
        // slot: this rank's slot is free.
        let round = g.round;
        g.contributions[self.rank] = Some(bytes.to_vec());
        if g.contributions.iter().all(Option::is_some) {
            let all = g.contributions.iter_mut().map(|c| c.take().expect("all present")).collect();
            g.results.insert(round, (all, self.size));
            g.round += 1;
            self.shared.gathered.notify_all();
        }
        loop {
            if let Some((all, left)) = g.results.get_mut(&round) {
                let all = all.clone();
                *left -= 1;
                if *left == 0 {
                    g.results.remove(&round);
                }
                return Ok(all);
            }
            g = self.shared.gathered.wait(g).map_err(|_| poisoned(self.rank))?;
        }
    }

    fn exchange(&self, session: &mut dyn FnMut(&mut dyn Exchange) -> Result<()>) -> Result<()> {
        // Sends are complete as soon as they are in the destination's mailbox.
        session(&mut LocalExchange { comm: self })
    }
}

struct LocalExchange<'c> {
    comm: &'c LocalCommunicator,
}

impl Exchange for LocalExchange<'_> {
    fn send(&mut self, dest: usize, tag: WireTag, message: Vec<u8>) -> Result<()> {
        check_peer("send", self.comm, dest)?;
        let mut mail = self.comm.shared.mail.lock().map_err(|_| poisoned(self.comm.rank))?;
        let arrives = Instant::now() + self.comm.latency;
        mail.entry((self.comm.rank, dest, tag)).or_default().push_back((arrives, message));
        Ok(())
    }

    fn try_receive(&mut self, src: usize, tag: WireTag) -> Result<Option<Vec<u8>>> {
        check_peer("receive", self.comm, src)?;
        let mut mail = self.comm.shared.mail.lock().map_err(|_| poisoned(self.comm.rank))?;
        let Some(queue) = mail.get_mut(&(src, self.comm.rank, tag)) else { return Ok(None) };
        if queue.front().is_none_or(|(arrives, _)| *arrives > Instant::now()) {
            return Ok(None);
        }
        Ok(queue.pop_front().map(|(_, message)| message))
    }
}

/// A peer rank must exist.
pub(crate) fn check_peer(op: &str, comm: &dyn Communicator, peer: usize) -> Result<()> {
    if peer >= comm.size() {
        return Err(Error::Communication {
            op: op.into(),
            rank: comm.rank(),
            message: format!("rank {peer} does not exist (the communicator has {} ranks)", comm.size()),
        });
    }
    Ok(())
}
