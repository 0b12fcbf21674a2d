//! The cost of the retry wrapper itself, side by side in one run: a plain call, `retry-core`
//! (`retry_core::retry`, `#[retryable]` and its tower `RetryLayer`) and the peers backon,
//! tokio-retry and tower's `Retry`.
//!
//! * `success_path`: one call whose first attempt succeeds (the common case), `retry-core` on
//!   its default configuration and, in the `_classic` rows, on the AWS classic preset;
//!   `success_path_in_fn`: the same with every contender in an `async fn` of its own.
//! * `zero_backoff_retry/<attempts>`: one call that fails `attempts - 1` times and then succeeds,
//!   every backoff set to zero, so the cost of a retry is the slope over `attempts`
//!   (`retry_core_retry_default`: on the default configuration, whose quota is sized by the
//!   traffic at each call's first retry, with its real costs).
//!
//! Every contender gets the same policy: at most 3 attempts (8 in the retry group), exponential
//! backoff with jitter, a retry on `BenchError::Transient` only. Each batch of calls runs in one
//! `block_on` on a current-thread runtime. Compare ratios within one group of one run.

use std::cell::Cell;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use retry_bench::{
    BenchError, INITIAL_BACKOFF, MAX_ATTEMPTS, MAX_BACKOFF, RETRY_MAX_ATTEMPTS, adaptive,
    bench_loop, classic_success_config, cpu_time_iters, current_thread_runtime,
    default_zero_backoff_config, flaky, op, prepare_retryable_scopes, standard, success_config,
    zero_backoff_config,
};
use retry_core::clock::{Clock, TokioClock};
use retry_core::tower::RetryLayer;
use retry_core::{RetryStrategy, StandardStrategy, retry};
use std::sync::atomic::{AtomicU64, Ordering};
use tokio_retry::RetryIf;
use tower::retry::Policy;
use tower::retry::backoff::{Backoff, ExponentialBackoff, ExponentialBackoffMaker, MakeBackoff};
use tower::retry::budget::{Budget, TpsBudget};
use tower::util::rng::HasherRng;
use tower::{Layer, Service, ServiceExt};

retry_bench::retryable_ops!();

/// backon: `max_times` counts retries, so attempts - 1.
fn backon_builder(initial: Duration, attempts: u32) -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(initial)
        .with_max_delay(MAX_BACKOFF)
        .with_max_times(attempts as usize - 1)
        .with_jitter()
}

/// tokio-retry: `from_millis(2).factor(50)` is 100 ms, 200 ms, 400 ms, ...; `from_millis(0)` is
/// zero every time. `jitter` is full jitter, like `retry-core`'s default.
fn tokio_retry_strategy(initial: Duration, attempts: u32) -> impl Iterator<Item = Duration> {
    let backoff = if initial.is_zero() {
        tokio_retry::strategy::ExponentialBackoff::from_millis(0)
    } else {
        tokio_retry::strategy::ExponentialBackoff::from_millis(2)
            .factor(initial.as_millis() as u64 / 2)
    };
    backoff
        .max_delay(MAX_BACKOFF)
        .map(tokio_retry::strategy::jitter)
        .take(attempts as usize - 1)
}

/// tower: a policy with a retry count and a backoff (tower's exponential backoff with jitter, or
/// [`Immediate`]), optionally with tower's retry budget (the counterpart of `retry-core`'s quota).
#[derive(Clone)]
struct TowerPolicy<B> {
    retries_left: u32,
    backoff: B,
    budget: Option<Arc<TpsBudget>>,
}

/// tower's exponential backoff from `initial` (zero allowed) to [`MAX_BACKOFF`], jitter 1.0.
fn tower_backoff(initial: Duration) -> ExponentialBackoff {
    let maker = ExponentialBackoffMaker::new(initial, MAX_BACKOFF, 1.0, HasherRng::default());
    let Ok(mut maker) = maker else {
        panic!("invalid tower backoff");
    };
    maker.make_backoff()
}

/// A backoff that does not sleep at all, not even tokio's `sleep(ZERO)`.
#[derive(Clone)]
struct Immediate;

impl Backoff for Immediate {
    type Future = std::future::Ready<()>;

    fn next_backoff(&mut self) -> Self::Future {
        std::future::ready(())
    }
}

impl<B> TowerPolicy<B> {
    fn new(backoff: B, attempts: u32, budget: Option<Arc<TpsBudget>>) -> Self {
        Self {
            retries_left: attempts - 1,
            backoff,
            budget,
        }
    }
}

impl<B: Backoff> Policy<u64, u64, BenchError> for TowerPolicy<B> {
    type Future = B::Future;

