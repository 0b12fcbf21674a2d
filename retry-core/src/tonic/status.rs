//! gRPC statuses: their retryability (gRFC A6), with the server's pushback, and the classifier
//! of responses by their `grpc-status`.

use std::time::Duration;

use http::{HeaderMap, StatusCode};
use tonic::{Code, Status};

use super::deadline::deadline_expired;
use super::http_status::code_of_http_status;
use crate::classify::server_delay::{DelayUnit, ServerDelay, read_integer_delay};
use crate::classify::transport::TransportFailure;
use crate::classify::{ClassifierPriority, ClassifyRetry, RetryAction, RetryInfoClassifier};
use crate::info::{Fault, RetryInfo, RetrySafety};

/// The trailer (or trailers-only header) in which a gRPC server asks the client to wait before
/// retrying, in integer milliseconds. Source: gRFC A6 "gRPC Retry Design", "Pushback".
pub(crate) const PUSHBACK_HEADER: &str = "grpc-retry-pushback-ms";

/// The header that carries a gRPC response's status code. Source: the gRPC over HTTP/2
/// protocol ("PROTOCOL-HTTP2.md", `Status`).
const GRPC_STATUS_HEADER: &str = "grpc-status";

/// What a server's `grpc-retry-pushback-ms` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pushback {
    /// No pushback: the client's own backoff applies.
    Absent,
    /// Wait this long before the next attempt.
    After(Duration),
    /// Negative, malformed or more than a day (the crate's longest server delay, as for HTTP's
    /// `Retry-After`): gRFC A6 reads a pushback the client cannot honour
    /// as "do not retry".
    DoNotRetry,
}

impl Pushback {
    /// The first `grpc-retry-pushback-ms` of `headers`, read as `x-amz-retry-after` is (integer
    /// milliseconds, any digit count). Never panics, whatever the bytes.
    fn from_headers(headers: &HeaderMap) -> Self {
        let Some(value) = headers.get(PUSHBACK_HEADER) else {
            return Pushback::Absent;
        };
        match read_integer_delay(value.as_bytes(), DelayUnit::Milliseconds) {
            ServerDelay::After(delay) => Pushback::After(delay),
            ServerDelay::TooLong | ServerDelay::Invalid => Pushback::DoNotRetry,
        }
    }
}

/// A gRPC outcome as retry information: a status code and the server's pushback.
#[derive(Debug, Clone, Copy)]
struct GrpcFailure {
    code: Code,
    pushback: Pushback,
}

impl RetryInfo for GrpcFailure {
    fn retry_safety(&self) -> RetrySafety {
        if self.pushback == Pushback::DoNotRetry {
            return RetrySafety::No;
        }
        match self.code {
            Code::Unavailable | Code::ResourceExhausted | Code::DeadlineExceeded => {
                RetrySafety::Yes
            }
            Code::Unknown | Code::Internal | Code::Aborted => RetrySafety::Maybe,
            _ => RetrySafety::No,
        }
    }

    fn is_throttling(&self) -> bool {
        self.code == Code::ResourceExhausted
    }

    fn is_timeout(&self) -> bool {
        self.code == Code::DeadlineExceeded
    }

    fn retry_after(&self) -> Option<Duration> {
        match self.pushback {
            Pushback::After(delay) => Some(delay),
            _ => None,
        }
    }

    fn fault(&self) -> Fault {
        fault_of(self.code)
    }
}

/// Whose fault a failed call with `code` is (the pushback does not change it).
fn fault_of(code: Code) -> Fault {
    match code {
        Code::Unavailable | Code::ResourceExhausted | Code::DeadlineExceeded => Fault::Server,
        Code::InvalidArgument
        | Code::NotFound
        | Code::AlreadyExists
        | Code::PermissionDenied
        | Code::FailedPrecondition
        | Code::OutOfRange
        | Code::Unimplemented
        | Code::Unauthenticated => Fault::Client,
        _ => Fault::Unknown,
    }
}

impl GrpcFailure {
    fn of(status: &Status) -> Self {
        Self {
            code: status.code(),
            pushback: Pushback::from_headers(status.metadata().as_ref()),
        }
    }
}

