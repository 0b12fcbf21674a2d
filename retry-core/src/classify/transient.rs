//! The classifier of transient failures found anywhere in an error's source chain.

use std::error::Error;
use std::io;

use super::{ClassifierPriority, ClassifyRetry, ErrorKind, Idempotency, RetryAction};
use crate::info::is_transient_io_kind;

/// Retries errors caused by a transient I/O failure or a timeout, wherever it sits in the
/// error's [`source`](Error::source) chain (Smithy's `TransientErrorClassifier`). Useful for
/// error types that wrap `io::Error` without describing themselves, such as HTTP client errors.
///
/// * an [`io::Error`] of a transient kind (reset, refused, aborted, broken pipe, ...): transient;
///   of kind `TimedOut`: a timeout;
/// * tokio's `Elapsed`, and tower's `Elapsed` (its `TimeoutLayer`, feature `tower`): a timeout,
///   but forbidden for a call declared not idempotent ([`Idempotency`]): the timer may have cut
///   the attempt after the request reached the server;
/// * hyper-util's client error with `is_connect()` (feature `hyper-util`): transient, whatever
///   its cause (the request never reached the server), or a timeout when the connect timeout
///   expired;
/// * nothing else is retried, and nothing is forbidden: no action.
///
/// It takes errors that implement [`Error`]; a `BoxError` (as tower's `TimeoutLayer` returns)
/// does not: classify it with [`DynErrorClassifier`](crate::classify::DynErrorClassifier).
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
/// use retry_core::classify::TransientErrorClassifier;
/// use std::io;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("request failed")]
/// struct ClientError(#[source] io::Error);
///
/// let outcome: Result<(), ClientError> = Err(ClientError(io::ErrorKind::ConnectionReset.into()));
/// assert_eq!(
///     TransientErrorClassifier.classify(&outcome),
///     RetryAction::retryable(ErrorKind::Transient)
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransientErrorClassifier;

impl TransientErrorClassifier {
    /// The verdict on one error: the first transient cause in the chain decides.
    ///
    /// ```
    /// use retry_core::classify::TransientErrorClassifier;
    /// let timeout = std::io::Error::from(std::io::ErrorKind::TimedOut);
    /// assert!(TransientErrorClassifier::classify_error(&timeout).should_retry());
    /// ```
    pub fn classify_error(error: &(dyn Error + 'static)) -> RetryAction {
        Self::classify_error_for(error, Idempotency::Undeclared)
    }

    /// [`classify_error`](Self::classify_error) for a call whose idempotency is `idempotency`: a
    /// timer's cut of a call that is not idempotent is forbidden.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] { // tower's timeout error
    /// use retry_core::classify::{Idempotency, TransientErrorClassifier};
    /// use retry_core::RetryAction;
    /// let cut = tower::timeout::error::Elapsed::new();
    /// assert!(TransientErrorClassifier::classify_error_for(&cut, Idempotency::Idempotent).should_retry());
    /// assert_eq!(
    ///     TransientErrorClassifier::classify_error_for(&cut, Idempotency::NotIdempotent),
    ///     RetryAction::RetryForbidden
    /// );
    /// # }
    /// ```
    pub fn classify_error_for(
        error: &(dyn Error + 'static),
        idempotency: Idempotency,
    ) -> RetryAction {
        let mut cause = Some(error);
        while let Some(error) = cause {
            if let Some(io) = error.downcast_ref::<io::Error>() {
                if io.kind() == io::ErrorKind::TimedOut {
                    return RetryAction::retryable(ErrorKind::Timeout);
                }
                if is_transient_io_kind(io.kind()) {
                    return RetryAction::retryable(ErrorKind::Transient);
                }
            }
            if is_timer_cut(error) {
                return match idempotency {
                    Idempotency::NotIdempotent => RetryAction::RetryForbidden,
                    _ => RetryAction::retryable(ErrorKind::Timeout),
                };
            }
            #[cfg(feature = "hyper-util")]
            if let Some(connect) = super::connect_failure::ConnectFailure::of(error) {
                let kind = if connect.timed_out() {
                    ErrorKind::Timeout
                } else {
                    ErrorKind::Transient
                };
                return RetryAction::retryable(kind);
            }
            cause = error.source();
        }
        RetryAction::NoActionIndicated
    }
}

/// Whether `error` is a timer's cut of an attempt: tokio's `Elapsed`, or (feature `tower`) the
/// `Elapsed` of tower's `TimeoutLayer`.
fn is_timer_cut(error: &(dyn Error + 'static)) -> bool {
    #[cfg(feature = "tower")]
    if error.is::<::tower::timeout::error::Elapsed>() {
        return true;
    }
    error.is::<tokio::time::error::Elapsed>()
}

impl<T, E: Error + 'static> ClassifyRetry<T, E> for TransientErrorClassifier {
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        self.classify_for(outcome, Idempotency::Undeclared)
    }

    fn classify_for(&self, outcome: &Result<T, E>, idempotency: Idempotency) -> RetryAction {
        match outcome {
            Ok(_) => RetryAction::NoActionIndicated,
            Err(error) => Self::classify_error_for(error, idempotency),
        }
    }

    fn name(&self) -> &'static str {
        "transient error"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::transient_error()
    }
}
