//! Standard mode attempt by attempt, with the jitter pinned to 1.0 and a manual clock: the
//! delay and the quota level after each retry, the refund on success, the first-try reward, an
//! exhausted quota, the `max_backoff` cap, retry numbers past 64, `retry_after` and the deadline.

use std::sync::Arc;
use std::time::Duration;

use retry_core::backoff::{Backoff, ExponentialBackoff, FixedRandom, Jitter};
use retry_core::clock::ManualClock;
use retry_core::quota::RetryQuota;
use retry_core::strategy::RetryToken;
use retry_core::{
    ConfigError, ErrorKind, RetryConfig, RetryError, RetryReason, RetryStrategy, StandardStrategy,
};

mod common;

use common::{fail_until_refused, level, ms, secs};

/// A standard strategy whose jitter always draws 1.0 (so the delay is the exponential ceiling),
/// on a manual clock; the clock is returned so tests can move it.
fn pinned(config: RetryConfig) -> (StandardStrategy, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let strategy = StandardStrategy::builder(config)
        .random(Arc::new(FixedRandom(1.0)))
        .clock(clock.clone())
        .build();
    (strategy, clock)
}

fn config(builder: retry_core::config::RetryConfigBuilder) -> RetryConfig {
    builder.build().expect("a valid test configuration")
}

/// Refreshes `token` for one more retry of `kind`, which must be granted.
fn retried(strategy: &StandardStrategy, token: RetryToken, kind: ErrorKind) -> RetryToken {
    strategy
        .refresh_retry_token(token, &RetryReason::error(kind))
        .expect("the retry should be granted")
}

#[test]
fn server_errors_double_the_delay_and_cost_five_each() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic().max_attempts(5)));
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Server);
    // Retry i waits min(1 s * 2^(i-1), 20 s) * 1.0 and takes 5 from the quota of 500.
    assert_eq!(
        steps,
        [
            (2, secs(1), 495),
            (3, secs(2), 490),
            (4, secs(4), 485),
            (5, secs(8), 480),
        ]
    );
    assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 5 });
    assert_eq!(level(&strategy), 480, "the refusal takes nothing");
    let stats = strategy.scope().stats();
    assert_eq!(
        (
            stats.attempts,
            stats.retries,
            stats.failures,
            stats.successes
        ),
        (5, 4, 1, 0)
    );
}

#[test]
fn transient_errors_cost_the_same_as_server_errors() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic()));
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Transient);
    assert_eq!(steps, [(2, secs(1), 495), (3, secs(2), 490)]);
    assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 3 });
}

#[test]
fn timeouts_cost_ten_each() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic().max_attempts(5)));
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Timeout);
    assert_eq!(
        steps,
        [
            (2, secs(1), 490),
            (3, secs(2), 480),
            (4, secs(4), 470),
            (5, secs(8), 460),
        ]
    );
    assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 5 });
    assert_eq!(level(&strategy), 460);
}

#[test]
fn throttling_costs_five_and_uses_the_throttling_base() {
    // A throttling base distinct from the ordinary one shows which is used.
    let (strategy, _clock) = pinned(config(
        RetryConfig::aws_classic()
            .max_attempts(4)
            .throttling_backoff(ms(1500)),
    ));
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Throttling);
    assert_eq!(
        steps,
        [(2, ms(1500), 495), (3, secs(3), 490), (4, secs(6), 485)]
    );
    assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 4 });
    // Every throttling response is counted, the refused one included.
    assert_eq!(strategy.scope().stats().throttles, 4);
}

