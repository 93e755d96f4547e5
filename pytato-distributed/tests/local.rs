//! Distributed programs on in-process ranks (threads), on every linked backend: halo exchanges
//! on rings of 1 to 4 ranks, the distributed heat equation against the one-process run, receives
//! posted in random orders, forwarding, the DG flagship split into strips of rows against the
//! one-process run, and the errors (mismatched shapes and dtypes, unmatched
//! sends, cycles of waits, timeouts) on every rank.

#[path = "support/dags.rs"]
mod dags;
#[path = "support/dg.rs"]
mod dg;
#[path = "support/heat.rs"]
mod heat;
#[path = "../../pytato/examples/dg/solver.rs"]
mod solver;

use std::sync::Arc;
use std::time::Duration;

use pytato_core::distributed::{CommTag, make_distributed_recv, make_distributed_send, staple_distributed_send};
use pytato_core::error::Mismatch;
use pytato_core::{Array, ArrayData, DType, DictOfNamedArrays, Dim, Error, Result, s};
use pytato_distributed::{
    Communicator, DistributedProgram, LocalCommunicator, RunStats, find_distributed_partition, number_distributed_tags,
    partition_to_dot, partition_to_svg, verify_distributed_partition,
};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

fn backends() -> Vec<(String, Arc<dyn Backend>)> {
    let (instances, skipped) = pytato_conformance::instantiate(&[]).unwrap_or_else(|e| panic!("{e}"));
    for line in &skipped {
        eprintln!("{line}");
    }
    instances.into_iter().map(|(name, b)| (name, Arc::from(b))).collect()
}

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

fn values(data: &ArrayData) -> Vec<f64> {
    data.to_scalars().iter().map(|s| s.to_f64()).collect()
}

/// Runs `rank_fn` on each of `size` in-process ranks and returns the results in rank order.
fn on_ranks<T: Send + 'static>(
    size: usize,
    rank_fn: impl Fn(&LocalCommunicator) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let rank_fn = Arc::new(rank_fn);
    let handles: Vec<_> = LocalCommunicator::group(size)
        .into_iter()
        .map(|comm| {
            let rank_fn = rank_fn.clone();
            std::thread::spawn(move || rank_fn(&comm))
        })
        .collect();
    handles.into_iter().map(|h| h.join().expect("a rank panicked")).collect()
}

#[test]
fn ring_halo_exchange_on_1_to_4_ranks_and_every_backend() {
    for (name, backend) in backends() {
        for size in 1..=4 {
            let backend = backend.clone();
            let results = on_ranks(size, move |comm| -> Result<Vec<f64>> {
                let program =
                    DistributedProgram::compile(&*backend, comm, &(&dags::ring(comm.rank(), comm.size())?).into())?
                        .with_timeout(Duration::from_secs(60));
                let r = comm.rank() as f64;
                // Run twice: tags are reused, messages must not mix.
                let mut out = Vec::new();
                for run in 0..2 {
                    let x = f64s(&[r, 10.0 * r, run as f64]);
                    out = values(&program.run(comm, &NamedData::from([("x".to_string(), x)]))?["_pt_out"]);
                }
                Ok(out)
            });
            for (rank, got) in results.into_iter().enumerate() {
                let (r, l) = (rank as f64, ((rank + size - 1) % size) as f64);
                let expected = vec![r + 2.0 * l, 10.0 * r + 20.0 * l, 1.0 + 2.0];
                assert_eq!(got.unwrap(), expected, "{name}, {size} ranks, rank {rank}");
            }
        }
    }
}

#[test]
fn distributed_heat_equals_the_one_process_run_on_every_backend() {
    let (n, steps) = (37, 6);
    let u0 = heat::initial(n);
    for (name, backend) in backends() {
        let single = backend.compile(&(&heat::heat(n, steps).unwrap()).into()).unwrap();
        let expected = values(&single.run(&NamedData::from([("u".to_string(), f64s(&u0))])).unwrap()["_pt_out"]);
        for size in [1, 2, 3, 4] {
            let (backend, u0) = (backend.clone(), u0.clone());
            let pieces = on_ranks(size, move |comm| -> Result<Vec<f64>> {
                let (start, len) = heat::chunk(n, comm.size(), comm.rank());
                let dag = heat::distributed_heat(comm.rank(), comm.size(), len, steps)?;
                let program = DistributedProgram::compile(&*backend, comm, &(&dag).into())?;
                let (out, stats) = program.run_views(
                    comm,
                    &pytato_runtime::backend::views(&NamedData::from([(
                        "u".to_string(),
                        f64s(&u0[start..start + len]),
                    )])),
                )?;
                assert_eq!(stats.messages_sent, 2 * steps);
                assert_eq!(stats.messages_received, 2 * steps);
                Ok(values(&out["_pt_out"]))
            });
            let got: Vec<f64> = pieces.into_iter().flat_map(|p| p.unwrap()).collect();
            assert_eq!(got, expected, "{name}: {size} ranks against one process (bit for bit)");
        }
    }
}

