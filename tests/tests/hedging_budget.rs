//! A scope's hedge budget (`retry_core::hedge::ScopeHedging::budget`), on virtual time: hedging
//! at a percentile sends at most the share of calls the percentile stands for (5 % at p95),
//! plus `HEDGE_BURST` and `HEDGE_DEBT`, however many calls outlast the percentile; while the
//! budget is short a call is hedged at twice the percentile, so the slow calls are still
//! hedged; many threads sharing one scope spend no more than their calls earned.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_core::classify::RetryInfoClassifier;
use retry_core::clock::ManualClock;
use retry_core::driver::{HedgedLoop, Next, NoHook};
use retry_core::hedge::{DELAY_STRETCH, HEDGE_BURST, HEDGE_DEBT, HedgeRefusal, Hedging};
use retry_core::{
    Quota, Retry, RetryConfig, RetryInfo, RetrySafety, RetryStrategy, StandardStrategy,
};
use retry_tests::hedging_strategy;
use tokio::time::{Instant, sleep};

const MS: Duration = Duration::from_millis(1);

/// The calls' only failure: none happens here.
#[derive(Debug, Clone, PartialEq)]
struct Never;

impl RetryInfo for Never {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

fn p95() -> Hedging {
    Hedging::at_percentile(95.0).expect("a percentile")
}

/// One hedged call at p95 whose first copy answers after `first` and every hedge after
/// `hedge`: the copies it made.
async fn call(strategy: &StandardStrategy, first: Duration, hedge: Duration) -> u32 {
    let made = AtomicU32::new(0);
    Retry::new(strategy)
        .hedge(p95())
        .expect("an idempotent call")
        .run(|| {
            let copy = made.fetch_add(1, Ordering::SeqCst) + 1;
            let took = if copy == 1 { first } else { hedge };
            async move {
                sleep(took).await;
                Ok::<u32, Never>(copy)
            }
        })
        .await
        .expect("no failure");
    made.load(Ordering::SeqCst)
}

/// 200 calls, 190 answering in 10 ms and 10 in 50 ms: the scope's p95 is known (10 to
/// 11.25 ms), and its budget full ([`HEDGE_BURST`]); then a second, so that the percentile is
/// read anew.
async fn warm_up(strategy: &StandardStrategy) -> Duration {
    for i in 0..200u32 {
        let took = if i % 20 == 0 { 50 * MS } else { 10 * MS };
        assert_eq!(
            call(strategy, took, took).await,
            1,
            "no hedge before 200 samples"
        );
    }
    sleep(Duration::from_secs(1)).await;
    let hedging = strategy.scope_hedging().expect("a scope that hedged");
    assert_eq!(hedging.budget(), f64::from(HEDGE_BURST));
    hedging.latency(95.0).expect("200 samples")
}

/// A slow spell: every call's first copy now takes 200 ms, far past the p95 measured before it.
/// The percentile of the last minute or two follows slowly (the hedged calls record the time
/// their first copy had been in flight, just past the percentile), so without a budget every
/// call of the spell is hedged: 400 hedges for 400 calls, all extra load. The budget holds them
/// to 5 % of the scope's calls and its burst and debt.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_slow_spell_hedges_no_more_than_the_percentiles_share() {
    let strategy = hedging_strategy(3);
    warm_up(&strategy).await;
    let mut hedges = 0;
    for _ in 0..400 {
        hedges += call(&strategy, 200 * MS, 10 * MS).await - 1;
    }
    let calls = 600;
    let bound = calls / 20 + HEDGE_BURST + HEDGE_DEBT;
    println!("a slow spell of 400 calls after 200: {hedges} hedges (bound {bound})");
    assert!(hedges <= bound, "{hedges} hedges for {calls} calls");
    // The slow calls are still hedged: the burst at the p95, then more at twice it, in debt,
    // until the percentile has caught up with the spell (the unhedged calls' 200 ms samples).
    assert!(hedges > HEDGE_BURST, "{hedges} hedges");
}

