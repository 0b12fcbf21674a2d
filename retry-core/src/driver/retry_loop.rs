//! The attempt loop shared by [`retry`](crate::retry) and the `#[retryable]` expansion.

use std::fmt::Debug;
use std::future::Future;
use std::ops::ControlFlow;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

use super::retry_step::{TokenSlot, retry_or_give_up, settle_dropped};
use super::{NeverShed, OnRetry, ShedLoad, ShedPolicy};
use crate::attempt::{self, Attempt, CallStats, InAttempt, Mark};
use crate::classify::{ClassifyRetry, ErrorKind, Idempotency, RetryAction, RetryReason};
use crate::cold_drop::ColdDrop;
use crate::load_shed::LoadShed;
use crate::observe;
use crate::strategy::{RetryStrategy, RetryToken, SendPermit};

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
/// Run each attempt through [`in_attempt`](Self::in_attempt) (or
/// [`in_attempt_blocking`](Self::in_attempt_blocking)): a retry then runs in its `retry.attempt`
/// span, and with feature `attempt-context` the attempt reads its number with
/// `attempt::current()`. When a call ends, [`stats`](Self::stats) tells what it did (and with
/// the feature, the `attempt::capture` running on the thread, if any, is told).
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
    /// The retry path's state (the waits' timer and total, a retry's span): boxed on the call's
    /// first wait or first traced retry, reused after it.
    retry_path: ColdDrop<Pin<Box<RetryPath>>>,
    /// What the call sleeps after its last attempt before returning (long polling).
    linger: Option<Duration>,
    /// Whether the call may be refused before its first attempt.
    shedding: L,
    /// Whether the call is idempotent: an input of classification.
    idempotency: Idempotency,
    /// Why the current attempt is a retry (the kind of the failure before it); `None` for the
    /// first attempt.
    retried_for: Option<ErrorKind>,
    /// The attempts the call ended after, once it ended.
    ended_after: u32,
}

