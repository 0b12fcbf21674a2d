//! Long polling (`RetryConfigBuilder::long_polling`, `#[retryable(long_polling = true)]`)
//! against the AWS SDKs' test vectors of their 2026 retry behavior (retry behavior 2.1, the
//! long-polling cases: smithy-rs "Implement retry behavior 2.1", aws-sdk-java-v2 "Support
//! backoff for long-polling"): with the exponential base drawn at 1 (jitter 1.0) and an empty
//! retry quota, a long-polling operation whose transient error cannot be retried returns "retry
//! quota exceeded" after 0.05 s, and one whose throttling error cannot be retried after 1 s.
//! Only a refusal by the quota waits: a call that is not retryable or has made every attempt
//! returns at once, as does every call that is not long polling.
//!
//! Every driver, in virtual time: the strategy's refusal, `retry` (`RetryLoop`), the blocking
//! loop (`retry_blocking` through a recording `Sleeper`), `#[retryable]` (async and blocking)
//! and the tower layer's future.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_core::backoff::FixedRandom;
use retry_core::driver::{Sleeper, with_sleeper};
use retry_core::tower::RetryLayer;
use retry_core::{
    ErrorKind, Quota, RetryConfig, RetryError, RetryInfo, RetryReason, RetrySafety, RetryStrategy,
    Scope, StandardStrategy, retry, retry_blocking, retryable,
};
use tokio::time::Instant;
use tower::{Layer, ServiceExt};

/// The vectors' delays: 50 ms for a transient error, 1 s for a throttling error.
const TRANSIENT_VECTOR: Duration = Duration::from_millis(50);
const THROTTLING_VECTOR: Duration = Duration::from_secs(1);

/// What the operation fails with.
#[derive(Debug, Clone, Copy, PartialEq)]
enum PollError {
    /// A 500: transient.
    Transient,
    /// A throttling error.
    Throttled,
    /// A 400: not retryable.
    BadRequest,
}

impl RetryInfo for PollError {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            PollError::BadRequest => RetrySafety::No,
            _ => RetrySafety::Yes,
        }
    }
    fn is_throttling(&self) -> bool {
        matches!(self, PollError::Throttled)
    }
}

/// The `aws-2026` preset, long polling or not, its jitter drawing 1.0, its quota emptied.
fn strategy(long_polling: bool, max_attempts: u32) -> StandardStrategy {
    let config = RetryConfig::aws_2026()
        .max_attempts(max_attempts)
        .long_polling(long_polling)
        .build()
        .expect("valid");
    let strategy = StandardStrategy::builder(config)
        .random(Arc::new(FixedRandom(1.0)))
        .build();
    empty(strategy.scope());
    strategy
}

/// Takes every token of `scope`'s quota: the vectors' empty bucket.
fn empty(scope: &Scope) {
    let quota = scope.quota();
    assert!(quota.try_acquire(quota.level()));
    assert_eq!(quota.level(), 0);
}

/// How long a call of `operation` under `strategy` takes, and what it returns.
async fn timed_call(strategy: &StandardStrategy, error: PollError) -> (Duration, PollError) {
    let started = Instant::now();
    let outcome: Result<(), PollError> = retry(strategy, || async move { Err(error) }).await;
    (started.elapsed(), outcome.expect_err("every attempt fails"))
}

#[test]
fn the_strategy_refuses_with_the_backoff_it_computed() {
    for (error, kind, vector) in [
        (PollError::Transient, ErrorKind::Server, TRANSIENT_VECTOR),
        (
            PollError::Throttled,
            ErrorKind::Throttling,
            THROTTLING_VECTOR,
        ),
    ] {
        let strategy = strategy(true, 3);
        let token = strategy.acquire_initial_token();
        let refusal = strategy
            .refresh_retry_token(token, &RetryReason::error(kind))
            .expect_err("the quota is empty");
        let cost = if error == PollError::Throttled { 5 } else { 14 };
        assert_eq!(
            refusal,
            RetryError::QuotaExhausted {
                cost,
                level: 0,
                backoff: Some(vector)
            }
        );
        assert_eq!(refusal.wait_before_returning(), Some(vector));
        assert_eq!(
            refusal.to_string(),
            format!(
                "retry quota exhausted: a retry costs {cost}, the quota holds 0 (long polling: \
                 the error is returned after the {vector:?} backoff)"
            )
        );
        // Not long polling: the same refusal returns at once.
        let strategy = self::strategy(false, 3);
        let token = strategy.acquire_initial_token();
        let refusal = strategy
            .refresh_retry_token(token, &RetryReason::error(kind))
            .expect_err("the quota is empty");
        assert_eq!(refusal.wait_before_returning(), None);
    }
}

#[tokio::test(start_paused = true)]
async fn vector_transient_error_returns_retry_quota_exceeded_after_50_ms() {
    let (elapsed, error) = timed_call(&strategy(true, 3), PollError::Transient).await;
    assert_eq!((elapsed, error), (TRANSIENT_VECTOR, PollError::Transient));
}

#[tokio::test(start_paused = true)]
async fn vector_throttling_error_returns_retry_quota_exceeded_after_1_s() {
    let (elapsed, error) = timed_call(&strategy(true, 3), PollError::Throttled).await;
    assert_eq!((elapsed, error), (THROTTLING_VECTOR, PollError::Throttled));
}

