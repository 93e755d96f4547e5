//! The README's heat equation split over the ranks of a ring, and the one-process version to
//! check it against. Shared by the tests, the MPI harness and the `distributed_heat` example.

#![allow(dead_code, unreachable_pub)]

use pytato_core::distributed::{make_distributed_recv, make_distributed_send, staple_distributed_send};
use pytato_core::{Array, DType, Result, s};
use pytato_frontend as pt;

/// The diffusion number of the explicit Euler step.
pub const NU: f64 = 0.25;

/// The first point and the number of points of `rank`'s chunk of an `n`-point grid over `size`
/// ranks (the first `n % size` ranks get one point more).
pub fn chunk(n: usize, size: usize, rank: usize) -> (usize, usize) {
    let (base, extra) = (n / size, n % size);
    (rank * base + rank.min(extra), base + usize::from(rank < extra))
}

/// `steps` explicit Euler steps of the periodic 1-D heat equation on `rank`'s chunk of
/// `n_local` points (input `u`): each step receives one value from each ring neighbour and sends
/// its first and last values to them.
pub fn distributed_heat(rank: usize, size: usize, n_local: usize, steps: usize) -> Result<Array> {
    let (left_rank, right_rank) = ((rank + size - 1) % size, (rank + 1) % size);
    let n = n_local as i64;
    let mut u = pt::placeholder("u", [n_local as i64], DType::F64)?;
    for step in 0..steps {
        // Tags say which side of the receiver the value lands on.
        let from_left = ("halo", step, "from left");
        let from_right = ("halo", step, "from right");
        let left = make_distributed_recv(left_rank, from_left, [1], DType::F64)?;
        let right = make_distributed_recv(right_rank, from_right, [1], DType::F64)?;
        let next = step_with_halos(&u, left, right)?;
        let to_right = make_distributed_send(&u.index(s![n - 1..n])?, right_rank, from_left)?;
        let to_left = make_distributed_send(&u.index(s![0..1])?, left_rank, from_right)?;
        u = staple_distributed_send(&staple_distributed_send(&next, to_right)?, to_left)?;
    }
    Ok(u)
}

/// One step on `u` between the values `left` and `right` of its neighbours.
fn step_with_halos(u: &Array, left: Array, right: Array) -> Result<Array> {
    let n = u.shape()[0].as_int().expect("a concrete chunk");
    let extended = pt::concatenate(&[left, u.clone(), right], 0)?;
    // The same operations in the same order as the one-process update of `heat`.
    let laplacian = extended.index(s![0..n])? - 2.0 * u + extended.index(s![2..n + 2])?;
    Ok(u + NU * &laplacian)
}

/// The steps of [`distributed_heat`] on the whole periodic grid in one process, the halos taken
/// from the grid itself: the same operations without messages (the unpartitioned program).
pub fn heat_without_messages(n: usize, steps: usize) -> Result<Array> {
    let last = n as i64;
    let mut u = pt::placeholder("u", [last], DType::F64)?;
    for _ in 0..steps {
        u = step_with_halos(&u, u.index(s![last - 1..last])?, u.index(s![0..1])?)?;
    }
    Ok(u)
}

/// The same steps on the whole `n`-point grid in one process (the README's heat equation).
pub fn heat(n: usize, steps: usize) -> Result<Array> {
    let mut u = pt::placeholder("u", [n as i64], DType::F64)?;
    for _ in 0..steps {
        let laplacian = pt::roll(&u, 1, Some(0))? - 2.0 * &u + pt::roll(&u, -1, Some(0))?;
        u = &u + NU * &laplacian;
    }
    Ok(u)
}

/// A rough initial state with every kind of value the update mixes: a smooth wave plus a spike.
pub fn initial(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (2.0 * std::f64::consts::PI * i as f64 / n as f64).sin() + if i == n / 3 { 1.0 } else { 0.0 })
        .collect()
}
