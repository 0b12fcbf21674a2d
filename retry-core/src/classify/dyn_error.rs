//! The classifier of type-erased errors: `anyhow::Error`, `Box<dyn Error + Send + Sync>` and
//! the like, which cannot implement `RetryInfo` themselves.

use std::error::Error;
use std::io;

use super::transport::TransportFailure;
use super::{ClassifierPriority, ClassifyRetry, Idempotency, RetryAction, RetryInfoClassifier};
use crate::config::{ConfigError, DurationParseError, ValueParseError};
use crate::load_shed::LoadShed;

/// Classifies an error that erases its type, by walking its [`source`](Error::source) chain:
/// the first cause the library knows decides.
///
/// | cause | verdict | why |
/// |---|---|---|
/// | [`io::Error`] | as its [`RetryInfo`](crate::RetryInfo) says: refused retried; reset, aborted, broken pipe, unexpected EOF retried only for an idempotent call; timed out as a timeout unless the call is not idempotent; other kinds never | the kind tells whether the request may have reached the server |
/// | tokio's `Elapsed`; tower's `Elapsed` (`TimeoutLayer`, feature `tower`) | retried as a timeout unless the call is declared not idempotent ([`RetrySafety::Maybe`](crate::RetrySafety::Maybe), the server's fault) | the attempt was cut, perhaps after the request reached the server; the AWS SDKs retry timeouts |
/// | hyper-util's client error with `is_connect()` (feature `hyper-util`); tonic's `ConnectError` (feature `tonic`); hyper's canceled request (feature `hyper`) | retried ([`RetrySafety::Yes`](crate::RetrySafety::Yes)); as a timeout when the connect timeout expired | the request never reached the server, whatever the cause (a failed name lookup too) |
/// | hyper's incomplete message (feature `hyper`: the connection closed before the response) | retried only for an idempotent call | the request may have been processed |
/// | other hyper-util and hyper errors | not a verdict: the walk goes on to their causes (an `io::Error` decides) | |
/// | tower's `Overloaded` (`LoadShedLayer`, feature `tower`), this library's [`LoadShed`] | never | refused locally to fail fast: a retry would queue again |
/// | tonic's `TimeoutExpired` (feature `tonic`) | never | the call's deadline passed; gRFC A6: it bounds all attempts |
/// | `HttpStatusError`, `reqwest::Error`, `tonic::Status` (features `http`, `reqwest`, `tonic`) | as their [`RetryInfo`](crate::RetryInfo) says | |
/// | this library's [`ConfigError`] and parse errors | never | a retry cannot fix a configuration |
/// | nothing known in the chain | no action (not retried unless another classifier says so) | |
///
/// The connection failures are judged by the one table [`TransientErrorClassifier`](crate::classify::TransientErrorClassifier)
/// documents.
///
/// This is the classifier for services whose error is a `BoxError`, such as any service under
/// tower's `TimeoutLayer` (see [`RetryLayer`](crate::tower::RetryLayer)'s per-attempt timeout).
///
/// It works for any `E: AsRef<dyn Error + Send + Sync>`: `anyhow::Error`, `eyre::Report`,
/// `Box<dyn Error + Send + Sync>` and `Arc<dyn Error + Send + Sync>`, none of which can
/// implement [`RetryInfo`](crate::RetryInfo) (a foreign trait on a foreign type), so no
/// dependency on any of them is needed. Write `#[retryable(classifier = DynErrorClassifier)]`,
/// or `Retry::new(&strategy).classifier(DynErrorClassifier)`.
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
/// use retry_core::classify::DynErrorClassifier;
/// use std::{error::Error, io};
///
/// type BoxError = Box<dyn Error + Send + Sync>;
///
/// #[derive(Debug, thiserror::Error)]
/// #[error("request failed")]
/// struct RequestFailed(#[source] io::Error);
///
/// let refused: Result<(), BoxError> =
///     Err(Box::new(RequestFailed(io::ErrorKind::ConnectionRefused.into())));
/// // As `io::Error`'s `RetryInfo` says: nothing was sent, a transient failure.
/// assert_eq!(DynErrorClassifier.classify(&refused), RetryAction::retryable(ErrorKind::Transient));
/// let denied: Result<(), BoxError> = Err(Box::new(io::Error::from(io::ErrorKind::PermissionDenied)));
/// assert_eq!(DynErrorClassifier.classify(&denied), RetryAction::RetryForbidden);
/// let unknown: Result<(), BoxError> = Err("no idea".into());
/// assert_eq!(DynErrorClassifier.classify(&unknown), RetryAction::NoActionIndicated);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DynErrorClassifier;

