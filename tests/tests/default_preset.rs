//! The default configuration's promises, one test each: a lone call on a new scope makes every
//! attempt it asks for (through `retry`, `Retry` and `#[retryable]`); an outage costs a busy
//! client at most one token per call of the last minute, and an idle client one call's
//! retries; a server's `retry_after` is a minimum, never undercut; and the success path reads
//! no clock.
//!
//! Every test runs in virtual time (`start_paused`, or a clock of its own) on scopes of its own:
//! tests run in parallel in one process and `#[retryable]` scopes are process-wide.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Duration;

use retry_core::backoff::FixedRandom;
use retry_core::clock::{Clock, ManualClock};
use retry_core::{
    ErrorKind, Retry, RetryConfig, RetryError, RetryInfo, RetryReason, RetrySafety, RetryStrategy,
    StandardStrategy, retry, retryable,
};

/// An operation that fails with a transient error (a refused connection) until attempt `n`.
async fn fails_until(attempts: &AtomicU32, n: u32) -> Result<u32, io::Error> {
    let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
    if attempt < n {
        Err(io::ErrorKind::ConnectionRefused.into())
    } else {
        Ok(attempt)
    }
}

/// A strategy with the default configuration and `max_attempts`, in a new private scope.
fn default_with(max_attempts: u32) -> StandardStrategy {
    let config = RetryConfig::builder()
        .max_attempts(max_attempts)
        .build()
        .expect("valid");
    StandardStrategy::new(config)
}

#[tokio::test(start_paused = true)]
async fn a_lone_call_makes_every_attempt_it_asks_for_through_retry() {
    for n in [3, 5, 10] {
        let strategy = default_with(n);
        let attempts = AtomicU32::new(0);
        let outcome = retry(&strategy, || fails_until(&attempts, n)).await;
        assert_eq!(outcome.expect("succeeds at its last attempt"), n, "n = {n}");
        // It took (n - 1) x 14 tokens from the young scope's 500, and the success gave every
        // one of them back.
        assert_eq!(strategy.scope().stats().quota_level, 500, "n = {n}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_lone_call_makes_every_attempt_it_asks_for_through_retry_builder() {
    for n in [3, 5, 10] {
        let strategy = default_with(n);
        let attempts = AtomicU32::new(0);
        let retries = AtomicU32::new(0);
        let outcome = Retry::new(&strategy)
            .on_retry(|_: &retry_core::RetryEvent<'_, io::Error>| {
                retries.fetch_add(1, Ordering::SeqCst);
            })
            .run(|| fails_until(&attempts, n))
            .await;
        assert_eq!(outcome.expect("succeeds at its last attempt"), n, "n = {n}");
        assert_eq!(retries.load(Ordering::SeqCst), n - 1, "n = {n}");
    }
}

/// The error of the `#[retryable]` functions below: always retryable, a server's fault.
#[derive(Debug, PartialEq)]
struct Unavailable;

impl RetryInfo for Unavailable {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

/// Fails until attempt `n`, counting attempts in `attempts`.
fn attempt(attempts: &AtomicU32, n: u32) -> Result<u32, Unavailable> {
    let attempt = attempts.fetch_add(1, Ordering::SeqCst) + 1;
    if attempt < n {
        Err(Unavailable)
    } else {
        Ok(attempt)
    }
}

// One function per `max_attempts`: each has its own process-wide scope (its path), created by
// its first call, which is the only call it ever gets.
#[retryable(max_attempts = 3)]
async fn lone_3(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    attempt(attempts, 3)
}

#[retryable(max_attempts = 5)]
async fn lone_5(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    attempt(attempts, 5)
}

#[retryable(max_attempts = 10)]
async fn lone_10(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    attempt(attempts, 10)
}

#[tokio::test(start_paused = true)]
async fn a_lone_call_makes_every_attempt_it_asks_for_through_the_attribute() {
    let (three, five, ten) = (AtomicU32::new(0), AtomicU32::new(0), AtomicU32::new(0));
    assert_eq!(lone_3(&three).await, Ok(3));
    assert_eq!(lone_5(&five).await, Ok(5));
    assert_eq!(lone_10(&ten).await, Ok(10));
}

/// A default strategy on a manual clock, the jitter drawing 1.0.
fn on_manual_clock(config: RetryConfig) -> (StandardStrategy, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let strategy = StandardStrategy::builder(config)
        .clock(clock.clone())
        .random(Arc::new(FixedRandom(1.0)))
        .build();
    (strategy, clock)
}

/// One call whose every attempt fails with a server error: the retries it was granted.
fn failing_call(strategy: &StandardStrategy) -> u32 {
    let mut token = strategy.acquire_initial_token();
    let mut retries = 0;
    loop {
        match strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Server)) {
            Ok(next) => {
                retries += 1;
                token = next;
            }
            Err(_) => return retries,
        }
    }
}

