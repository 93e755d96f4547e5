//! A stop requested while a distributed run waits for a message that never comes
//! (`pytato_runtime::interrupt`, Ctrl-C) ends the wait with `Error::Interrupted` long before the
//! timeout; once the request is withdrawn, the ranks exchange as before. Its own binary: the
//! request is process-wide.

use std::time::Duration;

use pytato_core::distributed::{make_distributed_recv, make_distributed_send, staple_distributed_send};
use pytato_core::{ArrayData, DType, Error, Result};
use pytato_distributed::{Communicator, DistributedProgram, LocalCommunicator};
use pytato_frontend as pt;
use pytato_runtime::backend::NamedData;
use pytato_runtime::interrupt;

/// Each rank sends its `x` to the other and returns `x + received`.
fn swap(comm: &LocalCommunicator) -> Result<DistributedProgram> {
    let other = 1 - comm.rank();
    let x = pt::placeholder("x", [1], DType::F64)?;
    let got = make_distributed_recv(other, "t", [1], DType::F64)?;
    let out = staple_distributed_send(&(&x + &got), make_distributed_send(&x, other, "t")?)?;
    // Ten minutes: a wait the stop does not end fails the test by its timeout error.
    Ok(DistributedProgram::compile(&pytato_backend_interp::Interpreter, comm, &(&out).into())?
        .with_timeout(Duration::from_secs(600)))
}

fn input(value: f64) -> NamedData {
    NamedData::from([("x".to_string(), ArrayData::from(ndarray::arr1(&[value]).into_dyn()))])
}

#[test]
fn a_stop_ends_a_wait_for_a_message_that_never_comes() {
    interrupt::clear();
    let mut ranks = LocalCommunicator::group(2).into_iter();
    let (zero, one) = (ranks.next().unwrap(), ranks.next().unwrap());
    // Rank 1 compiles (partitioning is collective) but does not run yet.
    let programs = std::thread::scope(|s| {
        let one = s.spawn(|| swap(&one).unwrap());
        (swap(&zero).unwrap(), one.join().unwrap())
    });
    let result = std::thread::scope(|s| {
        let waiting = s.spawn(|| programs.0.run(&zero, &input(1.0)));
        std::thread::sleep(Duration::from_millis(300));
        interrupt::request();
        waiting.join().unwrap()
    });
    match result {
        Err(Error::Interrupted { op }) => assert_eq!(op, "DistributedProgram::run"),
        other => panic!("expected an interruption, got {other:?}"),
    }
    interrupt::clear();

    // The ranks run again. The stopped run's message to rank 1 is still in its mailbox, and
    // rank 1 takes it (the same value as the new one, which stays unread): a stopped exchange
    // leaves its messages behind (module `pytato_runtime::interrupt`).
    let results = std::thread::scope(|s| {
        let one = s.spawn(|| programs.1.run(&one, &input(10.0)));
        let zero = programs.0.run(&zero, &input(1.0));
        (zero, one.join().unwrap())
    });
    let value = |r: Result<NamedData>| r.unwrap().into_values().next().unwrap().to_scalars()[0].to_f64();
    assert_eq!(value(results.0), 11.0);
    assert_eq!(value(results.1), 11.0);
}
