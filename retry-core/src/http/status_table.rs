//! The crate's one table of HTTP statuses: what a response's status and its `Retry-After` say
//! about sending the request again, `StatusClass::of(status).verdict(retry_after)`. Every HTTP
//! path judges by it: `HttpStatusClassifier` (tower), `HttpStatusError` (`check_status()`,
//! reqwest) and `reqwest::Error`'s status errors.
//!
//! The table, and the reasons for each row, are documented on
//! [`HttpStatusClassifier`](super::HttpStatusClassifier).

use http::StatusCode;

use super::retry_after::RetryAfter;
use crate::classify::{ErrorKind, RetryAction};
use crate::info::{Fault, RetrySafety};

/// The 5xx statuses a retry cannot cure: the server does not support what the request asks, or
/// is misconfigured, or wants something only a person can give.
///
/// * `501 Not Implemented`: the server does not support the functionality (RFC 9110 §15.6.2);
/// * `505 HTTP Version Not Supported`: nor the request's HTTP version (RFC 9110 §15.6.6);
/// * `506 Variant Also Negotiates`: its content negotiation is misconfigured (RFC 2295 §8.1);
/// * `508 Loop Detected`: the request's bindings loop (RFC 5842 §7.2);
/// * `510 Not Extended`: the request lacks a required extension (RFC 2774 §7);
/// * `511 Network Authentication Required`: a captive portal wants a person to sign in
///   (RFC 6585 §6).
const PERMANENT_SERVER_ERRORS: [u16; 6] = [501, 505, 506, 508, 510, 511];

/// What a status says on its own, before any `Retry-After` is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusClass {
    /// Not an error (1xx, 2xx, 3xx), or a client error that the same request will meet again:
    /// no verdict, other classifiers may decide.
    NoVerdict,
    /// A server error a retry cannot cure: never retried.
    Permanent,
    /// Retried, as this kind of failure.
    Retried(ErrorKind),
}

impl StatusClass {
    /// The table's row for `status`.
    pub(crate) fn of(status: StatusCode) -> Self {
        match status.as_u16() {
            // RFC 9110 §15.5.9: the server closed a connection that sent no complete request in
            // time; the client may repeat the request (the AWS SDKs retry S3's RequestTimeout as
            // a transient error).
            408 => StatusClass::Retried(ErrorKind::Transient),
            // RFC 6585 §4: too many requests in a given amount of time.
            429 => StatusClass::Retried(ErrorKind::Throttling),
            code if PERMANENT_SERVER_ERRORS.contains(&code) => StatusClass::Permanent,
            // 500, 502, 503, 504 (the AWS SDKs' transient statuses), 507 (RFC 4918 §11.5:
            // "considered to be temporary") and every unassigned 5xx, which RFC 9110 §15 says to
            // treat as 500.
            500..=599 => StatusClass::Retried(ErrorKind::Server),
            _ => StatusClass::NoVerdict,
        }
    }

    /// Whether the verdict depends on the response's `Retry-After`: only a retried status reads
    /// it.
    pub(crate) fn reads_retry_after(self) -> bool {
        matches!(self, StatusClass::Retried(_))
    }

    /// The verdict on a response of this class whose headers say `retry_after`: a retry waits at
    /// least the server's delay; a delay beyond a day forbids it (the server asks for more than
    /// any client waits); an unreadable or absent header leaves the client's own backoff.
    pub(crate) fn verdict(self, retry_after: RetryAfter) -> RetryAction {
        match (self, retry_after) {
            (StatusClass::NoVerdict, _) => RetryAction::NoActionIndicated,
            (StatusClass::Permanent, _) | (StatusClass::Retried(_), RetryAfter::TooLong) => {
                RetryAction::RetryForbidden
            }
            (StatusClass::Retried(kind), RetryAfter::After(delay)) => {
                RetryAction::retryable_after(kind, delay)
            }
            (StatusClass::Retried(kind), RetryAfter::Invalid | RetryAfter::Absent) => {
                RetryAction::retryable(kind)
            }
        }
    }

    /// What an error carrying this status says: the server answered, so the answer is definite,
    /// [`RetrySafety::Yes`] when the table retries it and [`RetrySafety::No`] otherwise (a 4xx
    /// other than 408 and 429 is never retried, whatever the call's idempotency). Only a
    /// failure that leaves it unknown whether the request arrived is a `Maybe`.
    pub(crate) fn retry_safety(self, retry_after: RetryAfter) -> RetrySafety {
        match self.verdict(retry_after) {
            RetryAction::RetryIndicated(_) => RetrySafety::Yes,
            RetryAction::RetryForbidden | RetryAction::NoActionIndicated => RetrySafety::No,
        }
    }

