//! Idempotency: whether sending a call's request twice is as good as sending it once, an input of
//! the classification of errors that may have reached the server.

/// Whether a call is idempotent: sending its request more than once has the effect of sending it
/// once. It decides the errors whose [`RetrySafety`](crate::RetrySafety) is
/// [`Maybe`](crate::RetrySafety::Maybe) ("the request may have reached the server": a connection
/// reset, aborted or closed after the request was written, a broken pipe, a timeout after it was
/// sent), which only the caller can judge:
///
/// | idempotency | a `Maybe` error is |
/// |---|---|
/// | [`Idempotent`](Self::Idempotent) | retried (the gax libraries' `idempotent` flag) |
/// | [`NotIdempotent`](Self::NotIdempotent) | never retried: a second attempt could do the work twice |
/// | [`Undeclared`](Self::Undeclared) (the default) | retried only when its fault is the server's or it is throttling (Smithy's rule): a timeout is, a reset (nobody's fault known) is not |
///
/// Errors that are surely safe ([`RetrySafety::Yes`](crate::RetrySafety::Yes): a refused
/// connection, nothing sent; a 503 per the status table) or never
/// ([`RetrySafety::No`](crate::RetrySafety::No)) are decided as before, whatever the idempotency.
/// A status the server answered is never a `Maybe`: a 4xx other than 408 and 429 (a gRPC code that
/// says the request is wrong) is `No`, so a call declared idempotent does not send a 404 again;
/// and a `Maybe` whose fault is the client's is not retried either. Idempotency promotes only the
/// failures that leave it unknown whether the request arrived.
///
/// | failure | idempotent | undeclared | not idempotent |
/// |---|---|---|---|
/// | refused connection | retried | retried | retried |
/// | reset (before or after the server read the request) | retried | not retried | not retried |
/// | timeout after the write | retried | retried | not retried |
/// | 503, 429, 408 | retried | retried | retried |
/// | 404 and the other 4xx | not retried | not retried | not retried |
///
/// The paths that find these failures, and the one table of connection failures, are
/// [`TransientErrorClassifier`](crate::classify::TransientErrorClassifier)'s.
///
/// Declare it with `#[retryable(idempotent = true)]`, [`Retry::idempotent`](crate::Retry::idempotent),
/// [`RetryLoop::idempotent`](crate::driver::RetryLoop::idempotent) or
/// [`RetryLayer::idempotent`](crate::tower::RetryLayer::idempotent). Over `http` requests,
/// `RetryLayer` infers it from the method ([`Idempotency::of_method`], RFC 9110 §9.2.2) unless told.
/// Classifiers learn it through [`ClassifyRetry::classify_for`](crate::ClassifyRetry::classify_for).
///
/// ```
/// use retry_core::classify::{Idempotency, RetryInfoClassifier};
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction, RetryInfo};
///
/// /// The connection broke after the request was written: it may have been processed.
/// #[derive(Debug)]
/// struct ConnectionLost;
/// impl RetryInfo for ConnectionLost {} // `RetrySafety::Maybe`, fault unknown
///
/// let lost: Result<(), ConnectionLost> = Err(ConnectionLost);
/// let verdict = |idempotency| RetryInfoClassifier.classify_for(&lost, idempotency);
/// assert_eq!(verdict(Idempotency::Idempotent), RetryAction::retryable(ErrorKind::Transient));
/// assert_eq!(verdict(Idempotency::NotIdempotent), RetryAction::RetryForbidden);
/// assert_eq!(verdict(Idempotency::Undeclared), RetryAction::NoActionIndicated); // not the server's fault
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Idempotency {
    /// Sending the request again is safe: retry errors that may have reached the server.
    Idempotent,
    /// Sending the request again may repeat its effect: never retry an error that may have
    /// reached the server.
    NotIdempotent,
    /// Nobody said: an error that may have reached the server is retried only when its fault is
    /// the server's (or it is throttling).
    #[default]
    Undeclared,
}

impl Idempotency {
    /// [`Idempotent`](Self::Idempotent) for `true`, [`NotIdempotent`](Self::NotIdempotent) for
    /// `false`: what `#[retryable(idempotent = ...)]` and the builders' `idempotent(...)` declare.
    ///
    /// ```
    /// use retry_core::classify::Idempotency;
    /// assert_eq!(Idempotency::declared(false), Idempotency::NotIdempotent);
    /// ```
    pub fn declared(idempotent: bool) -> Self {
        if idempotent {
            Idempotency::Idempotent
        } else {
            Idempotency::NotIdempotent
        }
    }

    /// An HTTP method's idempotency, per RFC 9110 §9.2.2: GET, HEAD, OPTIONS, TRACE, PUT and
    /// DELETE are idempotent; every other method (POST, PATCH, CONNECT, extension methods) is not
    /// known to be, and a client "SHOULD NOT automatically retry" it.
    ///
    /// ```
    /// use retry_core::classify::Idempotency;
    /// assert_eq!(Idempotency::of_method(&http::Method::PUT), Idempotency::Idempotent);
    /// assert_eq!(Idempotency::of_method(&http::Method::POST), Idempotency::NotIdempotent);
    /// ```
    #[cfg(any(feature = "http", feature = "tower"))]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "http", feature = "tower"))))]
    pub fn of_method(method: &http::Method) -> Self {
        use http::Method;
        let idempotent = [
            Method::GET,
            Method::HEAD,
            Method::OPTIONS,
            Method::TRACE,
            Method::PUT,
            Method::DELETE,
        ];
        Self::declared(idempotent.contains(method))
    }

    /// Whether an error that may have reached the server (`RetrySafety::Maybe`) is retried: for
    /// an undeclared call, when `server_fault` (its fault is the server's, or it is throttling).
    ///
    /// ```
    /// use retry_core::classify::Idempotency;
    /// assert!(Idempotency::Idempotent.retries_maybe(false));
    /// assert!(!Idempotency::NotIdempotent.retries_maybe(true));
    /// assert!(Idempotency::Undeclared.retries_maybe(true));
    /// ```
    pub fn retries_maybe(self, server_fault: bool) -> bool {
        match self {
            Idempotency::Idempotent => true,
            Idempotency::NotIdempotent => false,
            Idempotency::Undeclared => server_fault,
        }
    }
}

impl From<bool> for Idempotency {
    /// [`Idempotency::declared`].
    fn from(idempotent: bool) -> Self {
        Self::declared(idempotent)
    }
}

#[cfg(all(test, any(feature = "http", feature = "tower")))]
mod tests {
    use super::Idempotency;

    #[test]
    fn rfc_9110_names_the_idempotent_methods() {
        let idempotent = ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"];
        let not = ["POST", "PATCH", "CONNECT", "PURGE"];
        for (methods, expected) in [
            (&idempotent[..], Idempotency::Idempotent),
            (&not[..], Idempotency::NotIdempotent),
        ] {
            for method in methods {
                let method = http::Method::from_bytes(method.as_bytes()).expect("a method");
                assert_eq!(Idempotency::of_method(&method), expected, "{method}");
            }
        }
    }
}
