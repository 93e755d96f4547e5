//! Every conformance case on the wgpu backend compiled as an adapter without `SHADER_INT64` would
//! compile it (`Wgpu::with_int64(false)`: shaders validated by naga without 64-bit integers, and
//! so without float64): each case either gives numpy's values with 32-bit indices or is
//! `Unsupported`, naming the feature it needs. Never a wrong value, never an internal error.

use pytato_backend_wgpu::{REQUIRE_VAR, Wgpu};
use pytato_conformance::{Outcome, golden::load_cases, run_case};

#[test]
fn every_case_runs_with_32_bit_indices_or_is_unsupported() {
    let backend = match Wgpu::new() {
        Ok(w) => w.with_int64(false),
        Err(e) if std::env::var(REQUIRE_VAR).is_ok_and(|v| !v.is_empty() && v != "0") => {
            panic!("{REQUIRE_VAR} is set but the wgpu backend cannot start: {e}")
        }
        Err(e) => {
            eprintln!("wgpu test skipped: {e}");
            return;
        }
    };
    let cases = load_cases();
    let (mut passed, mut unsupported) = (0, 0);
    for case in &cases {
        match run_case(case, &backend) {
            Outcome::Pass => passed += 1,
            Outcome::Unsupported(reason) => {
                assert!(reason.contains("SHADER_INT64") || reason.contains("SHADER_F64"), "{}: {reason}", case.name);
                unsupported += 1;
            }
            Outcome::Fail(message) => panic!("{}: {message}", case.name),
        }
    }
    eprintln!("without 64-bit integers: {passed} of {} cases pass, {unsupported} need them", cases.len());
    assert_eq!(passed + unsupported, cases.len());
    assert!(passed > 0, "no case ran with 32-bit indices");
}
