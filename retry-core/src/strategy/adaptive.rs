//! Adaptive mode: standard mode plus the scope's client-side rate limiter.

use std::time::Duration;

use super::{RetryError, RetryStrategy, RetryToken, SendPermit, StandardStrategy, StrategyBuilder};
use crate::adaptive::{Admission, Reservation};
use crate::clock::Nanos;
use crate::observe::Counter;
use crate::{RetryConfig, RetryReason, Scope};

/// Adaptive mode (the AWS SDKs' `adaptive` retry mode): [`StandardStrategy`] plus a send permit
/// from the scope's [`ClientRateLimiter`](crate::adaptive::ClientRateLimiter) before every attempt.
/// Every response feeds the limiter; only throttling responses slow it down.
///
/// With `max_wait` set, a retry expected to wait longer for its permit is not made (decided
/// when the retry is asked for: fail fast, so an overloaded caller can shed load), and no
/// attempt waits more than `max_wait`: one whose wait grows past it (the first attempt, or a
/// retry when the rate fell meanwhile) is then sent. With a `timeout`, a retry whose backoff
/// and expected wait pass the deadline is not made; once granted, a retry waits for its permit
/// even should the rate fall meanwhile (sending it without one, at the deadline, would only add
/// load to a throttling service; the caller's own timeout, if any, cancels the wait).
///
/// ```
/// use retry_core::{AdaptiveStrategy, ErrorKind, RetryConfig, RetryReason, RetryStrategy, SendPermit};
///
/// let strategy = AdaptiveStrategy::new(RetryConfig::default());
/// let mut token = strategy.acquire_initial_token();
/// assert_eq!(strategy.acquire_send_permit(&mut token, &mut None), SendPermit::Granted);
/// let token = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling)).unwrap();
/// assert!(strategy.scope().limiter().is_enabled());
/// # strategy.record_failure(token);
/// ```
#[derive(Debug, Clone)]
pub struct AdaptiveStrategy {
    standard: StandardStrategy,
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
        }
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

    #[inline(never)]
    /// Feeds the response to an attempt sent at `sent_at` to the limiter. Takes the time, not
    /// the token, so that the success path never needs the token's address (a copy).
    fn record_response(&self, sent_at: Nanos, throttled: bool) {
        let limiter = self.scope().limiter();
        let was_enabled = throttled && limiter.is_enabled();
        limiter.record_response(throttled, sent_at.into(), self.standard.now());
        if throttled && !was_enabled {
            tracing::warn!(
                target: "retry_core",
                scope = self.scope().name(),
                fill_rate = limiter.stats().fill_rate,
                "throttled: client-side rate limiting engaged"
            );
        }
    }
}

impl RetryStrategy for AdaptiveStrategy {
    fn acquire_initial_token(&self) -> RetryToken {
        self.standard.acquire_initial_token()
    }

    // Out of line: inlined into `ConfiguredStrategy`'s dispatch, the limiter's code would
    // weigh on the standard mode's success path.
    #[inline(never)]
    fn acquire_send_permit(
        &self,
        token: &mut RetryToken,
        place: &mut Option<Reservation>,
    ) -> SendPermit {
        let limiter = self.scope().limiter();
        if place.is_none() && !limiter.is_enabled() {
            // No throttle yet: granted, without reading the clock. A send time of zero reads as
            // "before any rate reduction", which is exact: the limiter is off, so none happened.
            token.sent_at = Nanos::ZERO;
            return SendPermit::Granted;
        }
        let now = self.standard.now();
        let wait = match limiter.try_acquire(place.take(), now) {
            Admission::Granted => None,
            Admission::Wait {
                wait, reservation, ..
            } => Some((wait, reservation)),
        };
        let waited = Duration::from(token.permit_wait);
        let sleep = match (wait, self.config().max_wait()) {
            (None, _) => None,
            (Some((wait, reservation)), None) => Some((wait, reservation)),
            // An attempt that has waited max_wait is sent: its place in line is given up.
            (Some((wait, reservation)), Some(max_wait)) => {
                let left = max_wait.saturating_sub(waited);
                (!left.is_zero()).then(|| (wait.min(left), reservation))
            }
        };
        match sleep {
            None => {
                token.sent_at = now.into();
                SendPermit::Granted
            }
            Some((sleep, reservation)) => {
                token.permit_wait = waited.saturating_add(sleep).into();
                *place = Some(reservation);
                SendPermit::Wait(sleep)
            }
        }
    }

    fn refresh_retry_token(
        &self,
        token: RetryToken,
        reason: &RetryReason,
    ) -> Result<RetryToken, RetryError> {
        self.record_response(token.sent_at, reason.kind().is_throttling());
        self.standard
            .refresh_with_permit_wait(token, reason, |delay| self.permit_wait(delay))
    }

    #[inline]
    fn record_success(&self, token: RetryToken) {
        self.record_response(token.sent_at, false);
        self.standard.record_success(token);
    }

    fn record_failure(&self, token: RetryToken) {
        self.record_response(token.sent_at, false);
        self.standard.record_failure(token);
    }

    fn abandon(&self, token: RetryToken) {
        self.standard.abandon(token);
    }

    fn scope(&self) -> &Scope {
        self.standard.scope()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, ManualClock};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn max_wait_refuses_a_retry_up_front_and_caps_every_wait() {
        let clock = Arc::new(ManualClock::new());
        let config = RetryConfig::aws_classic()
            .max_wait(Duration::from_millis(100))
            .initial_backoff(Duration::ZERO)
            .build()
            .unwrap();
        let strategy =
            AdaptiveStrategy::from_builder(StandardStrategy::builder(config).clock(clock.clone()));
        let mut token = strategy.acquire_initial_token();
        assert_eq!(
            strategy.acquire_send_permit(&mut token, &mut None),
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
        let mut place = None;
        assert_eq!(
            strategy.acquire_send_permit(&mut first, &mut place),
            SendPermit::Wait(Duration::from_millis(100))
        );
        assert_eq!(strategy.scope().limiter().stats().waiting, 1);
        clock.advance(Duration::from_millis(100));
        assert_eq!(
            strategy.acquire_send_permit(&mut first, &mut place),
            SendPermit::Granted
        );
        assert!(place.is_none());
        assert_eq!(strategy.scope().limiter().stats().waiting, 0);
        strategy.record_success(first);
    }
}
