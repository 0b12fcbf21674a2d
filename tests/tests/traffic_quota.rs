//! A retry quota sized by the scope's traffic (`quota_window`, on by default): a retry finds at
//! most one token per call of the last window and at least one whole call's retries, so a
//! fleet's retries during an outage do not grow with the number of clients that carry the same
//! load (once the scope is a window old: `default_quota.rs` tests a young scope). Every
//! expected figure below is derived by hand in its comment.

use std::sync::Arc;
use std::time::Duration;

use retry_core::backoff::FixedRandom;
use retry_core::clock::ManualClock;
use retry_core::strategy::SendPermit;
use retry_core::{
    ErrorKind, RetryConfig, RetryError, RetryReason, RetryStrategy, StandardStrategy,
};

/// A strategy on a manual clock with the default configuration (costs 14 / 14 / 5, a 60 s
/// window, at most 5000 tokens).
fn default_strategy() -> (StandardStrategy, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let strategy = StandardStrategy::builder(RetryConfig::default())
        .clock(clock.clone())
        .random(Arc::new(FixedRandom(1.0)))
        .build();
    (strategy, clock)
}

/// `calls_per_sec` successful first attempts each second for `seconds` seconds.
fn traffic(strategy: &StandardStrategy, clock: &ManualClock, calls_per_sec: u32, seconds: u32) {
    let step = Duration::from_secs(1) / calls_per_sec;
    for _ in 0..calls_per_sec * seconds {
        let mut token = strategy.acquire_initial_token();
        assert_eq!(
            strategy.acquire_send_permit(&mut token),
            SendPermit::Granted,
            "standard mode grants"
        );
        strategy.record_success(token);
        clock.advance(step);
    }
}

/// Retries granted to failing calls (one retry each) until the quota refuses one.
fn retries_until_exhausted(strategy: &StandardStrategy) -> u32 {
    let mut retries = 0;
    loop {
        let token = strategy.acquire_initial_token();
        match strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Server)) {
            Ok(token) => {
                retries += 1;
                strategy.record_failure(token);
            }
            Err(RetryError::QuotaExhausted { .. }) => return retries,
            Err(other) => panic!("unexpected refusal: {other}"),
        }
    }
}

#[test]
fn a_retry_finds_one_token_per_call_of_the_last_minute() {
    let (strategy, clock) = default_strategy();
    // 2 calls/s for 60 s: 120 calls, so a retry finds 120 tokens (the level itself is the
    // floor 28 plus one token per success, 148).
    traffic(&strategy, &clock, 2, 60);
    let stats = strategy.scope().stats();
    assert_eq!((stats.quota_level, stats.quota_capacity), (120, 120));
    // An outage: each retry costs 14, so 120 / 14 = 8 retries (112 tokens), then none.
    assert_eq!(retries_until_exhausted(&strategy), 8);
    assert_eq!(strategy.scope().stats().quota_level, 8);
}

#[test]
fn a_busy_client_is_capped_at_the_capacity_and_a_quiet_one_keeps_one_call() {
    let (busy, busy_clock) = default_strategy();
    // 100 calls/s for 60 s: 6000 tokens, capped at 5000: 5000 / 14 = 357 retries.
    traffic(&busy, &busy_clock, 100, 60);
    assert_eq!(busy.scope().stats().quota_capacity, 5_000);
    assert_eq!(retries_until_exhausted(&busy), 357);

    let (quiet, quiet_clock) = default_strategy();
    // One call every 10 s for 100 s (older than its window): 0.1/s x 60 s = 6 tokens, below
    // the floor of one whole call's retries, (3 - 1) x 14 = 28: 2 retries.
    for _ in 0..10 {
        traffic(&quiet, &quiet_clock, 1, 1);
        quiet_clock.advance(Duration::from_secs(9));
    }
    assert_eq!(quiet.scope().stats().quota_capacity, 28);
    assert_eq!(retries_until_exhausted(&quiet), 2);
}