/// A gRPC status's retryability, after gRFC A6 "gRPC Retry Design" and the gRPC status-code
/// guide:
///
/// | code the server answered | retried | fault, and the reason ([`ErrorKind`](crate::ErrorKind)) of a retry |
/// |---|---|---|
/// | `UNAVAILABLE` | yes | the server's: `server` |
/// | `RESOURCE_EXHAUSTED` | yes | the server's: `throttling` |
/// | `DEADLINE_EXCEEDED` | yes | the server's: `timeout` |
/// | `UNKNOWN`, `INTERNAL`, `ABORTED` | only for an idempotent call ([`RetrySafety::Maybe`]); no verdict for an undeclared one (left to other classifiers) | unknown: `transient` |
/// | `CANCELLED`, among them the client's own deadline ("Timeout expired") | never | unknown |
/// | `INVALID_ARGUMENT`, `NOT_FOUND`, `ALREADY_EXISTS`, `PERMISSION_DENIED`, `FAILED_PRECONDITION`, `OUT_OF_RANGE`, `UNIMPLEMENTED`, `UNAUTHENTICATED` | never, whatever the call's idempotency: the server said the request is wrong ([`RetrySafety::No`]) | the client's |
/// | every other code (`DATA_LOSS`) | never | unknown |
///
/// A status that a tonic client made of a failure of its connection (tonic keeps that error as
/// the status's [`source`](std::error::Error::source): `UNAVAILABLE` "tcp connect error",
/// `UNKNOWN` "transport error") is judged by that failure, not by the code, as
/// [`TransientErrorClassifier`](crate::classify::TransientErrorClassifier)'s table says: a
/// refused connection is retried for every call, a reset only for an idempotent one, a timeout
/// unless the call is not idempotent.
///
/// `DEADLINE_EXCEEDED` is a status the server sent: a deadline of its own (or of a call it made)
/// passed, and another attempt may succeed. The client's own deadline (`Request::set_timeout`,
/// `Endpoint::timeout`) is not reported so: tonic fails the call with `CANCELLED` "Timeout
/// expired" (its `TimeoutExpired` as the status's source), and that is never retried, since in
/// gRPC the call's deadline bounds all its attempts (gRFC A6; `tonic::TimeoutExpired` itself is
/// described so too); such a status [`is_timeout`](RetryInfo::is_timeout) all the same. For a timeout per attempt, cut each
/// attempt with `attempt_timeout` (a `#[retryable]` fn) or tower's `TimeoutLayer` under a
/// [`RetryLayer`](crate::tower::RetryLayer).
///
/// The status's `grpc-retry-pushback-ms` metadata (a trailer) is the server's `retry_after`: a
/// retry waits at least that long. As gRFC A6 specifies, a pushback that is negative or not a
/// number means "do not retry"; so does one of more than a day.
///
/// ```
/// use retry_core::{RetryInfo, RetrySafety};
/// use std::time::Duration;
/// use tonic::{Code, Status};
///
/// let mut status = Status::resource_exhausted("slow down");
/// status.metadata_mut().insert("grpc-retry-pushback-ms", "250".parse().unwrap());
/// assert!(status.is_throttling());
/// assert_eq!(status.retry_after(), Some(Duration::from_millis(250)));
///
/// let mut refused = Status::unavailable("draining");
/// refused.metadata_mut().insert("grpc-retry-pushback-ms", "-1".parse().unwrap());
/// assert_eq!(refused.retry_safety(), RetrySafety::No);
/// assert_eq!(Status::not_found("no such key").retry_safety(), RetrySafety::No);
/// ```
#[cfg_attr(docsrs, doc(cfg(feature = "tonic")))]
impl RetryInfo for Status {
    fn retry_safety(&self) -> RetrySafety {
        match transport_failure(self) {
            Some(failure) => failure.retry_safety(),
            None => GrpcFailure::of(self).retry_safety(),
        }
    }

    fn is_throttling(&self) -> bool {
        self.code() == Code::ResourceExhausted && transport_failure(self).is_none()
    }

    fn is_timeout(&self) -> bool {
        match transport_failure(self) {
            Some(failure) => failure.is_timeout(),
            None => self.code() == Code::DeadlineExceeded || deadline_expired(self),
        }
    }

    fn retry_after(&self) -> Option<Duration> {
        GrpcFailure::of(self).retry_after()
    }

