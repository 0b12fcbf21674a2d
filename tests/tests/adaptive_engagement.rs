//! Adaptive mode engages at the rate it was sending: when the first throttle turns a scope's
//! rate limiter on, the fill rate starts from what the scope really sent in the last second,
//! however its idle responses were sampled before. In virtual time, through `retry` on tokio's
//! paused clock: 20 workers at 100 calls/s in all, then one throttling response.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_core::adaptive::reseed_idle_sampling;
use retry_core::{AdaptiveStrategy, RetryConfig, RetryInfo, RetryMode, RetrySafety, retry};
use tokio::time::Instant;

/// CUBIC's multiplicative decrease: a throttle cuts the rate to this share of the rate it was
/// sent at. Source: the AWS SDKs (`BETA = 0.7`), pinned in the crate's own adaptive tests.
const BETA: f64 = 0.7;

/// Workers calling the service at once.
const WORKERS: u32 = 20;
/// How long the service takes to answer.
const LATENCY: Duration = Duration::from_millis(10);
/// Each worker's pause between the end of a call and the next: 5 calls/s per worker, 100/s
/// in all.
const THINK: Duration = Duration::from_millis(190);
/// The send rate must be within this share of the one measured by the test.
const TOLERANCE: f64 = 0.2;

/// The service's only error: "slow down".
#[derive(Debug)]
struct Throttled;

impl RetryInfo for Throttled {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
    fn is_throttling(&self) -> bool {
        true
    }
}

/// What one run saw: the fill rate right after the limiter turned on, and the rate the
/// workers sent at in the second before (or since their first send, if that was later).
#[derive(Debug)]
struct Engagement {
    at: Duration,
    fill_rate: f64,
    send_rate: f64,
}

/// Runs the workers until a call sent at `throttle_at` or later is throttled (once), and
/// reads the limiter as soon as it is on.
async fn engage(throttle_at: Duration, seed: u64) -> Engagement {
    reseed_idle_sampling(seed);
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid");
    let strategy = Arc::new(AdaptiveStrategy::new(config));
    let start = Instant::now();
    let sends = Arc::new(Mutex::new(Vec::new()));
    let throttled = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for worker in 0..WORKERS {
        let (strategy, sends, throttled) = (strategy.clone(), sends.clone(), throttled.clone());
        workers.push(tokio::spawn(async move {
            // Staggered, so that the 100 calls/s are spread evenly.
            tokio::time::sleep(THINK / WORKERS * worker).await;
            loop {
                let outcome = retry(&*strategy, || {
                    let sent = start.elapsed();
                    sends.lock().expect("not poisoned").push(sent);
                    let throttle = sent >= throttle_at && !throttled.swap(true, Ordering::SeqCst);
                    async move {
                        tokio::time::sleep(LATENCY).await;
                        if throttle { Err(Throttled) } else { Ok(()) }
                    }
                })
                .await;
                drop(outcome);
                tokio::time::sleep(THINK).await;
            }
        }));
    }
    let limiter = strategy.scope().limiter().clone();
    while !limiter.is_enabled() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let at = start.elapsed();
    let fill_rate = limiter.stats().fill_rate;
    for worker in &workers {
        worker.abort();
    }
    let sends = sends.lock().expect("not poisoned").clone();
    let first = sends.iter().min().copied().unwrap_or_default();
    let from = at.saturating_sub(Duration::from_secs(1)).max(first);
    let in_window = sends
        .iter()
        .filter(|&&sent| sent > from && sent <= at)
        .count();
    let send_rate = in_window as f64 / (at - from).as_secs_f64();
    Engagement {
        at,
        fill_rate,
        send_rate,
    }
}

