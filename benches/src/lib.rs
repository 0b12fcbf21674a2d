//! Shared pieces of the `retry-core` benchmarks: the measured operations, their error type and
//! the configurations every contender is given.
//!
//! The operation is trivial on purpose (an `async fn` returning `Ok(black_box(x))`), so that what
//! a benchmark measures is the retry wrapper's own cost. Every contender (`retry-core`, backon,
//! tokio-retry, tower) is configured alike: at most [`MAX_ATTEMPTS`] attempts, exponential backoff
//! from [`INITIAL_BACKOFF`] capped at [`MAX_BACKOFF`] with random jitter, and a retry on the same
//! error, [`BenchError::Transient`]. The peers are dev-dependencies of this package only; this
//! library depends on `retry-core`, tokio and `cpu-time` (the benchmarks' clock) alone.

#[cfg(feature = "metrics")]
pub mod counting_recorder;

use std::cell::Cell;
use std::hint::black_box;
use std::sync::LazyLock;
use std::time::Duration;

use retry_core::fleet::lease::LeaseHolder;
use retry_core::fleet::protocol::{ProcessId, Settings};
use retry_core::fleet::store_model::step;
use retry_core::fleet::store_state::StoreState;
use retry_core::fleet::{FleetOptions, FleetStatus};
use retry_core::{
    AdaptiveStrategy, Fault, RetryConfig, RetryInfo, RetryMode, RetrySafety, Scope,
    StandardStrategy,
};

/// Attempts per call, the first included, for the success-path benchmarks.
pub const MAX_ATTEMPTS: u32 = 3;

/// Backoff base of the success-path benchmarks (never slept: the first attempt succeeds).
pub const INITIAL_BACKOFF: Duration = Duration::from_millis(100);

/// Backoff cap of every benchmark.
pub const MAX_BACKOFF: Duration = Duration::from_secs(20);

/// Attempts per call allowed by the zero-backoff retry benchmarks.
pub const RETRY_MAX_ATTEMPTS: u32 = 8;

/// The operation's error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BenchError {
    /// A transient failure: every contender retries it.
    Transient,
    /// A permanent failure: no contender retries it.
    Permanent,
}

impl BenchError {
    /// The predicate the peers are given: retry [`BenchError::Transient`] only.
    pub fn is_retryable(&self) -> bool {
        matches!(self, BenchError::Transient)
    }
}

impl std::fmt::Display for BenchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BenchError::Transient => "transient",
            BenchError::Permanent => "permanent",
        })
    }
}

impl std::error::Error for BenchError {}

/// `retry-core` learns the same predicate through [`RetryInfo`].
impl RetryInfo for BenchError {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            BenchError::Transient => RetrySafety::Yes,
            BenchError::Permanent => RetrySafety::No,
        }
    }

    fn fault(&self) -> Fault {
        Fault::Server
    }
}

/// The measured operation: succeeds at once with its argument.
pub async fn op(x: u64) -> Result<u64, BenchError> {
    Ok(black_box(x))
}

/// An operation that fails with [`BenchError::Transient`] until its `succeed_at`-th attempt of the
/// call; `calls` counts the call's attempts (reset it to 0 before each call).
pub async fn flaky(calls: &Cell<u32>, succeed_at: u32, x: u64) -> Result<u64, BenchError> {
    let attempt = calls.get() + 1;
    calls.set(attempt);
    if attempt < succeed_at {
        Err(BenchError::Transient)
    } else {
        Ok(black_box(x))
    }
}

/// A strategy in a static, for `#[retryable(strategy = ...)]`: concrete type, no `dyn`.
pub static STATIC_STRATEGY: LazyLock<StandardStrategy> =
    LazyLock::new(|| standard(success_config()));

