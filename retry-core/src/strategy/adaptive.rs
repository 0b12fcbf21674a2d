//! Adaptive mode: standard mode plus the scope's client-side rate limiter.

use std::time::Duration;

use super::{RetryError, RetryStrategy, RetryToken, SendPermit, StandardStrategy, StrategyBuilder};
use crate::adaptive::{
    AnswerTime, CongestionSignals, Response, Ticket, TicketAdmission, idle_sample_due,
};
use crate::classify::RetryReason;
use crate::clock::Nanos;
use crate::config::RetryConfig;
use crate::hedge::{HedgeGrant, HedgeRefusal, ScopeHedging};
use crate::load_shed::{LoadShed, ShedReason};
use crate::scope::Counter;
use crate::scope::Scope;

/// Adaptive mode (the AWS SDKs' `adaptive` retry mode): [`StandardStrategy`] plus a send permit
/// from the scope's [`ClientRateLimiter`](crate::adaptive::ClientRateLimiter) before every attempt.
/// Every response feeds the limiter; throttling responses slow it down (and attempt timeouts
/// too, with [`congestion`](Self::congestion)).
///
/// With `max_wait` set, a retry expected to wait longer for its permit is not made (decided
/// when the retry is asked for: fail fast, so an overloaded caller can shed load), and no
/// attempt waits more than `max_wait`: one whose wait grows past it (the first attempt, or a
/// retry when the rate fell meanwhile) is then sent. With a `timeout`, a retry whose backoff
/// and expected wait pass the deadline is not made; once granted, a retry waits for its permit
/// even should the rate fall meanwhile (sending it without one, at the deadline, would only add
/// load to a throttling service; the caller's own timeout, if any, cancels the wait). A caller
/// that sheds load ([`shed_load`](crate::Retry::shed_load)) is refused its first attempt when
/// the permit is expected later than `max_wait`, or so late that the answer would not come
/// before the deadline: later than the deadline less the time the scope's successes are
/// answered within (their smoothed time plus four smoothed deviations, as TCP sets its
/// retransmission timeout, RFC 6298), whatever the [`congestion`](Self::congestion) signals.
/// Where answers take the whole `timeout` or longer, none is left for them: the timeout is then
/// a deadline for starting attempts only.
///
/// ```
/// use retry_core::{AdaptiveStrategy, ErrorKind, RetryConfig, RetryReason, RetryStrategy};
/// use retry_core::strategy::SendPermit;
///
/// let strategy = AdaptiveStrategy::new(RetryConfig::default());
/// let mut token = strategy.acquire_initial_token();
/// assert_eq!(strategy.acquire_send_permit(&mut token), SendPermit::Granted);
/// let token = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling)).unwrap();
/// assert!(strategy.scope().limiter().is_enabled());
/// # strategy.record_failure(token);
/// ```
#[derive(Debug, Clone)]
pub struct AdaptiveStrategy {
    standard: StandardStrategy,
    congestion: CongestionSignals,
}

impl AdaptiveStrategy {
    /// An adaptive strategy with a private scope, on tokio's clock.
    ///
    /// ```
    /// let s = retry_core::AdaptiveStrategy::new(retry_core::RetryConfig::default());
    /// # let _ = s;
    /// ```
    pub fn new(config: RetryConfig) -> Self {
        Self::from_builder(StandardStrategy::builder(config))
    }

    /// An adaptive strategy from a builder (scope, clock, randomness injected).
    ///
    /// ```
    /// use retry_core::{AdaptiveStrategy, RetryConfig, Scope, StandardStrategy};
    /// let scope = Scope::new("api", &RetryConfig::default());
    /// let s = AdaptiveStrategy::from_builder(StandardStrategy::builder(RetryConfig::default()).scope(scope));
    /// # let _ = s;
    /// ```
    pub fn from_builder(builder: StrategyBuilder) -> Self {
        Self {
            standard: builder.build(),
            congestion: CongestionSignals::default(),
        }
    }

