//! The attempt loop shared by [`retry`](crate::retry) and the `#[retryable]` expansion.

use std::ops::ControlFlow;

use super::{OnRetry, RetryEvent};
use crate::{ClassifyRetry, RetryAction, RetryError, RetryStrategy, RetryToken, SendPermit};

/// The state of one call between its attempts.
///
/// The caller runs each attempt itself and
/// 1. awaits [`ready`](Self::ready) before it: the backoff and, in adaptive mode, the send
///    permit (nothing to await in standard mode's first attempt);
/// 2. hands the outcome to [`finish`](Self::finish) by reference, which classifies it and says
///    whether to return it (`Break`) or retry (`Continue`).
///
/// Keeping the attempt and its outcome in the caller's hands is what lets `#[retryable]`
/// re-borrow `&mut self` for every attempt, and keeps the success path free of moves and
/// allocations.
///
/// Dropping the loop (a cancelled call) settles its token: a retry granted but never sent gives
/// its quota back, and a place among the rate limiter's waiters is given up.
///
/// ```
/// use retry_core::{NoHook, RetryConfig, RetryInfoClassifier, RetryLoop, StandardStrategy};
/// use std::ops::ControlFlow;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let mut calls = 0;
/// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
/// retry.ready().await;
/// let result = loop {
///     calls += 1;
///     let outcome: Result<u32, std::io::Error> = Ok(calls);
///     if retry.finish(&outcome).is_break() || !retry.ready().await {
///         break outcome;
///     }
/// };
/// assert_eq!(result.unwrap(), 1);
/// # }
/// ```
pub struct RetryLoop<'s, S: RetryStrategy + ?Sized, C, H> {
    strategy: &'s S,
    classifier: C,
    on_retry: H,
    /// The current attempt's token; `None` once the call's outcome is final.
    token: Option<RetryToken>,
    /// Whether the token's attempt has been sent (a retry not yet sent is refunded on drop).
    sent: bool,
}

impl<'s, S: RetryStrategy + ?Sized, C, H> RetryLoop<'s, S, C, H> {
    /// Acquires the call's first token.
    ///
    /// ```
    /// use retry_core::{NoHook, RetryConfig, RetryInfoClassifier, RetryLoop, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// # drop(retry);
    /// ```
    pub fn new(strategy: &'s S, classifier: C, on_retry: H) -> Self {
        Self {
            strategy,
            classifier,
            on_retry,
            token: Some(strategy.acquire_initial_token()),
            sent: false,
        }
    }

    /// Waits until the next attempt may be sent: sleeps its backoff, then waits for its send
    /// permit. `false` means the strategy gave up on a retry while waiting (`max_wait`, the
    /// deadline): return the last outcome. The first attempt is always made.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_core::{NoHook, RetryConfig, RetryInfoClassifier, RetryLoop, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// assert!(retry.ready().await);
    /// # }
    /// ```
    pub async fn ready(&mut self) -> bool {
        let Some(token) = self.token.as_mut() else {
            return false;
        };
        let first = token.attempt() == 1;
        let delay = token.delay();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        loop {
            let Some(token) = self.token.as_mut() else {
                return false;
            };
            match self.strategy.acquire_send_permit(token) {
                Ok(SendPermit::Granted) => break,
                Ok(SendPermit::Wait(wait)) => tokio::time::sleep(wait).await,
                // A strategy only refuses retries; should it refuse a first attempt, send it.
                Err(_) if first => break,
                Err(error) => {
                    log_stop(token.attempt() - 1, &error);
                    if let Some(token) = self.token.take() {
                        self.strategy.abandon(token);
                    }
                    return false;
                }
            }
        }
        self.sent = true;
        true
    }

    /// Takes one attempt's outcome: `Break(())` when the call is over (return the outcome as it
    /// is), `Continue(())` when it is retried (await [`ready`](Self::ready), then attempt again).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_core::{NoHook, RetryConfig, RetryInfoClassifier, RetryLoop, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// retry.ready().await;
    /// let reset: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionReset.into());
    /// assert!(retry.finish(&reset).is_continue());
    /// # }
    /// ```
    pub fn finish<T, E>(&mut self, outcome: &Result<T, E>) -> ControlFlow<()>
    where
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
    {
        // Classify before taking the token: should the classifier panic, the drop settles it.
        let action = self.classifier.classify(outcome);
        let Some(token) = self.token.take() else {
            return ControlFlow::Break(());
        };
        let attempt = token.attempt();
        let reason = match action {
            RetryAction::RetryIndicated(reason) => reason,
            _ => {
                if outcome.is_ok() {
                    self.strategy.record_success(token);
                } else {
                    self.strategy.record_failure(token);
                    log_stop(attempt, &RetryError::NotRetryable);
                }
                return ControlFlow::Break(());
            }
        };
        let token = match self.strategy.refresh_retry_token(token, &reason) {
            Ok(token) => token,
            Err(error) => {
                log_stop(attempt, &error);
                return ControlFlow::Break(());
            }
        };
        // Keep the granted retry before the hook runs: should the hook panic, the drop gives
        // the unsent retry's cost back.
        let delay = token.delay();
        self.token = Some(token);
        self.sent = false;
        self.on_retry.on_retry(&RetryEvent {
            attempt,
            error: outcome.as_ref().err(),
            delay,
            reason,
        });
        ControlFlow::Continue(())
    }
}

impl<S: RetryStrategy + ?Sized, C, H> Drop for RetryLoop<'_, S, C, H> {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            if self.sent {
                // Dropped while an attempt was in flight: the attempt was made, its end unknown.
                self.strategy.record_failure(token);
            } else {
                self.strategy.abandon(token);
            }
        }
    }
}

fn log_stop(attempt: u32, error: &RetryError) {
    tracing::debug!(
        target: "retry_core",
        attempt,
        reason = error.as_str(),
        "not retrying: {error}"
    );
}