    fn fault(&self) -> Fault {
        match transport_failure(self) {
            Some(failure) => failure.fault(),
            // The code alone: no metadata lookup (a classification asks for the fault twice).
            None => fault_of(self.code()),
        }
    }
}

/// The failure of the connection a tonic client made `status` of (its source: tonic keeps the
/// transport's error there), if any: that failure, not the code tonic chose for it, says whether
/// the call may have reached the server. A status the server sent has no source.
fn transport_failure(status: &Status) -> Option<TransportFailure> {
    if deadline_expired(status) {
        return None;
    }
    std::error::Error::source(status).and_then(TransportFailure::find)
}

/// Classifies the HTTP responses of a gRPC transport (a tonic `Channel` under a
/// [`RetryLayer`](crate::tower::RetryLayer)) by their `grpc-status` header, as
/// `tonic::Status`'s [`RetryInfo`] does, with the `grpc-retry-pushback-ms` header as the delay.
///
/// A status in the response headers is a trailers-only response: the server failed the call
/// before sending any message, which is when gRFC A6 allows a retry. A response with a
/// message is committed: its status comes in trailers, after the body, and this classifier
/// indicates no action. Errors (the connection failed) are left to other classifiers, e.g.
/// [`TransientErrorClassifier`](crate::classify::TransientErrorClassifier).
///
/// A response with no `grpc-status` and an HTTP status other than 200 came from something in
/// front of the server (a proxy, a load balancer): it is read as gRPC reads it, by gRPC's "HTTP
/// to gRPC Status Code Mapping" (429, 502, 503, 504: `UNAVAILABLE`, retried; 400: `INTERNAL`;
/// 401, 403, 404: `UNAUTHENTICATED`, `PERMISSION_DENIED`, `UNIMPLEMENTED`, never; any other:
/// `UNKNOWN`), so that it gets the verdict the `tonic::Status` a tonic client makes of it gets.
/// gRPC calls are judged by gRPC's codes, not by the HTTP status table of
/// [`HttpStatusClassifier`](crate::http::HttpStatusClassifier).
///
/// Reads only the two headers it needs: it neither allocates nor decodes the status message.
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind, RetryAction};
/// use retry_core::tonic::GrpcStatusClassifier;
/// use std::time::Duration;
///
/// let response = http::Response::builder()
///     .header("grpc-status", "8") // RESOURCE_EXHAUSTED
///     .header("grpc-retry-pushback-ms", "300")
///     .body(())
///     .unwrap();
/// let outcome: Result<_, std::io::Error> = Ok(response);
/// assert_eq!(
///     GrpcStatusClassifier.classify(&outcome),
///     RetryAction::retryable_after(ErrorKind::Throttling, Duration::from_millis(300))
/// );
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(docsrs, doc(cfg(feature = "tonic")))]
pub struct GrpcStatusClassifier;

impl GrpcStatusClassifier {
    /// The verdict on a response's headers: no action without a `grpc-status`, or with `0`
    /// (OK).
    ///
    /// ```
    /// use retry_core::tonic::GrpcStatusClassifier;
    /// let mut headers = http::HeaderMap::new();
    /// headers.insert("grpc-status", http::HeaderValue::from_static("14")); // UNAVAILABLE
    /// assert!(GrpcStatusClassifier::classify_headers(&headers).should_retry());
    /// ```
    pub fn classify_headers(headers: &HeaderMap) -> RetryAction {
        let Some(code) = headers.get(GRPC_STATUS_HEADER) else {
            return RetryAction::NoActionIndicated;
        };
        Self::classify_code(Code::from_bytes(code.as_bytes()), headers)
    }

