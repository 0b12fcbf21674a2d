//! [`HedgedLoop`]'s rules, driven synchronously on a manual clock, as a simulator drives it.

use std::sync::Arc;
use std::time::Duration;

use super::{HedgedLoop, Next, NoHook};
use crate::adaptive::CongestionSignals;
use crate::attempt::Attempt;
use crate::classify::{ErrorKind, RetryInfoClassifier, RetryReason};
use crate::clock::ManualClock;
use crate::config::{Quota, RetryConfig, RetryConfigBuilder, RetryMode};
use crate::hedge::{HedgeRefusal, Hedging, THROTTLE_PAUSE};
use crate::info::RetryInfo;
use crate::strategy::{AdaptiveStrategy, RetryStrategy, StandardStrategy};

const MS: Duration = Duration::from_millis(1);

/// A standard strategy on a manual clock, its backoff fixed by full jitter's draw of 1.
fn standard(config: RetryConfigBuilder) -> (StandardStrategy, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let strategy = StandardStrategy::builder(config.build().unwrap())
        .clock(clock.clone())
        .random(Arc::new(crate::backoff::FixedRandom(1.0)))
        .build();
    (strategy, clock)
}

fn fifty_ms() -> Hedging {
    Hedging::after(50 * MS).unwrap()
}

/// A call of `strategy` hedged after 50 ms, its first attempt sent.
fn sent<S: RetryStrategy>(
    strategy: S,
    hedging: Hedging,
) -> HedgedLoop<S, RetryInfoClassifier, NoHook> {
    let mut call = HedgedLoop::new(strategy, RetryInfoClassifier, NoHook, hedging);
    assert_eq!(call.next_wait(true), None);
    call
}

/// What a copy answered.
#[derive(Debug)]
enum Answer {
    Unavailable,
    Throttled(Option<Duration>),
}

impl RetryInfo for Answer {
    fn retry_safety(&self) -> crate::info::RetrySafety {
        crate::info::RetrySafety::Yes
    }
    fn is_throttling(&self) -> bool {
        matches!(self, Answer::Throttled(_))
    }
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Answer::Throttled(after) => *after,
            Answer::Unavailable => None,
        }
    }
}

const OK: Result<(), Answer> = Ok(());
const FAILED: Result<(), Answer> = Err(Answer::Unavailable);

#[test]
fn the_first_answer_wins_and_a_winning_hedge_is_refunded() {
    let (strategy, _clock) = standard(RetryConfig::builder());
    let mut call = sent(&strategy, fifty_ms());
    let first = call.attempt().unwrap();
    assert_eq!((first.number(), first.is_hedge()), (1, false));
    assert_eq!(call.hedge_wait(), Some(50 * MS));
    let hedge = call.try_hedge().unwrap();
    assert_eq!((hedge.number(), hedge.is_hedge()), (2, true));
    assert_eq!(strategy.scope().quota().level(), 500 - 14);
    assert_eq!(call.hedge_wait(), None, "one hedge per call by default");
    assert_eq!(call.finish(hedge, &OK), Next::Return);
    assert_eq!(call.in_flight(), 0);
    // The first attempt's answer, late: ignored.
    assert_eq!(call.finish(first, &OK), Next::Return);
    let stats = call.stats();
    assert_eq!(
        (stats.attempts(), stats.hedges(), stats.retries()),
        (2, 1, 0)
    );
    drop(call);
    let scope = strategy.scope().stats();
    assert_eq!((scope.successes, scope.failures, scope.attempts), (1, 0, 2));
    assert_eq!(scope.retries, 0, "a hedge is no retry");
    assert_eq!(
        strategy.scope().quota().level(),
        500,
        "the winning hedge's cost came back"
    );
}

#[test]
fn a_hedge_that_lost_stays_charged_under_a_fixed_quota() {
    // The AWS SDKs' rule: a success gives back its last attempt's cost, the winner's. (The
    // default's traffic-sized quota gives back every draw of a call that succeeds, its hedges'
    // included: `hedged_lending_tests`.)
    let (strategy, _clock) = standard(RetryConfig::builder().quota(Quota::Fixed(500)));
    let mut call = sent(&strategy, fifty_ms());
    let first = call.attempt().unwrap();
    let hedge = call.try_hedge().unwrap();
    assert_eq!(call.finish(first, &OK), Next::Return);
    assert_eq!(call.finish(hedge, &OK), Next::Return);
    drop(call);
    assert_eq!(strategy.scope().quota().level(), 500 - 14);
    assert_eq!(strategy.scope().stats().attempts, 2);
}

#[test]
fn a_retryable_failure_waits_for_the_other_copy() {
    let (strategy, _clock) = standard(RetryConfig::builder());
    let mut call = sent(&strategy, fifty_ms());
    let first = call.attempt().unwrap();
    let hedge = call.try_hedge().unwrap();
    assert_eq!(call.finish(first, &FAILED), Next::Wait);
    assert_eq!(call.in_flight(), 1);
    assert_eq!(call.finish(hedge, &OK), Next::Return);
    drop(call);
    let scope = strategy.scope().stats();
    assert_eq!((scope.successes, scope.attempts, scope.retries), (1, 2, 0));
}

