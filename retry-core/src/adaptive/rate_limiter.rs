//! The client-side rate limiter of adaptive mode: a token bucket of send permits whose fill rate
//! follows CUBIC after the first throttle.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::counted_rate::CountedRate;
use super::line::Line;
use super::{Cubic, LatencyBaseline, MeasuredRate, RateDependence, TimeoutEvidence};

/// The lowest fill rate, in permits per second. Source: the AWS SDKs (`MIN_FILL_RATE = 0.5`).
pub const MIN_FILL_RATE: f64 = 0.5;

/// The lowest bucket capacity, in permits. Source: the AWS SDKs (`MIN_CAPACITY = 1`).
pub const MIN_CAPACITY: f64 = 1.0;

/// Before the first throttle, one response in this many (on average) of those that end a call
/// reaches the limiter, with the scope's count of calls ended so far: enough to count the send rate the
/// first throttle starts from (see [`ClientRateLimiter`]) without a clock read and a lock per
/// response (what kept adaptive mode's success path at 8 times standard mode's).
pub const IDLE_SAMPLE: u32 = 32;

/// One attempt takes one send permit.
const PERMIT: f64 = 1.0;

/// The longest a waiting caller sleeps before it asks again, even when its turn is further
/// away: a fill rate raised meanwhile (CUBIC recovering) then reaches sleepers within one
/// measurement bucket, instead of them sleeping out a wait computed at a lower rate.
pub const MAX_SLEEP_BEFORE_RECHECK: Duration = Duration::from_millis(500);

/// A client-side rate limiter shared by a scope: the AWS SDKs' adaptive retry mode (botocore's
/// `retries/adaptive.py`, the smithy-rs RFC "Implementing Adaptive Retry Behavior").
///
/// Off until the first throttling response; then every attempt takes a send permit from a token
/// bucket whose fill rate CUBIC lowers on throttling and raises on success. A short caller is
/// told how long to wait and is granted nothing until it comes back: capacity never goes negative.
///
/// Waiting callers are served first come, first served: each gets a ticket, a newcomer is granted
/// only permits beyond those owed to the waiters, and a returning waiter only those beyond the
/// waiters ahead of it, counted in the line itself, so the order holds whoever gives up. A
/// waiter sleeps at most [`MAX_SLEEP_BEFORE_RECHECK`] between checks; one that has not asked
/// for [`WAITER_LEASE`](super::WAITER_LEASE) (its holder gone without giving the place up) leaves the line when it
/// reaches its head, and should it come back, queues again at the end.
///
/// All methods take the current time so that the limiter can run on any clock.
///
/// Fed every response ([`record_response`](Self::record_response) and its kin, the AWS SDKs'
/// model), the fill rate and measured rate follow the AWS SDKs' published vectors (smithy-rs'
/// `test_client_sending_rates`) but for this crate's additions: one reduction per congestion
/// event, the hold through throttling that does not depend on the rate ([`RateDependence`]),
/// the curve scaled above [`REFERENCE_RATE`](super::REFERENCE_RATE) (never in play below it).
/// Adaptive mode feeds only a sample of its idle responses
/// ([`record_idle_sample`](Self::record_idle_sample)): the measured rate then follows the
/// samples, so the congestion that switches the limiter on starts instead from the rate counted
/// over about the last second from the scope's running count of calls ended, exact whatever the
/// samples' spacing, and the measured rate starts over from it. A scope's very first response
/// starts from the measured rate as in the AWS SDKs (0, so the [`MIN_FILL_RATE`] floor); so
/// does a throttle within the scope's first 100 ms (its first burst, not yet a rate), but only
/// until the burst is over: the limiter then starts over from the rate counted, as if the
/// throttle came then (its waiting callers are told to come back by then).
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
    state: Mutex<LimiterState>,
    /// `state.enabled`, readable without the lock: until the first throttle (the common case)
    /// `try_acquire` grants without locking. Set under the lock, never cleared.
    enabled: AtomicBool,
}