    fn retry(
        &mut self,
        _request: &mut u64,
        result: &mut Result<u64, BenchError>,
    ) -> Option<Self::Future> {
        match result {
            Ok(_) => {
                if let Some(budget) = &self.budget {
                    budget.deposit();
                }
                None
            }
            Err(error) if error.is_retryable() && self.retries_left > 0 => {
                if let Some(budget) = &self.budget
                    && !budget.withdraw()
                {
                    return None;
                }
                self.retries_left -= 1;
                Some(self.backoff.next_backoff())
            }
            Err(_) => None,
        }
    }

    fn clone_request(&mut self, request: &u64) -> Option<u64> {
        Some(*request)
    }
}

/// tower's `Retry` over the measured operation, configured like the other success-path
/// contenders (no retry budget).
fn tower_success_service() -> impl Service<u64, Response = u64, Error = BenchError> + Clone {
    tower::retry::Retry::new(
        TowerPolicy::new(tower_backoff(INITIAL_BACKOFF), MAX_ATTEMPTS, None),
        tower::service_fn(op),
    )
}

/// `retry-core`'s `RetryLayer` over the measured operation, with the success-path strategy (a
/// scope of its own, `RetryInfo` classification, requests copied with `Clone`).
fn retry_layer_service() -> impl Service<u64, Response = u64, Error = BenchError> + Clone {
    RetryLayer::new(standard(success_config())).layer(tower::service_fn(op))
}

/// Calls a tower service once it is ready.
async fn call_tower<S: Service<u64>>(
    service: &mut S,
    request: u64,
) -> Result<S::Response, S::Error> {
    service.ready().await?.call(request).await
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));
}

/// `op_retryable` again, private and called from one place only (the `success_path` group):
/// LLVM inlines a function with a single caller whatever its size, so this is the figure of a
/// `#[retryable]` fn called from one place; `op_retryable` is called from three groups.
#[retry_core::retryable(
    max_attempts = 3,
    initial_backoff = "100ms",
    max_backoff = "20s",
    scope = "bench-retryable"
)]
async fn op_retryable_one_caller(x: u64) -> Result<u64, BenchError> {
    op(x).await
}

fn success_path(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let strategy = standard(success_config());
    let classic = standard(classic_success_config());
    let backon = backon_builder(INITIAL_BACKOFF, MAX_ATTEMPTS);
    let tower = tower_success_service();
    let retry_layer = retry_layer_service();
    let _zero_backoff_scope = prepare_retryable_scopes();

    let mut group = c.benchmark_group("success_path");
    configure(&mut group);
    bench_loop!(group, runtime, "plain", i => op(i).await);
    bench_loop!(group, runtime, "retryable", i => op_retryable(i).await);
    bench_loop!(group, runtime, "retryable_classic", i => op_retryable_classic(i).await);
    bench_loop!(group, runtime, "retryable_one_caller", i => op_retryable_one_caller(i).await);
    bench_loop!(group, runtime, "retry_core_retry", i => retry(&strategy, || op(i)).await);
    bench_loop!(group, runtime, "retry_core_retry_classic", i => retry(&classic, || op(i)).await);
    bench_loop!(group, runtime, "backon", i => (|| op(i))
        .retry(backon)
        .when(BenchError::is_retryable)
        .await);
    bench_loop!(group, runtime, "tokio_retry", i => RetryIf::start(
        tokio_retry_strategy(INITIAL_BACKOFF, MAX_ATTEMPTS),
        || op(i),
        BenchError::is_retryable,
    )
    .await);
    bench_loop!(group, runtime, "tower", { let mut service = tower.clone(); }, i => call_tower(&mut service, i).await);
    bench_loop!(group, runtime, "retry_layer", { let mut service = retry_layer.clone(); }, i => call_tower(&mut service, i).await);
    group.finish();
}

