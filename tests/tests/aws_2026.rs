//! The `aws-2026` preset attempt by attempt, jitter pinned to 1.0 on a manual clock: costs 14
//! (5 for throttling, 14 for timeouts), bases 50 ms / 1 s, the 20 s cap, retry numbers past 64,
//! and a server's `retry_after` clamped to `[t_i, t_i + 5 s]`.

use std::sync::Arc;
use std::time::Duration;

use retry_core::backoff::{FixedRandom, RandomSource};
use retry_core::clock::ManualClock;
use retry_core::{
    ErrorKind, RetryConfig, RetryError, RetryReason, RetryStrategy, StandardStrategy,
};

mod common;

use common::{fail_until_refused, level, ms, secs};

/// The `aws-2026` preset with `max_attempts`, its jitter drawing `u`, on a manual clock.
fn preset(max_attempts: u32, u: f64) -> StandardStrategy {
    let config = RetryConfig::aws_2026()
        .max_attempts(max_attempts)
        .build()
        .expect("a valid preset");
    let random: Arc<dyn RandomSource> = Arc::new(FixedRandom(u));
    StandardStrategy::builder(config)
        .random(random)
        .clock(Arc::new(ManualClock::new()))
        .build()
}

/// The delay of a first retry of `kind` whose server asked for `retry_after`, in a fresh call.
fn first_retry_delay(
    strategy: &StandardStrategy,
    kind: ErrorKind,
    retry_after: Duration,
) -> Duration {
    let token = strategy.acquire_initial_token();
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error_after(kind, retry_after))
        .expect("aws-2026 clamps retry_after instead of refusing");
    let delay = token.delay();
    strategy.abandon(token);
    delay
}

#[test]
fn the_preset_values() {
    let config = RetryConfig::aws_2026().build().expect("valid");
    assert_eq!(config.retry_cost(), 14);
    assert_eq!(config.throttling_retry_cost(), 5);
    assert_eq!(config.timeout_retry_cost(), 14);
    assert_eq!(config.initial_backoff(), ms(50));
    assert_eq!(config.throttling_backoff(), secs(1));
    assert_eq!(config.max_backoff(), secs(20));
    assert_eq!(config.retry_after_slack(), Some(secs(5)));
    assert_eq!(config.quota_capacity(), 500);
    assert_eq!(config.max_attempts(), 3);
    assert_eq!(config.success_reward(), 1);
}

#[test]
fn server_errors_start_at_50_ms_and_cost_14() {
    let strategy = preset(5, 1.0);
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Server);
    assert_eq!(
        steps,
        [
            (2, ms(50), 486),
            (3, ms(100), 472),
            (4, ms(200), 458),
            (5, ms(400), 444),
        ]
    );
    assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 5 });
}

#[test]
fn timeouts_cost_14_like_other_errors() {
    let strategy = preset(4, 1.0);
    let (steps, _) = fail_until_refused(&strategy, ErrorKind::Timeout);
    assert_eq!(
        steps,
        [(2, ms(50), 486), (3, ms(100), 472), (4, ms(200), 458)]
    );
}

#[test]
fn throttling_starts_at_1_s_and_costs_5() {
    let strategy = preset(5, 1.0);
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Throttling);
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
}

#[test]
fn a_success_refunds_the_last_retry_cost() {
    let strategy = preset(5, 1.0);
    // Server (14) then throttling (5): the success returns 5.
    let token = strategy.acquire_initial_token();
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
        .expect("granted");
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
        .expect("granted");
    assert_eq!((token.delay(), level(&strategy)), (secs(2), 481));
    strategy.record_success(token);
    assert_eq!(level(&strategy), 486);
    // Throttling (5) then timeout (14): the success returns 14.
    let token = strategy.acquire_initial_token();
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
        .expect("granted");
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Timeout))
        .expect("granted");
    // Retry 2 of a timeout: 50 ms * 2.
    assert_eq!((token.delay(), level(&strategy)), (ms(100), 467));
    strategy.record_success(token);
    assert_eq!(level(&strategy), 481);
}

#[test]
fn first_try_successes_add_one_up_to_capacity() {
    let strategy = preset(3, 1.0);
    let token = strategy.acquire_initial_token();
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
        .expect("granted");
    strategy.record_failure(token);
    assert_eq!(level(&strategy), 495);
    let levels: Vec<u32> = (0..7)
        .map(|_| {
            let token = strategy.acquire_initial_token();
            strategy.record_success(token);
            level(&strategy)
        })
        .collect();
    assert_eq!(levels, [496, 497, 498, 499, 500, 500, 500]);
}