#[test]
fn receives_in_random_orders_do_not_deadlock() {
    // Every rank sends a distinct array to every rank (itself included) and builds its receives
    // in a rank-specific shuffled order; the outputs sum what arrived, weighted by source.
    let size = 4;
    let results = on_ranks(size, move |comm| -> Result<Vec<f64>> {
        let (rank, size) = (comm.rank(), comm.size());
        let total = dags::all_to_all(rank, &dags::shuffled(rank, size, 1))?;
        let program = DistributedProgram::compile(&pytato_backend_interp::Interpreter, comm, &(&total).into())?
            .with_timeout(Duration::from_secs(60));
        let out = program.run(comm, &NamedData::from([("x".to_string(), f64s(&[rank as f64, 1.0]))]))?;
        Ok(values(&out["_pt_out"]))
    });
    for (rank, got) in results.into_iter().enumerate() {
        let expected = dags::all_to_all_expected(rank, size);
        assert_eq!(got.unwrap(), expected, "rank {rank}");
    }
}

#[test]
fn forwarded_data_inputs_sent_as_they_are_and_received_outputs() {
    // Rank 0 sends its input x to rank 1; rank 1 forwards what it got to rank 2 and outputs it;
    // rank 2 outputs what arrives, and 10 * it.
    let results = on_ranks(3, |comm| -> Result<NamedData> {
        let outputs = match comm.rank() {
            0 => {
                let x = pt::placeholder("x", [2], DType::I32)?;
                let sent = staple_distributed_send(&(&x + 1), make_distributed_send(&x, 1, "x")?)?;
                DictOfNamedArrays::new([("y", sent)])?
            }
            1 => {
                let got = make_distributed_recv(0, "x", [2], DType::I32)?;
                DictOfNamedArrays::new([(
                    "got",
                    staple_distributed_send(&got, make_distributed_send(&got, 2, "fwd")?)?,
                )])?
            }
            _ => {
                let got = make_distributed_recv(1, "fwd", [2], DType::I32)?;
                DictOfNamedArrays::new([("got", got.clone()), ("ten", &got * 10)])?
            }
        };
        let program = DistributedProgram::compile(&pytato_backend_interp::Interpreter, comm, &outputs.into())?
            .with_timeout(Duration::from_secs(60));
        let inputs = if comm.rank() == 0 {
            NamedData::from([("x".to_string(), ArrayData::from(ndarray::arr1(&[i32::MAX, -7]).into_dyn()))])
        } else {
            NamedData::new()
        };
        program.run(comm, &inputs)
    });
    let results: Vec<NamedData> = results.into_iter().map(|r| r.unwrap()).collect();
    let ints = |d: &ArrayData| d.to_scalars().iter().map(|s| s.to_f64() as i64).collect::<Vec<_>>();
    assert_eq!(ints(&results[0]["y"]), vec![i32::MIN as i64, -6], "int32 wraps as numpy's does");
    assert_eq!(ints(&results[1]["got"]), vec![i32::MAX as i64, -7]);
    assert_eq!(ints(&results[2]["got"]), vec![i32::MAX as i64, -7]);
    assert_eq!(ints(&results[2]["ten"]), vec![(i32::MAX as i64 * 10) as i32 as i64, -70]);
}

/// A value returned under several names (a computed one and a received one) reaches every name:
/// the run moves it into the last and copies it for the others.
#[test]
fn a_value_returned_under_several_names_reaches_each() {
    let results = on_ranks(2, |comm| -> Result<NamedData> {
        let outputs = if comm.rank() == 0 {
            let x = pt::placeholder("x", [3], DType::F64)?;
            let y = &x + 1.0;
            let sent = staple_distributed_send(&y, make_distributed_send(&x, 1, "x")?)?;
            DictOfNamedArrays::new([("p", sent.clone()), ("q", sent)])?
        } else {
            let got = make_distributed_recv(0, "x", [3], DType::F64)?;
            let twice = &got * 2.0;
            DictOfNamedArrays::new([("a", got.clone()), ("b", twice.clone()), ("c", got), ("d", twice)])?
        };
        let program = DistributedProgram::compile(&pytato_backend_interp::Interpreter, comm, &outputs.into())?
            .with_timeout(Duration::from_secs(60));
        let inputs = match comm.rank() {
            0 => NamedData::from([("x".to_string(), f64s(&[1.0, -0.0, f64::NAN]))]),
            _ => NamedData::new(),
        };
        program.run(comm, &inputs)
    });
    let results: Vec<NamedData> = results.into_iter().map(|r| r.unwrap()).collect();
    let bits = |d: &ArrayData| values(d).iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    let expect = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    for name in ["p", "q"] {
        assert_eq!(bits(&results[0][name]), expect(&[2.0, 1.0, f64::NAN]), "rank 0, {name}");
    }
    for name in ["a", "c"] {
        assert_eq!(bits(&results[1][name]), expect(&[1.0, -0.0, f64::NAN]), "rank 1, {name}");
    }
    for name in ["b", "d"] {
        assert_eq!(bits(&results[1][name]), expect(&[2.0, -0.0, f64::NAN]), "rank 1, {name}");
    }
}

