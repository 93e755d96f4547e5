//! The distributed cases under real MPI: `cargo xtask ci` runs this binary with `mpirun -n 2`,
//! `-n 3` and `-n 4` (and `cargo test --features mpi` runs it as one rank). Every rank runs every
//! case and prints one line per case; the process exits non-zero if any case fails on it, so
//! `mpirun` fails. A hang is bounded by the timeout `xtask` puts around `mpirun` and by the
//! programs' own receive timeouts.

#[path = "support/dags.rs"]
mod dags;
#[path = "support/dg.rs"]
mod dg;
#[path = "support/heat.rs"]
mod heat;
#[path = "../../pytato/examples/dg/solver.rs"]
mod solver;

use std::time::Duration;

use pytato_core::distributed::{make_distributed_recv, make_distributed_send, staple_distributed_send};
use pytato_core::{ArrayData, DType, Result};
use pytato_distributed::{Communicator, DistributedProgram, MpiCommunicator};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData};

const TIMEOUT: Duration = Duration::from_secs(60);

fn f64s(values: &[f64]) -> ArrayData {
    ArrayData::from(ndarray::Array1::from(values.to_vec()).into_dyn())
}

fn values(data: &ArrayData) -> Vec<f64> {
    data.to_scalars().iter().map(|s| s.to_f64()).collect()
}

fn check(ok: bool, what: impl FnOnce() -> String) -> std::result::Result<(), String> {
    if ok { Ok(()) } else { Err(what()) }
}

/// Each rank sends its vector to the right and adds what comes from the left; twice, since tags
/// are reused from run to run.
fn ring(comm: &MpiCommunicator, backend: &dyn Backend) -> std::result::Result<(), String> {
    let (rank, size) = (comm.rank(), comm.size());
    let build = || -> Result<DistributedProgram> {
        let out = dags::ring(rank, size)?;
        Ok(DistributedProgram::compile(backend, comm, &(&out).into())?.with_timeout(TIMEOUT))
    };
    let program = build().map_err(|e| e.to_string())?;
    let (r, l) = (rank as f64, ((rank + size - 1) % size) as f64);
    for run in 0..3 {
        let x = f64s(&[r, 10.0 * r, run as f64]);
        let out = program.run(comm, &NamedData::from([("x".to_string(), x)])).map_err(|e| e.to_string())?;
        let expected = vec![r + 2.0 * l, 10.0 * r + 20.0 * l, 3.0 * run as f64];
        check(values(&out["_pt_out"]) == expected, || {
            format!("run {run}: {:?} != {expected:?}", values(&out["_pt_out"]))
        })?;
    }
    Ok(())
}

/// The distributed heat equation against the one-process run of the whole grid (bit for bit).
fn heat_matches_one_process(comm: &MpiCommunicator, backend: &dyn Backend) -> std::result::Result<(), String> {
    let (n, steps) = (101, 8);
    let u0 = heat::initial(n);
    let err = |e: pytato_core::Error| e.to_string();
    let (start, len) = heat::chunk(n, comm.size(), comm.rank());
    let dag = heat::distributed_heat(comm.rank(), comm.size(), len, steps).map_err(err)?;
    let program = DistributedProgram::compile(backend, comm, &(&dag).into()).map_err(err)?.with_timeout(TIMEOUT);
    let mut state = u0[start..start + len].to_vec();
    // Two runs, the second from the first's result: 2 * steps steps in all.
    for _ in 0..2 {
        state =
            values(&program.run(comm, &NamedData::from([("u".to_string(), f64s(&state))])).map_err(err)?["_pt_out"]);
    }
    let twice = backend.compile(&(&heat::heat(n, 2 * steps).map_err(err)?).into()).map_err(err)?;
    let expected_twice = values(&twice.run(&NamedData::from([("u".to_string(), f64s(&u0))])).map_err(err)?["_pt_out"]);
    check(state == expected_twice[start..start + len], || {
        format!("rank {}: {state:?} != {:?}", comm.rank(), &expected_twice[start..start + len])
    })
}

