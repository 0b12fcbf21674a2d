//! The plain API: [`retry`] and [`Retry`], which runs an async operation under a strategy with
//! options (a classifier, an `on_retry` hook, an attempt timeout, load shedding).

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use super::attempt_timeout::{AttemptLimit, AttemptTimeout, NoAttemptTimeout};
use super::hook::{NoHook, OnRetry};
use super::linger::Settled;
use super::retry_loop::RetryLoop;
use super::shed::{NeverShed, ShedInto, ShedLoad};
use crate::attempt::CallStats;
use crate::classify::{ClassifyRetry, Idempotency, RetryInfoClassifier};
use crate::info::RetryInfo;
use crate::strategy::RetryStrategy;

/// Runs `operation` under `strategy`, classifying errors by their [`RetryInfo`], and returns
/// the first success or the last attempt's own error, unchanged.
///
/// At least one attempt is always made. Before each retry the backoff is slept (on tokio's
/// timer) and, in adaptive mode, a send permit is awaited. Cancellation safe: dropping the
/// future leaves the scope's quota and limiter consistent. A panic in `operation` propagates
/// and poisons nothing. With feature `attempt-context`, `operation` and its future read their
/// attempt with `attempt::current()`. A call that gives up logs one warning with its last error
/// (`E: Debug`).
///
/// ```
/// use retry_core::{RetryConfig, StandardStrategy, retry};
/// use std::{io, time::Duration};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(3).build().unwrap());
/// let mut calls = 0;
/// let result = retry(&strategy, || {
///     calls += 1;
///     let attempt = calls;
///     async move {
///         if attempt < 3 {
///             Err(io::Error::from(io::ErrorKind::ConnectionRefused))
///         } else {
///             Ok("done")
///         }
///     }
/// })
/// .await;
/// assert_eq!(result.unwrap(), "done");
/// assert_eq!(calls, 3);
/// # }
/// ```
// Not an `async fn`: its future would hold `run`'s and move it in on the first poll, a cost of
// every call's success path (10 instructions a call, callgrind).
pub fn retry<S, F, Fut, T, E>(strategy: &S, operation: F) -> impl Future<Output = Result<T, E>>
where
    S: RetryStrategy + ?Sized,
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, E>>,
    E: RetryInfo + Debug,
{
    Retry::new(strategy).run(operation)
}

/// The plain API with options: a classifier, an `on_retry` hook, an attempt timeout, load
/// shedding.
///
/// ```
/// use retry_core::{ErrorKind, Retry, RetryAction, RetryConfig, RetryEvent, StandardStrategy};
/// use retry_core::classify::FnClassifier;
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(5).build().unwrap());
/// // A waiter: retry while the job reports "pending".
/// let until_done = FnClassifier::new("until done", |outcome: &Result<&str, std::io::Error>| match outcome {
///     Ok("pending") => RetryAction::retryable(ErrorKind::Transient),
///     _ => RetryAction::NoActionIndicated,
/// });
/// let mut polls = 0;
/// let state = Retry::new(&strategy)
///     .classifier(until_done)
///     .on_retry(|event: &RetryEvent<'_, std::io::Error>| assert!(event.error().is_none()))
///     .attempt_timeout(Duration::from_secs(1))
///     .run(|| {
///         polls += 1;
///         let state = if polls < 3 { "pending" } else { "done" };
///         async move { Ok(state) }
///     })
///     .await;
/// assert_eq!(state.unwrap(), "done");
/// # }
/// ```
#[derive(Debug)]
#[must_use = "call .run(operation) to run it"]
pub struct Retry<
    's,
    S: ?Sized,
    C = RetryInfoClassifier,
    H = NoHook,
    A = NoAttemptTimeout,
    L = NeverShed,
> {
    pub(super) strategy: &'s S,
    pub(super) classifier: C,
    pub(super) on_retry: H,
    pub(super) attempt_timeout: A,
    pub(super) shedding: L,
    pub(super) idempotency: Idempotency,
}

impl<'s, S: RetryStrategy + ?Sized> Retry<'s, S> {
    /// Retries under `strategy`, classifying errors by [`RetryInfo`].
    pub fn new(strategy: &'s S) -> Self {
        Self {
            strategy,
            classifier: RetryInfoClassifier,
            on_retry: NoHook,
            attempt_timeout: NoAttemptTimeout,
            shedding: NeverShed,
            idempotency: Idempotency::Undeclared,
        }
    }
}

