//! The virtual clock every strategy of a run reads.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use retry_core::clock::Clock;

use crate::time::Nanos;

/// A [`Clock`] that the event loop sets before each event: `retry-core`'s strategies, quotas and
/// rate limiters read virtual time through it.
///
/// It is [`retry_core::clock::ManualClock`] without the compare-and-swap: a run's event loop is the
/// only writer and its time never decreases, so a plain store keeps the clock monotonic, and it
/// is set at every event (a locked read-modify-write there cost a third of the run time).
///
/// ```
/// use retry_core::clock::Clock;
/// let clock = retry_sim::clock::SimClock::new();
/// clock.set(1_500_000_000);
/// assert_eq!(clock.now(), std::time::Duration::from_millis(1500));
/// ```
#[derive(Default)]
pub struct SimClock {
    nanos: AtomicU64,
}

impl SimClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves the clock to `now` (never earlier than the current time: the event loop's time
    /// is non-decreasing).
    pub fn set(&self, now: Nanos) {
        debug_assert!(
            now >= self.nanos.load(Ordering::Relaxed),
            "virtual time went backwards"
        );
        self.nanos.store(now, Ordering::Relaxed);
    }

    /// The time now, in nanoseconds.
    pub fn nanos(&self) -> Nanos {
        self.nanos.load(Ordering::Relaxed)
    }
}

impl Clock for SimClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}

impl fmt::Debug for SimClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimClock")
            .field("now", &self.now())
            .finish()
    }
}

/// A process's own clock on the run's [`SimClock`]: zero when the process starts, as a real
/// process's monotonic clock starts when it does (a scope made by a process that joins the
/// fleet late is young then, not since the run's start). Before its start it reads zero.
///
/// ```
/// use retry_core::clock::Clock;
/// use retry_sim::clock::{OffsetClock, SimClock};
/// use std::sync::Arc;
/// let base = Arc::new(SimClock::new());
/// let process = OffsetClock::new(base.clone(), 2_000_000_000);
/// base.set(2_500_000_000);
/// assert_eq!(process.now(), std::time::Duration::from_millis(500));
/// ```
#[derive(Debug)]
pub struct OffsetClock {
    base: Arc<SimClock>,
    start: Nanos,
}

impl OffsetClock {
    /// The clock of a process that starts at `start` on `base`.
    pub fn new(base: Arc<SimClock>, start: Nanos) -> Self {
        Self { base, start }
    }
}

impl Clock for OffsetClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.base.nanos().saturating_sub(self.start))
    }
}