    /// Which failures lower the send rate: throttling only, as the AWS SDKs (the default), or
    /// throttling and attempt timeouts ([`CongestionSignals::ThrottlingAndTimeouts`]).
    ///
    /// ```
    /// use retry_core::adaptive::CongestionSignals;
    /// let tcp_like = retry_core::AdaptiveStrategy::new(retry_core::RetryConfig::default())
    ///     .congestion(CongestionSignals::ThrottlingAndTimeouts);
    /// assert_eq!(tcp_like.congestion_signals(), CongestionSignals::ThrottlingAndTimeouts);
    /// ```
    pub fn congestion(mut self, signals: CongestionSignals) -> Self {
        self.congestion = signals;
        self
    }

    /// The failures that lower the send rate.
    ///
    /// ```
    /// use retry_core::adaptive::CongestionSignals;
    /// let s = retry_core::AdaptiveStrategy::new(retry_core::RetryConfig::default());
    /// assert_eq!(s.congestion_signals(), CongestionSignals::Throttling);
    /// ```
    pub fn congestion_signals(&self) -> CongestionSignals {
        self.congestion
    }

    /// The configuration this strategy follows.
    ///
    /// ```
    /// let s = retry_core::AdaptiveStrategy::new(retry_core::RetryConfig::default());
    /// assert_eq!(s.config().max_attempts(), 3);
    /// ```
    pub fn config(&self) -> &RetryConfig {
        self.standard.config()
    }

    /// The scope whose quota, limiter and counters this strategy uses.
    ///
    /// ```
    /// let s = retry_core::AdaptiveStrategy::new(retry_core::RetryConfig::aws_classic().build().unwrap());
    /// assert_eq!(s.scope().quota().level(), 500);
    /// ```
    #[inline]
    pub fn scope(&self) -> &Scope {
        self.standard.scope()
    }

    /// How long a retry sent after `delay` is expected to wait for its permit; with
    /// `max_wait` set, a longer wait refuses the retry (fail fast).
    fn permit_wait(&self, delay: Duration) -> Result<Duration, RetryError> {
        let at = self.standard.now().saturating_add(delay);
        let expected = self.scope().limiter().expected_wait(at);
        match self.config().max_wait() {
            Some(max_wait) if expected > max_wait => {
                self.scope().count(Counter::RateLimited);
                Err(RetryError::RateLimited {
                    wait: expected,
                    max_wait,
                })
            }
            _ => Ok(expected),
        }
    }

    /// [`shed`](RetryStrategy::shed) once the limiter is on: the permit's expected wait against
    /// the time left before the deadline and `max_wait`, whichever is shorter.
    #[inline(never)]
    fn shed_first_attempt(&self, token: &RetryToken) -> Option<LoadShed> {
        let now = self.standard.now();
        let (expected, answer) = self
            .scope()
            .limiter()
            .expected_wait_and_answer(token.ticket, now);
        let deadline = self.config().timeout().map(|timeout| {
            let elapsed = now.saturating_sub(token.started_at.into());
            let left = timeout
                .saturating_sub(elapsed)
                .saturating_sub(answer_allowance(answer, timeout));
            (left, ShedReason::Deadline)
        });
        // A first attempt already in line has used part of max_wait.
        let max_wait = self.config().max_wait().map(|max_wait| {
            let waited = Duration::from(token.permit_wait);
            (max_wait.saturating_sub(waited), ShedReason::MaxWait)
        });
        let (limit, reason) = match (deadline, max_wait) {
            (Some(deadline), Some(max_wait)) => {
                if deadline.0 <= max_wait.0 {
                    deadline
                } else {
                    max_wait
                }
            }
            (Some(only), None) | (None, Some(only)) => only,
            (None, None) => return None,
        };
        if expected <= limit {
            return None;
        }
        self.scope().count(Counter::RateLimited);
        Some(LoadShed::new(expected, limit, reason))
    }

