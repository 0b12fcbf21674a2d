//! Time as the strategies see it: an injectable monotonic clock.
//!
//! Every time reading of the quota refill, the rate limiter and the deadline goes through a
//! [`Clock`], so tests and the storm simulator can run the real strategies in virtual time.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::sync::{AtomicU64, Ordering};

/// A monotonic clock: the time elapsed since some fixed origin.
///
/// ```
/// use retry_core::clock::{Clock, ManualClock};
/// use std::time::Duration;
///
/// let clock = ManualClock::new();
/// clock.advance(Duration::from_millis(1500));
/// assert_eq!(clock.now(), Duration::from_millis(1500));
/// ```
pub trait Clock: Send + Sync + fmt::Debug {
    /// The time elapsed since this clock's origin. Should not decrease; should it (a paused
    /// tokio clock in a later runtime, see [`TokioClock`]), the quota and the rate limiter take
    /// a step back as no time passing and go on from there.
    fn now(&self) -> Duration;
}

/// A clock shared by strategies and scopes.
pub type SharedClock = Arc<dyn Clock>;

/// tokio's clock: follows `tokio::time::pause` and `advance`, so paused-time tests are virtual.
///
/// Outside a tokio runtime it reads the same monotonic clock as `std::time::Instant`.
///
/// A clock (a process-wide [`Scope`](crate::Scope)'s, say) outlives the runtime it was created
/// in. A paused runtime's clock starts at the real time the runtime was built and moves only
/// when advanced, so the next runtime's reads earlier than the last one's did. The origin is
/// therefore the earlier of tokio's time and the real time at creation: every later runtime
/// starts after it, so the clock never sticks at zero there; the step back from the previous
/// runtime's time is the consumers' to absorb (the rate limiter takes it as no time passing).
///
/// ```
/// use retry_core::clock::{Clock, TokioClock};
/// let clock = TokioClock::new();
/// let a = clock.now();
/// assert!(clock.now() >= a);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    origin: tokio::time::Instant,
}

impl TokioClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        let tokio_now = tokio::time::Instant::now();
        let real_now = tokio::time::Instant::from_std(std::time::Instant::now());
        Self {
            origin: tokio_now.min(real_now),
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Duration {
        tokio::time::Instant::now().saturating_duration_since(self.origin)
    }
}

/// A clock that moves only when told to: for tests and simulations.
///
/// ```
/// use retry_core::clock::{Clock, ManualClock};
/// use std::time::Duration;
///
/// let clock = ManualClock::new();
/// clock.set(Duration::from_secs(10));
/// clock.advance(Duration::from_secs(1));
/// assert_eq!(clock.now(), Duration::from_secs(11));
/// ```
#[derive(Default)]
pub struct ManualClock {
    nanos: AtomicU64,
}

impl ManualClock {
    /// A clock standing at zero.
    ///
    /// ```
    /// use retry_core::clock::{Clock, ManualClock};
    /// assert_eq!(ManualClock::new().now(), std::time::Duration::ZERO);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock forward by `by` (saturating at about 584 years).
    ///
    /// ```
    /// use retry_core::clock::{Clock, ManualClock};
    /// let clock = ManualClock::new();
    /// clock.advance(std::time::Duration::from_millis(5));
    /// assert_eq!(clock.now().as_millis(), 5);
    /// ```
    pub fn advance(&self, by: Duration) {
        let by = duration_to_nanos(by);
        // fetch_update never fails with a closure that always returns Some.
        let _ = self
            .nanos
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |now| {
                Some(now.saturating_add(by))
            });
    }

    /// Sets the clock to `to`, if that is not earlier than the current time (a clock is monotonic).
    ///
    /// ```
    /// use retry_core::clock::{Clock, ManualClock};
    /// use std::time::Duration;
    /// let clock = ManualClock::new();
    /// clock.set(Duration::from_secs(2));
    /// clock.set(Duration::from_secs(1)); // ignored
    /// assert_eq!(clock.now(), Duration::from_secs(2));
    /// ```
    pub fn set(&self, to: Duration) {
        self.nanos
            .fetch_max(duration_to_nanos(to), Ordering::AcqRel);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Acquire))
    }
}

impl fmt::Debug for ManualClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ManualClock")
            .field("now", &self.now())
            .finish()
    }
}

/// Nanoseconds in a duration, saturating at `u64::MAX`.
#[inline]
pub(crate) fn duration_to_nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// A duration in nanoseconds, saturating: half the size of `Duration`, for the retry token,
/// which moves by value between the loop and the strategy on every call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Nanos(u64);

impl Nanos {
    /// Zero, without a conversion from `Duration`.
    pub(crate) const ZERO: Nanos = Nanos(0);

    #[inline]
    pub(crate) fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl From<Duration> for Nanos {
    #[inline]
    fn from(duration: Duration) -> Self {
        Nanos(duration_to_nanos(duration))
    }
}

impl From<Nanos> for Duration {
    #[inline]
    fn from(nanos: Nanos) -> Self {
        Duration::from_nanos(nanos.0)
    }
}
