//! The harness end to end, small: 3 client processes for 3 seconds per phase, local then
//! fleet on a real `redis-server`, against a 100/s server. Checks the report's shape and two
//! invariants that hold however loaded the machine is: the server never admits more in a
//! second than its limit plus its burst, and fleet mode sends the store at most about one
//! command per process per sync interval. Skips (one line) without `redis-server` on `PATH`,
//! unless `RETRY_REQUIRE_REDIS=1`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const PROCESSES: u64 = 3;
const SECONDS: u64 = 3;
const LIMIT: f64 = 100.0;
const BURST: f64 = 10.0;
const SYNC_INTERVAL: Duration = Duration::from_millis(500);
/// The whole run's bound: two phases of 3 s, their starts and ends, debug builds.
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the harness and returns its JSON report.
fn run_harness(out_dir: &PathBuf) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fleet-harness"))
        .args(["run", "--phases", "local,fleet"])
        .args(["--processes", &PROCESSES.to_string(), "--rate", "60"])
        .args(["--duration", &format!("{SECONDS}s"), "--warmup", "1s"])
        .args(["--limit", &LIMIT.to_string(), "--burst", &BURST.to_string()])
        .args([
            "--sync-interval",
            &format!("{}ms", SYNC_INTERVAL.as_millis()),
        ])
        .arg("--out-dir")
        .arg(out_dir)
        .stdout(Stdio::null())
        .spawn()
        .expect("the harness starts");
    let deadline = Instant::now() + RUN_TIMEOUT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("the harness can be waited for") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the harness ran longer than {RUN_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "the harness failed: {status}");
    let json = std::fs::read_to_string(out_dir.join("report.json")).expect("report.json");
    assert!(out_dir.join("report.csv").exists(), "report.csv");
    serde_json::from_str(&json).expect("the report is JSON")
}

fn number(value: &Value, field: &str) -> f64 {
    value[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} is not a number in {value}"))
}

#[test]
fn the_harness_reports_every_second_of_both_modes_within_the_bounds() {
    if !retry_tests::redis_server::available(
        "fleet-harness/tests/smoke.rs (the harness's smoke test)",
    ) {
        return;
    }
    let out_dir = std::env::temp_dir().join(format!("fleet-harness-smoke-{}", std::process::id()));
    let report = run_harness(&out_dir);
    let _ = std::fs::remove_dir_all(&out_dir);

    let phases = report["phases"].as_array().expect("phases");
    let modes: Vec<&str> = phases
        .iter()
        .filter_map(|phase| phase["mode"].as_str())
        .collect();
    assert_eq!(modes, ["local", "fleet"]);
    for phase in phases {
        let rows = phase["rows"].as_array().expect("rows");
        let seconds: Vec<u64> = rows
            .iter()
            .filter_map(|row| row["second"].as_u64())
            .collect();
        assert_eq!(
            seconds,
            (0..SECONDS).collect::<Vec<_>>(),
            "a row per second"
        );
        for row in rows {
            assert!(
                number(row, "admitted") <= LIMIT + BURST,
                "the server admitted more than its limit and burst in a second: {row}"
            );
            assert!(number(row, "clients") <= PROCESSES as f64, "{row}");
        }
        let calls: f64 = rows.iter().map(|row| number(row, "calls")).sum();
        assert!(calls > 0.0, "the clients made calls: {phase}");
        let summary = &phase["summary"];
        for field in [
            "admitted_per_s",
            "throttled_share",
            "attempts_per_s",
            "calls_per_s",
        ] {
            number(summary, field);
        }
    }
    let fleet = &phases[1];
    let redis = &fleet["summary"]["redis"];
    // One EVALSHA per process per interval (jittered by 10 %), plus a reconnect's set-up.
    let per_process = number(redis, "sent_per_process_per_interval");
    assert!(
        per_process > 0.0 && per_process <= 1.5,
        "commands sent per process per sync interval: {per_process} ({redis})"
    );
    assert!(
        fleet["rows"][SECONDS as usize - 1]["store"].is_object(),
        "the store's view"
    );
    assert!(
        phases[0]["summary"]["redis"].is_null(),
        "local mode uses no store"
    );
}