#[derive(Debug, Clone)]
struct LimiterState {
    enabled: bool,
    fill_rate: f64,
    max_capacity: f64,
    capacity: f64,
    last_refill: f64,
    /// The callers waiting for a permit, oldest first, each owed one permit.
    line: Line,
    /// The limiter's own time: the clock's, made monotonic (see [`LimiterState::time`]).
    time: MonotonicTime,
    measured: MeasuredRate,
    cubic: Cubic,
    /// Whether the throttling depends on the rate: whether a throttle lowers it.
    dependence: RateDependence,
    /// Whether a caller has been told to wait since the last cut: the client sends at the
    /// fill rate, not at the rate it sent at before the cut (from permits banked then).
    slowed: bool,
    /// The limiter was switched on in its scope's first burst, before a rate was counted: it
    /// starts over from the rate counted once there is one.
    provisional: bool,
    /// The smoothed latency of responses and its baseline (fed only by
    /// [`ClientRateLimiter::record_response_judging_latency`]).
    latency: LatencyBaseline,
    /// When the queue standing at the service at the last reduction is expected to have
    /// drained: the reduction's time plus the smoothed latency then (seconds).
    queue_drained_at: f64,
    /// Whether the idle responses are sampled (adaptive mode) rather than each fed: the first
    /// congestion then starts from `counted`, not `measured`.
    sampled: bool,
    /// The responses counted from the scope's running counts, while the responses are sampled.
    counted: CountedRate,
    /// Whether the service answered while attempts timed out (a queue, not an outage).
    timeouts: TimeoutEvidence,
}

/// What came back for an attempt.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Response {
    /// An answer: a throttle or not.
    Answer { throttled: bool },
    /// No answer within the attempt timeout; `successes` is the scope's count of successful
    /// calls so far (see [`TimeoutEvidence`]).
    Timeout { successes: u64 },
}

/// The answer to a request for a send permit.
///
/// ```
/// use retry_core::adaptive::{Admission, ClientRateLimiter};
/// use std::time::Duration;
/// let limiter = ClientRateLimiter::new(Duration::ZERO);
/// assert!(matches!(limiter.try_acquire(None, Duration::ZERO), Admission::Granted));
/// ```
#[derive(Debug)]
pub enum Admission {
    /// The permit is granted: send now.
    Granted,
    /// No permit yet: sleep `wait`, then ask again with the reservation.
    Wait {
        /// How long to sleep before asking again (at most [`MAX_SLEEP_BEFORE_RECHECK`]).
        wait: Duration,
        /// How long until this caller's permit, at the current fill rate.
        expected: Duration,
        /// The caller's place in the queue; dropping it gives the place up.
        reservation: Reservation,
    },
}

/// A waiting caller's ticket. Pass it back to [`try_acquire`](ClientRateLimiter::try_acquire)
/// after the wait; dropping it (a cancelled call) gives the place up, so a cancelled waiter
/// never holds permits.
///
/// ```
/// use retry_core::adaptive::{Admission, ClientRateLimiter};
/// use std::time::Duration;
/// let limiter = ClientRateLimiter::new(Duration::ZERO);
/// limiter.record_response(true, Duration::ZERO, Duration::ZERO);
/// let Admission::Wait { reservation, .. } = limiter.try_acquire(None, Duration::ZERO) else {
///     unreachable!()
/// };
/// assert_eq!(limiter.stats().waiting, 1);
/// drop(reservation);
/// assert_eq!(limiter.stats().waiting, 0);
/// ```
pub struct Reservation {
    /// `None` once the ticket was handed back to the limiter.
    limiter: Option<Arc<ClientRateLimiter>>,
    ticket: Ticket,
}

impl Reservation {
    /// The ticket, handed back to the limiter: the drop then gives nothing up.
    fn into_ticket(mut self) -> Ticket {
        self.limiter = None;
        self.ticket
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if let Some(limiter) = self.limiter.take() {
            limiter.give_up(self.ticket);
        }
    }
}

/// A waiter's place in the limiter's line as a plain number, so that the retry token that
/// carries it owns nothing; `NONE` when the holder is not waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ticket(u64);

impl Ticket {
    /// No place in line.
    pub(crate) const NONE: Ticket = Ticket(0);

