//! A test's fleet-mode "process" (a `Fleet` with the test's timing) and its scopes, the same on
//! one `redis-server` (`tests/tests/fleet_redis.rs`) and on a Redis Cluster
//! (`tests/tests/fleet_redis_cluster.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use retry_core::clock::{Clock, TokioClock};
use retry_core::fleet::protocol::ProcessId;
use retry_core::fleet::{Fleet, FleetStats};
use retry_core::{RetryConfig, Scope, StandardStrategy};

/// A `Fleet` on `url` syncing every `interval`, each command given `command_timeout`, as
/// process `id`; started.
pub async fn start_process(
    url: &str,
    id: u64,
    interval: Duration,
    command_timeout: Duration,
) -> Fleet {
    Fleet::connect(url)
        .expect("a Redis or Redis Cluster URL")
        .sync_interval(interval)
        .command_timeout(command_timeout)
        .process_id(ProcessId(id))
        .start()
        .await
        .expect("starts")
}

/// A private scope of `fleet` called `name` on `config`, and a strategy on it.
pub fn attached(fleet: &Fleet, name: &str, config: &RetryConfig) -> StandardStrategy {
    let scope = Scope::new(name, config);
    fleet.attach_scope(&scope).expect("attaches");
    StandardStrategy::builder(config.clone())
        .scope(scope)
        .build()
}

/// [`attached`], on a scope older than its `quota_window` from the start: its clock reads
/// tokio's a window and a second ahead of the scope's birth, so that its leases run on real
/// time while its local rules are those of a scope that saw a window of (no) traffic. Under a
/// lease it keeps what local mode would let it spend, one call's retries (28 tokens by
/// default) rather than a young scope's 500: the fleet's tokens are shared between such
/// processes as the store leases them.
pub fn attached_old(fleet: &Fleet, name: &str, config: &RetryConfig) -> StandardStrategy {
    let clock = Arc::new(AheadClock::default());
    let scope = Scope::with_clock(name, config, clock.clone());
    let window = config.quota_window().unwrap_or_default();
    clock.move_ahead(window + Duration::from_secs(1));
    fleet.attach_scope(&scope).expect("attaches");
    StandardStrategy::builder(config.clone())
        .scope(scope)
        .build()
}

/// tokio's clock, moved ahead by a settable amount (see [`attached_old`]).
#[derive(Debug, Default)]
pub struct AheadClock {
    tokio: TokioClock,
    ahead_ns: AtomicU64,
}

impl AheadClock {
    /// Moves the clock `by` further ahead of tokio's.
    pub fn move_ahead(&self, by: Duration) {
        let by = u64::try_from(by.as_nanos()).unwrap_or(u64::MAX);
        self.ahead_ns.fetch_add(by, Ordering::Relaxed);
    }
}

impl Clock for AheadClock {
    fn now(&self) -> Duration {
        self.tokio.now() + Duration::from_nanos(self.ahead_ns.load(Ordering::Relaxed))
    }
}

/// The scope's fleet figures (it is attached).
pub fn fleet_stats(strategy: &StandardStrategy) -> FleetStats {
    strategy.scope().stats().fleet.expect("attached")
}

/// Waits (sleeping on tokio, so that the sync tasks run) until `done` holds; panics naming
/// `what` after `patience`. Returns how long it took.
pub async fn wait_until(
    what: &str,
    patience: Duration,
    mut done: impl FnMut() -> bool,
) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < patience, "not {what} within {patience:?}");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    start.elapsed()
}
