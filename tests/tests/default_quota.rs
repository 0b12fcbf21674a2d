//! The default quota protects without starving: a young scope grants at least what `aws-2026`
//! would, a caller that calls rarely keeps every retry its calls need, a call after a quiet
//! window gets one whole call's retries, a call refused while the scope's calls keep
//! succeeding gets back what it paid, and a fleet in an outage still gets none of those
//! refills (at most one refused call refunded). Each workload runs in virtual time, on a
//! `ManualClock` or tokio's paused clock; every expected figure is derived in its comment.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use examples::store_demo::{GetAnswer, StoreBook, StoreLayout};
use http::StatusCode;
use retry_core::backoff::RandomSource;
use retry_core::backoff::{FixedRandom, SeededRandom};
use retry_core::clock::ManualClock;
use retry_core::http::{HttpStatusError, RetryAfter};
use retry_core::strategy::RetryToken;
use retry_core::{
    ErrorKind, Quota, RetryConfig, RetryReason, RetryStrategy, StandardStrategy, retry,
};

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
    // served key: the issue's 16-20 of 190 (15 in lockstep), then every retry refused.
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
    // The issue's case: one call spends its retries, the next comes ten minutes later.
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

/// The newcomer's store (`examples::store_demo`'s [`StoreBook`], [`StoreLayout::NEWCOMER`])
/// without the network: its answers as the errors `check_status()` makes of them.
struct InMemoryStore(StoreBook);

impl InMemoryStore {
    fn new(layout: StoreLayout) -> Self {
        Self(StoreBook::new(layout))
    }

    fn get(&self, n: u32) -> Result<(), HttpStatusError> {
        let error = |status, retry_after| Err(HttpStatusError::new(status, retry_after));
        match self.0.get(n) {
            Some(GetAnswer::Served) => Ok(()),
            Some(GetAnswer::Throttled) => error(
                StatusCode::TOO_MANY_REQUESTS,
                RetryAfter::After(self.0.layout().retry_after()),
            ),
            Some(GetAnswer::Unavailable) => {
                error(StatusCode::SERVICE_UNAVAILABLE, RetryAfter::Absent)
            }
            Some(GetAnswer::NotFound) | None => error(StatusCode::NOT_FOUND, RetryAfter::Absent),
        }
    }
}

