//! A hedge's payment under the default quota, which lends what calls in flight hold
//! (`quota::Lending`): it is part of its call's account (held while the call runs, given back
//! by every end of the call as a retry's cost is), and it is paid only from what the quota
//! holds, keeping half its cap (gRFC A6), never borrowed against the calls in flight.

use std::sync::Arc;
use std::time::Duration;

use super::{HedgedLoop, Next, NoHook};
use crate::adaptive::CongestionSignals;
use crate::backoff::FixedRandom;
use crate::classify::{ErrorKind, RetryInfoClassifier, RetryReason};
use crate::clock::ManualClock;
use crate::config::{RetryConfig, RetryMode};
use crate::hedge::{HedgeRefusal, Hedging, THROTTLE_PAUSE};
use crate::strategy::{AdaptiveStrategy, RetryStrategy, StandardStrategy};

const MS: Duration = Duration::from_millis(1);
/// The default retry cost, which a hedge pays too.
const COST: u32 = 14;
/// A young default scope's quota: its level and the cap a retry meets.
const YOUNG: u32 = 500;

type Call<'a> = HedgedLoop<&'a StandardStrategy, RetryInfoClassifier, NoHook>;

/// The default strategy (a traffic-sized quota that lends) with `max_attempts`, on a manual
/// clock that stays at 0: a young scope, its cap the AWS SDKs' 500.
fn default_strategy(max_attempts: u32) -> StandardStrategy {
    let config = RetryConfig::builder().max_attempts(max_attempts);
    StandardStrategy::builder(config.build().expect("valid"))
        .clock(Arc::new(ManualClock::new()))
        .random(Arc::new(FixedRandom(1.0)))
        .build()
}

/// A call hedged after 50 ms (up to `max_hedges`), its first attempt sent.
fn sent(strategy: &StandardStrategy, max_hedges: u32) -> Call<'_> {
    let hedging = Hedging::after(50 * MS)
        .and_then(|hedging| hedging.with_max_hedges(max_hedges))
        .expect("valid");
    let mut call = HedgedLoop::new(strategy, RetryInfoClassifier, NoHook, hedging);
    assert_eq!(call.next_wait(true), None);
    call
}

const OK: Result<(), std::io::Error> = Ok(());

fn unavailable() -> Result<(), std::io::Error> {
    Err(std::io::Error::from(std::io::ErrorKind::ConnectionReset))
}

fn not_retryable() -> Result<(), std::io::Error> {
    Err(std::io::Error::from(std::io::ErrorKind::InvalidInput))
}

/// One way a hedged call ends, with one hedge sent (two for the retry's).
type HedgedEnd = fn(&StandardStrategy);