/// The contenders as a user writes them in a client: each in an `async fn` of its own, called
/// from the benchmark loop (`#[retryable]` is one by construction). Whether the compiler inlines
/// such a function into its caller depends on its size; this group puts every contender under
/// the same rule.
fn success_path_in_fn(c: &mut Criterion) {
    async fn with_retry_core(strategy: &StandardStrategy, i: u64) -> Result<u64, BenchError> {
        retry(strategy, || op(i)).await
    }
    async fn with_backon(backon: ExponentialBuilder, i: u64) -> Result<u64, BenchError> {
        (|| op(i))
            .retry(backon)
            .when(BenchError::is_retryable)
            .await
    }
    async fn with_tokio_retry(i: u64) -> Result<u64, BenchError> {
        RetryIf::start(
            tokio_retry_strategy(INITIAL_BACKOFF, MAX_ATTEMPTS),
            || op(i),
            BenchError::is_retryable,
        )
        .await
    }
    async fn with_tower<S: Service<u64, Response = u64, Error = BenchError>>(
        service: &mut S,
        i: u64,
    ) -> Result<u64, BenchError> {
        call_tower(service, i).await
    }

    let runtime = current_thread_runtime();
    let strategy = standard(success_config());
    let backon = backon_builder(INITIAL_BACKOFF, MAX_ATTEMPTS);
    let tower = tower_success_service();
    let retry_layer = retry_layer_service();

    // One call site per contender's fn: a second one (say the classic preset's) would keep the
    // compiler from inlining it, and measure that instead.
    let mut group = c.benchmark_group("success_path_in_fn");
    configure(&mut group);
    bench_loop!(group, runtime, "plain", i => op(i).await);
    bench_loop!(group, runtime, "retryable", i => op_retryable(i).await);
    bench_loop!(group, runtime, "retry_core_retry", i => with_retry_core(&strategy, i).await);
    bench_loop!(group, runtime, "backon", i => with_backon(backon, i).await);
    bench_loop!(group, runtime, "tokio_retry", i => with_tokio_retry(i).await);
    bench_loop!(group, runtime, "tower", { let mut service = tower.clone(); }, i => with_tower(&mut service, i).await);
    bench_loop!(group, runtime, "retry_layer", { let mut service = retry_layer.clone(); }, i => with_tower(&mut service, i).await);
    group.finish();
}

/// Variants of the success path that are not peers: other strategies, tower with its retry
/// budget, and a strategy behind `Box<dyn RetryStrategy>` (what `#[retryable(strategy = ...)]`
/// holds).
fn success_path_variants(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let strategy = standard(success_config());
    let classic = standard(classic_success_config());
    let dyn_strategy: Box<dyn RetryStrategy> = Box::new(standard(success_config()));
    let _zero_backoff_scope = prepare_retryable_scopes();
    let adaptive = adaptive("bench-adaptive");
    let tower_budget = tower::retry::Retry::new(
        TowerPolicy::new(
            tower_backoff(INITIAL_BACKOFF),
            MAX_ATTEMPTS,
            Some(Arc::new(TpsBudget::default())),
        ),
        tower::service_fn(op),
    );
    let retry_layer = retry_layer_service();
    let retry_layer_adaptive =
        RetryLayer::new(retry_bench::adaptive("bench-layer-adaptive")).layer(tower::service_fn(op));

    let mut group = c.benchmark_group("success_path_variants");
    configure(&mut group);
    bench_loop!(group, runtime, "plain", i => op(i).await);
    bench_loop!(group, runtime, "retry_core_retry", i => retry(&strategy, || op(i)).await);
    bench_loop!(group, runtime, "retry_core_retry_classic", i => retry(&classic, || op(i)).await);
    bench_loop!(group, runtime, "retry_core_retry_dyn", i => retry(&dyn_strategy, || op(i)).await);
    bench_loop!(group, runtime, "retryable", i => op_retryable(i).await);
    bench_loop!(group, runtime, "retryable_classic", i => op_retryable_classic(i).await);
    bench_loop!(group, runtime, "retryable_static_strategy", i => op_retryable_static(i).await);
    bench_loop!(group, runtime, "retryable_other_crate", i => retry_bench::other_crate::op_retryable(i).await);
    bench_loop!(group, runtime, "retry_core_retry_adaptive", i => retry(&adaptive, || op(i)).await);
    bench_loop!(group, runtime, "tower_budget", { let mut service = tower_budget.clone(); }, i => call_tower(&mut service, i).await);
    bench_loop!(group, runtime, "retry_layer", { let mut service = retry_layer.clone(); }, i => call_tower(&mut service, i).await);
    bench_loop!(group, runtime, "retry_layer_adaptive", { let mut service = retry_layer_adaptive.clone(); }, i => call_tower(&mut service, i).await);
    group.finish();

    // What the primitives on the success path cost alone.
    let mut group = c.benchmark_group("primitives");
    configure(&mut group);
    let clock = TokioClock::new();
    group.bench_function("tokio_clock_now", |b| {
        b.iter_custom(|iters| cpu_time_iters(iters, || clock.now()))
    });
    let counter = AtomicU64::new(0);
    group.bench_function("atomic_fetch_add", |b| {
        b.iter_custom(|iters| cpu_time_iters(iters, || counter.fetch_add(1, Ordering::Relaxed)))
    });
    group.bench_function("atomic_fetch_update", |b| {
        b.iter_custom(|iters| {
            cpu_time_iters(iters, || {
                counter.fetch_update(Ordering::AcqRel, Ordering::Acquire, |level| {
                    Some(level.saturating_add(1).min(u64::MAX / 2))
                })
            })
        })
    });
    group.finish();
}

