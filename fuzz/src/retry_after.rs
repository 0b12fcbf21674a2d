//! `retry_core::http::RetryAfter::from_headers` and `retry_core::http::parse_retry_after` (the
//! crate's one reader of `x-amz-retry-after` and `Retry-After`, which gRPC's pushback shares): a
//! reference model of both headers.
//!
//! Input: `name=value` lines ([`crate::lines`]). `now=<seconds since the epoch>` (and
//! `now_nanos=`) sets the clock; every other line whose name and value make a valid header is
//! appended to the header map, in order.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderName, HeaderValue};
use retry_core::http::{RetryAfter, parse_retry_after};

use crate::decimal::{Decimal, digits};
use crate::{http_date, lines};

/// The longest delay `parse_retry_after` documents it accepts: one day.
pub const MAX_DELAY_SECONDS: u64 = 86_400;

/// The clock when the input does not set one: Thu, 28 May 2026 12:00:00 GMT.
pub const DEFAULT_NOW: i64 = 1_779_969_600;

/// The latest clock the targets use: the last second of year 9999, the last an IMF-fixdate can
/// write. Earlier than the epoch is a broken clock, not a server's input.
pub const LATEST_NOW: i64 = 253_402_300_799;

/// The clock an input sets, as whole seconds and nanoseconds since the epoch; `None` when the
/// clock is out of `[0, LATEST_NOW]`.
pub fn now_of(data: &[u8]) -> Option<(i64, u32)> {
    let seconds = match lines::first(data, "now") {
        Some(value) => lines::number(value)?,
        None => DEFAULT_NOW,
    };
    let nanos = match lines::first(data, "now_nanos") {
        Some(value) => lines::number::<u32>(value)?.min(999_999_999),
        None => 0,
    };
    (0..=LATEST_NOW)
        .contains(&seconds)
        .then_some((seconds, nanos))
}

/// `now` as a [`SystemTime`].
pub fn system_time((seconds, nanos): (i64, u32)) -> SystemTime {
    let seconds = u64::try_from(seconds).expect("now_of keeps the clock after the epoch");
    UNIX_EPOCH + Duration::new(seconds, nanos)
}

/// The headers of an input: every line but the clock's that is a valid header.
pub fn headers_of(data: &[u8]) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in lines::pairs(data) {
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            headers.append(name, value);
        }
    }
    headers
}

/// What the reference model makes of one header value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Value {
    /// A delay of at most a day.
    Delay(Duration),
    /// Well-formed, but more than a day away.
    TooLong,
    /// Not a value of the header's grammar.
    Invalid,
}

/// `x-amz-retry-after`: `1*DIGIT` milliseconds.
fn amz_value(value: &[u8]) -> Value {
    match digits(trim_ows(value), MAX_DELAY_SECONDS * 1_000) {
        Decimal::AtMost(millis) => Value::Delay(Duration::from_millis(millis)),
        Decimal::Above => Value::TooLong,
        Decimal::NotDigits => Value::Invalid,
    }
}

/// `Retry-After`: delta-seconds, or an HTTP-date ([`http_date`]) measured from `now`, a date at
/// or before `now` giving zero.
fn retry_after_value(value: &[u8], (now_seconds, now_nanos): (i64, u32)) -> Value {
    let value = trim_ows(value);
    match digits(value, MAX_DELAY_SECONDS) {
        Decimal::AtMost(seconds) => return Value::Delay(Duration::from_secs(seconds)),
        Decimal::Above => return Value::TooLong,
        Decimal::NotDigits => {}
    }
    let Some(date) = http_date::unix_seconds(value, now_seconds) else {
        return Value::Invalid;
    };
    let delay = if date <= now_seconds {
        Duration::ZERO
    } else {
        let whole = u64::try_from(date - now_seconds).expect("date after now");
        Duration::from_secs(whole) - Duration::from_nanos(u64::from(now_nanos))
    };
    if delay <= Duration::from_secs(MAX_DELAY_SECONDS) {
        Value::Delay(delay)
    } else {
        Value::TooLong
    }
}

/// The reference model of `RetryAfter::from_headers`: the first value of each header; a delay
/// in `x-amz-retry-after` wins, then one in `Retry-After`; else a well-formed value too far away
/// in either makes `TooLong`, else a present one `Invalid`; no header is `Absent`.
pub fn expected(headers: &HeaderMap, now: (i64, u32)) -> RetryAfter {
    let amz = headers
        .get("x-amz-retry-after")
        .map(|value| amz_value(value.as_bytes()));
    let retry_after = headers
        .get("retry-after")
        .map(|value| retry_after_value(value.as_bytes(), now));
    let values = [amz, retry_after];
    let delay = values.iter().flatten().find_map(|value| match value {
        Value::Delay(delay) => Some(*delay),
        _ => None,
    });
    if let Some(delay) = delay {
        RetryAfter::After(delay)
    } else if values.contains(&Some(Value::TooLong)) {
        RetryAfter::TooLong
    } else if values.contains(&Some(Value::Invalid)) {
        RetryAfter::Invalid
    } else {
        RetryAfter::Absent
    }
}

/// Without leading and trailing spaces and tabs (RFC 9110 §5.5's optional whitespace).
fn trim_ows(value: &[u8]) -> &[u8] {
    let is_ows = |byte: &u8| matches!(byte, b' ' | b'\t');
    let start = value.iter().take_while(|b| is_ows(b)).count();
    let end = value.len()
        - value[start..]
            .iter()
            .rev()
            .take_while(|b| is_ows(b))
            .count();
    &value[start..end]
}

/// `RetryAfter::from_headers` on an input agrees with [`expected`], and `parse_retry_after`
/// with its delay (so neither exceeds what the header said nor a day); `None` when the input
/// sets no usable clock.
pub fn check(data: &[u8]) -> Option<()> {
    let now = now_of(data)?;
    let headers = headers_of(data);
    let outcome = RetryAfter::from_headers(&headers, system_time(now));
    assert_eq!(
        outcome,
        expected(&headers, now),
        "RetryAfter::from_headers at now = {now:?} of {headers:?}"
    );
    let parsed = parse_retry_after(&headers, system_time(now));
    assert_eq!(
        parsed,
        outcome.delay(),
        "parse_retry_after at now = {now:?} of {headers:?}"
    );
    if let Some(delay) = parsed {
        assert!(
            delay <= Duration::from_secs(MAX_DELAY_SECONDS),
            "{delay:?} is over a day"
        );
    }
    Some(())
}
