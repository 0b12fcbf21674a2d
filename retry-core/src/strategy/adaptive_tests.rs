//! Adaptive mode's client-side rate limiter against values derived by hand from the AWS SDKs'
//! adaptive retry algorithm: the CUBIC curve, the measured send rate, the fill rate and capacity
//! after throttles and successes, and acquisition (never negative, a short caller told the exact
//! wait); then the adaptive strategy on top: places in line, `max_wait` and the deadline.
//!
//! Unit tests (moved from the integration tests): the constants and CUBIC's and the measured
//! rate's parts they pin are internal to the crate. They test the adaptive strategy too, so
//! they live with it, above the `adaptive` module they import from.

use std::sync::Arc;
use std::time::Duration;

use super::{AdaptiveStrategy, RetryError, RetryStrategy, SendPermit, StandardStrategy};
use crate::adaptive::{
    Admission, BETA, ClientRateLimiter, Cubic, MAX_SLEEP_BEFORE_RECHECK, MIN_CAPACITY,
    MIN_FILL_RATE, MeasuredRate, REFERENCE_RATE, Reservation, SCALE_CONSTANT, SMOOTH,
};
use crate::backoff::{FixedRandom, RandomSource, SeededRandom};
use crate::classify::{ErrorKind, RetryReason};
use crate::clock::{Clock, ManualClock};
use crate::config::{RetryConfig, RetryMode};

/// Floating-point results are compared to the hand-derived values within this tolerance.
const EPSILON: f64 = 1e-9;

fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!(
        (actual - expected).abs() <= EPSILON * expected.abs().max(1.0),
        "{what}: got {actual}, expected {expected}"
    );
}

fn at(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds)
}

/// The expected wait and reservation of an admission that must be a wait; the sleep it asks
/// for is the expected wait, bounded by the re-check interval.
fn must_wait(admission: Admission) -> (Duration, Reservation) {
    match admission {
        Admission::Wait {
            wait,
            expected,
            reservation,
        } => {
            assert_eq!(
                wait,
                expected.min(MAX_SLEEP_BEFORE_RECHECK),
                "sleep before re-check"
            );
            (expected, reservation)
        }
        Admission::Granted => panic!("expected to be told to wait, was granted"),
    }
}

fn assert_granted(admission: Admission, what: &str) {
    assert!(
        matches!(admission, Admission::Granted),
        "{what}: expected a grant, got {admission:?}"
    );
}

/// A wait equal to `seconds` to the nanosecond (the conversion from f64 may round by one).
fn assert_wait(wait: Duration, seconds: f64, what: &str) {
    let expected = at(seconds);
    let diff = wait.abs_diff(expected);
    assert!(
        diff <= Duration::from_nanos(1),
        "{what}: told to wait {wait:?}, expected {expected:?}"
    );
}

#[test]
fn the_constants_are_the_aws_sdks() {
    assert_eq!((BETA, SCALE_CONSTANT, SMOOTH), (0.7, 0.4, 0.8));
    assert_eq!((MIN_FILL_RATE, MIN_CAPACITY), (0.5, 1.0));
}

#[test]
fn cubic_by_hand() {
    // Before any throttle: last_max = 0, K = 0, t_last = 5 (the start), so the curve is
    // 0.4 * (t - 5)^3: at t = 7, 0.4 * 8 = 3.2.
    let fresh = Cubic::new(5.0);
    assert_close(fresh.on_success(7.0), 3.2, "before any throttle");

    // Throttled at t = 10 while sending 36/s:
    //   last_max = 36, K = cbrt(36 * (1 - 0.7) / 0.4) = cbrt(27) = 3, new rate 36 * 0.7 = 25.2.
    let mut cubic = Cubic::new(0.0);
    assert_close(
        cubic.on_throttle(36.0, 10.0),
        25.2,
        "rate after the throttle",
    );
    assert_eq!(cubic.last_max_rate(), 36.0);
    // After it: 0.4 * (t - 10 - 3)^3 + 36.
    for (t, expected) in [
        (10.0, 25.2), // 0.4 * (-3)^3 + 36 = 36 - 10.8: continuous with the throttle
        (11.0, 32.8), // 0.4 * (-2)^3 + 36 = 36 - 3.2
        (12.0, 35.6), // 0.4 * (-1)^3 + 36
        (13.0, 36.0), // t_last + K: back at the last maximum
        (14.0, 36.4), // 0.4 * 1 + 36
        (15.0, 39.2), // 0.4 * 8 + 36
        (16.0, 46.8), // 0.4 * 27 + 36: probing above the old maximum
    ] {
        // Above REFERENCE_RATE (10/s) the 10/s curve scaled to 36 is used where it is higher:
        // 36 * (1 + 0.04 * (t - 10 - cbrt(7.5))^3).
        let scaled = scaled_curve(36.0, t - 10.0);
        assert_close(
            cubic.on_success(t),
            f64::max(expected, scaled),
            &format!("t = {t}"),
        );
    }

    // Throttled again at t = 20 while sending 32/3/s: K = cbrt(32/3 * 0.3 / 0.4) = cbrt(8) = 2.
    let last_max = 32.0 / 3.0;
    assert_close(
        cubic.on_throttle(last_max, 20.0),
        last_max * 0.7,
        "second throttle",
    );
    assert_close(
        cubic.on_success(20.0),
        (last_max - 3.2).max(scaled_curve(last_max, 0.0)),
        "0.4 * (-2)^3 + 32/3",
    );
    assert_close(
        cubic.on_success(22.0),
        last_max.max(scaled_curve(last_max, 2.0)),
        "t_last + K",
    );
    assert_close(
        cubic.on_success(23.0),
        (last_max + 0.4).max(scaled_curve(last_max, 3.0)),
        "0.4 * 1^3 + 32/3",
    );
    // Below the reference rate the AWS curve is always the higher: at 5/s, K = cbrt(3.75).
    let mut slow = Cubic::new(0.0);
    slow.on_throttle(5.0, 0.0);
    let k = 3.75f64.cbrt();
    assert_close(slow.on_success(k + 1.0), 5.4, "0.4 * 1^3 + 5");
}

