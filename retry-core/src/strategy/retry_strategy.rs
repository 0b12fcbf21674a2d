//! The interface between a strategy and the drivers: [`RetryStrategy`] and [`SendPermit`].

use std::fmt;
use std::time::Duration;

use super::error::RetryError;
use super::token::RetryToken;
use crate::classify::RetryReason;
use crate::hedge::{HedgeGrant, HedgeRefusal, ScopeHedging};
use crate::load_shed::LoadShed;

/// Whether an attempt may be sent now.
///
/// ```
/// assert_ne!(retry_core::strategy::SendPermit::Granted, retry_core::strategy::SendPermit::Wait(std::time::Duration::ZERO));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendPermit {
    /// Send the attempt now.
    Granted,
    /// Wait this long, then ask again.
    Wait(Duration),
}

/// A retry strategy: synchronous and object safe. All waiting is done by the caller (the
/// [`retry`](crate::retry) driver, [`RetryLoop`](crate::driver::RetryLoop) or the `#[retryable]`
/// loop):
///
/// 1. [`acquire_initial_token`](Self::acquire_initial_token) before the first attempt;
/// 2. before each attempt, sleep the token's [`delay`](RetryToken::delay), then call
///    [`acquire_send_permit`](Self::acquire_send_permit) until it grants, sleeping each wait;
/// 3. after a retryable failure, [`refresh_retry_token`](Self::refresh_retry_token); after the
///    call's outcome is final, [`record_success`](Self::record_success) or
///    [`record_failure`](Self::record_failure); a call dropped while its attempt was in
///    flight ends with [`record_cancelled`](Self::record_cancelled), one dropped before its
///    attempt was sent (cancelled while it waited) with [`abandon`](Self::abandon).
///
/// # Implementing it
///
/// The trait is open: a strategy of your own (a circuit breaker, a fixed schedule, a wrapper that
/// adds metrics) works with [`retry`](crate::retry), [`Retry`](crate::Retry), [`RetryLoop`] and
/// `#[retryable(strategy = ...)]`. Only the three methods every call reaches are required; the send
/// permit, the failure and cancellation records and the abandon have defaults that grant and do
/// nothing, so a strategy without a rate limiter or shared state writes none of them. Tokens are
/// built with [`RetryToken::first_attempt`] and [`RetryToken::next_attempt`].
///
/// It is not sealed because nothing in the driver depends on a strategy being one of ours:
/// every decision comes back through this interface, and state that spans attempts lives in
/// the token (plain numbers) or in the strategy. The adaptive limiter's place in line is such
/// state: a waiting attempt's ticket is a number in its token, given up by `abandon` when the
/// call is dropped, and dropped by the limiter itself when its holder stops asking (so a
/// wrapper that forgets to forward `abandon` delays the waiters behind for one lease, and
/// blocks no one).
///
/// [`RetryLoop`]: crate::driver::RetryLoop
///
/// Tokens move by value, so each is resolved once; they own nothing (no drop glue), so moving
/// one costs a few plain copies, and the success path of a call neither allocates nor drops.
/// Every decision not to retry is taken in `refresh_retry_token`, before the previous
/// attempt's outcome is let go: a caller that was granted a retry only waits, it is never
/// turned back while waiting.
///
/// ```
/// use retry_core::{ErrorKind, RetryConfig, RetryReason, RetryStrategy, StandardStrategy};
/// use retry_core::strategy::SendPermit;
///
/// let strategy = StandardStrategy::new(RetryConfig::aws_classic().build().unwrap());
/// let mut token = strategy.acquire_initial_token();
/// assert_eq!(strategy.acquire_send_permit(&mut token), SendPermit::Granted);
/// // The attempt failed with a server error: ask for a retry.
/// let token = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Server)).unwrap();
/// assert_eq!(token.attempt(), 2);
/// assert_eq!(strategy.scope().quota().level(), 495);
/// // The retry succeeded: the quota gets its 5 back.
/// strategy.record_success(token);
/// assert_eq!(strategy.scope().quota().level(), 500);
/// ```
///
/// A strategy of one's own: retry twice, 100 ms apart, whatever the failure.
///
/// ```
/// use retry_core::{RetryError, RetryReason, RetryStrategy, retry};
/// use retry_core::strategy::RetryToken;
/// use std::time::Duration;
///
/// #[derive(Debug)]
/// struct TwiceMore;
///
/// impl RetryStrategy for TwiceMore {
///     fn acquire_initial_token(&self) -> RetryToken {
///         RetryToken::first_attempt(Duration::ZERO)
///     }
///     fn refresh_retry_token(&self, token: RetryToken, _: &RetryReason) -> Result<RetryToken, RetryError> {
///         match token.attempt() {
///             attempts @ 3.. => Err(RetryError::MaxAttemptsReached { attempts }),
///             _ => Ok(token.next_attempt(Duration::from_millis(100), 0)),
///         }
///     }
///     fn record_success(&self, _: RetryToken) {}
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let mut calls = 0;
/// let outcome: Result<(), std::io::Error> = retry(&TwiceMore, || {
///     calls += 1;
///     async { Err(std::io::ErrorKind::ConnectionRefused.into()) }
/// })
/// .await;
/// assert!(outcome.is_err());
/// assert_eq!(calls, 3);
/// # }
/// ```
pub trait RetryStrategy: Send + Sync + fmt::Debug {
    /// The token for a call's first attempt. Never fails: the first attempt is always made (a
    /// strategy that sheds load refuses it in [`acquire_send_permit`](Self::acquire_send_permit)).
    fn acquire_initial_token(&self) -> RetryToken;

