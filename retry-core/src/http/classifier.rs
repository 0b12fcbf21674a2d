//! The HTTP status-code classifier.

use std::borrow::Cow;
use std::time::{Duration, SystemTime};

use http::{HeaderMap, Response, StatusCode};

use super::retry_after::RetryAfter;
use super::status_table::StatusClass;
use crate::classify::server_delay::MAX_SERVER_DELAY;
use crate::classify::{ClassifierPriority, ClassifyRetry, ErrorKind, RetryAction};

/// Classifies HTTP responses by status code and `Retry-After`, by the crate's one table of
/// statuses, which [`HttpStatusError`](super::HttpStatusError) (`check_status()`, reqwest) and
/// `reqwest::Error`'s status errors follow too: the same response gets the same verdict on every
/// path.
///
/// | status | verdict | why |
/// |---|---|---|
/// | 1xx, 2xx, 3xx | no action | not an error |
/// | 408 Request Timeout | retried, [`ErrorKind::Transient`] | RFC 9110 §15.5.9: the server closed a connection on which no complete request came in time, and the client may repeat the request; the AWS SDKs retry a request timeout (S3's `RequestTimeout`) as a transient error. It is the server's idle timer, not the attempt's timeout, so it is not charged as one |
/// | 429 Too Many Requests | retried, [`ErrorKind::Throttling`] | RFC 6585 §4: too many requests in a given time |
/// | other 4xx | no action (left to other classifiers), whatever the idempotency | the same request will fail the same way; an error-code classifier may still read the response (AWS answers throttling with a 400 and a code). As an error value (`HttpStatusError`, `reqwest::Error`) it is never retried |
/// | 500, 502, 503, 504 | retried, [`ErrorKind::Server`] | the AWS SDKs' transient statuses (smithy-rs `TRANSIENT_ERROR_STATUS_CODES`, botocore) |
/// | 507 Insufficient Storage | retried, [`ErrorKind::Server`] | RFC 4918 §11.5: "considered to be temporary" |
/// | 501, 505, 506, 508, 510, 511 | never ([`RetryAction::RetryForbidden`]) | a retry cannot cure them: not implemented (RFC 9110 §15.6.2), HTTP version not supported (§15.6.6), a misconfigured negotiation (RFC 2295), a loop (RFC 5842), a missing extension (RFC 2774), a captive portal (RFC 6585 §6) |
/// | every other 5xx (509, 512-599) | retried, [`ErrorKind::Server`] | RFC 9110 §15: an unrecognized status is treated as the x00 of its class, here 500 |
///
/// A retried status reads the server's delay, [`RetryAfter::from_headers`] (`x-amz-retry-after`,
/// then `Retry-After`; [`parse_retry_after`](super::parse_retry_after) documents the forms):
///
/// * a usable delay goes with the verdict: the retry waits at least that long;
/// * a delay beyond [`MAX_RETRY_AFTER`](Self::MAX_RETRY_AFTER) (a day) forbids the retry: the
///   server asks for more than any client waits;
/// * an unreadable or absent header leaves the client's own backoff.
///
/// A 503 with a `Retry-After` is a server error like any 503, not throttling: RFC 9110 §15.6.4
/// gives 503 one meaning (a temporary overload or maintenance) and makes `Retry-After` only advice
/// on how long it lasts, and the AWS SDKs count 503 among the transient statuses (an error *code*
/// such as S3's `SlowDown`, not the status, makes throttling; see
/// [`ErrorCodeClassifier`](crate::classify::ErrorCodeClassifier)). So a maintenance window
/// announced with `Retry-After` does not cut the adaptive rate limiter's rate; the delay is
/// honoured all the same. Every `Err` outcome indicates no action (leave it to other classifiers).
///
/// For an error type of your own that carries the response's status and headers, call
/// [`classify_parts`](Self::classify_parts) from your classifier.
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
/// use retry_core::http::HttpStatusClassifier;
/// use std::time::Duration;
///
/// let classifier = HttpStatusClassifier::new();
/// let unavailable = http::Response::builder().status(503).header("retry-after", "2").body(());
/// let outcome: Result<_, std::io::Error> = Ok(unavailable?);
/// assert_eq!(
///     classifier.classify(&outcome),
///     RetryAction::retryable_after(ErrorKind::Server, Duration::from_secs(2))
/// );
/// let not_found: Result<_, std::io::Error> = Ok(http::Response::builder().status(404).body(())?);
/// assert_eq!(classifier.classify(&not_found), RetryAction::NoActionIndicated);
/// let not_implemented: Result<_, std::io::Error> = Ok(http::Response::builder().status(501).body(())?);
/// assert_eq!(classifier.classify(&not_implemented), RetryAction::RetryForbidden);
/// # Ok::<(), http::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct HttpStatusClassifier {
    /// The statuses retried instead of the table's, if the user gave a list.
    retryable: Option<Cow<'static, [StatusCode]>>,
    clock: fn() -> SystemTime,
}

