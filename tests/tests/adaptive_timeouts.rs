//! Adaptive mode and the attempts that get no answer: a call cancelled while its attempt is in
//! flight, and attempt timeouts, which lower the rate only while the service answers other
//! calls (a queue), not while it answers nothing (an outage). Virtual time (a manual clock).

use std::sync::Arc;

use retry_core::adaptive::CongestionSignals;
use retry_core::classify::RetryInfoClassifier;
use retry_core::clock::ManualClock;
use retry_core::driver::{NoHook, RetryLoop};
use retry_core::strategy::SendPermit;
use retry_core::{
    AdaptiveStrategy, ErrorKind, RetryConfig, RetryMode, RetryReason, RetryStrategy,
    StandardStrategy,
};

mod common;
use common::ms;

/// An adaptive strategy on a manual clock counting `signals` as congestion.
fn adaptive(signals: CongestionSignals) -> (AdaptiveStrategy, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid");
    let strategy =
        AdaptiveStrategy::from_builder(StandardStrategy::builder(config).clock(clock.clone()))
            .congestion(signals);
    (strategy, clock)
}

#[test]
fn a_call_dropped_while_its_attempt_is_in_flight_feeds_nothing_to_the_limiter() {
    let (strategy, clock) = adaptive(CongestionSignals::Throttling);
    let limiter = strategy.scope().limiter();
    // 20 responses/s for 5 s, then a throttle: the limiter is on, its rate 0.7 x measured.
    for i in 0..100 {
        limiter.record_response(false, ms(50 * i), ms(50 * i));
    }
    limiter.record_response(true, ms(5_000), ms(5_000));
    clock.advance(ms(10_000));
    let before = limiter.stats();
    // Callers that give up (a deadline of their own, a `select!`) while their attempts are in
    // flight: no answer came, so there is nothing to tell CUBIC or the measured rate.
    for _ in 0..5 {
        let mut call = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
        assert_eq!(call.next_wait(true), None, "granted: the attempt is sent");
        clock.advance(ms(10));
        drop(call);
    }
    let after = limiter.stats();
    assert_eq!(after.fill_rate, before.fill_rate, "{before:?} -> {after:?}");
    assert_eq!(after.measured_rate, before.measured_rate);
    // The calls still count as failures of the scope.
    assert_eq!(strategy.scope().stats().failures, 5);
}

/// One call of `strategy`: its first attempt sent now, answered (`Ok`) or timed out after
/// `attempt_ms` of the manual clock. A timed-out call is not retried further here: its retry
/// token is dropped unsent (abandoned), as a caller out of time would.
fn call(strategy: &AdaptiveStrategy, clock: &ManualClock, attempt_ms: u64, answered: bool) {
    let mut token = strategy.acquire_initial_token();
    send(strategy, clock, &mut token);
    clock.advance(ms(attempt_ms));
    if answered {
        strategy.record_success(token);
    } else if let Ok(retry) =
        strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Timeout))
    {
        strategy.abandon(retry);
    }
}

/// Waits (on the manual clock) for the token's send permit.
fn send(
    strategy: &AdaptiveStrategy,
    clock: &ManualClock,
    token: &mut retry_core::strategy::RetryToken,
) {
    while let SendPermit::Wait(wait) = strategy.acquire_send_permit(token) {
        clock.advance(wait);
    }
}

#[test]
fn timeouts_while_the_service_answers_nothing_never_lower_the_rate() {
    for signals in [
        CongestionSignals::ThrottlingAndTimeouts,
        CongestionSignals::ThrottlingTimeoutsAndLatency,
    ] {
        let (strategy, clock) = adaptive(signals);
        // A healthy minute: 10 calls/s answered in 50 ms.
        for _ in 0..600 {
            call(&strategy, &clock, 50, true);
            clock.advance(ms(50));
        }
        // Then the service answers nothing: every attempt times out after 1 s, 10 a second,
        // for a minute. No answer came while any of them waited: an outage, not a queue.
        for _ in 0..600 {
            call(&strategy, &clock, 100, false);
        }
        let stats = strategy.scope().limiter().stats();
        assert!(
            !stats.enabled,
            "{signals:?}: limiter engaged by an outage: {stats:?}"
        );
    }
}

#[test]
fn timeouts_while_the_service_answers_other_calls_lower_the_rate() {
    let (strategy, clock) = adaptive(CongestionSignals::ThrottlingAndTimeouts);
    let limiter = strategy.scope().limiter();
    for _ in 0..600 {
        call(&strategy, &clock, 50, true);
        clock.advance(ms(50));
    }
    // A queue: one call in three times out while the others are answered. The first timeout
    // alone tells nothing; the second, after successes, engages the limiter.
    call(&strategy, &clock, 50, false);
    assert!(
        !limiter.is_enabled(),
        "a scope's first timeout is no evidence"
    );
    call(&strategy, &clock, 50, true);
    call(&strategy, &clock, 50, false);
    assert!(
        limiter.is_enabled(),
        "a timeout while others are answered is congestion"
    );
    let engaged = limiter.stats().fill_rate;
    // Once on: a timeout of an attempt sent after the reduction, with an answer arriving while
    // it waited, lowers the rate again.
    let mut waiting = strategy.acquire_initial_token();
    clock.advance(ms(2_000)); // past the reduction
    send(&strategy, &clock, &mut waiting);
    call(&strategy, &clock, 50, true);
    clock.advance(ms(950));
    let refreshed = strategy.refresh_retry_token(waiting, &RetryReason::error(ErrorKind::Timeout));
    if let Ok(retry) = refreshed {
        strategy.abandon(retry);
    }
    let lowered = limiter.stats().fill_rate;
    assert!(lowered < engaged, "{engaged} -> {lowered}");
    // A timeout with no answer since its attempt was sent (the service went silent): held.
    let mut silent = strategy.acquire_initial_token();
    clock.advance(ms(2_000));
    send(&strategy, &clock, &mut silent);
    clock.advance(ms(1_000));
    let before = limiter.stats().fill_rate;
    if let Ok(retry) = strategy.refresh_retry_token(silent, &RetryReason::error(ErrorKind::Timeout))
    {
        strategy.abandon(retry);
    }
    assert!(
        limiter.stats().fill_rate >= before,
        "an outage's timeout lowered the rate"
    );
}
