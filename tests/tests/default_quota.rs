//! The default quota protects without starving: a young scope grants at least what `aws-2026`
//! would, a caller that calls rarely keeps every retry its calls need, a call after a quiet
//! window gets one whole call's retries, and a sparse fleet in an outage still gets none of
//! those refills. Each workload runs in virtual time on a `ManualClock`; every expected figure
//! is derived in its comment.

use std::sync::Arc;
use std::time::Duration;

use retry_core::backoff::FixedRandom;
use retry_core::clock::ManualClock;
use retry_core::strategy::RetryToken;
use retry_core::{ErrorKind, RetryConfig, RetryReason, RetryStrategy, StandardStrategy};

fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

/// A strategy following `config` on a manual clock, the jitter drawing 1.0.
fn on_manual_clock(config: RetryConfig) -> (StandardStrategy, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let strategy = StandardStrategy::builder(config)
        .clock(clock.clone())
        .random(Arc::new(FixedRandom(1.0)))
        .build();
    (strategy, clock)
}

fn aws_2026() -> RetryConfig {
    RetryConfig::aws_2026().build().expect("valid preset")
}

fn server_error() -> RetryReason {
    RetryReason::error(ErrorKind::Server)
}

/// One call that fails `failures` times before it succeeds: whether it succeeded (its retries
/// were granted).
fn call_failing(strategy: &StandardStrategy, failures: u32) -> bool {
    let mut token = strategy.acquire_initial_token();
    for _ in 0..failures {
        match strategy.refresh_retry_token(token, &server_error()) {
            Ok(next) => token = next,
            Err(_) => return false,
        }
    }
    strategy.record_success(token);
    true
}

/// One call whose every attempt fails: the retries it was granted.
fn failing_call(strategy: &StandardStrategy) -> u32 {
    let mut token = strategy.acquire_initial_token();
    let mut retries = 0;
    while let Ok(next) = strategy.refresh_retry_token(token, &server_error()) {
        retries += 1;
        token = next;
    }
    retries
}

/// `calls` calls `gap` apart, each failing `max_attempts - 1` times and then succeeding:
/// whether each succeeded.
fn sparse_caller(config: RetryConfig, calls: usize, gap: Duration) -> Vec<bool> {
    let failures = config.max_attempts() - 1;
    let (strategy, clock) = on_manual_clock(config);
    (0..calls)
        .map(|_| {
            let succeeded = call_failing(&strategy, failures);
            clock.advance(gap);
            succeeded
        })
        .collect()
}

#[test]
fn a_sparse_caller_whose_calls_succeed_after_every_retry_keeps_its_retries() {
    let calls = sparse_caller(RetryConfig::default(), 100, secs(60));
    let failed: Vec<usize> = (1..=100).filter(|&n| !calls[n - 1]).collect();
    assert_eq!(failed, [] as [usize; 0], "calls that failed");

    // The same with five attempts: four retries, 56 tokens, every minute.
    let five = RetryConfig::builder()
        .max_attempts(5)
        .build()
        .expect("valid");
    assert!(sparse_caller(five, 100, secs(90)).iter().all(|&ok| ok));
}

#[test]
fn aws_2026_starves_the_same_sparse_caller_from_its_35th_call() {
    // A success gives back only its last retry's 14: each call costs 28 - 14 = 14 net, so
    // after 34 calls 500 - 476 = 24 tokens are left, too few for a call's two retries: the
    // 35th call's second retry is refused (10 left), and no call succeeds after that (a call
    // that retried earns no reward, and nothing refills).
    let calls = sparse_caller(aws_2026(), 100, secs(60));
    let first_failure = calls.iter().position(|&ok| !ok).map(|i| i + 1);
    assert_eq!(first_failure, Some(35));
    assert_eq!(calls.iter().filter(|&&ok| ok).count(), 34);
}

/// The newcomer's workload in lockstep: `workers` workers share one scope and fetch `keys`
/// keys, each key failing twice before it serves; every round, each worker makes one attempt
/// of its current key, and a worker whose call ended (served, or its retry refused) takes the
/// next key. The clock moves 50 ms a round. Returns the calls served and the retries granted.
fn lockstep(config: RetryConfig, workers: usize, keys: u32) -> (u32, u32) {
    const FAILURES_PER_KEY: u32 = 2;
    let (strategy, clock) = on_manual_clock(config);
    let mut next_key = 0;
    let start = |next_key: &mut u32| {
        (*next_key < keys).then(|| {
            *next_key += 1;
            strategy.acquire_initial_token()
        })
    };
    let mut calls: Vec<Option<RetryToken>> = (0..workers).map(|_| start(&mut next_key)).collect();
    let (mut served, mut retries) = (0, 0);
    while calls.iter().any(Option::is_some) {
        for call in &mut calls {
            let Some(token) = call.take() else { continue };
            if token.attempt() > FAILURES_PER_KEY {
                strategy.record_success(token);
                served += 1;
            } else if let Ok(next) = strategy.refresh_retry_token(token, &server_error()) {
                retries += 1;
                *call = Some(next);
                continue;
            }
            *call = start(&mut next_key);
        }
        clock.advance(Duration::from_millis(50));
    }
    (served, retries)
}

#[test]
fn a_cold_start_never_grants_fewer_retries_than_aws_2026() {
    let (served, retries) = lockstep(RetryConfig::default(), 20, 190);
    let (aws_served, aws_retries) = lockstep(aws_2026(), 20, 190);
    // aws-2026: 500 tokens for 20 calls in flight that each hold up to 28, and 14 net per
    // served key: the 16-20 of 190 (15 in lockstep), then every retry refused.
    assert!(
        (10..=20).contains(&aws_served),
        "aws-2026 served {aws_served}"
    );
    assert!(
        served >= aws_served && retries >= aws_retries,
        "default: {served} served, {retries} retries; aws-2026: {aws_served}, {aws_retries}"
    );
}

