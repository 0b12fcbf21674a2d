//! Exponential backoff with a cap, spread by a jitter.

use std::time::Duration;

use super::{Backoff, Jitter, RandomSource};

/// Exponential backoff with a cap and jitter: `min(initial * 2^(retry-1), max)` spread by
/// [`Jitter`]. Saturates at `max` for any retry number, `u32::MAX` included.
///
/// ```
/// use retry_core::backoff::{Backoff, ExponentialBackoff, FixedRandom, Jitter};
/// use std::time::Duration;
///
/// let backoff = ExponentialBackoff::new(Duration::from_secs(1), Duration::from_secs(20), Jitter::Full);
/// let pinned = FixedRandom(1.0);
/// assert_eq!(backoff.delay(3, Duration::ZERO, &pinned), Duration::from_secs(4));
/// assert_eq!(backoff.delay(u32::MAX, Duration::ZERO, &pinned), Duration::from_secs(20));
/// assert_eq!(backoff.delay(3, Duration::ZERO, &FixedRandom(0.25)), Duration::from_secs(1));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExponentialBackoff {
    initial: Duration,
    max: Duration,
    jitter: Jitter,
}

impl ExponentialBackoff {
    /// A policy starting at `initial`, doubling up to `max`, spread by `jitter`. An `initial`
    /// above `max` is capped at `max`; validated configuration comes from
    /// [`RetryConfig`](crate::RetryConfig).
    ///
    /// ```
    /// use retry_core::backoff::{ExponentialBackoff, Jitter};
    /// use std::time::Duration;
    /// let b = ExponentialBackoff::new(Duration::from_secs(30), Duration::from_secs(20), Jitter::Full);
    /// assert_eq!(b.initial(), Duration::from_secs(20)); // capped at `max`
    /// ```
    pub fn new(initial: Duration, max: Duration, jitter: Jitter) -> Self {
        Self {
            initial: initial.min(max),
            max,
            jitter,
        }
    }

    /// The delay before the first retry, before jitter.
    pub fn initial(&self) -> Duration {
        self.initial
    }

    /// The cap on every delay.
    pub fn max(&self) -> Duration {
        self.max
    }

    /// The jitter.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// `min(initial * 2^(retry-1), max)` without jitter, saturating.
    ///
    /// ```
    /// # use retry_core::backoff::{ExponentialBackoff, Jitter};
    /// # use std::time::Duration;
    /// let b = ExponentialBackoff::new(Duration::from_secs(1), Duration::from_secs(20), Jitter::Full);
    /// assert_eq!(b.ceiling(1), Duration::from_secs(1));
    /// assert_eq!(b.ceiling(5), Duration::from_secs(16));
    /// assert_eq!(b.ceiling(6), Duration::from_secs(20));
    /// assert_eq!(b.ceiling(65), Duration::from_secs(20));
    /// ```
    pub fn ceiling(&self, retry: u32) -> Duration {
        let doublings = retry.saturating_sub(1);
        if doublings >= 64 {
            return self.max;
        }
        let nanos = self.initial.as_nanos().saturating_mul(1u128 << doublings);
        duration_from_nanos(nanos).min(self.max)
    }
}

impl Backoff for ExponentialBackoff {
    fn delay(&self, retry: u32, previous: Duration, random: &dyn RandomSource) -> Duration {
        // A NaN from a faulty source counts as 1.0: no reduction, the longest (safest) delay.
        let u = random.next_f64();
        let u = if u.is_nan() { 1.0 } else { u.clamp(0.0, 1.0) };
        let ceiling = self.ceiling(retry);
        let delay = match self.jitter {
            Jitter::None => ceiling,
            Jitter::Full => scale(ceiling, u),
            Jitter::Equal => ceiling / 2 + scale(ceiling / 2, u),
            Jitter::Decorrelated => {
                let upper = previous.saturating_mul(3).max(self.initial);
                self.initial + scale(upper - self.initial, u)
            }
        };
        delay.min(self.max)
    }
}

/// `duration * u` for `u` in `[0, 1]`, never above `duration`. Unlike `Duration::mul_f64` it
/// does not panic when `duration` is near `Duration::MAX` (whose f64 rounds up past it).
fn scale(duration: Duration, u: f64) -> Duration {
    Duration::try_from_secs_f64(duration.as_secs_f64() * u)
        .map_or(duration, |scaled| scaled.min(duration))
}

/// A duration from nanoseconds, saturating at `Duration::MAX`.
fn duration_from_nanos(nanos: u128) -> Duration {
    const NANOS_PER_SEC: u128 = 1_000_000_000;
    match u64::try_from(nanos / NANOS_PER_SEC) {
        // The remainder is below 10^9 and fits in u32.
        Ok(secs) => Duration::new(secs, (nanos % NANOS_PER_SEC) as u32),
        Err(_) => Duration::MAX,
    }
}
