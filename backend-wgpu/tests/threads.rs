//! Threads sharing the process's device: ranks of a distributed program run as threads, each
//! submitting and waiting on its own. wgpu-core 30 panicked when one thread's timed wait found the
//! queue emptied by another thread's maintenance (see `Gpu::submit`; CI met it with ranks as
//! threads). That window is a few instructions wide and this test does not hit it on demand (it
//! passed 5 times on the code before the fix): it holds that threads sharing the device, with
//! waits that time out while the others submit and poll, each get their own results.

mod support;
use support::gpu;

use pytato_core::{ArrayData, DType, Dim};
use pytato_frontend as pt;
use pytato_runtime::backend::Backend;

#[test]
fn threads_submitting_and_waiting_at_once_all_get_their_results() {
    let Some(w) = gpu() else { return };
    let x = pt::placeholder("x", [Dim::param("n")], DType::F64).unwrap();
    // Enough work per element for a run of a few 10^5 elements to outlast the 20 ms a wait
    // sleeps between checks for an interrupt, on lavapipe.
    let mut y = x.clone();
    for _ in 0..24 {
        y = pt::add(pt::multiply(pt::sin(&y).unwrap(), 0.5).unwrap(), &x).unwrap();
    }
    let total = pt::sum(&y, None).unwrap();
    let program = w.compile(&(&total).into()).unwrap();
    std::thread::scope(|s| {
        for thread in 0..4u32 {
            let program = &program;
            s.spawn(move || {
                for run in 0..16u32 {
                    // Sizes differ between threads and runs: short waits meet long ones.
                    let n = 1000 + 40_000 * ((thread + run) % 5) as usize;
                    let values: Vec<f64> = (0..n).map(|i| (i % 7) as f64 - 3.0).collect();
                    let input = ArrayData::from(ndarray::Array1::from(values).into_dyn());
                    let inputs = [("x".to_string(), input)].into();
                    let got = program.run(&inputs).unwrap().remove("_pt_out").unwrap();
                    // The same chain on the host: the input repeats with period 7, so one value
                    // per residue class (sin differs from the host's in the last bits).
                    let per_class: Vec<f64> = (0..7)
                        .map(|c| {
                            let v = c as f64 - 3.0;
                            let mut y = v;
                            for _ in 0..24 {
                                y = y.sin() * 0.5 + v;
                            }
                            y
                        })
                        .collect();
                    let want: f64 = (0..n).map(|i| per_class[i % 7]).sum();
                    let got = got.to_scalars()[0].to_f64();
                    assert!(
                        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                        "thread {thread} run {run}: {got} != {want}"
                    );
                }
            });
        }
    });
}
