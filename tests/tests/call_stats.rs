//! `CallStats` counts every wait of a call, on `Ok` and on `Err`: the backoff, a server's
//! `Retry-After`, adaptive mode's waits for a send permit (a retry's and a first attempt's) and a
//! long-polling call's wait before it returns its error. Each driver that hands stats back is
//! held to it: `Retry::run_with_stats`, `RetryLoop::stats`, `attempt::capture` around a
//! `#[retryable]` call and around `RetryLayer`, and `attempt::capture_blocking` around
//! `retry_blocking` and a blocking `#[retryable]` fn.
//!
//! The attempts take no time, so a call's wall time is its waits: in virtual time (tokio's paused
//! clock, or a `ManualClock` that a blocking call's sleeper moves), `waited()` must equal the
//! time the call took, and the time each scenario's numbers give.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use retry_core::attempt::{self, CallStats};
use retry_core::backoff::FixedRandom;
use retry_core::classify::RetryInfoClassifier;
use retry_core::clock::{Clock, ManualClock, SharedClock};
use retry_core::driver::{NoHook, RetryLoop, with_sleeper};
use retry_core::strategy::{ConfiguredStrategy, StrategyBuilder};
use retry_core::tower::RetryLayer;
use retry_core::{
    AdaptiveStrategy, Quota, Retry, RetryConfig, RetryInfo, RetrySafety, StandardStrategy,
    retry_blocking, retryable,
};
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

/// What an attempt fails with.
#[derive(Debug, Clone, Copy, PartialEq)]
enum CallError {
    /// Retried after the backoff.
    Transient,
    /// Retried after the server's `Retry-After`, when it is longer than the backoff.
    RetryAfter(Duration),
    /// Retried after the throttling backoff; engages adaptive mode's limiter.
    Throttled,
    /// Never retried.
    Fatal,
}

impl RetryInfo for CallError {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            CallError::Fatal => RetrySafety::No,
            _ => RetrySafety::Yes,
        }
    }
    fn is_throttling(&self) -> bool {
        matches!(self, CallError::Throttled)
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            CallError::RetryAfter(after) => Some(*after),
            _ => None,
        }
    }
}

/// The outcomes of a call's attempts, in turn (the last one repeated).
#[derive(Debug)]
struct Script {
    outcomes: Vec<Result<u32, CallError>>,
    next: AtomicUsize,
}

impl Script {
    fn new(outcomes: &[Result<u32, CallError>]) -> Self {
        Script {
            outcomes: outcomes.to_vec(),
            next: AtomicUsize::new(0),
        }
    }

    /// The next attempt's outcome.
    fn attempt(&self) -> Result<u32, CallError> {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        self.outcomes[index.min(self.outcomes.len() - 1)]
    }
}

/// How the scenario's strategy is configured.
#[derive(Debug, Clone, Copy)]
enum Setup {
    /// Standard mode, 3 attempts.
    Standard,
    /// Adaptive mode, 3 attempts.
    Adaptive,
    /// Adaptive mode, its limiter engaged by a throttled call made before the one measured.
    AdaptiveEngaged,
    /// Standard mode, long polling, a quota of one token: every retry refused.
    LongPolling,
}

/// One call to measure: its strategy, its attempts' outcomes, and the wait they give.
#[derive(Debug, Clone, Copy)]
struct Scenario {
    name: &'static str,
    setup: Setup,
    outcomes: &'static [Result<u32, CallError>],
    ok: bool,
    /// The call's waits, summed; `None` where only "some" is known (a first attempt's permit
    /// wait after an earlier call).
    waited: Option<Duration>,
}

const fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// The resolution of tokio's timer: a sleep ends at the next whole millisecond.
const TIMER_GRAIN: Duration = ms(1);

/// The most waits a scenario's call makes (two backoffs and a permit wait, say).
const MAX_WAITS: u32 = 3;

