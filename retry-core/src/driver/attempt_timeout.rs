//! The attempt timeout: each attempt cut after a duration, the cut attempt failing with the
//! operation's own error. One implementation ([`cut_after`]) behind [`Retry::attempt_timeout`],
//! [`with_attempt_timeout`] and `#[retryable(attempt_timeout = "...")]`.
//!
//! [`Retry::attempt_timeout`]: super::Retry::attempt_timeout

use std::future::Future;
use std::time::Duration;

use tokio::time::error::Elapsed;

/// No attempt timeout: the [`Retry`](super::Retry) builder's default.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoAttemptTimeout;

/// An attempt timeout, set by [`Retry::attempt_timeout`](super::Retry::attempt_timeout): the
/// operation's error type must convert from tokio's [`Elapsed`].
#[derive(Debug, Clone, Copy)]
pub struct AttemptTimeout(pub(super) Duration);

/// How [`Retry::run`](super::Retry::run) makes each attempt: as it is ([`NoAttemptTimeout`]),
/// or cut after a timeout ([`AttemptTimeout`]). Implemented by those two only.
pub trait AttemptLimit<T, E>: sealed::Sealed {
    /// The attempt, limited.
    fn limit<Fut>(&self, attempt: Fut) -> impl Future<Output = Result<T, E>>
    where
        Fut: Future<Output = Result<T, E>>;
}

impl<T, E> AttemptLimit<T, E> for NoAttemptTimeout {
    /// The attempt itself: nothing added to it.
    #[inline(always)]
    fn limit<Fut>(&self, attempt: Fut) -> impl Future<Output = Result<T, E>>
    where
        Fut: Future<Output = Result<T, E>>,
    {
        attempt
    }
}

impl<T, E: From<Elapsed>> AttemptLimit<T, E> for AttemptTimeout {
    fn limit<Fut>(&self, attempt: Fut) -> impl Future<Output = Result<T, E>>
    where
        Fut: Future<Output = Result<T, E>>,
    {
        with_attempt_timeout(self.0, attempt)
    }
}

mod sealed {
    /// Keeps [`AttemptLimit`](super::AttemptLimit) to this module's types.
    pub trait Sealed {}
    impl Sealed for super::NoAttemptTimeout {}
    impl Sealed for super::AttemptTimeout {}
}

/// Runs one attempt, cut after `timeout` with `E::from(Elapsed)`.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use std::time::Duration;
/// let outcome: Result<(), std::io::Error> =
///     retry_core::driver::with_attempt_timeout(Duration::from_millis(10), std::future::pending()).await;
/// assert_eq!(outcome.unwrap_err().kind(), std::io::ErrorKind::TimedOut);
/// # }
/// ```
pub fn with_attempt_timeout<T, E, Fut>(
    timeout: Duration,
    attempt: Fut,
) -> impl Future<Output = Result<T, E>>
where
    Fut: Future<Output = Result<T, E>>,
    E: From<Elapsed>,
{
    cut_after(timeout, attempt, E::from)
}

/// Runs one attempt, cut after `timeout`; a cut attempt fails with `on_elapsed(Elapsed)`.
///
/// Not public API: `#[retryable]` calls it (through `__private`) with a conversion spanned at
/// the user's `attempt_timeout`, so that a missing `From<Elapsed>` is reported there.
pub async fn cut_after<T, E, Fut>(
    timeout: Duration,
    attempt: Fut,
    on_elapsed: fn(Elapsed) -> E,
) -> Result<T, E>
where
    Fut: Future<Output = Result<T, E>>,
{
    match tokio::time::timeout(timeout, attempt).await {
        Ok(outcome) => outcome,
        Err(elapsed) => Err(on_elapsed(elapsed)),
    }
}