impl<'s, S: RetryStrategy + ?Sized, C, H, A, L> Retry<'s, S, C, H, A, L> {
    /// Classifies outcomes with `classifier` instead of [`RetryInfoClassifier`].
    ///
    /// ```
    /// use retry_core::{Retry, RetryConfig, StandardStrategy};
    /// use retry_core::classify::TransientErrorClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let r = Retry::new(&strategy).classifier(TransientErrorClassifier);
    /// # let _ = r;
    /// ```
    pub fn classifier<C2>(self, classifier: C2) -> Retry<'s, S, C2, H, A, L> {
        Retry {
            strategy: self.strategy,
            classifier,
            on_retry: self.on_retry,
            attempt_timeout: self.attempt_timeout,
            shedding: self.shedding,
            idempotency: self.idempotency,
        }
    }

    /// Tells `hook` about every retry.
    ///
    /// ```
    /// use retry_core::{Retry, RetryConfig, RetryEvent, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let r = Retry::new(&strategy).on_retry(|e: &RetryEvent<'_, std::io::Error>| eprintln!("{e:?}"));
    /// # let _ = r;
    /// ```
    pub fn on_retry<H2>(self, hook: H2) -> Retry<'s, S, C, H2, A, L> {
        Retry {
            strategy: self.strategy,
            classifier: self.classifier,
            on_retry: hook,
            attempt_timeout: self.attempt_timeout,
            shedding: self.shedding,
            idempotency: self.idempotency,
        }
    }

    /// Cuts each attempt after `timeout`; the cut attempt fails with `E::from(Elapsed)`, a
    /// timeout that is retried like any other.
    ///
    /// ```
    /// use retry_core::{Retry, RetryConfig, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let r = Retry::new(&strategy).attempt_timeout(std::time::Duration::from_secs(2));
    /// # let _ = r;
    /// ```
    pub fn attempt_timeout(self, timeout: Duration) -> Retry<'s, S, C, H, AttemptTimeout, L> {
        Retry {
            strategy: self.strategy,
            classifier: self.classifier,
            on_retry: self.on_retry,
            attempt_timeout: AttemptTimeout(timeout),
            shedding: self.shedding,
            idempotency: self.idempotency,
        }
    }

    /// Sheds load rather than queue past the deadline, for an error type that can hold a
    /// [`LoadShed`](crate::LoadShed) (`E: From<LoadShed>`): in adaptive mode, a call whose first
    /// attempt's send permit is expected after its deadline (`timeout`) or later than `max_wait`
    /// fails at once with `E::from(LoadShed)`, and nothing is sent. Without a deadline or
    /// `max_wait`, or in standard mode, nothing is shed. Retries are not shed: their waits are
    /// bounded by the strategy.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_core::{AdaptiveStrategy, LoadShed, Retry, RetryConfig, RetryInfo};
    ///
    /// #[derive(Debug)]
    /// enum Error {
    ///     Shed(LoadShed),
    ///     Elapsed,
    /// }
    /// impl RetryInfo for Error {}
    /// impl From<LoadShed> for Error {
    ///     fn from(shed: LoadShed) -> Self {
    ///         Error::Shed(shed)
    ///     }
    /// }
    /// impl From<tokio::time::error::Elapsed> for Error {
    ///     fn from(_: tokio::time::error::Elapsed) -> Self {
    ///         Error::Elapsed
    ///     }
    /// }
    ///
    /// let config = RetryConfig::builder()
    ///     .mode(retry_core::RetryMode::Adaptive)
    ///     .max_wait(std::time::Duration::from_secs(1))
    ///     .build()
    ///     .unwrap();
    /// let strategy = AdaptiveStrategy::new(config);
    /// let value = Retry::new(&strategy).shed_load().run(|| async { Ok::<_, Error>(1) }).await;
    /// assert_eq!(value.unwrap(), 1); // no throttle yet: nothing to shed
    /// let value = Retry::new(&strategy)
    ///     .attempt_timeout(std::time::Duration::from_secs(1))
    ///     .shed_load()
    ///     .run(|| async { Ok::<_, Error>(2) })
    ///     .await;
    /// assert_eq!(value.unwrap(), 2);
    /// # let _ = Error::Elapsed;
    /// # }
    /// ```
    pub fn shed_load(self) -> Retry<'s, S, C, H, A, ShedLoad> {
        Retry {
            strategy: self.strategy,
            classifier: self.classifier,
            on_retry: self.on_retry,
            attempt_timeout: self.attempt_timeout,
            shedding: ShedLoad,
            idempotency: self.idempotency,
        }
    }

    /// Declares whether the call is idempotent: an error that may have reached the server
    /// ([`RetrySafety::Maybe`](crate::RetrySafety::Maybe), e.g. an attempt timeout after the
    /// request was sent) is then retried (`true`) or never (`false`). Undeclared, it is retried
    /// only when its fault is the server's. See [`Idempotency`].
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_core::{Retry, RetryConfig, RetryInfo, StandardStrategy};
    ///
    /// #[derive(Debug)]
    /// struct ConnectionLost; // may have reached the server: `RetrySafety::Maybe`
    /// impl RetryInfo for ConnectionLost {}
    ///
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut sent = 0;
    /// let charge = Retry::new(&strategy)
    ///     .idempotent(false) // a payment: never sent twice
    ///     .run(|| {
    ///         sent += 1;
    ///         async { Err::<(), _>(ConnectionLost) }
    ///     })
    ///     .await;
    /// assert!(charge.is_err());
    /// assert_eq!(sent, 1);
    /// # }
    /// ```
    pub fn idempotent(self, idempotent: bool) -> Self {
        Retry {
            idempotency: Idempotency::declared(idempotent),
            ..self
        }
    }
}