/// Every rank sends to every rank (itself too) and builds its receives in its own shuffled order.
fn random_receive_order(comm: &MpiCommunicator, backend: &dyn Backend) -> std::result::Result<(), String> {
    let (rank, size) = (comm.rank(), comm.size());
    let build = || -> Result<DistributedProgram> {
        let total = dags::all_to_all(rank, &dags::shuffled(rank, size, 7))?;
        Ok(DistributedProgram::compile(backend, comm, &(&total).into())?.with_timeout(TIMEOUT))
    };
    let program = build().map_err(|e| e.to_string())?;
    let out = program
        .run(comm, &NamedData::from([("x".to_string(), f64s(&[rank as f64, 1.0]))]))
        .map_err(|e| e.to_string())?;
    let expected = dags::all_to_all_expected(rank, size);
    check(values(&out["_pt_out"]) == expected, || format!("{:?} != {expected:?}", values(&out["_pt_out"])))
}

/// Rank 0 sends 3 float64 to the last rank, which expects another shape, then another dtype:
/// every rank gets the same typed error when the program is compiled, and nobody hangs.
fn mismatches_are_typed_errors(comm: &MpiCommunicator, backend: &dyn Backend) -> std::result::Result<(), String> {
    let (rank, last) = (comm.rank(), comm.size() - 1);
    for (shape, dtype) in [([4], DType::F64), ([3], DType::I64)] {
        let build = || -> Result<DistributedProgram> {
            let x = pt::placeholder("x", [3], DType::F64)?;
            let mut out = x.clone();
            if rank == 0 {
                out = staple_distributed_send(&out, make_distributed_send(&x, last, "m")?)?;
            }
            if rank == last {
                out = &out + &pt::sum(&make_distributed_recv(0, "m", shape, dtype)?, None)?;
            }
            DistributedProgram::compile(backend, comm, &(&out).into())
        };
        match build() {
            Ok(_) => return Err(format!("{shape:?} {dtype}: no error")),
            Err(e) if e.kind() == "DistributedMismatch" && e.to_string().contains("rank 0 sends") => {}
            Err(e) => return Err(format!("{shape:?} {dtype}: the wrong error: {e}")),
        }
    }
    Ok(())
}

type Case = fn(&MpiCommunicator, &dyn Backend) -> std::result::Result<(), String>;

/// The DG flagship split into strips of rows, one per rank: every rank's values equal the
/// one-process run's on its rows, to round-off.
fn dg_matches_one_process(comm: &MpiCommunicator, backend: &dyn Backend) -> std::result::Result<(), String> {
    let (order, k, t_final) = (2, 6, 0.02);
    let strip = dg::run_rank(comm, backend, order, k, t_final, 0.5).map_err(|e| e.to_string())?;
    let single = solver::Solver::new(backend, order)
        .and_then(|s| s.run(&solver::Mesh { k }, t_final, 0.5, &mut |_, _| {}))
        .map_err(|e| e.to_string())?;
    let (first_row, _) = dg::strip(k, comm.size(), comm.rank());
    let difference = dg::max_difference(&strip, &single.u, k, first_row);
    check(difference <= 1e-12, || format!("the strip differs from the one-process run by {difference:e}"))
}

fn main() {
    let comm = MpiCommunicator::init().expect("MPI initializes");
    let cases: [(&str, Case); 5] = [
        ("ring halo exchange", ring),
        ("heat equation matches one process", heat_matches_one_process),
        ("receives in random orders", random_receive_order),
        ("mismatched shapes and dtypes", mismatches_are_typed_errors),
        ("DG solver matches one process", dg_matches_one_process),
    ];
    let backends: Vec<(&str, Box<dyn Backend>)> = vec![
        ("cranelift", Box::new(pytato_backend_cranelift::Cranelift::default())),
        ("interp", Box::new(pytato_backend_interp::Interpreter)),
    ];
    let mut failures = 0;
    for (backend_name, backend) in &backends {
        for (name, case) in cases {
            match case(&comm, &**backend) {
                Ok(()) => println!("rank {}/{}: {backend_name}: {name}: ok", comm.rank(), comm.size()),
                Err(why) => {
                    failures += 1;
                    println!("rank {}/{}: {backend_name}: {name}: FAILED: {why}", comm.rank(), comm.size());
                }
            }
        }
    }
    comm.barrier();
    drop(comm);
    if failures > 0 {
        std::process::exit(1);
    }
}