    /// [`acquire_send_permit`](RetryStrategy::acquire_send_permit) once the limiter is on or the
    /// attempt waits in line: out of line, so that the idle check alone is inlined.
    #[inline(never)]
    fn acquire_from_limiter(&self, token: &mut RetryToken) -> SendPermit {
        let limiter = self.scope().limiter();
        let now = self.standard.now();
        let (wait, ticket) = match limiter.acquire(token.ticket, now) {
            TicketAdmission::Granted => {
                self.granted_after_waiting(token);
                token.ticket = Ticket::NONE;
                token.sent_at = now.into();
                return SendPermit::Granted;
            }
            TicketAdmission::Wait { wait, ticket, .. } => (wait, ticket),
        };
        self.report_rate();
        let waited = Duration::from(token.permit_wait);
        let sleep = match self.config().max_wait() {
            None => wait,
            // An attempt that has waited max_wait is sent: its place in line is given up.
            Some(max_wait) => {
                let left = max_wait.saturating_sub(waited);
                if left.is_zero() {
                    limiter.give_up(ticket);
                    self.granted_after_waiting(token);
                    token.ticket = Ticket::NONE;
                    token.sent_at = now.into();
                    return SendPermit::Granted;
                }
                wait.min(left)
            }
        };
        token.ticket = ticket;
        token.permit_wait = waited.saturating_add(sleep).into();
        SendPermit::Wait(sleep)
    }

    /// The token's attempt got its permit: the wait it had for it, if any, to the metrics.
    fn granted_after_waiting(&self, token: &RetryToken) {
        if !token.permit_wait.is_zero() {
            self.scope()
                .meter()
                .limiter_waited(token.permit_wait.into());
        }
    }

    /// A response that is not a retryable failure. Before any throttle (the limiter off, the
    /// attempt sent without a clock read) only the measured rate matters, and it is sampled:
    /// at the scope's first response and then at one response in
    /// [`IDLE_SAMPLE`](crate::adaptive::IDLE_SAMPLE) on average, the scope's count of calls
    /// ended since the previous sample is fed to the limiter (no clock read and no lock for the
    /// others). The first begins the count, so that a scope made long before its first calls
    /// counts their rate, not its age.
    #[inline(always)]
    fn record_outcome(&self, sent_at: Nanos, served: bool, first_sent_at: Nanos) {
        let limiter = self.scope().limiter();
        if sent_at.is_zero() && !limiter.is_enabled() {
            if limiter.awaits_first_response() || idle_sample_due() {
                self.record_idle_sample(served, first_sent_at);
            }
            return;
        }
        self.record_response(sent_at, false, served);
    }

    /// One sampled response of an idle limiter (out of line): the scope's exact count of calls
    /// ended so far, this one's included (the standard strategy counts its end just after),
    /// goes to the limiter, which counts those since the previous sample. With
    /// latency judged, a served first attempt whose call start was read (`first_sent_at`, not
    /// zero: a deadline is set) feeds its latency to the baseline, so that the baseline is the
    /// service's before any congestion, not the congested one the limiter switches on in.
    #[cold]
    #[inline(never)]
    fn record_idle_sample(&self, served: bool, first_sent_at: Nanos) {
        let now = self.standard.now();
        let judged = served && self.congestion.judges_latency() && !first_sent_at.is_zero();
        let sent_at = judged.then(|| first_sent_at.into());
        self.scope()
            .limiter()
            .record_idle_sample(self.scope().calls_ended() + 1, sent_at, now);
    }

    #[inline(never)]
    /// Feeds the response to an attempt sent at `sent_at` to the limiter. Takes the time, not
    /// the token, so that the success path never needs the token's address (a copy). Only the
    /// latency of a success (`served`) is judged: failures may be answered at once (a 429, a
    /// full queue's 503), and would make the baseline a rejection's latency instead of the
    /// service's.
    fn record_response(&self, sent_at: Nanos, throttled: bool, served: bool) {
        let limiter = self.scope().limiter();
        let was_enabled = limiter.is_enabled();
        let now = self.standard.now();
        // A send time of zero: sent while the limiter was off, its latency unknown.
        let time = match (
            served && !sent_at.is_zero(),
            self.congestion.judges_latency(),
        ) {
            (false, _) => AnswerTime::Unused,
            (true, false) => AnswerTime::Measured,
            (true, true) => AnswerTime::Judged,
        };
        let congested = limiter.record(
            Response::Answer { throttled },
            time,
            sent_at.into(),
            now,
            self.calls_ended_while_off(was_enabled),
        );
        if congested && !was_enabled {
            self.warn_engaged();
        }
        if throttled {
            self.report_rate();
        }
    }