#[tokio::test(start_paused = true)]
async fn the_first_throttle_starts_the_limiter_at_beta_times_the_last_second_s_send_rate() {
    let mut misses = Vec::new();
    // In the middle of the first measurement bucket (a newcomer's program, throttled at once),
    // and after seconds of steady sending, where the idle responses were sampled.
    for throttle_at in [0.35, 2.7, 5.05] {
        for seed in 0..5 {
            let seen = engage(Duration::from_secs_f64(throttle_at), seed).await;
            let expected = BETA * seen.send_rate;
            assert!(
                (90.0..=110.0).contains(&seen.send_rate),
                "the workers send 100/s: {seen:?}"
            );
            if (seen.fill_rate - expected).abs() > TOLERANCE * expected {
                misses.push(format!(
                    "throttled at {:?} (seed {seed}): fill rate {:.2}/s, expected {expected:.2}/s \
                     (0.7 x {:.1}/s sent)",
                    seen.at, seen.fill_rate, seen.send_rate
                ));
            }
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// The newcomer's program: a scope made `made_before` its 20 workers start at once, and the
/// service throttles one of the first calls. Returns the limiter's fill rate after the
/// workers' first second, and the sends in it.
async fn first_second_after_a_throttle_in_the_first_burst(made_before: Duration) -> (f64, u32) {
    reseed_idle_sampling(3);
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid");
    let strategy = Arc::new(AdaptiveStrategy::new(config));
    tokio::time::sleep(made_before).await;
    let throttled = Arc::new(AtomicBool::new(false));
    let sends = Arc::new(Mutex::new(0u32));
    let mut workers = Vec::new();
    for _ in 0..WORKERS {
        let (strategy, throttled, sends) = (strategy.clone(), throttled.clone(), sends.clone());
        workers.push(tokio::spawn(async move {
            loop {
                let outcome = retry(&*strategy, || {
                    *sends.lock().expect("not poisoned") += 1;
                    let throttle = !throttled.swap(true, Ordering::SeqCst);
                    async move {
                        tokio::time::sleep(LATENCY).await;
                        if throttle { Err(Throttled) } else { Ok(()) }
                    }
                })
                .await;
                drop(outcome);
                tokio::time::sleep(THINK).await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let limiter = strategy.scope().limiter().clone();
    let fill_rate = limiter.stats().fill_rate;
    let sent_in_the_first_second = *sends.lock().expect("not poisoned");
    for worker in &workers {
        worker.abort();
    }
    assert!(limiter.is_enabled());
    (fill_rate, sent_in_the_first_second)
}

/// 20 workers at 5 calls/s each: 100/s (about 100 sends in the first second). The limiter
/// starts at 0.7 x that or more, and the workers send 80 or more.
fn assert_started_at_the_burst_s_rate((fill_rate, sent): (f64, u32)) {
    assert!(
        fill_rate >= 0.8 * BETA * 100.0,
        "fill rate {fill_rate}/s after the first second, {sent} sent"
    );
    assert!(
        sent >= 80,
        "{sent} sent in the first second (fill rate {fill_rate}/s)"
    );
}

#[tokio::test(start_paused = true)]
async fn a_throttle_in_the_first_burst_starts_the_limiter_at_the_burst_s_rate_once_it_is_over() {
    // No rate is counted yet (the scope's first response came less than 100 ms ago): the
    // limiter starts at the AWS SDKs' floor, and once the burst is over it starts over from
    // the rate counted then. Without that, it stayed at the 0.5/s floor, the workers waiting
    // seconds for permits while they had sent 100/s.
    assert_started_at_the_burst_s_rate(
        first_second_after_a_throttle_in_the_first_burst(Duration::ZERO).await,
    );
}

#[tokio::test(start_paused = true)]
async fn a_scope_made_long_before_its_first_calls_starts_at_its_first_burst_s_rate_too() {
    // An application makes its client at start-up and calls later. Counted from the scope's
    // making, the first burst 2 s later read as a few calls a second, and the limiter stayed
    // at the floor (0.5/s after the workers' first second, 21 sent): the first burst is the
    // scope's first responses, not its first 100 ms.
    assert_started_at_the_burst_s_rate(
        first_second_after_a_throttle_in_the_first_burst(Duration::from_secs(2)).await,
    );
}
