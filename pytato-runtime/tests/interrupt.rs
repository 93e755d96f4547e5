//! The interrupt request (its own test binary: the flag is process-wide, and no other test
//! here may see it set).

use pytato_core::Error;
use pytato_runtime::interrupt::{check, clear, flag, request, requested};
use std::sync::atomic::Ordering;

#[test]
fn a_request_stands_until_cleared_and_the_flag_is_the_request() {
    clear();
    assert_eq!(check("run"), Ok(()));
    flag().store(true, Ordering::Relaxed);
    assert!(requested());
    let Err(Error::Interrupted { op }) = check("run") else { panic!("not interrupted") };
    assert_eq!(op, "run");
    assert!(check("again").is_err(), "a check does not consume the request");
    clear();
    assert!(!flag().load(Ordering::Relaxed));
    request();
    assert!(flag().load(Ordering::Relaxed));
    clear();
}