/// A run's statistics split its time: computing and waiting never overlap (the part that runs
/// once a late message arrives counts as computing, not as waiting), so together they are at
/// most the run's total.
#[test]
fn computing_and_waiting_are_apart_in_the_run_statistics() {
    let latency = Duration::from_millis(100);
    let n: usize = 300_000;
    let ranks = LocalCommunicator::group_with_latency(2, latency);
    let handles: Vec<_> = ranks
        .into_iter()
        .map(|comm| {
            std::thread::spawn(move || -> Result<RunStats> {
                let outputs = if comm.rank() == 0 {
                    let x = pt::placeholder("x", [n as i64], DType::F64)?;
                    DictOfNamedArrays::new([("x", staple_distributed_send(&x, make_distributed_send(&x, 1, "x")?)?)])?
                } else {
                    // Work that can start only when the message is there.
                    let got = make_distributed_recv(0, "x", [n as i64], DType::F64)?;
                    DictOfNamedArrays::new([("s", pt::sum(&pt::sin(&pt::exp(&got)?)?, None)?)])?
                };
                let program = DistributedProgram::compile(&pytato_backend_interp::Interpreter, &comm, &outputs.into())?
                    .with_timeout(Duration::from_secs(60));
                let inputs = match comm.rank() {
                    0 => NamedData::from([("x".to_string(), f64s(&vec![0.5; n]))]),
                    _ => NamedData::new(),
                };
                Ok(program.run_views(&comm, &pytato_runtime::backend::views(&inputs))?.1)
            })
        })
        .collect();
    let stats: Vec<RunStats> = handles.into_iter().map(|h| h.join().expect("a rank panicked").unwrap()).collect();
    let receiver = &stats[1];
    assert!(receiver.waiting >= latency / 2, "rank 1 waited for the message: {receiver:?}");
    assert!(receiver.compute > Duration::ZERO, "{receiver:?}");
    assert!(receiver.compute + receiver.waiting <= receiver.total, "computing and waiting overlap: {receiver:?}");
}

#[test]
fn parts_wait_only_for_their_receives() {
    // interior needs no message; the boundary waits for the halo. What the send needs (sin(u),
    // its last element) is the first part; the boundary's slice of interior, which no send
    // needs, runs after the send went out, while the halo is in flight (computing the small
    // sin(u) again rather than importing it).
    let u = pt::placeholder("u", [8], DType::F64).unwrap();
    let halo = make_distributed_recv(1, "halo", [1], DType::F64).unwrap();
    let interior = pt::sin(&u).unwrap();
    let boundary = &interior.index(s![0..1]).unwrap() + &halo;
    let sent = make_distributed_send(&interior.index(s![7..8]).unwrap(), 1, "halo").unwrap();
    let out = DictOfNamedArrays::new([
        ("interior", staple_distributed_send(&interior, sent).unwrap()),
        ("boundary", boundary),
    ])
    .unwrap();
    let partition = find_distributed_partition(0, &out.into()).unwrap();
    assert_eq!(partition.parts.len(), 3);
    let [first, second, third] = [0, 1, 2].map(|k| &partition.parts[k]);
    assert!(first.received.is_empty() && first.needed_parts.is_empty());
    assert_eq!(first.sends, vec![0], "the halo goes out after the first part");
    assert!(second.received.is_empty() && second.sends.is_empty(), "no send needs the second part");
    assert!(second.needed_parts.is_empty(), "sin(u) of u, small, is computed again");
    assert_eq!(third.received.len(), 1);
    assert_eq!(third.needed_parts.iter().copied().collect::<Vec<_>>(), vec![1]);
    assert_eq!(partition.user_inputs.iter().collect::<Vec<_>>(), vec!["u"]);
    let dot = partition_to_dot(&partition);
    for needle in ["part1 -> part2", "recv0 -> part2", "part0 -> send0", "from rank 1, tag \\\"halo\\\""] {
        assert!(dot.contains(needle), "{needle} in\n{dot}");
    }
    assert!(partition_to_svg(&partition).unwrap().contains("<svg"));
}