#[test]
fn a_success_after_retries_refunds_the_last_retry_cost() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic().max_attempts(4)));
    let token = strategy.acquire_initial_token();
    let token = retried(&strategy, token, ErrorKind::Server);
    assert_eq!(
        (token.delay(), token.retry_cost(), level(&strategy)),
        (secs(1), 5, 495)
    );
    let token = retried(&strategy, token, ErrorKind::Timeout);
    assert_eq!(
        (token.delay(), token.retry_cost(), level(&strategy)),
        (secs(2), 10, 485)
    );
    strategy.record_success(token);
    // The last retry (a timeout) cost 10: that comes back, not the first retry's 5.
    assert_eq!(level(&strategy), 495);

    let token = strategy.acquire_initial_token();
    let token = retried(&strategy, token, ErrorKind::Timeout); // 485
    let token = retried(&strategy, token, ErrorKind::Server); // 480
    assert_eq!(level(&strategy), 480);
    strategy.record_success(token);
    assert_eq!(level(&strategy), 485, "the last retry cost 5");
    let stats = strategy.scope().stats();
    assert_eq!((stats.successes, stats.retries), (2, 4));
}

#[test]
fn a_failure_after_retries_refunds_nothing() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic()));
    let token = strategy.acquire_initial_token();
    let token = retried(&strategy, token, ErrorKind::Server);
    strategy.record_failure(token);
    assert_eq!(level(&strategy), 495);
}

#[test]
fn first_try_successes_add_one_up_to_capacity() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic()));
    // Drain 10 with a failed call that retried a timeout.
    let token = strategy.acquire_initial_token();
    let token = retried(&strategy, token, ErrorKind::Timeout);
    strategy.record_failure(token);
    assert_eq!(level(&strategy), 490);
    let mut levels = Vec::new();
    for _ in 0..12 {
        let token = strategy.acquire_initial_token();
        strategy.record_success(token);
        levels.push(level(&strategy));
    }
    assert_eq!(
        levels,
        [491, 492, 493, 494, 495, 496, 497, 498, 499, 500, 500, 500]
    );
}

#[test]
fn an_exhausted_quota_stops_retrying() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic().quota_capacity(12)));
    // Call 1 retries a timeout: 12 - 10 = 2 left.
    let call1 = strategy.acquire_initial_token();
    let call1 = retried(&strategy, call1, ErrorKind::Timeout);
    assert_eq!(level(&strategy), 2);
    // Call 2 cannot pay 5 for a server error: it stops, and the quota is not touched.
    let call2 = strategy.acquire_initial_token();
    assert_eq!(
        strategy
            .refresh_retry_token(call2, &RetryReason::error(ErrorKind::Server))
            .map(|token| token.attempt()),
        Err(RetryError::QuotaExhausted {
            cost: 5,
            level: 2,
            backoff: None
        })
    );
    // Nor 10 for a timeout.
    let call3 = strategy.acquire_initial_token();
    assert_eq!(
        strategy
            .refresh_retry_token(call3, &RetryReason::error(ErrorKind::Timeout))
            .map(|token| token.attempt()),
        Err(RetryError::QuotaExhausted {
            cost: 10,
            level: 2,
            backoff: None
        })
    );
    assert_eq!(level(&strategy), 2);
    let stats = strategy.scope().stats();
    assert_eq!(
        (stats.quota_exhausted, stats.failures, stats.retries),
        (2, 2, 1)
    );
    // Call 1 succeeds: its 10 come back and retries are possible again.
    strategy.record_success(call1);
    assert_eq!(level(&strategy), 12);
    let call4 = strategy.acquire_initial_token();
    let call4 = retried(&strategy, call4, ErrorKind::Server);
    assert_eq!(level(&strategy), 7);
    strategy.record_failure(call4);
}

#[test]
fn the_quota_runs_out_after_exactly_capacity_over_cost_retries() {
    // 500 / 5 = 100 retries, then none.
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic().max_attempts(1000)));
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Server);
    assert_eq!(steps.len(), 100);
    assert_eq!(steps.last().map(|step| step.2), Some(0));
    assert_eq!(
        refusal,
        RetryError::QuotaExhausted {
            cost: 5,
            level: 0,
            backoff: None
        }
    );
}

#[test]
fn delays_are_capped_at_max_backoff() {
    let (strategy, _clock) = pinned(config(
        RetryConfig::aws_classic()
            .max_attempts(8)
            .max_backoff(secs(5)),
    ));
    let (steps, _) = fail_until_refused(&strategy, ErrorKind::Server);
    let delays: Vec<Duration> = steps.iter().map(|step| step.1).collect();
    // 1, 2, 4, then 8, 16, 32, 64 capped at 5.
    assert_eq!(
        delays,
        [
            secs(1),
            secs(2),
            secs(4),
            secs(5),
            secs(5),
            secs(5),
            secs(5)
        ]
    );
}

