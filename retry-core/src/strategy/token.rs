//! The retry token: one call's retry state, passed between attempts by value.

use std::time::Duration;

use crate::adaptive::Ticket;
use crate::clock::Nanos;

/// One call's retry state, created by
/// [`acquire_initial_token`](super::RetryStrategy::acquire_initial_token) and moved into and out
/// of the strategy by value, so a token is resolved exactly once.
///
/// ```
/// use retry_core::{RetryConfig, RetryStrategy, StandardStrategy};
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let token = strategy.acquire_initial_token();
/// assert_eq!(token.attempt(), 1);
/// assert_eq!(token.delay(), std::time::Duration::ZERO);
/// strategy.record_success(token);
/// ```
#[derive(Debug)]
#[must_use = "a token must go back to its strategy: record_success, record_failure, refresh_retry_token or abandon"]
pub struct RetryToken {
    pub(crate) attempt: u32,
    /// The quota this token's retry took (0 for a first attempt): what `abandon` gives back.
    pub(crate) retry_cost: u32,
    /// The quota every retry of this call took, this token's included: what a success gives
    /// back to a traffic-sized quota. (It makes the token 56 bytes instead of 48; a token is
    /// still copied field by field, see [`take`](Self::take).)
    pub(crate) paid: u32,
    pub(crate) delay: Nanos,
    /// When the call started (read only when a deadline needs it).
    pub(crate) started_at: Nanos,
    /// When the attempt was sent (its send permit granted; adaptive mode).
    pub(crate) sent_at: Nanos,
    /// How long this attempt has waited for its send permit (adaptive mode).
    pub(crate) permit_wait: Nanos,
    /// The attempt's place among the rate limiter's waiters while it waits for its send
    /// permit (adaptive mode), [`Ticket::NONE`] otherwise: a plain number, so the token owns
    /// nothing; `abandon` gives the place up.
    pub(crate) ticket: Ticket,
}

impl RetryToken {
    #[inline]
    pub(crate) fn initial(started_at: Nanos) -> Self {
        Self {
            attempt: 1,
            retry_cost: 0,
            paid: 0,
            delay: Nanos::ZERO,
            started_at,
            sent_at: started_at,
            permit_wait: Nanos::ZERO,
            ticket: Ticket::NONE,
        }
    }

    /// The token of a call's first attempt, for a strategy of one's own
    /// ([`acquire_initial_token`](super::RetryStrategy::acquire_initial_token)): attempt 1, no
    /// delay, no retry cost. `started_at` is when the call started on the strategy's clock
    /// (kept for the strategy's deadline; [`Duration::ZERO`] when it has none).
    ///
    /// ```
    /// use retry_core::strategy::RetryToken;
    /// use std::time::Duration;
    /// let token = RetryToken::first_attempt(Duration::from_secs(3));
    /// assert_eq!((token.attempt(), token.delay(), token.retry_cost()), (1, Duration::ZERO, 0));
    /// assert_eq!(token.started_at(), Duration::from_secs(3));
    /// ```
    pub fn first_attempt(started_at: Duration) -> Self {
        Self::initial(started_at.into())
    }

    /// The token of the attempt after this one, for a strategy of one's own
    /// ([`refresh_retry_token`](super::RetryStrategy::refresh_retry_token)): the next attempt
    /// number, to be sent after `delay`, having taken `retry_cost` from the strategy's budget
    /// (0 without one), which is added to the call's total (what a success after retries gives
    /// back to a traffic-sized quota). The call's start is kept.
    ///
    /// ```
    /// use retry_core::strategy::RetryToken;
    /// use std::time::Duration;
    /// let first = RetryToken::first_attempt(Duration::ZERO);
    /// let second = first.next_attempt(Duration::from_millis(250), 5);
    /// assert_eq!(second.attempt(), 2);
    /// assert_eq!(second.delay(), Duration::from_millis(250));
    /// assert_eq!(second.retry_cost(), 5);
    /// ```
    pub fn next_attempt(self, delay: Duration, retry_cost: u32) -> Self {
        Self {
            attempt: self.attempt.saturating_add(1),
            retry_cost,
            paid: self.paid.saturating_add(retry_cost),
            delay: delay.into(),
            started_at: self.started_at,
            sent_at: self.started_at,
            permit_wait: Nanos::ZERO,
            ticket: Ticket::NONE,
        }
    }

    /// When the call started, as given to [`first_attempt`](Self::first_attempt) (ours read it
    /// only when a deadline needs it: zero otherwise).
    pub fn started_at(&self) -> Duration {
        self.started_at.into()
    }

    /// The number of the attempt this token allows (1 for the first attempt).
    #[inline]
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The backoff to sleep before this token's attempt (kept in nanoseconds: at most about
    /// 584 years).
    #[inline]
    pub fn delay(&self) -> Duration {
        self.delay.into()
    }

    /// Takes the token out of `slot` field by field. A plain `Option::take` copies it with
    /// 16-byte loads; right after the token was written (an attempt that completes at once)
    /// those loads miss store-to-load forwarding, which measured ~7 ns per call.
    #[inline]
    pub(crate) fn take(slot: &mut Option<RetryToken>) -> Option<RetryToken> {
        let token = slot.as_ref().map(|token| RetryToken {
            attempt: token.attempt,
            retry_cost: token.retry_cost,
            paid: token.paid,
            delay: token.delay,
            started_at: token.started_at,
            sent_at: token.sent_at,
            permit_wait: token.permit_wait,
            ticket: token.ticket,
        });
        *slot = None;
        token
    }

    /// Whether there is a backoff to sleep (no conversion to `Duration` on the success path).
    #[inline]
    pub(crate) fn has_delay(&self) -> bool {
        !self.delay.is_zero()
    }

    /// The quota this token's retry took (0 for a first attempt). A success returns it (with a
    /// traffic-sized quota, the default, it returns every retry's cost of the call); an
    /// abandoned token returns it, its retry never sent.
    pub fn retry_cost(&self) -> u32 {
        self.retry_cost
    }
}
