//! An HTTP error status as an error value that knows its retryability.

use std::fmt;
use std::time::{Duration, SystemTime};

use http::{HeaderMap, StatusCode};

use super::RetryAfter;
use crate::{Fault, RetryInfo, RetrySafety};

/// The 5xx statuses a retry cannot cure: `501 Not Implemented` (RFC 9110 §15.6.2: the server
/// does not support the functionality) and `505 HTTP Version Not Supported` (§15.6.6).
const PERMANENT_SERVER_ERRORS: [StatusCode; 2] = [
    StatusCode::NOT_IMPLEMENTED,
    StatusCode::HTTP_VERSION_NOT_SUPPORTED,
];

/// A response whose status is a client or server error (4xx, 5xx), with the server's requested
/// delay: what [`CheckStatus::check_status`](crate::CheckStatus::check_status) turns such a
/// response into. Its [`RetryInfo`]:
///
/// | status | retried | kind |
/// |---|---|---|
/// | 429 Too Many Requests | yes | throttling |
/// | 503 with a usable `Retry-After` | yes | throttling |
/// | 408 Request Timeout | yes | timeout (RFC 9110 §15.5.9: the client may repeat the request) |
/// | other 5xx but 501, 505 | yes | server fault |
/// | 501, 505 | never | server fault |
/// | other 4xx | no (left to other classifiers) | client fault |
///
/// The delay is [`RetryAfter::from_headers`]'s: a retry waits at least that long. A
/// `Retry-After` more than a day away ([`RetryAfter::TooLong`]) makes the error not retryable;
/// an unreadable one ([`RetryAfter::Invalid`]) is ignored.
///
/// ```
/// use http::StatusCode;
/// use retry_core::{HttpStatusError, RetryAfter, RetryInfo, RetrySafety};
/// use std::time::Duration;
///
/// let throttled = HttpStatusError::new(StatusCode::TOO_MANY_REQUESTS, RetryAfter::After(Duration::from_secs(2)));
/// assert!(throttled.is_throttling());
/// assert_eq!(throttled.retry_after(), Some(Duration::from_secs(2)));
/// assert_eq!(throttled.to_string(), "HTTP 429 Too Many Requests (retry after 2s)");
///
/// let not_found = HttpStatusError::new(StatusCode::NOT_FOUND, RetryAfter::Absent);
/// assert_eq!(not_found.retry_safety(), RetrySafety::Maybe);
/// assert_eq!(not_found.fault(), retry_core::Fault::Client);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub struct HttpStatusError {
    status: StatusCode,
    retry_after: RetryAfter,
}

impl HttpStatusError {
    /// An error for `status` with the server's delay `retry_after`.
    ///
    /// ```
    /// use retry_core::{HttpStatusError, RetryAfter};
    /// let error = HttpStatusError::new(http::StatusCode::BAD_GATEWAY, RetryAfter::Absent);
    /// assert_eq!(error.status(), 502);
    /// ```
    pub fn new(status: StatusCode, retry_after: RetryAfter) -> Self {
        Self {
            status,
            retry_after,
        }
    }

    /// The error for a response's status and headers, `None` when the status is not a client
    /// or server error. `Retry-After` HTTP-dates are measured from the system clock.
    ///
    /// ```
    /// use http::{HeaderMap, HeaderValue, StatusCode};
    /// use retry_core::{HttpStatusError, RetryAfter};
    /// use std::time::Duration;
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert("retry-after", HeaderValue::from_static("1"));
    /// let error = HttpStatusError::from_parts(StatusCode::SERVICE_UNAVAILABLE, &headers).unwrap();
    /// assert_eq!(error.retry_after_header(), RetryAfter::After(Duration::from_secs(1)));
    /// assert!(HttpStatusError::from_parts(StatusCode::OK, &headers).is_none());
    /// ```
    pub fn from_parts(status: StatusCode, headers: &HeaderMap) -> Option<Self> {
        Self::from_parts_at(status, headers, SystemTime::now())
    }

    /// [`from_parts`](Self::from_parts) with `Retry-After` dates measured from `now`.
    ///
    /// ```
    /// use http::{HeaderMap, HeaderValue, StatusCode};
    /// use retry_core::{HttpStatusError, RetryAfter};
    /// use std::time::{Duration, UNIX_EPOCH};
    ///
    /// let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
    /// let mut headers = HeaderMap::new();
    /// headers.insert("retry-after", HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"));
    /// let error = HttpStatusError::from_parts_at(StatusCode::TOO_MANY_REQUESTS, &headers, now).unwrap();
    /// assert_eq!(error.retry_after_header(), RetryAfter::After(Duration::from_secs(10)));
    /// ```
    pub fn from_parts_at(status: StatusCode, headers: &HeaderMap, now: SystemTime) -> Option<Self> {
        (status.is_client_error() || status.is_server_error())
            .then(|| Self::new(status, RetryAfter::from_headers(headers, now)))
    }

    /// The response's status.
    ///
    /// ```
    /// # use retry_core::{HttpStatusError, RetryAfter};
    /// let error = HttpStatusError::new(http::StatusCode::CONFLICT, RetryAfter::Absent);
    /// assert_eq!(error.status(), http::StatusCode::CONFLICT);
    /// ```
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What the response's `Retry-After` / `x-amz-retry-after` said, failures included
    /// ([`RetryInfo::retry_after`] gives the usable delay only).
    ///
    /// ```
    /// # use retry_core::{HttpStatusError, RetryAfter};
    /// let error = HttpStatusError::new(http::StatusCode::SERVICE_UNAVAILABLE, RetryAfter::Invalid);
    /// assert_eq!(error.retry_after_header(), RetryAfter::Invalid);
    /// ```
    pub fn retry_after_header(&self) -> RetryAfter {
        self.retry_after
    }
}

