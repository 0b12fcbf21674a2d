//! Which idle responses feed the adaptive limiter's measured rate.

use std::cell::Cell;

/// Before the first throttle, one response in this many (on average) of those that end a call
/// reaches the limiter, with the scope's count of calls ended so far: enough to count the send rate the
/// first throttle starts from (see [`ClientRateLimiter`]) without a clock read and a lock per
/// response (what kept adaptive mode's success path at 8 times standard mode's).
pub(crate) const IDLE_SAMPLE: u32 = 32;

thread_local! {
    /// Idle responses of this thread until the next sample.
    static IDLE_COUNTDOWN: Cell<u32> = const { Cell::new(IDLE_SAMPLE) };
}

/// Whether this idle response is a sample: a per-thread countdown (a thread-local decrement,
/// cheaper than drawing a random number per response, and no counter shared between threads),
/// restarted at a random length of mean [`IDLE_SAMPLE`] so that scopes taking turns on one
/// thread are sampled fairly.
#[inline(always)]
pub(crate) fn idle_sample_due() -> bool {
    IDLE_COUNTDOWN.with(|countdown| {
        let left = countdown.get();
        if left > 1 {
            countdown.set(left - 1);
            return false;
        }
        countdown.set(fastrand::u32(1..2 * IDLE_SAMPLE));
        true
    })
}

/// Restarts this thread's sampling of idle responses from `seed`: for deterministic
/// simulations, which run many clients on one thread and must sample the same responses
/// whatever ran on the thread before. Reseeds this thread's `fastrand` generator too (the one
/// [`ThreadRandom`](crate::backoff::ThreadRandom) and the sampling draw from).
///
/// ```
/// retry_core::adaptive::reseed_idle_sampling(7);
/// ```
pub fn reseed_idle_sampling(seed: u64) {
    fastrand::seed(seed);
    IDLE_COUNTDOWN.with(|countdown| countdown.set(IDLE_SAMPLE));
}