#[test]
fn retry_numbers_past_64_saturate_at_max_backoff() {
    // 199 retries at 5 each need 995 tokens.
    let (strategy, _clock) = pinned(config(
        RetryConfig::aws_classic()
            .max_attempts(200)
            .quota_capacity(1000),
    ));
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Server);
    assert_eq!(steps.len(), 199);
    assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 200 });
    for (attempt, delay, _) in &steps {
        let retry = attempt - 1;
        // 2^(retry-1) s reaches 20 s at retry 6 (32 s capped).
        let expected = if retry <= 5 {
            secs(1 << (retry - 1))
        } else {
            secs(20)
        };
        assert_eq!(*delay, expected, "retry {retry}");
    }
    assert_eq!(level(&strategy), 1000 - 199 * 5);
}

#[test]
fn the_ceiling_saturates_without_overflow_for_any_retry_number() {
    let backoff = ExponentialBackoff::new(secs(1), Duration::MAX, Jitter::None);
    // 1 s * 2^63 still fits a Duration; 2^64 s does not and saturates.
    assert_eq!(backoff.ceiling(64), secs(1 << 63));
    assert_eq!(backoff.ceiling(65), Duration::MAX);
    assert_eq!(backoff.ceiling(u32::MAX), Duration::MAX);
    let pinned = FixedRandom(1.0);
    assert_eq!(backoff.delay(64, Duration::ZERO, &pinned), secs(1 << 63));
    for retry in [65, 66, 100, 1000, u32::MAX] {
        assert_eq!(
            backoff.delay(retry, Duration::ZERO, &pinned),
            Duration::MAX,
            "retry {retry}"
        );
    }
    let capped = ExponentialBackoff::new(ms(1), secs(20), Jitter::Full);
    for retry in [64, 65, 128, u32::MAX] {
        assert_eq!(
            capped.delay(retry, secs(20), &pinned),
            secs(20),
            "retry {retry}"
        );
    }
}

#[test]
fn full_jitter_with_an_unbounded_cap_never_panics() {
    // max_backoff is not bounded by the configuration: Duration::MAX is accepted. A jitter draw
    // of exactly 1.0 (FixedRandom's documented "no reduction") must give the ceiling back, not
    // overflow converting through f64.
    let config = config(
        RetryConfig::aws_classic()
            .max_backoff(Duration::MAX)
            .max_attempts(100)
            .quota_capacity(1000),
    );
    let (strategy, _clock) = pinned(config);
    let (steps, _) = fail_until_refused(&strategy, ErrorKind::Server);
    assert_eq!(steps.len(), 99);
    // The token keeps its delay in u64 nanoseconds: it saturates at about 584 years.
    let token_max = Duration::from_nanos(u64::MAX);
    assert_eq!(steps[33].1, secs(1 << 33), "retry 34");
    assert_eq!(steps[63].1, token_max, "retry 64");
    assert_eq!(steps[64].1, token_max, "retry 65");
    for jitter in Jitter::ALL {
        let backoff = ExponentialBackoff::new(secs(1), Duration::MAX, jitter);
        let delay = backoff.delay(65, Duration::MAX, &FixedRandom(1.0));
        assert!(delay >= secs(1), "{jitter}: {delay:?}");
    }
}

