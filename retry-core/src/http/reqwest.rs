//! `reqwest`: its errors describe their retryability, and its responses check their status.

use super::check_status::CheckStatus;
use super::retry_after::RetryAfter;
use super::status_error::HttpStatusError;
use super::status_table::{StatusClass, status_fault};
use crate::info::{Fault, RetryInfo, RetrySafety};

/// A `reqwest` error's retryability, from what reqwest knows of where it failed:
///
/// * a connect error (refused, reset or timed out while connecting: the request never reached
///   the server) is retried ([`RetrySafety::Yes`]), as a server fault, a timeout if it timed
///   out;
/// * any other timeout (`is_timeout`) is retried as a timeout (it costs more quota), as the AWS
///   SDKs retry timeouts; it may have struck after the request reached the server, so its safety
///   is [`RetrySafety::Maybe`] with the server's fault (which retries): for a request that must
///   not run twice, put a classifier first that forbids the retry;
/// * a status error (from `error_for_status`) follows the crate's table of statuses, as
///   [`HttpStatusError`] does (it carries no `Retry-After`: prefer [`CheckStatus`], which keeps
///   it);
/// * a builder or redirect error is never retried: the request itself is wrong;
/// * any other error happened after the request may have reached the server (the connection
///   broke mid-exchange, the body or its decoding failed): not retried blindly
///   ([`RetrySafety::Maybe`] with an unknown fault). For an idempotent request, add a classifier
///   that retries it, e.g. [`TransientErrorClassifier`](crate::classify::TransientErrorClassifier),
///   which finds the broken connection's `io::Error` in the source chain.
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
        if let Some(status) = self.status() {
            StatusClass::of(status).retry_safety(RetryAfter::Absent)
        } else if self.is_connect() {
            RetrySafety::Yes
        } else if reqwest::Error::is_timeout(self) {
            RetrySafety::Maybe
        } else if self.is_builder() || self.is_redirect() {
            RetrySafety::No
        } else {
            RetrySafety::Maybe
        }
    }

    fn is_throttling(&self) -> bool {
        self.status()
            .is_some_and(|status| StatusClass::of(status).is_throttling())
    }

    fn is_timeout(&self) -> bool {
        reqwest::Error::is_timeout(self)
            || self
                .status()
                .is_some_and(|status| StatusClass::of(status).is_timeout())
    }

    fn fault(&self) -> Fault {
        if let Some(status) = self.status() {
            status_fault(status)
        } else if self.is_connect() || reqwest::Error::is_timeout(self) {
            Fault::Server
        } else if self.is_builder() || self.is_redirect() {
            Fault::Client
        } else {
            Fault::Unknown
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