    pub(super) fn of(number: u64) -> Self {
        Ticket(number + 1)
    }

    pub(crate) fn is_none(self) -> bool {
        self.0 == 0
    }

    pub(super) fn number(self) -> Option<u64> {
        self.0.checked_sub(1)
    }
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

impl fmt::Debug for Reservation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reservation")
            .field("ticket", &self.ticket.0)
            .finish()
    }
}

/// A snapshot of the limiter for metrics and tests.
///
/// ```
/// let stats = retry_core::adaptive::ClientRateLimiter::new(std::time::Duration::ZERO).stats();
/// assert!(!stats.enabled);
/// assert_eq!(stats.fill_rate, retry_core::adaptive::MIN_FILL_RATE);
/// ```
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
                line: Line::default(),
                time: MonotonicTime::new(now),
                measured: MeasuredRate::new(now),
                cubic: Cubic::new(now),
                dependence: RateDependence::default(),
                slowed: false,
                provisional: false,
                latency: LatencyBaseline::default(),
                queue_drained_at: now,
                sampled: false,
                counted: CountedRate::new(now),
                timeouts: TimeoutEvidence::default(),
            }),
            enabled: AtomicBool::new(false),
        })
    }

    /// Asks for one send permit at `now`. `reservation` is the ticket a previous
    /// [`Admission::Wait`] handed out, if this caller has waited already.
    ///
    /// The permit is deducted only when granted, and only from permits not owed to waiters
    /// ahead: a newcomer queues behind every waiter, a returning waiter behind those with older
    /// tickets. A caller that must wait is told when its permit is expected,
    /// `(ahead + 1 - capacity) / fill_rate`, and sleeps at most [`MAX_SLEEP_BEFORE_RECHECK`].
    ///
    /// ```
    /// use retry_core::adaptive::{Admission, ClientRateLimiter};
    /// use std::time::Duration;
    ///
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// limiter.record_response(true, Duration::ZERO, Duration::ZERO); // bucket on, 0 permits, 0.5/s
    /// let Admission::Wait { wait, expected, reservation } = limiter.try_acquire(None, Duration::ZERO)
    /// else {
    ///     unreachable!()
    /// };
    /// assert_eq!(expected, Duration::from_secs(2));
    /// assert_eq!(wait, Duration::from_millis(500));
    /// assert!(matches!(
    ///     limiter.try_acquire(Some(reservation), expected),
    ///     Admission::Granted
    /// ));
    /// assert_eq!(limiter.stats().capacity, 0.0);
    /// ```
    pub fn try_acquire(
        self: &Arc<Self>,
        reservation: Option<Reservation>,
        now: Duration,
    ) -> Admission {
        let ticket = reservation.map_or(Ticket::NONE, Reservation::into_ticket);
        match self.acquire(ticket, now) {
            TicketAdmission::Granted => Admission::Granted,
            TicketAdmission::Wait {
                wait,
                expected,
                ticket,
            } => Admission::Wait {
                wait,
                expected,
                reservation: Reservation {
                    limiter: Some(Arc::clone(self)),
                    ticket,
                },
            },
        }
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

    /// [`expected_wait_of`](Self::expected_wait_of), and the smoothed latency of the
    /// responses judged by [`record_response_judging_latency`](Self::record_response_judging_latency)
    /// (`None` if none was): how long the attempt would then take to be answered.
    pub(crate) fn expected_wait_and_latency(
        &self,
        ticket: Ticket,
        at: Duration,
    ) -> (Duration, Option<Duration>) {
        if !self.is_enabled() {
            return (Duration::ZERO, None);
        }
        let state = self.lock();
        let latency = state
            .latency
            .smoothed()
            .and_then(|secs| Duration::try_from_secs_f64(secs).ok());
        (Self::expected_wait_in(&state, ticket, at), latency)
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

    /// Feeds one response at `now`, to an attempt sent at `sent_at`, to the measured rate and
    /// CUBIC: a throttling response lowers the fill rate (and switches the bucket on), any other
    /// raises it along the CUBIC curve. The bucket is refilled at the old rate before the rate
    /// changes.
    ///
    /// One congestion event lowers the rate once, as in TCP CUBIC (RFC 8312 §4.6 reduces once
    /// per window): a throttle to an attempt sent before the last reduction reports the rate
    /// that was already reduced, and does not lower it again. (The AWS SDKs lower the rate on
    /// every throttling response; a burst of `n` throttled in-flight attempts then cuts the rate
    /// by `0.7^n`, to the 0.5/s floor for a few dozen concurrent callers.) Throttling that does
    /// not depend on the rate (a fixed share throttled whatever is sent) stops lowering it once
    /// [`RateDependence`] has found so, and the rate goes back to where the throttling began.
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// let (sent, now) = (Duration::ZERO, Duration::from_millis(100));
    /// limiter.record_response(true, sent, now);
    /// assert_eq!(limiter.stats().fill_rate, 0.5); // nothing measured yet: the minimum
    /// ```
    pub fn record_response(&self, throttled: bool, sent_at: Duration, now: Duration) {
        self.record(Response::Answer { throttled }, false, sent_at, now, None);
    }

    /// Feeds an attempt sent at `sent_at` that timed out at `now`, where `successes` is the
    /// scope's count of successful calls so far. It lowers the rate like a throttle when the
    /// service answered meanwhile (a queue, see [`TimeoutEvidence`]); otherwise (an outage) it
    /// counts as a failure that is not a throttle. Returns whether it counted as congestion.
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let ms = Duration::from_millis;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// // A scope's first timeout tells a queue from an outage by nothing: no congestion.
    /// assert!(!limiter.record_timeout(100, ms(0), ms(1_000)));
    /// // Nothing succeeded since: an outage, the limiter stays off.
    /// assert!(!limiter.record_timeout(100, ms(100), ms(1_100)));
    /// // 20 calls succeeded while this attempt waited: a queue.
    /// assert!(limiter.record_timeout(120, ms(200), ms(1_200)));
    /// assert!(limiter.is_enabled());
    /// ```
    pub fn record_timeout(&self, successes: u64, sent_at: Duration, now: Duration) -> bool {
        self.record(Response::Timeout { successes }, false, sent_at, now, None)
    }

    /// [`record_response`](Self::record_response), where a response whose latency
    /// (`now - sent_at`) brings the smoothed latency above [`LATENCY_FACTOR`] times its
    /// baseline counts as a throttle (see [`LatencyBaseline`]): the rate falls while the
    /// service's queue is still short, before its attempts time out. Returns whether the
    /// response counted as congestion (a throttle, or latency).
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let ms = Duration::from_millis;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// for i in 0..20 {
    ///     // 50 ms responses: the baseline.
    ///     assert!(!limiter.record_response_judging_latency(false, ms(100 * i), ms(100 * i + 50)));
    /// }
    /// assert!(!limiter.is_enabled());
    /// let slow = (20..30).map(|i| limiter.record_response_judging_latency(false, ms(100 * i), ms(100 * i + 900)));
    /// assert!(slow.last().unwrap());
    /// assert!(limiter.is_enabled());
    /// ```
    ///
    /// [`LATENCY_FACTOR`]: super::LATENCY_FACTOR
    pub fn record_response_judging_latency(
        &self,
        throttled: bool,
        sent_at: Duration,
        now: Duration,
    ) -> bool {
        self.record(Response::Answer { throttled }, true, sent_at, now, None)
    }

    /// Feeds one response: [`record_response`](Self::record_response),
    /// [`record_response_judging_latency`](Self::record_response_judging_latency) (with
    /// `judge_latency`: a latency far above the baseline is a throttle) or
    /// [`record_timeout`](Self::record_timeout). Adaptive mode gives `ended` while the limiter
    /// is off, the scope's count of calls ended so far: its idle responses are sampled
    /// ([`record_idle_sample`](Self::record_idle_sample)), and the first congestion starts from
    /// the rate counted with it. Returns whether the response counted as congestion.
    pub(crate) fn record(
        &self,
        response: Response,
        judge_latency: bool,
        sent_at: Duration,
        now: Duration,
        ended: Option<u64>,
    ) -> bool {
        let mut state = self.lock();
        let now = state.time.at(now);
        let sent_at = state.time.earlier(sent_at);
        let throttled = match response {
            Response::Answer { throttled } => {
                state.timeouts.record_answer(now);
                throttled
            }
            Response::Timeout { successes } => {
                let enabled = state.enabled;
                state.timeouts.record_timeout(sent_at, successes, enabled)
            }
        };
        let slow = judge_latency && state.latency.record(now - sent_at, now);
        let congested = throttled || slow;
        state.measured.record(now);
        state.sampled |= ended.is_some();
        state.counted.count(1, ended);
        if state.enabled {
            state.restart_if_provisional(now);
        }
        let was_holding = state.dependence.is_holding();
        let lower = if !state.enabled {
            congested
        } else if slow && !throttled {
            let sending = state.sending_rate();
            state.dependence.record(false, sent_at, sending);
            // A slow response reports the queue at the service; after a reduction, the queue
            // standing then takes about the latency of that moment to drain, and attempts sent
            // meanwhile still find it: they report the reduced rate too. A queue always
            // shrinks when the rate falls: a fixed share's hold does not apply.
            sent_at >= state.cubic.last_throttle_time() && sent_at >= state.queue_drained_at
        } else {
            // Every other answer goes to the rule that tells a rate limit from a fixed share.
            let sending = state.sending_rate();
            state.dependence.record(throttled, sent_at, sending)
        };
        if !was_holding && state.dependence.is_holding() {
            // The throttling does not depend on the rate: the episode's cuts bought nothing,
            // and the rate resumes where they began.
            if let Some(start_rate) = state.dependence.start_rate() {
                state.cubic.resume_at(start_rate, now);
            }
        }
        if congested && !lower {
            // A throttle in flight before the last cut, weighed far down, or held through:
            // the rate stays.
            if ended.is_some() {
                state.counted.keep(now);
            }
            return congested;
        }
        let new_rate = if lower {
            // The congestion that switches the limiter on starts from the rate measured then,
            // as in the AWS SDKs, when every response was fed; when the idle ones were
            // sampled, from the rate counted over the last second (the measured one followed
            // the samples), which the measured rate then starts over from. Counted nothing
            // yet (a scope's first burst), it starts as the AWS SDKs do, provisionally.
            if !state.enabled && state.sampled {
                match state.counted.rate(now) {
                    Some(counted) => state.measured.restart(counted, now),
                    None => state.provisional = now < state.counted.first_burst_ends(),
                }
            }
            let measured = state.measured.rate();
            let rate_to_use = if state.enabled {
                measured.min(state.fill_rate)
            } else {
                measured
            };
            if !state.enabled {
                state.enabled = true;
                self.enabled.store(true, Ordering::Release);
            }
            state.lower_rate(rate_to_use, now)
        } else {
            state.cubic.on_success(now)
        };
        if ended.is_some() {
            state.counted.keep(now);
        }
        let measured = state.measured.rate();
        state.set_rate(new_rate.min(2.0 * measured), now);
        congested
    }

    /// Feeds one sampled response while the limiter is off (adaptive mode samples its idle
    /// responses this way, instead of feeding each one), under one lock:
    ///
    /// * the count the first congestion's rate is counted from, and the measured rate: `ended`
    ///   is the number of calls the scope has ended so far, read at `now`; the calls since the
    ///   previous count are counted at `now`. From the first sample on, the limiter counts its
    ///   starting rate instead of taking the measured one (see [`ClientRateLimiter`]);
    /// * with `sent_at` (a served attempt sent then, answered at `now`), the latency baseline
    ///   ([`record_response_judging_latency`](Self::record_response_judging_latency)'s), so
    ///   that the baseline is the service's before any congestion.
    ///
    /// Switches nothing on: while the limiter is off, throttles and timeouts do. Once they
    /// have, every response goes through [`record_response`](Self::record_response) instead,
    /// and this does nothing.
    ///
    /// ```
    /// use retry_core::adaptive::ClientRateLimiter;
    /// use std::time::Duration;
    /// let ms = Duration::from_millis;
    /// let limiter = ClientRateLimiter::new(Duration::ZERO);
    /// limiter.record_idle_sample(10, None, ms(100));
    /// limiter.record_idle_sample(20, Some(ms(950)), ms(1000)); // 20 over 1 s, one in 50 ms
    /// assert!((limiter.stats().measured_rate - 16.0).abs() < 1e-9); // 20/s smoothed by 0.8
    /// assert!(!limiter.is_enabled());
    /// ```
    pub fn record_idle_sample(&self, ended: u64, sent_at: Option<Duration>, now: Duration) {
        let mut state = self.lock();
        if state.enabled {
            return;
        }
        let now = state.time.at(now);
        state.sampled = true;
        let since = state.counted.count(0, Some(ended));
        state.counted.keep(now);
        state.measured.record_many(now, since);
        if let Some(sent_at) = sent_at {
            let sent_at = state.time.earlier(sent_at);
            state.latency.record(now - sent_at, now);
        }
    }

    /// Whether a throttle has switched the bucket on.
    ///
    /// ```
    /// let limiter = retry_core::adaptive::ClientRateLimiter::new(std::time::Duration::ZERO);
    /// assert!(!limiter.is_enabled());
    /// ```
    #[inline]
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
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
            waiting: u32::try_from(state.line.len()).unwrap_or(u32::MAX),
        }
    }

    /// The state is plain numbers, consistent after every statement, so a poisoned lock (a
    /// panic elsewhere while it was held) is safe to keep using.
    fn lock(&self) -> MutexGuard<'_, LimiterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

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
struct MonotonicTime {
    /// Added to every clock reading.
    offset: f64,
    /// The latest time handed out.
    latest: f64,
}