/// The 10/s CUBIC curve scaled to `last_max`, `elapsed` seconds after the throttle:
/// `last_max * (1 + 0.04 * (elapsed - cbrt(7.5))^3)` (`REFERENCE_RATE` = 10).
fn scaled_curve(last_max: f64, elapsed: f64) -> f64 {
    assert_eq!(REFERENCE_RATE, 10.0);
    last_max * (1.0 + SCALE_CONSTANT / REFERENCE_RATE * (elapsed - 7.5f64.cbrt()).powi(3))
}

#[test]
fn measured_rate_by_hand() {
    let mut rate = MeasuredRate::new(0.0);
    // Buckets are floor(t * 2) / 2. Three responses in bucket 0: nothing measured yet.
    for t in [0.1, 0.2, 0.3] {
        rate.record(t);
    }
    assert_eq!(rate.rate(), 0.0);
    // t = 0.6 opens bucket 0.5: count 4 (the three and this one) over 0.5 - 0 s = 8/s;
    // measured = 8 * 0.8 + 0 * 0.2 = 6.4.
    rate.record(0.6);
    assert_close(rate.rate(), 6.4, "first bucket");
    // Two more in bucket 0.5, then t = 1.7 opens bucket 1.5: count 3 over 1.5 - 0.5 = 1 s = 3/s;
    // measured = 3 * 0.8 + 6.4 * 0.2 = 2.4 + 1.28 = 3.68.
    rate.record(0.7);
    rate.record(0.8);
    assert_close(rate.rate(), 6.4, "same bucket: unchanged");
    rate.record(1.7);
    assert_close(rate.rate(), 3.68, "a bucket skipped");
    // t = 1.9 stays in 1.5; t = 2.0 opens bucket 2.0: count 2 over 0.5 s = 4/s;
    // measured = 4 * 0.8 + 3.68 * 0.2 = 3.2 + 0.736 = 3.936.
    rate.record(1.9);
    rate.record(2.0);
    assert_close(rate.rate(), 3.936, "third update");
    // A late response stamped in an older bucket is counted but changes nothing yet.
    rate.record(1.0);
    assert_close(rate.rate(), 3.936, "an older bucket");

    // Started at 3.2 the first bucket is 3.0: t = 3.4 is still in it, t = 3.5 opens 3.5 with
    // count 2 over 0.5 s = 4/s: 4 * 0.8 = 3.2.
    let mut late = MeasuredRate::new(3.2);
    late.record(3.4);
    assert_eq!(late.rate(), 0.0);
    late.record(3.5);
    assert_close(late.rate(), 3.2, "bucket of the start time");
}

/// A limiter fed four responses at t = 0 and a throttle at t = 0.5.
///
/// * t = 0, four successes: each lands in bucket 0 (measured stays 0) and CUBIC before any
///   throttle gives 0.4 * 0^3 + 0 = 0, so the fill rate is max(min(0, 2 * 0), 0.5) = 0.5, the
///   capacity max(0, 1) = 1 and the bucket holds 0.
/// * t = 0.5, a throttle: it opens bucket 0.5 with count 5 over 0.5 s = 10/s, measured
///   = 10 * 0.8 = 8. The limiter was off, so rate_to_use = measured = 8; CUBIC remembers
///   last_max = 8, K = cbrt(8 * 0.3 / 0.4) = cbrt(6), and the new rate is 8 * 0.7 = 5.6
///   (below 2 * 8 = 16). Before the change the bucket refills at the old 0.5/s for 0.5 s:
///   0 + 0.25 = 0.25 (below the old capacity 1). New fill rate 5.6, capacity max(5.6, 1) = 5.6,
///   bucket min(0.25, 5.6) = 0.25.
fn throttled_at_half_a_second() -> Arc<ClientRateLimiter> {
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    for _ in 0..4 {
        limiter.record_response(false, Duration::ZERO, Duration::ZERO);
    }
    let stats = limiter.stats();
    assert!(!stats.enabled, "successes alone never enable the bucket");
    assert_eq!(
        (stats.fill_rate, stats.max_capacity, stats.capacity),
        (0.5, 1.0, 0.0)
    );
    limiter.record_response(true, at(0.5), at(0.5));
    limiter
}

#[test]
fn a_throttle_sets_the_fill_rate_by_hand() {
    let limiter = throttled_at_half_a_second();
    let stats = limiter.stats();
    assert!(stats.enabled);
    assert_close(stats.measured_rate, 8.0, "measured");
    assert_close(stats.fill_rate, 5.6, "fill rate = 8 * 0.7");
    assert_close(stats.max_capacity, 5.6, "capacity = max(5.6, 1)");
    assert_close(
        stats.capacity,
        0.25,
        "refilled at the old rate: 0.5 s * 0.5/s",
    );
}

