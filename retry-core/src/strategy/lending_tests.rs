//! What a traffic-sized scope's calls in flight hold, which it lends (`quota::Lending`): every
//! way a call that paid for retries can end gives it all back, on one thread, from many
//! threads at once, and under the driver cancelled at every await.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::{AdaptiveStrategy, RetryStrategy, StandardStrategy};
use crate::backoff::{FixedRandom, RandomSource, SeededRandom};
use crate::classify::{ErrorKind, RetryReason};
use crate::clock::ManualClock;
use crate::config::{RetryConfig, RetryMode};

/// One way a call's token goes back to its strategy at the end of the call.
type EndOfCall = fn(&StandardStrategy, super::RetryToken);

fn server_error() -> RetryReason {
    RetryReason::error(ErrorKind::Server)
}

/// The default strategy with `max_attempts` attempts (and `timeout`), on a manual clock.
fn strategy(max_attempts: u32, timeout: Option<Duration>) -> (StandardStrategy, Arc<ManualClock>) {
    let mut config = RetryConfig::builder().max_attempts(max_attempts);
    if let Some(timeout) = timeout {
        config = config.timeout(timeout);
    }
    let clock = Arc::new(ManualClock::new());
    let strategy = StandardStrategy::builder(config.build().expect("valid"))
        .clock(clock.clone())
        .random(Arc::new(FixedRandom(1.0)))
        .build();
    (strategy, clock)
}

/// A call's token after `retries` granted retries.
fn after_retries(strategy: &impl RetryStrategy, retries: u32) -> super::RetryToken {
    let mut token = strategy.acquire_initial_token();
    for _ in 0..retries {
        token = strategy
            .refresh_retry_token(token, &server_error())
            .expect("a retry");
    }
    token
}

#[test]
fn every_end_of_a_call_that_paid_for_retries_gives_back_what_it_held() {
    let (strategy, clock) = strategy(4, Some(Duration::from_secs(10)));
    let scope = strategy.scope().clone();
    let held = || scope.held_in_flight();
    let ends: [(&str, EndOfCall); 5] = [
        ("success", |s, t| s.record_success(t)),
        ("not retryable", |s, t| s.record_failure(t)),
        ("cancelled in flight", |s, t| s.record_cancelled(t)),
        ("abandoned while waiting", |s, t| s.abandon(t)),
        ("shed", |s, t| s.record_shed(t)),
    ];
    for (end, record) in ends {
        let token = after_retries(&strategy, 2);
        assert_eq!(held(), 28, "{end}: two retries held");
        record(&strategy, token);
        assert_eq!(held(), 0, "{end}");
    }
    // Attempts run out.
    let token = after_retries(&strategy, 3);
    assert!(
        strategy
            .refresh_retry_token(token, &server_error())
            .is_err()
    );
    assert_eq!(held(), 0, "attempts ran out");
    // The deadline passes.
    let token = after_retries(&strategy, 1);
    clock.advance(Duration::from_secs(11));
    assert!(
        strategy
            .refresh_retry_token(token, &server_error())
            .is_err()
    );
    assert_eq!(held(), 0, "the deadline");
}

#[test]
fn a_call_refused_by_the_quota_or_the_rate_limiter_gives_back_what_it_held() {
    // A fixed quota holds no lending; the default's refusal: two calls fail their retries
    // (the lending stops), then calls hold retries until the quota refuses one.
    let (strategy, _clock) = strategy(3, None);
    let scope = strategy.scope().clone();
    for _ in 0..2 {
        let token = after_retries(&strategy, 2);
        assert!(
            strategy
                .refresh_retry_token(token, &server_error())
                .is_err()
        );
    }
    let mut holding = Vec::new();
    let refused = loop {
        let token = after_retries(&strategy, 1);
        match strategy.refresh_retry_token(token, &server_error()) {
            Ok(token) => holding.push(token),
            Err(error) => break error,
        }
    };
    assert!(matches!(refused, super::RetryError::QuotaExhausted { .. }));
    assert_eq!(scope.held_in_flight(), 28 * holding.len() as u64);
    for token in holding {
        strategy.record_failure(token);
    }
    assert_eq!(scope.held_in_flight(), 0);

    // Adaptive mode refusing a retry whose permit would come after `max_wait`.
    let config = RetryConfig::builder()
        .max_attempts(3)
        .mode(RetryMode::Adaptive)
        .max_wait(Duration::from_millis(1))
        .build()
        .expect("valid");
    let adaptive = AdaptiveStrategy::from_builder(
        StandardStrategy::builder(config)
            .clock(Arc::new(ManualClock::new()))
            .random(Arc::new(FixedRandom(1.0))),
    );
    let throttled = RetryReason::error(ErrorKind::Throttling);
    let mut refused = 0;
    for _ in 0..50 {
        let mut token = adaptive.acquire_initial_token();
        loop {
            match adaptive.refresh_retry_token(token, &throttled) {
                Ok(next) => token = next,
                Err(super::RetryError::RateLimited { .. }) => {
                    refused += 1;
                    break;
                }
                Err(_) => break,
            }
        }
    }
    assert!(refused > 0, "the limiter refused no retry");
    assert_eq!(adaptive.scope().held_in_flight(), 0);
}

#[test]
fn threads_ending_calls_every_way_at_once_leave_nothing_held() {
    let (strategy, _clock) = strategy(4, None);
    std::thread::scope(|threads| {
        for thread in 0..8u64 {
            let strategy = &strategy;
            threads.spawn(move || {
                let draw = SeededRandom::new(thread);
                for _ in 0..500 {
                    let retries = (draw.next_f64() * 4.0) as u32;
                    let mut token = Some(strategy.acquire_initial_token());
                    for _ in 0..retries {
                        let Some(current) = token.take() else { break };
                        token = strategy.refresh_retry_token(current, &server_error()).ok();
                    }
                    let Some(token) = token else { continue };
                    match (draw.next_f64() * 4.0) as u32 {
                        0 => strategy.record_success(token),
                        1 => strategy.record_failure(token),
                        2 => strategy.record_cancelled(token),
                        _ => strategy.abandon(token),
                    }
                }
            });
        }
    });
    assert_eq!(strategy.scope().held_in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn calls_cancelled_at_every_await_leave_nothing_held() {
    // A call whose attempts take 5 ms and fail twice (backoffs of 50 and 100 ms, the jitter
    // drawing 1.0) before the third succeeds: 165 ms in all. Cut after 0, 1, ..., 170 ms, it
    // is cancelled while an attempt is in flight, while it sleeps a backoff, or not at all.
    for cut in 0..=170u64 {
        // A scope of its own for each call: cancelled calls keep what their sent retries paid.
        let strategy = StandardStrategy::builder(RetryConfig::default())
            .random(Arc::new(FixedRandom(1.0)))
            .build();
        let attempts = AtomicU32::new(0);
        let call = crate::driver::retry::retry(&strategy, || async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            if attempts.fetch_add(1, Ordering::Relaxed) < 2 {
                Err(io::Error::from(io::ErrorKind::ConnectionRefused))
            } else {
                Ok(())
            }
        });
        let outcome = tokio::time::timeout(Duration::from_millis(cut), call).await;
        assert_eq!(
            outcome.is_ok(),
            cut >= 165,
            "cut after {cut} ms: {outcome:?}"
        );
        assert_eq!(strategy.scope().held_in_flight(), 0, "cut after {cut} ms");
    }
}
