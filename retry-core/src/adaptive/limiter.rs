//! The client-side rate limiter of adaptive mode: a token bucket of send permits whose fill rate
//! follows CUBIC after the first throttle. What it grants is here; what feeds it, in
//! `feedback.rs`; the public form of its answers, in `admission.rs`.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::counted_rate::CountedRate;
use super::cubic::Cubic;
use super::latency::LatencyBaseline;
use super::line::{Line, MAX_SLEEP_BEFORE_RECHECK, Ticket};
use super::measured_rate::MeasuredRate;
use super::rate_dependence::RateDependence;
use super::response_time::ResponseTime;
use super::state::{LimiterState, MIN_CAPACITY, MIN_FILL_RATE, time_to_fill};
use super::stats::LimiterStats;
use super::time::MonotonicTime;
use super::timeout_evidence::TimeoutEvidence;

/// One attempt takes one send permit.
const PERMIT: f64 = 1.0;

/// A client-side rate limiter shared by a scope: the AWS SDKs' adaptive retry mode (botocore's
/// `retries/adaptive.py`, the smithy-rs RFC "Implementing Adaptive Retry Behavior").
///
/// Off until the first throttling response; then every attempt takes a send permit from a token
/// bucket whose fill rate CUBIC lowers on throttling and raises on success. A short caller is
/// told how long to wait and is granted nothing until it comes back: capacity never goes negative.
/// A cut of a running limiter's rate empties its bucket: the next attempt goes at the new rate.
/// (The AWS SDKs keep the permits banked at the old rate, up to a second of the new one: sent at
/// once, each finds the service as full as the throttled attempt did, and each throttle, to an
/// attempt sent after the cut, cuts again. In this crate's simulator a client of two sharing
/// 992/s went from 464/s to 9.5/s in 20 ms, 10 cuts on 12 banked permits.)
///
/// Waiting callers are served first come, first served: each gets a ticket, a newcomer is granted
/// only permits beyond those owed to the waiters, and a returning waiter only those beyond the
/// waiters ahead of it, counted in the line itself, so the order holds whoever gives up. A
/// waiter sleeps at most 500 ms between checks; one that has not asked for 2 s (its holder gone
/// without giving the place up) leaves the line when it
/// reaches its head, and should it come back, queues again at the end.
///
/// All methods take the current time so that the limiter can run on any clock.
///
/// Fed every response ([`record_response`](Self::record_response) and its kin, the AWS SDKs'
/// model), the fill rate and measured rate follow the AWS SDKs' published vectors (smithy-rs'
/// `test_client_sending_rates`) but for this crate's additions: one reduction per congestion
/// event, the hold through throttling that does not depend on the rate, the curve scaled above
/// 10 requests/s (never in play below it). The bucket's permits differ from the AWS SDKs' after
/// a cut of a running limiter (emptied, above).
/// Adaptive mode feeds only a sample of its idle responses
/// ([`record_idle_sample`](Self::record_idle_sample)): the measured rate then follows the
/// samples, so the congestion that switches the limiter on starts instead from the rate counted
/// over about the last second from the scope's running count of calls ended, exact whatever the
/// samples' spacing, and the measured rate starts over from it. A scope's very first response
/// starts from the measured rate as in the AWS SDKs (0, so the floor of 0.5 permits/s); so
/// does a throttle within 100 ms of the scope's first response (its first burst, not yet a
/// rate), but only until the burst is over: the limiter then starts over from the rate
/// counted, as if the throttle came then (its waiting callers are told to come back by then).
/// The count begins at the scope's first response (adaptive mode feeds it whether or not it
/// is a sample): a scope made at start-up and first called later counts its calls' rate, not
/// its age.
///
/// ```
/// use retry_core::adaptive::{Admission, ClientRateLimiter};
/// use std::time::Duration;
///
/// let limiter = ClientRateLimiter::new(Duration::ZERO);
/// assert!(matches!(limiter.try_acquire(None, Duration::ZERO), Admission::Granted));
/// // A throttle after 10 responses/s over one second enables the bucket.
/// for i in 0..10 {
///     limiter.record_response(false, Duration::from_millis(100 * i), Duration::from_millis(100 * i));
/// }
/// limiter.record_response(true, Duration::from_secs(1), Duration::from_secs(1));
/// assert!(limiter.is_enabled());
/// ```
pub struct ClientRateLimiter {
    pub(super) state: Mutex<LimiterState>,
    /// `state.enabled`, readable without the lock: until the first throttle (the common case)
    /// `try_acquire` grants without locking. Set under the lock, never cleared.
    pub(super) enabled: AtomicBool,
    /// Whether a response has been counted (`state.counted` has begun), readable without the
    /// lock: until then adaptive mode feeds every idle response, not a sample, so that the
    /// count begins at the scope's first response. Set under the lock, never cleared.
    pub(super) counting: AtomicBool,
}