#[test]
fn a_success_raises_the_rate_but_at_most_to_twice_the_measured_rate() {
    let limiter = throttled_at_half_a_second();
    // t = 1.0, a success: it opens bucket 1.0 with count 1 over 0.5 s = 2/s,
    // measured = 2 * 0.8 + 8 * 0.2 = 3.2. CUBIC: 0.4 * (1.0 - 0.5 - cbrt(6))^3 + 8
    // = 0.4 * (-1.3171...)^3 + 8 = 8 - 0.9140 = 7.0860, above 2 * 3.2 = 6.4, so 6.4.
    // The bucket first refills at the old 5.6/s for 0.5 s: 0.25 + 2.8 = 3.05.
    let cubic = 0.4 * (0.5 - 6f64.cbrt()).powi(3) + 8.0;
    assert!(cubic > 6.4 && (cubic - 7.086).abs() < 1e-3, "cubic {cubic}");
    limiter.record_response(false, at(1.0), at(1.0));
    let stats = limiter.stats();
    assert_close(stats.measured_rate, 3.2, "measured");
    assert_close(stats.fill_rate, 6.4, "min(cubic, 2 * measured)");
    assert_close(stats.max_capacity, 6.4, "capacity");
    assert_close(stats.capacity, 3.05, "0.25 + 0.5 s * 5.6/s");

    // t = 1.2, throttled again: bucket 1.0 is still open, measured stays 3.2. The limiter is
    // on, so rate_to_use = min(measured 3.2, fill 6.4) = 3.2 and the new rate 3.2 * 0.7 = 2.24.
    // The bucket refills at 6.4/s for 0.2 s: 3.05 + 1.28 = 4.33, permits banked at the rate
    // just cut, which the cut takes (the AWS SDKs keep them, capped at the new capacity
    // max(2.24, 1) = 2.24: two attempts at once at the old rate, each a throttle and a cut).
    limiter.record_response(true, at(1.2), at(1.2));
    let stats = limiter.stats();
    assert_close(stats.fill_rate, 2.24, "3.2 * 0.7");
    assert_close(stats.max_capacity, 2.24, "capacity");
    assert_eq!(stats.capacity, 0.0, "the permits banked at 6.4/s");

    // The next caller is a permit short: 1 / 2.24 s; at 1.2 + 1 / 2.24 s, it is granted.
    let (wait, reservation) = must_wait(limiter.try_acquire(None, at(1.2)));
    assert_wait(wait, 1.0 / 2.24, "first after the cut");
    assert_eq!(
        limiter.stats().capacity,
        0.0,
        "the short caller took nothing"
    );
    assert_granted(
        limiter.try_acquire(Some(reservation), at(1.2) + wait),
        "at the cut rate",
    );
}

#[test]
fn the_fill_rate_never_drops_below_the_minimum() {
    // Throttled with nothing measured: rate_to_use = 0, new rate 0, fill max(0, 0.5) = 0.5,
    // capacity max(0, 1) = 1.
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    limiter.record_response(true, Duration::ZERO, Duration::ZERO);
    let stats = limiter.stats();
    assert!(stats.enabled);
    assert_eq!(
        (stats.fill_rate, stats.max_capacity, stats.capacity),
        (0.5, 1.0, 0.0)
    );
    // A second throttle: min(measured 0, fill 0.5) * 0.7 = 0: still the minimum.
    limiter.record_response(true, at(0.1), at(0.1));
    assert_eq!(limiter.stats().fill_rate, 0.5);
}

#[test]
fn short_callers_are_told_the_exact_wait_and_capacity_never_goes_negative() {
    // At 0.5 permits/s with an empty bucket of capacity 1.
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    limiter.record_response(true, Duration::ZERO, Duration::ZERO);
    // Three newcomers at t = 0, each queued behind the ones already waiting:
    // (waiting + 1 - capacity) / fill_rate = 1/0.5, 2/0.5, 3/0.5.
    let (wait1, first) = must_wait(limiter.try_acquire(None, Duration::ZERO));
    let (wait2, second) = must_wait(limiter.try_acquire(None, Duration::ZERO));
    let (wait3, third) = must_wait(limiter.try_acquire(None, Duration::ZERO));
    assert_eq!(
        [wait1, wait2, wait3],
        [
            Duration::from_secs(2),
            Duration::from_secs(4),
            Duration::from_secs(6)
        ]
    );
    assert_eq!(limiter.stats().waiting, 3);
    assert_eq!(
        limiter.stats().capacity,
        0.0,
        "nothing deducted before a grant"
    );

    // t = 2: 2 s * 0.5/s = 1 permit. The first waiter gets it.
    assert_granted(
        limiter.try_acquire(Some(first), Duration::from_secs(2)),
        "first at 2 s",
    );
    assert_eq!(
        (limiter.stats().capacity, limiter.stats().waiting),
        (0.0, 2)
    );
    // The second comes back too early (t = 2 instead of 4): told (1 - 0) / 0.5 = 2 s more, not
    // granted on credit.
    let (again, second) = must_wait(limiter.try_acquire(Some(second), Duration::from_secs(2)));
    assert_eq!(again, Duration::from_secs(2));
    assert_eq!(
        (limiter.stats().capacity, limiter.stats().waiting),
        (0.0, 2)
    );
    // t = 4 and t = 6: one permit each.
    assert_granted(
        limiter.try_acquire(Some(second), Duration::from_secs(4)),
        "second at 4 s",
    );
    assert_granted(
        limiter.try_acquire(Some(third), Duration::from_secs(6)),
        "third at 6 s",
    );
    let stats = limiter.stats();
    assert_eq!((stats.capacity, stats.waiting), (0.0, 0));
    // A caller half-way: t = 7, 0.5 permits in the bucket, 0.5 / 0.5 = 1 s.
    let (wait, abandoned) = must_wait(limiter.try_acquire(None, Duration::from_secs(7)));
    assert_eq!(wait, Duration::from_secs(1));
    assert_eq!(limiter.stats().capacity, 0.5);
    // Dropping a reservation gives the place up.
    drop(abandoned);
    assert_eq!(limiter.stats().waiting, 0);
}

