//! Fleet mode against a real `redis-server` of each test's own (127.0.0.1, a free port, no
//! persistence): the store script against its Rust model (the differential test), and the Redis
//! backend's errors and faults. Without `redis-server` on PATH these tests pass after one line
//! saying they were skipped; with `RETRY_REQUIRE_REDIS=1` they fail instead.

#[path = "fleet_redis/backend.rs"]
mod backend;
#[path = "fleet_redis/differential.rs"]
mod differential;
#[path = "fleet_redis/faults.rs"]
mod faults;

use std::time::Duration;

use retry_core::fleet::protocol::{Lease, ProcessId, Reply, Report};
use retry_core::fleet::redis::StoreOptions;
use retry_tests::redis_server::RedisServer;

/// The tests the skip line names.
const SUITE: &str = "tests/tests/fleet_redis.rs (the store script against its model, the Redis \
                     backend's errors and faults)";

/// A server of the test's own with `args`, or `None` when Redis is not installed.
fn server(args: &[&str]) -> Option<RedisServer> {
    RedisServer::start(SUITE, args)
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
/// received, what it gave back.
#[derive(Debug, Clone, Copy)]
struct Process {
    id: ProcessId,
    held: u64,
    born: u64,
    known_rate: u64,
    returned: u64,
}

impl Process {
    fn new(id: u64) -> Self {
        Self {
            id: ProcessId(id),
            held: 0,
            born: 0,
            known_rate: 0,
            returned: 0,
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
            ..Report::default()
        })
    }

    /// Applies a reply to `report`, as the sync task would.
    fn apply(&mut self, report: &Report, reply: &Reply) {
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