#[test]
fn stored_values_cross_parts_and_small_ones_are_computed_again() {
    use pytato_core::tags::ImplStored;
    // y = 2x is needed after the receive: computed again there, unless it is to be stored.
    let x = pt::placeholder("x", [4], DType::F64).unwrap();
    let w = make_distributed_recv(1, 43, [4], DType::F64).unwrap();
    for (stored, inputs) in [(false, 1), (true, 2)] {
        let y = &x * 2.0;
        let y = if stored { y.tagged(ImplStored).unwrap() } else { y };
        let sent = make_distributed_send(&(&y * 2.0), 1, 42).unwrap();
        let out = DictOfNamedArrays::new([
            ("q", &y + &w),
            ("send", staple_distributed_send(&pt::zeros([1], DType::F64).unwrap(), sent).unwrap()),
        ])
        .unwrap();
        let partition = find_distributed_partition(0, &out.into()).unwrap();
        let last = partition.parts.last().unwrap();
        assert_eq!(last.received.len(), 1);
        // The receive, and y where it is stored (upstream's partition_input_names).
        assert_eq!(last.partition_input_names().len(), inputs, "stored: {stored}");
        assert_eq!(last.needed_parts.len(), usize::from(stored), "stored: {stored}");
    }
}

#[test]
fn tags_are_numbered_alike_on_every_rank() {
    let results = on_ranks(3, |comm| -> Result<Vec<(CommTag, CommTag)>> {
        let r = comm.rank();
        // Each rank uses some of the tags, in its own order.
        let mut out = pt::placeholder("x", [1], DType::F64)?;
        let tags = |rank: usize| [CommTag::from(("b", rank)), CommTag::from("a"), CommTag::from(7i64)];
        let mut recvs = Vec::new();
        let src = (r + 2) % 3;
        for (mine, theirs) in tags(r).into_iter().zip(tags(src)) {
            let send = make_distributed_send(&out, (r + 1) % 3, mine)?;
            out = staple_distributed_send(&out, send)?;
            recvs.push(make_distributed_recv(src, theirs, [1], DType::F64)?);
        }
        let sum = recvs.iter().try_fold(out, |acc, g| Ok::<_, Error>(&acc + g))?;
        let partition = find_distributed_partition(r, &(&sum).into())?;
        let (numbered, next) = number_distributed_tags(comm, &partition, 100)?;
        assert_eq!(next, 100 + 5, "a, 7, and (\"b\", 0..3): 5 distinct tags");
        verify_distributed_partition(comm, &partition)?;
        Ok(partition
            .sends
            .iter()
            .map(|s| s.comm_tag.clone())
            .zip(numbered.sends.iter().map(|s| s.comm_tag.clone()))
            .collect())
    });
    let mut numbers = std::collections::BTreeMap::new();
    for pairs in results {
        for (tag, number) in pairs.unwrap() {
            assert_eq!(numbers.entry(tag.clone()).or_insert(number.clone()), &number, "{tag}");
        }
    }
    // Integers first, then strings, then tuples; numbered from the base.
    assert_eq!(numbers[&CommTag::from(7i64)], CommTag::Int(100));
    assert_eq!(numbers[&CommTag::from("a")], CommTag::Int(101));
    assert_eq!(numbers[&CommTag::from(("b", 0usize))], CommTag::Int(102));
}

/// Every rank's result must be the error `kind`, with every needle in the message.
fn assert_error_on_every_rank(results: Vec<Result<()>>, kind: &str, needles: &[&str]) {
    for (rank, r) in results.into_iter().enumerate() {
        let e = r.expect_err(&format!("rank {rank} must fail"));
        assert_eq!(e.kind(), kind, "rank {rank}: {e}");
        for n in needles {
            assert!(e.to_string().contains(n), "rank {rank}: {n:?} in {e}");
        }
    }
}

/// Every rank's result must be a [`Mismatch`] of kind `problem`, with every needle in the message.
fn assert_mismatch_on_every_rank(results: Vec<Result<()>>, problem: Mismatch, needles: &[&str]) {
    for (rank, r) in results.iter().enumerate() {
        match r {
            Err(Error::DistributedMismatch { problem: p, .. }) => assert_eq!(*p, problem, "rank {rank}"),
            other => panic!("rank {rank}: {other:?} is no {problem:?} mismatch"),
        }
    }
    assert_error_on_every_rank(results, "DistributedMismatch", needles);
}

fn compile_on(comm: &LocalCommunicator, out: &Array) -> Result<()> {
    DistributedProgram::compile(&pytato_backend_interp::Interpreter, comm, &out.into()).map(|_| ())
}

