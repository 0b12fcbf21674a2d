//! A test's fleet-mode "process" (a `Fleet` with the test's timing) and its scopes, the same on
//! one `redis-server` (`tests/tests/fleet_redis.rs`) and on a Redis Cluster
//! (`tests/tests/fleet_redis_cluster.rs`).

use std::time::{Duration, Instant};

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