impl DynErrorClassifier {
    /// The verdict on one error: the first cause in its chain that the library knows.
    ///
    /// ```
    /// use retry_core::classify::DynErrorClassifier;
    /// let timeout = std::io::Error::from(std::io::ErrorKind::TimedOut);
    /// assert!(DynErrorClassifier::classify_error(&timeout).should_retry());
    /// ```
    pub fn classify_error(error: &(dyn Error + 'static)) -> RetryAction {
        Self::classify_error_for(error, Idempotency::Undeclared)
    }

    /// [`classify_error`](Self::classify_error) for a call whose idempotency is `idempotency`: a
    /// known cause that may have reached the server (a timer's cut) is retried, forbidden or left
    /// to its fault as [`Idempotency`] says.
    ///
    /// ```
    /// # #[cfg(feature = "tower")] { // tower's timeout error
    /// use retry_core::classify::{DynErrorClassifier, Idempotency};
    /// use retry_core::RetryAction;
    /// let cut = tower::timeout::error::Elapsed::new();
    /// assert_eq!(DynErrorClassifier::classify_error_for(&cut, Idempotency::NotIdempotent), RetryAction::RetryForbidden);
    /// # }
    /// ```
    pub fn classify_error_for(
        error: &(dyn Error + 'static),
        idempotency: Idempotency,
    ) -> RetryAction {
        let mut cause = Some(error);
        while let Some(error) = cause {
            if let Some(action) = known(error, idempotency) {
                return action;
            }
            cause = error.source();
        }
        RetryAction::NoActionIndicated
    }
}

/// The verdict on `error` when its type is one the library knows.
fn known(error: &(dyn Error + 'static), idempotency: Idempotency) -> Option<RetryAction> {
    described(error, idempotency)
        .or_else(|| refused_locally(error).then_some(RetryAction::RetryForbidden))
}

/// As its [`RetryInfo`](crate::RetryInfo) says, when `error` is a type the library describes:
/// I/O errors (every kind), the integrations' errors whose features are on, and the connection
/// failures of [`TransportFailure`] (timers' cuts, connect errors, hyper's errors).
fn described(error: &(dyn Error + 'static), idempotency: Idempotency) -> Option<RetryAction> {
    let verdict = |described: &dyn crate::info::RetryInfo| {
        RetryInfoClassifier::classify_error_for(described, idempotency)
    };
    if let Some(io) = error.downcast_ref::<io::Error>() {
        return Some(verdict(io));
    }
    #[cfg(feature = "http")]
    if let Some(status) = error.downcast_ref::<crate::http::HttpStatusError>() {
        return Some(verdict(status));
    }
    #[cfg(feature = "reqwest")]
    if let Some(request) = error.downcast_ref::<reqwest::Error>() {
        return Some(verdict(request));
    }
    #[cfg(feature = "tonic")]
    if let Some(status) = error.downcast_ref::<tonic::Status>() {
        return Some(verdict(status));
    }
    #[cfg(feature = "tonic")]
    if let Some(expired) = error.downcast_ref::<tonic::TimeoutExpired>() {
        return Some(verdict(expired));
    }
    #[cfg(feature = "tower")]
    if let Some(overloaded) = error.downcast_ref::<::tower::load_shed::error::Overloaded>() {
        return Some(verdict(overloaded));
    }
    TransportFailure::of(error).map(|failure| verdict(&failure))
}

/// Whether `error` is one of this library's own refusals, which a retry cannot fix: a
/// configuration error, or a call shed by the adaptive rate limiter (retrying it at once would
/// only queue again).
fn refused_locally(error: &(dyn Error + 'static)) -> bool {
    error.is::<ConfigError>()
        || error.is::<DurationParseError>()
        || error.is::<ValueParseError>()
        || error.is::<LoadShed>()
}

impl<T, E> ClassifyRetry<T, E> for DynErrorClassifier
where
    E: AsRef<dyn Error + Send + Sync + 'static>,
{
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        self.classify_for(outcome, Idempotency::Undeclared)
    }

    fn classify_for(&self, outcome: &Result<T, E>, idempotency: Idempotency) -> RetryAction {
        match outcome {
            Ok(_) => RetryAction::NoActionIndicated,
            Err(error) => Self::classify_error_for(error.as_ref(), idempotency),
        }
    }

    fn name(&self) -> &'static str {
        "dyn error"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::transient_error()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An error of the caller's that wraps another as its source.
    #[derive(Debug)]
    struct CallFailed(Box<dyn Error + Send + Sync>);

    impl std::fmt::Display for CallFailed {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("the call failed")
        }
    }

    impl Error for CallFailed {
        fn source(&self) -> Option<&(dyn Error + 'static)> {
            Some(self.0.as_ref())
        }
    }

    fn verdict_on_wrapped(error: impl Error + Send + Sync + 'static) -> RetryAction {
        let outcome: Result<(), Box<dyn Error + Send + Sync>> =
            Err(Box::new(CallFailed(Box::new(error))));
        DynErrorClassifier.classify(&outcome)
    }

    /// Every parse error of a setting written as text is this library's own refusal: a retry
    /// cannot fix a configuration.
    #[test]
    fn every_settings_parse_error_is_refused_in_a_source_chain() {
        let refused = [
            verdict_on_wrapped("legacy".parse::<crate::config::RetryMode>().unwrap_err()),
            verdict_on_wrapped(
                "aws"
                    .parse::<crate::config::preset::RetryPreset>()
                    .unwrap_err(),
            ),
            verdict_on_wrapped("random".parse::<crate::backoff::Jitter>().unwrap_err()),
            verdict_on_wrapped("0".parse::<crate::config::Quota>().unwrap_err()),
            verdict_on_wrapped(crate::config::parse_duration("soon").unwrap_err()),
        ];
        assert_eq!(refused, [RetryAction::RetryForbidden; 5]);
    }
}
