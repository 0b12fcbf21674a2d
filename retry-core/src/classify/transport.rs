//! Failures of the connection under a request: the one place that decides whether a request that
//! failed there may have reached the server. `io::Error`'s `RetryInfo` (defined here), the
//! transient and dyn classifiers, `reqwest::Error` and the statuses a tonic client makes of a
//! transport error all ask it.

use std::error::Error;
use std::io;

use crate::info::{Fault, RetryInfo, RetrySafety};

/// Where a request's connection failed, and so whether the request may have reached the server.
///
/// | failure | found as | safety | fault | kind |
/// |---|---|---|---|---|
/// | [`NotSent`](Self::NotSent) | an `io::Error` `ConnectionRefused`, `Interrupted`, `WouldBlock`; hyper-util's connect error; tonic's `ConnectError`; hyper's canceled request | `Yes`: nothing reached the server | unknown | transient (timeout when the connect timed out) |
/// | [`Lost`](Self::Lost) | an `io::Error` `ConnectionReset`, `ConnectionAborted`, `BrokenPipe`, `UnexpectedEof`; hyper's incomplete message | `Maybe`: the request may have been processed | unknown | transient |
/// | [`TimedOut`](Self::TimedOut) | an `io::Error` `TimedOut`; tokio's and tower's `Elapsed`; hyper's timeout | `Maybe` | the server's (it did not answer in time) | timeout |
///
/// A `Maybe` follows the call's [`Idempotency`](super::Idempotency): a lost connection is sent
/// again only for an idempotent call; a timeout for any call not declared otherwise (the AWS SDKs
/// retry timeouts), since its fault is the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TransportFailure {
    /// The connection was never made, or the request never started on it: nothing reached the
    /// server.
    NotSent {
        /// The connect timeout expired.
        timed_out: bool,
    },
    /// The connection broke after the request may have been written.
    Lost,
    /// The attempt timed out after the request may have been written.
    TimedOut,
}

impl TransportFailure {
    /// The failure an I/O error of `kind` is, if it is one.
    pub(crate) fn of_io_kind(kind: io::ErrorKind) -> Option<Self> {
        use io::ErrorKind as K;
        match kind {
            // connect(2) failed, or the call did not happen: retrying it is safe.
            K::ConnectionRefused | K::Interrupted | K::WouldBlock => {
                Some(TransportFailure::NotSent { timed_out: false })
            }
            // The peer reset or closed the connection, or the write found it closed: what was
            // written may have been read.
            K::ConnectionReset | K::ConnectionAborted | K::BrokenPipe | K::UnexpectedEof => {
                Some(TransportFailure::Lost)
            }
            K::TimedOut => Some(TransportFailure::TimedOut),
            _ => None,
        }
    }

