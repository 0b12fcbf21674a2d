//! Turning a response with an error status into an error.

use super::status_error::HttpStatusError;

/// Turns a response whose status is a client or server error (4xx, 5xx) into an
/// [`HttpStatusError`] carrying the status and the server's `Retry-After`; any other response is
/// returned unchanged. Implemented for `http::Response` and, with feature `reqwest`, for
/// `reqwest::Response`: one `?` in an attempt turns an error status into a retryable error.
///
/// ```
/// use retry_core::http::CheckStatus;
/// use retry_core::RetryInfo;
///
/// let ok = http::Response::builder().status(200).body(()).unwrap();
/// assert!(ok.check_status().is_ok());
/// let busy = http::Response::builder().status(503).header("retry-after", "2").body(()).unwrap();
/// let error = busy.check_status().unwrap_err();
/// assert_eq!(error.retry_safety(), retry_core::RetrySafety::Yes); // a server error, retried
/// assert_eq!(error.retry_after(), Some(std::time::Duration::from_secs(2))); // after 2 s
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub trait CheckStatus: Sized {
    /// `Ok(self)`, or the error its status and headers describe.
    fn check_status(self) -> Result<Self, HttpStatusError>;
}

impl<B> CheckStatus for http::Response<B> {
    fn check_status(self) -> Result<Self, HttpStatusError> {
        match HttpStatusError::from_parts(self.status(), self.headers()) {
            Some(error) => Err(error),
            None => Ok(self),
        }
    }
}
