//! What the wgpu test binaries share.

use pytato_backend_wgpu::{REQUIRE_VAR, Wgpu};

/// The backend, or `None` (with a message) where there is no adapter and none is required;
/// with `PYTATO_REQUIRE_WGPU=1` (CI) a missing adapter fails the test.
pub(crate) fn gpu() -> Option<Wgpu> {
    match Wgpu::new() {
        Ok(w) => Some(w),
        Err(e) if std::env::var(REQUIRE_VAR).is_ok_and(|v| !v.is_empty() && v != "0") => {
            panic!("{REQUIRE_VAR} is set but the wgpu backend cannot start: {e}")
        }
        Err(e) => {
            eprintln!("wgpu test skipped: {e}");
            None
        }
    }
}

/// Deterministic values in [0, 1) from `seed` (an LCG's top 53 bits).
#[allow(dead_code)] // (not every test binary draws values)
pub(crate) fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / 2f64.powi(53)
    }
}