impl HttpStatusClassifier {
    /// `429 Too Many Requests`: always throttling.
    ///
    /// Source: RFC 6585 §4 ("the user has sent too many requests in a given amount of time").
    ///
    /// ```
    /// use retry_core::http::HttpStatusClassifier;
    /// assert_eq!(HttpStatusClassifier::THROTTLING_STATUS_CODE.as_u16(), 429);
    /// ```
    pub const THROTTLING_STATUS_CODE: StatusCode = StatusCode::TOO_MANY_REQUESTS;

    /// The longest server-requested delay [`parse_retry_after`](super::parse_retry_after) accepts:
    /// one day. A response asking for longer is not retried ([`RetryAfter::TooLong`]), so a hostile
    /// or broken server can neither park a client nor have its request repeated on the client's own
    /// backoff.
    ///
    /// Source: this crate's choice, far above the AWS SDKs' 20-second cap on a backoff delay.
    ///
    /// ```
    /// use retry_core::http::HttpStatusClassifier;
    /// assert_eq!(HttpStatusClassifier::MAX_RETRY_AFTER.as_secs(), 86_400);
    /// ```
    pub const MAX_RETRY_AFTER: Duration = MAX_SERVER_DELAY;

    /// A classifier by the table of statuses, reading the system clock for `Retry-After` dates.
    ///
    /// ```
    /// use retry_core::http::HttpStatusClassifier;
    /// assert_eq!(HttpStatusClassifier::new().retryable_status_codes(), None);
    /// ```
    pub const fn new() -> Self {
        Self {
            retryable: None,
            clock: SystemTime::now,
        }
    }

    /// Retries exactly `status_codes` instead of the table's statuses: a listed 5xx as
    /// [`ErrorKind::Server`], any other listed status (409, say) as [`ErrorKind::Client`]; 429
    /// stays throttling whatever the list, and every status not listed indicates no action (none
    /// is forbidden). `Retry-After` is read as the table reads it. For a service whose statuses
    /// mean more, or less, than the table says: AWS's four transient statuses alone, say.
    ///
    /// ```
    /// use http::StatusCode;
    /// use retry_core::{ErrorKind, RetryAction};
    /// use retry_core::http::HttpStatusClassifier;
    ///
    /// let classifier = HttpStatusClassifier::new()
    ///     .with_retryable_status_codes([StatusCode::SERVICE_UNAVAILABLE, StatusCode::CONFLICT]);
    /// let headers = http::HeaderMap::new();
    /// assert!(!classifier.classify_parts(StatusCode::INTERNAL_SERVER_ERROR, &headers).should_retry());
    /// assert_eq!(
    ///     classifier.classify_parts(StatusCode::CONFLICT, &headers),
    ///     RetryAction::retryable(ErrorKind::Client)
    /// );
    /// ```
    pub fn with_retryable_status_codes(
        mut self,
        status_codes: impl IntoIterator<Item = StatusCode>,
    ) -> Self {
        self.retryable = Some(Cow::Owned(status_codes.into_iter().collect()));
        self
    }