/// Defines the benchmarks' `#[retryable]` functions in the crate that invokes it, as a user's
/// own functions are (a non-generic `async fn` is compiled where it is defined, so calls from
/// another crate cannot inline it):
///
/// * `op_retryable(x)`: [`op`] configured like [`success_config`] (the default configuration),
///   in the process-wide scope `bench-retryable`;
/// * `op_retryable_classic(x)`: the same on `preset = "aws-classic"` ([`classic_success_config`]'s
///   settings) in the scope `bench-retryable-classic`: the classic preset's fixed quota is all
///   that differs on the success path;
/// * `op_retryable_static(x)`: [`op`] under `strategy = *STATIC_STRATEGY`;
/// * `flaky_retryable(calls, succeed_at, x)`: [`flaky`] configured like
///   [`zero_backoff_config`] (call [`prepare_retryable_scopes`] first, so that its scope gets
///   the large quota).
///
/// ```text
/// retry_bench::retryable_ops!();
/// ```
#[macro_export]
macro_rules! retryable_ops {
    () => {
        /// `op` under `#[retryable]`, configured like `success_config`.
        #[::retry_core::retryable(
            max_attempts = 3,
            initial_backoff = "100ms",
            max_backoff = "20s",
            scope = "bench-retryable"
        )]
        pub async fn op_retryable(x: u64) -> Result<u64, $crate::BenchError> {
            $crate::op(x).await
        }

        /// `op_retryable` on the classic preset (its fixed quota of 500).
        #[::retry_core::retryable(
            preset = "aws-classic",
            max_attempts = 3,
            initial_backoff = "100ms",
            max_backoff = "20s",
            scope = "bench-retryable-classic"
        )]
        #[allow(dead_code)]
        pub async fn op_retryable_classic(x: u64) -> Result<u64, $crate::BenchError> {
            $crate::op(x).await
        }

        /// `op` under `#[retryable(strategy = *STATIC_STRATEGY)]`.
        #[::retry_core::retryable(strategy = *$crate::STATIC_STRATEGY)]
        #[allow(dead_code)]
        pub async fn op_retryable_static(x: u64) -> Result<u64, $crate::BenchError> {
            $crate::op(x).await
        }

        /// `flaky` under `#[retryable]`, configured like `zero_backoff_config`.
        #[::retry_core::retryable(
            max_attempts = 8,
            initial_backoff = "0ms",
            max_backoff = "20s",
            scope = "bench-retryable-zero"
        )]
        #[allow(dead_code)]
        pub async fn flaky_retryable(
            calls: &::std::cell::Cell<u32>,
            succeed_at: u32,
            x: u64,
        ) -> Result<u64, $crate::BenchError> {
            $crate::flaky(calls, succeed_at, x).await
        }
    };
}

/// [`retryable_ops!`] compiled in this library: calls into them from a benchmark are calls into
/// another crate's `#[retryable]` functions, which cannot inline.
pub mod other_crate {
    crate::retryable_ops!();
}

/// Creates the process-wide scope of [`retryable_ops!`] whose configuration is not the
/// attribute's before its first call (a named scope keeps the configuration it was created
/// with): `flaky_retryable`'s from [`zero_backoff_config`], so that its quota never runs out
/// during a benchmark. Keep the handle until that first call, whose static strategy then holds
/// the scope: a named scope no handle holds is forgotten.
pub fn prepare_retryable_scopes() -> Scope {
    Scope::named("bench-retryable-zero", &zero_backoff_config())
}

/// The success-path configuration: the default configuration with [`MAX_ATTEMPTS`] attempts,
/// [`INITIAL_BACKOFF`] doubling up to [`MAX_BACKOFF`], full jitter.
pub fn success_config() -> RetryConfig {
    config(
        RetryConfig::builder()
            .max_attempts(MAX_ATTEMPTS)
            .initial_backoff(INITIAL_BACKOFF)
            .max_backoff(MAX_BACKOFF),
    )
}

/// [`success_config`]'s settings on the AWS classic preset (`RetryConfig::aws_classic()`): a
/// fixed quota of 500 instead of the default's traffic-sized one.
pub fn classic_success_config() -> RetryConfig {
    config(
        RetryConfig::aws_classic()
            .max_attempts(MAX_ATTEMPTS)
            .initial_backoff(INITIAL_BACKOFF)
            .max_backoff(MAX_BACKOFF),
    )
}

