//! Adaptive mode: 64 tasks each call a service about 12 times a second (about 800 calls/s in
//! all). The service admits 1000 requests/s, then from 2 s only 400/s, answering the rest with
//! "throttled"; from 5 s it admits 1000/s again. The first throttle engages the scope's
//! client-side rate limiter, whose fill rate drops once per congestion event and then tracks the
//! service's limit; once the service recovers, the rate climbs back along the CUBIC curve (about
//! `cbrt(0.3 * rate / 0.4)` seconds to regain the rate of the last throttle, then faster). The
//! example ends by saying how long after the limit rose the admitted rate was back at 90 % of
//! the calls offered.
//!
//! Run it with `cargo run -p examples --example adaptive` (about 16 seconds).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::time::Duration;

use retry_core::{RetryInfo, Scope, retryable};
use tokio::time::Instant;

/// The service's answer when it is over its limit.
#[derive(Debug, thiserror::Error, RetryInfo)]
#[error("throttled")]
#[retry(throttling)]
struct Throttled;

/// A service admitting `limit` requests per second (a token bucket), throttling the rest.
struct Service {
    bucket: Mutex<(f64, Instant)>,
    limit_per_sec: AtomicU64,
    admitted: AtomicU64,
    throttled: AtomicU64,
}

impl Service {
    fn handle(&self) -> Result<(), Throttled> {
        let limit = self.limit_per_sec.load(Ordering::Relaxed) as f64;
        let now = Instant::now();
        let mut bucket = self
            .bucket
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let (tokens, last) = *bucket;
        let tokens = (tokens + now.duration_since(last).as_secs_f64() * limit).min(limit / 10.0);
        if tokens >= 1.0 {
            *bucket = (tokens - 1.0, now);
            self.admitted.fetch_add(1, Ordering::Relaxed);
            Ok(())
        } else {
            *bucket = (tokens, now);
            self.throttled.fetch_add(1, Ordering::Relaxed);
            Err(Throttled)
        }
    }
}

static SERVICE: LazyLock<Service> = LazyLock::new(|| Service {
    bucket: Mutex::new((100.0, Instant::now())),
    limit_per_sec: AtomicU64::new(1000),
    admitted: AtomicU64::new(0),
    throttled: AtomicU64::new(0),
});

/// One call to the service, retried in adaptive mode.
#[retryable(
    mode = "adaptive",
    max_attempts = 3,
    initial_backoff = "10ms",
    max_backoff = "1s",
    scope = "adaptive-demo"
)]
async fn call() -> Result<(), Throttled> {
    tokio::time::sleep(Duration::from_millis(2)).await;
    SERVICE.handle()
}

#[tokio::main]
async fn main() {
    let start = Instant::now();
    let workers: Vec<_> = (0..64)
        .map(|_| {
            tokio::spawn(async move {
                while start.elapsed() < Duration::from_secs(16) {
                    // Failed calls are counted by the service; the demo only watches rates.
                    let _ = call().await;
                    tokio::time::sleep(Duration::from_millis(80)).await;
                }
            })
        })
        .collect();

    println!(" time | admitted/s | throttled/s | limiter    | fill rate/s");
    let mut last = (0, 0);
    // Calls offered per second: 64 tasks, each about one call per 82 ms (80 ms pause + 2 ms).
    let offered = 64.0 * 1000.0 / 82.0;
    let mut recovered_after = None;
    for tick in 1..=32 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        match tick {
            4 => {
                SERVICE.limit_per_sec.store(400, Ordering::Relaxed);
                println!("  --- the service's limit drops to 400/s ---");
            }
            10 => {
                SERVICE.limit_per_sec.store(1000, Ordering::Relaxed);
                println!("  --- the service's limit is back at 1000/s ---");
            }
            _ => {}
        }
        let admitted = SERVICE.admitted.load(Ordering::Relaxed);
        let throttled = SERVICE.throttled.load(Ordering::Relaxed);
        let limiter = Scope::lookup("adaptive-demo").map(|scope| scope.stats().limiter);
        let (state, fill_rate) = match limiter {
            Some(stats) if stats.enabled => ("engaged", format!("{:.0}", stats.fill_rate)),
            _ => ("off", "-".to_owned()),
        };
        println!(
            " {:>4.1}s | {:>10} | {:>11} | {state:<10} | {fill_rate:>10}",
            tick as f64 / 2.0,
            (admitted - last.0) * 2,
            (throttled - last.1) * 2,
        );
        let admitted_per_sec = (admitted - last.0) * 2;
        if tick > 10 && recovered_after.is_none() && admitted_per_sec as f64 >= 0.9 * offered {
            recovered_after = Some((tick - 10) as f64 / 2.0);
        }
        last = (admitted, throttled);
    }
    match recovered_after {
        Some(seconds) => println!(
            "recovered: admitted/s back at 90 % of the {offered:.0} calls/s offered {seconds:.1} s after the limit rose"
        ),
        None => println!("not recovered to 90 % of the {offered:.0} calls/s offered within 6 s"),
    }
    for worker in workers {
        // A worker only ends by its loop condition.
        let _ = worker.await;
    }
}