#[test]
fn an_outage_costs_a_busy_client_one_token_per_call_of_the_last_minute() {
    let (strategy, clock) = on_manual_clock(RetryConfig::default());
    // 7 calls/s for 120 s, all successful.
    for _ in 0..7 * 120 {
        let token = strategy.acquire_initial_token();
        strategy.record_success(token);
        clock.advance(Duration::from_secs(1) / 7);
    }
    // A 60 s outage at the same rate: 420 calls. A retry finds 7/s x 60 s = 420 tokens, 30
    // retries of 14: 450 attempts for 420 calls, 1.071 per call. (The classic quota of 500
    // with retries of 5 allows 100: 1.238, the simulator's S1 figure for aws-classic.)
    let retries: u32 = (0..7 * 60)
        .map(|_| {
            let retries = failing_call(&strategy);
            clock.advance(Duration::from_secs(1) / 7);
            retries
        })
        .sum();
    assert_eq!(retries, 30);
}

#[test]
fn an_outage_costs_an_idle_client_one_call_of_retries() {
    let (strategy, clock) = on_manual_clock(RetryConfig::default());
    // A client that calls every 30 s: two minutes of successes (its scope is then older than
    // its window; 2 calls a minute buy 2 tokens, below the floor of 2 x 14 = 28).
    for _ in 0..4 {
        let token = strategy.acquire_initial_token();
        strategy.record_success(token);
        clock.advance(Duration::from_secs(30));
    }
    // Then an outage: its first failing call makes all 3 attempts (the floor), the next ones
    // no retry: it asks for one every 30 s, so no quiet minute refills the floor.
    let calls: Vec<u32> = (0..10)
        .map(|_| {
            let retries = failing_call(&strategy);
            clock.advance(Duration::from_secs(30));
            retries
        })
        .collect();
    assert_eq!(calls, [2, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
}

#[test]
fn a_servers_retry_after_is_a_minimum_and_one_past_max_backoff_stops() {
    let (strategy, _clock) = on_manual_clock(RetryConfig::default());
    // The backoff would be 50 ms: the server's 3 s wins (aws-2026 would allow at most
    // 50 ms + 5 s, and clamps a longer one down).
    let token = strategy.acquire_initial_token();
    let asked = RetryReason::error_after(ErrorKind::Throttling, Duration::from_secs(3));
    let token = strategy
        .refresh_retry_token(token, &asked)
        .expect("granted");
    assert_eq!(token.delay(), Duration::from_secs(3));
    // 25 s is longer than max_backoff (20 s): no retry, rather than one sent too early.
    let too_long = RetryReason::error_after(ErrorKind::Throttling, Duration::from_secs(25));
    assert_eq!(
        strategy.refresh_retry_token(token, &too_long).unwrap_err(),
        RetryError::RetryAfterTooLong {
            retry_after: Duration::from_secs(25),
            limit: Duration::from_secs(20),
        }
    );
}

/// A clock that counts its readings.
#[derive(Debug, Default)]
struct CountingClock {
    readings: AtomicU64,
}

impl Clock for CountingClock {
    fn now(&self) -> Duration {
        self.readings.fetch_add(1, Ordering::SeqCst);
        Duration::ZERO
    }
}

#[test]
fn the_success_path_reads_no_clock() {
    let clock = Arc::new(CountingClock::default());
    let strategy = StandardStrategy::builder(RetryConfig::default())
        .clock(clock.clone())
        .build();
    let before = clock.readings.load(Ordering::SeqCst);
    for _ in 0..1_000 {
        let mut token = strategy.acquire_initial_token();
        let _ = strategy.acquire_send_permit(&mut token);
        strategy.record_success(token);
    }
    assert_eq!(clock.readings.load(Ordering::SeqCst), before);
    // The retry path does read it (to size the quota by the traffic): the count is live.
    let token = strategy.acquire_initial_token();
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
        .expect("granted");
    strategy.record_failure(token);
    assert!(clock.readings.load(Ordering::SeqCst) > before);
}

#[test]
fn a_call_reads_the_clock_once_at_its_first_retry_and_not_at_later_ones() {
    let clock = Arc::new(CountingClock::default());
    let config = RetryConfig::builder()
        .max_attempts(8)
        .build()
        .expect("valid");
    let strategy = StandardStrategy::builder(config)
        .clock(clock.clone())
        .build();
    let before = clock.readings.load(Ordering::SeqCst);
    let mut token = strategy.acquire_initial_token();
    for retry in 1..=7 {
        token = strategy
            .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
            .expect("granted");
        // The first retry sizes the quota by the traffic (one reading: no sample is due); the
        // later ones are sized from that reading.
        assert_eq!(
            clock.readings.load(Ordering::SeqCst) - before,
            1,
            "after retry {retry}"
        );
    }
    strategy.record_success(token);
}