#[test]
fn a_call_ten_minutes_after_one_that_spent_the_quota_gets_its_retries() {
    let (strategy, clock) = on_manual_clock(RetryConfig::default());
    // The case: one call spends its retries, the next comes ten minutes later.
    assert_eq!(failing_call(&strategy), 2);
    clock.advance(secs(600));
    assert!(call_failing(&strategy, 2), "the call ten minutes later");
}

#[test]
fn a_drained_quota_gets_one_whole_call_back_after_a_quiet_window_only() {
    let (strategy, clock) = on_manual_clock(RetryConfig::default());
    // 1 call/s for 120 s: a retry finds 60 tokens (one per call of the last minute).
    for _ in 0..120 {
        assert!(call_failing(&strategy, 0));
        clock.advance(secs(1));
    }
    // An outage drains it: 60 / 14 = 4 retries, then none.
    let outage: u32 = (0..10)
        .map(|_| {
            let retries = failing_call(&strategy);
            clock.advance(secs(1));
            retries
        })
        .sum();
    assert_eq!(outage, 4);
    // A sparse caller in the outage asks every 14 s: never a quiet window, never a refill.
    let sparse: Vec<u32> = (0..20)
        .map(|_| {
            clock.advance(secs(14));
            failing_call(&strategy)
        })
        .collect();
    assert_eq!(sparse, [0; 20]);
    // Ten minutes without a retry asked: the next retry finds one whole call's retries.
    clock.advance(secs(600));
    assert!(
        call_failing(&strategy, 2),
        "the call after ten quiet minutes"
    );
}

#[test]
fn stats_report_the_cap_a_retry_meets() {
    let (strategy, clock) = on_manual_clock(RetryConfig::default());
    // A new scope: a retry may find the young scope's 500 tokens, and no more.
    let stats = strategy.scope().stats();
    assert_eq!((stats.quota_level, stats.quota_capacity), (500, 500));
    // Its traffic does not lower that cap while it is young: 2 calls/s for 30 s is 60 tokens.
    for _ in 0..60 {
        assert!(call_failing(&strategy, 0));
        clock.advance(Duration::from_millis(500));
    }
    assert_eq!(strategy.scope().stats().quota_capacity, 500);
    // 90 s more at 2/s: older than its window, the cap is one token per call of the last
    // minute, 120, and retries take exactly that (8 x 14 = 112 of it).
    for _ in 0..180 {
        assert!(call_failing(&strategy, 0));
        clock.advance(Duration::from_millis(500));
    }
    assert_eq!(strategy.scope().stats().quota_capacity, 120);
    let retries: u32 = (0..10).map(|_| failing_call(&strategy)).sum();
    assert_eq!(retries, 8);
}

#[test]
fn abandoning_a_granted_retry_gives_back_that_retry_only() {
    let (strategy, _clock) = on_manual_clock(RetryConfig::default());
    let token = strategy.acquire_initial_token();
    let token = strategy
        .refresh_retry_token(token, &server_error())
        .expect("first retry");
    let token = strategy
        .refresh_retry_token(token, &server_error())
        .expect("second retry");
    assert_eq!(strategy.scope().quota().level(), 500 - 28);
    // The second retry was granted but never sent (the call was cancelled while it waited):
    // its 14 come back, the first retry's (sent, and failed) do not.
    strategy.abandon(token);
    assert_eq!(strategy.scope().quota().level(), 500 - 14);
}

#[test]
fn a_success_gives_back_every_retry_it_paid_for_on_the_default_only() {
    let (default, _) = on_manual_clock(RetryConfig::default());
    assert!(call_failing(&default, 2));
    assert_eq!(default.scope().quota().level(), 500);
    // aws-2026 keeps the AWS SDKs' rule: the last retry's cost only.
    let (aws, _) = on_manual_clock(aws_2026());
    assert!(call_failing(&aws, 2));
    assert_eq!(aws.scope().quota().level(), 500 - 14);
}

#[test]
fn threads_racing_after_a_quiet_window_share_one_floor() {
    // A scope a window old whose quota an outage drained; ten minutes later 8 threads ask for
    // a retry at the same instant: one of them claims the quiet window, and the floor it finds,
    // 2 x 14, pays for 2 retries in all, whatever the interleaving.
    let (strategy, clock) = on_manual_clock(RetryConfig::default());
    clock.advance(secs(120));
    while failing_call(&strategy) > 0 {}
    clock.advance(secs(600));
    let refused_before = strategy.scope().stats().quota_exhausted;
    let barrier = std::sync::Barrier::new(8);
    let granted: u32 = std::thread::scope(|threads| {
        let askers: Vec<_> = (0..8)
            .map(|_| {
                threads.spawn(|| {
                    barrier.wait();
                    let token = strategy.acquire_initial_token();
                    match strategy.refresh_retry_token(token, &server_error()) {
                        Ok(token) => {
                            strategy.record_failure(token);
                            1
                        }
                        Err(_) => 0,
                    }
                })
            })
            .collect();
        askers
            .into_iter()
            .map(|asker| asker.join().expect("no panic"))
            .sum()
    });
    assert_eq!(granted, 2);
    assert_eq!(strategy.scope().stats().quota_exhausted - refused_before, 6);
}