    /// The limiter's rate to the metrics, once it is engaged (the retry path: after a throttle
    /// or a timeout, and when an attempt waits): before, it has no rate to show.
    fn report_rate(&self) {
        let limiter = self.scope().limiter();
        if limiter.is_enabled() {
            self.scope()
                .meter()
                .limiter_rate(|| limiter.stats().fill_rate);
        }
    }

    /// Feeds the timeout of an attempt sent at `sent_at`, counted as congestion when the
    /// service answered other calls meanwhile ([`TimeoutEvidence`](crate::adaptive::TimeoutEvidence)).
    fn record_timeout(&self, sent_at: Nanos) {
        let limiter = self.scope().limiter();
        let was_enabled = limiter.is_enabled();
        let successes = self.scope().successes();
        let congested = limiter.record(
            Response::Timeout { successes },
            AnswerTime::Unused,
            sent_at.into(),
            self.standard.now(),
            self.calls_ended_while_off(was_enabled),
        );
        if congested && !was_enabled {
            self.warn_engaged();
        }
        self.report_rate();
    }

    /// Feeds the limiter an attempt sent at `sent_at` that failed for `reason` (a retryable
    /// failure): a timeout or a throttle, as [`congestion`](Self::congestion) judges it.
    fn record_failed_attempt(&self, sent_at: Nanos, reason: &RetryReason) {
        let congested = self.congestion.is_congestion(reason.kind());
        if congested && reason.kind() == crate::classify::ErrorKind::Timeout {
            self.record_timeout(sent_at);
        } else {
            self.record_response(sent_at, congested, false);
        }
    }

    /// The scope's count of calls ended, which the limiter counts its sampled idle responses
    /// with, while it is off (`was_enabled` false); once on, it is fed every response.
    fn calls_ended_while_off(&self, was_enabled: bool) -> Option<u64> {
        (!was_enabled).then(|| self.scope().calls_ended())
    }

    #[cold]
    fn warn_engaged(&self) {
        tracing::warn!(
            target: "retry_core",
            scope = self.scope().name(),
            fill_rate = self.scope().limiter().stats().fill_rate,
            "congestion (throttling or a timeout): client-side rate limiting engaged"
        );
    }
}

impl RetryStrategy for AdaptiveStrategy {
    #[inline(always)]
    fn acquire_initial_token(&self) -> RetryToken {
        self.standard.acquire_initial_token()
    }

    #[inline(always)]
    fn acquire_send_permit(&self, token: &mut RetryToken) -> SendPermit {
        if token.ticket.is_none() && !self.scope().limiter().is_enabled() {
            // No throttle yet: granted, without reading the clock. A send time of zero reads as
            // "before any rate reduction", which is exact: the limiter is off, so none happened.
            token.sent_at = Nanos::ZERO;
            return SendPermit::Granted;
        }
        self.acquire_from_limiter(token)
    }

    fn refresh_retry_token(
        &self,
        token: RetryToken,
        reason: &RetryReason,
    ) -> Result<RetryToken, RetryError> {
        self.record_failed_attempt(token.sent_at, reason);
        self.standard
            .refresh_with_permit_wait(token, reason, |delay| self.permit_wait(delay))
    }

    #[inline]
    fn record_success(&self, token: RetryToken) {
        // A first attempt, sent when the limiter was off, went at the call's start.
        let first_sent_at = if token.attempt == 1 {
            token.started_at
        } else {
            Nanos::ZERO
        };
        self.record_outcome(token.sent_at, true, first_sent_at);
        self.standard.record_success(token);
    }

    fn shed(&self, token: &RetryToken) -> Option<LoadShed> {
        // Only a first attempt, and only once a throttle switched the limiter on: no clock
        // read before that.
        if token.attempt != 1 || !self.scope().limiter().is_enabled() {
            return None;
        }
        self.shed_first_attempt(token)
    }

    fn record_failure(&self, token: RetryToken) {
        self.scope().limiter().give_up(token.ticket);
        self.record_outcome(token.sent_at, false, Nanos::ZERO);
        self.standard.record_failure(token);
    }

    fn record_cancelled(&self, token: RetryToken) {
        self.scope().limiter().give_up(token.ticket);
        self.standard.record_cancelled(token);
    }

