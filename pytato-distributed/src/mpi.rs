//! [`Communicator`] over MPI, through the `mpi` crate (rsmpi). Behind the `mpi` cargo feature.
//!
//! Sends are MPI non-blocking sends inside an `mpi::request::scope`: the session's message
//! buffers live in an arena outside the scope, so they outlive their requests, and the session
//! waits for every request before the scope ends. Receives poll with a matched probe
//! (`MPI_Improbe`) and take the message whole (`MPI_Mrecv`), so no receive buffer needs a size in
//! advance. Everything runs on the thread that initialized MPI.

use mpi::datatype::PartitionMut;
use mpi::request::{LocalScope, Request};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
// Our `Communicator` shadows the glob's; MPI's is needed for its methods.
use mpi::traits::Communicator as _;
use pytato_core::{Error, Result};
use typed_arena::Arena;

use crate::comm::{Communicator, Exchange, WireTag, check_peer};

/// `MPI_COMM_WORLD` (or another communicator), with MPI's initialization when this value made it.
pub struct MpiCommunicator {
    comm: SimpleCommunicator,
    /// Finalizes MPI when dropped, if this communicator initialized it.
    _universe: Option<mpi::environment::Universe>,
}

impl MpiCommunicator {
    /// Initializes MPI and takes `MPI_COMM_WORLD`. MPI is finalized when the communicator drops;
    /// a process initializes MPI once.
    pub fn init() -> Result<MpiCommunicator> {
        let universe = mpi::initialize().ok_or_else(|| Error::Communication {
            op: "MpiCommunicator::init".into(),
            rank: 0,
            message: "MPI is already initialized (initialize it once per process)".into(),
        })?;
        Ok(MpiCommunicator { comm: universe.world(), _universe: Some(universe) })
    }

    /// Wraps a communicator of an MPI the caller initialized (and finalizes).
    pub fn from_communicator(comm: SimpleCommunicator) -> MpiCommunicator {
        MpiCommunicator { comm, _universe: None }
    }

    /// Blocks until every rank calls it.
    pub fn barrier(&self) {
        self.comm.barrier();
    }
}

impl Communicator for MpiCommunicator {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    fn size(&self) -> usize {
        self.comm.size() as usize
    }

    fn all_gather(&self, bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
        let size = self.size();
        let len = i32::try_from(bytes.len()).map_err(|_| Error::Communication {
            op: "all_gather".into(),
            rank: self.rank(),
            message: format!("{} bytes are more than one MPI message holds", bytes.len()),
        })?;
        let mut counts = vec![0i32; size];
        self.comm.all_gather_into(&len, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut all = vec![0u8; total];
        {
            let mut partition = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            self.comm.all_gather_varcount_into(bytes, &mut partition);
        }
        Ok(counts.iter().zip(&displs).map(|(&c, &d)| all[d as usize..(d + c) as usize].to_vec()).collect())
    }

    fn exchange(&self, session: &mut dyn FnMut(&mut dyn Exchange) -> Result<()>) -> Result<()> {
        let buffers: Arena<Vec<u8>> = Arena::new();
        mpi::request::scope(|scope| {
            let mut ex = MpiExchange { comm: self, scope, buffers: &buffers, requests: Vec::new() };
            let result = session(&mut ex);
            // Every send completes before the scope (and the buffers) end, error or not.
            for request in ex.requests.drain(..) {
                request.wait();
            }
            result
        })
    }
}

struct MpiExchange<'a, 's> {
    comm: &'a MpiCommunicator,
    scope: &'s LocalScope<'a>,
    buffers: &'a Arena<Vec<u8>>,
    requests: Vec<Request<'a, [u8], &'s LocalScope<'a>>>,
}

impl Exchange for MpiExchange<'_, '_> {
    fn send(&mut self, dest: usize, tag: WireTag, message: Vec<u8>) -> Result<()> {
        check_peer("send", self.comm, dest)?;
        let buffer: &[u8] = self.buffers.alloc(message);
        let request = self.comm.comm.process_at_rank(dest as i32).immediate_send_with_tag(self.scope, buffer, tag);
        self.requests.push(request);
        Ok(())
    }

    fn try_receive(&mut self, src: usize, tag: WireTag) -> Result<Option<Vec<u8>>> {
        check_peer("receive", self.comm, src)?;
        let process = self.comm.comm.process_at_rank(src as i32);
        Ok(process.immediate_matched_probe_with_tag(tag).map(|probed| probed.matched_receive_vec::<u8>().0))
    }
}
