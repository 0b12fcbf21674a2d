//! `#[retryable(shed = true)]`: in adaptive mode, a call whose first attempt's send permit is
//! expected after its deadline fails at once with the function's own error built from a
//! `LoadShed`, and nothing is sent; without the opt-in, the first attempt is always made.
//! Async tests in virtual time; blocking ones on a `ManualClock` moved by their sleeper.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use retry_core::adaptive::ShedReason;
use retry_core::backoff::Jitter;
use retry_core::clock::{Clock, ManualClock};
use retry_core::driver::with_sleeper;
use retry_core::{
    AdaptiveStrategy, LoadShed, Quota, RetryConfig, RetryInfo, RetrySafety, StandardStrategy,
    retryable,
};

mod common;
use common::shed::Error;

/// One attempt: throttled while `throttle` is set, else the attempt's number.
fn attempt(attempts: &AtomicU32, throttle: bool) -> Result<u32, Error> {
    let n = attempts.fetch_add(1, Ordering::Relaxed) + 1;
    if throttle {
        Err(Error::Throttled)
    } else {
        Ok(n)
    }
}

#[retryable(
    mode = "adaptive",
    timeout = "1s",
    shed = true,
    scope = "shed-attribute-async"
)]
async fn shed_when_late(attempts: &AtomicU32, throttle: bool) -> Result<u32, Error> {
    attempt(attempts, throttle)
}

#[retryable(mode = "adaptive", timeout = "1s", scope = "shed-attribute-async")]
async fn always_sent(attempts: &AtomicU32, throttle: bool) -> Result<u32, Error> {
    attempt(attempts, throttle)
}

#[tokio::test(start_paused = true)]
async fn a_call_expected_after_its_deadline_is_shed_only_with_the_opt_in() {
    let attempts = AtomicU32::new(0);
    // A throttle switches the scope's limiter on, empty, at 0.5/s: the retry's permit (2 s
    // away) is past the 1 s deadline, so it is not made.
    assert!(matches!(
        shed_when_late(&attempts, true).await,
        Err(Error::Throttled)
    ));
    assert_eq!(attempts.load(Ordering::Relaxed), 1);

    // The next call's first permit is 2 s away too: shed at once, nothing sent.
    let started = tokio::time::Instant::now();
    match shed_when_late(&attempts, false).await {
        Err(Error::Shed(shed)) => {
            assert_eq!(shed.reason(), ShedReason::Deadline);
            assert_eq!(shed.expected(), Duration::from_secs(2));
        }
        other => panic!("expected a shed call, got {other:?}"),
    }
    assert_eq!(attempts.load(Ordering::Relaxed), 1, "nothing was sent");
    assert_eq!(started.elapsed(), Duration::ZERO, "refused without waiting");

    // Without the opt-in, the same call waits for its permit and makes its first attempt.
    assert_eq!(always_sent(&attempts, false).await.unwrap(), 2);
    assert!(started.elapsed() >= Duration::from_secs(1));
}

/// The adaptive strategy of the blocking test, on a manual clock its sleeper moves.
static CLOCK: LazyLock<Arc<ManualClock>> = LazyLock::new(|| Arc::new(ManualClock::new()));
static STRATEGY: LazyLock<AdaptiveStrategy> = LazyLock::new(|| {
    let config = RetryConfig::builder()
        .timeout(Duration::from_secs(1))
        .build()
        .expect("valid");
    AdaptiveStrategy::from_builder(
        StandardStrategy::builder(config).clock(Arc::clone(&*CLOCK) as _),
    )
});

#[retryable(strategy = &*STRATEGY, shed = true)]
fn blocking_shed_when_late(attempts: &AtomicU32, throttle: bool) -> Result<u32, Error> {
    attempt(attempts, throttle)
}

#[retryable(strategy = &*STRATEGY)]
fn blocking_always_sent(attempts: &AtomicU32, throttle: bool) -> Result<u32, Error> {
    attempt(attempts, throttle)
}

#[test]
fn a_blocking_call_is_shed_only_with_the_opt_in() {
    let attempts = AtomicU32::new(0);
    with_sleeper(Arc::clone(&*CLOCK), || {
        assert!(matches!(
            blocking_shed_when_late(&attempts, true),
            Err(Error::Throttled)
        ));
        let before = CLOCK.now();
        assert!(matches!(
            blocking_shed_when_late(&attempts, false),
            Err(Error::Shed(_))
        ));
        assert_eq!(attempts.load(Ordering::Relaxed), 1, "nothing was sent");
        assert_eq!(CLOCK.now(), before, "refused without sleeping");
        assert_eq!(blocking_always_sent(&attempts, false).unwrap(), 2);
        assert!(
            CLOCK.now() > before,
            "the first attempt waited for its permit"
        );
    });
    assert_eq!(STRATEGY.scope().limiter().stats().waiting, 0);
}

/// What the combinations below fail with: a transient error, a throttle, or a local refusal.
#[derive(Debug)]
enum PollError {
    Transient,
    Throttled,
    Shed(LoadShed),
}

impl RetryInfo for PollError {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            PollError::Shed(_) => RetrySafety::No,
            _ => RetrySafety::Yes,
        }
    }
    fn is_throttling(&self) -> bool {
        matches!(self, PollError::Throttled)
    }
}

impl From<LoadShed> for PollError {
    fn from(shed: LoadShed) -> Self {
        PollError::Shed(shed)
    }
}

