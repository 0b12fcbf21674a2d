//! The tower layer's load shedding (`RetryLayer::shed_load`): in adaptive mode a call whose
//! first attempt's send permit is expected after its deadline or later than `max_wait` fails at
//! once with the service's error built from a `LoadShed`, the wrapped service never called;
//! without the opt-in the first attempt is always made. Virtual time throughout.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_core::adaptive::ShedReason;
use retry_core::config::RetryConfigBuilder;
use retry_core::strategy::SendPermit;
use retry_core::tower::RetryLayer;
use retry_core::{AdaptiveStrategy, ErrorKind, RetryConfig, RetryMode, RetryReason, RetryStrategy};
use tokio::time::Instant;
use tower::{Layer, Service, ServiceExt};

mod common;
use common::shed::Error;

/// An adaptive strategy whose limiter a throttle switched on: empty, filling at 0.5/s, so a
/// new call's permit is 2 s away.
fn throttled(config: RetryConfigBuilder) -> AdaptiveStrategy {
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

/// A service that counts its calls and always answers `7`.
fn counted(
    calls: &Arc<AtomicU32>,
) -> impl Service<(), Response = u32, Error = Error, Future = std::future::Ready<Result<u32, Error>>>
+ Clone {
    let calls = Arc::clone(calls);
    tower::service_fn(move |()| {
        calls.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Ok::<_, Error>(7))
    })
}

/// Asserts that `outcome` is a shed for `reason` that took no time, sent nothing, left no
/// waiter in the limiter and was counted as rate limited.
fn assert_shed_at_once(
    outcome: Result<u32, Error>,
    reason: ShedReason,
    strategy: &AdaptiveStrategy,
    rate_limited_before: u64,
    calls: &AtomicU32,
    start: Instant,
) {
    let Err(Error::Shed(shed)) = outcome else {
        panic!("expected a shed, got {outcome:?}");
    };
    assert_eq!(shed.reason(), reason);
    assert_eq!(shed.expected(), Duration::from_secs(2));
    assert_eq!(shed.limit(), Duration::from_secs(1));
    assert_eq!(start.elapsed(), Duration::ZERO, "refused at once");
    assert_eq!(calls.load(Ordering::SeqCst), 0, "the service never called");
    let stats = strategy.scope().stats();
    assert_eq!(stats.limiter.waiting, 0, "no place left in line");
    assert_eq!(stats.rate_limited, rate_limited_before + 1, "counted");
}

#[tokio::test(start_paused = true)]
async fn a_call_made_ready_past_its_deadline_is_shed_at_once() {
    let strategy = throttled(RetryConfig::builder().timeout(Duration::from_secs(1)));
    let before = strategy.scope().stats().rate_limited;
    let calls = Arc::new(AtomicU32::new(0));
    let mut service = RetryLayer::new(strategy.clone())
        .shed_load()
        .layer(counted(&calls));
    let start = Instant::now();
    // Like tower's load-shed layer: ready, so that the caller calls and gets the refusal.
    let ready = service.ready().await.map(|_| ());
    assert!(ready.is_ok(), "poll_ready reports ready, not the refusal");
    let outcome = service.call(()).await;
    assert_shed_at_once(
        outcome,
        ShedReason::Deadline,
        &strategy,
        before,
        &calls,
        start,
    );
}

#[tokio::test(start_paused = true)]
async fn a_oneshot_call_past_its_deadline_is_shed_at_once() {
    let strategy = throttled(RetryConfig::builder().timeout(Duration::from_secs(1)));
    let before = strategy.scope().stats().rate_limited;
    let calls = Arc::new(AtomicU32::new(0));
    let service = RetryLayer::new(strategy.clone())
        .shed_load()
        .layer(counted(&calls));
    let start = Instant::now();
    let outcome = service.oneshot(()).await;
    assert_shed_at_once(
        outcome,
        ShedReason::Deadline,
        &strategy,
        before,
        &calls,
        start,
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_made_without_poll_ready_past_its_deadline_is_shed_at_once() {
    let strategy = throttled(RetryConfig::builder().timeout(Duration::from_secs(1)));
    let before = strategy.scope().stats().rate_limited;
    let calls = Arc::new(AtomicU32::new(0));
    let mut service = RetryLayer::new(strategy.clone())
        .shed_load()
        .layer(counted(&calls));
    let start = Instant::now();
    let outcome = service.call(()).await;
    assert_shed_at_once(
        outcome,
        ShedReason::Deadline,
        &strategy,
        before,
        &calls,
        start,
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_whose_permit_is_beyond_max_wait_is_shed_at_once() {
    let strategy = throttled(
        RetryConfig::builder()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_secs(1)),
    );
    let before = strategy.scope().stats().rate_limited;
    let calls = Arc::new(AtomicU32::new(0));
    let service = RetryLayer::new(strategy.clone())
        .shed_load()
        .layer(counted(&calls));
    let start = Instant::now();
    let outcome = service.oneshot(()).await;
    assert_shed_at_once(
        outcome,
        ShedReason::MaxWait,
        &strategy,
        before,
        &calls,
        start,
    );
}

#[tokio::test(start_paused = true)]
async fn a_permit_expected_in_time_is_waited_for_and_the_call_sent() {
    let strategy = throttled(RetryConfig::builder().timeout(Duration::from_secs(3)));
    let calls = Arc::new(AtomicU32::new(0));
    let service = RetryLayer::new(strategy.clone())
        .shed_load()
        .layer(counted(&calls));
    let start = Instant::now();
    let outcome = service.oneshot(()).await;
    assert_eq!(outcome.expect("sent"), 7);
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(2),
        "waited for its permit"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn without_the_opt_in_the_first_attempt_is_always_made() {
    let strategy = throttled(RetryConfig::builder().timeout(Duration::from_secs(1)));
    let before = strategy.scope().stats().rate_limited;
    let calls = Arc::new(AtomicU32::new(0));
    let service = RetryLayer::new(strategy.clone()).layer(counted(&calls));
    let start = Instant::now();
    let outcome = service.oneshot(()).await;
    assert_eq!(outcome.expect("sent"), 7);
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(2),
        "waited for its permit"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(strategy.scope().stats().rate_limited, before, "not shed");

    // The same without poll_ready.
    let mut service = RetryLayer::new(strategy.clone()).layer(counted(&calls));
    assert_eq!(service.call(()).await.expect("sent"), 7);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_refusal_goes_to_the_next_call_only_and_the_service_serves_later_calls() {
    let strategy = throttled(RetryConfig::builder().timeout(Duration::from_secs(1)));
    let before = strategy.scope().stats().rate_limited;
    let calls = Arc::new(AtomicU32::new(0));
    let mut service = RetryLayer::new(strategy.clone())
        .shed_load()
        .layer(counted(&calls));
    // Made ready twice: the refusal is kept, not asked for again.
    service.ready().await.map(|_| ()).expect("ready");
    service.ready().await.map(|_| ()).expect("ready");
    assert!(matches!(service.call(()).await, Err(Error::Shed(_))));
    assert_eq!(strategy.scope().stats().rate_limited, before + 1);

    // 1.5 s later the bucket holds 0.75 of a permit: the next one is 0.5 s away, in time.
    tokio::time::advance(Duration::from_millis(1500)).await;
    let start = Instant::now();
    let outcome = service.ready().await.expect("ready").call(()).await;
    assert_eq!(outcome.expect("sent"), 7);
    assert_eq!(start.elapsed(), Duration::from_millis(500));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(strategy.scope().stats().limiter.waiting, 0);
}
