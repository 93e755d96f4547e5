//! The DG flagship (`pytato/examples/dg`) over ranks: the mesh's rows of elements are split into
//! strips, one per rank. A stage is the one-process stage with one change: the neighbour faces
//! across the bottom of a strip's first row come from the rank below, received each stage
//! (`make_distributed_recv`), and the top faces of a strip's last row are sent to the rank above
//! (`staple_distributed_send`). The flow enters each element through its left and bottom faces
//! only (`solver::inflow_neighbours`), so those are the only halos. Every operation is the
//! one-process program's, in the same order, so the result equals the one-rank run bit for bit.
//!
//! Shared by the tests (threads as ranks, and the MPI harness) and the `distributed_dg` example;
//! the including crate declares `solver` (`#[path]` to the example's file) next to this module.

#![allow(dead_code, unreachable_pub)]

use std::time::{Duration, Instant};

use ndarray::{Array1, Array3, ArrayD, Axis, IxDyn, s};
use pytato_core::distributed::{make_distributed_recv, make_distributed_send, staple_distributed_send};
use pytato_core::{ArrayData, DType, DictOfNamedArrays, Dim, Result};
use pytato_distributed::{Communicator, DistributedProgram};
use pytato_frontend as pt;
use pytato_runtime::backend::{Backend, NamedData, views};

use super::solver::{self, Mesh, Reference};

/// The first row and the number of rows of `rank`'s strip of `k` rows over `size` ranks (the
/// first `k % size` ranks get one row more).
pub fn strip(k: usize, size: usize, rank: usize) -> (usize, usize) {
    let (base, extra) = (k / size, k % size);
    (rank * base + rank.min(extra), base + usize::from(rank < extra))
}

/// The message tag of the bottom halo.
const HALO: &str = "dg: top faces of the strip below";

/// The stage program of `rank` on a mesh of `k × k` elements.
pub fn stage(reference: &Reference, k: usize, size: usize, rank: usize) -> Result<DictOfNamedArrays> {
    let (_, rows) = strip(k, size, rank);
    let (below, above) = ((rank + size - 1) % size, (rank + 1) % size);
    let np = reference.np();
    let elements = Dim::new((k * rows) as i64);
    solver::stage_with(reference, elements, &|u| {
        let plus = |side| solver::plus_source(reference, u, side);
        let own_bottom = plus(2)?;
        // The faces of the rank below come first: the `bottom` indices of the first row point
        // into them, the other rows' past them.
        let halo = make_distributed_recv(below, HALO, [k as i64, np as i64], DType::F64)?;
        let bottom = pt::concatenate(&[halo, own_bottom.clone()], 0)?;
        let rhs = solver::rhs_from(reference, u, [plus(0)?, plus(1)?, bottom, plus(3)?])?;
        let last_row = own_bottom.index(pytato_core::s![((rows - 1) * k) as i64..(rows * k) as i64, ..])?;
        staple_distributed_send(&rhs, make_distributed_send(&last_row, above, HALO)?)
    })
}

/// The neighbour index arrays of a strip, by input name: within the strip for `left` and
/// `right`; for `bottom`, into the received faces followed by the strip's own.
pub fn neighbours(k: usize, rows: usize) -> Vec<(&'static str, ArrayData)> {
    let kk = k as i64;
    let at = |f: &dyn Fn(i64, i64) -> i64| {
        ArrayData::from(Array1::from_shape_fn(k * rows, |e| f(e as i64 % kk, e as i64 / kk)).into_dyn())
    };
    let all = [
        ("left", at(&|x, r| (x - 1).rem_euclid(kk) + kk * r)),
        ("right", at(&|x, r| (x + 1).rem_euclid(kk) + kk * r)),
        ("bottom", at(&|x, r| if r == 0 { x } else { kk + x + kk * (r - 1) })),
        ("top", at(&|x, r| x + kk * (r + 1))),
    ];
    let inflow: Vec<&str> = solver::inflow_neighbours().map(|(_, name)| name).collect();
    all.into_iter().filter(|(name, _)| inflow.contains(name)).collect()
}