    /// The token for the next attempt after a retryable failure, with its backoff delay, or why
    /// there is none. Ours decide attempts, quota, `Retry-After`, the deadline and, in adaptive
    /// mode, a send permit expected later than `max_wait` here.
    fn refresh_retry_token(
        &self,
        token: RetryToken,
        reason: &RetryReason,
    ) -> Result<RetryToken, RetryError>;

    /// The call succeeded. Ours return quota, and in adaptive mode raise the send rate.
    fn record_success(&self, token: RetryToken);

    /// Whether the token's attempt may be sent now, called after its backoff and again after
    /// each wait it asks for. Default: always granted (standard mode). Adaptive mode asks the
    /// scope's rate limiter and keeps the attempt's place in line in the token.
    #[inline(always)]
    fn acquire_send_permit(&self, token: &mut RetryToken) -> SendPermit {
        let _ = token;
        SendPermit::Granted
    }

    /// Whether to refuse the call before the token's first attempt is sent, asked by the drivers
    /// whose caller can return the refusal
    /// ([`RetryLoop::shed_load`](crate::driver::RetryLoop::shed_load),
    /// [`Retry::shed_load`](crate::Retry::shed_load), `#[retryable(shed = true)]`, the tower
    /// layer's `shed_load`) before the attempt waits for its send permit and after each wait.
    /// Default: never. Adaptive mode refuses a first attempt whose permit is expected after the
    /// call's deadline or later than what is left of `max_wait`; the driver then abandons the token
    /// (giving its place in line up).
    fn shed(&self, token: &RetryToken) -> Option<LoadShed> {
        let _ = token;
        None
    }

    /// The call failed with an outcome that is not retried. Default: nothing to record.
    fn record_failure(&self, token: RetryToken) {
        let _ = token;
    }

    /// The call was dropped (cancelled) while the token's attempt was in flight: the attempt
    /// was sent, and no answer came. Default: [`record_failure`](Self::record_failure). Adaptive
    /// mode feeds nothing to its rate limiter here: a cancellation says nothing of the service,
    /// and taking it for an answer would move the measured rate and the CUBIC curve.
    fn record_cancelled(&self, token: RetryToken) {
        self.record_failure(token)
    }

    /// The call ended before the token's attempt was sent (cancelled while it slept its backoff
    /// or waited for its permit, or refused a permit). Ours give an unsent retry's quota back
    /// and the attempt's place in the rate limiter's line up. Default: nothing to give back.
    fn abandon(&self, token: RetryToken) {
        let _ = token;
    }

    /// The driver refused the call before its first attempt because [`shed`](Self::shed) said to
    /// (the token was never sent). Default: [`abandon`](Self::abandon). Ours also count the call
    /// as shed in their metrics.
    fn record_shed(&self, token: RetryToken) {
        self.abandon(token)
    }

    /// The most attempts a call may make, the first included (`max_attempts`), if the strategy
    /// has such a bound: what [`Attempt::max`](crate::attempt::Attempt::max) tells an attempt
    /// (the `max` of the AWS SDKs' `amz-sdk-request` header). Default: `None`.
    ///
    /// ```
    /// use retry_core::{RetryConfig, RetryStrategy, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(5).build().unwrap());
    /// assert_eq!(RetryStrategy::max_attempts(&strategy), Some(5));
    /// ```
    #[inline(always)]
    fn max_attempts(&self) -> Option<u32> {
        None
    }

    /// The name of the scope the strategy's calls share, for logs and spans (the `scope` field
    /// of the give-up event and `retry.scope` of the retry spans). Default: `None`.
    ///
    /// ```
    /// use retry_core::{RetryConfig, RetryStrategy, strategy_for};
    /// let strategy = strategy_for(RetryConfig::default(), "docs-scope-name");
    /// assert_eq!(strategy.scope_name(), Some("docs-scope-name"));
    /// ```
    fn scope_name(&self) -> Option<&str> {
        None
    }

