//! What a response's `Retry-After` / `x-amz-retry-after` says, hostile values included.

use std::fmt;
use std::time::{Duration, SystemTime};

use http::HeaderMap;
use http::header::RETRY_AFTER;

use super::date::parse_http_date;
use crate::classify::server_delay::{
    DelayUnit, MAX_SERVER_DELAY, ServerDelay, at_most_max, read_integer_delay, trim_ows,
};

/// AWS's retry-delay header, in integer milliseconds. Source: the AWS SDKs (the Rust SDK's
/// `AwsErrorCodeClassifier` in `aws-runtime` reads it before `Retry-After`). Lowercase, so the
/// lookup does not allocate.
pub(crate) const X_AMZ_RETRY_AFTER: &str = "x-amz-retry-after";

/// The server's requested delay before the next attempt, as read from a response's headers by
/// [`parse_retry_after`], with the two ways a present header can fail told apart:
///
/// * [`After`](Self::After): a usable delay (an HTTP-date in the past is [`Duration::ZERO`]);
/// * [`TooLong`](Self::TooLong): a well-formed value further away than
///   [`HttpStatusClassifier::MAX_RETRY_AFTER`](super::HttpStatusClassifier::MAX_RETRY_AFTER) (one
///   day), whatever its number of digits: the server asks for more than any client waits, so the
///   request is not retried;
/// * [`Invalid`](Self::Invalid): present but neither delta-seconds, an HTTP-date nor integer
///   milliseconds: it says nothing, and the client's own backoff applies;
/// * [`Absent`](Self::Absent): no such header.
///
/// ```
/// use http::{HeaderMap, HeaderValue};
/// use retry_core::http::RetryAfter;
/// use std::time::{Duration, SystemTime};
///
/// let mut headers = HeaderMap::new();
/// assert_eq!(RetryAfter::from_headers(&headers, SystemTime::now()), RetryAfter::Absent);
/// headers.insert("retry-after", HeaderValue::from_static("3"));
/// assert_eq!(
///     RetryAfter::from_headers(&headers, SystemTime::now()),
///     RetryAfter::After(Duration::from_secs(3))
/// );
/// headers.insert("retry-after", HeaderValue::from_static("99999999999999999999999999"));
/// assert_eq!(RetryAfter::from_headers(&headers, SystemTime::now()), RetryAfter::TooLong);
/// headers.insert("retry-after", HeaderValue::from_static("soon"));
/// assert_eq!(RetryAfter::from_headers(&headers, SystemTime::now()), RetryAfter::Invalid);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub enum RetryAfter {
    /// No `Retry-After` or `x-amz-retry-after` header.
    #[default]
    Absent,
    /// The server asked to wait this long.
    After(Duration),
    /// A well-formed delay or date more than a day away.
    TooLong,
    /// A value that is not a delay.
    Invalid,
}

impl RetryAfter {
    /// Reads `x-amz-retry-after` (integer milliseconds), then `Retry-After` (delta-seconds or an
    /// HTTP-date measured from `now`), the first value of each, by the rules
    /// [`parse_retry_after`] documents: the crate's one reader of
    /// these headers (`parse_retry_after` is this function's [`delay`](Self::delay)). A usable
    /// delay in either header wins; otherwise a well-formed value more than a day away makes
    /// [`TooLong`](Self::TooLong), and a present but unreadable one [`Invalid`](Self::Invalid).
    /// Never panics.
    ///
    /// ```
    /// use http::{HeaderMap, HeaderValue};
    /// use retry_core::http::RetryAfter;
    /// use std::time::{Duration, UNIX_EPOCH};
    ///
    /// let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
    /// let mut headers = HeaderMap::new();
    /// headers.insert("retry-after", HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"));
    /// assert_eq!(RetryAfter::from_headers(&headers, now), RetryAfter::After(Duration::from_secs(10)));
    /// headers.insert("retry-after", HeaderValue::from_static("Fri, 31 Dec 9999 23:59:59 GMT"));
    /// assert_eq!(RetryAfter::from_headers(&headers, now), RetryAfter::TooLong);
    /// ```
    pub fn from_headers(headers: &HeaderMap, now: SystemTime) -> Self {
        let amz = headers
            .get(X_AMZ_RETRY_AFTER)
            .map(|value| read_integer_delay(value.as_bytes(), DelayUnit::Milliseconds));
        if let Some(ServerDelay::After(delay)) = amz {
            return RetryAfter::After(delay);
        }
        let retry_after = headers
            .get(RETRY_AFTER)
            .map(|value| read_retry_after(value.as_bytes(), now));
        match (amz, retry_after) {
            (_, Some(ServerDelay::After(delay))) => RetryAfter::After(delay),
            (Some(ServerDelay::TooLong), _) | (_, Some(ServerDelay::TooLong)) => {
                RetryAfter::TooLong
            }
            (Some(ServerDelay::Invalid), _) | (_, Some(ServerDelay::Invalid)) => {
                RetryAfter::Invalid
            }
            _ => RetryAfter::Absent,
        }
    }