fn zero_backoff_retry(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let strategy = standard(zero_backoff_config());
    let default = standard(default_zero_backoff_config());
    let backon = backon_builder(Duration::ZERO, RETRY_MAX_ATTEMPTS);
    let _zero_backoff_scope = prepare_retryable_scopes();

    let mut group = c.benchmark_group("zero_backoff_retry");
    configure(&mut group);
    for attempts in [1, 4, 8] {
        let name = |contender: &str| format!("{contender}/{attempts}");
        bench_loop!(group, runtime, name("plain_loop"), { let calls = Cell::new(0); }, i => {
            // The hand-written loop a retry wrapper replaces: the floor for `attempts` attempts.
            calls.set(0);
            loop {
                match flaky(&calls, attempts, i).await {
                    Err(error) if error.is_retryable() && calls.get() < RETRY_MAX_ATTEMPTS => {}
                    outcome => break outcome,
                }
            }
        });
        bench_loop!(group, runtime, name("retry_core_retry"), { let calls = Cell::new(0); }, i => {
            calls.set(0);
            retry(&strategy, || flaky(&calls, attempts, i)).await
        });
        bench_loop!(group, runtime, name("retry_core_retry_default"), { let calls = Cell::new(0); }, i => {
            calls.set(0);
            retry(&default, || flaky(&calls, attempts, i)).await
        });
        bench_loop!(group, runtime, name("retryable"), { let calls = Cell::new(0); }, i => {
            calls.set(0);
            flaky_retryable(&calls, attempts, i).await
        });
        // The peers sleep even a zero delay on tokio's timer (about 1 ms, see
        // `zero_backoff_retry_tokio_sleep`); here they are given a sleeper that does not.
        bench_loop!(group, runtime, name("backon_no_sleep"), { let calls = Cell::new(0); }, i => {
            calls.set(0);
            (|| flaky(&calls, attempts, i))
                .retry(backon)
                .sleep(|_| std::future::ready(()))
                .when(BenchError::is_retryable)
                .await
        });
        bench_loop!(group, runtime, name("retry_layer"), {
            let calls = Cell::new(0);
            let mut service = RetryLayer::new(strategy.clone())
                .layer(tower::service_fn(|x| flaky(&calls, attempts, x)));
        }, i => {
            calls.set(0);
            call_tower(&mut service, i).await
        });
        bench_loop!(group, runtime, name("tower_no_sleep"), {
            let calls = Cell::new(0);
            let mut service = tower::retry::Retry::new(
                TowerPolicy::new(Immediate, RETRY_MAX_ATTEMPTS, None),
                tower::service_fn(|x| flaky(&calls, attempts, x)),
            );
        }, i => {
            calls.set(0);
            call_tower(&mut service, i).await
        });
    }
    group.finish();
    black_box(strategy.scope().stats());
}

/// The peers as configured, with a zero delay: each retry still sleeps on tokio's timer, whose
/// resolution is 1 ms. One retry per call (2 attempts).
fn zero_backoff_retry_tokio_sleep(c: &mut Criterion) {
    let runtime = current_thread_runtime();
    let strategy = standard(zero_backoff_config());
    let backon = backon_builder(Duration::ZERO, RETRY_MAX_ATTEMPTS);
    let attempts = 2;

    let mut group = c.benchmark_group("zero_backoff_retry_tokio_sleep");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(1));
    bench_loop!(wall: group, runtime, "retry_core_retry/2", { let calls = Cell::new(0); }, i => {
        calls.set(0);
        retry(&strategy, || flaky(&calls, attempts, i)).await
    });
    bench_loop!(wall: group, runtime, "backon/2", { let calls = Cell::new(0); }, i => {
        calls.set(0);
        (|| flaky(&calls, attempts, i))
            .retry(backon)
            .when(BenchError::is_retryable)
            .await
    });
    bench_loop!(wall: group, runtime, "tokio_retry/2", { let calls = Cell::new(0); }, i => {
        calls.set(0);
        RetryIf::start(
            tokio_retry_strategy(Duration::ZERO, RETRY_MAX_ATTEMPTS),
            || flaky(&calls, attempts, i),
            BenchError::is_retryable,
        )
        .await
    });
    bench_loop!(wall: group, runtime, "tower/2", {
        let calls = Cell::new(0);
        let mut service = tower::retry::Retry::new(
            TowerPolicy::new(tower_backoff(Duration::ZERO), RETRY_MAX_ATTEMPTS, None),
            tower::service_fn(|x| flaky(&calls, attempts, x)),
        );
    }, i => {
        calls.set(0);
        call_tower(&mut service, i).await
    });
    group.finish();
}

criterion_group!(
    benches,
    success_path,
    success_path_in_fn,
    success_path_variants,
    zero_backoff_retry,
    zero_backoff_retry_tokio_sleep
);
criterion_main!(benches);