/// Every kind of wait, on `Ok` and on `Err` (a long-polling wait ends in an error only). The
/// backoffs are drawn at the top of their range (jitter 1.0): 50 ms, then 100 ms; a throttle's
/// 1 s. The throttle engages the limiter, empty, at 0.5 sends a second: the retry's permit comes
/// 2 s after it, 1 s after its backoff.
const SCENARIOS: [Scenario; 8] = [
    Scenario {
        name: "backoff, then Ok",
        setup: Setup::Standard,
        outcomes: &[Err(CallError::Transient), Ok(1)],
        ok: true,
        waited: Some(ms(50)),
    },
    Scenario {
        name: "backoffs, then Err",
        setup: Setup::Standard,
        outcomes: &[Err(CallError::Transient)],
        ok: false,
        waited: Some(ms(50 + 100)),
    },
    Scenario {
        name: "Retry-After, then Ok",
        setup: Setup::Standard,
        outcomes: &[Err(CallError::RetryAfter(ms(300))), Ok(1)],
        ok: true,
        waited: Some(ms(300)),
    },
    Scenario {
        name: "Retry-After, then Err",
        setup: Setup::Standard,
        outcomes: &[Err(CallError::RetryAfter(ms(300))), Err(CallError::Fatal)],
        ok: false,
        waited: Some(ms(300)),
    },
    Scenario {
        name: "throttling backoff and permit, then Ok",
        setup: Setup::Adaptive,
        outcomes: &[Err(CallError::Throttled), Ok(1)],
        ok: true,
        waited: Some(ms(1000 + 1000)),
    },
    Scenario {
        name: "throttling backoff and permit, then Err",
        setup: Setup::Adaptive,
        outcomes: &[Err(CallError::Throttled), Err(CallError::Fatal)],
        ok: false,
        waited: Some(ms(1000 + 1000)),
    },
    Scenario {
        name: "a first attempt's permit, then Err",
        setup: Setup::AdaptiveEngaged,
        outcomes: &[Err(CallError::Fatal)],
        ok: false,
        waited: None,
    },
    Scenario {
        name: "long polling, Err",
        setup: Setup::LongPolling,
        outcomes: &[Err(CallError::Transient)],
        ok: false,
        waited: Some(ms(50)),
    },
];

impl Scenario {
    /// A fresh strategy for the scenario, in a private scope, on `clock` (tokio's when `None`).
    fn strategy(&self, clock: Option<SharedClock>) -> ConfiguredStrategy {
        let mut config = RetryConfig::builder().max_attempts(3);
        if let Setup::LongPolling = self.setup {
            config = config.quota(Quota::Fixed(1)).long_polling(true);
        }
        let config = config.build().expect("a valid configuration");
        let mut builder: StrategyBuilder =
            StandardStrategy::builder(config).random(Arc::new(FixedRandom(1.0)));
        if let Some(clock) = clock {
            builder = builder.clock(clock);
        }
        match self.setup {
            Setup::Adaptive | Setup::AdaptiveEngaged => {
                ConfiguredStrategy::Adaptive(AdaptiveStrategy::from_builder(builder))
            }
            Setup::Standard | Setup::LongPolling => ConfiguredStrategy::Standard(builder.build()),
        }
    }

    /// What the call must report, having taken `took`. `waited()` is the waits as scheduled:
    /// tokio's timer ends each sleep at its next whole millisecond, and the limiter's waits
    /// carry a nanosecond of floating-point rounding, so "equal" is within a millisecond per
    /// wait (a missed wait is 50 ms or more).
    /// A mismatch is returned, so that a test reports every scenario that fails.
    fn check(
        &self,
        outcome: Result<u32, CallError>,
        stats: CallStats,
        took: Duration,
    ) -> Result<(), String> {
        assert_eq!(outcome.is_ok(), self.ok, "{}: {outcome:?}", self.name);
        let close = |a: Duration, b: Duration| a.abs_diff(b) < TIMER_GRAIN * MAX_WAITS;
        let expected = self.waited.map_or(stats.waited() >= ms(50), |waited| {
            close(stats.waited(), waited)
        });
        if close(stats.waited(), took) && expected {
            return Ok(());
        }
        Err(format!(
            "{}: waited {:?}, took {took:?}, expected {:?}",
            self.name,
            stats.waited(),
            self.waited
        ))
    }
}

/// Panics with every scenario `driver` got wrong.
fn all_counted(driver: &str, checks: Vec<Result<(), String>>) {
    let wrong: Vec<String> = checks.into_iter().filter_map(Result::err).collect();
    assert!(
        wrong.is_empty(),
        "{driver} miscounts:\n{}",
        wrong.join("\n")
    );
}

// ---- async drivers, on tokio's paused clock ---------------------------------------------------

/// The limiter engaged by a throttled call, for `Setup::AdaptiveEngaged`.
async fn prepare(scenario: &Scenario, strategy: &ConfiguredStrategy) {
    if let Setup::AdaptiveEngaged = scenario.setup {
        let script = Script::new(&[Err(CallError::Throttled), Ok(1)]);
        let engaged = retry_core::retry(strategy, || async { script.attempt() }).await;
        assert_eq!(engaged, Ok(1));
    }
}

#[tokio::test(start_paused = true)]
async fn run_with_stats_counts_every_wait() {
    let mut checks = Vec::new();
    for scenario in SCENARIOS {
        let strategy = scenario.strategy(None);
        prepare(&scenario, &strategy).await;
        let script = Script::new(scenario.outcomes);
        let started = Instant::now();
        let (outcome, stats) = Retry::new(&strategy)
            .run_with_stats(|| async { script.attempt() })
            .await;
        checks.push(scenario.check(outcome, stats, started.elapsed()));
    }
    all_counted("run_with_stats", checks);
}

