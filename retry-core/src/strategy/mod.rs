//! Retry strategies: when to retry and how long to wait (the `RetryStrategy` / `RetryToken`
//! interface of the Smithy client guide "Retries").

mod adaptive;
mod configured;
mod error;
mod standard;
mod token;

use std::fmt;
use std::time::Duration;

pub use adaptive::AdaptiveStrategy;
pub use configured::{ConfiguredStrategy, strategy_for};
pub use error::RetryError;
pub use standard::{StandardStrategy, StrategyBuilder};
pub use token::RetryToken;

use crate::adaptive::Reservation;
use crate::{RetryReason, Scope};

/// Whether an attempt may be sent now.
///
/// ```
/// assert_ne!(retry_core::SendPermit::Granted, retry_core::SendPermit::Wait(std::time::Duration::ZERO));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendPermit {
    /// Send the attempt now.
    Granted,
    /// Wait this long, then ask again.
    Wait(Duration),
}

/// A retry strategy: synchronous and object safe. All waiting is done by the caller (the
/// [`retry`](crate::retry) driver or the `#[retryable]` loop):
///
/// 1. [`acquire_initial_token`](Self::acquire_initial_token) before the first attempt;
/// 2. before each attempt, sleep the token's [`delay`](RetryToken::delay), then call
///    [`acquire_send_permit`](Self::acquire_send_permit) until it grants, sleeping each wait
///    and keeping the place in line it hands out;
/// 3. after a retryable failure, [`refresh_retry_token`](Self::refresh_retry_token); after the
///    call's outcome is final, [`record_success`](Self::record_success) or
///    [`record_failure`](Self::record_failure).
///
/// Tokens move by value, so each is resolved once; they own nothing (no drop glue), so moving
/// one costs a few plain copies. Shared state lives in the [`Scope`]. Every decision not to
/// retry is taken in `refresh_retry_token`, before the previous attempt's outcome is let go: a
/// caller that was granted a retry only waits, it is never turned back while waiting.
///
/// ```
/// use retry_core::{ErrorKind, RetryConfig, RetryReason, RetryStrategy, SendPermit, StandardStrategy};
///
/// let strategy = StandardStrategy::new(RetryConfig::aws_classic().build().unwrap());
/// let mut token = strategy.acquire_initial_token();
/// assert_eq!(strategy.acquire_send_permit(&mut token, &mut None), SendPermit::Granted);
/// // The attempt failed with a server error: ask for a retry.
/// let token = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Server)).unwrap();
/// assert_eq!(token.attempt(), 2);
/// assert_eq!(strategy.scope().quota().level(), 495);
/// // The retry succeeded: the quota gets its 5 back.
/// strategy.record_success(token);
/// assert_eq!(strategy.scope().quota().level(), 500);
/// ```
pub trait RetryStrategy: Send + Sync + fmt::Debug {
    /// The token for a call's first attempt. Never fails: the first attempt is always made.
    fn acquire_initial_token(&self) -> RetryToken;

    /// Whether the token's attempt may be sent now. Standard mode always grants; adaptive mode
    /// asks the scope's rate limiter, and on a wait puts the caller's place in line into
    /// `place`: pass it back on the next call; dropping it (a cancelled call) gives it up.
    /// Never refuses: with `max_wait` set, an attempt that has waited `max_wait` is sent.
    fn acquire_send_permit(
        &self,
        token: &mut RetryToken,
        place: &mut Option<Reservation>,
    ) -> SendPermit;

    /// The token for the next attempt after a retryable failure, with its backoff delay, or why
    /// there is none: attempts, quota, `Retry-After`, the deadline and, in adaptive mode, a
    /// send permit expected later than `max_wait` are all decided here.
    fn refresh_retry_token(
        &self,
        token: RetryToken,
        reason: &RetryReason,
    ) -> Result<RetryToken, RetryError>;

    /// The call succeeded: returns quota, and in adaptive mode raises the send rate.
    fn record_success(&self, token: RetryToken);

    /// The call failed with an outcome that is not retried.
    fn record_failure(&self, token: RetryToken);

    /// The call ended between a granted retry and its attempt (cancelled while waiting): the
    /// retry was never sent, so its quota goes back.
    fn abandon(&self, token: RetryToken);

    /// The scope whose quota, limiter and counters this strategy uses.
    fn scope(&self) -> &Scope;
}

macro_rules! delegate_strategy {
    ($($ty:ty),*) => {$(
        /// Delegates to the wrapped strategy, so a shared handle (`Arc<StandardStrategy>`, a
        /// `Box<dyn RetryStrategy>` field) can be used wherever a strategy is expected.
        impl<S: RetryStrategy + ?Sized> RetryStrategy for $ty {
            fn acquire_initial_token(&self) -> RetryToken {
                (**self).acquire_initial_token()
            }
            fn acquire_send_permit(
                &self,
                token: &mut RetryToken,
                place: &mut Option<Reservation>,
            ) -> SendPermit {
                (**self).acquire_send_permit(token, place)
            }
            fn refresh_retry_token(
                &self,
                token: RetryToken,
                reason: &RetryReason,
            ) -> Result<RetryToken, RetryError> {
                (**self).refresh_retry_token(token, reason)
            }
            fn record_success(&self, token: RetryToken) {
                (**self).record_success(token)
            }
            fn record_failure(&self, token: RetryToken) {
                (**self).record_failure(token)
            }
            fn abandon(&self, token: RetryToken) {
                (**self).abandon(token)
            }
            fn scope(&self) -> &Scope {
                (**self).scope()
            }
        }
    )*};
}

delegate_strategy!(&S, Box<S>, std::sync::Arc<S>);
