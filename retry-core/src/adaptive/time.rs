//! The limiter's own time: the clock's readings, made monotonic.

use std::time::Duration;

/// A clock reading this much earlier than the latest one the limiter saw is a step back of the
/// clock (the limiter's time then goes on from the latest); a smaller one is a caller that read
/// the clock before another took the lock (an overlap of that caller's time, not a step).
const STEP_BACK: Duration = Duration::from_secs(1);

/// The clock's time in seconds, made monotonic: a reading earlier than the latest one seen
/// (a process-wide scope used from a new runtime whose paused clock reads earlier, a clock
/// stepped back) is taken as no time passing, and later readings go on from the latest by the
/// clock's own steps. Without it, refill, the measured rate's buckets and CUBIC's curve would
/// freeze until the clock caught up (in a test suite: an hour of virtual time).
#[derive(Debug, Clone, Copy)]
pub(super) struct MonotonicTime {
    /// Added to every clock reading.
    offset: f64,
    /// The latest time handed out.
    latest: f64,
}

impl MonotonicTime {
    pub(super) fn new(now: f64) -> Self {
        Self {
            offset: 0.0,
            latest: now,
        }
    }

    /// The limiter's time for the clock reading `now`, never earlier than the previous one.
    pub(super) fn at(&mut self, now: Duration) -> f64 {
        let time = now.as_secs_f64() + self.offset;
        if time < self.latest {
            // A little earlier: a caller that read the clock before another one took the lock.
            // Its time is the latest, and the clock is not shifted (that would add time).
            if self.latest - time > STEP_BACK.as_secs_f64() {
                self.offset += self.latest - time;
            }
            return self.latest;
        }
        self.latest = time;
        time
    }

    /// The limiter's time for an earlier reading `then` (a send time, a time to come): shifted
    /// like the readings, without moving the limiter's time.
    pub(super) fn earlier(&self, then: Duration) -> f64 {
        then.as_secs_f64() + self.offset
    }
}
