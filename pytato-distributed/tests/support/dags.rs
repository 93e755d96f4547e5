//! DAGs the in-process tests and the MPI harness both run, with the values they must compute
//! (written out independently of the library).

#![allow(dead_code, unreachable_pub)]

use pytato_core::distributed::{make_distributed_recv, make_distributed_send, staple_distributed_send};
use pytato_core::{Array, DType, Result};
use pytato_frontend as pt;

/// Ring halo exchange: each rank sends `2 * x` (3 float64) to the right and adds what comes from
/// the left.
pub fn ring(rank: usize, size: usize) -> Result<Array> {
    let x = pt::placeholder("x", [3], DType::F64)?;
    let from_left = make_distributed_recv((rank + size - 1) % size, "ring", [3], DType::F64)?;
    let send = make_distributed_send(&(2.0 * &x), (rank + 1) % size, "ring")?;
    staple_distributed_send(&(&x + &from_left), send)
}

/// `0..size` in an order that depends on `rank` and `seed` (a small LCG shuffle).
pub fn shuffled(rank: usize, size: usize, seed: u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..size).collect();
    let mut state = 0x9e37_79b9_u64.wrapping_mul(rank as u64 + seed);
    for i in (1..order.len()).rev() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        order.swap(i, (state >> 33) as usize % (i + 1));
    }
    order
}

/// Every rank sends `x + dest` (2 float64) to every rank, itself included, building its receives
/// and sends in `order`; the output sums what arrived, weighted by `src + 1`.
pub fn all_to_all(rank: usize, order: &[usize]) -> Result<Array> {
    let x = pt::placeholder("x", [2], DType::F64)?;
    let mut total = pt::zeros([2], DType::F64)?;
    for &src in order {
        let got = make_distributed_recv(src, ("all", src, rank), [2], DType::F64)?;
        total = &total + &(&got * ((src + 1) as f64));
    }
    for &dest in order.iter().rev() {
        let send = make_distributed_send(&(&x + (dest as f64)), dest, ("all", rank, dest))?;
        total = staple_distributed_send(&total, send)?;
    }
    Ok(total)
}

/// What [`all_to_all`] computes on `rank` when rank `r` passes `x = [r, 1]`.
pub fn all_to_all_expected(rank: usize, size: usize) -> Vec<f64> {
    (0..2)
        .map(|j| (0..size).map(|src| (if j == 0 { src as f64 } else { 1.0 } + rank as f64) * (src + 1) as f64).sum())
        .collect()
}
