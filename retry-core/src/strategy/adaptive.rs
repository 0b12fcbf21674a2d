//! Adaptive mode: standard mode plus the scope's client-side rate limiter.

use std::time::Duration;

use super::{RetryError, RetryStrategy, RetryToken, SendPermit, StandardStrategy, StrategyBuilder};
use crate::adaptive::Admission;
use crate::observe::Counter;
use crate::{RetryConfig, RetryReason, Scope};

/// Adaptive mode (seed 002, `DESIGN.md` §6): [`StandardStrategy`] plus a send permit from the
/// scope's [`ClientRateLimiter`](crate::adaptive::ClientRateLimiter) before every attempt.
/// Every response feeds the limiter; only throttling responses slow it down.
///
/// With `max_wait` set, a retry that would wait longer for its permit is not made (fail fast,
/// so an overloaded caller can shed load), and a first attempt waits at most `max_wait` before
/// it is sent anyway (a call always makes its first attempt).
///
/// ```
/// use retry_core::{AdaptiveStrategy, ErrorKind, RetryConfig, RetryReason, RetryStrategy, SendPermit};
///
/// let strategy = AdaptiveStrategy::new(RetryConfig::default());
/// let mut token = strategy.acquire_initial_token();
/// assert_eq!(strategy.acquire_send_permit(&mut token), Ok(SendPermit::Granted));
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

    fn record_response(&self, token: &RetryToken, throttled: bool) {
        let limiter = self.scope().limiter();
        let was_enabled = throttled && limiter.is_enabled();
        limiter.record_response(throttled, token.sent_at.into(), self.standard.now());
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

    fn acquire_send_permit(&self, token: &mut RetryToken) -> Result<SendPermit, RetryError> {
        let now = self.standard.now();
        let reservation = token.reservation.take();
        let (wait, expected, reservation) =
            match self.scope().limiter().try_acquire(reservation, now) {
                Admission::Granted => {
                    token.sent_at = now.into();
                    return self.standard.acquire_send_permit(token);
                }
                Admission::Wait {
                    wait,
                    expected,
                    reservation,
                } => (wait, expected, reservation),
            };
        let waited = Duration::from(token.permit_wait);
        let mut sleep = wait;
        if let Some(max_wait) = self.config().max_wait()
            && waited.saturating_add(expected) > max_wait
        {
            if token.attempt > 1 {
                self.scope().count(Counter::RateLimited);
                return Err(RetryError::RateLimited {
                    wait: expected,
                    max_wait,
                });
            }
            // A first attempt is always made: wait out what is left of max_wait, then send.
            let left = max_wait.saturating_sub(waited);
            if left.is_zero() {
                token.sent_at = now.into();
                return self.standard.acquire_send_permit(token);
            }
            sleep = sleep.min(left);
        }
        if token.attempt > 1
            && let Some(error) = self.standard.past_deadline(token, expected)
        {
            return Err(error);
        }
        token.permit_wait = waited.saturating_add(sleep).into();
        token.reservation = Some(reservation);
        Ok(SendPermit::Wait(sleep))
    }

    fn refresh_retry_token(
        &self,
        token: RetryToken,
        reason: &RetryReason,
    ) -> Result<RetryToken, RetryError> {
        self.record_response(&token, reason.kind().is_throttling());
        self.standard.refresh_retry_token(token, reason)
    }

    fn record_success(&self, token: RetryToken) {
        self.record_response(&token, false);
        self.standard.record_success(token);
    }

    fn record_failure(&self, token: RetryToken) {
        self.record_response(&token, false);
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
    fn max_wait_fails_a_retry_fast_but_never_a_first_attempt() {
        let clock = Arc::new(ManualClock::new());
        let config = RetryConfig::builder()
            .max_wait(Duration::from_millis(100))
            .initial_backoff(Duration::ZERO)
            .build()
            .unwrap();
        let strategy =
            AdaptiveStrategy::from_builder(StandardStrategy::builder(config).clock(clock.clone()));
        let mut token = strategy.acquire_initial_token();
        assert_eq!(
            strategy.acquire_send_permit(&mut token),
            Ok(SendPermit::Granted)
        );
        let mut token = strategy
            .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
            .unwrap();
        // The bucket is on, empty, filling at 0.5/s: a permit is 2 s away.
        assert_eq!(
            strategy.acquire_send_permit(&mut token),
            Err(RetryError::RateLimited {
                wait: Duration::from_secs(2),
                max_wait: Duration::from_millis(100)
            })
        );
        // A new call's first attempt waits max_wait, then goes.
        let mut first = strategy.acquire_initial_token();
        assert_eq!(
            strategy.acquire_send_permit(&mut first),
            Ok(SendPermit::Wait(Duration::from_millis(100)))
        );
        clock.advance(Duration::from_millis(100));
        assert_eq!(
            strategy.acquire_send_permit(&mut first),
            Ok(SendPermit::Granted)
        );
        assert!(strategy.scope().limiter().stats().capacity >= 0.0);
        assert_eq!(strategy.scope().limiter().stats().waiting, 0);
        strategy.record_success(first);
        strategy.record_failure(token);
    }
}