    fn abandon(&self, token: RetryToken) {
        self.scope().limiter().give_up(token.ticket);
        self.standard.abandon(token);
    }

    fn record_shed(&self, token: RetryToken) {
        self.scope().limiter().give_up(token.ticket);
        self.standard.record_shed(token);
    }

    #[inline(always)]
    fn max_attempts(&self) -> Option<u32> {
        Some(self.config().max_attempts())
    }

    fn scope_name(&self) -> Option<&str> {
        Some(self.scope().name())
    }

    /// Standard mode's rules, then a spare permit from the rate limiter, taken at once or not at
    /// all (its quota given back then).
    fn acquire_hedge(&self, token: &RetryToken) -> Result<HedgeGrant, HedgeRefusal> {
        let hedging = self.scope_hedging().ok_or(HedgeRefusal::NoHedgeDue)?;
        let mut grant = self.standard.grant_hedge(token, hedging)?;
        let limiter = self.scope().limiter();
        if !limiter.is_enabled() {
            // Sent while the limiter is off: no clock read, as a first attempt's.
            return Ok(grant);
        }
        let now = self.standard.now();
        if !limiter.try_acquire_spare(now) {
            self.standard.return_hedge(grant);
            return Err(HedgeRefusal::RateLimited);
        }
        grant.sent_at = now.into();
        Ok(grant)
    }

    fn record_copy_failure(&self, copy: &RetryToken, reason: &RetryReason) {
        self.record_failed_attempt(copy.sent_at, reason);
        self.standard.record_copy_failure(copy, reason);
    }

    fn record_copy_cancelled(&self, copy: &RetryToken) {
        self.scope().limiter().give_up(copy.ticket);
        self.standard.record_copy_cancelled(copy);
    }

    fn scope_hedging(&self) -> Option<&ScopeHedging> {
        self.standard.scope_hedging()
    }
}

