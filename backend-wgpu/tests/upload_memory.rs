//! Uploads in a loop, with no run in between, keep the process's memory bounded: wgpu held each
//! written buffer's staging copy (and every dropped buffer) until the next submission, so 100
//! uploads of 8 MB, each dropped at once, held 800 MB.
//!
//! One test function, run alone in this binary: it reads the process's resident memory (Linux).

mod support;
use support::gpu;

use pytato_core::ArrayData;
use pytato_runtime::backend::Backend;

/// The process's resident memory in bytes (`/proc/self/statm`), `None` off Linux.
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
fn dropped_uploads_free_their_memory_without_a_run() {
    let Some(w) = gpu() else { return };
    let Some(_) = resident_bytes() else {
        eprintln!("skipped: no /proc/self/statm to read the resident memory from");
        return;
    };
    let data = ArrayData::from(ndarray::Array1::from(vec![1.5f64; 1 << 20]).into_dyn()); // 8 MiB
    // the first uploads settle the driver's own pools
    for _ in 0..4 {
        drop(w.upload(&data.view()).unwrap());
    }
    let before = resident_bytes().unwrap();
    for _ in 0..100 {
        drop(w.upload(&data.view()).unwrap());
    }
    let grown = resident_bytes().unwrap().saturating_sub(before);
    // 100 uploads of 8 MiB held: 800 MiB; freed as they go: about one or two
    assert!(grown < 200 << 20, "100 dropped uploads of 8 MiB left {} MiB resident", grown >> 20);
    // the last upload still reads back
    let kept = w.upload(&data.view()).unwrap();
    assert_eq!(kept.to_host().unwrap().to_scalars()[(1 << 20) - 1].to_f64(), 1.5);
}
