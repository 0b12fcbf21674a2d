//! The rate of calls a scope makes, measured from its call counters when a retry asks for it:
//! what a traffic-sized quota follows. Nothing is done per call: the success path only counts
//! (the scope's striped success counter), and the rate is sampled on the retry path.

use std::time::Duration;

use crate::clock::duration_to_nanos;
use crate::sync::{AtomicU64, Mutex, Ordering, TryLockError};

/// The least time between two samples of the call count: a shorter interval holds too few
/// calls to tell a rate.
pub(crate) const SAMPLE_PERIOD: Duration = Duration::from_secs(1);

/// Calls per second: an exponentially weighted moving average, with time constant `window`, of
/// the rate between samples of the scope's count of ended calls. A sample is taken by whoever
/// asks at least [`SAMPLE_PERIOD`] after the last one and finds the sample free (`try_lock`:
/// no caller ever waits; one that finds it taken uses the published rate); within a period a
/// caller reads two atomics and takes no lock. Model-checked with loom in `loom_model` below.
#[derive(Debug)]
pub(crate) struct RequestRate {
    window: Duration,
    last: Mutex<Sample>,
    /// `last.at`, readable without the lock (written with it held).
    sampled_at: AtomicU64,
    /// The average as `f64` bits; [`NO_RATE`] before the first sample.
    rate_bits: AtomicU64,
}

/// A clock reading and the calls counted then.
#[derive(Debug, Clone, Copy)]
struct Sample {
    at: u64,
    calls: u64,
}

/// `rate_bits` before a rate is measured (a NaN bit pattern no division produces here).
const NO_RATE: u64 = u64::MAX;

impl RequestRate {
    /// No rate yet; the first sample will measure from `now`, when no call had been counted.
    pub(crate) fn new(now: Duration, window: Duration) -> Self {
        let at = duration_to_nanos(now);
        Self {
            window,
            last: Mutex::new(Sample { at, calls: 0 }),
            sampled_at: AtomicU64::new(at),
            rate_bits: AtomicU64::new(NO_RATE),
        }
    }

    /// The average rate now, `now()` reading the clock: folds in a new sample, `calls()` being
    /// the calls counted in all (asked for only then), if [`SAMPLE_PERIOD`] has passed since the
    /// last one. `None` before the first sample. Also returns the clock's last reading, so that
    /// the caller needs no other (within a period, the clock is read once).
    ///
    /// A reading earlier than the last sample (a clock that stepped back, as tokio's does in a
    /// later runtime) counts as no time passing: sampling starts over from it. The clock is read
    /// after the last sample's time, and again under the lock, so that a reading merely taken
    /// before another caller's sample is never mistaken for such a step.
    pub(crate) fn measure(
        &self,
        now: impl Fn() -> Duration,
        calls: impl FnOnce() -> u64,
    ) -> (Option<f64>, u64) {
        let sampled_at = self.sampled_at.load(Ordering::Acquire);
        let first = duration_to_nanos(now());
        if Self::within_period(sampled_at, first) {
            return (self.rate(), first);
        }
        let mut last = match self.last.try_lock() {
            Ok(last) => last,
            Err(TryLockError::WouldBlock) => return (self.rate(), first),
            // Nothing panics while holding it; were it poisoned, the sample is still whole.
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
        };
        let now = duration_to_nanos(now());
        // Another caller may have sampled since the check above.
        if Self::within_period(last.at, now) {
            return (self.rate(), now);
        }
        let calls = calls();
        let Some(elapsed) = now.checked_sub(last.at) else {
            *last = Sample { at: now, calls };
            self.sampled_at.store(now, Ordering::Release);
            return (self.rate(), now);
        };
        let elapsed = Duration::from_nanos(elapsed);
        let measured = calls.saturating_sub(last.calls) as f64 / elapsed.as_secs_f64();
        let average = match self.rate() {
            None => measured,
            // The weight an interval of `elapsed` gets in an average over `window`.
            Some(previous) => {
                let weight = 1.0 - (-elapsed.as_secs_f64() / self.window.as_secs_f64()).exp();
                previous + weight * (measured - previous)
            }
        };
        *last = Sample { at: now, calls };
        self.rate_bits.store(average.to_bits(), Ordering::Release);
        self.sampled_at.store(now, Ordering::Release);
        (Some(average), now)
    }

    /// Whether `now` is less than a [`SAMPLE_PERIOD`] after a sample taken `at` (and not
    /// before it: a clock that stepped back is handled under the lock).
    fn within_period(at: u64, now: u64) -> bool {
        now.checked_sub(at)
            .is_some_and(|elapsed| elapsed < duration_to_nanos(SAMPLE_PERIOD))
    }