/// The newcomer's program without the network, in virtual time: `workers` tasks fetch the keys
/// of `layout` through one strategy of `config` whose jitter draws from
/// `SeededRandom::new(seed)`; a worker takes the next key when its call ends. An attempt yields
/// once (as a request on loopback does) and takes no time, so every wait is a backoff or a
/// `Retry-After`. Returns the keys served.
async fn newcomers_program(
    config: RetryConfig,
    layout: StoreLayout,
    workers: usize,
    seed: u64,
) -> u32 {
    let strategy = Arc::new(
        StandardStrategy::builder(config)
            .random(Arc::new(SeededRandom::new(seed)))
            .build(),
    );
    let store = Arc::new(InMemoryStore::new(layout));
    let next_key = Arc::new(AtomicU32::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..workers {
        let (strategy, store, next_key) = (
            Arc::clone(&strategy),
            Arc::clone(&store),
            Arc::clone(&next_key),
        );
        tasks.spawn(async move {
            let mut served = 0;
            loop {
                let n = next_key.fetch_add(1, Ordering::Relaxed);
                if n >= layout.keys {
                    return served;
                }
                let fetched = retry(strategy.as_ref(), || async {
                    tokio::task::yield_now().await;
                    store.get(n)
                })
                .await;
                served += u32::from(fetched.is_ok());
            }
        });
    }
    tasks.join_all().await.into_iter().sum()
}

/// A program like the newcomer's, drawn from `seed`: 5 to 60 workers, each known key answered
/// 503 1 to 3 times before it is served, every 4th to 16th would-be success a 429 with a
/// `Retry-After` of 1 or 2 s, `max_attempts` 5; and the seed of its jitter.
fn drawn_program(seed: u64) -> (StoreLayout, usize, u64) {
    let draw = SeededRandom::new(seed);
    let between = |low: u32, high: u32| low + (draw.next_f64() * f64::from(high - low + 1)) as u32;
    let layout = StoreLayout {
        unavailable_first: between(1, 3),
        throttled_every: between(4, 16),
        retry_after_secs: between(1, 2),
        ..StoreLayout::NEWCOMER
    };
    let workers = between(5, 60) as usize;
    (layout, workers, u64::from(between(0, 1_000_000)))
}

#[tokio::test(start_paused = true)]
async fn the_default_serves_programs_whose_retried_calls_succeed_as_if_it_had_no_quota() {
    // Before the default lent what calls in flight hold, the issue's program (20 workers, 2
    // 503s, every 8th would-be success a 429) served 17 of 190 keys here, and a program of
    // these shapes as few as 5 % of what it served without a quota: the calls in flight held
    // more than a young scope's 500 tokens, and a worker refused once was refused every next
    // key. Over 100 drawn shapes, the default must serve at least 90 % of the keys the same
    // program serves with `quota = "off"`.
    let five = |quota| {
        RetryConfig::builder()
            .max_attempts(5)
            .quota(quota)
            .build()
            .expect("valid")
    };
    let issue = newcomers_program(five(Quota::Traffic), StoreLayout::NEWCOMER, 20, 3).await;
    let mut worst = (f64::INFINITY, 0);
    for seed in 0..100 {
        let (layout, workers, jitter) = drawn_program(seed);
        let default = newcomers_program(five(Quota::Traffic), layout, workers, jitter).await;
        let unlimited = newcomers_program(five(Quota::Off), layout, workers, jitter).await;
        let share = f64::from(default) / f64::from(unlimited.max(1));
        if share < worst.0 {
            worst = (share, seed);
        }
    }
    let (share, seed) = worst;
    eprintln!(
        "the issue's program: {issue} of 190; worst of 100 shapes: {:.1} % (shape {seed})",
        share * 100.0
    );
    assert!(
        issue >= 171,
        "the issue's program: {issue} of 190 keys served"
    );
    assert!(
        share >= 0.9,
        "shape {seed} ({:?}): the default served {:.1} % of what no quota serves",
        drawn_program(seed),
        share * 100.0
    );
}

/// `count` calls that each take one retry: their tokens.
fn calls_with_one_retry(strategy: &StandardStrategy, count: usize) -> Vec<RetryToken> {
    (0..count)
        .map(|_| {
            let token = strategy.acquire_initial_token();
            strategy
                .refresh_retry_token(token, &server_error())
                .expect("a first retry")
        })
        .collect()
}

#[test]
fn a_refused_call_gets_back_what_it_paid_once_per_success() {
    let (strategy, _clock) = on_manual_clock(RetryConfig::default());
    let level = || strategy.scope().quota().level();
    let second_retry = |token| strategy.refresh_retry_token(token, &server_error());
    // Two calls fail after their two retries: retried calls do not come back, so the scope
    // lends nothing beyond its level, 500 - 2 x 28 = 444.
    assert_eq!(failing_call(&strategy) + failing_call(&strategy), 4);
    // 31 calls hold a retry each: 444 - 31 x 14 = 10 tokens left.
    let mut calls = calls_with_one_retry(&strategy, 31).into_iter();
    let mut next = || calls.next().expect("31 calls");
    assert_eq!(level(), 10);
    // The first refusal gets its call's 14 back (before any success); that pays for another
    // call's second retry.
    assert!(second_retry(next()).is_err());
    assert_eq!(level(), 24);
    let served = second_retry(next()).expect("paid by the refund");
    assert_eq!(level(), 10);
    // No call succeeded since: the next refusal keeps its 14.
    assert!(second_retry(next()).is_err());
    assert_eq!(level(), 10);
    // A call succeeds: its 28 come back, and a retried call came back, so the scope lends
    // again what its 28 calls in flight hold (28 x 14 = 392): every one gets its second retry.
    strategy.record_success(served);
    assert_eq!(level(), 38);
    let in_flight: Vec<RetryToken> = (0..28)
        .map(|_| second_retry(next()).expect("lent"))
        .collect();
    assert_eq!(level(), 0, "38 - 28 x 14 = -354: a debt");
    for token in in_flight {
        strategy.record_failure(token);
    }
}

#[test]
fn a_young_scope_lends_what_its_calls_in_flight_hold_until_two_retried_calls_fail() {
    let (strategy, _clock) = on_manual_clock(RetryConfig::default());
    let level = || strategy.scope().quota().level();
    let second_retry = |token| strategy.refresh_retry_token(token, &server_error());
    // 40 calls of a young scope hold a retry each (560 tokens): 35 are paid from its 500, the
    // other 5 borrow against what the 35 hold (no retried call has ended yet).
    let calls = calls_with_one_retry(&strategy, 40);
    assert_eq!(level(), 0);
    // They all get their second retry too: 500 - 80 x 14 = -620, borrowed against the 1120
    // they hold.
    let mut calls: Vec<RetryToken> = calls
        .into_iter()
        .map(|token| second_retry(token).expect("lent"))
        .collect();
    // 20 succeed: their 560 come back and repay the debt first (-60).
    for token in calls.drain(..20) {
        strategy.record_success(token);
    }
    assert_eq!(level(), 0);
    // One fails: one failure among successes does not stop the lending. A new call's two
    // retries borrow against the 19 still in flight (-60 - 28 = -88).
    strategy.record_failure(calls.pop().expect("a call"));
    calls.push(second_retry(calls_with_one_retry(&strategy, 1).remove(0)).expect("lent"));
    // That new call fails too, a second failure in a row: retried calls do not come back. The
    // lending stops, and a retry must be paid from the level, which is in debt (-60 - 28).
    strategy.record_failure(calls.pop().expect("the new call"));
    let token = strategy.acquire_initial_token();
    assert!(
        strategy
            .refresh_retry_token(token, &server_error())
            .is_err()
    );
    // The 19 left succeed: their 532 repay the debt, 444 left.
    for token in calls {
        strategy.record_success(token);
    }
    assert_eq!(level(), 444);
}

#[test]
fn a_refused_call_keeps_its_cost_on_a_fixed_quota() {
    // aws-2026 keeps the AWS SDKs' rules: 35 calls holding a retry leave 500 - 490 = 10, and
    // a call refused its second retry does not get its 14 back.
    let (strategy, _clock) = on_manual_clock(aws_2026());
    let mut calls = calls_with_one_retry(&strategy, 35).into_iter();
    let refused = calls.next().expect("35 calls");
    assert!(
        strategy
            .refresh_retry_token(refused, &server_error())
            .is_err()
    );
    assert_eq!(strategy.scope().quota().level(), 10);
}

#[test]
fn in_an_outage_at_most_one_refused_call_is_refunded() {
    let (strategy, clock) = on_manual_clock(RetryConfig::default());
    // 1 call/s for 120 s, all first-try successes: a retry finds 60 tokens.
    for _ in 0..120 {
        assert!(call_failing(&strategy, 0));
        clock.advance(secs(1));
    }
    // The outage: 10 calls at once each ask a first retry; 4 are paid (60 - 4 x 14 = 4
    // left), 6 refused with nothing paid. The 4 ask a second: the first refused is refunded
    // (120 successes since the last refund, none), which pays for one more; the other two
    // refused keep their 14. Every call fails.
    let mut retries = 0;
    let outage: Vec<RetryToken> = (0..10)
        .filter_map(|_| {
            let token = strategy.acquire_initial_token();
            strategy.refresh_retry_token(token, &server_error()).ok()
        })
        .collect();
    retries += outage.len();
    for token in outage {
        if let Ok(token) = strategy.refresh_retry_token(token, &server_error()) {
            retries += 1;
            strategy.record_failure(token);
        }
    }
    assert_eq!(retries, 5);
    assert_eq!(strategy.scope().quota().level(), 4);
    // The outage goes on: no call succeeds, so no refusal is refunded again.
    for _ in 0..3 {
        clock.advance(secs(1));
        let round = failing_calls_at_once(&strategy, 10);
        assert_eq!(round, 0);
    }
}

/// `count` calls at once that each ask one retry and fail: the retries granted.
fn failing_calls_at_once(strategy: &StandardStrategy, count: usize) -> usize {
    (0..count)
        .filter(|_| {
            let token = strategy.acquire_initial_token();
            match strategy.refresh_retry_token(token, &server_error()) {
                Ok(token) => {
                    strategy.record_failure(token);
                    true
                }
                Err(_) => false,
            }
        })
        .count()
}