    /// Replaces the wall clock that `Retry-After` HTTP-dates are measured against (default:
    /// [`SystemTime::now`]). For deterministic tests.
    ///
    /// ```
    /// use retry_core::{ErrorKind, RetryAction};
    /// use retry_core::http::HttpStatusClassifier;
    /// use std::time::{Duration, SystemTime, UNIX_EPOCH};
    ///
    /// fn fixed_now() -> SystemTime {
    ///     UNIX_EPOCH + Duration::from_secs(784_111_767) // Sun, 06 Nov 1994 08:49:27 GMT
    /// }
    ///
    /// let classifier = HttpStatusClassifier::new().with_clock(fixed_now);
    /// let mut headers = http::HeaderMap::new();
    /// headers.insert("retry-after", http::HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"));
    /// assert_eq!(
    ///     classifier.classify_parts(http::StatusCode::SERVICE_UNAVAILABLE, &headers),
    ///     RetryAction::retryable_after(ErrorKind::Server, Duration::from_secs(10))
    /// );
    /// ```
    pub fn with_clock(mut self, clock: fn() -> SystemTime) -> Self {
        self.clock = clock;
        self
    }

    /// The statuses retried instead of the table's, in order, if a list was given with
    /// [`with_retryable_status_codes`](Self::with_retryable_status_codes) (429 is implied and
    /// need not be listed); `None` when the table decides.
    ///
    /// ```
    /// use retry_core::http::HttpStatusClassifier;
    /// let classifier = HttpStatusClassifier::new()
    ///     .with_retryable_status_codes([http::StatusCode::BAD_GATEWAY]);
    /// assert_eq!(classifier.retryable_status_codes().map(<[_]>::len), Some(1));
    /// ```
    pub fn retryable_status_codes(&self) -> Option<&[StatusCode]> {
        self.retryable.as_deref()
    }

    /// The verdict on a response's status and headers. `Retry-After` is only read when the
    /// status is retried.
    ///
    /// ```
    /// use http::{HeaderMap, HeaderValue, StatusCode};
    /// use retry_core::{ErrorKind, RetryAction};
    /// use retry_core::http::HttpStatusClassifier;
    /// use std::time::Duration;
    ///
    /// let mut headers = HeaderMap::new();
    /// headers.insert("x-amz-retry-after", HeaderValue::from_static("1500"));
    /// assert_eq!(
    ///     HttpStatusClassifier::new().classify_parts(StatusCode::TOO_MANY_REQUESTS, &headers),
    ///     RetryAction::retryable_after(ErrorKind::Throttling, Duration::from_millis(1500))
    /// );
    /// ```
    pub fn classify_parts(&self, status: StatusCode, headers: &HeaderMap) -> RetryAction {
        let class = match &self.retryable {
            None => StatusClass::of(status),
            Some(list) => listed_class(list, status),
        };
        if !class.reads_retry_after() {
            return class.verdict(RetryAfter::Absent);
        }
        class.verdict(RetryAfter::from_headers(headers, (self.clock)()))
    }
}

/// The class of `status` under a user's list of retryable statuses: 429 throttling, a listed
/// 5xx a server error, any other listed status a client error, the rest no verdict.
fn listed_class(list: &[StatusCode], status: StatusCode) -> StatusClass {
    if status == HttpStatusClassifier::THROTTLING_STATUS_CODE {
        StatusClass::Retried(ErrorKind::Throttling)
    } else if !list.contains(&status) {
        StatusClass::NoVerdict
    } else if status.is_server_error() {
        StatusClass::Retried(ErrorKind::Server)
    } else {
        StatusClass::Retried(ErrorKind::Client)
    }
}

impl Default for HttpStatusClassifier {
    fn default() -> Self {
        Self::new()
    }
}

impl<B, E> ClassifyRetry<Response<B>, E> for HttpStatusClassifier {
    fn classify(&self, outcome: &Result<Response<B>, E>) -> RetryAction {
        match outcome {
            Ok(response) => self.classify_parts(response.status(), response.headers()),
            Err(_) => RetryAction::NoActionIndicated,
        }
    }

    fn name(&self) -> &'static str {
        "http status"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::http_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::retry_after::{X_AMZ_RETRY_AFTER, parse_retry_after};
    use http::HeaderValue;
    use http::header::RETRY_AFTER;
    use proptest::prelude::*;
    use std::time::UNIX_EPOCH;

