//! Fleet mode against a real `redis-server` of each test's own (127.0.0.1, a free port, no
//! persistence): the store script against its Rust model (the differential test), and the Redis
//! backend's errors and faults. Without `redis-server` on PATH these tests pass after one line
//! saying they were skipped; with `RETRY_REQUIRE_REDIS=1` they fail instead.

#[path = "fleet_redis/attach.rs"]
mod attach;
#[path = "fleet_redis/backend.rs"]
mod backend;
#[path = "fleet_redis/differential.rs"]
mod differential;
#[path = "fleet_redis/faults.rs"]
mod faults;
#[path = "fleet_redis/garbage.rs"]
mod garbage;
#[path = "fleet_redis/leave.rs"]
mod leave;
#[path = "fleet_redis/managed.rs"]
mod managed;
#[path = "fleet_redis/partial_writes.rs"]
mod partial_writes;
#[path = "fleet_redis/scope_faults.rs"]
mod scope_faults;
#[path = "fleet_redis/scopes.rs"]
mod scopes;
#[path = "fleet_redis/start.rs"]
mod start;
#[path = "fleet_redis/start_errors.rs"]
mod start_errors;
#[path = "fleet_redis/tls.rs"]
mod tls;

use std::time::Duration;

use retry_core::fleet::protocol::{Lease, ProcessId, Reply, Report};
use retry_core::fleet::redis::StoreOptions;
use retry_core::fleet::{Fleet, FleetStatus};
use retry_core::{ErrorKind, RetryReason, RetryStrategy, StandardStrategy};
use retry_tests::fleet_process::{self, attached, attached_old, fleet_stats};
use retry_tests::redis_server::{RedisServer, Resp};

/// The tests the skip line names.
const SUITE: &str = "tests/tests/fleet_redis.rs (the store script against its model, the Redis \
                     backend's errors and faults, fleet scopes, over TLS)";

/// The sync interval of the scope-level tests: short, so that a test lasts a few intervals.
const INTERVAL: Duration = Duration::from_millis(100);

/// Their command (and connection) timeout.
const COMMAND_TIMEOUT: Duration = Duration::from_millis(50);

/// The longest a scope-level test waits for a fleet to get where it should (a bound on the
/// test's time, far above the few intervals it takes).
const PATIENCE: Duration = Duration::from_secs(10);

/// A "process": a `Fleet` on `url` with the tests' timing, as process `id`.
async fn process(url: &str, id: u64) -> Fleet {
    fleet_process::start_process(url, id, INTERVAL, COMMAND_TIMEOUT).await
}

/// Waits until `done` holds, at most [`PATIENCE`]; returns how long it took.
async fn wait_until(what: &str, done: impl FnMut() -> bool) -> Duration {
    fleet_process::wait_until(what, PATIENCE, done).await
}

/// Waits until the scope's status is `status`.
async fn wait_for_status(strategy: &StandardStrategy, status: FleetStatus) -> Duration {
    wait_until(&format!("{status:?}"), || {
        fleet_stats(strategy).status == status
    })
    .await
}

/// A call that fails `failures` times with `kind` (each retry granted or not), decided by the
/// strategy alone: whether it succeeded.
fn call(strategy: &StandardStrategy, failures: u32, kind: ErrorKind) -> bool {
    let mut token = strategy.acquire_initial_token();
    for _ in 0..failures {
        match strategy.refresh_retry_token(token, &RetryReason::error(kind)) {
            Ok(next) => token = next,
            Err(_) => return false,
        }
    }
    strategy.record_success(token);
    true
}

/// A server of the test's own with `args`, or `None` when Redis is not installed.
fn server(args: &[&str]) -> Option<RedisServer> {
    RedisServer::start(SUITE, args)
}

/// Makes the ACL users the tests log in as: `app` (password `right`, every command) and
/// `noscript` (password `pw`, every command but scripting's).
fn add_acl_users(server: &RedisServer) {
    let users: [&[&str]; 2] = [
        &["ACL", "SETUSER", "app", "on", ">right", "~*", "&*", "+@all"],
        &[
            "ACL",
            "SETUSER",
            "noscript",
            "on",
            ">pw",
            "~*",
            "&*",
            "+@all",
            "-@scripting",
        ],
    ];
    for user in users {
        assert_eq!(server.command(user), Resp::Status("OK".into()), "{user:?}");
    }
}

/// Short timeouts, so that a fault shows in a fraction of a second.
fn options() -> StoreOptions {
    StoreOptions {
        connect_timeout: Duration::from_millis(500),
        command_timeout: Duration::from_millis(300),
        reconnect_base: Duration::from_millis(10),
        reconnect_max: Duration::from_millis(100),
    }
}

/// The lease of a reply (a conflict fails the test).
fn lease_of(reply: Reply) -> Lease {
    match reply {
        Reply::Lease(lease) => lease,
        Reply::Conflict(stored) => panic!("unexpected conflict with {stored:?}"),
    }
}

/// A process as its sync task runs it: what it holds, the birth and fleet rate it last
/// received, what it gave back, when it last reported (its next report spans from then).
#[derive(Debug, Clone, Copy)]
struct Process {
    id: ProcessId,
    held: u64,
    born: u64,
    known_rate: u64,
    returned: u64,
    reported_ms: Option<u64>,
}

impl Process {
    fn new(id: u64) -> Self {
        Self {
            id: ProcessId(id),
            held: 0,
            born: 0,
            known_rate: 0,
            returned: 0,
            reported_ms: None,
        }
    }

    /// Its report at `now_ms`, the counts given by `fill`.
    fn report(&self, now_ms: u64, fill: impl FnOnce(Report) -> Report) -> Report {
        fill(Report {
            process: self.id,
            now_ms,
            known_born_ms: self.born,
            held: self.held,
            tokens_returned: self.returned,
            known_fleet_rate: self.known_rate,
            span_ms: self
                .reported_ms
                .map_or(0, |reported| now_ms.saturating_sub(reported)),
            ..Report::default()
        })
    }

    /// Applies a reply to `report`, as the sync task would.
    fn apply(&mut self, report: &Report, reply: &Reply) {
        self.reported_ms = Some(report.now_ms);
        let Reply::Lease(lease) = reply else {
            return;
        };
        let after = i64::try_from(report.held).expect("bounded") + lease.grant;
        self.held = u64::try_from(after).expect("never negative");
        self.returned = u64::try_from(-lease.grant.min(0)).expect("non-negative");
        self.born = lease.born_ms;
        self.known_rate = if lease.engaged { lease.fleet_rate } else { 0 };
    }
}

/// A call that fails, is retried once (if the quota pays) and fails again.
fn failed_call(strategy: &StandardStrategy) {
    let token = strategy.acquire_initial_token();
    let reason = RetryReason::error(ErrorKind::Transient);
    if let Ok(token) = strategy.refresh_retry_token(token, &reason) {
        strategy.record_failure(token);
    }
}

/// The value of metric `name` in `scrape`'s rendering, in the series whose labels include
/// every one of `labels` (written as rendered: `scope="forged"`); `None` before it is recorded.
fn scraped(
    scrape: &metrics_exporter_prometheus::PrometheusHandle,
    name: &str,
    labels: &[&str],
) -> Option<f64> {
    let series = format!("{name}{{");
    scrape
        .render()
        .lines()
        .filter(|line| line.starts_with(&series))
        .find(|line| labels.iter().all(|label| line.contains(label)))
        .map(|line| {
            let value = line.rsplit(' ').next().unwrap_or_default();
            value
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("a number in {line}"))
        })
}