#[test]
fn mismatched_shapes_and_dtypes_are_typed_errors_on_every_rank() {
    for (shape, dtype, needle) in [([4], DType::F64, "shape [3]"), ([3], DType::F32, "dtype float64")] {
        let results = on_ranks(2, move |comm| -> Result<()> {
            let x = pt::placeholder("x", [3], DType::F64)?;
            let out = if comm.rank() == 0 {
                staple_distributed_send(&x, make_distributed_send(&x, 1, "t")?)?
            } else {
                &x + &pt::sum(&make_distributed_recv(0, "t", shape, dtype)?, None)?
            };
            compile_on(comm, &out)
        });
        assert_mismatch_on_every_rank(results, Mismatch::Mismatched, &["rank 0 sends", needle, "tag 0"]);
    }
}

#[test]
fn unmatched_messages_and_cycles_are_typed_errors_on_every_rank() {
    // A send nobody receives.
    let results = on_ranks(2, |comm| {
        let x = pt::placeholder("x", [3], DType::F64)?;
        let out =
            if comm.rank() == 0 { staple_distributed_send(&x, make_distributed_send(&x, 1, "lost")?)? } else { x };
        compile_on(comm, &out)
    });
    assert_mismatch_on_every_rank(results, Mismatch::MissingRecv, &["posts no receive"]);
    // A receive nobody sends.
    let results = on_ranks(2, |comm| {
        let x = pt::placeholder("x", [3], DType::F64)?;
        let out = if comm.rank() == 1 { &x + &make_distributed_recv(0, "never", [3], DType::F64)? } else { x };
        compile_on(comm, &out)
    });
    assert_mismatch_on_every_rank(results, Mismatch::MissingSend, &["sends nothing"]);
    // Each rank sends what it computes from the other's message: a deadlock.
    let results = on_ranks(2, |comm| {
        let other = 1 - comm.rank();
        let got = make_distributed_recv(other, "c", [3], DType::F64)?;
        let out = staple_distributed_send(&got, make_distributed_send(&(2.0 * &got), other, "c")?)?;
        compile_on(comm, &out)
    });
    assert_mismatch_on_every_rank(results, Mismatch::Cycle, &["cycle of waits"]);
    // A rank that does not exist.
    let results = on_ranks(2, |comm| {
        let x = pt::placeholder("x", [3], DType::F64)?;
        compile_on(comm, &staple_distributed_send(&x, make_distributed_send(&x, 5, "far")?)?)
    });
    assert_mismatch_on_every_rank(results, Mismatch::NoSuchRank, &["rank 5", "does not exist"]);
    // Two sends, and two receives, with one tag between the same ranks.
    let results = on_ranks(2, |comm| {
        let x = pt::placeholder("x", [3], DType::F64)?;
        let out = if comm.rank() == 0 {
            let once = staple_distributed_send(&x, make_distributed_send(&x, 1, "d")?)?;
            staple_distributed_send(&once, make_distributed_send(&(2.0 * &x), 1, "d")?)?
        } else {
            &x + &make_distributed_recv(0, "d", [3], DType::F64)?
        };
        compile_on(comm, &out)
    });
    assert_mismatch_on_every_rank(results, Mismatch::DuplicateSend, &["sends twice"]);
    let results = on_ranks(2, |comm| {
        let x = pt::placeholder("x", [3], DType::F64)?;
        let out = if comm.rank() == 0 {
            staple_distributed_send(&x, make_distributed_send(&x, 1, "d")?)?
        } else {
            let first = make_distributed_recv(0, "d", [3], DType::F64)?;
            &first + &make_distributed_recv(0, "d", [1], DType::F64)?
        };
        compile_on(comm, &out)
    });
    assert_mismatch_on_every_rank(results, Mismatch::DuplicateRecv, &["receives twice"]);
}

#[test]
fn data_of_the_wrong_shape_at_run_time_is_a_typed_error_and_waiting_times_out() {
    // The sender's shape is symbolic, so only the data can tell: the receiver refuses it.
    let results = on_ranks(2, |comm| -> Result<()> {
        let backend = pytato_backend_interp::Interpreter;
        let out = if comm.rank() == 0 {
            let x = pt::placeholder("x", [Dim::param("n")], DType::F64)?;
            staple_distributed_send(&x, make_distributed_send(&x, 1, "t")?)?
        } else {
            make_distributed_recv(0, "t", [3], DType::F64)?
        };
        let program =
            DistributedProgram::compile(&backend, comm, &(&out).into())?.with_timeout(Duration::from_secs(30));
        let inputs =
            if comm.rank() == 0 { NamedData::from([("x".to_string(), f64s(&[1.0; 4]))]) } else { NamedData::new() };
        program.run(comm, &inputs).map(|_| ())
    });
    assert!(results[0].is_ok());
    let e = results[1].as_ref().unwrap_err();
    assert_eq!(e.kind(), "DistributedMismatch", "{e}");
    assert!(e.to_string().contains("shape [4]") && e.to_string().contains("expects float64 of shape [3]"), "{e}");

    // A rank that never runs: the other gives up after its timeout, naming what it waits for.
    let results = on_ranks(2, |comm| -> Result<()> {
        let other = 1 - comm.rank();
        let x = pt::placeholder("x", [1], DType::F64)?;
        let got = make_distributed_recv(other, "t", [1], DType::F64)?;
        let out = staple_distributed_send(&(&x + &got), make_distributed_send(&x, other, "t")?)?;
        let program = DistributedProgram::compile(&pytato_backend_interp::Interpreter, comm, &(&out).into())?
            .with_timeout(Duration::from_millis(200));
        if comm.rank() == 1 {
            return Ok(());
        }
        program.run(comm, &NamedData::from([("x".to_string(), f64s(&[1.0]))])).map(|_| ())
    });
    let e = results[0].as_ref().unwrap_err();
    assert_eq!(e.kind(), "Communication", "{e}");
    assert!(e.to_string().contains("still waiting for") && e.to_string().contains("from rank 1"), "{e}");
}

