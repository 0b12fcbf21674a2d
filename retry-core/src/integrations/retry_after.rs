//! What a response's `Retry-After` / `x-amz-retry-after` says, hostile values included.

use std::fmt;
use std::time::{Duration, SystemTime};

use http::HeaderMap;
use http::header::RETRY_AFTER;

use crate::{HttpStatusClassifier, parse_retry_after};

/// AWS's retry-delay header, in integer milliseconds (the AWS SDKs read it before
/// `Retry-After`).
const X_AMZ_RETRY_AFTER: &str = "x-amz-retry-after";

/// The server's requested delay before the next attempt, as read from a response's headers by
/// [`parse_retry_after`], with the two ways a present header can fail told apart:
///
/// * [`After`](Self::After): a usable delay (an HTTP-date in the past is [`Duration::ZERO`]);
/// * [`TooLong`](Self::TooLong): a well-formed value further away than
///   [`HttpStatusClassifier::MAX_RETRY_AFTER`] (one day), whatever its number of digits: the
///   server asks for more than any client waits, so the request is not retried;
/// * [`Invalid`](Self::Invalid): present but neither delta-seconds, an HTTP-date nor integer
///   milliseconds: it says nothing, and the client's own backoff applies;
/// * [`Absent`](Self::Absent): no such header.
///
/// ```
/// use http::{HeaderMap, HeaderValue};
/// use retry_core::RetryAfter;
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
    /// Reads `x-amz-retry-after`, then `Retry-After` (the first value of each, as
    /// [`parse_retry_after`] does), measuring an HTTP-date from `now`. Never panics.
    ///
    /// ```
    /// use http::{HeaderMap, HeaderValue};
    /// use retry_core::RetryAfter;
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
        if let Some(delay) = parse_retry_after(headers, now) {
            return RetryAfter::After(delay);
        }
        let amz = headers.get(X_AMZ_RETRY_AFTER).map(|v| v.as_bytes());
        let retry_after = headers.get(RETRY_AFTER).map(|v| v.as_bytes());
        // `parse_retry_after` rejected every present value: a well-formed one was too far away.
        let too_long = amz.is_some_and(is_digits)
            || retry_after.is_some_and(|value| is_digits(value) || is_http_date(value));
        match (too_long, amz.or(retry_after)) {
            (true, _) => RetryAfter::TooLong,
            (false, Some(_)) => RetryAfter::Invalid,
            (false, None) => RetryAfter::Absent,
        }
    }

    /// The usable delay, if any.
    ///
    /// ```
    /// use retry_core::RetryAfter;
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
            RetryAfter::TooLong => write!(
                f,
                "Retry-After beyond {:?}: not retried",
                HttpStatusClassifier::MAX_RETRY_AFTER
            ),
            RetryAfter::Invalid => f.write_str("unreadable Retry-After ignored"),
        }
    }
}

/// `1*DIGIT` after trimming optional whitespace: a well-formed delay, whatever its size.
fn is_digits(value: &[u8]) -> bool {
    let value = value.trim_ascii();
    !value.is_empty() && value.iter().all(u8::is_ascii_digit)
}

/// An HTTP-date (any of RFC 9110's three formats) after trimming optional whitespace.
fn is_http_date(value: &[u8]) -> bool {
    std::str::from_utf8(value.trim_ascii())
        .is_ok_and(|value| httpdate::parse_http_date(value).is_ok())
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
                prop_assert!(delay <= HttpStatusClassifier::MAX_RETRY_AFTER);
            }
        }
    }
}