/// The time a first attempt's permit must leave before the deadline `timeout` for its answer:
/// the time the scope's answers come within, if they come within `timeout` (a permit granted
/// later is work the service does for a caller that will have left). A scope whose answers
/// take the whole `timeout` or longer is given none: its timeout is then a deadline for starting
/// attempts only, as [`RetryConfig::timeout`] defines it, and not one its answers could meet.
fn answer_allowance(answer: Option<Duration>, timeout: Duration) -> Duration {
    answer
        .filter(|&answer| answer < timeout)
        .unwrap_or(Duration::ZERO)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::ErrorKind;
    use crate::clock::ManualClock;
    use crate::config::RetryMode;
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn max_wait_refuses_a_retry_up_front_and_caps_every_wait() {
        let clock = Arc::new(ManualClock::new());
        let config = RetryConfig::aws_classic()
            .mode(RetryMode::Adaptive)
            .max_wait(Duration::from_millis(100))
            .initial_backoff(Duration::ZERO)
            .build()
            .unwrap();
        let strategy =
            AdaptiveStrategy::from_builder(StandardStrategy::builder(config).clock(clock.clone()));
        let mut token = strategy.acquire_initial_token();
        assert_eq!(
            strategy.acquire_send_permit(&mut token),
            SendPermit::Granted
        );
        // The throttle switches the bucket on, empty, filling at 0.5/s: a permit is 2 s away,
        // so the retry is refused when it is asked for, not while it waits.
        let quota = strategy.scope().quota().level();
        assert_eq!(
            strategy
                .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
                .unwrap_err(),
            RetryError::RateLimited {
                wait: Duration::from_secs(2),
                max_wait: Duration::from_millis(100)
            }
        );
        assert_eq!(strategy.scope().quota().level(), quota, "no quota taken");
        assert_eq!(strategy.scope().stats().rate_limited, 1);
        // A new call's first attempt waits max_wait, then goes, giving up its place in line.
        let mut first = strategy.acquire_initial_token();
        assert_eq!(
            strategy.acquire_send_permit(&mut first),
            SendPermit::Wait(Duration::from_millis(100))
        );
        assert_eq!(strategy.scope().limiter().stats().waiting, 1);
        clock.advance(Duration::from_millis(100));
        assert_eq!(
            strategy.acquire_send_permit(&mut first),
            SendPermit::Granted
        );
        assert!(first.ticket.is_none());
        assert_eq!(strategy.scope().limiter().stats().waiting, 0);
        strategy.record_success(first);
    }

    /// A scope whose first attempts are answered in 50 ms, then throttled (7 permits a second)
    /// with the bucket emptied and one caller in line, and a newcomer's token: whether it is
    /// shed, and whether it is once `slow` (sent 950 ms ago, answered now, `served` or not) has
    /// been fed to the strategy.
    fn shed_before_and_after(
        signals: CongestionSignals,
        slow: impl Fn(&AdaptiveStrategy, Nanos),
    ) -> (Option<LoadShed>, Option<LoadShed>) {
        let ms = Duration::from_millis;
        let clock = Arc::new(ManualClock::new());
        let config = RetryConfig::builder()
            .mode(RetryMode::Adaptive)
            .timeout(Duration::from_secs(1))
            .build()
            .unwrap();
        let strategy =
            AdaptiveStrategy::from_builder(StandardStrategy::builder(config).clock(clock.clone()))
                .congestion(signals);
        let limiter = strategy.scope().limiter();
        for i in 0..100 {
            limiter.record_response(false, ms(100 * i), ms(100 * i + 50));
        }
        limiter.record_response(true, ms(10_000), ms(10_000));
        clock.advance(ms(10_000));
        let mut other = strategy.acquire_initial_token();
        while strategy.acquire_send_permit(&mut other) == SendPermit::Granted {
            strategy.record_success(other);
            other = strategy.acquire_initial_token();
        }
        let token = strategy.acquire_initial_token();
        let before = strategy.shed(&token);
        // Sent before the throttle: a slow answer lowers no rate.
        for i in 0..40 {
            slow(&strategy, Nanos::from(ms(9_050 + i)));
        }
        (before, strategy.shed(&token))
    }

    #[test]
    fn a_first_attempt_whose_answer_would_come_after_the_deadline_is_shed_whatever_the_signals() {
        for signals in [
            CongestionSignals::ThrottlingAndTimeouts,
            CongestionSignals::ThrottlingTimeoutsAndLatency,
        ] {
            // Successes answered in 0.95 s.
            let (before, after) = shed_before_and_after(signals, |strategy, sent_at| {
                strategy.record_response(sent_at, false, true)
            });
            // A permit 1/7 s away (behind one waiter), 1 s before the deadline: sent.
            assert_eq!(before, None, "{signals:?}");
            // Its answer would take 0.95 s more: shed now, the deadline less that time passed.
            let after = after.unwrap_or_else(|| panic!("{signals:?}: not shed"));
            assert_eq!(after.reason(), ShedReason::Deadline);
            assert!(after.limit() < Duration::from_millis(100), "{after:?}");
        }
    }

    #[test]
    fn answers_slower_than_the_timeout_leave_it_a_deadline_for_starting_attempts() {
        let ms = Duration::from_millis;
        assert_eq!(answer_allowance(Some(ms(950)), ms(1_000)), ms(950));
        assert_eq!(answer_allowance(Some(ms(1_000)), ms(1_000)), Duration::ZERO);
        assert_eq!(answer_allowance(Some(ms(3_000)), ms(1_000)), Duration::ZERO);
        assert_eq!(answer_allowance(None, ms(1_000)), Duration::ZERO);
        // Successes answered in 2 s against a 1 s timeout: the permit 1/7 s away is sent.
        let (before, after) = shed_before_and_after(
            CongestionSignals::ThrottlingAndTimeouts,
            |strategy, sent_at| {
                let two_seconds_earlier = Nanos::from(Duration::from(sent_at) - ms(1_050));
                strategy.record_response(two_seconds_earlier, false, true)
            },
        );
        assert_eq!((before, after), (None, None));
    }

    #[test]
    fn a_slow_failure_does_not_shed_a_first_attempt() {
        // A 503 may come at once or late whatever the service's pace: not the time to leave.
        let (before, after) = shed_before_and_after(
            CongestionSignals::ThrottlingAndTimeouts,
            |strategy, sent_at| strategy.record_response(sent_at, false, false),
        );
        assert_eq!((before, after), (None, None));
    }
}