#[test]
fn bad_inputs_and_unpartitioned_dags_are_typed_errors() {
    let got = make_distributed_recv(0, "t", [2], DType::F64).unwrap();
    let x = pt::placeholder("x", [2], DType::F64).unwrap();
    let out = staple_distributed_send(&(&x + &got), make_distributed_send(&x, 0, "t").unwrap()).unwrap();
    for (name, backend) in backends() {
        let e = backend.compile(&(&out).into()).err().expect("a communication node does not compile");
        assert_eq!(e.kind(), "Unsupported", "{name}: {e}");
        assert!(e.to_string().contains("partition"), "{name}: {e}");
    }
    assert!(make_distributed_recv(0, "t", [Dim::param("n")], DType::F64).is_err(), "receives have concrete shapes");
    let results = on_ranks(1, move |comm| -> Result<()> {
        let program = DistributedProgram::compile(&pytato_backend_interp::Interpreter, comm, &(&out).into())?;
        let unknown = program.run(comm, &NamedData::from([("y".to_string(), f64s(&[1.0, 2.0]))])).unwrap_err();
        assert_eq!(unknown.kind(), "UnknownInput", "{unknown}");
        let missing = program.run(comm, &NamedData::new()).unwrap_err();
        assert_eq!(missing.kind(), "MissingInput", "{missing}");
        let shape = program.run(comm, &NamedData::from([("x".to_string(), f64s(&[1.0]))])).unwrap_err();
        assert_eq!(shape.kind(), "InputShape", "{shape}");
        let ok = program.run(comm, &NamedData::from([("x".to_string(), f64s(&[1.0, 2.0]))]))?;
        assert_eq!(values(&ok["_pt_out"]), vec![2.0, 4.0]);
        Ok(())
    });
    results.into_iter().for_each(|r| r.unwrap());
}

#[test]
fn a_million_node_chain_partitions_on_a_small_stack() {
    let worker = std::thread::Builder::new().stack_size(2 << 20).spawn(|| {
        let got = make_distributed_recv(0, "deep", [2], DType::F64).unwrap();
        let mut x = pt::placeholder("x", [2], DType::F64).unwrap();
        for k in 0..1_000_000 {
            x = if k == 500_000 { &x + &got } else { &x + 1.0 };
        }
        let out = staple_distributed_send(&x, make_distributed_send(&got, 0, "deep").unwrap()).unwrap();
        let partition = find_distributed_partition(0, &(&out).into()).unwrap();
        // The first half needs no message; the second half waits for it.
        assert_eq!(partition.parts.len(), 2);
        assert_eq!(partition.parts[1].needed_parts.len(), 1);
        // The 500,000 additions from the one with the message on, and two placeholders: the first
        // half's value and the message.
        assert_eq!(pytato_transform::analysis::num_nodes(&partition.parts[1].outputs.clone().into()), 500_002);
        drop(partition);
        drop(out);
    });
    worker.unwrap().join().expect("no stack overflow");
}

#[test]
fn cheap_values_are_computed_again_rather_than_sent_between_parts() {
    // Each step of the heat DAG reads `2 * u`; exported, it would be one more array written by
    // every part and read by the next. Parts export only what crosses: the new state and the two
    // halo values of each step (and the halos of the input).
    let steps = 4;
    let dag = heat::distributed_heat(0, 1, 8, steps).unwrap();
    let partition = find_distributed_partition(0, &(&dag).into()).unwrap();
    let outputs: Vec<usize> = partition.parts.iter().map(|p| p.outputs.names().count()).collect();
    assert_eq!(partition.parts.len(), steps + 1, "{outputs:?}");
    assert_eq!(outputs[0], 2, "the first halos, slices of the input");
    assert!(outputs[1..steps].iter().all(|&n| n == 3), "state and two halos: {outputs:?}");
    assert_eq!(outputs[steps], 1, "the result");
}