    /// The usable delay, if any.
    ///
    /// ```
    /// use retry_core::http::RetryAfter;
    /// assert_eq!(RetryAfter::TooLong.delay(), None);
    /// ```
    pub fn delay(&self) -> Option<Duration> {
        match self {
            RetryAfter::After(delay) => Some(*delay),
            _ => None,
        }
    }
}

impl fmt::Display for RetryAfter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryAfter::Absent => f.write_str("no Retry-After"),
            RetryAfter::After(delay) => write!(f, "retry after {delay:?}"),
            RetryAfter::TooLong => {
                write!(f, "Retry-After beyond {:?}: not retried", MAX_SERVER_DELAY)
            }
            RetryAfter::Invalid => f.write_str("unreadable Retry-After ignored"),
        }
    }
}

/// The delay a server asked for before the next attempt, measured from `now`.
///
/// * `x-amz-retry-after` (integer milliseconds, the AWS SDKs' header) wins when it is valid.
/// * Otherwise `Retry-After` (RFC 9110 §10.2.3), in either form: delta-seconds (`1*DIGIT`), or an
///   HTTP-date (any of the three RFC 9110 §5.6.7 formats); a date at or before `now` gives
///   [`Duration::ZERO`]. HTTP-dates are read as RFC 9110 says: case-sensitive; the day name must
///   be the date's; a leap second (`23:59:60`) is the next minute's first second; a four-digit
///   year may be any, before 1970 too; a two-digit year (rfc850-date) is the one with those
///   digits at most 50 years after `now`'s year and less than 50 before.
///
/// Leading and trailing spaces and tabs are trimmed first (RFC 9110 §5.5: they are not part of the
/// field value). Only the first value of each header is read. A value that is malformed (a sign, a
/// fraction, an exponent, an empty value, non-ASCII bytes, trailing text), that overflows, or that
/// exceeds [`HttpStatusClassifier::MAX_RETRY_AFTER`](super::HttpStatusClassifier::MAX_RETRY_AFTER)
/// is ignored: `x-amz-retry-after` then falls through to `Retry-After`, and `Retry-After` to
/// `None`. Never panics.
///
/// This is [`RetryAfter::from_headers`]'s [`delay`](RetryAfter::delay): the crate has one reader
/// of these headers, and `RetryAfter` also tells a delay too long from an unreadable one.
///
/// ```
/// use http::{HeaderMap, HeaderValue};
/// use retry_core::http::parse_retry_after;
/// use std::time::{Duration, UNIX_EPOCH};
///
/// let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
/// let mut headers = HeaderMap::new();
/// headers.insert("retry-after", HeaderValue::from_static("120"));
/// assert_eq!(parse_retry_after(&headers, now), Some(Duration::from_secs(120)));
///
/// headers.insert("retry-after", HeaderValue::from_static("Sun, 06 Nov 1994 08:49:37 GMT"));
/// assert_eq!(parse_retry_after(&headers, now), Some(Duration::from_secs(10)));
///
/// headers.insert("x-amz-retry-after", HeaderValue::from_static("250"));
/// assert_eq!(parse_retry_after(&headers, now), Some(Duration::from_millis(250)));
///
/// headers.insert("x-amz-retry-after", HeaderValue::from_static("-1"));
/// headers.insert("retry-after", HeaderValue::from_static("1e9"));
/// assert_eq!(parse_retry_after(&headers, now), None);
/// ```
pub fn parse_retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    RetryAfter::from_headers(headers, now).delay()
}