/// Every way a call that sent a hedge ends: `(name, whether it succeeded, the call)`.
fn hedged_ends() -> [(&'static str, bool, HedgedEnd); 8] {
    [
        ("the first attempt wins", true, |strategy| {
            let mut call = sent(strategy, 1);
            let first = call.attempt().expect("sent");
            let hedge = call.try_hedge().expect("a hedge");
            assert_eq!(call.finish(first, &OK), Next::Return);
            let _ = call.finish(hedge, &OK);
        }),
        ("the hedge wins", true, |strategy| {
            let mut call = sent(strategy, 1);
            let hedge = call.try_hedge().expect("a hedge");
            assert_eq!(call.finish(hedge, &OK), Next::Return);
        }),
        (
            "the hedge fails, the first attempt wins",
            true,
            |strategy| {
                let mut call = sent(strategy, 1);
                let first = call.attempt().expect("sent");
                let hedge = call.try_hedge().expect("a hedge");
                assert_eq!(call.finish(hedge, &unavailable()), Next::Wait);
                assert_eq!(call.finish(first, &OK), Next::Return);
            },
        ),
        (
            "both fail, the retry hedges and succeeds",
            true,
            |strategy| {
                let mut call = sent(strategy, 2);
                let first = call.attempt().expect("sent");
                let hedge = call.try_hedge().expect("a hedge");
                assert_eq!(call.finish(first, &unavailable()), Next::Wait);
                assert_eq!(call.finish(hedge, &unavailable()), Next::Retry);
                call.next_wait(true);
                while call.next_wait(false).is_some() {}
                let retry = call.attempt().expect("sent");
                let second = call.try_hedge().expect("a second hedge");
                assert_eq!(call.finish(second, &unavailable()), Next::Wait);
                assert_eq!(call.finish(retry, &OK), Next::Return);
            },
        ),
        ("a copy is not retryable", false, |strategy| {
            let mut call = sent(strategy, 1);
            let first = call.attempt().expect("sent");
            let hedge = call.try_hedge().expect("a hedge");
            assert_eq!(call.finish(hedge, &unavailable()), Next::Wait);
            assert_eq!(call.finish(first, &not_retryable()), Next::Return);
        }),
        ("attempts run out", false, |strategy| {
            let mut call = sent(strategy, 2);
            let first = call.attempt().expect("sent");
            let hedge = call.try_hedge().expect("a hedge");
            assert_eq!(call.finish(first, &unavailable()), Next::Wait);
            assert_eq!(call.finish(hedge, &unavailable()), Next::Retry);
            call.next_wait(true);
            while call.next_wait(false).is_some() {}
            let retry = call.attempt().expect("sent");
            let second = call.try_hedge().expect("a second hedge");
            assert_eq!(call.finish(retry, &unavailable()), Next::Wait);
            assert_eq!(call.finish(second, &unavailable()), Next::Return);
        }),
        ("cancelled with two copies in flight", false, |strategy| {
            let mut call = sent(strategy, 1);
            call.try_hedge().expect("a hedge");
            drop(call);
        }),
        ("cancelled before its retry is sent", false, |strategy| {
            let mut call = sent(strategy, 1);
            let first = call.attempt().expect("sent");
            let hedge = call.try_hedge().expect("a hedge");
            assert_eq!(call.finish(first, &unavailable()), Next::Wait);
            assert_eq!(call.finish(hedge, &unavailable()), Next::Retry);
            drop(call);
        }),
    ]
}

#[test]
fn every_end_of_a_hedged_call_gives_back_what_its_hedges_held() {
    for (end, succeeded, call) in hedged_ends() {
        let strategy = default_strategy(4);
        let scope = strategy.scope();
        call(&strategy);
        let (held, level) = (scope.held_in_flight(), scope.quota().level());
        println!("{end}: held in flight {held}, quota level {level}");
        assert_eq!(held, 0, "{end}: the call's hedges are still held");
        if succeeded {
            // The default's success refund: every draw of the call, its hedges' included.
            assert_eq!(
                level, YOUNG,
                "{end}: a success gives back what the call paid"
            );
        }
    }
}

#[test]
fn hedges_of_calls_that_keep_succeeding_leave_the_quota_as_no_hedging_would() {
    // A healthy scope with a slow tail: every call hedges, and the first attempt answers
    // first. Without hedges its quota would stay full, and nothing would be held.
    let strategy = default_strategy(3);
    let scope = strategy.scope();
    for _ in 0..1_000 {
        let mut call = sent(&strategy, 1);
        let first = call.attempt().expect("sent");
        let hedge = call.try_hedge();
        assert_eq!(call.finish(first, &OK), Next::Return);
        if let Ok(hedge) = hedge {
            let _ = call.finish(hedge, &OK);
        }
    }
    let hedges = scope.stats().attempts - 1_000;
    let (held, level) = (scope.held_in_flight(), scope.quota().level());
    println!("1,000 calls, {hedges} hedges: held in flight {held}, quota level {level}");
    assert_eq!(
        hedges, 1_000,
        "a hedge refunded on success does not drain the quota"
    );
    assert_eq!((held, level), (0, YOUNG));
}

#[test]
fn hedges_never_borrow_against_the_calls_in_flight() {
    // A blackholed upstream, 100 calls in flight. Hedges due before any answer: paid while the
    // quota keeps 250 of its 500, whatever the calls in flight hold.
    let strategy = default_strategy(4);
    let scope = strategy.scope();
    let mut calls: Vec<Call<'_>> = (0..100).map(|_| sent(&strategy, 1)).collect();
    let hedges = calls
        .iter_mut()
        .map(|call| call.try_hedge())
        .filter(Result::is_ok)
        .count() as u32;
    let allowed = (YOUNG - YOUNG / 2) / COST;
    let level = scope.quota().level();
    println!(
        "100 calls in flight: {hedges} hedges, the quota without credit allows {allowed}; level {level}"
    );
    assert_eq!(hedges, allowed);
    assert_eq!(level, YOUNG - allowed * COST);
    drop(calls);
    assert_eq!(scope.held_in_flight(), 0, "cancelled calls hold nothing");

    // 100 more: every first attempt fails and each call's retry borrows what the calls in
    // flight hold (a young scope lends before any evidence), taking the quota into debt. Each
    // retry is then due a hedge: the quota holds nothing to pay it, however much is held.
    let mut calls: Vec<Call<'_>> = (0..100).map(|_| sent(&strategy, 1)).collect();
    for call in &mut calls {
        let first = call.attempt().expect("sent");
        assert_eq!(call.finish(first, &unavailable()), Next::Retry);
        call.next_wait(true);
        while call.next_wait(false).is_some() {}
    }
    let held = scope.held_in_flight();
    println!(
        "100 retries in flight: held {held}, quota level {}",
        scope.quota().level()
    );
    assert_eq!(held, 100 * u64::from(COST), "every retry was lent");
    for call in &mut calls {
        assert_eq!(call.try_hedge(), Err(HedgeRefusal::QuotaExhausted));
    }
    drop(calls);
    assert_eq!(scope.held_in_flight(), 0, "cancelled calls hold nothing");
}

#[test]
fn hedges_racing_on_many_threads_keep_half_the_cap() {
    // 8 threads hedge 50 calls each at once on a young default scope: whatever the
    // interleaving, exactly the hedges that keep 250 of its 500 tokens are paid.
    let strategy = default_strategy(4);
    let granted = std::sync::atomic::AtomicU32::new(0);
    std::thread::scope(|threads| {
        for _ in 0..8 {
            threads.spawn(|| {
                let mut calls: Vec<Call<'_>> = (0..50).map(|_| sent(&strategy, 1)).collect();
                for call in &mut calls {
                    if call.try_hedge().is_ok() {
                        granted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            });
        }
    });
    let granted = granted.into_inner();
    assert_eq!(granted, (YOUNG - YOUNG / 2) / COST);
    assert_eq!(strategy.scope().quota().level(), YOUNG - granted * COST);
    assert_eq!(strategy.scope().held_in_flight(), 0);
}

#[test]
fn a_hedge_the_rate_limiter_refuses_gives_back_what_it_paid() {
    // Adaptive mode on the default quota: a throttle switches the limiter on with an empty
    // bucket; a hedge the quota pays and the limiter then refuses is not sent, and neither the
    // quota nor the calls in flight keep its cost.
    let clock = Arc::new(ManualClock::new());
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid");
    let strategy =
        AdaptiveStrategy::from_builder(StandardStrategy::builder(config).clock(clock.clone()))
            .congestion(CongestionSignals::Throttling);
    let token = strategy.acquire_initial_token();
    let throttled = RetryReason::error(ErrorKind::Throttling);
    if let Ok(retry) = strategy.refresh_retry_token(token, &throttled) {
        strategy.abandon(retry);
    }
    assert!(strategy.scope().limiter().is_enabled());
    clock.advance(THROTTLE_PAUSE);
    let hedging = Hedging::after(50 * MS).expect("valid");
    let mut call = HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, hedging);
    while call.next_wait(false).is_some() {
        clock.advance(Duration::from_secs(1));
    }
    let level = strategy.scope().quota().level();
    assert_eq!(call.try_hedge(), Err(HedgeRefusal::RateLimited));
    let held = strategy.scope().held_in_flight();
    println!("a hedge refused by the limiter: held in flight {held}");
    assert_eq!(held, 0, "the refused hedge is still held");
    assert_eq!(strategy.scope().quota().level(), level);
}

#[test]
fn a_busy_young_scope_hedges_from_its_first_calls() {
    // 40 calls a second for 10 s: the cap follows the traffic (one token per call of the last
    // minute, 2,400) while the level has gained one token per success from the young 500. The
    // young scope is full at what it started with: it hedges, as a fixed quota of 500 would.
    let clock = Arc::new(ManualClock::new());
    let config = RetryConfig::builder().build().expect("valid");
    let strategy = StandardStrategy::builder(config)
        .clock(Arc::clone(&clock) as _)
        .random(Arc::new(FixedRandom(1.0)))
        .build();
    for _second in 0..10 {
        for _ in 0..40 {
            let mut call = sent(&strategy, 1);
            let first = call.attempt().expect("sent");
            assert_eq!(call.finish(first, &OK), Next::Return);
        }
        clock.advance(Duration::from_secs(1));
    }
    let level = strategy.scope().quota().level();
    let mut call = sent(&strategy, 1);
    assert!(
        call.try_hedge().is_ok(),
        "a young scope's hedge, 400 calls in (quota level {level}): refused"
    );
}