#[tokio::test(start_paused = true)]
async fn a_retry_loops_stats_count_every_wait() {
    let mut checks = Vec::new();
    for scenario in SCENARIOS {
        let strategy = scenario.strategy(None);
        prepare(&scenario, &strategy).await;
        let script = Script::new(scenario.outcomes);
        let started = Instant::now();
        let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
        let outcome = loop {
            let Ok(()) = retry.ready().await;
            let outcome = script.attempt();
            if retry.finish(&outcome).is_break() {
                let before = retry.stats();
                retry.linger().await;
                assert_eq!(
                    retry.stats(),
                    before,
                    "{}: the linger counted once",
                    scenario.name
                );
                break outcome;
            }
        };
        checks.push(scenario.check(outcome, retry.stats(), started.elapsed()));
    }
    all_counted("RetryLoop", checks);
}

#[retryable(strategy = strategy)]
async fn call(strategy: &ConfiguredStrategy, script: &Script) -> Result<u32, CallError> {
    script.attempt()
}

#[tokio::test(start_paused = true)]
async fn capture_counts_every_wait_of_a_retryable_call() {
    let mut checks = Vec::new();
    for scenario in SCENARIOS {
        let strategy = scenario.strategy(None);
        prepare(&scenario, &strategy).await;
        let script = Script::new(scenario.outcomes);
        let started = Instant::now();
        let (outcome, stats) = attempt::capture(call(&strategy, &script)).await;
        let stats = stats.expect("one call ended");
        checks.push(scenario.check(outcome, stats, started.elapsed()));
    }
    all_counted("#[retryable]", checks);
}

#[tokio::test(start_paused = true)]
async fn capture_counts_every_wait_under_the_tower_layer() {
    let mut checks = Vec::new();
    for scenario in SCENARIOS {
        let strategy = scenario.strategy(None);
        prepare(&scenario, &strategy).await;
        let script = Arc::new(Script::new(scenario.outcomes));
        let service = tower::service_fn(move |_: u32| {
            let outcome = script.attempt();
            async move { outcome }
        });
        let layered = RetryLayer::new(strategy).layer(service);
        let started = Instant::now();
        let (outcome, stats) = attempt::capture(layered.oneshot(1)).await;
        let stats = stats.expect("one call ended");
        checks.push(scenario.check(outcome, stats, started.elapsed()));
    }
    all_counted("RetryLayer", checks);
}

// ---- blocking drivers, on a manual clock moved by their sleeper --------------------------------

#[retryable(strategy = strategy)]
fn call_blocking(strategy: &ConfiguredStrategy, script: &Script) -> Result<u32, CallError> {
    script.attempt()
}

/// `call` on a blocking driver, for each scenario, on a manual clock.
fn each_blocking_scenario(
    driver: &str,
    call: impl Fn(&ConfiguredStrategy, &Script) -> Result<u32, CallError>,
) {
    let mut checks = Vec::new();
    for scenario in SCENARIOS {
        let clock = Arc::new(ManualClock::new());
        let strategy = scenario.strategy(Some(Arc::clone(&clock) as SharedClock));
        with_sleeper(Arc::clone(&clock), || {
            if let Setup::AdaptiveEngaged = scenario.setup {
                let script = Script::new(&[Err(CallError::Throttled), Ok(1)]);
                assert_eq!(retry_blocking(&strategy, || script.attempt()), Ok(1));
            }
            let script = Script::new(scenario.outcomes);
            let started = clock.now();
            let (outcome, stats) = attempt::capture_blocking(|| call(&strategy, &script));
            let stats = stats.expect("one call ended");
            checks.push(scenario.check(outcome, stats, clock.now() - started));
        });
    }
    all_counted(driver, checks);
}

#[test]
fn capture_blocking_counts_every_wait_of_retry_blocking() {
    each_blocking_scenario("retry_blocking", |strategy, script| {
        retry_blocking(strategy, || script.attempt())
    });
}

#[test]
fn capture_blocking_counts_every_wait_of_a_blocking_retryable_fn() {
    each_blocking_scenario("blocking #[retryable]", call_blocking);
}

#[test]
fn a_blocking_retry_loops_stats_count_every_wait() {
    each_blocking_scenario("blocking RetryLoop", |strategy, script| {
        let mut retry = RetryLoop::new(strategy, RetryInfoClassifier, NoHook);
        loop {
            let Ok(()) = retry.wait_blocking();
            let outcome = script.attempt();
            if retry.finish(&outcome).is_break() {
                let before = retry.stats();
                retry.linger_blocking();
                assert_eq!(retry.stats(), before, "the linger counted once");
                break outcome;
            }
        }
    });
}
