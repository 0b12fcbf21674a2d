//! The client-side rate limiter of adaptive mode: a token bucket of send permits whose fill rate
//! follows CUBIC after the first throttle.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::{Cubic, MeasuredRate};

/// The lowest fill rate, in permits per second. Source: the AWS SDKs (`MIN_FILL_RATE = 0.5`).
pub const MIN_FILL_RATE: f64 = 0.5;

/// The lowest bucket capacity, in permits. Source: the AWS SDKs (`MIN_CAPACITY = 1`).
pub const MIN_CAPACITY: f64 = 1.0;

/// One attempt takes one send permit.
const PERMIT: f64 = 1.0;

/// A client-side rate limiter shared by a scope (seed 002, `DESIGN.md` §6).
///
/// Off until the first throttling response; then every attempt takes a send permit from a token
/// bucket whose fill rate CUBIC lowers on throttling and raises on success. A short caller is
/// told how long to wait and is granted nothing until it comes back: capacity never goes negative.
/// Waiting callers are counted, so that newcomers queue behind them instead of taking the
/// permits they wait for, and each waiter is told a wait that leaves room for those ahead of it.
///
/// All methods take the current time so that the limiter can run on any clock.
///
/// ```
/// use retry_core::adaptive::{Admission, ClientRateLimiter};
/// use std::time::Duration;
///
/// let limiter = ClientRateLimiter::new(Duration::ZERO);
/// assert!(matches!(limiter.try_acquire(None, Duration::ZERO), Admission::Granted));
/// // A throttle after 10 responses/s over one second enables the bucket.
/// for i in 0..10 {
///     limiter.record_response(false, Duration::from_millis(100 * i));
/// }
/// limiter.record_response(true, Duration::from_secs(1));
/// assert!(limiter.is_enabled());
/// ```
pub struct ClientRateLimiter {
    state: Mutex<LimiterState>,
}

#[derive(Debug, Clone, Copy)]
struct LimiterState {
    enabled: bool,
    fill_rate: f64,
    max_capacity: f64,
    capacity: f64,
    last_refill: f64,
    /// Callers told to wait and not yet back, each owed one permit.
    waiting: u32,
    measured: MeasuredRate,
    cubic: Cubic,
}

/// The answer to a request for a send permit.
#[derive(Debug)]
pub enum Admission {
    /// The permit is granted: send now.
    Granted,
    /// No permit yet: come back after `wait` with the reservation.
    Wait {
        /// How long to wait before asking again.
        wait: Duration,
        /// The caller's place among the waiters; dropping it gives the place up.
        reservation: Reservation,
    },
}

/// A waiting caller's place in the limiter. Pass it back to
/// [`try_acquire`](ClientRateLimiter::try_acquire) after the wait; dropping it (a cancelled
/// call) gives the place up, so a cancelled waiter never holds permits.
pub struct Reservation {
    /// `None` once the limiter has settled this place itself.
    limiter: Option<Arc<ClientRateLimiter>>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(limiter) = self.limiter.take() {
            let mut state = limiter.lock();
            state.waiting = state.waiting.saturating_sub(1);
        }
    }
}

impl fmt::Debug for Reservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Reservation")
    }
}

/// A snapshot of the limiter for metrics and tests.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LimiterStats {
    /// Whether a throttle has switched the bucket on.
    pub enabled: bool,
    /// Permits per second added to the bucket.
    pub fill_rate: f64,
    /// Permits in the bucket.
    pub capacity: f64,
    /// Most permits the bucket holds.
    pub max_capacity: f64,
    /// The smoothed rate of responses per second.
    pub measured_rate: f64,
    /// Callers waiting for a permit.
    pub waiting: u32,
}

impl ClientRateLimiter {
    /// A disabled limiter whose clock starts at `now`.
    ///
    /// ```
    /// let limiter = retry_core::adaptive::ClientRateLimiter::new(std::time::Duration::ZERO);
    /// assert!(!limiter.is_enabled());
    /// ```
    pub fn new(now: Duration) -> Arc<Self> {
        let now = now.as_secs_f64();
        Arc::new(Self {
            state: Mutex::new(LimiterState {
                enabled: false,
                fill_rate: MIN_FILL_RATE,
                max_capacity: MIN_CAPACITY,
                capacity: 0.0,
                last_refill: now,
                waiting: 0,
                measured: MeasuredRate::new(now),
                cubic: Cubic::new(now),
            }),
        })
    }

