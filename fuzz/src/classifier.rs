//! `HttpStatusClassifier` on an `http::Response`: the verdict from the status, and the delay
//! from the response's headers.
//!
//! Input: `name=value` lines ([`crate::lines`]): `status=` (default 503), `retryable=` (a
//! comma-separated list replacing the default retryable codes), the clock and the headers as in
//! [`crate::retry_after`].

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::time::SystemTime;

use http::{Response, StatusCode};
use retry_core::{ClassifyRetry, ErrorKind, HttpStatusClassifier, RetryAction, RetryAfter};

use crate::{lines, retry_after};

/// The clock of the input being run: the classifier takes a `fn() -> SystemTime`.
static NOW_SECONDS: AtomicI64 = AtomicI64::new(retry_after::DEFAULT_NOW);
static NOW_NANOS: AtomicU32 = AtomicU32::new(0);

fn input_clock() -> SystemTime {
    retry_after::system_time((
        NOW_SECONDS.load(Ordering::Relaxed),
        NOW_NANOS.load(Ordering::Relaxed),
    ))
}

/// The codes retried by default: 500, 502, 503, 504 (Smithy's `TRANSIENT_ERROR_STATUS_CODES`,
/// smithy-rs `aws-smithy-runtime`).
const DEFAULT_RETRYABLE: [u16; 4] = [500, 502, 503, 504];

/// The verdict on `status` with `retryable` codes and what the headers ask for (`retry_after`):
/// 429 is throttling whatever the list; a listed 5xx is a server error, any other listed code a
/// client error; anything else indicates nothing. A retry asked for more than a day away is
/// forbidden; an unreadable or absent header leaves the client's own backoff.
pub fn expected(status: u16, retryable: &[u16], retry_after: RetryAfter) -> RetryAction {
    let kind = match status {
        429 => ErrorKind::Throttling,
        _ if !retryable.contains(&status) => return RetryAction::NoActionIndicated,
        500..=599 => ErrorKind::Server,
        _ => ErrorKind::Client,
    };
    match retry_after {
        RetryAfter::After(delay) => RetryAction::retryable_after(kind, delay),
        RetryAfter::TooLong => RetryAction::RetryForbidden,
        _ => RetryAction::retryable(kind),
    }
}

/// The classifier's verdict on the input's response equals [`expected`] with what
/// [`retry_after::expected`] reads; an `Err` outcome indicates nothing. `None` when the input's
/// status, list or clock is unusable.
pub fn check(data: &[u8]) -> Option<()> {
    let now = retry_after::now_of(data)?;
    let status = match lines::first(data, "status") {
        Some(value) => lines::number::<u16>(value)?,
        None => 503,
    };
    let status_code = StatusCode::from_u16(status).ok()?;
    let retryable: Vec<u16> = match lines::first(data, "retryable") {
        Some(list) => std::str::from_utf8(list)
            .ok()?
            .split(',')
            .filter(|code| !code.trim().is_empty())
            .map(|code| code.trim().parse().ok())
            .collect::<Option<_>>()?,
        None => DEFAULT_RETRYABLE.to_vec(),
    };
    let codes = retryable
        .iter()
        .map(|&code| StatusCode::from_u16(code).ok())
        .collect::<Option<Vec<_>>>()?;

    NOW_SECONDS.store(now.0, Ordering::Relaxed);
    NOW_NANOS.store(now.1, Ordering::Relaxed);
    let mut classifier = HttpStatusClassifier::new().with_clock(input_clock);
    if lines::first(data, "retryable").is_some() {
        classifier = classifier.with_retryable_status_codes(codes);
    }
    let headers = retry_after::headers_of(data);
    let mut response = Response::new(());
    *response.status_mut() = status_code;
    *response.headers_mut() = headers.clone();

    let want = expected(status, &retryable, retry_after::expected(&headers, now));
    let ok: Result<_, ()> = Ok(response);
    assert_eq!(
        classifier.classify(&ok),
        want,
        "status {status}, {retryable:?}, {headers:?}"
    );
    assert_eq!(classifier.classify_parts(status_code, &headers), want);
    let failed: Result<Response<()>, ()> = Err(());
    assert_eq!(classifier.classify(&failed), RetryAction::NoActionIndicated);
    Some(())
}
