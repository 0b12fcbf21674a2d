//! The classifier of transient failures found anywhere in an error's source chain.

use std::error::Error;
use std::io;

use super::{ClassifierPriority, ClassifyRetry, ErrorKind, RetryAction};
use crate::info::is_transient_io_kind;

/// Retries errors caused by a transient I/O failure or a tokio timeout, wherever it sits in the
/// error's [`source`](Error::source) chain (Smithy's `TransientErrorClassifier`). Useful for
/// error types that wrap `io::Error` without describing themselves, such as HTTP client errors.
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction, TransientErrorClassifier};
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
    /// use retry_core::TransientErrorClassifier;
    /// let timeout = std::io::Error::from(std::io::ErrorKind::TimedOut);
    /// assert!(TransientErrorClassifier::classify_error(&timeout).should_retry());
    /// ```
    pub fn classify_error(error: &(dyn Error + 'static)) -> RetryAction {
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
            if error.is::<tokio::time::error::Elapsed>() {
                return RetryAction::retryable(ErrorKind::Timeout);
            }
            cause = error.source();
        }
        RetryAction::NoActionIndicated
    }
}

impl<T, E: Error + 'static> ClassifyRetry<T, E> for TransientErrorClassifier {
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        match outcome {
            Ok(_) => RetryAction::NoActionIndicated,
            Err(error) => Self::classify_error(error),
        }
    }

    fn name(&self) -> &'static str {
        "transient error"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::transient_error()
    }
}
