//! Shed, don't queue past the deadline: in adaptive mode a call whose first attempt's send
//! permit is expected after its deadline or later than `max_wait` fails at once with a
//! `LoadShed` (nothing sent), for callers that can return it; the others keep the rule that the
//! first attempt is always made. Virtual time throughout.

use std::cell::Cell;
use std::time::Duration;

use retry_core::adaptive::ShedReason;
use retry_core::classify::RetryInfoClassifier;
use retry_core::config::RetryConfigBuilder;
use retry_core::driver::{NoHook, RetryLoop};
use retry_core::strategy::SendPermit;
use retry_core::{
    AdaptiveStrategy, ClassifyRetry, ErrorKind, LoadShed, Retry, RetryConfig, RetryInfo, RetryMode,
    RetryReason, RetryStrategy, retry,
};

mod common;
use common::shed::Error;

/// An adaptive strategy whose limiter a throttle switched on: empty, filling at 0.5/s, so a
/// new call's permit is 2 s away.
async fn throttled(config: RetryConfigBuilder) -> AdaptiveStrategy {
    let strategy = AdaptiveStrategy::new(config.build().expect("valid"));
    let mut token = strategy.acquire_initial_token();
    assert_eq!(
        strategy.acquire_send_permit(&mut token),
        SendPermit::Granted
    );
    if let Ok(token) =
        strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
    {
        strategy.abandon(token);
    }
    assert!(strategy.scope().limiter().is_enabled());
    assert_eq!(
        strategy
            .scope()
            .limiter()
            .expected_wait(strategy.scope().clock().now()),
        Duration::from_secs(2)
    );
    strategy
}

/// Runs one call that would succeed through `Retry::shed_load`: its outcome, the attempts made
/// and the virtual time it took.
async fn call_or_shed(strategy: &AdaptiveStrategy) -> (Result<u32, Error>, u32, Duration) {
    let attempts = Cell::new(0);
    let start = tokio::time::Instant::now();
    let outcome = Retry::new(strategy)
        .shed_load()
        .run(|| {
            attempts.set(attempts.get() + 1);
            async { Ok::<_, Error>(7) }
        })
        .await;
    (outcome, attempts.get(), start.elapsed())
}

#[tokio::test(start_paused = true)]
async fn a_first_attempt_expected_later_than_max_wait_is_shed_at_once() {
    let strategy = throttled(
        RetryConfig::builder()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_secs(1)),
    )
    .await;
    let before = strategy.scope().stats();
    let (outcome, attempts, took) = call_or_shed(&strategy).await;
    let Err(Error::Shed(shed)) = outcome else {
        panic!("expected a shed, got {outcome:?}");
    };
    assert_eq!(shed.reason(), ShedReason::MaxWait);
    assert_eq!(
        (shed.expected(), shed.limit()),
        (Duration::from_secs(2), Duration::from_secs(1))
    );
    assert_eq!(
        (attempts, took),
        (0, Duration::ZERO),
        "nothing sent, no wait"
    );
    let stats = strategy.scope().stats();
    assert_eq!(stats.quota_level, before.quota_level);
    assert_eq!(stats.limiter.waiting, 0, "no place taken");
    assert_eq!(stats.rate_limited, before.rate_limited + 1, "counted");
}

/// `shed_load` is an option of the blocking entry point too: a shed call runs nothing and
/// returns the refusal as its own error.
#[tokio::test(start_paused = true)]
async fn a_blocking_run_sheds_only_with_the_option() {
    let strategy = throttled(
        RetryConfig::builder()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_secs(1)),
    )
    .await;
    let attempts = Cell::new(0);
    let operation = || {
        attempts.set(attempts.get() + 1);
        Ok::<_, Error>(7)
    };
    let outcome = Retry::new(&strategy).shed_load().run_blocking(operation);
    let Err(Error::Shed(shed)) = outcome else {
        panic!("expected a shed, got {outcome:?}");
    };
    assert_eq!(shed.reason(), ShedReason::MaxWait);
    assert_eq!(attempts.get(), 0, "nothing sent");
    assert_eq!(
        strategy.scope().stats().limiter.waiting,
        0,
        "no place taken"
    );
}