/// Runs `rank`'s strip of the solver from the exact solution at `t = 0` to `t_final`, with the
/// one-process run's time step. Returns the strip's final nodal values (its rows of the mesh).
pub fn run_rank(
    comm: &dyn Communicator,
    backend: &dyn Backend,
    order: usize,
    k: usize,
    t_final: f64,
    cfl: f64,
) -> Result<Array3<f64>> {
    run_rank_timed(comm, backend, order, k, t_final, cfl).map(|(strip, _)| strip)
}

/// Where one rank's time went in [`run_rank_timed`].
#[allow(dead_code)] // (read by the example, not by every test binary)
#[derive(Clone, Copy, Debug, Default)]
pub struct RankTimes {
    /// Building the stage's DAG, partitioning and compiling it (collective: the ranks agree on
    /// the partition's tags).
    pub compile: Duration,
    /// The time loop, all stages.
    pub steps: Duration,
    /// Of `steps`: running the program's parts (`RunStats::compute`). The rest of `steps` but
    /// `waiting` is the runs' other work (binding inputs, sending) and the loop's own (the
    /// inputs assembled for each stage).
    pub compute: Duration,
    /// Of `steps`: waiting for the neighbour's message with nothing to run (`RunStats::waiting`).
    pub waiting: Duration,
}

/// [`run_rank`], with where the rank's time went.
pub fn run_rank_timed(
    comm: &dyn Communicator,
    backend: &dyn Backend,
    order: usize,
    k: usize,
    t_final: f64,
    cfl: f64,
) -> Result<(Array3<f64>, RankTimes)> {
    let mut times = RankTimes::default();
    let start = Instant::now();
    let (rank, size) = (comm.rank(), comm.size());
    let reference = Reference::new(order);
    let mesh = Mesh { k };
    let (first_row, rows) = strip(k, size, rank);
    let (steps, dt) = solver::time_steps(&reference, &mesh, t_final, cfl);
    let dag = stage(&reference, k, size, rank)?;
    let program = DistributedProgram::compile(backend, comm, &(&dag).into())?.with_timeout(Duration::from_secs(60));
    times.compile = start.elapsed();
    let whole = mesh.interpolate(&reference, solver::exact(0.0));
    let mut u = whole.slice(s![first_row * k..(first_row + rows) * k, .., ..]).to_owned().into_dyn();
    let mut k_state: ArrayD<f64> = ArrayD::zeros(u.shape());
    let scalar = |v: f64| ArrayData::from(ArrayD::from_elem(IxDyn(&[]), v));
    let mut fixed: NamedData = neighbours(k, rows).into_iter().map(|(n, a)| (n.to_string(), a)).collect();
    fixed.insert("h".into(), scalar(mesh.h()));
    fixed.insert("dt".into(), scalar(dt));
    let start = Instant::now();
    for _ in 0..steps {
        for (alpha, beta) in solver::RK_ALPHA.iter().zip(&solver::RK_BETA) {
            // Borrowed, not copied: the neighbour tables are the same every stage.
            let (u_data, k_data) = (ArrayData::from(u), ArrayData::from(k_state));
            let (alpha, beta) = (scalar(*alpha), scalar(*beta));
            let mut inputs = views(&fixed);
            inputs.extend([("u", u_data.view()), ("k", k_data.view()), ("alpha", alpha.view()), ("beta", beta.view())]);
            let (mut out, stats) = program.run_views(comm, &inputs)?;
            times.compute += stats.compute;
            times.waiting += stats.waiting;
            let take = |out: &mut NamedData, name: &str| {
                out.remove(name).and_then(|a| a.into_array::<f64>().ok()).expect("a float64 output")
            };
            u = take(&mut out, "u");
            k_state = take(&mut out, "k");
        }
    }
    times.steps = start.elapsed();
    Ok((u.into_dimensionality().expect("3 axes"), times))
}

/// The largest difference between a strip's values and the same rows of the one-process result.
pub fn max_difference(strip_values: &Array3<f64>, whole: &Array3<f64>, k: usize, first_row: usize) -> f64 {
    let rows = strip_values.len_of(Axis(0)) / k;
    let mine = whole.slice(s![first_row * k..(first_row + rows) * k, .., ..]);
    strip_values.iter().zip(mine.iter()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
}
