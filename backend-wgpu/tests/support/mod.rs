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