/// [`Admission`] with the place in line as a plain [`Ticket`].
#[derive(Debug)]
pub(crate) enum TicketAdmission {
    /// Send now.
    Granted,
    /// Sleep `wait` and ask again with `ticket`; the permit is `expected` away.
    Wait {
        wait: Duration,
        expected: Duration,
        ticket: Ticket,
    },
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
                line: Line::default(),
                time: MonotonicTime::new(now),
                measured: MeasuredRate::new(now),
                cubic: Cubic::new(now),
                dependence: RateDependence::default(),
                slowed: false,
                provisional: false,
                latency: LatencyBaseline::default(),
                response_time: ResponseTime::default(),
                queue_drained_at: now,
                sampled: false,
                counted: CountedRate::new(now),
                timeouts: TimeoutEvidence::default(),
                pinned: false,
                #[cfg(feature = "fleet")]
                pinned_step_from: None,
            }),
            enabled: AtomicBool::new(false),
            counting: AtomicBool::new(false),
        })
    }

    /// [`try_acquire`](Self::try_acquire) with the place in line as a plain [`Ticket`]
    /// ([`Ticket::NONE`] for a newcomer): what a retry token carries, so that it owns nothing.
    /// A ticket handed out here is settled by a later grant or by [`give_up`](Self::give_up).
    pub(crate) fn acquire(&self, ticket: Ticket, now: Duration) -> TicketAdmission {
        // Off (no throttle yet): every caller is granted, and no one holds a ticket.
        if ticket.is_none() && !self.enabled.load(Ordering::Acquire) {
            return TicketAdmission::Granted;
        }
        let mut state = self.lock();
        let now = state.time.at(now);
        if state.enabled {
            state.restart_if_provisional(now);
            state.refill(now);
        }
        state.line.expire(now);
        let place = ticket
            .number()
            .and_then(|number| state.line.find(number, now));
        // A newcomer, or a waiter whose place lapsed, queues behind everyone waiting.
        let ahead = place.unwrap_or(state.line.len());
        if !state.enabled || state.capacity - ahead as f64 >= PERMIT {
            if state.enabled {
                state.capacity -= PERMIT;
            }
            if let Some(index) = place {
                state.line.remove(index);
            }
            return TicketAdmission::Granted;
        }
        let missing = ahead as f64 + PERMIT - state.capacity;
        let expected = time_to_fill(missing, state.fill_rate);
        state.slowed = true;
        // Switched on in the scope's first burst: back when the burst is over, to be served
        // at the rate counted then.
        let recheck = if state.provisional && state.counted.makes_a_rate() {
            time_to_fill(state.counted.first_burst_ends() - now, 1.0).min(MAX_SLEEP_BEFORE_RECHECK)
        } else {
            MAX_SLEEP_BEFORE_RECHECK
        };
        let ticket = match place {
            Some(_) => ticket,
            None => state.line.join(now),
        };
        TicketAdmission::Wait {
            wait: expected.min(recheck),
            expected,
            ticket,
        }
    }

    /// A send permit for a hedge, granted only when the limiter can spare one at `now`: when it
    /// is off, or when nobody waits for a permit and its bucket stays at least half full after
    /// this one. Never queues (a hedge does not wait): `false` is a refusal. A scope held to its
    /// rate (throttled: its bucket drained) sends no hedge; one sending below its rate does.
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// assert!(limiter.try_acquire_spare(Duration::ZERO)); // off: every caller is granted
    /// limiter.record_response(true, Duration::ZERO, Duration::ZERO); // on, its bucket empty
    /// assert!(!limiter.try_acquire_spare(Duration::ZERO));
    /// ```
    pub fn try_acquire_spare(&self, now: Duration) -> bool {
        if !self.enabled.load(Ordering::Acquire) {
            return true;
        }
        let mut state = self.lock();
        let now = state.time.at(now);
        state.restart_if_provisional(now);
        state.refill(now);
        state.line.expire(now);
        let spare = state.line.len() == 0 && state.capacity - PERMIT >= state.max_capacity / 2.0;
        if spare {
            state.capacity -= PERMIT;
        }
        spare
    }

    /// Gives up the place `ticket` holds (a cancelled waiter); [`Ticket::NONE`] is ignored.
    pub(crate) fn give_up(&self, ticket: Ticket) {
        if let Some(number) = ticket.number() {
            self.lock().line.leave(number);
        }
    }

    /// How long a caller arriving at `at` (now or later) would wait for its permit, behind
    /// every caller already waiting, if the fill rate stays as it is. Reserves nothing: a retry
    /// asks this before its backoff, to decide whether waiting is worth it (`max_wait`).
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// assert_eq!(limiter.expected_wait(Duration::ZERO), Duration::ZERO); // off: never waits
    /// limiter.record_response(true, Duration::ZERO, Duration::ZERO); // on, 0 permits, 0.5/s
    /// assert_eq!(limiter.expected_wait(Duration::ZERO), Duration::from_secs(2));
    /// assert_eq!(limiter.expected_wait(Duration::from_secs(1)), Duration::from_secs(1));
    /// assert_eq!(limiter.expected_wait(Duration::from_secs(5)), Duration::ZERO);
    /// ```
    pub fn expected_wait(&self, at: Duration) -> Duration {
        self.expected_wait_of(Ticket::NONE, at)
    }

    /// How long the holder of `ticket` (or a newcomer, for [`Ticket::NONE`]) would wait at `at`
    /// for its permit if the fill rate stays as it is. Reserves nothing.
    pub(crate) fn expected_wait_of(&self, ticket: Ticket, at: Duration) -> Duration {
        if !self.is_enabled() {
            return Duration::ZERO;
        }
        Self::expected_wait_in(&self.lock(), ticket, at)
    }

    /// [`expected_wait_of`](Self::expected_wait_of), and the time within which the attempt's
    /// answer is then expected: the answers' smoothed time plus four smoothed deviations, as
    /// TCP sets its retransmission timeout (`None` before an answer with a known send time).
    pub(crate) fn expected_wait_and_answer(
        &self,
        ticket: Ticket,
        at: Duration,
    ) -> (Duration, Option<Duration>) {
        if !self.is_enabled() {
            return (Duration::ZERO, None);
        }
        let state = self.lock();
        let answer = state
            .response_time
            .expected_within()
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok());
        (Self::expected_wait_in(&state, ticket, at), answer)
    }

    fn expected_wait_in(state: &LimiterState, ticket: Ticket, at: Duration) -> Duration {
        let elapsed = (state.time.earlier(at) - state.last_refill).max(0.0);
        let capacity = (state.capacity + elapsed * state.fill_rate).min(state.max_capacity);
        let ahead = ticket
            .number()
            .and_then(|number| state.line.place(number))
            .unwrap_or(state.line.len());
        let missing = ahead as f64 + PERMIT - capacity;
        if missing <= 0.0 {
            return Duration::ZERO;
        }
        time_to_fill(missing, state.fill_rate)
    }

    /// Whether a throttle has switched the bucket on.
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// Whether no response has been counted yet: adaptive mode then feeds the scope's idle
    /// response to [`record_idle_sample`](Self::record_idle_sample) whether or not it is a
    /// sample, so that the rate a first throttle starts from is counted from the scope's first
    /// response, not from its making.
    #[inline]
    pub(crate) fn awaits_first_response(&self) -> bool {
        !self.counting.load(Ordering::Relaxed)
    }

    /// When the scope's first response was counted, on its clock; `None` before (a fleet
    /// report's span starts there, [`Report::span_ms`](crate::fleet::protocol::Report)).
    #[cfg(feature = "fleet")]
    pub(crate) fn first_response_at(&self) -> Option<Duration> {
        if self.awaits_first_response() {
            return None;
        }
        let began = self.lock().counted.began_at()?;
        Some(Duration::try_from_secs_f64(began).unwrap_or_default())
    }

    /// A snapshot of the limiter.
    pub fn stats(&self) -> LimiterStats {
        let state = self.lock();
        LimiterStats {
            enabled: state.enabled,
            fill_rate: state.fill_rate,
            capacity: state.capacity,
            max_capacity: state.max_capacity,
            measured_rate: state.measured.rate(),
            waiting: u32::try_from(state.line.len()).unwrap_or(u32::MAX),
        }
    }

    /// The state is plain numbers, consistent after every statement, so a poisoned lock (a
    /// panic elsewhere while it was held) is safe to keep using.
    pub(super) fn lock(&self) -> MutexGuard<'_, LimiterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for ClientRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRateLimiter")
            .field("stats", &self.stats())
            .finish()
    }
}