/// A `Retry-After` value (RFC 9110 §10.2.3): delta-seconds, or an HTTP-date measured from `now`
/// (a date at or before `now` is [`Duration::ZERO`]). Never panics.
pub(crate) fn read_retry_after(value: &[u8], now: SystemTime) -> ServerDelay {
    let value = trim_ows(value);
    if value.first().is_some_and(u8::is_ascii_digit) {
        return read_integer_delay(value, DelayUnit::Seconds);
    }
    match parse_http_date(value, now) {
        Some(date) => at_most_max(date.duration_since(now).unwrap_or(Duration::ZERO)),
        None => ServerDelay::Invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;
    use proptest::prelude::*;
    use std::time::UNIX_EPOCH;

    /// Sun, 06 Nov 1994 08:49:27 GMT.
    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(784_111_767)
    }

    fn of(pairs: &[(&'static str, &[u8])]) -> RetryAfter {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            let value = HeaderValue::from_bytes(value).expect("valid test header value");
            headers.append(*name, value);
        }
        RetryAfter::from_headers(&headers, now())
    }

    #[test]
    fn each_form_and_each_failure_has_its_outcome() {
        let secs = Duration::from_secs;
        assert_eq!(of(&[]), RetryAfter::Absent);
        assert_eq!(of(&[("retry-after", b" 7 ")]), RetryAfter::After(secs(7)));
        assert_eq!(
            of(&[("retry-after", b"86400")]),
            RetryAfter::After(secs(86_400))
        );
        assert_eq!(of(&[("retry-after", b"86401")]), RetryAfter::TooLong);
        assert_eq!(
            of(&[("retry-after", b"Sun, 06 Nov 1994 08:49:17 GMT")]),
            RetryAfter::After(Duration::ZERO),
            "a date in the past"
        );
        assert_eq!(
            of(&[("retry-after", b"Sunday, 06-Nov-94 08:49:37 GMT")]),
            RetryAfter::After(secs(10)),
            "RFC 850 form"
        );
        assert_eq!(
            of(&[("retry-after", b"Sun Nov  6 08:49:37 1994")]),
            RetryAfter::After(secs(10)),
            "asctime form"
        );
        assert_eq!(
            of(&[("retry-after", b"Mon, 07 Nov 1994 08:49:28 GMT")]),
            RetryAfter::TooLong,
            "one second more than a day away"
        );
        for garbage in [
            &b""[..],
            b"-1",
            b"1.5",
            b"1e3",
            b"+3",
            b"soon",
            b"\xff\xfe",
            b"3 s",
        ] {
            assert_eq!(
                of(&[("retry-after", garbage)]),
                RetryAfter::Invalid,
                "{garbage:?}"
            );
        }
        assert_eq!(
            of(&[("x-amz-retry-after", b"1500")]),
            RetryAfter::After(Duration::from_millis(1500))
        );
        assert_eq!(
            of(&[
                ("x-amz-retry-after", b"999999999999999999999"),
                ("retry-after", b"x")
            ]),
            RetryAfter::TooLong
        );
        assert_eq!(
            of(&[("x-amz-retry-after", b"x"), ("retry-after", b"99999999999")]),
            RetryAfter::TooLong
        );
        assert_eq!(
            of(&[("x-amz-retry-after", b"-1"), ("retry-after", b"2")]),
            RetryAfter::After(secs(2)),
            "a bad x-amz-retry-after falls through"
        );
    }

    #[test]
    fn a_well_formed_date_too_far_away_is_too_long_in_every_form_the_date_parser_reads() {
        // A leap second, as RFC 9110 §5.6.7 allows: well-formed, and a month away.
        assert_eq!(
            of(&[("retry-after", b"Tue, 06 Dec 1994 23:59:60 GMT")]),
            RetryAfter::TooLong
        );
        // Whatever the date parser rejects is unreadable, never "too long".
        assert_eq!(
            of(&[("retry-after", b"Tue, 06 Dec 1994 23:59:61 GMT")]),
            RetryAfter::Invalid
        );
    }

    proptest! {
        #[test]
        fn digits_of_any_count_are_a_delay_or_too_long(digits in "[0-9]{1,60}") {
            let outcome = of(&[("retry-after", digits.as_bytes())]);
            let expected = match digits.parse::<u64>() {
                Ok(secs) if secs <= 86_400 => RetryAfter::After(Duration::from_secs(secs)),
                _ => RetryAfter::TooLong,
            };
            prop_assert_eq!(outcome, expected);
        }

        #[test]
        fn arbitrary_bytes_never_panic(
            amz in proptest::collection::vec(any::<u8>(), 0..40),
            retry in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut headers = HeaderMap::new();
            if let Ok(value) = HeaderValue::from_bytes(&amz) {
                headers.insert(X_AMZ_RETRY_AFTER, value);
            }
            if let Ok(value) = HeaderValue::from_bytes(&retry) {
                headers.insert(RETRY_AFTER, value);
            }
            let outcome = RetryAfter::from_headers(&headers, now());
            if let Some(delay) = outcome.delay() {
                prop_assert!(delay <= MAX_SERVER_DELAY);
            }
        }
    }

    #[test]
    fn retry_after_values() {
        use std::time::UNIX_EPOCH;
        let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // Sun, 06 Nov 1994 08:49:27 GMT
        let read = |value: &[u8]| read_retry_after(value, now);
        assert_eq!(read(b"86400"), ServerDelay::After(MAX_SERVER_DELAY));
        assert_eq!(read(b"86401"), ServerDelay::TooLong);
        assert_eq!(read(b"99999999999999999999999"), ServerDelay::TooLong);
        assert_eq!(
            read(b" Sun, 06 Nov 1994 08:49:37 GMT "),
            ServerDelay::After(Duration::from_secs(10))
        );
        assert_eq!(read(b"Mon, 07 Nov 1994 08:49:28 GMT"), ServerDelay::TooLong);
        assert_eq!(
            read(b"Sat, 01 Jan 0000 00:00:00 GMT"),
            ServerDelay::After(Duration::ZERO)
        );
        assert_eq!(read(b"Mon, 06 Nov 1994 08:49:37 GMT"), ServerDelay::Invalid);
        assert_eq!(read(b"5s"), ServerDelay::Invalid);
    }
}
