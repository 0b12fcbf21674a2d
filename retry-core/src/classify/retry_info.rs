//! The classifier of modeled errors: errors that implement [`RetryInfo`].

use super::{ClassifierPriority, ClassifyRetry, ErrorKind, Idempotency, RetryAction};
use crate::info::{Fault, RetryInfo, RetrySafety};

/// Classifies errors by what they say of themselves through [`RetryInfo`] (Smithy's
/// `ModeledAsRetryableClassifier`). This is the default classifier of `#[retryable]` and
/// [`retry`](crate::retry).
///
/// * [`RetrySafety::No`] forbids the retry: no later classifier can turn it back on.
/// * [`RetrySafety::Yes`] retries.
/// * [`RetrySafety::Maybe`] (the request may have reached the server) follows the call's
///   [`Idempotency`]: retried for an idempotent call, forbidden for one that is not, and for an
///   undeclared one retried when the fault is the server's or the error is throttling (otherwise
///   the classifier indicates no action). A `Maybe` whose fault is the client's is an answer,
///   not a request lost on the way: never retried (no action), whatever the idempotency.
/// * The kind ([`ErrorKind`]'s table of reasons) is throttling, then timeout, then the fault's:
///   `server` for the server's, `client` for the client's, `transient` when nobody's is known;
///   the error's `retry_after` travels with the verdict.
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
/// use retry_core::classify::RetryInfoClassifier;
/// use std::io;
///
/// let outcome: Result<(), io::Error> = Err(io::ErrorKind::TimedOut.into());
/// assert_eq!(RetryInfoClassifier.classify(&outcome), RetryAction::retryable(ErrorKind::Timeout));
/// let outcome: Result<(), io::Error> = Err(io::ErrorKind::NotFound.into());
/// assert_eq!(RetryInfoClassifier.classify(&outcome), RetryAction::RetryForbidden);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryInfoClassifier;

impl RetryInfoClassifier {
    /// The verdict on one error.
    ///
    /// ```
    /// use retry_core::classify::RetryInfoClassifier;
    /// let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
    /// assert!(RetryInfoClassifier::classify_error(&refused).should_retry());
    /// ```
    pub fn classify_error<E: RetryInfo + ?Sized>(error: &E) -> RetryAction {
        Self::classify_error_for(error, Idempotency::Undeclared)
    }

    /// The verdict on one error of a call whose idempotency is `idempotency` (it decides
    /// [`RetrySafety::Maybe`]).
    ///
    /// ```
    /// # #[cfg(feature = "tower")] { // tower's timeout error
    /// use retry_core::classify::{Idempotency, RetryInfoClassifier};
    /// use retry_core::RetryAction;
    /// let cut = tower::timeout::error::Elapsed::new(); // may have reached the server
    /// assert!(RetryInfoClassifier::classify_error_for(&cut, Idempotency::Idempotent).should_retry());
    /// assert_eq!(
    ///     RetryInfoClassifier::classify_error_for(&cut, Idempotency::NotIdempotent),
    ///     RetryAction::RetryForbidden
    /// );
    /// # }
    /// ```
    pub fn classify_error_for<E: RetryInfo + ?Sized>(
        error: &E,
        idempotency: Idempotency,
    ) -> RetryAction {
        let retryable = match error.retry_safety() {
            RetrySafety::No => return RetryAction::RetryForbidden,
            RetrySafety::Yes => true,
            RetrySafety::Maybe if idempotency == Idempotency::NotIdempotent => {
                return RetryAction::RetryForbidden;
            }
            // A client fault is the server's answer that the request is wrong, not a request that
            // may have been lost on the way: no idempotency makes it worth sending again.
            RetrySafety::Maybe if error.fault() == Fault::Client => false,
            RetrySafety::Maybe => {
                idempotency.retries_maybe(error.fault() == Fault::Server || error.is_throttling())
            }
        };
        if !retryable {
            return RetryAction::NoActionIndicated;
        }
        let kind = kind_of(error);
        match error.retry_after() {
            Some(after) => RetryAction::retryable_after(kind, after),
            None => RetryAction::retryable(kind),
        }
    }
}

/// The kind a retry of `error` is counted and labelled as ([`ErrorKind`]'s table): throttling,
/// then timeout, then whose fault it is (the server's, the client's), transient when nobody's is
/// known.
fn kind_of<E: RetryInfo + ?Sized>(error: &E) -> ErrorKind {
    if error.is_throttling() {
        ErrorKind::Throttling
    } else if error.is_timeout() {
        ErrorKind::Timeout
    } else {
        match error.fault() {
            Fault::Server => ErrorKind::Server,
            Fault::Client => ErrorKind::Client,
            Fault::Unknown => ErrorKind::Transient,
        }
    }
}

impl<T, E: RetryInfo> ClassifyRetry<T, E> for RetryInfoClassifier {
    #[inline]
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        self.classify_for(outcome, Idempotency::Undeclared)
    }

    #[inline]
    fn classify_for(&self, outcome: &Result<T, E>, idempotency: Idempotency) -> RetryAction {
        match outcome {
            Ok(_) => RetryAction::NoActionIndicated,
            Err(error) => Self::classify_error_for(error, idempotency),
        }
    }

    fn name(&self) -> &'static str {
        "retry info"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::retry_info()
    }
}