    /// Sun, 06 Nov 1994 08:49:27 GMT: ten seconds before RFC 9110's example date.
    fn fixed_now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(784_111_767)
    }

    fn headers(pairs: &[(&'static str, &[u8])]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            let value = HeaderValue::from_bytes(value).expect("test header values are valid");
            map.append(*name, value);
        }
        map
    }

    fn retry_after_of(value: &[u8]) -> Option<Duration> {
        parse_retry_after(&headers(&[("retry-after", value)]), fixed_now())
    }

    fn amz_of(value: &[u8]) -> Option<Duration> {
        parse_retry_after(&headers(&[("x-amz-retry-after", value)]), fixed_now())
    }

    fn response(status: u16, pairs: &[(&'static str, &[u8])]) -> Result<Response<()>, ()> {
        let mut response = Response::new(());
        *response.status_mut() = StatusCode::from_u16(status).expect("valid test status");
        *response.headers_mut() = headers(pairs);
        Ok(response)
    }

    #[test]
    fn every_status_code_by_the_table() {
        use crate::http::status_table::tests::expected;
        let classifier = HttpStatusClassifier::new().with_clock(fixed_now);
        let header_sets: [&[(&'static str, &[u8])]; 6] = [
            &[],
            &[("retry-after", b"0")],
            &[("retry-after", b"2")],
            &[("x-amz-retry-after", b"1500")],
            &[("retry-after", b"172800")],
            &[("retry-after", b"soon")],
        ];
        for code in 100..=599 {
            for pairs in header_sets {
                let retry_after = RetryAfter::from_headers(&headers(pairs), fixed_now());
                assert_eq!(
                    classifier.classify(&response(code, pairs)),
                    expected(code, retry_after),
                    "{code} {pairs:?}"
                );
            }
        }
        for code in 600..=999 {
            assert_eq!(
                classifier.classify(&response(code, &[("retry-after", b"2")])),
                RetryAction::NoActionIndicated,
                "{code}: no class of RFC 9110's"
            );
        }
    }

    #[test]
    fn a_replaced_list_replaces_the_default_but_not_429() {
        let classifier = HttpStatusClassifier::new().with_retryable_status_codes([
            StatusCode::SERVICE_UNAVAILABLE,
            StatusCode::CONFLICT,
            StatusCode::REQUEST_TIMEOUT,
        ]);
        for code in 100..=999 {
            let expected = match code {
                429 => RetryAction::retryable(ErrorKind::Throttling),
                503 => RetryAction::retryable(ErrorKind::Server),
                408 | 409 => RetryAction::retryable(ErrorKind::Client),
                _ => RetryAction::NoActionIndicated,
            };
            assert_eq!(
                classifier.classify(&response(code, &[])),
                expected,
                "{code}"
            );
        }
        let empty = HttpStatusClassifier::new().with_retryable_status_codes([]);
        assert_eq!(empty.retryable_status_codes(), Some(&[][..]));
        assert_eq!(
            empty.classify(&response(429, &[])),
            RetryAction::retryable(ErrorKind::Throttling)
        );
        assert_eq!(
            empty.classify(&response(503, &[])),
            RetryAction::NoActionIndicated
        );
    }

    #[test]
    fn a_retry_after_beyond_a_day_forbids_the_retry() {
        // As `HttpStatusError` decides it: the server asks for more than any client waits. (It
        // was read as "no header", and the response retried on the client's own backoff: a
        // 503 asking for two days was retried after 50 ms.)
        let classifier = HttpStatusClassifier::new().with_clock(fixed_now);
        for (name, value) in [
            ("retry-after", &b"172800"[..]),
            ("retry-after", b"99999999999999999999999999999999"),
            ("retry-after", b"Fri, 31 Dec 9999 23:59:59 GMT"),
            ("x-amz-retry-after", b"86400001"),
        ] {
            for code in [429, 503] {
                assert_eq!(
                    classifier.classify(&response(code, &[(name, value)])),
                    RetryAction::RetryForbidden,
                    "{code} {name}: {value:?}"
                );
            }
        }
        // An unreadable value still says nothing: the client's own backoff.
        assert_eq!(
            classifier.classify(&response(503, &[("retry-after", b"soon")])),
            RetryAction::retryable(ErrorKind::Server)
        );
    }

    #[test]
    fn errors_indicate_nothing() {
        let outcome: Result<Response<()>, &str> = Err("connection refused");
        assert_eq!(
            HttpStatusClassifier::new().classify(&outcome),
            RetryAction::NoActionIndicated
        );
    }

    #[test]
    fn name_and_priority() {
        let classifier = HttpStatusClassifier::default();
        assert_eq!(
            ClassifyRetry::<Response<()>, ()>::name(&classifier),
            "http status"
        );
        assert_eq!(
            ClassifyRetry::<Response<()>, ()>::priority(&classifier),
            ClassifierPriority::http_status()
        );
    }

    #[test]
    fn throttling_carries_retry_after() {
        let classifier = HttpStatusClassifier::new().with_clock(fixed_now);
        assert_eq!(
            classifier.classify(&response(429, &[("retry-after", b"3")])),
            RetryAction::retryable_after(ErrorKind::Throttling, Duration::from_secs(3))
        );
        assert_eq!(
            classifier.classify(&response(
                503,
                &[("retry-after", b"Sun, 06 Nov 1994 08:49:37 GMT")]
            )),
            RetryAction::retryable_after(ErrorKind::Server, Duration::from_secs(10))
        );
        // A malformed header does not stop the retry; it only drops the delay.
        assert_eq!(
            classifier.classify(&response(429, &[("retry-after", b"soon")])),
            RetryAction::retryable(ErrorKind::Throttling)
        );
        // A non-retryable status ignores the header.
        assert_eq!(
            classifier.classify(&response(301, &[("retry-after", b"3")])),
            RetryAction::NoActionIndicated
        );
    }

    #[test]
    fn delta_seconds() {
        assert_eq!(retry_after_of(b"0"), Some(Duration::ZERO));
        assert_eq!(retry_after_of(b"5"), Some(Duration::from_secs(5)));
        assert_eq!(retry_after_of(b"0005"), Some(Duration::from_secs(5)));
        assert_eq!(retry_after_of(b"86400"), Some(Duration::from_secs(86_400)));
        assert_eq!(retry_after_of(b"86401"), None);
        assert_eq!(parse_retry_after(&HeaderMap::new(), fixed_now()), None);
    }

    #[test]
    fn http_dates_in_all_three_formats() {
        let ten = Some(Duration::from_secs(10));
        assert_eq!(retry_after_of(b"Sun, 06 Nov 1994 08:49:37 GMT"), ten);
        assert_eq!(retry_after_of(b"Sunday, 06-Nov-94 08:49:37 GMT"), ten);
        assert_eq!(retry_after_of(b"Sun Nov  6 08:49:37 1994"), ten);
    }

    #[test]
    fn a_date_in_the_past_or_now_is_zero() {
        assert_eq!(
            retry_after_of(b"Sun, 06 Nov 1994 08:49:27 GMT"),
            Some(Duration::ZERO)
        );
        assert_eq!(
            retry_after_of(b"Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn a_date_before_1970_is_in_the_past() {
        for date in [
            &b"Wed, 31 Dec 1969 23:59:59 GMT"[..],
            b"Mon, 01 Jan 1900 00:00:00 GMT",
            b"Mon, 01 Jan 0001 00:00:00 GMT",
            b"Sat, 01 Jan 0000 00:00:00 GMT",
            b"Mon Jan  1 00:00:00 1900",
        ] {
            let text = String::from_utf8_lossy(date);
            assert_eq!(retry_after_of(date), Some(Duration::ZERO), "{text}");
        }
    }

    #[test]
    fn a_leap_second_is_the_next_minutes_first() {
        // RFC 9110 §5.6.7: time-of-day runs to 23:59:60 (a leap second).
        assert_eq!(
            retry_after_of(b"Sun, 06 Nov 1994 08:49:60 GMT"),
            Some(Duration::from_secs(33))
        );
        assert_eq!(
            retry_after_of(b"Sun Nov  6 08:49:60 1994"),
            Some(Duration::from_secs(33))
        );
        assert_eq!(retry_after_of(b"Sun, 06 Nov 1994 08:49:61 GMT"), None);
    }

    #[test]
    fn a_two_digit_year_is_read_within_50_years_of_now() {
        // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is the most recent
        // past year with those digits. 2070-01-01 00:00:00 is a Wednesday.
        fn new_years_eve_2069() -> SystemTime {
            UNIX_EPOCH + Duration::from_secs(3_155_756_400) // Tue, 31 Dec 2069 23:00:00 GMT
        }
        let map = headers(&[("retry-after", b"Wednesday, 01-Jan-70 00:30:00 GMT")]);
        assert_eq!(
            parse_retry_after(&map, new_years_eve_2069()),
            Some(Duration::from_secs(90 * 60))
        );
        // At 1994, "44" is 2044: fifty years ahead, not more.
        let map = headers(&[("retry-after", b"Friday, 01-Jan-44 00:00:00 GMT")]);
        assert_eq!(parse_retry_after(&map, fixed_now()), None);
        // At 1994, "45" is 1945: in the past.
        let map = headers(&[("retry-after", b"Monday, 01-Jan-45 00:00:00 GMT")]);
        assert_eq!(parse_retry_after(&map, fixed_now()), Some(Duration::ZERO));
    }

    #[test]
    fn dates_that_do_not_exist_are_malformed() {
        for date in [
            &b"Mon, 06 Nov 1994 08:49:37 GMT"[..], // a Sunday
            b"Thu, 29 Feb 2001 00:00:00 GMT",      // not a leap year
            b"Mon, 29 Feb 1900 00:00:00 GMT",      // nor is 1900
            b"Sun, 31 Apr 1994 00:00:00 GMT",
            b"Sun, 00 Nov 1994 08:49:37 GMT",
            b"Sun, 06 Nov 1994 24:00:00 GMT",
            b"Sun, 06 Nov 1994 08:60:00 GMT",
            b"sun, 06 nov 1994 08:49:37 gmt", // HTTP-date is case-sensitive
            b"Sun, 6 Nov 1994 08:49:37 GMT",
            b"Sun,  06 Nov 1994 08:49:37 GMT",
            b"Sun Nov 6 08:49:37 1994",
            b"Sunday, 06-Nov-1994 08:49:37 GMT",
            b"Sun, 06-Nov-94 08:49:37 GMT",
            "Sun, 06 Nov 1994 08:49:37 GMT\u{a0}".as_bytes(),
        ] {
            assert_eq!(
                retry_after_of(date),
                None,
                "{:?}",
                String::from_utf8_lossy(date)
            );
        }
        assert_eq!(
            retry_after_of(b"Mon, 29 Feb 1988 00:00:00 GMT"),
            Some(Duration::ZERO),
            "1988 was a leap year"
        );
    }

    #[test]
    fn a_date_too_far_in_the_future_is_ignored() {
        // Exactly one day later is accepted, one second more is not.
        assert_eq!(
            retry_after_of(b"Mon, 07 Nov 1994 08:49:27 GMT"),
            Some(HttpStatusClassifier::MAX_RETRY_AFTER)
        );
        assert_eq!(retry_after_of(b"Mon, 07 Nov 1994 08:49:28 GMT"), None);
        assert_eq!(retry_after_of(b"Fri, 31 Dec 9999 23:59:59 GMT"), None);
    }

    #[test]
    fn hostile_values_are_ignored() {
        for value in [
            &b"-1"[..],
            b"+5",
            b"1e9",
            b"5.5",
            b"",
            b"   ",
            b"5s",
            b"5 5",
            b"0x10",
            b"99999999999999999999999",
            b"18446744073709551615",
            b"18446744073709551616",
            b"\xff\xfe",
            b"5\xff",
            "\u{0665}".as_bytes(), // ARABIC-INDIC DIGIT FIVE
            b"Sun, 06 Nov 1994 08:49:37 PST",
            b"Sun, 32 Nov 1994 08:49:37 GMT",
            b"Sun, 06 Nov 1994 08:49:37 GMT garbage",
        ] {
            assert_eq!(retry_after_of(value), None, "retry-after {value:?}");
            assert_eq!(amz_of(value), None, "x-amz-retry-after {value:?}");
        }
    }

    #[test]
    fn surrounding_whitespace_is_trimmed() {
        assert_eq!(retry_after_of(b" 5 "), Some(Duration::from_secs(5)));
        assert_eq!(retry_after_of(b"\t5\t"), Some(Duration::from_secs(5)));
        assert_eq!(amz_of(b" 250 "), Some(Duration::from_millis(250)));
        assert_eq!(
            retry_after_of(b"  Sun, 06 Nov 1994 08:49:37 GMT "),
            Some(Duration::from_secs(10))
        );
    }

    #[test]
    fn x_amz_retry_after_is_milliseconds_and_wins() {
        assert_eq!(amz_of(b"0"), Some(Duration::ZERO));
        assert_eq!(amz_of(b"1500"), Some(Duration::from_millis(1500)));
        assert_eq!(
            amz_of(b"86400000"),
            Some(HttpStatusClassifier::MAX_RETRY_AFTER)
        );
        assert_eq!(amz_of(b"86400001"), None);
        let both = headers(&[("x-amz-retry-after", b"250"), ("retry-after", b"7")]);
        assert_eq!(
            parse_retry_after(&both, fixed_now()),
            Some(Duration::from_millis(250))
        );
    }

    #[test]
    fn a_bad_x_amz_retry_after_falls_through_to_retry_after() {
        for bad in [&b"-1"[..], b"1.5", b"", b"\xff", b"999999999999"] {
            let map = headers(&[("x-amz-retry-after", bad), ("retry-after", b"7")]);
            assert_eq!(
                parse_retry_after(&map, fixed_now()),
                Some(Duration::from_secs(7)),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn only_the_first_value_is_read() {
        let map = headers(&[("retry-after", b"7"), ("retry-after", b"9")]);
        assert_eq!(
            parse_retry_after(&map, fixed_now()),
            Some(Duration::from_secs(7))
        );
    }

    /// Seconds from the epoch to the last second of year 9999, the last `httpdate` can format.
    const YEAR_9999_END: u64 = 253_402_300_799;

    proptest! {
        #[test]
        fn never_panics_on_arbitrary_bytes(
            amz in proptest::collection::vec(any::<u8>(), 0..40),
            retry in proptest::collection::vec(any::<u8>(), 0..40),
            now_secs in 0..=YEAR_9999_END,
        ) {
            let mut map = HeaderMap::new();
            if let Ok(value) = HeaderValue::from_bytes(&amz) {
                map.insert(X_AMZ_RETRY_AFTER, value);
            }
            if let Ok(value) = HeaderValue::from_bytes(&retry) {
                map.insert(RETRY_AFTER, value);
            }
            let now = UNIX_EPOCH + Duration::from_secs(now_secs);
            if let Some(delay) = parse_retry_after(&map, now) {
                prop_assert!(delay <= HttpStatusClassifier::MAX_RETRY_AFTER);
            }
        }

        #[test]
        fn never_panics_on_digit_strings(digits in "[0-9]{0,40}") {
            let expected = digits
                .parse::<u64>()
                .ok()
                .filter(|secs| *secs <= HttpStatusClassifier::MAX_RETRY_AFTER.as_secs())
                .map(Duration::from_secs);
            prop_assert_eq!(retry_after_of(digits.as_bytes()), expected);
        }

        #[test]
        fn http_dates_round_trip(
            now_secs in 0..=YEAR_9999_END,
            offset in -200_000i64..=200_000,
        ) {
            let now = UNIX_EPOCH + Duration::from_secs(now_secs);
            let date_secs = now_secs.saturating_add_signed(offset).min(YEAR_9999_END);
            let date = UNIX_EPOCH + Duration::from_secs(date_secs);
            let mut map = HeaderMap::new();
            let value = HeaderValue::from_str(&httpdate::fmt_http_date(date));
            prop_assert!(value.is_ok());
            if let Ok(value) = value {
                map.insert(RETRY_AFTER, value);
            }
            let delay = Duration::from_secs(date_secs.saturating_sub(now_secs));
            let expected = (delay <= HttpStatusClassifier::MAX_RETRY_AFTER).then_some(delay);
            prop_assert_eq!(parse_retry_after(&map, now), expected);
        }
    }
}