/// The budget's two hedges go at the p95; the next slow call, with less than one hedge left, is
/// hedged at twice the p95 (in debt), still in time to save it.
#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn while_the_budget_is_short_the_delay_is_twice_the_percentile() {
    let strategy = hedging_strategy(3);
    let p95 = warm_up(&strategy).await;
    let hedged_after = |started: Instant, hedge: Duration| started.elapsed() - hedge;
    for spent in 1..=HEDGE_BURST {
        let started = Instant::now();
        assert_eq!(call(&strategy, 1_000 * MS, 10 * MS).await, 2);
        let at = hedged_after(started, 10 * MS);
        assert!(
            at >= p95 && at <= p95 + MS,
            "hedge {spent} at {at:?}, p95 {p95:?}"
        );
    }
    let hedging = strategy.scope_hedging().expect("a scope that hedged");
    assert!(hedging.budget() < 1.0, "{}", hedging.budget());
    let started = Instant::now();
    assert_eq!(call(&strategy, 1_000 * MS, 10 * MS).await, 2);
    let at = hedged_after(started, 10 * MS);
    let stretched = p95 * DELAY_STRETCH;
    assert!(
        at >= stretched && at <= stretched + MS,
        "hedged at {at:?}, p95 {p95:?}"
    );
    assert!(hedging.budget() < 0.0, "in debt: {}", hedging.budget());
}

/// Eight threads share one scope and each of their 1,000 calls asks for a hedge as soon as it
/// may: the hedges granted are what the calls earned (5 % of 8,000), the burst the warm-up left
/// and at most the debt; never more, whatever the interleaving.
#[test]
fn threads_sharing_a_scope_spend_no_more_than_their_calls_earned() {
    let clock = Arc::new(ManualClock::new());
    let config = RetryConfig::builder()
        .quota(Quota::Off)
        .build()
        .expect("a valid config");
    let strategy = StandardStrategy::builder(config)
        .clock(clock.clone())
        .build();
    for _ in 0..200 {
        let mut call = HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, p95());
        assert_eq!(call.next_wait(true), None);
        clock.advance(10 * MS);
        let first = call.attempt().expect("in flight");
        assert_eq!(
            call.finish(first, &Ok::<_, std::io::Error>(())),
            Next::Return
        );
    }
    clock.advance(Duration::from_secs(1));
    let hedges = AtomicU32::new(0);
    let refused = AtomicU32::new(0);
    std::thread::scope(|threads| {
        for _ in 0..8 {
            threads.spawn(|| {
                for _ in 0..1_000 {
                    let mut call = HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, p95());
                    assert_eq!(call.next_wait(true), None);
                    assert!(call.hedge_wait().is_some(), "the p95 is known");
                    let first = call.attempt().expect("in flight");
                    let winner = match call.try_hedge() {
                        Ok(hedge) => {
                            hedges.fetch_add(1, Ordering::Relaxed);
                            hedge
                        }
                        Err(HedgeRefusal::BudgetExhausted) => {
                            refused.fetch_add(1, Ordering::Relaxed);
                            first
                        }
                        Err(other) => panic!("refused for {other:?}"),
                    };
                    let outcome: Result<(), std::io::Error> = Ok(());
                    assert_eq!(call.finish(winner, &outcome), Next::Return);
                }
            });
        }
    });
    let (hedges, refused) = (hedges.into_inner(), refused.into_inner());
    let earned = 8_000 / 20 + HEDGE_BURST;
    println!("8 threads x 1,000 calls: {hedges} hedges, {refused} refused (earned {earned})");
    assert!(hedges <= earned + HEDGE_DEBT, "{hedges} hedges");
    assert!(hedges + 1 >= earned, "{hedges} hedges");
    assert_eq!(hedges + refused, 8_000);
    let left = strategy.scope_hedging().expect("hedged").budget();
    assert_eq!(
        f64::from(earned) - f64::from(hedges),
        left.round(),
        "{left}"
    );
}