    /// The failure `error` itself is (not its causes), if the library knows its type.
    pub(crate) fn of(error: &(dyn Error + 'static)) -> Option<Self> {
        if let Some(io) = error.downcast_ref::<io::Error>() {
            return Self::of_io_kind(io.kind());
        }
        if is_timer_cut(error) {
            return Some(TransportFailure::TimedOut);
        }
        #[cfg(feature = "hyper-util")]
        if let Some(client) = error.downcast_ref::<::hyper_util::client::legacy::Error>() {
            return client.is_connect().then(|| Self::connect_failure(client));
        }
        #[cfg(feature = "hyper")]
        if let Some(hyper) = error.downcast_ref::<::hyper::Error>() {
            return Self::of_hyper(hyper);
        }
        #[cfg(feature = "tonic")]
        if let Some(connect) = error.downcast_ref::<::tonic::ConnectError>() {
            return Some(Self::connect_failure(connect));
        }
        None
    }

    /// The first failure in `error`'s source chain, `error` included.
    pub(crate) fn find(error: &(dyn Error + 'static)) -> Option<Self> {
        let mut cause = Some(error);
        while let Some(error) = cause {
            if let Some(failure) = Self::of(error) {
                return Some(failure);
            }
            cause = error.source();
        }
        None
    }

    /// A connect error: nothing sent, timed out when an `io::Error` `TimedOut` is among its
    /// causes (how hyper-util's `HttpConnector` reports its connect timeout).
    #[cfg(any(feature = "hyper-util", feature = "tonic"))]
    fn connect_failure(error: &(dyn Error + 'static)) -> Self {
        let mut cause = error.source();
        let mut timed_out = false;
        while let Some(error) = cause {
            timed_out |= error
                .downcast_ref::<io::Error>()
                .is_some_and(|io| io.kind() == io::ErrorKind::TimedOut);
            cause = error.source();
        }
        TransportFailure::NotSent { timed_out }
    }

    /// What hyper's own error says: a request canceled before it was written (hyper: "the
    /// message was never even started") was not sent; a connection closed before the response
    /// completed lost it; a timer of hyper's (an HTTP/2 keep-alive ping unanswered) timed it out.
    /// Other hyper errors say nothing here: their causes (an `io::Error`) may.
    #[cfg(feature = "hyper")]
    fn of_hyper(error: &::hyper::Error) -> Option<Self> {
        if error.is_canceled() {
            Some(TransportFailure::NotSent { timed_out: false })
        } else if error.is_incomplete_message() {
            Some(TransportFailure::Lost)
        } else if error.is_timeout() {
            Some(TransportFailure::TimedOut)
        } else {
            None
        }
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

impl RetryInfo for TransportFailure {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            TransportFailure::NotSent { .. } => RetrySafety::Yes,
            TransportFailure::Lost | TransportFailure::TimedOut => RetrySafety::Maybe,
        }
    }

    fn is_timeout(&self) -> bool {
        matches!(
            self,
            TransportFailure::TimedOut | TransportFailure::NotSent { timed_out: true }
        )
    }

    fn fault(&self) -> Fault {
        match self {
            TransportFailure::TimedOut => Fault::Server,
            TransportFailure::NotSent { .. } | TransportFailure::Lost => Fault::Unknown,
        }
    }
}

/// I/O errors, by what their kind says of the request: whether it may have reached the server.
///
/// | kind | safety | fault | why |
/// |---|---|---|---|
/// | `ConnectionRefused`, `Interrupted`, `WouldBlock` | [`Yes`](RetrySafety::Yes) | unknown | nothing was sent: the connection was refused, or the call did not happen |
/// | `ConnectionReset`, `ConnectionAborted`, `BrokenPipe`, `UnexpectedEof` | [`Maybe`](RetrySafety::Maybe) | unknown | the connection broke after the request may have been written: it may have been processed |
/// | `TimedOut` | [`Maybe`](RetrySafety::Maybe), a timeout | the server's | no answer in time, perhaps after the request was processed |
/// | every other kind | [`No`](RetrySafety::No) | client | another attempt meets the same error |
///
/// A `Maybe` follows the call's [`Idempotency`](crate::classify::Idempotency): a reset is sent
/// again only for an idempotent call (`#[retryable(idempotent = true)]`,
/// [`Retry::idempotent`](crate::Retry::idempotent), or under `RetryLayer` a GET, PUT or DELETE),
/// a timeout for any call not declared otherwise (its fault is the server's, and the AWS SDKs
/// retry timeouts).
///
/// ```
/// use retry_core::{Fault, RetryInfo, RetrySafety};
/// use std::io;
/// let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
/// assert_eq!(refused.retry_safety(), RetrySafety::Yes);
/// let reset = io::Error::from(io::ErrorKind::ConnectionReset);
/// assert_eq!((reset.retry_safety(), reset.fault()), (RetrySafety::Maybe, Fault::Unknown));
/// assert!(io::Error::from(io::ErrorKind::TimedOut).is_timeout());
/// assert_eq!(io::Error::from(io::ErrorKind::NotFound).retry_safety(), RetrySafety::No);
/// ```
impl RetryInfo for io::Error {
    fn retry_safety(&self) -> RetrySafety {
        TransportFailure::of_io_kind(self.kind()).map_or(RetrySafety::No, |f| f.retry_safety())
    }

    fn is_timeout(&self) -> bool {
        self.kind() == io::ErrorKind::TimedOut
    }

    fn fault(&self) -> Fault {
        TransportFailure::of_io_kind(self.kind()).map_or(Fault::Client, |f| f.fault())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{ErrorKind, Idempotency, RetryAction, RetryInfoClassifier};

    /// The verdict on `failure` for each idempotency: idempotent, undeclared, not idempotent.
    fn verdicts(failure: TransportFailure) -> [RetryAction; 3] {
        [
            Idempotency::Idempotent,
            Idempotency::Undeclared,
            Idempotency::NotIdempotent,
        ]
        .map(|idempotency| RetryInfoClassifier::classify_error_for(&failure, idempotency))
    }

    #[test]
    fn nothing_sent_is_sent_again_by_every_call() {
        let transient = RetryAction::retryable(ErrorKind::Transient);
        assert_eq!(
            verdicts(TransportFailure::NotSent { timed_out: false }),
            [transient; 3]
        );
        let timeout = RetryAction::retryable(ErrorKind::Timeout);
        assert_eq!(
            verdicts(TransportFailure::NotSent { timed_out: true }),
            [timeout; 3]
        );
    }

    #[test]
    fn a_lost_connection_is_sent_again_only_by_an_idempotent_call() {
        assert_eq!(
            verdicts(TransportFailure::Lost),
            [
                RetryAction::retryable(ErrorKind::Transient),
                RetryAction::NoActionIndicated,
                RetryAction::RetryForbidden
            ]
        );
    }

    #[test]
    fn a_timeout_is_sent_again_unless_the_call_is_not_idempotent() {
        let timeout = RetryAction::retryable(ErrorKind::Timeout);
        assert_eq!(
            verdicts(TransportFailure::TimedOut),
            [timeout, timeout, RetryAction::RetryForbidden]
        );
    }

    #[test]
    fn every_io_kind() {
        use io::ErrorKind as K;
        let not_sent = Some(TransportFailure::NotSent { timed_out: false });
        for kind in [K::ConnectionRefused, K::Interrupted, K::WouldBlock] {
            assert_eq!(TransportFailure::of_io_kind(kind), not_sent, "{kind:?}");
        }
        for kind in [
            K::ConnectionReset,
            K::ConnectionAborted,
            K::BrokenPipe,
            K::UnexpectedEof,
        ] {
            let lost = Some(TransportFailure::Lost);
            assert_eq!(TransportFailure::of_io_kind(kind), lost, "{kind:?}");
        }
        let timed_out = Some(TransportFailure::TimedOut);
        assert_eq!(TransportFailure::of_io_kind(K::TimedOut), timed_out);
        for kind in [K::NotFound, K::PermissionDenied, K::InvalidData, K::Other] {
            assert_eq!(TransportFailure::of_io_kind(kind), None, "{kind:?}");
        }
    }

    #[test]
    fn the_first_failure_in_the_chain_decides() {
        #[derive(Debug)]
        struct Wrapped(io::Error);
        impl std::fmt::Display for Wrapped {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("wrapped")
            }
        }
        impl Error for Wrapped {
            fn source(&self) -> Option<&(dyn Error + 'static)> {
                Some(&self.0)
            }
        }
        let reset = Wrapped(io::ErrorKind::ConnectionReset.into());
        assert_eq!(TransportFailure::find(&reset), Some(TransportFailure::Lost));
        let denied = Wrapped(io::ErrorKind::PermissionDenied.into());
        assert_eq!(TransportFailure::find(&denied), None);
    }
}
