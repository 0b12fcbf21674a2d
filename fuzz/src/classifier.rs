//! `HttpStatusClassifier` on an `http::Response`: the verdict from the status, and the delay
//! from the response's headers.
//!
//! Input: `name=value` lines ([`crate::lines`]): `status=` (default 503), `retryable=` (a
//! comma-separated list replacing the table of statuses), the clock and the headers as in
//! [`crate::retry_after`].

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::time::SystemTime;

use http::{Response, StatusCode};
use retry_core::http::{HttpStatusClassifier, RetryAfter};
use retry_core::{ClassifyRetry, ErrorKind, RetryAction};

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

/// The 5xx statuses the table never retries: 501, 505, 506, 508, 510, 511 (RFC 9110 §15.6.2,
/// §15.6.6, RFC 2295, RFC 5842, RFC 2774, RFC 6585 §6: a retry cannot cure them).
const NEVER_RETRIED: [u16; 6] = [501, 505, 506, 508, 510, 511];

/// What the status alone says: `Ok(Some(kind))` retried as `kind`, `Ok(None)` no verdict,
/// `Err(())` never retried.
type StatusModel = Result<Option<ErrorKind>, ()>;

/// The crate's table of statuses (`HttpStatusClassifier`'s rustdoc), written apart from it: 408
/// transient, 429 throttling, other statuses below 500 nothing, the six permanent 5xx never,
/// every other 5xx a server error, anything above 599 nothing.
fn table(status: u16) -> StatusModel {
    match status {
        408 => Ok(Some(ErrorKind::Transient)),
        429 => Ok(Some(ErrorKind::Throttling)),
        _ if NEVER_RETRIED.contains(&status) => Err(()),
        500..=599 => Ok(Some(ErrorKind::Server)),
        _ => Ok(None),
    }
}

/// A user's list in place of the table: 429 is throttling whatever the list; a listed 5xx is a
/// server error, any other listed code a client error; anything else indicates nothing.
fn listed(status: u16, retryable: &[u16]) -> StatusModel {
    Ok(match status {
        429 => Some(ErrorKind::Throttling),
        _ if !retryable.contains(&status) => None,
        500..=599 => Some(ErrorKind::Server),
        _ => Some(ErrorKind::Client),
    })
}

/// The verdict on `status` by the table, or by the `retryable` list when one is given, with what
/// the headers ask for (`retry_after`), which only a retried status reads: a retry asked for
/// more than a day away is forbidden; an unreadable or absent header leaves the client's own
/// backoff.
pub fn expected(status: u16, retryable: Option<&[u16]>, retry_after: RetryAfter) -> RetryAction {
    let model = match retryable {
        Some(list) => listed(status, list),
        None => table(status),
    };
    let kind = match model {
        Err(()) => return RetryAction::RetryForbidden,
        Ok(None) => return RetryAction::NoActionIndicated,
        Ok(Some(kind)) => kind,
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
    let retryable: Option<Vec<u16>> = match lines::first(data, "retryable") {
        Some(list) => Some(
            std::str::from_utf8(list)
                .ok()?
                .split(',')
                .filter(|code| !code.trim().is_empty())
                .map(|code| code.trim().parse().ok())
                .collect::<Option<_>>()?,
        ),
        None => None,
    };

    NOW_SECONDS.store(now.0, Ordering::Relaxed);
    NOW_NANOS.store(now.1, Ordering::Relaxed);
    let mut classifier = HttpStatusClassifier::new().with_clock(input_clock);
    if let Some(list) = &retryable {
        let codes = list
            .iter()
            .map(|&code| StatusCode::from_u16(code).ok())
            .collect::<Option<Vec<_>>>()?;
        classifier = classifier.with_retryable_status_codes(codes);
    }
    let headers = retry_after::headers_of(data);
    let mut response = Response::new(());
    *response.status_mut() = status_code;
    *response.headers_mut() = headers.clone();

    let want = expected(
        status,
        retryable.as_deref(),
        retry_after::expected(&headers, now),
    );
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