#[test]
fn the_other_jitters_with_pinned_randomness() {
    let none = ExponentialBackoff::new(secs(1), secs(20), Jitter::None);
    let equal = ExponentialBackoff::new(secs(1), secs(20), Jitter::Equal);
    let full = ExponentialBackoff::new(secs(1), secs(20), Jitter::Full);
    let low = FixedRandom(0.0);
    let half = FixedRandom(0.5);
    // none: t, whatever the draw.
    assert_eq!(none.delay(3, Duration::ZERO, &low), secs(4));
    // equal: t/2 + u * t/2 with t = 4 s.
    assert_eq!(equal.delay(3, Duration::ZERO, &low), secs(2));
    assert_eq!(equal.delay(3, Duration::ZERO, &half), secs(3));
    // full: u * t.
    assert_eq!(full.delay(3, Duration::ZERO, &low), Duration::ZERO);
    assert_eq!(full.delay(3, Duration::ZERO, &half), secs(2));
    // A source outside [0, 1] is clamped; a NaN (a faulty source) counts as 1.0, the
    // longest delay, instead of panicking.
    assert_eq!(full.delay(3, Duration::ZERO, &FixedRandom(7.0)), secs(4));
    assert_eq!(
        full.delay(3, Duration::ZERO, &FixedRandom(-1.0)),
        Duration::ZERO
    );
    assert_eq!(
        full.delay(3, Duration::ZERO, &FixedRandom(f64::NAN)),
        secs(4)
    );
    assert_eq!(
        equal.delay(3, Duration::ZERO, &FixedRandom(f64::NAN)),
        secs(4)
    );
}

#[test]
fn decorrelated_jitter_grows_from_the_previous_delay() {
    let (strategy, _clock) = pinned(config(
        RetryConfig::aws_classic()
            .max_attempts(6)
            .jitter(Jitter::Decorrelated),
    ));
    let (steps, _) = fail_until_refused(&strategy, ErrorKind::Server);
    // min(20, U(1, prev * 3)) with U = 1.0: prev 0 -> 1 (the base), 1 -> 3, 3 -> 9, 9 -> 27
    // capped at 20, 20 -> 60 capped at 20.
    let delays: Vec<Duration> = steps.iter().map(|step| step.1).collect();
    assert_eq!(delays, [secs(1), secs(3), secs(9), secs(20), secs(20)]);
    // With U = 0.5 and a previous delay of 2 s: 1 + (6 - 1) * 0.5 = 3.5 s.
    let backoff = ExponentialBackoff::new(secs(1), secs(20), Jitter::Decorrelated);
    assert_eq!(backoff.delay(4, secs(2), &FixedRandom(0.5)), ms(3500));
}

#[test]
fn retry_after_is_never_undercut_and_too_long_stops() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic().max_attempts(5)));
    let token = strategy.acquire_initial_token();
    // Backoff 1 s, server asks 3 s: 3 s.
    let token = strategy
        .refresh_retry_token(
            token,
            &RetryReason::error_after(ErrorKind::Throttling, secs(3)),
        )
        .expect("granted");
    assert_eq!((token.delay(), level(&strategy)), (secs(3), 495));
    // Backoff 2^(2-1) = 2 s, server asks 500 ms: 2 s.
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error_after(ErrorKind::Server, ms(500)))
        .expect("granted");
    assert_eq!(token.delay(), secs(2));
    // Exactly max_backoff is allowed.
    let token = strategy
        .refresh_retry_token(
            token,
            &RetryReason::error_after(ErrorKind::Server, secs(20)),
        )
        .expect("granted");
    assert_eq!((token.delay(), level(&strategy)), (secs(20), 485));
    // Above max_backoff: no retry, no charge.
    assert_eq!(
        strategy
            .refresh_retry_token(
                token,
                &RetryReason::error_after(ErrorKind::Server, ms(20_001))
            )
            .map(|token| token.attempt()),
        Err(RetryError::RetryAfterTooLong {
            retry_after: ms(20_001),
            limit: secs(20)
        })
    );
    assert_eq!(level(&strategy), 485);
}

#[test]
fn no_retry_starts_after_the_deadline() {
    let (strategy, clock) = pinned(config(
        RetryConfig::aws_classic().max_attempts(10).timeout(secs(5)),
    ));
    let token = strategy.acquire_initial_token();
    clock.advance(ms(500)); // the first attempt took 500 ms
    let token = retried(&strategy, token, ErrorKind::Server); // starts at 1.5 s
    clock.advance(token.delay() + ms(500));
    let token = retried(&strategy, token, ErrorKind::Server); // 2 s -> starts at 4 s <= 5 s
    assert_eq!(token.delay(), secs(2));
    clock.advance(token.delay() + ms(500)); // now 4.5 s
    // Retry 3 would wait 4 s and start at 8.5 s > 5 s.
    assert_eq!(
        strategy
            .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
            .map(|token| token.attempt()),
        Err(RetryError::DeadlineExceeded { timeout: secs(5) })
    );
    assert_eq!(level(&strategy), 490, "the refused retry is not charged");
}