/// One attempt failing with `error` (`None`: the attempt's number).
fn failing(attempts: &AtomicU32, error: Option<fn() -> PollError>) -> Result<u32, PollError> {
    let n = attempts.fetch_add(1, Ordering::Relaxed) + 1;
    error.map_or(Ok(n), |error| Err(error()))
}

/// Shedding beside long polling: a quota of one token, so the quota refuses every retry.
#[retryable(
    mode = "adaptive",
    timeout = "1s",
    long_polling = true,
    shed = true,
    quota = 1,
    jitter = "none",
    scope = "shed-attribute-long-polling"
)]
async fn shed_or_long_poll(
    attempts: &AtomicU32,
    error: Option<fn() -> PollError>,
) -> Result<u32, PollError> {
    failing(attempts, error)
}

/// The sequence both combinations are held to: a transient error the quota refuses to retry
/// is returned after the backoff (long polling: 50 ms); a throttle engages the limiter; the next
/// call, its permit expected 2 s away, past the 1 s deadline, is shed at once.
async fn sheds_and_long_polls<F: Future<Output = Result<u32, PollError>>>(
    call: impl Fn(Option<fn() -> PollError>) -> F,
    attempts: &AtomicU32,
) {
    let started = tokio::time::Instant::now();
    assert!(matches!(
        call(Some(|| PollError::Transient)).await,
        Err(PollError::Transient)
    ));
    assert_eq!(started.elapsed(), Duration::from_millis(50), "long polled");
    assert!(matches!(
        call(Some(|| PollError::Throttled)).await,
        Err(PollError::Throttled)
    ));
    let before = tokio::time::Instant::now();
    match call(None).await {
        Err(PollError::Shed(shed)) => assert_eq!(shed.reason(), ShedReason::Deadline),
        other => panic!("expected a shed call, got {other:?}"),
    }
    assert_eq!(before.elapsed(), Duration::ZERO, "refused without waiting");
    assert_eq!(
        attempts.load(Ordering::Relaxed),
        2,
        "the shed call sent nothing"
    );
}

#[tokio::test(start_paused = true)]
async fn shed_and_long_polling_combine() {
    let attempts = AtomicU32::new(0);
    sheds_and_long_polls(|error| shed_or_long_poll(&attempts, error), &attempts).await;
}

/// The same configuration, given as a strategy.
static LONG_POLLING: LazyLock<AdaptiveStrategy> = LazyLock::new(|| {
    let config = RetryConfig::builder()
        .timeout(Duration::from_secs(1))
        .long_polling(true)
        .quota(Quota::Fixed(1))
        .jitter(Jitter::None)
        .build()
        .expect("valid");
    AdaptiveStrategy::new(config)
});

#[retryable(strategy = &*LONG_POLLING, shed = true)]
async fn shed_with_a_strategy(
    attempts: &AtomicU32,
    error: Option<fn() -> PollError>,
) -> Result<u32, PollError> {
    failing(attempts, error)
}

#[tokio::test(start_paused = true)]
async fn shed_and_a_given_strategy_combine() {
    let attempts = AtomicU32::new(0);
    sheds_and_long_polls(|error| shed_with_a_strategy(&attempts, error), &attempts).await;
}

/// Shedding bounded by `max_wait` rather than a deadline.
#[retryable(
    mode = "adaptive",
    max_wait = "500ms",
    shed = true,
    jitter = "none",
    scope = "shed-attribute-max-wait"
)]
async fn shed_past_max_wait(
    attempts: &AtomicU32,
    error: Option<fn() -> PollError>,
) -> Result<u32, PollError> {
    failing(attempts, error)
}

/// The same bound without shedding: an attempt waits for its permit at most `max_wait`.
#[retryable(
    mode = "adaptive",
    max_wait = "500ms",
    jitter = "none",
    scope = "shed-attribute-max-wait"
)]
async fn wait_at_most_max_wait(
    attempts: &AtomicU32,
    error: Option<fn() -> PollError>,
) -> Result<u32, PollError> {
    failing(attempts, error)
}

#[tokio::test(start_paused = true)]
async fn max_wait_bounds_shedding_and_every_wait_from_the_attribute() {
    let attempts = AtomicU32::new(0);
    let started = tokio::time::Instant::now();
    // The throttle engages the limiter, empty, at 0.5/s: the retry's permit, 1 s after its
    // 1 s backoff, is later than max_wait: refused when asked for, at once.
    assert!(matches!(
        shed_past_max_wait(&attempts, Some(|| PollError::Throttled)).await,
        Err(PollError::Throttled)
    ));
    assert_eq!(started.elapsed(), Duration::ZERO);
    // The next call's permit is 2 s away, later than max_wait: shed, nothing sent.
    match shed_past_max_wait(&attempts, None).await {
        Err(PollError::Shed(shed)) => {
            assert_eq!(shed.reason(), ShedReason::MaxWait);
            assert_eq!(shed.limit(), Duration::from_millis(500));
        }
        other => panic!("expected a shed call, got {other:?}"),
    }
    assert_eq!(attempts.load(Ordering::Relaxed), 1, "nothing was sent");
    // Without shedding, the first attempt waits max_wait for its permit, then is sent.
    assert_eq!(wait_at_most_max_wait(&attempts, None).await.unwrap(), 2);
    assert_eq!(started.elapsed(), Duration::from_millis(500));
}