#[test]
fn when_every_copy_fails_the_call_retries_and_may_hedge_again() {
    let (strategy, _clock) = standard(RetryConfig::builder().max_attempts(4));
    let hedging = fifty_ms().with_max_hedges(2).unwrap();
    let mut call = sent(&strategy, hedging);
    let first = call.attempt().unwrap();
    let hedge = call.try_hedge().unwrap();
    assert_eq!(call.finish(hedge, &FAILED), Next::Wait);
    assert_eq!(call.finish(first, &FAILED), Next::Retry);
    assert_eq!(call.hedge_wait(), None, "nothing in flight to hedge");
    // The retry's backoff, then its permit: the backoff follows the attempts sent, the hedge
    // included (50 ms × 2^1, full jitter drew 1).
    assert_eq!(call.next_wait(true), Some(100 * MS));
    assert_eq!(call.next_wait(false), None);
    let retry = call.attempt().unwrap();
    assert_eq!((retry.number(), retry.is_retry()), (3, true));
    assert_eq!(call.hedge_wait(), Some(50 * MS));
    let second_hedge = call.try_hedge().unwrap();
    assert_eq!(second_hedge.number(), 4);
    assert_eq!(call.hedge_wait(), None, "max_hedges = 2 sent");
    assert_eq!(call.finish(second_hedge, &OK), Next::Return);
    let stats = call.stats();
    assert_eq!(
        (stats.attempts(), stats.hedges(), stats.retries()),
        (4, 2, 1)
    );
}

#[test]
fn hedges_and_retries_share_max_attempts() {
    let (strategy, _clock) = standard(RetryConfig::builder().max_attempts(2));
    let hedging = fifty_ms().with_max_hedges(3).unwrap();
    let mut call = sent(&strategy, hedging);
    let first = call.attempt().unwrap();
    let hedge = call.try_hedge().unwrap();
    assert_eq!(call.try_hedge(), Err(HedgeRefusal::MaxAttempts));
    assert_eq!(
        call.hedge_wait(),
        None,
        "a refusal stops the call's hedging"
    );
    assert_eq!(call.finish(first, &FAILED), Next::Wait);
    // The last copy fails: no attempt is left for a retry.
    assert_eq!(call.finish(hedge, &FAILED), Next::Return);
    assert_eq!(strategy.scope().stats().failures, 1);
}

#[test]
fn a_hedge_is_not_sent_past_the_deadline() {
    let (strategy, clock) = standard(RetryConfig::builder().timeout(100 * MS));
    let mut call = sent(&strategy, fifty_ms());
    clock.advance(101 * MS);
    assert_eq!(call.try_hedge(), Err(HedgeRefusal::Deadline));
}

#[test]
fn a_throttle_stops_the_calls_hedging_and_pauses_the_scopes() {
    let (strategy, clock) = standard(RetryConfig::builder());
    let hedging = fifty_ms().with_max_hedges(2).unwrap();
    let mut call = sent(&strategy, hedging);
    let first = call.attempt().unwrap();
    let hedge = call.try_hedge().unwrap();
    let throttled: Result<(), Answer> = Err(Answer::Throttled(Some(Duration::from_secs(3))));
    assert_eq!(call.finish(first, &throttled), Next::Wait);
    assert_eq!(call.hedge_wait(), None, "no more hedges for this call");
    assert_eq!(call.finish(hedge, &OK), Next::Return);
    // Another call of the scope: paused for the Retry-After (3 s, longer than 1 s).
    let mut other = sent(&strategy, hedging);
    assert_eq!(other.try_hedge(), Err(HedgeRefusal::Throttled));
    drop(other);
    clock.advance(Duration::from_secs(3));
    let mut later = sent(&strategy, hedging);
    assert!(later.try_hedge().is_ok());
    drop(later);
    // A throttle without Retry-After, met by a call that does not hedge: THROTTLE_PAUSE.
    let token = strategy.acquire_initial_token();
    let retry = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling));
    strategy.record_success(retry.unwrap());
    let mut paused = sent(&strategy, hedging);
    assert_eq!(paused.try_hedge(), Err(HedgeRefusal::Throttled));
    drop(paused);
    clock.advance(THROTTLE_PAUSE);
    let mut resumed = sent(&strategy, hedging);
    assert!(resumed.try_hedge().is_ok());
}

#[test]
fn a_hedge_keeps_half_the_quota_for_retries() {
    // 40 tokens, a hedge costs 14: 40 - 14 = 26 >= 20 pays; 26 - 14 = 12 < 20 does not.
    let (strategy, _clock) = standard(RetryConfig::builder().quota(Quota::Fixed(40)));
    let mut one = sent(&strategy, fifty_ms());
    assert!(one.try_hedge().is_ok());
    let mut two = sent(&strategy, fifty_ms());
    assert_eq!(two.try_hedge(), Err(HedgeRefusal::QuotaExhausted));
    assert_eq!(strategy.scope().quota().level(), 26);
    // A retry may still take what hedges leave.
    let token = strategy.acquire_initial_token();
    assert!(
        strategy
            .refresh_retry_token(token, &RetryReason::error(ErrorKind::Transient))
            .is_ok_and(|retry| {
                strategy.abandon(retry);
                true
            })
    );
}