#[test]
fn a_newcomer_does_not_take_the_permit_a_waiter_was_promised() {
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    limiter.record_response(true, Duration::ZERO, Duration::ZERO);
    let (wait, waiter) = must_wait(limiter.try_acquire(None, Duration::ZERO));
    assert_eq!(wait, Duration::from_secs(2));
    // At t = 2 one permit is there but it is owed to the waiter: a newcomer queues behind,
    // (1 + 1 - 1) / 0.5 = 2 s.
    let (late, _newcomer) = must_wait(limiter.try_acquire(None, Duration::from_secs(2)));
    assert_eq!(late, Duration::from_secs(2));
    assert_granted(
        limiter.try_acquire(Some(waiter), Duration::from_secs(2)),
        "the waiter",
    );
}

#[test]
fn capacity_stays_within_bounds_under_a_random_workload() {
    // A reproducible random mix of time steps, newcomers, returning waiters, cancellations and
    // (throttled or not) responses; the bucket is checked after every step.
    let random = SeededRandom::new(2026);
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    limiter.record_response(true, Duration::ZERO, Duration::ZERO);
    let mut now = Duration::ZERO;
    let mut waiters: Vec<Reservation> = Vec::new();
    let (mut grants, mut waits) = (0u32, 0u32);
    for step in 0..5000 {
        now += Duration::from_micros((random.next_f64() * 200_000.0) as u64);
        let roll = random.next_f64();
        if roll < 0.4 {
            match limiter.try_acquire(None, now) {
                Admission::Granted => grants += 1,
                Admission::Wait { reservation, .. } => {
                    waits += 1;
                    // At most 5 waiters hold on, so each asks again within WAITER_LEASE (the
                    // others give up at once, as callers with a short max_wait do).
                    if waiters.len() < 5 {
                        waiters.push(reservation);
                    }
                }
            }
        } else if roll < 0.75 && !waiters.is_empty() {
            // The waiter that asked longest ago asks again (waiters sleep about as long).
            let reservation = waiters.remove(0);
            match limiter.try_acquire(Some(reservation), now) {
                Admission::Granted => grants += 1,
                Admission::Wait { reservation, .. } => waiters.push(reservation),
            }
        } else if roll < 0.8 && !waiters.is_empty() {
            let index = (random.next_f64() * waiters.len() as f64) as usize;
            drop(waiters.remove(index.min(waiters.len() - 1)));
        } else {
            limiter.record_response(random.next_f64() < 0.2, now, now);
        }
        let stats = limiter.stats();
        assert!(
            stats.capacity >= 0.0,
            "step {step}: capacity {}",
            stats.capacity
        );
        assert!(
            stats.capacity <= stats.max_capacity,
            "step {step}: capacity {} above {}",
            stats.capacity,
            stats.max_capacity
        );
        assert!(stats.fill_rate >= MIN_FILL_RATE, "step {step}");
        // A held place that has not asked for WAITER_LEASE may have lapsed (it is asked for
        // again, at the end of the line, when its holder comes back).
        assert!(stats.waiting as usize <= waiters.len(), "step {step}");
    }
    assert!(
        grants > 100 && waits > 100,
        "the mix exercised both: {grants} grants, {waits} waits"
    );
    drop(waiters);
    assert_eq!(limiter.stats().waiting, 0);
}

/// An adaptive strategy on a manual clock with the jitter pinned to 1.0.
fn adaptive(config: RetryConfig) -> (AdaptiveStrategy, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let random: Arc<dyn RandomSource> = Arc::new(FixedRandom(1.0));
    let strategy = AdaptiveStrategy::from_builder(
        StandardStrategy::builder(config)
            .random(random)
            .clock(clock.clone()),
    );
    (strategy, clock)
}

#[test]
fn only_throttling_engages_the_limiter() {
    let (strategy, _clock) = adaptive(RetryConfig::aws_classic().build().expect("valid"));
    let mut token = strategy.acquire_initial_token();
    assert_eq!(
        strategy.acquire_send_permit(&mut token),
        SendPermit::Granted
    );
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
        .expect("granted");
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Timeout))
        .expect("granted");
    assert!(
        !strategy.scope().limiter().is_enabled(),
        "server errors and timeouts do not"
    );
    strategy.record_failure(token);
    let token = strategy.acquire_initial_token();
    let mut token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
        .expect("granted");
    assert!(strategy.scope().limiter().is_enabled());
    // The retry needs a permit now: 0.5/s from an empty bucket, 2 s away. The throttle came
    // in the scope's first burst (its first 100 ms, three responses, no rate counted yet), so
    // the retry asks again when the burst is over, when the limiter starts over from the
    // burst's rate; its place in line is kept in its token.
    assert_eq!(
        strategy.acquire_send_permit(&mut token),
        SendPermit::Wait(Duration::from_millis(100))
    );
    assert_eq!(strategy.scope().limiter().stats().waiting, 1);
    let quota = strategy.scope().quota().level();
    strategy.abandon(token);
    assert_eq!(
        strategy.scope().quota().level(),
        quota + 5,
        "abandoning refunds the unsent retry"
    );
    assert_eq!(
        strategy.scope().limiter().stats().waiting,
        0,
        "abandoning gives the place in line up"
    );
}