#[tokio::test(start_paused = true)]
async fn only_a_refusal_by_the_quota_waits() {
    // Not long polling: at once.
    let (elapsed, _) = timed_call(&strategy(false, 3), PollError::Transient).await;
    assert_eq!(elapsed, Duration::ZERO);
    // Long polling, but not retryable: at once.
    let (elapsed, error) = timed_call(&strategy(true, 3), PollError::BadRequest).await;
    assert_eq!((elapsed, error), (Duration::ZERO, PollError::BadRequest));
    // Long polling, every attempt made (one allowed): at once.
    let (elapsed, _) = timed_call(&strategy(true, 1), PollError::Transient).await;
    assert_eq!(elapsed, Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_refusal_after_granted_retries_sleeps_that_retrys_backoff() {
    // A quota of 28 pays for two retries (50 ms, 100 ms); the third (200 ms) is refused and
    // slept before the error is returned: 350 ms in all.
    let config = RetryConfig::aws_2026()
        .quota(Quota::Fixed(28))
        .max_attempts(10)
        .long_polling(true)
        .build()
        .expect("valid");
    let strategy = StandardStrategy::builder(config)
        .random(Arc::new(FixedRandom(1.0)))
        .build();
    let (elapsed, _) = timed_call(&strategy, PollError::Transient).await;
    assert_eq!(elapsed, Duration::from_millis(350));
}

/// Records the sleeps of the blocking loop instead of sleeping.
#[derive(Debug, Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Duration>>>);

impl Sleeper for Recorder {
    fn sleep(&self, duration: Duration) {
        self.0.lock().expect("not poisoned").push(duration);
    }
}

#[test]
fn the_blocking_loop_sleeps_the_vectors_backoff_before_returning() {
    for (error, vector) in [
        (PollError::Transient, TRANSIENT_VECTOR),
        (PollError::Throttled, THROTTLING_VECTOR),
    ] {
        let recorder = Recorder::default();
        let strategy = strategy(true, 3);
        let outcome = with_sleeper(recorder.clone(), || {
            retry_blocking(&strategy, || Err::<(), _>(error))
        });
        assert_eq!(outcome, Err(error));
        assert_eq!(*recorder.0.lock().expect("not poisoned"), [vector]);
    }
    let recorder = Recorder::default();
    let strategy = strategy(false, 3);
    let _ = with_sleeper(recorder.clone(), || {
        retry_blocking(&strategy, || Err::<(), _>(PollError::Transient))
    });
    assert!(recorder.0.lock().expect("not poisoned").is_empty());
}

// ---- #[retryable(long_polling = true)] ------------------------------------------------------

#[retryable(
    preset = "aws-2026",
    long_polling = true,
    jitter = "none",
    scope = "long-polling-attr-async"
)]
async fn receive_message(error: PollError) -> Result<(), PollError> {
    Err(error)
}

#[retryable(
    preset = "aws-2026",
    long_polling = true,
    jitter = "none",
    scope = "long-polling-attr-blocking"
)]
fn receive_message_blocking(error: PollError) -> Result<(), PollError> {
    Err(error)
}

/// A long-polling function given its strategy: the expansion lingers for it too.
struct Queue {
    strategy: StandardStrategy,
}

impl Queue {
    #[retryable(strategy = self.strategy)]
    async fn receive(&self, error: PollError) -> Result<(), PollError> {
        Err(error)
    }
}

/// Calls `receive_message` once so that its scope exists, then empties its quota.
async fn empty_scope_of(name: &str, first_call: impl AsyncFnOnce()) {
    first_call().await;
    empty(&Scope::lookup(name).expect("the function's scope"));
}

#[tokio::test(start_paused = true)]
async fn retryable_long_polling_sleeps_the_vectors_backoff() {
    // jitter = "none": the delay is the exponential base itself, as a jitter drawn at 1.0.
    empty_scope_of("long-polling-attr-async", async || {
        let _ = receive_message(PollError::BadRequest).await;
    })
    .await;
    for (error, vector) in [
        (PollError::Transient, TRANSIENT_VECTOR),
        (PollError::Throttled, THROTTLING_VECTOR),
    ] {
        let started = Instant::now();
        assert_eq!(receive_message(error).await, Err(error));
        assert_eq!(started.elapsed(), vector);
    }
    let queue = Queue {
        strategy: strategy(true, 3),
    };
    let started = Instant::now();
    assert_eq!(
        queue.receive(PollError::Throttled).await,
        Err(PollError::Throttled)
    );
    assert_eq!(started.elapsed(), THROTTLING_VECTOR);
}

#[test]
fn retryable_blocking_long_polling_sleeps_the_vectors_backoff() {
    let _ = receive_message_blocking(PollError::BadRequest);
    empty(&Scope::lookup("long-polling-attr-blocking").expect("the function's scope"));
    let recorder = Recorder::default();
    let outcome = with_sleeper(recorder.clone(), || {
        receive_message_blocking(PollError::Transient)
    });
    assert_eq!(outcome, Err(PollError::Transient));
    assert_eq!(
        *recorder.0.lock().expect("not poisoned"),
        [TRANSIENT_VECTOR]
    );
}

// ---- the tower layer --------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn the_tower_layer_sleeps_the_vectors_backoff_before_returning() {
    for (long_polling, error, expected) in [
        (true, PollError::Transient, TRANSIENT_VECTOR),
        (true, PollError::Throttled, THROTTLING_VECTOR),
        (false, PollError::Throttled, Duration::ZERO),
        (true, PollError::BadRequest, Duration::ZERO),
    ] {
        let service = tower::service_fn(move |_: u32| async move { Err::<u32, _>(error) });
        let layered = RetryLayer::new(strategy(long_polling, 3)).layer(service);
        let started = Instant::now();
        assert_eq!(layered.oneshot(1).await, Err(error));
        assert_eq!(started.elapsed(), expected, "{long_polling} {error:?}");
    }
}