    /// Hedging ([`hedge`](crate::hedge)): whether another copy of the call may be sent now,
    /// while `token`'s attempt (the last copy sent) is in flight, and what it cost; asked by the
    /// hedging drivers when a hedge is due. A refused hedge is not sent and the call goes on.
    /// On a grant the driver counts the hedge as the call's next attempt (`token.attempt() + 1`).
    ///
    /// Ours refuse a hedge past `max_attempts` (hedges and retries share it), past the deadline,
    /// while a throttle pauses the scope's hedges, when the quota cannot pay the retry cost from
    /// what it holds (a hedge is never lent against the calls in flight) and keep half its cap,
    /// and in adaptive mode when the rate limiter has no spare permit (see the
    /// [module](crate::hedge)'s rules). A granted cost is part of the call's account from then on,
    /// as a retry's: the token of the hedge's attempt carries it in what the call paid
    /// ([`RetryToken::next_attempt`]), and the call's end settles it. Default: granted free of
    /// charge while the call
    /// has attempts left under [`max_attempts`](Self::max_attempts): a strategy without a budget
    /// has nothing to charge.
    ///
    /// ```
    /// use retry_core::hedge::HedgeRefusal;
    /// use retry_core::{RetryConfig, RetryStrategy, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(2).build().unwrap());
    /// let token = strategy.acquire_initial_token();
    /// let hedge = strategy.acquire_hedge(&token).unwrap();
    /// assert_eq!(hedge.cost(), 14); // the default retry cost, out of the quota
    /// let hedged = token.next_attempt(std::time::Duration::ZERO, hedge.cost());
    /// assert_eq!(strategy.acquire_hedge(&hedged), Err(HedgeRefusal::MaxAttempts));
    /// # strategy.record_success(hedged);
    /// ```
    fn acquire_hedge(&self, token: &RetryToken) -> Result<HedgeGrant, HedgeRefusal> {
        match self.max_attempts() {
            Some(max) if token.attempt() >= max => Err(HedgeRefusal::MaxAttempts),
            _ => Ok(HedgeGrant::free()),
        }
    }

    /// Hedging: a copy of the call answered with a retryable failure, for `reason`, while
    /// another copy is in flight; the call goes on. `copy` is that copy's token (its attempt
    /// number; the token of the call is the driver's). Ours count the copy as an attempt sent
    /// (and a throttle, which pauses the scope's hedges), and in adaptive mode feed the answer
    /// to the rate limiter, as [`refresh_retry_token`](Self::refresh_retry_token) does. Default:
    /// nothing to record.
    fn record_copy_failure(&self, copy: &RetryToken, reason: &RetryReason) {
        let _ = (copy, reason);
    }

    /// Hedging: a copy of the call was dropped unanswered, because another copy ended the call
    /// or the call was cancelled (the copy in the call's own token is settled as the call is).
    /// Ours count it as an attempt sent. Default: nothing to record.
    fn record_copy_cancelled(&self, copy: &RetryToken) {
        let _ = copy;
    }

    /// Hedging: the state the strategy's scope keeps for its hedged calls (made on the first
    /// call: a scope whose calls never hedge has none), which measures the latency a
    /// [`HedgeDelay::Percentile`](crate::hedge::HedgeDelay::Percentile) is read from, pauses the
    /// scope's hedges after a throttle and counts them in the metrics. Default: `None`, and then
    /// a percentile is never known (the calls are not hedged by percentile; a fixed delay
    /// works), nothing is paused and nothing counted.
    ///
    /// ```
    /// use retry_core::{RetryConfig, RetryStrategy, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// assert_eq!(strategy.scope_hedging().map(|hedging| hedging.samples()), Some(0));
    /// ```
    fn scope_hedging(&self) -> Option<&ScopeHedging> {
        None
    }
}

macro_rules! delegate_strategy {
    ($($ty:ty),*) => {$(
        /// Delegates to the wrapped strategy, so a shared handle (`Arc<StandardStrategy>`, a
        /// `Box<dyn RetryStrategy>` field) can be used wherever a strategy is expected.
        impl<S: RetryStrategy + ?Sized> RetryStrategy for $ty {
            fn acquire_initial_token(&self) -> RetryToken {
                (**self).acquire_initial_token()
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
            fn acquire_send_permit(&self, token: &mut RetryToken) -> SendPermit {
                (**self).acquire_send_permit(token)
            }
            fn shed(&self, token: &RetryToken) -> Option<LoadShed> {
                (**self).shed(token)
            }
            fn record_cancelled(&self, token: RetryToken) {
                (**self).record_cancelled(token)
            }
            fn record_failure(&self, token: RetryToken) {
                (**self).record_failure(token)
            }
            fn abandon(&self, token: RetryToken) {
                (**self).abandon(token)
            }
            fn record_shed(&self, token: RetryToken) {
                (**self).record_shed(token)
            }
            #[inline(always)]
            fn max_attempts(&self) -> Option<u32> {
                (**self).max_attempts()
            }
            fn scope_name(&self) -> Option<&str> {
                (**self).scope_name()
            }
            fn acquire_hedge(&self, token: &RetryToken) -> Result<HedgeGrant, HedgeRefusal> {
                (**self).acquire_hedge(token)
            }
            fn record_copy_failure(&self, copy: &RetryToken, reason: &RetryReason) {
                (**self).record_copy_failure(copy, reason)
            }
            fn record_copy_cancelled(&self, copy: &RetryToken) {
                (**self).record_copy_cancelled(copy)
            }
            fn scope_hedging(&self) -> Option<&ScopeHedging> {
                (**self).scope_hedging()
            }
        }
    )*};
}

delegate_strategy!(&S, Box<S>, std::sync::Arc<S>);