#[test]
fn the_strategy_re_asks_after_the_wait_and_is_granted() {
    let (strategy, clock) = adaptive(RetryConfig::aws_classic().build().expect("valid"));
    let token = strategy.acquire_initial_token();
    let mut token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
        .expect("granted");
    clock.advance(token.delay());
    // After the 1 s backoff the bucket holds 0.5: the permit is 1 s away, asked for again
    // every 500 ms (the re-check interval) until granted, with the same place in line.
    let mut waited = Duration::ZERO;
    while let SendPermit::Wait(wait) = strategy.acquire_send_permit(&mut token) {
        assert!(wait <= MAX_SLEEP_BEFORE_RECHECK, "{wait:?}");
        assert_eq!(strategy.scope().limiter().stats().waiting, 1, "one place");
        waited += wait;
        clock.advance(wait);
    }
    assert_eq!(waited, Duration::from_secs(1));
    let stats = strategy.scope().limiter().stats();
    assert_eq!((stats.capacity, stats.waiting), (0.0, 0));
    strategy.record_success(token);
}

#[test]
fn max_wait_fails_a_retry_fast_and_delays_a_first_attempt_at_most_that_long() {
    let (strategy, clock) = adaptive(
        RetryConfig::aws_classic()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_millis(300))
            .build()
            .expect("valid"),
    );
    let token = strategy.acquire_initial_token();
    // The throttle turns the bucket on: empty, 0.5/s. After the 1 s backoff it holds 0.5, so
    // the retry's permit is expected 1 s after that, more than 300 ms: the retry is refused
    // when it is asked for, before any quota is taken, any place queued or any wait slept.
    assert_eq!(
        strategy
            .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
            .map(|token| token.attempt()),
        Err(RetryError::RateLimited {
            wait: Duration::from_secs(1),
            max_wait: Duration::from_millis(300)
        })
    );
    let stats = strategy.scope().stats();
    assert_eq!(stats.rate_limited, 1);
    assert_eq!(stats.quota_level, 500, "no quota taken");
    assert_eq!((stats.retries, stats.failures), (0, 1));
    assert_eq!(stats.limiter.waiting, 0, "no place taken");
    // A first attempt is always made: it waits 300 ms in line, then goes without a permit,
    // giving its place up.
    let mut first = strategy.acquire_initial_token();
    assert_eq!(
        strategy.acquire_send_permit(&mut first),
        SendPermit::Wait(Duration::from_millis(300))
    );
    assert_eq!(strategy.scope().limiter().stats().waiting, 1);
    clock.advance(Duration::from_millis(300));
    assert_eq!(
        strategy.acquire_send_permit(&mut first),
        SendPermit::Granted
    );
    let stats = strategy.scope().limiter().stats();
    assert_eq!(stats.waiting, 0);
    // 0.3 s at 0.5/s: 0.15 permits, none taken by the attempt sent without one.
    assert_close(stats.capacity, 0.15, "capacity");
    strategy.record_success(first);
}

#[test]
fn max_wait_caps_the_wait_of_a_granted_retry_whose_line_grew() {
    let (strategy, clock) = adaptive(
        RetryConfig::aws_classic()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_millis(300))
            .build()
            .expect("valid"),
    );
    let limiter = strategy.scope().limiter();
    // Two calls send their first attempts at 0, before the bucket is on.
    let mut first = strategy.acquire_initial_token();
    let mut second = strategy.acquire_initial_token();
    for token in [&mut first, &mut second] {
        assert_eq!(strategy.acquire_send_permit(token), SendPermit::Granted);
    }
    // The first is throttled at 0.25 s: the bucket turns on with the 0.125 permits filled at
    // 0.5/s since 0. Its retry, 1 s later, would find 0.625: 0.75 s more, above max_wait.
    clock.advance(Duration::from_millis(250));
    assert_eq!(
        strategy
            .refresh_retry_token(first, &RetryReason::error(ErrorKind::Throttling))
            .map(|token| token.attempt()),
        Err(RetryError::RateLimited {
            wait: Duration::from_millis(750),
            max_wait: Duration::from_millis(300)
        })
    );
    assert_eq!(limiter.stats().fill_rate, MIN_FILL_RATE);
    // The throttle was the scope's first response: its first burst, until 0.35 s. A caller
    // asks for a permit at 0.5 s and gives its place up: the burst over with that one response
    // counted (no rate), the limiter goes on from the floor as it started.
    clock.advance(Duration::from_millis(250));
    drop(must_wait(limiter.try_acquire(None, clock.now())));
    assert_eq!(limiter.stats().waiting, 0);
    clock.advance(Duration::from_millis(250));
    // The second is throttled at 0.75 s (sent before the throttle: the same congestion event,
    // the rate stays). After its 1 s backoff the bucket is expected to hold 0.875: a 250 ms
    // wait, within max_wait, so the retry is granted.
    let mut retry = strategy
        .refresh_retry_token(second, &RetryReason::error(ErrorKind::Throttling))
        .expect("expected within max_wait: granted");
    assert_eq!(retry.delay(), Duration::from_secs(1));
    assert_eq!(limiter.stats().fill_rate, MIN_FILL_RATE);
    assert_eq!(strategy.scope().quota().level(), 495);
    assert_eq!(
        limiter.expected_wait(clock.now() + retry.delay()),
        Duration::from_millis(250)
    );
    // During the backoff two callers (another client of the scope, without max_wait) queue
    // and keep their places: the retry's permit is now 2.25 s away, behind them.
    clock.advance(Duration::from_millis(250));
    let ahead: Vec<Reservation> = (0..2)
        .map(|_| must_wait(limiter.try_acquire(None, clock.now())).1)
        .collect();
    clock.advance(Duration::from_millis(750));
    // The retry waits 300 ms in line; a retry is never turned back once granted.
    assert_eq!(
        strategy.acquire_send_permit(&mut retry),
        SendPermit::Wait(Duration::from_millis(300))
    );
    assert_eq!(limiter.stats().waiting, 3);
    clock.advance(Duration::from_millis(300));
    // Having waited max_wait, it is sent without a permit, its place given up; the bucket
    // (full, 1 permit) stays owed to the two callers ahead.
    assert_eq!(
        strategy.acquire_send_permit(&mut retry),
        SendPermit::Granted
    );
    let stats = limiter.stats();
    assert_eq!(stats.waiting, 2);
    assert_eq!(stats.capacity, 1.0, "no permit taken");
    drop(ahead);
    assert_eq!(limiter.stats().waiting, 0);
    strategy.record_success(retry);
    assert_eq!(strategy.scope().quota().level(), 500);
}