    /// The average last published; `None` before the first sample.
    fn rate(&self) -> Option<f64> {
        let bits = self.rate_bits.load(Ordering::Acquire);
        (bits != NO_RATE).then(|| f64::from_bits(bits))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_first_sample_measures_from_the_start_and_later_ones_are_averaged() {
        let rate = RequestRate::new(secs(100), MINUTE);
        // Less than a period: nothing measured yet.
        assert_eq!(
            rate.measure(|| Duration::from_millis(100_500), || 3).0,
            None
        );
        // 120 calls in the first 60 s: 2/s.
        assert_eq!(rate.measure(|| secs(160), || 120).0, Some(2.0));
        // Within a period of that sample: the same rate, no new sample.
        assert_eq!(
            rate.measure(|| Duration::from_millis(160_900), || 1_000).0,
            Some(2.0)
        );
        // 60 s later, 600 more calls (10/s), weighted 1 - e^-1 = 0.632: 2 + 0.632 * 8 = 7.057.
        let average = rate.measure(|| secs(220), || 720).0.expect("a rate");
        assert!((average - 7.057).abs() < 0.001, "{average}");
        // After ten windows the old rate weighs e^-10: the average is the new rate, 0/s.
        let idle = rate.measure(|| secs(820), || 720).0.expect("a rate");
        assert!(idle < 0.001, "{idle}");
    }

    #[test]
    fn a_clock_that_steps_back_does_not_freeze_the_rate() {
        let rate = RequestRate::new(secs(100), MINUTE);
        assert_eq!(rate.measure(|| secs(160), || 60).0, Some(1.0));
        // The clock steps back 150 s (a later tokio runtime): sampling starts over from the
        // new reading, and the next sample is 1 s later, not 151 s later.
        assert_eq!(rate.measure(|| secs(10), || 60).0, Some(1.0));
        // No call in that second: the average falls (1 - e^(-1/60) of the way to 0).
        let after = rate.measure(|| secs(11), || 60).0.expect("a rate");
        assert!(
            (after - 0.9835).abs() < 0.0001,
            "a sample 1 s after the step back: {after}"
        );
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc;

    /// Two retries asking for the rate as a period ends: at most one takes the sample (the
    /// other uses the published rate, or finds the new sample), and the rate published is that
    /// of the calls counted, whichever order they ran in.
    #[test]
    fn loom_racing_samplers_take_one_sample_and_publish_its_rate() {
        loom::model(|| {
            let rate = Arc::new(RequestRate::new(Duration::ZERO, Duration::from_secs(60)));
            let callers: Vec<_> = (0..2)
                .map(|_| {
                    let rate = Arc::clone(&rate);
                    loom::thread::spawn(move || rate.measure(|| Duration::from_secs(2), || 10).0)
                })
                .collect();
            let seen: Vec<Option<f64>> = callers
                .into_iter()
                .map(|caller| caller.join().expect("no panic"))
                .collect();
            // 10 calls in 2 s: 5/s, seen by the sampler and by whoever came after it; a caller
            // that found the sample taken may have seen no rate yet.
            assert!(seen.contains(&Some(5.0)), "{seen:?}");
            assert!(
                seen.iter().all(|r| matches!(r, None | Some(5.0))),
                "{seen:?}"
            );
            assert_eq!(rate.rate(), Some(5.0));
        });
    }

    /// One caller moves the clock to 2 s and asks for the rate while another asks too: the
    /// sample ends at 2 s whatever the order. A reading the second caller took before the
    /// first one's sample is never taken for the clock stepping back (which would restart the
    /// sampling at 0 s, behind the sample already taken).
    #[test]
    fn loom_a_reading_older_than_another_callers_sample_is_no_step_back() {
        loom::model(|| {
            let clock = Arc::new(AtomicU64::new(0));
            let rate = Arc::new(RequestRate::new(Duration::ZERO, Duration::from_secs(60)));
            let read = |clock: &AtomicU64| Duration::from_secs(clock.load(Ordering::Acquire));
            let mover = {
                let (clock, rate) = (Arc::clone(&clock), Arc::clone(&rate));
                loom::thread::spawn(move || {
                    clock.store(2, Ordering::Release);
                    rate.measure(|| read(&clock), || 10).0
                })
            };
            let other = {
                let (clock, rate) = (Arc::clone(&clock), Arc::clone(&rate));
                loom::thread::spawn(move || rate.measure(|| read(&clock), || 10).0)
            };
            mover.join().expect("no panic");
            other.join().expect("no panic");
            let last = *rate.last.lock().expect("not poisoned");
            assert_eq!(last.at, duration_to_nanos(Duration::from_secs(2)));
            assert_eq!(rate.rate(), Some(5.0));
        });
    }
}