    /// The verdict on a response's HTTP status and headers: its `grpc-status`, or, when it has
    /// none and its HTTP status is not 200, the code gRPC's HTTP to gRPC mapping gives.
    ///
    /// ```
    /// use http::{HeaderMap, StatusCode};
    /// use retry_core::{ErrorKind, RetryAction};
    /// use retry_core::tonic::GrpcStatusClassifier;
    ///
    /// let headers = HeaderMap::new();
    /// // A load balancer's 503: UNAVAILABLE.
    /// assert_eq!(
    ///     GrpcStatusClassifier::classify_parts(StatusCode::SERVICE_UNAVAILABLE, &headers),
    ///     RetryAction::retryable(ErrorKind::Server)
    /// );
    /// // 200 without grpc-status: the status comes in the trailers.
    /// assert_eq!(
    ///     GrpcStatusClassifier::classify_parts(StatusCode::OK, &headers),
    ///     RetryAction::NoActionIndicated
    /// );
    /// ```
    pub fn classify_parts(status: StatusCode, headers: &HeaderMap) -> RetryAction {
        match headers.get(GRPC_STATUS_HEADER) {
            Some(code) => Self::classify_code(Code::from_bytes(code.as_bytes()), headers),
            None => match code_of_http_status(status) {
                Some(code) => Self::classify_code(code, headers),
                None => RetryAction::NoActionIndicated,
            },
        }
    }

    /// The verdict on a call that ended with `code`, with the pushback of `headers`.
    fn classify_code(code: Code, headers: &HeaderMap) -> RetryAction {
        if code == Code::Ok {
            return RetryAction::NoActionIndicated;
        }
        RetryInfoClassifier::classify_error(&GrpcFailure {
            code,
            pushback: Pushback::from_headers(headers),
        })
    }
}

impl<B, E> ClassifyRetry<http::Response<B>, E> for GrpcStatusClassifier {
    fn classify(&self, outcome: &Result<http::Response<B>, E>) -> RetryAction {
        match outcome {
            Ok(response) => Self::classify_parts(response.status(), response.headers()),
            Err(_) => RetryAction::NoActionIndicated,
        }
    }

    fn name(&self) -> &'static str {
        "grpc status"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::http_status()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::ErrorKind;
    use crate::classify::server_delay::MAX_SERVER_DELAY;
    use http::HeaderValue;
    use proptest::prelude::*;

    fn pushback(value: &[u8]) -> Pushback {
        let mut headers = HeaderMap::new();
        headers.insert(
            PUSHBACK_HEADER,
            HeaderValue::from_bytes(value).expect("valid test header value"),
        );
        Pushback::from_headers(&headers)
    }

    fn status_with_pushback(code: Code, value: &'static str) -> Status {
        let mut status = Status::new(code, "test");
        status
            .metadata_mut()
            .insert(PUSHBACK_HEADER, value.parse().expect("ASCII metadata"));
        status
    }

    #[test]
    fn pushback_values() {
        assert_eq!(Pushback::from_headers(&HeaderMap::new()), Pushback::Absent);
        assert_eq!(pushback(b"0"), Pushback::After(Duration::ZERO));
        assert_eq!(
            pushback(b" 250 "),
            Pushback::After(Duration::from_millis(250))
        );
        assert_eq!(pushback(b"86400000"), Pushback::After(MAX_SERVER_DELAY));
        for refused in [
            &b"86400001"[..],
            b"18446744073709551616",
            b"99999999999999999999999999999999999999",
            b"-1",
            b"-0",
            b"+5",
            b"1.5",
            b"",
            b"soon",
            b"\xff",
        ] {
            assert_eq!(pushback(refused), Pushback::DoNotRetry, "{refused:?}");
        }
    }

    #[test]
    fn codes_follow_grpc_a6() {
        let verdict = |status: Status| RetryInfoClassifier::classify_error(&status);
        assert_eq!(
            verdict(Status::unavailable("x")),
            RetryAction::retryable(ErrorKind::Server)
        );
        assert_eq!(
            verdict(Status::resource_exhausted("x")),
            RetryAction::retryable(ErrorKind::Throttling)
        );
        assert_eq!(
            verdict(Status::deadline_exceeded("x")),
            RetryAction::retryable(ErrorKind::Timeout)
        );
        for code in [Code::Unknown, Code::Internal, Code::Aborted] {
            assert_eq!(
                verdict(Status::new(code, "x")),
                RetryAction::NoActionIndicated
            );
        }
        for code in [
            Code::Ok,
            Code::Cancelled,
            Code::InvalidArgument,
            Code::NotFound,
            Code::AlreadyExists,
            Code::PermissionDenied,
            Code::FailedPrecondition,
            Code::OutOfRange,
            Code::Unimplemented,
            Code::DataLoss,
            Code::Unauthenticated,
        ] {
            assert_eq!(
                verdict(Status::new(code, "x")),
                RetryAction::RetryForbidden,
                "{code:?}"
            );
        }
    }

