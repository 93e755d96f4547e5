//! Distributed execution of pytato-rs DAGs over MPI (or threads standing in for ranks).
//!
//! A DAG says where data crosses ranks with the communication nodes of
//! [`pytato_core::distributed`] (a receive is an array; a send is stapled to an array that
//! outlives it). This crate runs such a DAG on every rank:
//!
//! 1. [`find_distributed_partition`] splits it at its sends and receives into parts, ordinary
//!    DAGs any backend compiles ([`partition`]);
//! 2. [`number_distributed_tags`] numbers the user's communication tags consistently across
//!    ranks, and [`verify_distributed_partition`] checks that every send meets its receive (rank,
//!    tag, shape, dtype) and that no cycle of waits exists, with the same typed error on every
//!    rank when not;
//! 3. [`DistributedProgram`] compiles each part once and runs them, overlapping messages with the
//!    parts that do not wait for them.
//!
//! [`DistributedProgram::compile`] does all three. Communication goes through the small
//! [`Communicator`] trait: `MpiCommunicator` (MPI through the `mpi` crate, behind the `mpi`
//! cargo feature) and [`LocalCommunicator`] (threads as ranks, for tests and for machines without
//! MPI). [`partition_to_dot`] draws a partition.
//!
//! This is a crate of its own so that MPI, a system library with its own build requirements,
//! stays out of the core and the backends: nothing else in the workspace depends on it.

mod comm;
mod draw;
mod execute;
mod message;
#[cfg(feature = "mpi")]
mod mpi;
mod numbering;
pub mod partition;
mod verify;

pub use comm::{Communicator, Exchange, LocalCommunicator, MAX_WIRE_TAG, WireTag};
pub use draw::{partition_to_dot, partition_to_svg};
pub use execute::{DistributedProgram, RunStats};
#[cfg(feature = "mpi")]
pub use mpi::MpiCommunicator;
pub use numbering::number_distributed_tags;
pub use partition::{DistributedPart, DistributedPartition, find_distributed_partition};
pub use verify::verify_distributed_partition;
