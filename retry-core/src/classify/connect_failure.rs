//! hyper-util's legacy client: its connect errors, found in an error's source chain.

use std::error::Error;
use std::io;

use crate::info::{Fault, RetryInfo, RetrySafety};

/// The client could not open a connection (`hyper_util::client::legacy::Error::is_connect`): the
/// name did not resolve, the connection was refused or unreachable, or the connect timeout
/// expired. The request never reached the server, so it is always safe to send again, whatever
/// the cause (gRFC A6 retries such failures transparently; the AWS SDKs retry connect errors as
/// transient).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ConnectFailure {
    /// The connect timeout expired (an `io::Error` of kind `TimedOut` among the causes).
    timed_out: bool,
}

impl ConnectFailure {
    /// The connect failure `error` is, if it is hyper-util's client error of kind connect.
    pub(crate) fn of(error: &(dyn Error + 'static)) -> Option<Self> {
        let client_error = error.downcast_ref::<::hyper_util::client::legacy::Error>()?;
        client_error.is_connect().then(|| Self {
            timed_out: has_timed_out_cause(client_error),
        })
    }

    /// Whether the connect timeout expired.
    pub(crate) fn timed_out(self) -> bool {
        self.timed_out
    }
}

/// Whether an `io::Error` of kind `TimedOut` is among `error`'s causes: how hyper-util's
/// `HttpConnector` reports its connect timeout.
fn has_timed_out_cause(error: &(dyn Error + 'static)) -> bool {
    let mut cause = error.source();
    while let Some(error) = cause {
        if error
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::TimedOut)
        {
            return true;
        }
        cause = error.source();
    }
    false
}

impl RetryInfo for ConnectFailure {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }

    fn is_timeout(&self) -> bool {
        self.timed_out
    }

    fn fault(&self) -> Fault {
        Fault::Server
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{ErrorKind, RetryAction, RetryInfoClassifier};

    #[test]
    fn other_errors_are_not_connect_failures() {
        let io = io::Error::from(io::ErrorKind::ConnectionRefused);
        assert_eq!(ConnectFailure::of(&io), None);
    }

    #[test]
    fn a_connect_failure_is_retried_and_a_timed_out_one_as_a_timeout() {
        let refused = ConnectFailure { timed_out: false };
        assert_eq!(
            RetryInfoClassifier::classify_error(&refused),
            RetryAction::retryable(ErrorKind::Server)
        );
        let timed_out = ConnectFailure { timed_out: true };
        assert_eq!(
            RetryInfoClassifier::classify_error(&timed_out),
            RetryAction::retryable(ErrorKind::Timeout)
        );
    }
}
