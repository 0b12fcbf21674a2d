//! `#[retryable(shed = true)]`: in adaptive mode, a call whose first attempt's send permit is
//! expected after its deadline fails at once with the function's own error built from a
//! `LoadShed`, and nothing is sent; without the opt-in, the first attempt is always made.
//! Async tests in virtual time; blocking ones on a `ManualClock` moved by their sleeper.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use retry_core::adaptive::ShedReason;
use retry_core::clock::{Clock, ManualClock};
use retry_core::driver::with_sleeper;
use retry_core::{AdaptiveStrategy, RetryConfig, StandardStrategy, retryable};

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
