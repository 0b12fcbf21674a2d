//! What fleet mode costs a call: the same call on a fleet scope whose lease is live and on a
//! local scope, side by side in one run.
//!
//! * `fleet_scope`: one call whose first attempt succeeds (the success path, which never reads
//!   the scope's fleet link), through `retry_core::retry` in standard and adaptive mode and
//!   through `#[retryable]`;
//! * `fleet_scope_retry`: one call that fails twice and succeeds, zero backoff, on the default
//!   quota (the retry path, which reads the fleet link and, at the first retry, the clock for
//!   the lease's expiry).
//!
//! The fleet scopes are attached by the process side alone and synced once against the store's
//! model: no Redis is involved (nothing on a call's path can reach it). Compare ratios within a
//! group of one run.

use std::cell::Cell;
use std::time::Duration;

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use retry_bench::{
    BenchError, attach_live, bench_loop, current_thread_runtime, default_zero_backoff_config,
    flaky, fleet_standard, op, standard, success_config,
};
use retry_core::{AdaptiveStrategy, RetryConfig, RetryMode, Scope, StandardStrategy, retry};

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
}

/// `op` under `#[retryable]` in a local scope.
#[retry_core::retryable(
    max_attempts = 3,
    initial_backoff = "100ms",
    max_backoff = "20s",
    scope = "bench-fleet-local"
)]
async fn op_retryable_local(x: u64) -> Result<u64, BenchError> {
    op(x).await
}

/// `op` under `#[retryable]` in a scope attached to a fleet (see `main`'s setup).
#[retry_core::retryable(
    max_attempts = 3,
    initial_backoff = "100ms",
    max_backoff = "20s",
    scope = "bench-fleet-attached"
)]
async fn op_retryable_fleet(x: u64) -> Result<u64, BenchError> {
    op(x).await
}

/// Adaptive mode's configuration with the success path's settings.
fn adaptive_config() -> RetryConfig {
    success_config()
        .to_builder()
        .mode(RetryMode::Adaptive)
        .build()
        .unwrap_or_else(|error| panic!("{error}"))
}

fn adaptive_on(scope: Scope) -> AdaptiveStrategy {
    AdaptiveStrategy::from_builder(StandardStrategy::builder(adaptive_config()).scope(scope))
}

fn fleet_scope(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let local = standard(success_config());
    let (fleet, _holder) = fleet_standard(success_config());
    let local_adaptive = adaptive_on(Scope::new("bench-local-adaptive", &adaptive_config()));
    let attached = Scope::new("bench-fleet-adaptive", &adaptive_config());
    let _adaptive_holder = attach_live(&attached, &adaptive_config());
    let fleet_adaptive = adaptive_on(attached);
    // The attribute's scope, made from its configuration and attached before its first call.
    let named = Scope::named("bench-fleet-attached", &success_config());
    let _named_holder = attach_live(&named, &success_config());

    let mut group = c.benchmark_group("fleet_scope");
    configure(&mut group);
    bench_loop!(group, runtime, "plain", i => op(i).await);
    bench_loop!(group, runtime, "retry_local", i => retry(&local, || op(i)).await);
    bench_loop!(group, runtime, "retry_fleet", i => retry(&fleet, || op(i)).await);
    bench_loop!(group, runtime, "retry_adaptive_local", i => retry(&local_adaptive, || op(i)).await);
    bench_loop!(group, runtime, "retry_adaptive_fleet", i => retry(&fleet_adaptive, || op(i)).await);
    bench_loop!(group, runtime, "retryable_local", i => op_retryable_local(i).await);
    bench_loop!(group, runtime, "retryable_fleet", i => op_retryable_fleet(i).await);
    group.finish();
}

fn fleet_scope_retry(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let local = standard(default_zero_backoff_config());
    let (fleet, _holder) = fleet_standard(default_zero_backoff_config());

    let mut group = c.benchmark_group("fleet_scope_retry");
    configure(&mut group);
    bench_loop!(group, runtime, "two_retries_local", { let calls = Cell::new(0); }, i => {
        calls.set(0);
        retry(&local, || flaky(&calls, 3, i)).await
    });
    bench_loop!(group, runtime, "two_retries_fleet", { let calls = Cell::new(0); }, i => {
        calls.set(0);
        retry(&fleet, || flaky(&calls, 3, i)).await
    });
    group.finish();
}

criterion_group!(benches, fleet_scope, fleet_scope_retry);
criterion_main!(benches);