/// The zero-backoff configuration: [`RETRY_MAX_ATTEMPTS`] attempts, no backoff, and a quota so
/// large that it never runs out during a benchmark: the classic preset's fixed quota, made
/// `u32::MAX` tokens (the classic 500 would run out after 100 calls, since each call's retries
/// keep all but one retry's cost; the default's traffic-sized quota drains by design).
pub fn zero_backoff_config() -> RetryConfig {
    config(
        RetryConfig::aws_classic()
            .max_attempts(RETRY_MAX_ATTEMPTS)
            .initial_backoff(Duration::ZERO)
            .throttling_backoff(Duration::ZERO)
            .max_backoff(MAX_BACKOFF)
            .quota_capacity(u32::MAX),
    )
}

/// The zero-backoff retries on the default configuration: [`RETRY_MAX_ATTEMPTS`] attempts, no
/// backoff, and the default's costs (14 a retry). Every call of the benchmark ends in a success,
/// which gives back every retry it paid for, so the traffic-sized quota never refuses one while
/// each retry pays its real price: the quota's sizing (a clock read, the call count once a
/// second), its compare-and-swap, and the refund.
pub fn default_zero_backoff_config() -> RetryConfig {
    config(
        RetryConfig::builder()
            .max_attempts(RETRY_MAX_ATTEMPTS)
            .initial_backoff(Duration::ZERO)
            .throttling_backoff(Duration::ZERO)
            .max_backoff(MAX_BACKOFF),
    )
}

fn config(builder: retry_core::config::RetryConfigBuilder) -> RetryConfig {
    match builder.build() {
        Ok(config) => config,
        Err(error) => panic!("benchmark configuration rejected: {error}"),
    }
}

/// A standard strategy following `config` in a fleet scope of its own whose lease is live, and
/// the holder that keeps the scope attached (dropping it detaches the scope). The scope is
/// attached to a fleet by the process side alone and synced once against the store's model:
/// no Redis, and nothing on the call path could reach one anyway. The lease lasts a day (a
/// sync interval of an hour), so it does not expire during a benchmark.
pub fn fleet_standard(config: RetryConfig) -> (StandardStrategy, LeaseHolder) {
    let scope = Scope::new("bench-fleet", &config);
    let holder = attach_live(&scope, &config);
    (
        StandardStrategy::builder(config).scope(scope).build(),
        holder,
    )
}

/// Attaches `scope`, made from `config`, to a fleet of one process and gives it a live lease
/// (see [`fleet_standard`]).
pub fn attach_live(scope: &Scope, config: &RetryConfig) -> LeaseHolder {
    let mut options = FleetOptions::default();
    options.sync_interval = Duration::from_secs(3_600);
    options.lease_ttl = Some(Duration::from_secs(86_400));
    let settings = Settings::from_config(config, &options)
        .unwrap_or_else(|error| panic!("a fleet's settings: {error}"));
    let mut holder = LeaseHolder::attach(scope, settings, ProcessId(1))
        .unwrap_or_else(|error| panic!("attach: {error}"));
    let now = scope.clock().now();
    let report = holder.report(now, 1_700_000_000_000);
    let reply = step(&mut StoreState::default(), &settings, &report)
        .unwrap_or_else(|error| panic!("the store's step: {error}"));
    holder.apply(&reply, now);
    assert_eq!(holder.status(), FleetStatus::Live, "a live lease");
    holder
}

/// A standard strategy following `config` in a scope of its own.
pub fn standard(config: RetryConfig) -> StandardStrategy {
    let scope = Scope::new("bench", &config);
    StandardStrategy::builder(config).scope(scope).build()
}

/// An adaptive strategy with [`success_config`]'s settings in a private scope named `scope`.
pub fn adaptive(scope: &str) -> AdaptiveStrategy {
    let config = success_config()
        .to_builder()
        .mode(RetryMode::Adaptive)
        .build()
        .unwrap_or_else(|error| panic!("{error}"));
    AdaptiveStrategy::from_builder(
        StandardStrategy::builder(config.clone()).scope(Scope::new(scope, &config)),
    )
}