#[tokio::test(start_paused = true)]
async fn a_first_attempt_expected_after_the_deadline_is_shed_at_once() {
    let strategy = throttled(RetryConfig::builder().timeout(Duration::from_millis(1500))).await;
    let (outcome, attempts, took) = call_or_shed(&strategy).await;
    let Err(Error::Shed(shed)) = outcome else {
        panic!("expected a shed, got {outcome:?}");
    };
    assert_eq!(shed.reason(), ShedReason::Deadline);
    assert_eq!(shed.limit(), Duration::from_millis(1500));
    assert_eq!((attempts, took), (0, Duration::ZERO));
}

#[tokio::test(start_paused = true)]
async fn a_permit_expected_in_time_is_waited_for_and_the_attempt_made() {
    let strategy = throttled(RetryConfig::builder().timeout(Duration::from_secs(3))).await;
    let (outcome, attempts, took) = call_or_shed(&strategy).await;
    assert_eq!(outcome.expect("sent"), 7);
    assert_eq!((attempts, took), (1, Duration::from_secs(2)));
}

#[tokio::test(start_paused = true)]
async fn without_a_deadline_or_max_wait_the_first_attempt_is_always_made() {
    let strategy = throttled(RetryConfig::builder()).await;
    let (outcome, attempts, took) = call_or_shed(&strategy).await;
    assert_eq!(outcome.expect("sent"), 7);
    assert_eq!((attempts, took), (1, Duration::from_secs(2)));
}

#[tokio::test(start_paused = true)]
async fn callers_that_cannot_return_a_shed_keep_the_first_attempt() {
    // `retry` (no `From<LoadShed>`): waits max_wait, then sends without a permit, as before.
    let strategy = throttled(
        RetryConfig::builder()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_secs(1)),
    )
    .await;
    let start = tokio::time::Instant::now();
    let outcome = retry(&strategy, || async { Ok::<_, Error>(7) }).await;
    assert_eq!(outcome.expect("sent"), 7);
    assert_eq!(start.elapsed(), Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn the_attempt_timeout_variant_and_the_loop_shed_too() {
    #[derive(Debug)]
    enum TimedError {
        Shed,
        Elapsed,
    }
    impl RetryInfo for TimedError {}
    impl From<LoadShed> for TimedError {
        fn from(_: LoadShed) -> Self {
            TimedError::Shed
        }
    }
    impl From<tokio::time::error::Elapsed> for TimedError {
        fn from(_: tokio::time::error::Elapsed) -> Self {
            TimedError::Elapsed
        }
    }
    let strategy = throttled(
        RetryConfig::builder()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_millis(500)),
    )
    .await;
    let outcome = Retry::new(&strategy)
        .attempt_timeout(Duration::from_secs(1))
        .shed_load()
        .run(|| async { Ok::<_, TimedError>(()) })
        .await;
    assert!(matches!(outcome, Err(TimedError::Shed)), "{outcome:?}");
    let _ = TimedError::Elapsed;
    // The loop itself: a shed settles the token, and finish then ends the call.
    let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook).shed_load();
    assert!(retry.ready().await.is_err());
    let outcome: Result<(), Error> = Err(Error::Throttled);
    assert!(RetryInfoClassifier.classify(&outcome).should_retry());
    assert!(retry.finish(&outcome).is_break(), "no token left to retry");
    drop(retry);
    assert_eq!(strategy.scope().stats().limiter.waiting, 0);
}

#[test]
fn timeouts_lower_the_rate_only_when_asked_to() {
    use retry_core::adaptive::CongestionSignals;
    let timeout = RetryReason::error(ErrorKind::Timeout);
    let aws = AdaptiveStrategy::new(RetryConfig::default());
    let token = aws.acquire_initial_token();
    let token = aws.refresh_retry_token(token, &timeout).expect("retried");
    aws.abandon(token);
    assert!(
        !aws.scope().limiter().is_enabled(),
        "the default: throttling only"
    );
    // With timeouts as congestion: a timeout while other calls are answered (here, one
    // success between two timeouts) is a queue. (A scope's first timeout alone tells a queue
    // from an outage by nothing: see `adaptive_timeouts.rs`.)
    let tcp = AdaptiveStrategy::new(RetryConfig::default())
        .congestion(CongestionSignals::ThrottlingAndTimeouts);
    for answered_between in [false, true] {
        if answered_between {
            let token = tcp.acquire_initial_token();
            tcp.record_success(token);
        }
        let token = tcp.acquire_initial_token();
        let token = tcp.refresh_retry_token(token, &timeout).expect("retried");
        tcp.abandon(token);
    }
    assert!(
        tcp.scope().limiter().is_enabled(),
        "a timeout is congestion"
    );
}
