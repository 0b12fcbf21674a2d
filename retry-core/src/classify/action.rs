//! What a classifier says about one attempt's outcome.

use std::time::Duration;

/// What kind of failure made an attempt retryable: the one vocabulary of retry reasons. It
/// decides the quota cost and whether the adaptive rate limiter slows down (only
/// [`Throttling`](ErrorKind::Throttling) does), and its name, [`as_str`](Self::as_str), is the
/// reason of every retry wherever it is reported:
///
/// * the `retry.reason` field of the `retry.attempt` span (the [`attempt`](crate::attempt)
///   module's table of spans);
/// * the `reason` field of the DEBUG event "retrying" (target `retry_core`);
/// * the `on_retry` hook's [`RetryEvent::reason`](crate::RetryEvent::reason)`().kind()`;
/// * the `reason` label of the `retry.retries` metric (`retry_retries_total` in Prometheus; the
///   [`metrics`](crate::metrics) module's table, feature `metrics`).
///
/// | reason | what failed | the failures that carry it |
/// |---|---|---|
/// | `transient` | a failure expected to pass that no answer of the server explains | a refused connection (nothing was sent: every call); a connection reset or closed under the request (an idempotent call only); an error whose type says so: `#[retry(transient)]`, `#[retry(retryable)]`, [`RetryInfo`](crate::RetryInfo) `Yes` with no fault known; HTTP 408; the error codes' transient list (`RequestTimeout`); a `retry_if` predicate |
/// | `timeout` | the attempt ran out of time | a timer's cut (`attempt_timeout`, tower's `TimeoutLayer`), an `io::Error` `TimedOut`, reqwest's timeout, a connect timeout, gRPC `DEADLINE_EXCEEDED` sent by the server, `#[retry(timeout)]` |
/// | `throttling` | the server asked the client to slow down | HTTP 429, gRPC `RESOURCE_EXHAUSTED`, the error codes' throttling list (`ThrottlingException`, `SlowDown`, ...), `#[retry(throttling)]` |
/// | `server` | the server answered that it failed | HTTP 5xx (500, 502, 503, 504, 507, ...), gRPC `UNAVAILABLE` sent by the server, an error whose fault is the server's (`#[retry(transient, fault = "server")]`) |
/// | `client` | the server answered that the request is wrong, and a classifier of the caller's retries it all the same | a status listed in [`with_retryable_status_codes`](crate::http::HttpStatusClassifier::with_retryable_status_codes) (409, say), `#[retry(retryable, fault = "client")]`; the library's own classifiers never retry one |
///
/// A 4xx other than 408 and 429, and a gRPC code that says the request is wrong
/// (`INVALID_ARGUMENT`, `NOT_FOUND`, ...), are not retried: they carry no reason. An error
/// described by [`RetryInfo`](crate::RetryInfo) gets its reason from
/// [`RetryInfoClassifier`](crate::classify::RetryInfoClassifier): throttling, then timeout, then
/// its fault (`server`, `client`), `transient` when nobody's fault is known.
///
/// ```
/// use retry_core::ErrorKind;
/// assert!(ErrorKind::Throttling.is_throttling());
/// assert!(!ErrorKind::Server.is_throttling());
/// assert_eq!(ErrorKind::Transient.as_str(), "transient");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `transient`: a failure expected to pass that no answer of the server explains (a refused
    /// or broken connection, `#[retry(transient)]`).
    Transient,
    /// `timeout`: the attempt timed out. Retrying after a timeout costs more quota.
    Timeout,
    /// `throttling`: the service asked the client to slow down.
    Throttling,
    /// `server`: the service answered that it failed (HTTP 5xx, gRPC `UNAVAILABLE`).
    Server,
    /// `client`: the service answered that the request was faulty, and a user classifier chose
    /// to retry it anyway.
    Client,
}

impl ErrorKind {
    /// Every kind, in declaration order (the position of a kind is `kind as usize`): the
    /// `retry.retries` metric's handles, one per reason.
    #[cfg(any(feature = "metrics", test))]
    pub(crate) const ALL: [ErrorKind; 5] = [
        ErrorKind::Transient,
        ErrorKind::Timeout,
        ErrorKind::Throttling,
        ErrorKind::Server,
        ErrorKind::Client,
    ];

    /// Whether this kind is a throttling error.
    pub fn is_throttling(self) -> bool {
        self == ErrorKind::Throttling
    }

    /// The reason's name, as spans, events and metrics report it (the table above).
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

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    #[test]
    fn every_kind_is_at_its_position() {
        for (index, kind) in ErrorKind::ALL.into_iter().enumerate() {
            assert_eq!(kind as usize, index, "{kind:?}");
        }
    }
}
