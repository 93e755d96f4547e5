//! The fuzz campaign's driver survives a hang: the worker stuck on a case is killed and replaced
//! in its slot, and the campaign goes on to its end. (The killed worker's reader thread reported
//! its exit after the replacement had started, and the driver took that for the replacement's
//! exit and waited for the replacement to end: a campaign with no `--dags` limit never did.)

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_campaign_goes_on_after_a_worker_hangs_and_ends() {
    let report = std::env::temp_dir().join(format!("pytato-fuzz-driver-{}", std::process::id()));
    let mut campaign = Command::new(env!("CARGO_BIN_EXE_fuzz"))
        .args(["campaign", "--seconds", "8", "--timeout", "2", "--start", "0", "--jobs", "1", "--no-numpy"])
        .args(["--backend", "interp", "--report"])
        .arg(&report)
        // The worker stops forever at seed 2 (`fuzz.rs`'s test hook).
        .env("PYTATO_FUZZ_STALL_SEED", "2")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the fuzz binary starts");
    // The campaign ends 8 s after it starts, plus the shrinking of one case; a driver that
    // waits for a worker forever would not, so give up (and fail) well after that.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = campaign.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(600) {
            let _ = campaign.kill();
            panic!("the campaign did not end 600 s after it started");
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("report.json")).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&report);
    assert!(!status.success(), "a campaign with a hang fails");
    assert_eq!(json["hangs"], serde_json::json!([2]), "{json}");
    // Cases after the hang ran in the replacement worker.
    assert!(json["dags"].as_u64().unwrap() > 3, "{json}");
}
