//! Starting the ranks of an example: threads standing in for ranks (`--local N`), or the MPI
//! processes `mpirun` started (the `mpi` feature). Shared by the distributed examples.

#![allow(dead_code, unreachable_pub)]

use pytato_distributed::{Communicator, LocalCommunicator};

/// What one rank does: its report as bytes, or why it failed.
type RankFn = dyn Fn(&dyn Communicator) -> Result<Vec<u8>, String>;

/// The number of ranks, and every rank's report where this process gathered them (rank 0).
type Gathered = (usize, Option<Vec<Vec<u8>>>);

/// Threads standing in for ranks: how many, and how long their messages take to arrive.
#[derive(Clone, Copy, Debug)]
pub struct LocalRanks {
    pub ranks: usize,
    pub latency: std::time::Duration,
}

/// Runs `rank` on every rank and gathers what each returns; the first rank hands the gathered
/// reports to `report`, which returns `false` when the distributed result is wrong. An error on a
/// rank, or a wrong result, ends the process with a non-zero status.
pub fn launch<R, P>(example: &str, local: Option<LocalRanks>, rank: R, report: P)
where
    R: Fn(&dyn Communicator) -> Result<Vec<u8>, String> + Send + Sync + 'static,
    P: Fn(usize, &[Vec<u8>]) -> bool,
{
    let (size, all) = match local {
        Some(LocalRanks { ranks, latency }) => {
            let rank = std::sync::Arc::new(rank);
            let handles: Vec<_> = LocalCommunicator::group_with_latency(ranks, latency)
                .into_iter()
                .map(|comm| {
                    let rank = rank.clone();
                    std::thread::spawn(move || {
                        let mine = rank(&comm).unwrap_or_else(|e| panic!("rank {}: {e}", comm.rank()));
                        comm.all_gather(&mine).expect("in-process gather")
                    })
                })
                .collect();
            let mut all: Vec<Vec<Vec<u8>>> = handles.into_iter().map(|h| h.join().expect("a rank failed")).collect();
            (ranks, Some(all.swap_remove(0)))
        }
        None => run_mpi(example, &rank),
    };
    if let Some(all) = all
        && !report(size, &all)
    {
        eprintln!("error: the distributed result differs from the one-process result");
        std::process::exit(1);
    }
}

#[cfg(feature = "mpi")]
fn run_mpi(_: &str, rank: &RankFn) -> Gathered {
    let comm = pytato_distributed::MpiCommunicator::init().unwrap_or_else(|e| panic!("{e}"));
    let mine = rank(&comm).unwrap_or_else(|e| {
        eprintln!("rank {}: {e}", comm.rank());
        std::process::exit(1)
    });
    let all = comm.all_gather(&mine).unwrap_or_else(|e| panic!("{e}"));
    (comm.size(), (comm.rank() == 0).then_some(all))
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(example: &str, _: &RankFn) -> Gathered {
    eprintln!("{example}: built without the `mpi` feature; run with --local RANKS, or build with --features mpi");
    std::process::exit(2);
}
