//! The classifier of connection failures found anywhere in an error's source chain.

use std::error::Error;

use super::transport::TransportFailure;
use super::{ClassifierPriority, ClassifyRetry, Idempotency, RetryAction, RetryInfoClassifier};

/// Classifies errors by the failure of the connection under them, wherever it sits in the
/// error's [`source`](Error::source) chain (Smithy's `TransientErrorClassifier`): whether the
/// request may have reached the server decides. Useful for error types that wrap `io::Error`
/// without describing themselves, such as HTTP client errors. The first cause it knows decides:
///
/// | cause | verdict |
/// |---|---|
/// | nothing was sent: an [`io::Error`](std::io::Error) `ConnectionRefused` (or `Interrupted`, `WouldBlock`); hyper-util's connect error (feature `hyper-util`), whatever its cause; tonic's `ConnectError` (feature `tonic`); hyper's request canceled before it was written (feature `hyper`) | retried for every call, as transient (a timeout when the connect timeout expired) |
/// | the connection broke after the request may have been written: an `io::Error` `ConnectionReset`, `ConnectionAborted`, `BrokenPipe`, `UnexpectedEof`; hyper's connection closed before the response completed (feature `hyper`) | retried, as transient, only for an idempotent call ([`Idempotency`]); forbidden for a call declared not idempotent; no action for an undeclared one |
/// | a timeout: an `io::Error` `TimedOut`, tokio's `Elapsed`, tower's `Elapsed` (`TimeoutLayer`, feature `tower`) | retried as a timeout unless the call is declared not idempotent (forbidden then): the timer may have cut the attempt after the request reached the server |
/// | anything else | no action: nothing is retried, nothing forbidden |
///
/// This is the one table [`io::Error`](std::io::Error)'s [`RetryInfo`](crate::RetryInfo),
/// [`DynErrorClassifier`](crate::classify::DynErrorClassifier) and `reqwest::Error` follow too.
/// Under [`RetryLayer`](crate::tower::RetryLayer) an `http` request's idempotency is its method's
/// (RFC 9110 §9.2.2), so a reset POST is sent once and a reset GET again.
///
/// It takes errors that implement [`Error`]; a `BoxError` (as tower's `TimeoutLayer` returns)
/// does not: classify it with [`DynErrorClassifier`](crate::classify::DynErrorClassifier).
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
/// use retry_core::classify::{Idempotency, TransientErrorClassifier};
/// use std::io;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("request failed")]
/// struct ClientError(#[source] io::Error);
///
/// let refused: Result<(), ClientError> = Err(ClientError(io::ErrorKind::ConnectionRefused.into()));
/// assert_eq!(
///     TransientErrorClassifier.classify(&refused),
///     RetryAction::retryable(ErrorKind::Transient)
/// );
/// let reset: Result<(), ClientError> = Err(ClientError(io::ErrorKind::ConnectionReset.into()));
/// let verdict = |idempotency| TransientErrorClassifier.classify_for(&reset, idempotency);
/// assert_eq!(verdict(Idempotency::Idempotent), RetryAction::retryable(ErrorKind::Transient));
/// assert_eq!(verdict(Idempotency::NotIdempotent), RetryAction::RetryForbidden);
/// assert_eq!(verdict(Idempotency::Undeclared), RetryAction::NoActionIndicated);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransientErrorClassifier;

impl TransientErrorClassifier {
    /// The verdict on one error of an undeclared call: the first failure in the chain decides.
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
    /// failure that may have reached the server follows it.
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
        match TransportFailure::find(error) {
            Some(failure) => RetryInfoClassifier::classify_error_for(&failure, idempotency),
            None => RetryAction::NoActionIndicated,
        }
    }
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
