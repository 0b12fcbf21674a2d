//! An HTTP error status as an error value that knows its retryability.

use std::fmt;
use std::time::{Duration, SystemTime};

use http::{HeaderMap, StatusCode};

use super::retry_after::RetryAfter;
use super::status_table::{StatusClass, status_fault};
use crate::info::{Fault, RetryInfo, RetrySafety};

/// A response whose status is a client or server error (4xx, 5xx), with the server's requested
/// delay: what [`CheckStatus::check_status`](crate::http::CheckStatus::check_status) turns such a
/// response into. Its [`RetryInfo`] says what the crate's one table of statuses says, the table
/// [`HttpStatusClassifier`](crate::http::HttpStatusClassifier) documents with its reasons: the same
/// response gets the same verdict here as from `HttpStatusClassifier` under a `RetryLayer`.
///
/// | status | [`retry_safety`](RetryInfo::retry_safety) | fault | retried as ([`ErrorKind`](crate::ErrorKind)) |
/// |---|---|---|---|
/// | 408 Request Timeout | `Yes` | unknown | `transient` |
/// | 429 Too Many Requests | `Yes` | unknown | `throttling` |
/// | other 4xx | `No`: never retried, whatever the call's idempotency | client | |
/// | 501, 505, 506, 508, 510, 511 | `No` | server | |
/// | every other 5xx (500, 502, 503, 504, 507, unassigned ones) | `Yes` | server | `server` |
///
/// A status is the server's answer: it is never a [`RetrySafety::Maybe`] ("the request may have
/// reached the server"), so a call declared idempotent does not send a 404 again. On a response
/// under a `RetryLayer`, `HttpStatusClassifier` leaves the other 4xx to other classifiers (an
/// error-code classifier may read them: AWS answers throttling with a 400 and a code); as an
/// error value nothing more can be learned from it.
///
/// A retried status waits at least the server's delay, [`RetryAfter::from_headers`]'s (a 503
/// with `Retry-After` stays a server error: see the table's reasons); a `Retry-After` more than
/// a day away ([`RetryAfter::TooLong`]) makes it not retryable; an unreadable one
/// ([`RetryAfter::Invalid`]) is ignored.
///
/// ```
/// use http::StatusCode;
/// use retry_core::http::{HttpStatusError, RetryAfter};
/// use retry_core::{RetryInfo, RetrySafety};
/// use std::time::Duration;
///
/// let throttled = HttpStatusError::new(StatusCode::TOO_MANY_REQUESTS, RetryAfter::After(Duration::from_secs(2)));
/// assert!(throttled.is_throttling());
/// assert_eq!(throttled.retry_after(), Some(Duration::from_secs(2)));
/// assert_eq!(throttled.to_string(), "HTTP 429 Too Many Requests (retry after 2s)");
///
/// let not_found = HttpStatusError::new(StatusCode::NOT_FOUND, RetryAfter::Absent);
/// assert_eq!(not_found.retry_safety(), RetrySafety::No);
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
    /// use retry_core::http::{HttpStatusError, RetryAfter};
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
    /// use retry_core::http::{HttpStatusError, RetryAfter};
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
    /// use retry_core::http::{HttpStatusError, RetryAfter};
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
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What the response's `Retry-After` / `x-amz-retry-after` said, failures included
    /// ([`RetryInfo::retry_after`] gives the usable delay only).
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
        StatusClass::of(self.status).retry_safety(self.retry_after)
    }

    fn is_throttling(&self) -> bool {
        StatusClass::of(self.status).is_throttling()
    }

    fn is_timeout(&self) -> bool {
        StatusClass::of(self.status).is_timeout()
    }

    fn retry_after(&self) -> Option<Duration> {
        self.retry_after.delay()
    }

    fn fault(&self) -> Fault {
        status_fault(self.status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::{ErrorKind, RetryAction, RetryInfoClassifier};

    fn verdict(status: u16, retry_after: RetryAfter) -> RetryAction {
        let status = StatusCode::from_u16(status).expect("valid test status");
        RetryInfoClassifier::classify_error(&HttpStatusError::new(status, retry_after))
    }

    #[test]
    fn every_status_by_the_table() {
        use crate::http::status_table::tests::{every_retry_after, expected_for_error};
        for code in 400..=599 {
            for retry_after in every_retry_after() {
                assert_eq!(
                    verdict(code, retry_after),
                    expected_for_error(code, retry_after),
                    "{code} with {retry_after:?}"
                );
            }
        }
    }

    #[test]
    fn a_client_error_is_not_retried_whatever_the_idempotency() {
        use crate::classify::Idempotency;
        for code in [400, 403, 404, 409, 422] {
            let status = StatusCode::from_u16(code).expect("valid test status");
            let error = HttpStatusError::new(status, RetryAfter::Absent);
            for idempotency in [
                Idempotency::Idempotent,
                Idempotency::Undeclared,
                Idempotency::NotIdempotent,
            ] {
                assert_eq!(
                    RetryInfoClassifier::classify_error_for(&error, idempotency),
                    RetryAction::RetryForbidden,
                    "{code} {idempotency:?}"
                );
            }
        }
    }

    #[test]
    fn a_503_with_retry_after_is_a_server_error_that_waits() {
        let two = Duration::from_secs(2);
        let error = HttpStatusError::new(StatusCode::SERVICE_UNAVAILABLE, RetryAfter::After(two));
        assert!(!error.is_throttling());
        assert_eq!(
            verdict(503, RetryAfter::After(two)),
            RetryAction::retryable_after(ErrorKind::Server, two)
        );
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
