//! The attempt loop shared by [`retry`](crate::retry) and the `#[retryable]` expansion.

use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use super::{NeverShed, OnRetry, RetryEvent, ShedLoad, ShedPolicy};
use crate::classify::{ClassifyRetry, RetryAction, RetryReason};
use crate::load_shed::LoadShed;
use crate::strategy::{RetryError, RetryStrategy, RetryToken, SendPermit};

/// The state of one call between its attempts.
///
/// The caller runs each attempt itself and
/// 1. awaits [`ready`](Self::ready) before it: the backoff and, in adaptive mode, the send
///    permit (nothing to await in standard mode's first attempt);
/// 2. hands the outcome to [`finish`](Self::finish) by reference, which classifies it and says
///    whether to return it (`Break`) or retry (`Continue`);
/// 3. on `Break`, sleeps what [`take_linger`](Self::take_linger) gives before returning the
///    outcome: a long-polling call whose retry the quota refused sleeps its backoff there;
///    every other call returns at once. [`linger`](Self::linger) is that wait as a future.
///
/// Keeping the attempt and its outcome in the caller's hands is what lets `#[retryable]`
/// re-borrow `&mut self` for every attempt, and keeps the success path free of moves and
/// allocations. Every decision to stop is taken by `finish`, while the outcome is at hand;
/// `ready` only waits. So no outcome is kept across a wait, and the caller's loop is
/// `ready().await`, attempt, `finish`: on a success no suspension point follows the attempt.
/// One would cost every call, even if never reached: awaiting `linger()` after `finish` took
/// `retry_core::retry`'s success path from 5.0 ns to 17.7 ns in `benches/` (criterion,
/// `success_path`, one run each). A hot loop returns `(outcome, take_linger())` from its async
/// block and sleeps the wait outside it, as `Retry::run` and `#[retryable]` do.
///
/// Dropping the loop (a cancelled call) settles its token: an attempt in flight is recorded as a
/// failure, one not yet sent is abandoned (a retry's quota goes back, a place among the rate
/// limiter's waiters is given up).
///
/// The loop never refuses a call: `ready` resolves to `Result<(), Infallible>`. With
/// [`shed_load`](Self::shed_load) it may ([`ShedLoad`]): `ready` then resolves to
/// `Err(LoadShed)` for a call the strategy sheds before its first attempt.
///
/// ```
/// use retry_core::driver::{NoHook, RetryLoop};
/// use retry_core::{RetryConfig, StandardStrategy};
/// use retry_core::classify::RetryInfoClassifier;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let mut calls = 0;
/// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
/// let result = loop {
///     retry.ready().await;
///     calls += 1;
///     let outcome: Result<u32, std::io::Error> = Ok(calls);
///     if retry.finish(&outcome).is_break() {
///         retry.linger().await; // only a long-polling call waits here
///         break outcome;
///     }
/// };
/// assert_eq!(result.unwrap(), 1);
/// # }
/// ```
pub struct RetryLoop<'s, S: RetryStrategy + ?Sized, C, H, L = NeverShed> {
    /// The call's token, settled when the loop is dropped.
    call: Call<'s, S>,
    classifier: C,
    on_retry: H,
    /// The timer of the waits: boxed on the call's first wait, reused after it.
    sleep: Option<Pin<Box<Sleep>>>,
    /// What the call sleeps after its last attempt before returning (long polling).
    linger: Option<Duration>,
    /// Whether the call may be refused before its first attempt.
    shedding: L,
}

/// A call's token under its strategy: settled when dropped (a cancelled call).
struct Call<'s, S: RetryStrategy + ?Sized> {
    strategy: &'s S,
    /// The current attempt's token; `None` once the call's outcome is final.
    token: Option<RetryToken>,
    /// Whether the token's attempt has been sent (a retry not yet sent is refunded on drop).
    sent: bool,
}

impl<'s, S: RetryStrategy + ?Sized, C, H> RetryLoop<'s, S, C, H> {
    /// Acquires the call's first token.
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// # drop(retry);
    /// ```
    #[inline(always)]
    pub fn new(strategy: &'s S, classifier: C, on_retry: H) -> Self {
        Self {
            call: Call {
                strategy,
                token: Some(strategy.acquire_initial_token()),
                sent: false,
            },
            classifier,
            on_retry,
            sleep: None,
            linger: None,
            shedding: NeverShed,
        }
    }
}