pin_project! {
    /// A call's state on the retry path: the timer of its waits, how long they were, and the span
    /// of the retry in progress. A first attempt that succeeds never makes it.
    struct RetryPath {
        // The timer, made on the first wait (a blocking loop makes none).
        #[pin]
        sleep: Option<Sleep>,
        // The waits started so far, summed.
        waited: Duration,
        // The `retry.attempt` span of the retry in progress, when a subscriber records it.
        span: Option<tracing::Span>,
    }
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
            retry_path: ColdDrop::none(),
            linger: None,
            shedding: NeverShed,
            idempotency: Idempotency::Undeclared,
            retried_for: None,
            ended_after: 0,
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
        let idempotency = self.idempotency;
        self.with_options(ShedLoad, idempotency)
    }

    /// The loop under the shedding policy `shedding`, for a call of idempotency `idempotency`
    /// (one move of the loop for both: the success path pays for each).
    #[inline(always)]
    pub(super) fn with_options<L2>(
        self,
        shedding: L2,
        idempotency: Idempotency,
    ) -> RetryLoop<'s, S, C, H, L2> {
        RetryLoop {
            call: self.call,
            classifier: self.classifier,
            on_retry: self.on_retry,
            retry_path: self.retry_path,
            linger: self.linger,
            shedding,
            idempotency,
            retried_for: self.retried_for,
            ended_after: self.ended_after,
        }
    }

    /// Declares whether the call is idempotent (sending it twice is as good as once): errors that
    /// may have reached the server ([`RetrySafety::Maybe`](crate::RetrySafety::Maybe)) are then
    /// retried (`true`) or never (`false`); undeclared, they are retried only when their fault is
    /// the server's. See [`Idempotency`].
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, RetryInfo, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    ///
    /// #[derive(Debug)]
    /// struct ConnectionLost; // may have reached the server: `RetrySafety::Maybe`
    /// impl RetryInfo for ConnectionLost {}
    ///
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let lost: Result<(), ConnectionLost> = Err(ConnectionLost);
    /// let mut put = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook).idempotent(true);
    /// assert!(put.finish(&lost).is_continue());
    /// let mut post = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook).idempotent(false);
    /// assert!(post.finish(&lost).is_break());
    /// ```
    #[inline(always)]
    pub fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotency = Idempotency::declared(idempotent);
        self
    }

    /// The attempt about to be sent (once [`ready`](Self::ready)), or in flight: its number and
    /// the strategy's most attempts. `None` once the call is over.
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(3).build().unwrap());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// let attempt = retry.attempt().unwrap();
    /// assert_eq!((attempt.number(), attempt.max()), (1, Some(3)));
    /// let refused: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionRefused.into());
    /// assert!(retry.finish(&refused).is_continue());
    /// assert_eq!(retry.attempt().unwrap().amz_sdk_request(), "attempt=2; max=3");
    /// ```
    #[inline(always)]
    pub fn attempt(&self) -> Option<Attempt> {
        let token = self.call.token.as_ref()?;
        Some(Attempt::new(
            token.attempt(),
            self.call.strategy.max_attempts(),
        ))
    }

    /// Runs `future`, the current attempt, in its context: while it is polled, a retry runs in
    /// its `retry.attempt` span (made now, a child of the caller's span; the first attempt gets
    /// none) and, with feature `attempt-context`, `attempt::current()` is the attempt. Await it,
    /// then hand its outcome to [`finish`](Self::finish).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// retry.ready().await;
    /// let outcome: Result<u32, std::io::Error> = retry.in_attempt(async { Ok(7) }).await;
    /// assert!(retry.finish(&outcome).is_break());
    /// assert_eq!(outcome.unwrap(), 7);
    /// # }
    /// ```
    #[inline(always)]
    pub fn in_attempt<F: Future>(&mut self, future: F) -> InAttempt<'_, F> {
        let (attempt, span) = self.start();
        InAttempt::new(future, attempt, span)
    }

    /// [`in_attempt`](Self::in_attempt) for an attempt made by a closure: `make` is called in the
    /// attempt's context too (a closure under `retry` reads its attempt when it is called).
    #[inline(always)]
    pub(crate) fn start_attempt<F: Future>(
        &mut self,
        make: impl FnOnce() -> F,
    ) -> InAttempt<'_, F> {
        let (attempt, span) = self.start();
        let future = attempt::in_context(attempt, span, make);
        InAttempt::new(future, attempt, span)
    }

    /// Runs the blocking attempt `f` in its context: [`in_attempt`](Self::in_attempt) for a
    /// caller that waits with [`wait_blocking`](Self::wait_blocking).
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// let Ok(()) = retry.wait_blocking();
    /// let outcome: Result<u32, std::io::Error> = retry.in_attempt_blocking(|| Ok(7));
    /// assert!(retry.finish(&outcome).is_break());
    /// # assert_eq!(outcome.unwrap(), 7);
    /// ```
    #[inline(always)]
    pub fn in_attempt_blocking<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let (attempt, span) = self.start();
        attempt::in_context(attempt, span, f)
    }

    /// The attempt starting now (the call's last one once it is over), and a retry's span (made
    /// now; a first attempt has none and looks for none).
    #[inline(always)]
    fn start(&mut self) -> (Mark, Option<&tracing::Span>) {
        let Some(reason) = self.retried_for else {
            // Without feature `attempt-context`, the mark needs no attempt: none is computed.
            return (attempt::mark(self.attempt_now()), None);
        };
        let attempt = self.attempt_now();
        self.start_span(attempt, reason);
        (attempt::mark(attempt), self.span())
    }

    /// The attempt in flight or about to be sent (0 once the call is over).
    #[inline(always)]
    fn attempt_now(&self) -> Attempt {
        let number = self.call.token.as_ref().map_or(0, RetryToken::attempt);
        Attempt::new(number, self.call.strategy.max_attempts())
    }

    /// Makes the span of a retry starting now, out of line (a first attempt gets none); kept in
    /// the retry path's state when a subscriber records it (nothing is boxed for a disabled one).
    #[cold]
    #[inline(never)]
    fn start_span(&mut self, attempt: Attempt, reason: ErrorKind) {
        let delay = self
            .call
            .token
            .as_ref()
            .map_or(Duration::ZERO, RetryToken::delay);
        let scope = self.call.strategy.scope_name();
        let span = observe::attempt_span(attempt, reason, delay, scope);
        if span.is_disabled() && self.retry_path.is_none() {
            return;
        }
        *self.retry_path().project().span = (!span.is_disabled()).then_some(span);
    }

    /// The span of the retry in progress, if one is recorded.
    #[inline(always)]
    fn span(&self) -> Option<&tracing::Span> {
        self.retry_path.as_ref()?.span.as_ref()
    }

    /// The retry path's state, boxed on first use.
    #[cold]
    #[inline(never)]
    fn retry_path(&mut self) -> Pin<&mut RetryPath> {
        self.retry_path
            .get_or_insert_with(|| {
                Box::pin(RetryPath {
                    sleep: None,
                    waited: Duration::ZERO,
                    span: None,
                })
            })
            .as_mut()
    }

    /// The time the call has waited so far, as scheduled: its backoffs, its waits for send
    /// permits, and, once `finish` ended it, a long-polling call's wait before returning (see
    /// [`linger`](Self::linger)).
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// assert_eq!(retry.waited(), std::time::Duration::ZERO);
    /// ```
    #[inline(always)]
    pub fn waited(&self) -> Duration {
        self.retry_path
            .as_ref()
            .map_or(Duration::ZERO, |path| path.waited)
    }

    /// What the call did, once [`finish`](Self::finish) (or a refusal before its first attempt)
    /// ended it: the attempts it sent and the time it waited, its
    /// [`linger`](Self::linger) included. [`Retry::run_with_stats`](crate::Retry::run_with_stats)
    /// returns it.
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// let refused: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionRefused.into());
    /// assert!(retry.finish(&refused).is_continue());
    /// assert!(retry.finish(&Ok::<(), std::io::Error>(())).is_break());
    /// assert_eq!(retry.stats().attempts(), 2);
    /// // This caller never waited (`ready` / `wait_blocking` sleep the backoffs and count them).
    /// assert_eq!(retry.stats().waited(), std::time::Duration::ZERO);
    /// ```
    pub fn stats(&self) -> CallStats {
        CallStats::new(self.ended_after, self.waited())
    }

    /// The call ended after `attempts` attempts: kept for [`stats`](Self::stats), and reported to
    /// the capture running on this thread, if any (feature `attempt-context`).
    #[inline(always)]
    fn ended(&mut self, attempts: u32) {
        self.ended_after = attempts;
        attempt::record(|| self.stats());
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
        let refusal = self.call.refuse(&ShedLoad)?;
        self.ended(0);
        Some(refusal)
    }

    /// The loop's policy's refusal of the call, if it sheds it now (see
    /// [`try_shed`](Self::try_shed)); never for a loop that does not shed.
    #[inline(always)]
    pub(super) fn refuse(&mut self) -> Option<L::Refusal>
    where
        L: ShedPolicy,
    {
        let refusal = self.call.refuse(&self.shedding)?;
        self.ended(0);
        Some(refusal)
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
    /// let refused: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionRefused.into());
    /// assert!(retry.finish(&refused).is_continue());
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
    /// again, `None`). The wait counts in [`waited`](Self::waited) and [`stats`](Self::stats)
    /// from the moment `finish` ended the call, as the backoffs do: the caller is to sleep it.
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

    /// Counts `wait` in the call's [`waited`](Self::waited) (out of line: the success path
    /// never waits).
    #[cold]
    #[inline(never)]
    pub(super) fn count_wait(&mut self, wait: Duration) {
        let path = self.retry_path().project();
        *path.waited = path.waited.saturating_add(wait);
    }

    /// Counts a wait of `wait` and starts the timer for it (out of line: the success path never
    /// waits).
    #[inline(never)]
    pub(super) fn start_sleep(&mut self, wait: Duration) {
        self.count_wait(wait);
        self.start_timer(wait);
    }

    /// Starts the timer for a wait of `wait` already counted (a long-polling call's).
    #[inline(never)]
    pub(super) fn start_timer(&mut self, wait: Duration) {
        let deadline = Instant::now() + wait;
        let mut path = self.retry_path().project();
        match path.sleep.as_mut().as_pin_mut() {
            Some(sleep) => sleep.reset(deadline),
            None => path.sleep.set(Some(tokio::time::sleep_until(deadline))),
        }
    }

    /// Polls the timer [`start_sleep`](Self::start_sleep) started.
    #[inline(never)]
    pub(super) fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(path) = self.retry_path.as_mut() else {
            return Poll::Ready(());
        };
        match path.as_mut().project().sleep.as_pin_mut() {
            Some(sleep) => sleep.poll(cx),
            None => Poll::Ready(()),
        }
    }

    /// Takes one attempt's outcome: `Break(())` when the call is over (return the outcome as it
    /// is), `Continue(())` when it is retried (await [`ready`](Self::ready), then attempt again).
    /// Every reason to stop (attempts, quota, deadline, `max_wait`) is decided here. The outcome
    /// is classified for the call's [idempotency](Self::idempotent).
    ///
    /// A call whose retry the strategy refuses ends with one WARN event naming its last error
    /// (hence `E: Debug`; see [`attempt`](crate::attempt) for the events).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// retry.ready().await;
    /// let refused: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionRefused.into());
    /// assert!(retry.finish(&refused).is_continue());
    /// # }
    /// ```
    #[inline(always)]
    pub fn finish<T, E: Debug>(&mut self, outcome: &Result<T, E>) -> ControlFlow<()>
    where
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
    {
        // Classify before taking the token: should the classifier panic, the drop settles it.
        let action = self.classifier.classify_for(outcome, self.idempotency);
        // Each path takes the token itself, so that the success path reads it in place.
        if let RetryAction::RetryIndicated(reason) = action {
            return self.retry(reason, outcome);
        }
        let Some(token) = RetryToken::take(&mut self.call.token) else {
            return ControlFlow::Break(());
        };
        let attempts = token.attempt();
        if outcome.is_ok() {
            self.call.strategy.record_success(token);
        } else {
            self.fail(token);
        }
        self.ended(attempts);
        ControlFlow::Break(())
    }

    /// A failure that is not retried, kept out of line (the success path is inlined).
    #[cold]
    #[inline(never)]
    fn fail(&self, token: RetryToken) {
        let attempt = token.attempt();
        self.call.strategy.record_failure(token);
        observe::not_retried(attempt);
    }

    /// The retry path of [`finish`](Self::finish), kept out of line.
    #[inline(never)]
    fn retry<T, E: Debug>(&mut self, reason: RetryReason, outcome: &Result<T, E>) -> ControlFlow<()>
    where
        H: OnRetry<E>,
    {
        let Some(token) = RetryToken::take(&mut self.call.token) else {
            return ControlFlow::Break(());
        };
        let slot = TokenSlot {
            token: &mut self.call.token,
            sent: &mut self.call.sent,
        };
        let error = outcome.as_ref().err();
        match retry_or_give_up(
            self.call.strategy,
            &self.on_retry,
            slot,
            token,
            reason,
            error,
        ) {
            ControlFlow::Continue(kind) => {
                self.retried_for = Some(kind);
                ControlFlow::Continue(())
            }
            ControlFlow::Break(gave_up) => {
                self.linger = gave_up.linger;
                if let Some(wait) = gave_up.linger {
                    // Counted now, with the call's other waits: it is to be slept.
                    self.count_wait(wait);
                }
                self.ended(gave_up.attempts);
                ControlFlow::Break(())
            }
        }
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
            self.strategy.record_shed(token);
        }
        Some(refusal)
    }
}

impl<S: RetryStrategy + ?Sized> Drop for Call<'_, S> {
    /// A call that ended has no token: one test. A cancelled call settles it out of line, so that
    /// the drop of the future holding the call stays small enough to inline.
    #[inline(always)]
    fn drop(&mut self) {
        if self.token.is_some() {
            self.settle_cancelled();
        }
    }
}

impl<S: RetryStrategy + ?Sized> Call<'_, S> {
    /// Settles the token of a call dropped before it ended.
    #[cold]
    #[inline(never)]
    fn settle_cancelled(&mut self) {
        if let Some(token) = RetryToken::take(&mut self.token) {
            settle_dropped(self.strategy, token, self.sent);
        }
    }
}