impl<'s, S: RetryStrategy + ?Sized, C, H, A, L> Retry<'s, S, C, H, A, L> {
    /// Runs `operation` until it succeeds or the strategy stops retrying, each attempt cut
    /// after the [attempt timeout](Self::attempt_timeout) when one is set; returns the last
    /// outcome unchanged (or, with [`shed_load`](Self::shed_load), `E::from(LoadShed)` for a
    /// call shed before its first attempt).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_core::{Retry, RetryConfig, StandardStrategy};
    /// use std::time::Duration;
    /// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(2).build().unwrap());
    /// // Every attempt hangs: each is cut after 1 s, and the last cut is the call's error.
    /// let out: Result<(), std::io::Error> = Retry::new(&strategy)
    ///     .attempt_timeout(Duration::from_secs(1))
    ///     .run(std::future::pending)
    ///     .await;
    /// assert_eq!(out.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
    /// # }
    /// ```
    pub fn run<F, Fut, T, E>(self, operation: F) -> impl Future<Output = Result<T, E>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Debug,
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
        A: AttemptLimit<T, E>,
        L: ShedInto<E>,
    {
        self.drive(operation, |outcome, _| outcome)
    }

    /// The loop of [`run`](Self::run) and [`run_with_stats`](Self::run_with_stats): `output` makes
    /// the call's output of its last outcome (or its refusal) and its loop, once it is over.
    #[inline(always)]
    fn drive<F, Fut, T, E, O>(
        self,
        mut operation: F,
        output: impl FnOnce(Result<T, E>, &RetryLoop<'s, S, C, H, L>) -> O,
    ) -> impl Future<Output = O>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Debug,
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
        A: AttemptLimit<T, E>,
        L: ShedInto<E>,
    {
        Settled::new(async move {
            let limit = self.attempt_timeout;
            let mut attempts = RetryLoop::new(self.strategy, self.classifier, self.on_retry)
                .with_options(self.shedding, self.idempotency);
            loop {
                if let Err(refusal) = attempts.ready().await {
                    return (output(Err(L::into_error(refusal)), &attempts), None);
                }
                // The closure is called in the attempt's context too: it may read its attempt.
                let outcome = attempts.start_attempt(|| limit.limit(operation())).await;
                if attempts.finish(&outcome).is_break() {
                    let linger = attempts.take_linger();
                    return (output(outcome, &attempts), linger);
                }
            }
        })
    }

    /// [`run`](Self::run), returning the call's [`CallStats`] with its outcome: the attempts it
    /// sent and the time it waited (botocore's `RetryAttempts`, on `Ok` and on `Err` alike).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_core::{Retry, RetryConfig, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(2).build().unwrap());
    /// let (outcome, stats) = Retry::new(&strategy)
    ///     .run_with_stats(|| async { Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)) })
    ///     .await;
    /// assert!(outcome.is_err());
    /// assert_eq!(stats.attempts(), 2);
    /// assert!(stats.waited() > std::time::Duration::ZERO); // the backoff before the retry
    /// # }
    /// ```
    pub fn run_with_stats<F, Fut, T, E>(
        self,
        operation: F,
    ) -> impl Future<Output = (Result<T, E>, CallStats)>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Debug,
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
        A: AttemptLimit<T, E>,
        L: ShedInto<E>,
    {
        self.drive(operation, |outcome, attempts| (outcome, attempts.stats()))
    }
}

#[cfg(test)]
mod tests {
    use std::io;
    use std::time::Duration;

    use super::Retry;
    use crate::config::RetryConfig;
    use crate::strategy::StandardStrategy;

    fn assert_send<T: Send>(_: &T) {}

    /// The futures of both `Retry::run`s can be spawned: the attempt limit's future is `Send`
    /// when the attempt's is (checked at compile time).
    #[test]
    fn run_is_send_with_and_without_an_attempt_timeout() {
        let strategy = StandardStrategy::new(RetryConfig::default());
        let plain = Retry::new(&strategy).run(|| async { Ok::<_, io::Error>(1) });
        assert_send(&plain);
        let cut = Retry::new(&strategy)
            .attempt_timeout(Duration::from_secs(1))
            .run(|| async { Ok::<_, io::Error>(1) });
        assert_send(&cut);
    }
}