impl<'s, S: RetryStrategy + ?Sized, C, H, L> RetryLoop<'s, S, C, H, L> {
    /// Sheds load rather than queue past the deadline (adaptive mode): before the first attempt
    /// waits for its send permit and after each of its waits, the strategy may
    /// [`shed`](RetryStrategy::shed) the call (when the permit is expected after the deadline or
    /// later than `max_wait`). Then no attempt is made: [`ready`](Self::ready) (or
    /// [`wait_blocking`](Self::wait_blocking)) resolves to the [`LoadShed`] at once, the call's
    /// token is abandoned, and a later [`finish`](Self::finish) ends the call. The caller
    /// returns the refusal as its own error; `#[retryable(shed = true)]` expands to this.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_core::{LoadShed, RetryConfig, StandardStrategy};
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook).shed_load();
    /// let ready: Result<(), LoadShed> = retry.ready().await;
    /// assert!(ready.is_ok(), "standard mode never sheds");
    /// # }
    /// ```
    #[inline(always)]
    pub fn shed_load(self) -> RetryLoop<'s, S, C, H, ShedLoad> {
        self.with_shedding(ShedLoad)
    }

    /// The loop under the shedding policy `shedding`.
    #[inline(always)]
    pub(super) fn with_shedding<L2>(self, shedding: L2) -> RetryLoop<'s, S, C, H, L2> {
        RetryLoop {
            call: self.call,
            classifier: self.classifier,
            on_retry: self.on_retry,
            sleep: self.sleep,
            linger: self.linger,
            shedding,
        }
    }

    /// For a driver that keeps its own time (a simulator, a service layer with its own
    /// timer), the synchronous part of a shedding [`ready`](Self::ready): asks the strategy
    /// whether to shed the call before its first attempt; a shed call's token is abandoned
    /// (nothing was sent). Ask before the first attempt waits and after each of its waits;
    /// `None` once an attempt was sent, and for retries.
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// assert!(retry.try_shed().is_none());
    /// ```
    pub fn try_shed(&mut self) -> Option<LoadShed> {
        self.call.refuse(&ShedLoad)
    }

    /// The loop's policy's refusal of the call, if it sheds it now (see
    /// [`try_shed`](Self::try_shed)); never for a loop that does not shed.
    #[inline(always)]
    pub(super) fn refuse(&mut self) -> Option<L::Refusal>
    where
        L: ShedPolicy,
    {
        self.call.refuse(&self.shedding)
    }

    /// For a driver that keeps its own time, the synchronous part of [`ready`](Self::ready):
    /// the next wait before the attempt may be sent, `None` once it may (the attempt then counts
    /// as sent). Ask with `backoff` first after [`new`](Self::new) and after each `finish` that
    /// retries, which returns the retry's backoff if it has one; then without it after each
    /// wait, which asks the strategy for the send permit. `None` too once the call is over.
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// assert_eq!(retry.next_wait(true), None); // the first attempt: send it now
    /// let reset: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionReset.into());
    /// assert!(retry.finish(&reset).is_continue());
    /// assert!(retry.next_wait(true).is_some()); // the retry's backoff
    /// assert_eq!(retry.next_wait(false), None); // then its permit: standard mode grants
    /// ```
    #[inline(always)]
    pub fn next_wait(&mut self, backoff: bool) -> Option<Duration> {
        let token = self.call.token.as_mut()?;
        if backoff && token.has_delay() {
            return Some(token.delay());
        }
        match self.call.strategy.acquire_send_permit(token) {
            SendPermit::Granted => {
                self.call.sent = true;
                None
            }
            SendPermit::Wait(wait) => Some(wait),
        }
    }

    /// For a driver that keeps its own time, the synchronous part of [`linger`](Self::linger):
    /// once `finish` ended the call, how long to sleep before returning its outcome (taken: asked
    /// again, `None`).
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// let outcome: Result<(), std::io::Error> = Err(std::io::ErrorKind::InvalidInput.into());
    /// assert!(retry.finish(&outcome).is_break());
    /// assert_eq!(retry.take_linger(), None); // not retryable: returned at once
    /// ```
    #[inline(always)]
    pub fn take_linger(&mut self) -> Option<Duration> {
        self.linger.take()
    }

    /// Starts the timer for a wait of `wait` (out of line: the success path never waits).
    #[inline(never)]
    pub(super) fn start_sleep(&mut self, wait: Duration) {
        let deadline = Instant::now() + wait;
        match self.sleep.as_mut() {
            Some(sleep) => sleep.as_mut().reset(deadline),
            None => self.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
    }

    /// Polls the timer [`start_sleep`](Self::start_sleep) started.
    #[inline(never)]
    pub(super) fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self.sleep.as_mut() {
            Some(sleep) => sleep.as_mut().poll(cx),
            None => Poll::Ready(()),
        }
    }

    /// Takes one attempt's outcome: `Break(())` when the call is over (return the outcome as it
    /// is), `Continue(())` when it is retried (await [`ready`](Self::ready), then attempt again).
    /// Every reason to stop (attempts, quota, deadline, `max_wait`) is decided here.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// retry.ready().await;
    /// let reset: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionReset.into());
    /// assert!(retry.finish(&reset).is_continue());
    /// # }
    /// ```
    #[inline(always)]
    pub fn finish<T, E>(&mut self, outcome: &Result<T, E>) -> ControlFlow<()>
    where
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
    {
        // Classify before taking the token: should the classifier panic, the drop settles it.
        let action = self.classifier.classify(outcome);
        // Each path takes the token itself, so that the success path reads it in place.
        if let RetryAction::RetryIndicated(reason) = action {
            return self.retry(reason, outcome);
        }
        let Some(token) = RetryToken::take(&mut self.call.token) else {
            return ControlFlow::Break(());
        };
        if outcome.is_ok() {
            self.call.strategy.record_success(token);
        } else {
            self.fail(token);
        }
        ControlFlow::Break(())
    }

    /// A failure that is not retried, kept out of line (the success path is inlined).
    #[cold]
    #[inline(never)]
    fn fail(&self, token: RetryToken) {
        let attempt = token.attempt();
        self.call.strategy.record_failure(token);
        log_stop(attempt, &RetryError::NotRetryable);
    }

    /// The retry path of [`finish`](Self::finish), kept out of line.
    #[inline(never)]
    fn retry<T, E>(&mut self, reason: RetryReason, outcome: &Result<T, E>) -> ControlFlow<()>
    where
        H: OnRetry<E>,
    {
        let Some(token) = RetryToken::take(&mut self.call.token) else {
            return ControlFlow::Break(());
        };
        let attempt = token.attempt();
        let token = match self.call.strategy.refresh_retry_token(token, &reason) {
            Ok(token) => token,
            Err(error) => {
                log_stop(attempt, &error);
                self.linger = error.wait_before_returning();
                return ControlFlow::Break(());
            }
        };
        // Keep the granted retry before the hook runs: should the hook panic, the drop gives
        // the unsent retry's cost back.
        let delay = token.delay();
        self.call.token = Some(token);
        self.call.sent = false;
        self.on_retry.on_retry(&RetryEvent {
            attempt,
            error: outcome.as_ref().err(),
            delay,
            reason,
        });
        ControlFlow::Continue(())
    }
}

impl<S: RetryStrategy + ?Sized> Call<'_, S> {
    /// `shedding`'s refusal of the call, if it sheds it now: then its unsent token is
    /// abandoned. Never once an attempt was sent.
    #[inline(always)]
    fn refuse<P: ShedPolicy>(&mut self, shedding: &P) -> Option<P::Refusal> {
        let token = self.token.as_ref()?;
        if self.sent {
            return None;
        }
        let refusal = shedding.shed(self.strategy, token)?;
        if let Some(token) = RetryToken::take(&mut self.token) {
            self.strategy.abandon(token);
        }
        Some(refusal)
    }
}

impl<S: RetryStrategy + ?Sized> Drop for Call<'_, S> {
    #[inline(always)]
    fn drop(&mut self) {
        if let Some(token) = RetryToken::take(&mut self.token) {
            if self.sent {
                // Dropped while an attempt was in flight: the attempt was made, its end unknown.
                self.strategy.record_cancelled(token);
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
