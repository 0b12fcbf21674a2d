//! What a classifier says about one attempt's outcome.

use std::time::Duration;

/// What kind of failure made an attempt retryable. It decides the quota cost and whether the
/// adaptive rate limiter slows down (only [`Throttling`](ErrorKind::Throttling) does).
///
/// ```
/// use retry_core::ErrorKind;
/// assert!(ErrorKind::Throttling.is_throttling());
/// assert!(!ErrorKind::Server.is_throttling());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A transient failure: a dropped connection, an I/O error, a flaky dependency.
    Transient,
    /// The attempt timed out. Retrying after a timeout costs more quota.
    Timeout,
    /// The service asked the client to slow down.
    Throttling,
    /// The service failed (HTTP 5xx).
    Server,
    /// The request was faulty but a user classifier chose to retry it anyway.
    Client,
}

impl ErrorKind {
    /// Whether this kind is a throttling error.
    pub fn is_throttling(self) -> bool {
        self == ErrorKind::Throttling
    }

    /// A short lowercase name for logs and metrics.
    ///
    /// ```
    /// assert_eq!(retry_core::ErrorKind::Timeout.as_str(), "timeout");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Transient => "transient",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Throttling => "throttling",
            ErrorKind::Server => "server",
            ErrorKind::Client => "client",
        }
    }
}

/// Why an attempt should be retried.
///
/// ```
/// use retry_core::{ErrorKind, RetryReason};
/// let reason = RetryReason::error(ErrorKind::Throttling);
/// assert_eq!(reason.kind(), ErrorKind::Throttling);
/// assert_eq!(reason.retry_after(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryReason {
    /// The attempt failed with a retryable error.
    RetryableError {
        /// The kind of failure.
        kind: ErrorKind,
        /// How long the server asked the client to wait, if it did.
        retry_after: Option<Duration>,
    },
}

impl RetryReason {
    /// A retryable error of `kind` without a server-given delay.
    ///
    /// ```
    /// let reason = retry_core::RetryReason::error(retry_core::ErrorKind::Server);
    /// # let _ = reason;
    /// ```
    pub fn error(kind: ErrorKind) -> Self {
        RetryReason::RetryableError {
            kind,
            retry_after: None,
        }
    }

    /// A retryable error of `kind` that the server asked to retry after `retry_after`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_core::{ErrorKind, RetryReason};
    /// let reason = RetryReason::error_after(ErrorKind::Throttling, Duration::from_secs(1));
    /// assert_eq!(reason.retry_after(), Some(Duration::from_secs(1)));
    /// ```
    pub fn error_after(kind: ErrorKind, retry_after: Duration) -> Self {
        RetryReason::RetryableError {
            kind,
            retry_after: Some(retry_after),
        }
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            RetryReason::RetryableError { kind, .. } => *kind,
        }
    }

    /// The server's requested delay, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            RetryReason::RetryableError { retry_after, .. } => *retry_after,
        }
    }
}

/// A classifier's verdict on one attempt's outcome (the smithy-rs RFC "User-configurable retry
/// classification").
///
/// In a chain, a later verdict other than [`NoActionIndicated`](RetryAction::NoActionIndicated)
/// overrides an earlier one, and [`RetryForbidden`](RetryAction::RetryForbidden) stops the chain.
///
/// ```
/// use retry_core::{ErrorKind, RetryAction};
/// assert_eq!(RetryAction::default(), RetryAction::NoActionIndicated);
/// assert!(RetryAction::retryable(ErrorKind::Transient).should_retry());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum RetryAction {
    /// This classifier has nothing to say; the outcome stands unless another classifier speaks.
    #[default]
    NoActionIndicated,
    /// The attempt should be retried, for this reason.
    RetryIndicated(RetryReason),
    /// The attempt must not be retried, whatever later classifiers would say.
    RetryForbidden,
}

impl RetryAction {
    /// A retry for an error of `kind`.
    ///
    /// ```
    /// let action = retry_core::RetryAction::retryable(retry_core::ErrorKind::Server);
    /// assert!(action.should_retry());
    /// ```
    pub fn retryable(kind: ErrorKind) -> Self {
        RetryAction::RetryIndicated(RetryReason::error(kind))
    }

    /// A retry for an error of `kind` that the server asked to delay by `retry_after`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let action = retry_core::RetryAction::retryable_after(
    ///     retry_core::ErrorKind::Throttling,
    ///     Duration::from_millis(500),
    /// );
    /// assert!(action.should_retry());
    /// ```
    pub fn retryable_after(kind: ErrorKind, retry_after: Duration) -> Self {
        RetryAction::RetryIndicated(RetryReason::error_after(kind, retry_after))
    }

    /// Whether this verdict asks for a retry.
    pub fn should_retry(&self) -> bool {
        matches!(self, RetryAction::RetryIndicated(_))
    }

    /// The retry reason, if this verdict asks for a retry.
    pub fn reason(&self) -> Option<&RetryReason> {
        match self {
            RetryAction::RetryIndicated(reason) => Some(reason),
            _ => None,
        }
    }
}