#[test]
fn the_deadline_counts_the_expected_permit_wait() {
    // The same throttle at 0: a 1 s backoff, then a permit 1 s later. A 2 s deadline allows
    // the retry; one of 1.5 s does not, and refuses it before taking quota.
    for (timeout, granted) in [
        (Duration::from_secs(2), true),
        (Duration::from_millis(1500), false),
    ] {
        let (strategy, _clock) = adaptive(
            RetryConfig::aws_classic()
                .timeout(timeout)
                .build()
                .expect("valid"),
        );
        let token = strategy.acquire_initial_token();
        let refreshed =
            strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling));
        if granted {
            let token = refreshed.expect("backoff + permit wait = 2 s: within the deadline");
            assert_eq!(strategy.scope().quota().level(), 495);
            strategy.abandon(token);
        } else {
            assert_eq!(
                refreshed.map(|token| token.attempt()),
                Err(RetryError::DeadlineExceeded { timeout })
            );
        }
        assert_eq!(strategy.scope().quota().level(), 500, "timeout {timeout:?}");
        assert_eq!(strategy.scope().limiter().stats().waiting, 0);
    }
}

#[test]
fn a_burst_of_throttles_to_attempts_in_flight_lowers_the_rate_once() {
    // 10 responses/s from 0 to 2.0 s: each half-second bucket closes with rate = count / 0.5 s
    // (the first with 6, counting its closing response, then 5 each), smoothed from 0.
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    for i in 0..=20 {
        let t = at(f64::from(i) * 0.1);
        limiter.record_response(false, t, t);
    }
    // Bucket 0.5 closes with 6 responses (12/s): 12 * 0.8 = 9.6; then 5 each (10/s):
    // 10 * 0.8 + 9.6 * 0.2 = 9.92, then 9.984, then 9.9968 (bucket 2.0 opened at t = 2.0).
    let measured = limiter.stats().measured_rate;
    assert_close(measured, 9.9968, "measured by hand");
    // The first throttle (attempt sent at 1.95 s, answered at 2.05 s, in the open bucket, so
    // the measured rate stands): the rate drops to 0.7 * measured.
    limiter.record_response(true, at(1.95), at(2.05));
    let reduced = limiter.stats().fill_rate;
    assert_close(reduced, 0.7 * 9.9968, "first reduction");
    // Forty more throttles answering attempts sent before that reduction: the same congestion
    // event, no further cut (the AWS SDKs would cut to 0.7^41 of the rate, the 0.5/s floor).
    for i in 0..40 {
        limiter.record_response(true, at(1.96 + f64::from(i) * 0.0001), at(2.06));
    }
    assert_close(limiter.stats().fill_rate, reduced, "same congestion event");
    // A throttle to an attempt sent after the reduction is a new event: cut again, from
    // min(measured, fill_rate) = fill_rate.
    limiter.record_response(true, at(2.07), at(2.08));
    assert_close(
        limiter.stats().fill_rate,
        (BETA * reduced).max(MIN_FILL_RATE),
        "second reduction",
    );
}

/// A limiter switched on by a throttle at 2.0 s (after 100 responses/s for 2 s), whose caller
/// then sent 60 attempts/s for a minute, each answered at once and none throttled: the
/// throttling's episode is over, and the rate grew past what is sent, banking permits.
fn on_and_banking() -> Arc<ClientRateLimiter> {
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    for i in 0..200 {
        let t = at(f64::from(i) * 0.01);
        limiter.record_response(false, t, t);
    }
    limiter.record_response(true, at(2.0), at(2.0));
    for i in 1..=3_660 {
        let t = at(2.0 + f64::from(i) / 60.0);
        assert_granted(limiter.try_acquire(None, t), "below the rate");
        limiter.record_response(false, t, t);
    }
    limiter
}