    #[test]
    fn a_status_made_of_a_transport_failure_is_judged_by_that_failure() {
        use std::io;
        let from = |error: io::Error| Status::from_error(Box::new(error));
        // tonic's UNAVAILABLE "tcp connect error": nothing was sent.
        let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
        let refused = Status::from_error(Box::new(tonic::ConnectError(Box::new(refused))));
        assert_eq!(refused.code(), Code::Unavailable);
        assert_eq!(
            RetryInfoClassifier::classify_error(&refused),
            RetryAction::retryable(ErrorKind::Transient)
        );
        // UNKNOWN "transport error" over a reset: lost, retried only for an idempotent call.
        let reset = from(io::ErrorKind::ConnectionReset.into());
        assert_eq!(reset.code(), Code::Unknown);
        assert_eq!(
            (reset.retry_safety(), reset.fault()),
            (RetrySafety::Maybe, Fault::Unknown)
        );
        let idempotent = crate::classify::Idempotency::Idempotent;
        assert_eq!(
            RetryInfoClassifier::classify_error_for(&reset, idempotent),
            RetryAction::retryable(ErrorKind::Transient)
        );
        let timed_out = from(io::ErrorKind::TimedOut.into());
        assert!(timed_out.is_timeout());
        assert_eq!(
            RetryInfoClassifier::classify_error(&timed_out),
            RetryAction::retryable(ErrorKind::Timeout)
        );
        // The same code answered by the server, without a source: by the code.
        assert_eq!(Status::unavailable("x").fault(), Fault::Server);
    }

    #[test]
    fn pushback_is_the_delay_and_a_bad_one_forbids_the_retry() {
        let status = status_with_pushback(Code::ResourceExhausted, "1200");
        assert_eq!(
            RetryInfoClassifier::classify_error(&status),
            RetryAction::retryable_after(ErrorKind::Throttling, Duration::from_millis(1200))
        );
        for bad in ["-5", "abc", "100000000000000000000000"] {
            let status = status_with_pushback(Code::Unavailable, bad);
            assert_eq!(
                RetryInfoClassifier::classify_error(&status),
                RetryAction::RetryForbidden,
                "{bad}"
            );
        }
    }

    #[test]
    fn the_classifier_reads_trailers_only_responses() {
        let classify = |pairs: &[(&'static str, &'static str)]| {
            let mut response = http::Response::new(());
            for (name, value) in pairs {
                response
                    .headers_mut()
                    .insert(*name, HeaderValue::from_static(value));
            }
            let outcome: Result<_, std::io::Error> = Ok(response);
            GrpcStatusClassifier.classify(&outcome)
        };
        assert_eq!(classify(&[]), RetryAction::NoActionIndicated);
        assert_eq!(
            classify(&[("grpc-status", "0")]),
            RetryAction::NoActionIndicated
        );
        assert_eq!(
            classify(&[("grpc-status", "14")]),
            RetryAction::retryable(ErrorKind::Server)
        );
        assert_eq!(
            classify(&[("grpc-status", "5")]),
            RetryAction::RetryForbidden,
            "NOT_FOUND"
        );
        assert_eq!(
            classify(&[("grpc-status", "14"), (PUSHBACK_HEADER, "x")]),
            RetryAction::RetryForbidden
        );
        assert_eq!(
            classify(&[("grpc-status", "garbage")]),
            RetryAction::NoActionIndicated,
            "an unknown code is UNKNOWN: no verdict"
        );
    }

    proptest! {
        #[test]
        fn pushback_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(value) = HeaderValue::from_bytes(&bytes) {
                let mut headers = HeaderMap::new();
                headers.insert(PUSHBACK_HEADER, value);
                headers.insert(GRPC_STATUS_HEADER, HeaderValue::from_static("14"));
                let _ = GrpcStatusClassifier::classify_headers(&headers);
            }
        }

        #[test]
        fn digits_of_any_count(digits in "[0-9]{1,60}") {
            let expected = match digits.parse::<u64>() {
                Ok(ms) if ms <= 86_400_000 => Pushback::After(Duration::from_millis(ms)),
                _ => Pushback::DoNotRetry,
            };
            prop_assert_eq!(pushback(digits.as_bytes()), expected);
        }
    }
}