impl MonotonicTime {
    fn new(now: f64) -> Self {
        Self {
            offset: 0.0,
            latest: now,
        }
    }

    /// The limiter's time for the clock reading `now`, never earlier than the previous one.
    fn at(&mut self, now: Duration) -> f64 {
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
    fn earlier(&self, then: Duration) -> f64 {
        then.as_secs_f64() + self.offset
    }
}

/// How long the bucket takes to gain `missing` (> 0) permits at `fill_rate`, rounded up to the
/// next nanosecond: a wait rounded down would bring the caller back a rounding error short, and
/// a wait of zero would have a caller on a paused or manual clock ask again at the same instant
/// forever.
fn time_to_fill(missing: f64, fill_rate: f64) -> Duration {
    let seconds = missing / fill_rate;
    match Duration::try_from_secs_f64(seconds) {
        Ok(wait) if wait.as_secs_f64() < seconds => wait.saturating_add(Duration::from_nanos(1)),
        Ok(wait) => wait,
        Err(_) => Duration::MAX,
    }
}

impl LimiterState {
    /// Lowers the rate from `rate_to_use` at `now`; returns the new rate.
    fn lower_rate(&mut self, rate_to_use: f64, now: f64) -> f64 {
        self.queue_drained_at = now + self.latency.smoothed().unwrap_or(0.0);
        self.slowed = false;
        self.dependence.cut(now, rate_to_use);
        self.cubic.on_throttle(rate_to_use, now)
    }

    /// A limiter switched on in its scope's first burst, before a rate was counted, starts
    /// over once the burst is over, from the rate counted then (as if the congestion came
    /// then, at that rate); without one (a lone response), it goes on as it started.
    fn restart_if_provisional(&mut self, now: f64) {
        if !self.provisional || now < self.counted.first_burst_ends() {
            return;
        }
        self.provisional = false;
        let Some(counted) = self.counted.rate(now) else {
            return;
        };
        self.measured.restart(counted, now);
        self.dependence = RateDependence::default();
        let new_rate = self.lower_rate(counted, now);
        self.set_rate(new_rate.min(2.0 * counted), now);
    }

    /// The rate the client sends at: the measured rate, or the fill rate when lower once the
    /// limiter holds callers back (the measured rate follows it half a second late). Before
    /// that, the client sends what it wants, from permits banked at the old rate.
    fn sending_rate(&self) -> f64 {
        if self.slowed {
            self.fill_rate.min(self.measured.rate())
        } else {
            self.measured.rate()
        }
    }

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