#[test]
fn attempts_after_a_cut_go_at_the_cut_rate_not_on_permits_banked_before_it() {
    let limiter = on_and_banking();
    let banked = limiter.stats().capacity;
    assert!(banked > 10.0, "banked {banked}");
    // A throttle answered at once starts a new episode and cuts the rate; the server's bucket
    // stays empty for 50 ms, and it throttles at once every attempt sent meanwhile, whatever
    // the client's rate. The caller has an attempt to send every millisecond.
    let before = limiter.stats().fill_rate;
    limiter.record_response(true, at(63.0), at(63.0));
    let cut = limiter.stats().fill_rate;
    assert!(
        cut < before,
        "a new episode's first throttle cuts: {before} -> {cut}"
    );
    let mut sent = 0;
    let mut reservation = None;
    for ms in 1..=50 {
        let now = at(63.0 + f64::from(ms) * 0.001);
        match limiter.try_acquire(reservation.take(), now) {
            Admission::Granted => {
                sent += 1;
                limiter.record_response(true, now, now);
            }
            Admission::Wait {
                reservation: place, ..
            } => reservation = Some(place),
        }
    }
    // On the permits banked at the old rate, an attempt every millisecond until they ran out,
    // each throttled and each a cut: the rate at a few percent of itself. At the cut rate,
    // at most one attempt per 1 / cut seconds, each a cut of its own.
    let most = 1.0 + 0.05 * cut;
    assert!(
        f64::from(sent) <= most,
        "{sent} attempts in the 50 ms after a cut to {cut:.1}/s (at most {most:.1})"
    );
    let rate = limiter.stats().fill_rate;
    assert!(
        rate >= BETA.powi(sent) * cut - EPSILON,
        "{rate} after {sent} cuts from {cut}"
    );
}

#[test]
fn a_waiter_is_never_told_to_wait_zero() {
    // 0.25 permits at 5.6/s: the permit is 0.75 / 5.6 = 0.13392857142... s away, which a
    // `Duration` cannot hold exactly. A wait rounded down leaves the waiter a rounding error
    // short on its return; a wait of 0 ns then leaves a caller on a paused clock (or a manual
    // one its sleeper moves) asking again at the same instant, forever.
    let limiter = throttled_at_half_a_second();
    let mut now = at(0.5);
    let mut reservation = None;
    for _ in 0..10 {
        match limiter.try_acquire(reservation.take(), now) {
            Admission::Granted => return,
            Admission::Wait {
                wait,
                reservation: place,
                ..
            } => {
                assert!(wait > Duration::ZERO, "told to wait 0 at {now:?}");
                now += wait;
                reservation = Some(place);
            }
        }
    }
    panic!("not granted after 10 waits (at {now:?})");
}

/// smithy-rs' `test_client_sending_rates` (aws-smithy-runtime's client rate limiter, ported there
/// from the AWS SDK for Go v2): one response every 200 ms, each fed to the limiter, throttled at
/// 2.0 s and 3.2 s. Per row: the time, whether the response was a throttle, then the measured
/// send rate and the fill rate the published vectors expect after it.
const TEST_CLIENT_SENDING_RATES: [(f64, bool, f64, f64); 17] = [
    (0.2, false, 0.0, 0.5),
    (0.4, false, 0.0, 0.5),
    (0.6, false, 4.8, 0.5),
    (0.8, false, 4.8, 0.5),
    (1.0, false, 4.16, 0.5),
    (1.2, false, 4.16, 0.6912),
    (1.4, false, 4.16, 1.0976),
    (1.6, false, 5.632, 1.6384),
    (1.8, false, 5.632, 2.3328),
    (2.0, true, 4.3264, 3.02848),
    (2.2, false, 4.3264, 3.48663917347026),
    (2.4, false, 4.3264, 3.821874416040255),
    (2.6, false, 5.66528, 4.053385727709987),
    (2.8, false, 5.66528, 4.200373108479454),
    (3.0, false, 4.333056, 4.282036558348658),
    (3.2, true, 4.333056, 2.99742559084406),
    (3.4, false, 4.333056, 3.4522263943863463),
];

/// The published vectors hold to this relative error (their figures are printed to about
/// 15 significant digits).
const VECTOR_EPSILON: f64 = 1e-12;