    /// Asks for one send permit at `now`. `reservation` is the one a previous
    /// [`Admission::Wait`] handed out, if this caller has waited already.
    ///
    /// The permit is deducted only when granted. A newcomer is granted only what is left after
    /// the waiters' permits, and is told to wait `(waiting + 1 - capacity) / fill_rate`; a
    /// returning waiter is granted if a permit is there, else told `(1 - capacity) / fill_rate`.
    ///
    /// ```
    /// use retry_core::adaptive::{Admission, ClientRateLimiter};
    /// use std::time::Duration;
    ///
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// limiter.record_response(true, Duration::ZERO); // throttled: bucket on, 0 permits, 0.5/s
    /// let Admission::Wait { wait, reservation } = limiter.try_acquire(None, Duration::ZERO) else {
    ///     unreachable!()
    /// };
    /// assert_eq!(wait, Duration::from_secs(2));
    /// assert!(matches!(limiter.try_acquire(Some(reservation), wait), Admission::Granted));
    /// assert_eq!(limiter.stats().capacity, 0.0);
    /// ```
    pub fn try_acquire(self: &Arc<Self>, reservation: Option<Reservation>, now: Duration) -> Admission {
        let mut state = self.lock();
        let returning = match reservation {
            Some(mut reservation) => {
                // Settle the place here, under this lock, so that the drop does nothing.
                reservation.limiter = None;
                state.waiting = state.waiting.saturating_sub(1);
                true
            }
            None => false,
        };
        if !state.enabled {
            return Admission::Granted;
        }
        state.refill(now.as_secs_f64());
        let owed_ahead = if returning { 0.0 } else { f64::from(state.waiting) };
        if state.capacity - owed_ahead >= PERMIT {
            state.capacity -= PERMIT;
            return Admission::Granted;
        }
        let missing = owed_ahead + PERMIT - state.capacity;
        let wait = Duration::try_from_secs_f64(missing / state.fill_rate).unwrap_or(Duration::MAX);
        state.waiting += 1;
        Admission::Wait {
            wait,
            reservation: Reservation {
                limiter: Some(Arc::clone(self)),
            },
        }
    }

    /// Feeds one response at `now` to the measured rate and CUBIC: a throttling response lowers
    /// the fill rate (and switches the bucket on), any other raises it along the CUBIC curve.
    /// The bucket is refilled at the old rate before the rate changes.
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// limiter.record_response(true, Duration::ZERO);
    /// assert_eq!(limiter.stats().fill_rate, 0.5); // nothing measured yet: the minimum
    /// ```
    pub fn record_response(&self, throttled: bool, now: Duration) {
        let now = now.as_secs_f64();
        let mut state = self.lock();
        state.measured.record(now);
        let measured = state.measured.rate();
        let new_rate = if throttled {
            let rate_to_use = if state.enabled {
                measured.min(state.fill_rate)
            } else {
                measured
            };
            state.enabled = true;
            state.cubic.on_throttle(rate_to_use, now)
        } else {
            state.cubic.on_success(now)
        };
        state.set_rate(new_rate.min(2.0 * measured), now);
    }

    /// Whether a throttle has switched the bucket on.
    ///
    /// ```
    /// let limiter = retry_core::adaptive::ClientRateLimiter::new(std::time::Duration::ZERO);
    /// assert!(!limiter.is_enabled());
    /// ```
    pub fn is_enabled(&self) -> bool {
        self.lock().enabled
    }

    /// A snapshot of the limiter.
    ///
    /// ```
    /// let limiter = retry_core::adaptive::ClientRateLimiter::new(std::time::Duration::ZERO);
    /// assert_eq!(limiter.stats().waiting, 0);
    /// ```
    pub fn stats(&self) -> LimiterStats {
        let state = self.lock();
        LimiterStats {
            enabled: state.enabled,
            fill_rate: state.fill_rate,
            capacity: state.capacity,
            max_capacity: state.max_capacity,
            measured_rate: state.measured.rate(),
            waiting: state.waiting,
        }
    }

    /// The state is plain numbers, consistent after every statement, so a poisoned lock (a
    /// panic elsewhere while it was held) is safe to keep using.
    fn lock(&self) -> MutexGuard<'_, LimiterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl LimiterState {
    fn refill(&mut self, now: f64) {
        if now > self.last_refill {
            let added = (now - self.last_refill) * self.fill_rate;
            self.capacity = (self.capacity + added).min(self.max_capacity);
            self.last_refill = now;
        }
    }

    fn set_rate(&mut self, new_rate: f64, now: f64) {
        self.refill(now);
        self.fill_rate = new_rate.max(MIN_FILL_RATE);
        self.max_capacity = new_rate.max(MIN_CAPACITY);
        self.capacity = self.capacity.min(self.max_capacity);
    }
}

impl fmt::Debug for ClientRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRateLimiter")
            .field("stats", &self.stats())
            .finish()
    }
}