#[test]
fn retries_per_client_scale_with_traffic_so_the_fleet_total_does_not_depend_on_client_count() {
    // The same 40 calls/s for 60 s carried by 2 clients or by 8.
    let fleet_retries = |clients: u32| -> u32 {
        (0..clients)
            .map(|_| {
                let (strategy, clock) = default_strategy();
                traffic(&strategy, &clock, 40 / clients, 60);
                retries_until_exhausted(&strategy)
            })
            .sum()
    };
    // 2 x (20/s x 60 s = 1200 tokens) / 14 = 2 x 85; 8 x (5/s x 60 s = 300) / 14 = 8 x 21:
    // equal but for whole retries. (A fixed quota of 500 gives every client 500 / 14 = 35:
    // 70 against 280.)
    assert_eq!(fleet_retries(2), 2 * 85);
    assert_eq!(fleet_retries(8), 8 * 21);
}

#[test]
fn the_cap_follows_a_change_of_traffic_within_about_a_window() {
    let (strategy, clock) = default_strategy();
    // 10 calls/s for 60 s, then a first retry: 600 tokens, one taken.
    traffic(&strategy, &clock, 10, 60);
    assert_eq!(retries_until_exhausted_after(&strategy, 1), 1);
    assert_eq!(strategy.scope().stats().quota_capacity, 600);
    // The traffic falls to 1 call/s for 60 s: 61 calls (the failed one included) in 60 s,
    // 1.0167/s; the average over the last window moves 1 - e^-1 = 63.2 % of the way from 10:
    // 10 - 0.6321 x 8.9833 = 4.3215/s, 259 tokens.
    traffic(&strategy, &clock, 1, 60);
    assert_eq!(strategy.scope().stats().quota_capacity, 259);
}

/// Grants `retries` retries (failing calls) and returns how many were granted.
fn retries_until_exhausted_after(strategy: &StandardStrategy, retries: u32) -> u32 {
    (0..retries)
        .filter(|_| {
            let token = strategy.acquire_initial_token();
            match strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Server)) {
                Ok(token) => {
                    strategy.record_failure(token);
                    true
                }
                Err(_) => false,
            }
        })
        .count() as u32
}

#[test]
fn a_zero_window_is_rejected() {
    let error = RetryConfig::builder()
        .quota_window(Duration::ZERO)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "quota_window must be longer than zero: leave it unset for no limit"
    );
}

#[test]
fn threads_sharing_a_traffic_sized_scope_keep_its_counts_and_bounds() {
    // 8 threads x 2000 calls on one default scope, the clock moving 1 ms per call, so that the
    // traffic is sampled (once a second, under a try_lock) while other threads ask for
    // retries. One call in 4 fails until the quota refuses; every granted retry is sent.
    const THREADS: u64 = 8;
    const CALLS: u64 = 2_000;
    let (strategy, clock) = default_strategy();
    let strategy = Arc::new(strategy);
    let granted: u64 = std::thread::scope(|threads| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                let (strategy, clock) = (Arc::clone(&strategy), Arc::clone(&clock));
                threads.spawn(move || {
                    let mut granted = 0;
                    for call in 0..CALLS {
                        clock.advance(Duration::from_millis(1));
                        let mut token = strategy.acquire_initial_token();
                        if (call + thread) % 4 != 0 {
                            strategy.record_success(token);
                            continue;
                        }
                        let reason = RetryReason::error(ErrorKind::Server);
                        while let Ok(next) = strategy.refresh_retry_token(token, &reason) {
                            granted += 1;
                            token = next;
                        }
                    }
                    granted
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("no panic"))
            .sum()
    });
    let stats = strategy.scope().stats();
    assert_eq!(stats.successes + stats.failures, THREADS * CALLS);
    assert_eq!(stats.failures, THREADS * CALLS / 4);
    assert_eq!(stats.retries, granted);
    assert_eq!(stats.attempts, THREADS * CALLS + granted);
    assert!(granted > 0, "some retries were granted");
    assert!(stats.quota_level <= stats.quota_capacity);
    assert!(stats.quota_capacity <= 5_000);
}