#[test]
fn a_retry_starting_exactly_at_the_deadline_is_allowed() {
    let (strategy, clock) = pinned(config(RetryConfig::aws_classic().timeout(secs(3))));
    let token = strategy.acquire_initial_token();
    clock.advance(secs(2));
    let token = retried(&strategy, token, ErrorKind::Server); // starts at 2 + 1 = 3 s
    assert_eq!(token.delay(), secs(1));
    strategy.record_failure(token);
}

#[test]
fn max_attempts_one_never_retries() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic().max_attempts(1)));
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Server);
    assert!(steps.is_empty());
    assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 1 });
    assert_eq!(level(&strategy), 500);
}

#[test]
fn abandoning_a_granted_retry_gives_its_cost_back() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic()));
    let token = strategy.acquire_initial_token();
    let token = retried(&strategy, token, ErrorKind::Timeout);
    assert_eq!(level(&strategy), 490);
    strategy.abandon(token);
    assert_eq!(level(&strategy), 500);
}

#[test]
fn the_quota_refills_at_its_rate() {
    let clock = Arc::new(ManualClock::new());
    let quota = RetryQuota::new(10, Some(2.0), clock.clone()).expect("valid refill");
    assert!(quota.try_acquire(10));
    clock.advance(ms(1500));
    assert_eq!(quota.level(), 3);
    clock.advance(secs(60));
    assert_eq!(quota.level(), 10, "never above capacity");
}

#[test]
fn a_refill_rate_that_is_not_positive_and_finite_is_an_error() {
    let clock = Arc::new(ManualClock::new());
    for rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        match RetryQuota::new(10, Some(rate), clock.clone()) {
            Err(ConfigError::InvalidRate { setting, value }) => {
                assert_eq!(setting, "refill_per_second");
                assert!(
                    value.is_nan() && rate.is_nan() || value == rate,
                    "{value} vs {rate}"
                );
            }
            other => panic!("refill {rate}: expected InvalidRate, got {other:?}"),
        }
    }
    assert!(RetryQuota::new(10, None, clock).is_ok());
}

#[test]
fn the_refill_does_not_depend_on_how_often_the_quota_is_read() {
    // 1 token/s = 1 thousandth every millisecond. Read every 1.5 ms for 3 s: 3 tokens, as if
    // read once. (Crediting floor(1.5) = 1 thousandth per read and discarding the remaining half
    // would refill only 2000 thousandths = 2 tokens.)
    let clock = Arc::new(ManualClock::new());
    let polled = RetryQuota::new(10, Some(1.0), clock.clone()).expect("valid refill");
    let unpolled = RetryQuota::new(10, Some(1.0), clock.clone()).expect("valid refill");
    assert!(polled.try_acquire(10));
    assert!(unpolled.try_acquire(10));
    for _ in 0..2000 {
        clock.advance(Duration::from_micros(1500));
        let _ = polled.level();
    }
    assert_eq!(unpolled.level(), 3);
    assert_eq!(polled.level(), 3);
}

#[test]
fn attempts_count_what_was_sent_not_retries_granted_and_never_sent() {
    let (strategy, _clock) = pinned(config(RetryConfig::aws_classic()));
    let token = strategy.acquire_initial_token();
    let retry = retried(&strategy, token, ErrorKind::Server);
    // The call ends while waiting for its retry (cancelled): one attempt was sent.
    strategy.abandon(retry);
    let stats = strategy.scope().stats();
    assert_eq!(
        (stats.attempts, stats.retries, stats.failures),
        (1, 1, 1),
        "the granted retry was never sent"
    );
}
