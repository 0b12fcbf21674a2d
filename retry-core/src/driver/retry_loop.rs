//! The attempt loop shared by [`retry`](crate::retry) and the `#[retryable]` expansion.

use std::ops::ControlFlow;

use super::{OnRetry, RetryEvent};
use crate::{ClassifyRetry, RetryAction, RetryError, RetryStrategy, RetryToken, SendPermit};

/// The state of one call between its attempts.
///
/// The caller runs each attempt and hands its outcome to [`next`](Self::next), which classifies
/// it, asks the strategy for a retry, sleeps the backoff and waits for a send permit, then says
/// whether to run another attempt or return the outcome. Keeping the attempt itself in the
/// caller's hands is what lets `#[retryable]` re-borrow `&mut self` for every attempt.
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
/// let mut retry = RetryLoop::start(&strategy, RetryInfoClassifier, NoHook).await;
/// let result = loop {
///     calls += 1;
///     let outcome: Result<u32, std::io::Error> = Ok(calls);
///     match retry.next(outcome).await {
///         ControlFlow::Break(outcome) => break outcome,
///         ControlFlow::Continue(()) => {}
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
    /// Acquires the call's first token and waits until the first attempt may be sent.
    pub async fn start(strategy: &'s S, classifier: C, on_retry: H) -> Self {
        let mut this = Self {
            strategy,
            classifier,
            on_retry,
            token: Some(strategy.acquire_initial_token()),
            sent: false,
        };
        // The first attempt is always made: a strategy only refuses retries.
        let _ = this.wait_for_permit().await;
        this.sent = true;
        this
    }

    /// Takes one attempt's outcome: `Break(outcome)` when the call is over (the outcome is
    /// returned unchanged), `Continue(())` when the next attempt may be sent now.
    pub async fn next<T, E>(&mut self, outcome: Result<T, E>) -> ControlFlow<Result<T, E>>
    where
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
    {
        // Classify before taking the token: should the classifier panic, the drop settles it.
        let action = self.classifier.classify(&outcome);
        let Some(token) = self.token.take() else {
            return ControlFlow::Break(outcome);
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
                return ControlFlow::Break(outcome);
            }
        };
        let token = match self.strategy.refresh_retry_token(token, &reason) {
            Ok(token) => token,
            Err(error) => {
                log_stop(attempt, &error);
                return ControlFlow::Break(outcome);
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
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        if let Err(error) = self.wait_for_permit().await {
            log_stop(attempt, &error);
            if let Some(token) = self.token.take() {
                self.strategy.abandon(token);
            }
            return ControlFlow::Break(outcome);
        }
        self.sent = true;
        ControlFlow::Continue(())
    }

    /// Sleeps until the strategy grants the current token's send permit.
    async fn wait_for_permit(&mut self) -> Result<(), RetryError> {
        loop {
            let Some(token) = self.token.as_mut() else {
                return Ok(());
            };
            match self.strategy.acquire_send_permit(token)? {
                SendPermit::Granted => return Ok(()),
                SendPermit::Wait(wait) => tokio::time::sleep(wait).await,
            }
        }
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
