//! The harness end to end, small: 3 client processes for 3 seconds per phase, local then
//! fleet on a real `redis-server`, against a 100/s server. Checks the report's shape and two
//! invariants that hold however loaded the machine is: the server never admits more in a
//! second than its limit plus its burst, and fleet mode sends the store at most about one
//! command per process per sync interval. Then a fleet of 3 scopes per process on a Redis
//! Cluster through a failover: every lease live again, each node's load reported. Skips (one
//! line) without `redis-server` (and `redis-cli` for the cluster) on `PATH`, unless
//! `RETRY_REQUIRE_REDIS=1`.

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

/// Runs the harness with `args` (the phases and what else the test sets) and returns its JSON
/// report.
fn run_harness(out_dir: &PathBuf, args: &[&str]) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fleet-harness"))
        .arg("run")
        .args(args)
        .args(["--processes", &PROCESSES.to_string(), "--rate", "60"])
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

/// The report's directory of the test named `name`, one per test process.
fn out_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fleet-harness-{name}-{}", std::process::id()))
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
    let out_dir = out_dir("smoke");
    let duration = format!("{SECONDS}s");
    let args = [
        "--phases",
        "local,fleet",
        "--duration",
        &duration,
        "--warmup",
        "1s",
    ];
    let report = run_harness(&out_dir, &args);
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

/// Issue 25's shapes in one small run: mixed demand, a static split, random 503s, a process
/// joining at 2 s and the last started one crashing at 4 s (SIGKILL).
#[test]
fn the_harness_runs_a_split_with_mixed_demand_on_off_arrivals_503s_and_a_crash() {
    let out_dir = out_dir("shapes");
    let args = [
        "--phases",
        "split",
        "--rates",
        "40,20,20",
        "--error-rate",
        "0.2",
        "--client-event",
        "2s:start:1",
        "--client-event",
        "4s:kill:1",
        "--duration",
        "6s",
        "--warmup",
        "1s",
        "--on-off",
        "300ms,200ms",
    ];
    let report = run_harness(&out_dir, &args);
    let _ = std::fs::remove_dir_all(&out_dir);
    assert_eq!(
        report["settings"]["rates"],
        serde_json::json!([40.0, 20.0, 20.0])
    );
    assert_eq!(
        report["settings"]["on_off"],
        serde_json::json!({"on_ms": 300, "off_ms": 200})
    );
    let phase = &report["phases"][0];
    assert_eq!(phase["mode"], "split");
    let rows = phase["rows"].as_array().expect("rows");
    let clients: Vec<u64> = rows
        .iter()
        .filter_map(|row| row["clients"].as_u64())
        .collect();
    assert_eq!(clients, [3, 3, 4, 4, 3, 3], "who reported each second");
    assert_eq!(
        rows[2]["client_events"][0]["action"], "start",
        "{}",
        rows[2]
    );
    assert_eq!(rows[4]["client_events"][0]["action"], "kill", "{}", rows[4]);
    let errors: f64 = rows.iter().map(|row| number(row, "errors")).sum();
    assert!(
        errors > 0.0,
        "the server answered some admitted requests 503"
    );
    for row in rows {
        assert!(number(row, "admitted") <= LIMIT + BURST, "{row}");
    }
    assert!(number(&phase["summary"], "error_share") > 0.0);
}

/// The cluster run's length: a failover at 3 s takes 1.5-2 s, then a few seconds after.
const CLUSTER_SECONDS: u64 = 9;

#[test]
fn the_harness_runs_a_fleet_on_a_cluster_through_a_failover() {
    let suite = "fleet-harness/tests/smoke.rs (the harness on a Redis Cluster)";
    if !retry_tests::redis_server::available(suite) || !redis_cli_available() {
        return;
    }
    let out_dir = out_dir("cluster");
    let duration = format!("{CLUSTER_SECONDS}s");
    let args = [
        "--phases",
        "fleet+faults",
        "--redis-cluster",
        "--scopes",
        "3",
        "--fault",
        "3s:failover",
        "--duration",
        &duration,
        "--warmup",
        "1s",
    ];
    let report = run_harness(&out_dir, &args);
    let _ = std::fs::remove_dir_all(&out_dir);
    assert_eq!(report["settings"]["cluster"], Value::Bool(true));
    let phase = &report["phases"][0];
    let episode = &phase["episodes"][0];
    assert_eq!(episode["name"], "failover", "{episode}");
    assert!(
        episode["leases_live_after_s"].is_u64(),
        "every lease live again after the promotion: {episode}"
    );
    let nodes = phase["nodes"].as_array().expect("the nodes' load");
    assert!(nodes.len() >= 5, "six nodes, one killed: {nodes:?}");
    let scripts: f64 = nodes.iter().map(|node| number(node, "scripts_per_s")).sum();
    assert!(scripts > 0.0, "the masters ran the store script: {nodes:?}");
    let last = &phase["rows"][CLUSTER_SECONDS as usize - 1];
    assert_eq!(last["leases_live"].as_u64(), Some(PROCESSES), "{last}");
    assert!(
        last["store"].is_object(),
        "the scope's state, read from its master: {last}"
    );
}

/// The partial write failure run's length: the fault from 1 s to 4 s, then leases to renew.
const UNHEARD_SECONDS: u64 = 8;

#[test]
fn the_harness_refuses_the_later_processes_syncs_and_lets_them_back() {
    let suite = "fleet-harness/tests/smoke.rs (partial write failure)";
    if !retry_tests::redis_server::available(suite) {
        return;
    }
    let out_dir = out_dir("unheard");
    let duration = format!("{UNHEARD_SECONDS}s");
    let args = [
        "--phases",
        "fleet+faults",
        "--fault",
        "1s:writes-fail",
        "--fault",
        "4s:writes-resume",
        "--duration",
        &duration,
        "--warmup",
        "1s",
    ];
    let report = run_harness(&out_dir, &args);
    let _ = std::fs::remove_dir_all(&out_dir);
    let phase = &report["phases"][0];
    let episode = &phase["episodes"][0];
    assert_eq!(episode["name"], "writes-fail→writes-resume", "{episode}");
    assert_eq!(episode["leases_lapsed"], Value::Bool(true), "{episode}");
    let rows = phase["rows"].as_array().expect("rows");
    // Of 3 processes, the later 2 connect as the user the fault refuses: their leases lapse
    // (1.5 s, three sync intervals), the first one's stays live.
    let live: Vec<Option<u64>> = rows.iter().map(|row| row["leases_live"].as_u64()).collect();
    assert!(live.contains(&Some(1)), "two leases lapsed: {live:?}");
    assert_eq!(
        live.last(),
        Some(&Some(PROCESSES)),
        "all live again: {live:?}"
    );
}

/// Whether `redis-cli` runs (it makes the cluster); a failure when it does not and
/// `RETRY_REQUIRE_REDIS=1`, a skip line otherwise.
fn redis_cli_available() -> bool {
    let found = Command::new("redis-cli")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            std::env::var("RETRY_REQUIRE_REDIS").as_deref() != Ok("1"),
            "RETRY_REQUIRE_REDIS=1 but redis-cli is not on PATH (apt-get install redis-tools)"
        );
        eprintln!("note: skipped the harness's cluster smoke test: redis-cli is not on PATH");
    }
    found
}
