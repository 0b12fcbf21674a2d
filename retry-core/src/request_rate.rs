//! The rate of calls a scope makes, measured lock-free: what a traffic-sized quota follows.

use std::time::Duration;

use crate::clock::duration_to_nanos;
use crate::sync::{AtomicU64, Ordering};

/// How often the rate is recomputed.
pub const REQUEST_RATE_PERIOD: Duration = Duration::from_secs(1);

/// The weight of the newest period in the smoothed rate (as the adaptive limiter's measured
/// rate, [`SMOOTH`](crate::adaptive::SMOOTH)).
const SMOOTH: f64 = crate::adaptive::SMOOTH;

/// Calls per second, counted with one atomic increment per call and recomputed once per
/// [`REQUEST_RATE_PERIOD`] by whichever caller closes the period (compare-and-swap on its start;
/// model-checked with loom in `loom_model` below).
#[derive(Debug)]
pub(crate) struct RequestRate {
    count: AtomicU64,
    period_start: AtomicU64,
    /// The smoothed rate as `f64` bits; `u64::MAX` before the first period closes.
    rate_bits: AtomicU64,
}

impl RequestRate {
    pub(crate) fn new(now: Duration) -> Self {
        Self {
            count: AtomicU64::new(0),
            period_start: AtomicU64::new(duration_to_nanos(now)),
            rate_bits: AtomicU64::new(u64::MAX),
        }
    }

    /// Counts one call at `now`; returns the new smoothed rate when this call closed a period.
    pub(crate) fn record(&self, now: Duration) -> Option<f64> {
        self.count.fetch_add(1, Ordering::AcqRel);
        let now = duration_to_nanos(now);
        let start = self.period_start.load(Ordering::Acquire);
        if now < start {
            // The clock stepped back (tokio's, in a later runtime): no time passed, and the
            // period carries on from this reading. A racing caller saw the same step.
            let _ =
                self.period_start
                    .compare_exchange(start, now, Ordering::AcqRel, Ordering::Acquire);
            return None;
        }
        let elapsed = now - start;
        if elapsed < duration_to_nanos(REQUEST_RATE_PERIOD) {
            return None;
        }
        self.period_start
            .compare_exchange(start, now, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        let calls = self.count.swap(0, Ordering::AcqRel);
        let rate = calls as f64 / Duration::from_nanos(elapsed).as_secs_f64();
        let previous = self.rate_bits.load(Ordering::Acquire);
        let smoothed = if previous == u64::MAX {
            rate
        } else {
            rate * SMOOTH + f64::from_bits(previous) * (1.0 - SMOOTH)
        };
        self.rate_bits.store(smoothed.to_bits(), Ordering::Release);
        Some(smoothed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_recomputed_once_per_period_and_smoothed() {
        let rate = RequestRate::new(Duration::ZERO);
        // 10 calls in the first second: the 11th, at 1.0 s, closes it with 11 calls / 1 s.
        for i in 0..10 {
            assert_eq!(rate.record(Duration::from_millis(100 * i)), None);
        }
        assert_eq!(rate.record(Duration::from_secs(1)), Some(11.0));
        // One call 2 s later: 1 call / 2 s = 0.5, smoothed 0.5 * 0.8 + 11 * 0.2 = 2.6.
        let smoothed = rate
            .record(Duration::from_secs(3))
            .expect("a period closed");
        assert!((smoothed - 2.6).abs() < 1e-9, "{smoothed}");
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc;

    /// Two calls racing past the end of a period: exactly one closes it, and no call is lost
    /// (each is either in the closed period's rate or still counted in the open one).
    #[test]
    fn loom_racing_calls_close_a_period_once_and_lose_none() {
        loom::model(|| {
            let rate = Arc::new(RequestRate::new(Duration::ZERO));
            let callers: Vec<_> = (0..2)
                .map(|_| {
                    let rate = Arc::clone(&rate);
                    loom::thread::spawn(move || rate.record(Duration::from_secs(1)))
                })
                .collect();
            let closed: Vec<f64> = callers
                .into_iter()
                .filter_map(|caller| caller.join().expect("no panic"))
                .collect();
            assert_eq!(closed.len(), 1, "one period, closed once");
            // The period lasted 1 s, so the rate is the number of calls it counted.
            let counted = closed[0] as u64;
            let still_open = rate.count.load(Ordering::Acquire);
            assert_eq!(counted + still_open, 2);
        });
    }
}

#[cfg(test)]
mod backward_clock_tests {
    use super::*;

    #[test]
    fn a_clock_that_steps_back_does_not_freeze_the_rate() {
        let rate = RequestRate::new(Duration::from_secs(100));
        assert_eq!(rate.record(Duration::from_secs(101)), Some(1.0));
        // The clock steps back 91 s (a later tokio runtime): the next period starts at the new
        // reading and closes 1 s later, not 91 s later.
        assert_eq!(rate.record(Duration::from_secs(10)), None);
        let closed = rate.record(Duration::from_secs(11));
        assert!(closed.is_some(), "a period after the step back closes");
    }
}