#[test]
fn empty_and_special_messages_names_like_inputs_and_other_sizes_on_every_backend() {
    // Two ranks swap an empty array and complex specials; the output `x` is named like its input
    // and has a symbolic length, run twice with other lengths.
    use num_complex::Complex64;
    let specials = vec![
        Complex64::new(f64::NAN, -0.0),
        Complex64::new(f64::INFINITY, f64::NEG_INFINITY),
        Complex64::new(-0.0, f64::MIN_POSITIVE / 4.0),
        Complex64::new(f64::MAX, -f64::MAX),
    ];
    for (name, backend) in backends() {
        let sent_specials = specials.clone();
        let results = on_ranks(2, move |comm| -> Result<Vec<NamedData>> {
            let other = 1 - comm.rank();
            let x = pt::placeholder("x", [Dim::param("n")], DType::I64)?;
            let z = pt::placeholder("z", [4], DType::C128)?;
            let e = pt::placeholder("e", [0, 3], DType::F32)?;
            let got_z = make_distributed_recv(other, "z", [4], DType::C128)?;
            let got_e = make_distributed_recv(other, "e", [0, 3], DType::F32)?;
            let sent = staple_distributed_send(&(&x + 1), make_distributed_send(&z, other, "z")?)?;
            let sent = staple_distributed_send(&sent, make_distributed_send(&e, other, "e")?)?;
            let outputs = DictOfNamedArrays::new([("x", sent), ("z", got_z), ("e", pt::sum(&got_e, Some(0.into()))?)])?;
            let program =
                DistributedProgram::compile(&*backend, comm, &outputs.into())?.with_timeout(Duration::from_secs(60));
            let mut runs = Vec::new();
            for n in [0usize, 3] {
                let xs =
                    ArrayData::from(ndarray::Array1::from_iter((0..n as i64).map(|v| i64::MAX - 2 + v)).into_dyn());
                let zs = ArrayData::from(ndarray::Array1::from(sent_specials.clone()).into_dyn());
                let es = ArrayData::from(ndarray::ArrayD::<f32>::zeros(ndarray::IxDyn(&[0, 3])));
                let inputs = NamedData::from([("x".to_string(), xs), ("z".to_string(), zs), ("e".to_string(), es)]);
                runs.push(program.run(comm, &inputs)?);
            }
            Ok(runs)
        });
        for (rank, runs) in results.into_iter().enumerate() {
            let runs = runs.unwrap_or_else(|e| panic!("{name}, rank {rank}: {e}"));
            for (run, n) in runs.iter().zip([0usize, 3]) {
                // i64::MAX - 2 + k + 1 wraps past i64::MAX as numpy's int64 does.
                let expected: Vec<i64> = (0..n as i64).map(|k| (i64::MAX - 2 + k).wrapping_add(1)).collect();
                assert_eq!(run["x"].as_array::<i64>().unwrap().iter().copied().collect::<Vec<_>>(), expected, "{name}");
                let z: Vec<Complex64> = run["z"].as_array::<Complex64>().unwrap().iter().copied().collect();
                let bits = |v: &[Complex64]| v.iter().map(|c| (c.re.to_bits(), c.im.to_bits())).collect::<Vec<_>>();
                assert_eq!(bits(&z), bits(&specials), "{name}: specials arrive bit for bit");
                assert_eq!(run["e"].shape(), &[3], "{name}: the sum over an empty axis");
                assert!(run["e"].as_array::<f32>().unwrap().iter().all(|&v| v == 0.0), "{name}");
            }
        }
    }
}

#[test]
fn dg_on_two_three_and_four_ranks_equals_one_process() {
    let (order, k, t_final) = (2, 8, 0.05);
    for (name, backend) in backends() {
        let single = solver::Solver::new(&*backend, order)
            .and_then(|s| s.run(&solver::Mesh { k }, t_final, 0.5, &mut |_, _| {}))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for size in [2, 3, 4] {
            let b = backend.clone();
            let strips = on_ranks(size, move |comm| dg::run_rank(comm, &*b, order, k, t_final, 0.5));
            for (rank, strip) in strips.into_iter().enumerate() {
                let strip = strip.unwrap_or_else(|e| panic!("{name}, rank {rank} of {size}: {e}"));
                let (first_row, _) = dg::strip(k, size, rank);
                let difference = dg::max_difference(&strip, &single.u, k, first_row);
                assert!(difference <= 1e-12, "{name}, rank {rank} of {size}: differs by {difference:e}");
            }
        }
    }
}