    /// Whether a retry of this class is throttling.
    pub(crate) fn is_throttling(self) -> bool {
        self == StatusClass::Retried(ErrorKind::Throttling)
    }

    /// Whether a retry of this class is a timeout's.
    pub(crate) fn is_timeout(self) -> bool {
        self == StatusClass::Retried(ErrorKind::Timeout)
    }
}

/// Whose fault an error `status` is: 5xx the server's, 4xx the client's; 408 and 429 say nothing
/// wrong with the request (unknown), nor do statuses that are no errors.
pub(crate) fn status_fault(status: StatusCode) -> Fault {
    match status.as_u16() {
        408 | 429 => Fault::Unknown,
        400..=499 => Fault::Client,
        500..=599 => Fault::Server,
        _ => Fault::Unknown,
    }
}

/// The table written out by hand, apart from it, for the tests of every HTTP path.
#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;

    /// The verdicts, written out by hand apart from the table, for every status 100-599 with each
    /// thing a `Retry-After` can say.
    pub(crate) fn expected(code: u16, retry_after: RetryAfter) -> RetryAction {
        let retried = |kind| match retry_after {
            RetryAfter::After(delay) => RetryAction::retryable_after(kind, delay),
            RetryAfter::TooLong => RetryAction::RetryForbidden,
            RetryAfter::Invalid | RetryAfter::Absent => RetryAction::retryable(kind),
        };
        match code {
            100..=399 => RetryAction::NoActionIndicated,
            408 => retried(ErrorKind::Transient),
            429 => retried(ErrorKind::Throttling),
            400..=407 | 409..=428 | 430..=499 => RetryAction::NoActionIndicated,
            500 | 502 | 503 | 504 | 507 | 509 => retried(ErrorKind::Server),
            501 | 505 | 506 | 508 | 510 | 511 => RetryAction::RetryForbidden,
            512..=599 => retried(ErrorKind::Server),
            _ => unreachable!("the test covers 100-599"),
        }
    }

    /// The verdict on an error carrying the status `code` (400-599): as [`expected`], except that
    /// what the table leaves to other classifiers on a response is never retried as an error
    /// (the server answered).
    pub(crate) fn expected_for_error(code: u16, retry_after: RetryAfter) -> RetryAction {
        match expected(code, retry_after) {
            RetryAction::NoActionIndicated => RetryAction::RetryForbidden,
            verdict => verdict,
        }
    }

    /// Each thing a `Retry-After` can say.
    pub(crate) fn every_retry_after() -> [RetryAfter; 5] {
        [
            RetryAfter::Absent,
            RetryAfter::After(Duration::ZERO),
            RetryAfter::After(Duration::from_secs(2)),
            RetryAfter::TooLong,
            RetryAfter::Invalid,
        ]
    }

    #[test]
    fn every_status_with_and_without_retry_after() {
        for code in 100..=599 {
            let status = StatusCode::from_u16(code).expect("100-599 are statuses");
            for retry_after in every_retry_after() {
                assert_eq!(
                    StatusClass::of(status).verdict(retry_after),
                    expected(code, retry_after),
                    "{code} with {retry_after:?}"
                );
            }
        }
    }

    #[test]
    fn the_class_says_the_same_as_the_verdict() {
        for code in 100..=599 {
            let status = StatusCode::from_u16(code).expect("100-599 are statuses");
            let class = StatusClass::of(status);
            for retry_after in every_retry_after() {
                let verdict = class.verdict(retry_after);
                if let Some(reason) = verdict.reason() {
                    let kind = reason.kind();
                    assert_eq!(class.is_throttling(), kind == ErrorKind::Throttling);
                    assert_eq!(class.is_timeout(), kind == ErrorKind::Timeout);
                }
                if !class.reads_retry_after() {
                    assert_eq!(verdict, class.verdict(RetryAfter::Absent), "{code}");
                }
            }
        }
    }

    #[test]
    fn faults() {
        let fault = |code| status_fault(StatusCode::from_u16(code).expect("a status"));
        assert_eq!(fault(404), Fault::Client);
        assert_eq!(fault(408), Fault::Unknown);
        assert_eq!(fault(429), Fault::Unknown);
        assert_eq!(fault(503), Fault::Server);
        assert_eq!(fault(200), Fault::Unknown);
    }
}
