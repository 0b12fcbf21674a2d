//! The `metrics` feature's cost on the success path: the same rows built with the feature off
//! and with it on, before a recorder is installed (its handles are no-ops) and after (a real one:
//! metrics-exporter-prometheus's recorder, its upkeep run each second on another thread, as its
//! exporter would). The feature is chosen when the benchmark is built, so one comparison is two
//! builds run back to back, their rows side by side in `target/criterion/metrics_success_path`:
//!
//! ```text
//! cargo bench -p retry-bench --bench metrics && cargo bench -p retry-bench --bench metrics --features metrics
//! ```
//!
//! Rows: `<contender>/feature_off`, `<contender>/no_recorder`, `<contender>/recorder`, for
//! `retry_core_retry` (`retry_core::retry`), `retryable` (a `#[retryable]` fn) and `retry_layer`
//! (a service under `RetryLayer`); `plain/<build>` is the bare operation, the same in both builds
//! (a difference there is the machine's, not the feature's).

use std::time::Duration;

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use retry_bench::{BenchError, bench_loop, current_thread_runtime, op, standard, success_config};
use retry_core::retry;
use retry_core::tower::RetryLayer;
use tower::{Layer, Service, ServiceExt};

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
}

/// Calls a tower service once it is ready.
async fn call_tower<S: Service<u64>>(
    service: &mut S,
    request: u64,
) -> Result<S::Response, S::Error> {
    service.ready().await?.call(request).await
}

/// `op` under `RetryLayer`, in a scope made now.
fn retry_layer_service() -> impl Service<u64, Response = u64, Error = BenchError> + Clone {
    RetryLayer::new(standard(success_config())).layer(tower::service_fn(op))
}

/// `op` under `#[retryable]` in the scope `bench-metrics-unrecorded`: called first before any
/// recorder is installed, its handles stay no-ops.
#[retry_core::retryable(
    max_attempts = 3,
    initial_backoff = "100ms",
    scope = "bench-metrics-unrecorded"
)]
async fn op_unrecorded(x: u64) -> Result<u64, BenchError> {
    op(x).await
}

/// `op` under `#[retryable]` in the scope `bench-metrics-recorded`, called first once the
/// recorder is installed.
#[cfg(feature = "metrics")]
#[retry_core::retryable(
    max_attempts = 3,
    initial_backoff = "100ms",
    scope = "bench-metrics-recorded"
)]
async fn op_recorded(x: u64) -> Result<u64, BenchError> {
    op(x).await
}

/// The build's name in the rows: `feature_off` or `no_recorder` (the feature on, no recorder yet).
const UNRECORDED: &str = if cfg!(feature = "metrics") {
    "no_recorder"
} else {
    "feature_off"
};

fn metrics_success_path(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let strategy = standard(success_config());
    let retry_layer = retry_layer_service();
    let mut group = c.benchmark_group("metrics_success_path");
    configure(&mut group);
    let build = if cfg!(feature = "metrics") {
        "feature_on"
    } else {
        "feature_off"
    };
    bench_loop!(group, runtime, format!("plain/{build}"), i => op(i).await);
    bench_loop!(group, runtime, format!("retry_core_retry/{UNRECORDED}"), i => retry(&strategy, || op(i)).await);
    bench_loop!(group, runtime, format!("retryable/{UNRECORDED}"), i => op_unrecorded(i).await);
    bench_loop!(group, runtime, format!("retry_layer/{UNRECORDED}"), { let mut service = retry_layer.clone(); }, i => call_tower(&mut service, i).await);
    #[cfg(feature = "metrics")]
    {
        install_prometheus_recorder();
        // Scopes made now register their handles with the recorder.
        let strategy = standard(success_config());
        let retry_layer = retry_layer_service();
        bench_loop!(group, runtime, "retry_core_retry/recorder", i => retry(&strategy, || op(i)).await);
        bench_loop!(group, runtime, "retryable/recorder", i => op_recorded(i).await);
        bench_loop!(group, runtime, "retry_layer/recorder", { let mut service = retry_layer.clone(); }, i => call_tower(&mut service, i).await);
    }
    group.finish();
}

/// Installs metrics-exporter-prometheus's recorder, its upkeep (which drains the histograms'
/// samples into their summaries) run each second on a thread of its own.
#[cfg(feature = "metrics")]
fn install_prometheus_recorder() {
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    metrics::set_global_recorder(recorder).expect("the first recorder");
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_secs(1));
            handle.run_upkeep();
        }
    });
}

criterion_group!(benches, metrics_success_path);
criterion_main!(benches);