/// A user may name inputs in the `_pt_dist` namespace (the seed's prefixes are a convention): the
/// partition's generated names (received arrays, values between parts) go around them.
#[test]
fn inputs_named_like_the_partitions_own_names_are_kept_apart() {
    for (name, backend) in backends() {
        let results = on_ranks(2, move |comm| -> Result<Vec<f64>> {
            let peer = 1 - comm.rank();
            let recv0 = pt::placeholder("_pt_dist_recv0", [3], DType::F64)?;
            let part0 = pt::placeholder("_pt_dist_part0", [3], DType::F64)?;
            let sent = &(&recv0 * 2.0) + 1.0; // a value computed in a part of its own
            let received = make_distributed_recv(peer, "v", [3], DType::F64)?;
            let out =
                staple_distributed_send(&(&(&received + &part0) + &recv0), make_distributed_send(&sent, peer, "v")?)?;
            let program =
                DistributedProgram::compile(&*backend, comm, &(&out).into())?.with_timeout(Duration::from_secs(60));
            let r = comm.rank() as f64;
            let inputs = NamedData::from([
                ("_pt_dist_recv0".to_string(), f64s(&[r, r + 1.0, r + 2.0])),
                ("_pt_dist_part0".to_string(), f64s(&[100.0 * r, 0.0, -1.0])),
            ]);
            Ok(values(&program.run(comm, &inputs)?["_pt_out"]))
        });
        for (rank, got) in results.into_iter().enumerate() {
            let (r, p) = (rank as f64, (1 - rank) as f64);
            let expected: Vec<f64> =
                (0..3).map(|i| (2.0 * (p + i as f64) + 1.0) + [100.0 * r, 0.0, -1.0][i] + (r + i as f64)).collect();
            assert_eq!(got.unwrap_or_else(|e| panic!("{name}, rank {rank}: {e}")), expected, "{name}, rank {rank}");
        }
    }
}

/// Ranks given other sizes: a send of shape `(n,)` run with `n = 4` against a receive of shape
/// `(3,)` is a typed error on the receiving rank, not a reinterpretation of the bytes; and a
/// program waits for messages only so long by default.
#[test]
fn messages_of_other_sizes_are_errors_and_waits_end() {
    let results = on_ranks(2, |comm| -> Result<Vec<f64>> {
        let x = pt::placeholder("x", [Dim::param("n")], DType::F64)?;
        let out = if comm.rank() == 0 {
            staple_distributed_send(&pt::sum(&x, None)?, make_distributed_send(&x, 1, "v")?)?
        } else {
            pt::sum(&make_distributed_recv(0, "v", [3], DType::F64)?, None)?
        };
        let program = DistributedProgram::compile(&pytato_backend_interp::Interpreter, comm, &(&out).into())?;
        assert_eq!(program.timeout(), Some(DistributedProgram::DEFAULT_TIMEOUT), "a deadline by default");
        let program = program.with_timeout(Duration::from_secs(60));
        let x = f64s(&[1.0, 2.0, 3.0, 4.0]);
        let inputs = if comm.rank() == 0 { NamedData::from([("x".to_string(), x)]) } else { NamedData::new() };
        Ok(values(&program.run(comm, &inputs)?["_pt_out"]))
    });
    assert_eq!(results[0].as_ref().unwrap(), &[10.0]);
    let e = results[1].as_ref().unwrap_err();
    assert_eq!(e.kind(), "DistributedMismatch", "{e}");
    assert!(e.to_string().contains("shape [4]") && e.to_string().contains("shape [3]"), "{e}");
}

#[test]
fn local_messages_arrive_after_the_groups_latency() {
    // Threads standing in for ranks over a network: a message is not there before its latency
    // has passed, and is there after, in the order sent.
    let latency = Duration::from_millis(200);
    let mut ranks = LocalCommunicator::group_with_latency(2, latency).into_iter();
    let (zero, one) = (ranks.next().unwrap(), ranks.next().unwrap());
    let sent = std::time::Instant::now();
    zero.exchange(&mut |ex| {
        ex.send(1, 7, vec![1])?;
        ex.send(1, 7, vec![2])
    })
    .unwrap();
    let mut got = Vec::new();
    one.exchange(&mut |ex| {
        while got.len() < 2 {
            match ex.try_receive(0, 7)? {
                Some(message) => got.push((message, sent.elapsed())),
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(got.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>(), vec![vec![1], vec![2]]);
    assert!(got.iter().all(|(_, at)| *at >= latency), "{got:?}");
    // Without latency, at once.
    let mut ranks = LocalCommunicator::group(2).into_iter();
    let (zero, one) = (ranks.next().unwrap(), ranks.next().unwrap());
    zero.exchange(&mut |ex| ex.send(1, 7, vec![3])).unwrap();
    one.exchange(&mut |ex| {
        assert_eq!(ex.try_receive(0, 7)?, Some(vec![3]));
        Ok(())
    })
    .unwrap();
}