#[test]
fn quota_off_hedges_for_free() {
    let (strategy, _clock) = standard(RetryConfig::builder().quota(Quota::Off));
    let mut call = sent(&strategy, fifty_ms());
    assert!(call.try_hedge().is_ok());
}

#[test]
fn a_call_not_idempotent_sends_no_hedge() {
    let (strategy, _clock) = standard(RetryConfig::builder());
    let mut call =
        HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, fifty_ms()).idempotent(false);
    assert_eq!(call.next_wait(true), None);
    assert_eq!(call.hedge_wait(), None);
    assert_eq!(
        call.try_hedge(),
        Err(HedgeRefusal::NoHedgeDue),
        "refused once, at its send"
    );
}

#[test]
fn a_dropped_call_settles_every_copy() {
    let (strategy, _clock) = standard(RetryConfig::builder());
    let mut call = sent(&strategy, fifty_ms());
    call.try_hedge().unwrap();
    drop(call);
    let scope = strategy.scope().stats();
    assert_eq!((scope.attempts, scope.failures, scope.successes), (2, 1, 0));
    // A retry granted and not sent: abandoned, its cost back.
    let mut call = sent(&strategy, fifty_ms());
    let first = call.attempt().unwrap();
    assert_eq!(call.finish(first, &FAILED), Next::Retry);
    let level = strategy.scope().quota().level();
    drop(call);
    assert_eq!(strategy.scope().quota().level(), level + 14);
}

#[test]
fn a_percentile_waits_for_its_samples() {
    let (strategy, clock) = standard(RetryConfig::builder());
    let p95 = Hedging::at_percentile(95.0).unwrap();
    for i in 0..200u32 {
        let mut call = sent(&strategy, p95);
        assert_eq!(call.hedge_wait(), None, "call {i}: too few samples");
        let first = call.attempt().unwrap();
        clock.advance(MS * (1 + i % 20));
        assert_eq!(call.finish(first, &OK), Next::Return);
    }
    let hedging = strategy.scope_hedging().unwrap();
    assert_eq!(hedging.samples(), 200);
    // A second later (the percentile is read at most once a second), p95 of 1..=20 ms: 19 ms,
    // read as its bucket's upper edge (at most 12.5 % above).
    clock.advance(Duration::from_secs(1));
    let mut call = sent(&strategy, p95);
    let delay = call.hedge_wait().unwrap();
    assert!(delay >= 19 * MS && delay <= 19 * MS * 9 / 8, "{delay:?}");
}

#[test]
fn a_failed_first_attempt_is_no_latency_sample_and_a_cut_one_is_censored() {
    let (strategy, clock) = standard(RetryConfig::builder());
    let mut call = sent(&strategy, fifty_ms());
    let first = call.attempt().unwrap();
    clock.advance(5 * MS);
    assert_eq!(call.finish(first, &FAILED), Next::Retry);
    assert_eq!(call.next_wait(true), Some(50 * MS));
    assert_eq!(call.next_wait(false), None);
    let retry = call.attempt().unwrap();
    assert_eq!(call.finish(retry, &OK), Next::Return);
    assert_eq!(strategy.scope_hedging().unwrap().samples(), 0);
    // A first attempt the hedge beat: its time in flight until then.
    let mut call = sent(&strategy, fifty_ms());
    clock.advance(50 * MS);
    let hedge = call.try_hedge().unwrap();
    clock.advance(10 * MS);
    assert_eq!(call.finish(hedge, &OK), Next::Return);
    let hedging = strategy.scope_hedging().unwrap();
    assert_eq!(hedging.samples(), 1);
}

#[test]
fn adaptive_hedges_only_with_a_spare_permit() {
    let clock = Arc::new(ManualClock::new());
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .unwrap();
    let strategy =
        AdaptiveStrategy::from_builder(StandardStrategy::builder(config).clock(clock.clone()))
            .congestion(CongestionSignals::Throttling);
    let mut call = sent(&strategy, fifty_ms());
    assert!(call.try_hedge().is_ok(), "the limiter is off");
    drop(call);
    // A throttle switches the limiter on with an empty bucket.
    let token = strategy.acquire_initial_token();
    let retry = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling));
    if let Ok(retry) = retry {
        strategy.abandon(retry);
    }
    assert!(strategy.scope().limiter().is_enabled());
    clock.advance(THROTTLE_PAUSE);
    let mut call = HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, fifty_ms());
    while call.next_wait(false).is_some() {
        clock.advance(Duration::from_secs(1));
    }
    assert_eq!(call.try_hedge(), Err(HedgeRefusal::RateLimited));
}

#[test]
fn the_attempt_tells_a_hedge_from_a_retry() {
    assert!(Attempt::copy(2, Some(3), true).is_hedge());
    let (strategy, _clock) = standard(RetryConfig::builder());
    let mut call = sent(&strategy, fifty_ms());
    call.try_hedge().unwrap();
    assert!(call.attempt().unwrap().is_hedge());
}