impl fmt::Display for HttpStatusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        match self.retry_after {
            RetryAfter::Absent => Ok(()),
            other => write!(f, " ({other})"),
        }
    }
}

impl std::error::Error for HttpStatusError {}

impl RetryInfo for HttpStatusError {
    fn retry_safety(&self) -> RetrySafety {
        if self.retry_after == RetryAfter::TooLong {
            return RetrySafety::No;
        }
        status_retry_safety(self.status)
    }

    fn is_throttling(&self) -> bool {
        self.status == StatusCode::TOO_MANY_REQUESTS
            || (self.status == StatusCode::SERVICE_UNAVAILABLE
                && matches!(self.retry_after, RetryAfter::After(_)))
    }

    fn is_timeout(&self) -> bool {
        self.status == StatusCode::REQUEST_TIMEOUT
    }

    fn retry_after(&self) -> Option<Duration> {
        self.retry_after.delay()
    }

    fn fault(&self) -> Fault {
        status_fault(self.status)
    }
}

/// Whether a request that failed with an error `status` may be sent again (the table on
/// [`HttpStatusError`]); also used for `reqwest`'s status errors.
pub(crate) fn status_retry_safety(status: StatusCode) -> RetrySafety {
    if PERMANENT_SERVER_ERRORS.contains(&status) {
        RetrySafety::No
    } else if status.is_server_error()
        || status == StatusCode::TOO_MANY_REQUESTS
        || status == StatusCode::REQUEST_TIMEOUT
    {
        RetrySafety::Yes
    } else {
        RetrySafety::Maybe
    }
}

/// Whose fault an error `status` is: 5xx the server's, 4xx the client's (408 and 429 say
/// nothing wrong with the request: unknown).
pub(crate) fn status_fault(status: StatusCode) -> Fault {
    if status.is_server_error() {
        Fault::Server
    } else if status == StatusCode::REQUEST_TIMEOUT || status == StatusCode::TOO_MANY_REQUESTS {
        Fault::Unknown
    } else if status.is_client_error() {
        Fault::Client
    } else {
        Fault::Unknown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, RetryAction, RetryInfoClassifier};

    fn verdict(status: u16, retry_after: RetryAfter) -> RetryAction {
        let status = StatusCode::from_u16(status).expect("valid test status");
        RetryInfoClassifier::classify_error(&HttpStatusError::new(status, retry_after))
    }

    #[test]
    fn the_table_of_statuses() {
        let two = Duration::from_secs(2);
        let retry = RetryAction::retryable;
        assert_eq!(
            verdict(429, RetryAfter::Absent),
            retry(ErrorKind::Throttling)
        );
        assert_eq!(
            verdict(429, RetryAfter::After(two)),
            RetryAction::retryable_after(ErrorKind::Throttling, two)
        );
        assert_eq!(
            verdict(503, RetryAfter::After(two)),
            RetryAction::retryable_after(ErrorKind::Throttling, two)
        );
        assert_eq!(verdict(503, RetryAfter::Absent), retry(ErrorKind::Server));
        assert_eq!(verdict(503, RetryAfter::Invalid), retry(ErrorKind::Server));
        assert_eq!(verdict(500, RetryAfter::Absent), retry(ErrorKind::Server));
        assert_eq!(verdict(502, RetryAfter::Absent), retry(ErrorKind::Server));
        assert_eq!(verdict(504, RetryAfter::Absent), retry(ErrorKind::Server));
        assert_eq!(verdict(599, RetryAfter::Absent), retry(ErrorKind::Server));
        assert_eq!(verdict(408, RetryAfter::Absent), retry(ErrorKind::Timeout));
        assert_eq!(
            verdict(501, RetryAfter::Absent),
            RetryAction::RetryForbidden
        );
        assert_eq!(
            verdict(505, RetryAfter::Absent),
            RetryAction::RetryForbidden
        );
        for status in [400, 401, 403, 404, 409, 422] {
            assert_eq!(
                verdict(status, RetryAfter::Absent),
                RetryAction::NoActionIndicated,
                "{status}"
            );
        }
        for status in [429, 500, 503] {
            assert_eq!(
                verdict(status, RetryAfter::TooLong),
                RetryAction::RetryForbidden,
                "{status} asking for more than a day"
            );
        }
    }

    #[test]
    fn only_error_statuses_become_errors() {
        let headers = HeaderMap::new();
        for status in [100, 200, 204, 301, 304] {
            let status = StatusCode::from_u16(status).expect("valid test status");
            assert!(HttpStatusError::from_parts(status, &headers).is_none());
        }
        assert!(HttpStatusError::from_parts(StatusCode::BAD_REQUEST, &headers).is_some());
    }

    #[test]
    fn display_says_what_the_header_said() {
        let show = |retry_after| {
            HttpStatusError::new(StatusCode::SERVICE_UNAVAILABLE, retry_after).to_string()
        };
        assert_eq!(show(RetryAfter::Absent), "HTTP 503 Service Unavailable");
        assert_eq!(
            show(RetryAfter::TooLong),
            "HTTP 503 Service Unavailable (Retry-After beyond 86400s: not retried)"
        );
        assert_eq!(
            show(RetryAfter::Invalid),
            "HTTP 503 Service Unavailable (unreadable Retry-After ignored)"
        );
    }
}