/// A current-thread tokio runtime with the timer on, as every single-task benchmark uses.
pub fn current_thread_runtime() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the tokio runtime: {error}"),
    }
}

/// A multi-thread tokio runtime with `workers` worker threads and the timer on.
pub fn multi_thread_runtime(workers: usize) -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("cannot build the tokio runtime: {error}"),
    }
}

pub use cpu_time::ThreadTime;

/// Benchmarks one contender: `criterion`'s `iter_custom`, with each batch of `iters` calls run in
/// one `block_on` on `runtime` (as criterion's `to_async` does), so the runtime's entry cost is
/// paid once per batch, not per call. The optional `{ setup; }` statements run inside the batch,
/// before the clock starts (a tower service to call `&mut`, a counter).
///
/// The batch is timed in the benchmark thread's CPU time ([`ThreadTime`]), so that time the
/// thread spends preempted by other processes on a shared machine is not counted; for a
/// single-threaded batch that never blocks this is its wall time. Prefix the arguments with
/// `wall:` to time the wall clock instead (a batch that sleeps on tokio's timer).
///
/// ```text
/// bench_loop!(group, runtime, "plain", i => op(i).await);
/// bench_loop!(wall: group, runtime, "sleeps", i => sleepy(i).await);
/// ```
#[macro_export]
macro_rules! bench_loop {
    (wall: $group:expr, $runtime:expr, $name:expr, $($rest:tt)*) => {
        $crate::bench_loop!(@clock ::std::time::Instant, $group, $runtime, $name, $($rest)*)
    };
    (@clock $clock:path, $group:expr, $runtime:expr, $name:expr, $i:ident => $call:expr) => {
        $crate::bench_loop!(@clock $clock, $group, $runtime, $name, {}, $i => $call)
    };
    (@clock $clock:path, $group:expr, $runtime:expr, $name:expr,
        { $($setup:stmt;)* }, $i:ident => $call:expr) => {
        $group.bench_function($name, |bencher| {
            bencher.iter_custom(|iters| {
                $runtime.block_on(async {
                    $($setup;)*
                    let start = <$clock>::now();
                    for $i in 0..iters {
                        let _ = ::std::hint::black_box($call);
                    }
                    start.elapsed()
                })
            })
        });
    };
    ($group:expr, $runtime:expr, $name:expr, $($rest:tt)*) => {
        $crate::bench_loop!(@clock $crate::ThreadTime, $group, $runtime, $name, $($rest)*)
    };
}

/// Times `iters` runs of `routine` in the thread's CPU time (see [`bench_loop!`]): the body of
/// criterion's `iter_custom` for synchronous benchmarks.
pub fn cpu_time_iters<O>(iters: u64, mut routine: impl FnMut() -> O) -> Duration {
    let start = ThreadTime::now();
    for _ in 0..iters {
        black_box(routine());
    }
    start.elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The zero-backoff fixture behaves as the retry benchmarks assume: `flaky` succeeds at its
    /// attempt, and the call ends with the last error once the attempts run out.
    #[test]
    fn flaky_calls_take_the_attempts_the_benchmarks_assume() {
        let runtime = current_thread_runtime();
        let strategy = standard(zero_backoff_config());
        let calls = Cell::new(0);
        for succeed_at in [1, 3, RETRY_MAX_ATTEMPTS, RETRY_MAX_ATTEMPTS + 1] {
            let expected = if succeed_at <= RETRY_MAX_ATTEMPTS {
                Ok(7)
            } else {
                Err(BenchError::Transient)
            };
            calls.set(0);
            let outcome = runtime.block_on(retry_core::retry(&strategy, || {
                flaky(&calls, succeed_at, 7)
            }));
            assert_eq!(
                (outcome, calls.get()),
                (expected, succeed_at.min(RETRY_MAX_ATTEMPTS))
            );
        }
        let permanent = || async { Err::<u64, _>(BenchError::Permanent) };
        let outcome = runtime.block_on(retry_core::retry(&strategy, permanent));
        assert_eq!(outcome, Err(BenchError::Permanent));
    }
}