#[test]
fn an_exhausted_quota_stops_retrying_and_throttling_is_cheaper() {
    let strategy = preset(1000, 1.0);
    // 500 = 35 * 14 + 10: 35 retries, then 14 cannot be paid.
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Server);
    assert_eq!(steps.len(), 35);
    assert_eq!(
        refusal,
        RetryError::QuotaExhausted {
            cost: 14,
            level: 10,
            backoff: None
        }
    );
    // Throttling retries cost 5: two more fit in the 10 left.
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Throttling);
    assert_eq!(steps.iter().map(|step| step.2).collect::<Vec<_>>(), [5, 0]);
    assert_eq!(
        refusal,
        RetryError::QuotaExhausted {
            cost: 5,
            level: 0,
            backoff: None
        }
    );
    assert_eq!(strategy.scope().stats().quota_exhausted, 2);
}

#[test]
fn delays_are_capped_at_20_s() {
    let strategy = preset(12, 1.0);
    let (steps, _) = fail_until_refused(&strategy, ErrorKind::Server);
    let delays: Vec<Duration> = steps.iter().map(|step| step.1).collect();
    // 50 ms * 2^(i-1): 12.8 s at retry 9, 25.6 s capped at 20 s from retry 10 on.
    assert_eq!(
        delays,
        [
            ms(50),
            ms(100),
            ms(200),
            ms(400),
            ms(800),
            ms(1600),
            ms(3200),
            ms(6400),
            ms(12_800),
            secs(20),
            secs(20),
        ]
    );
    let strategy = preset(8, 1.0);
    let (steps, _) = fail_until_refused(&strategy, ErrorKind::Throttling);
    let delays: Vec<Duration> = steps.iter().map(|step| step.1).collect();
    assert_eq!(
        delays,
        [
            secs(1),
            secs(2),
            secs(4),
            secs(8),
            secs(16),
            secs(20),
            secs(20)
        ]
    );
}

#[test]
fn retry_numbers_past_64_saturate() {
    // 99 throttling retries at 5 each: 495 of 500.
    let strategy = preset(100, 1.0);
    let (steps, refusal) = fail_until_refused(&strategy, ErrorKind::Throttling);
    assert_eq!(steps.len(), 99);
    assert_eq!(refusal, RetryError::MaxAttemptsReached { attempts: 100 });
    for (attempt, delay, _) in &steps[5..] {
        assert_eq!(*delay, secs(20), "attempt {attempt}");
    }
    assert_eq!(level(&strategy), 5);
}

#[test]
fn retry_after_is_clamped_to_the_backoff_plus_five_seconds() {
    let strategy = preset(3, 1.0);
    // A first retry of a server error: t_1 = 50 ms, window [50 ms, 5.05 s].
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, ms(10)),
        ms(50)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, ms(50)),
        ms(50)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, secs(3)),
        secs(3)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, ms(5050)),
        ms(5050)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, ms(5051)),
        ms(5050)
    );
    // Longer than max_backoff: clamped, not refused.
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, secs(60)),
        ms(5050)
    );
    // Throttling: t_1 = 1 s, window [1 s, 6 s].
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Throttling, Duration::ZERO),
        secs(1)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Throttling, secs(4)),
        secs(4)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Throttling, secs(10)),
        secs(6)
    );
    // Timeouts clamp the same way as server errors.
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Timeout, secs(10)),
        ms(5050)
    );
    // Every call was abandoned: its cost went back.
    assert_eq!(level(&strategy), 500);
}

#[test]
fn the_clamp_window_follows_the_jittered_backoff() {
    // With U = 0.5, t_1 = 25 ms for a server error and 500 ms for throttling.
    let strategy = preset(3, 0.5);
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, Duration::ZERO),
        ms(25)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, secs(1)),
        secs(1)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Server, secs(10)),
        ms(5025)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Throttling, Duration::ZERO),
        ms(500)
    );
    assert_eq!(
        first_retry_delay(&strategy, ErrorKind::Throttling, secs(9)),
        ms(5500)
    );
}

#[test]
fn retry_after_later_in_the_call_uses_that_retry_backoff() {
    let strategy = preset(10, 1.0);
    let mut token = strategy.acquire_initial_token();
    let mut delays = Vec::new();
    // Throttling retries 1..=6 each asking 100 s: t_i + 5 s with t_i = 1, 2, 4, 8, 16, 20 s.
    for _ in 0..6 {
        token = strategy
            .refresh_retry_token(
                token,
                &RetryReason::error_after(ErrorKind::Throttling, secs(100)),
            )
            .expect("granted");
        delays.push(token.delay());
    }
    assert_eq!(
        delays,
        [secs(6), secs(7), secs(9), secs(13), secs(21), secs(25)]
    );
    strategy.record_failure(token);
    assert_eq!(level(&strategy), 500 - 6 * 5);
}
