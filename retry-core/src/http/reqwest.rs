//! `reqwest`: its errors describe their retryability, and its responses check their status.

use super::check_status::CheckStatus;
use super::retry_after::RetryAfter;
use super::status_error::HttpStatusError;
use super::status_table::{StatusClass, status_fault};
use crate::classify::transport::TransportFailure;
use crate::info::{Fault, RetryInfo, RetrySafety};

/// A `reqwest` error's retryability, from what reqwest knows of where it failed:
///
/// * a connect error (refused, reset or timed out while connecting: the request never reached
///   the server) is retried ([`RetrySafety::Yes`]), as transient, or as a timeout if it timed
///   out;
/// * any other timeout (`is_timeout`) is retried as a timeout (it costs more quota), as the AWS
///   SDKs retry timeouts, unless the call is declared not idempotent: it may have struck after
///   the request reached the server ([`RetrySafety::Maybe`], the server's fault);
/// * a status error (from `error_for_status`) follows the crate's table of statuses, as
///   [`HttpStatusError`] does: a status the server answered is definite, `Yes` or `No`, never
///   `Maybe` (it carries no `Retry-After`: prefer [`CheckStatus`], which keeps it);
/// * a builder or redirect error is never retried: the request itself is wrong;
/// * any other error happened after the request may have reached the server: its source chain
///   says how, as [`TransientErrorClassifier`](crate::classify::TransientErrorClassifier)'s table
///   reads it (a reset, a connection closed before the response: [`RetrySafety::Maybe`] with no
///   fault known, retried only for an idempotent call); with nothing known there (the body or
///   its decoding failed) it is a `Maybe` too.
///
/// Declare the call idempotent (`#[retryable(idempotent = true)]`, `Retry::idempotent`; under
/// `RetryLayer` a `reqwest::Request` says its method's) and a reset is sent again.
///
/// ```no_run
/// use retry_core::{RetryInfo, RetrySafety};
/// # async fn demo() {
/// // Nothing listens on port 9 of loopback: the connection is refused.
/// let error = reqwest::get("http://127.0.0.1:9/").await.unwrap_err();
/// assert_eq!(error.retry_safety(), RetrySafety::Yes);
/// # }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
impl RetryInfo for reqwest::Error {
    fn retry_safety(&self) -> RetrySafety {
        match Failure::of(self) {
            Failure::Status(status) => StatusClass::of(status).retry_safety(RetryAfter::Absent),
            Failure::Transport(failure) => failure.retry_safety(),
            Failure::Request => RetrySafety::No,
            Failure::Unknown => RetrySafety::Maybe,
        }
    }

    fn is_throttling(&self) -> bool {
        self.status()
            .is_some_and(|status| StatusClass::of(status).is_throttling())
    }

    fn is_timeout(&self) -> bool {
        match Failure::of(self) {
            Failure::Status(status) => StatusClass::of(status).is_timeout(),
            Failure::Transport(failure) => failure.is_timeout(),
            Failure::Request | Failure::Unknown => false,
        }
    }

    fn fault(&self) -> Fault {
        match Failure::of(self) {
            Failure::Status(status) => status_fault(status),
            Failure::Transport(failure) => failure.fault(),
            Failure::Request => Fault::Client,
            Failure::Unknown => Fault::Unknown,
        }
    }
}

/// Where a `reqwest::Error` failed.
enum Failure {
    /// The server answered this error status (`error_for_status`).
    Status(http::StatusCode),
    /// The connection failed under the request.
    Transport(TransportFailure),
    /// The request could not be built, or its redirects failed.
    Request,
    /// Something else after the request may have reached the server.
    Unknown,
}

impl Failure {
    fn of(error: &reqwest::Error) -> Self {
        if let Some(status) = error.status() {
            Failure::Status(status)
        } else if error.is_connect() {
            let timed_out = reqwest::Error::is_timeout(error);
            Failure::Transport(TransportFailure::NotSent { timed_out })
        } else if reqwest::Error::is_timeout(error) {
            Failure::Transport(TransportFailure::TimedOut)
        } else if error.is_builder() || error.is_redirect() {
            Failure::Request
        } else {
            std::error::Error::source(error)
                .and_then(TransportFailure::find)
                .map_or(Failure::Unknown, Failure::Transport)
        }
    }
}

/// `response.check_status()?`: a 4xx / 5xx response becomes an [`HttpStatusError`] with the
/// status and the server's `Retry-After` (the response, and its body, are dropped).
///
/// ```no_run
/// use retry_core::http::CheckStatus;
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let body = reqwest::get("http://127.0.0.1:8080/item").await?.check_status()?.text().await?;
/// # let _ = body; Ok(()) }
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "reqwest")))]
impl CheckStatus for reqwest::Response {
    fn check_status(self) -> Result<Self, HttpStatusError> {
        match HttpStatusError::from_parts(self.status(), self.headers()) {
            Some(error) => Err(error),
            None => Ok(self),
        }
    }
}