#[test]
fn smithy_rs_test_client_sending_rates() {
    // Every response is fed (the AWS SDKs' model), so the limiter is the AWS SDKs' exactly:
    // the throttle at 2.0 s starts from the rate measured then, 4.3264, not a higher one
    // measured before it.
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    let mut misses = Vec::new();
    for (t, throttled, measured, fill_rate) in TEST_CLIENT_SENDING_RATES {
        limiter.record_response(throttled, at(t), at(t));
        let stats = limiter.stats();
        for (what, got, expected) in [
            ("measured rate", stats.measured_rate, measured),
            ("fill rate", stats.fill_rate, fill_rate),
        ] {
            if (got - expected).abs() > VECTOR_EPSILON * expected.abs().max(1.0) {
                misses.push(format!("t = {t}: {what} {got}, the vectors {expected}"));
            }
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn a_sampled_limiter_starts_from_the_rate_counted_not_the_rate_sampled() {
    // 100 calls/s, sampled at uneven times (as adaptive mode's idle sampling does) with the
    // scope's running count of calls ended, from the first response at 10 ms (which adaptive
    // mode feeds whether or not it is a sample: the count begins). The samples' measured rate
    // follows their spacing; the counts are exact.
    let limiter = ClientRateLimiter::new(Duration::ZERO);
    for t in [0.01, 0.3, 0.35, 1.2, 1.25, 2.9, 3.0] {
        limiter.record_idle_sample((t * 100.0_f64).round() as u64, None, at(t));
    }
    let sampled = limiter.stats().measured_rate;
    assert!((sampled - 100.0).abs() > 20.0, "sampled {sampled}");
    // The throttle at 3.0 s: counted since the newest count at least a second before the
    // latest one (1.2 s, 120 calls): 301 - 120 responses over 1.8 s.
    limiter.record_response(true, at(3.0), at(3.0));
    let counted = 181.0 / 1.8;
    let stats = limiter.stats();
    assert!(stats.enabled);
    assert_close(stats.fill_rate, BETA * counted, "fill rate");
    assert_close(
        stats.measured_rate,
        counted,
        "the measured rate starts over from it",
    );
}

/// A first attempt's token, its send permit granted (the limiter off, or a permit in hand).
fn sent_first_attempt(strategy: &AdaptiveStrategy) -> super::RetryToken {
    let mut token = strategy.acquire_initial_token();
    assert_eq!(
        strategy.acquire_send_permit(&mut token),
        SendPermit::Granted
    );
    token
}

/// Calls at `per_second` from the clock's time now, each a success but the `throttled_at`th,
/// a throttle (its retry abandoned); then the limiter's fill rate once a call asks for a
/// permit `after` the throttle.
fn fill_rate_after_a_first_burst(
    strategy: &AdaptiveStrategy,
    clock: &ManualClock,
    per_second: f64,
    throttled_at: u32,
    after: Duration,
) -> f64 {
    let gap = Duration::from_secs_f64(1.0 / per_second);
    for _ in 1..throttled_at {
        strategy.record_success(sent_first_attempt(strategy));
        clock.advance(gap);
    }
    let retry = strategy
        .refresh_retry_token(
            sent_first_attempt(strategy),
            &RetryReason::error(ErrorKind::Throttling),
        )
        .expect("granted");
    strategy.abandon(retry);
    clock.advance(after);
    let mut token = strategy.acquire_initial_token();
    let _ = strategy.acquire_send_permit(&mut token);
    strategy.abandon(token);
    strategy.scope().limiter().stats().fill_rate
}

#[test]
fn a_scope_made_long_before_its_first_calls_starts_from_its_first_burst_not_its_age() {
    // An application makes its client (the scope) at start-up and calls 2 s later, 150 calls
    // a second; the 11th response is a throttle. The rate its limiter starts from is the
    // burst's, as for a scope made as its calls begin, not 11 responses over the scope's 2 s
    // (5.3/s, cut to 3.7/s: the floor's neighbourhood, climbing for many seconds).
    let config = aws_classic_adaptive;
    let after = Duration::from_millis(40);
    crate::adaptive::reseed_idle_sampling(1);
    let (fresh, fresh_clock) = adaptive(config());
    let made_with_its_calls = fill_rate_after_a_first_burst(&fresh, &fresh_clock, 150.0, 11, after);
    crate::adaptive::reseed_idle_sampling(1);
    let (idle, idle_clock) = adaptive(config());
    idle_clock.advance(Duration::from_secs(2));
    let made_before = fill_rate_after_a_first_burst(&idle, &idle_clock, 150.0, 11, after);
    assert!(
        made_with_its_calls > 50.0,
        "made with its calls: {made_with_its_calls}/s"
    );
    assert_close(
        made_before,
        made_with_its_calls,
        "made 2 s before its calls",
    );
}

/// The AWS SDKs' classic settings in adaptive mode.
fn aws_classic_adaptive() -> RetryConfig {
    RetryConfig::aws_classic()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid")
}

#[test]
fn a_scopes_first_call_to_end_begins_its_count() {
    // The count begins at the scope's first response: the first call's end, not the second's
    // (a trickle's second call may come seconds later, and its span would start there).
    let (strategy, clock) = adaptive(aws_classic_adaptive());
    clock.advance(Duration::from_secs(2));
    strategy.record_success(sent_first_attempt(&strategy));
    assert!(
        !strategy.scope().limiter().awaits_first_response(),
        "the first call ended: the count has begun"
    );
}

#[test]
fn a_first_bursts_rate_counts_the_responses_after_its_first() {
    // 150 calls a second, the 31st a throttle: 30 responses in the 30 gaps after the first,
    // 150/s; counted with the first, 31 over the 30 gaps read 155/s (and from the second
    // response, 31 over 29 gaps, 160/s). The limiter starts from the burst's rate cut by BETA.
    let (strategy, clock) = adaptive(aws_classic_adaptive());
    crate::adaptive::reseed_idle_sampling(1);
    let fill_rate = fill_rate_after_a_first_burst(&strategy, &clock, 150.0, 31, Duration::ZERO);
    assert!(
        (fill_rate - 150.0 * BETA).abs() < 1.0,
        "started from {fill_rate}/s, the burst's 150/s cut to {}/s",
        150.0 * BETA
    );
}

/// The public docs state these internal constants as plain values (the adaptive module's
/// `ClientRateLimiter`, `Admission`, `CongestionSignals`): change a constant, change its docs.
#[test]
fn the_public_docs_state_the_internal_constants() {
    use crate::adaptive::{BASELINE_WINDOW, LATENCY_FACTOR, WAITER_LEASE};
    assert_eq!(MAX_SLEEP_BEFORE_RECHECK, Duration::from_millis(500));
    assert_eq!(WAITER_LEASE, Duration::from_secs(2));
    assert_eq!(REFERENCE_RATE, 10.0);
    assert_eq!(MIN_FILL_RATE, 0.5);
    assert_eq!((LATENCY_FACTOR, BASELINE_WINDOW), (4.0, 30.0));
}
