//! The `on_retry` hook: told about every retry before its delay is slept.

use std::time::Duration;

use crate::classify::RetryReason;

/// What a hook learns about a retry.
///
/// ```
/// use retry_core::RetryEvent;
/// fn log(event: &RetryEvent<'_, std::io::Error>) {
///     eprintln!("attempt {} failed ({:?}), retrying in {:?}", event.attempt(), event.error(), event.delay());
/// }
/// # let _ = log;
/// ```
#[derive(Debug)]
pub struct RetryEvent<'a, E> {
    pub(crate) attempt: u32,
    pub(crate) error: Option<&'a E>,
    pub(crate) delay: Duration,
    pub(crate) reason: RetryReason,
}

impl<'a, E> RetryEvent<'a, E> {
    /// The attempt that failed (1 for the first).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The attempt's error, or `None` when a classifier retried an `Ok` value (a waiter).
    pub fn error(&self) -> Option<&'a E> {
        self.error
    }

    /// The backoff before the next attempt.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Why the attempt is retried: its [`kind`](RetryReason::kind)'s name is the retry's reason
    /// in spans, events and metrics ([`ErrorKind`](crate::ErrorKind)'s table).
    pub fn reason(&self) -> &RetryReason {
        &self.reason
    }
}

/// Something told about each retry: a closure `Fn(&RetryEvent<'_, E>)`, or [`NoHook`].
///
/// ```
/// use retry_core::driver::OnRetry;
/// use retry_core::RetryEvent;
/// fn count(_: &RetryEvent<'_, std::io::Error>) {}
/// fn takes(_: impl OnRetry<std::io::Error>) {}
/// takes(count);
/// ```
pub trait OnRetry<E>: Send + Sync {
    /// Called once per retry, before the delay.
    fn on_retry(&self, event: &RetryEvent<'_, E>);
}

impl<E, F> OnRetry<E> for F
where
    F: Fn(&RetryEvent<'_, E>) + Send + Sync,
{
    fn on_retry(&self, event: &RetryEvent<'_, E>) {
        self(event)
    }
}

/// No hook.
///
/// ```
/// use retry_core::driver::{NoHook, OnRetry};
/// fn takes(_: impl OnRetry<std::io::Error>) {}
/// takes(NoHook);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHook;

impl<E> OnRetry<E> for NoHook {
    fn on_retry(&self, _: &RetryEvent<'_, E>) {}
}
