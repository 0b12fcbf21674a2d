//! Properties of the parsers of untrusted and user input, each against a reference written
//! here, with values near every integer limit:
//!
//! * `Retry-After` delta-seconds and HTTP-dates (RFC 9110's three formats), and
//!   `x-amz-retry-after` milliseconds, through `parse_retry_after`, `RetryAfter::from_headers`
//!   (a delay too long told from an unreadable one) and `HttpStatusClassifier`;
//! * gRPC's `grpc-retry-pushback-ms` milliseconds, through `tonic::Status`'s `RetryInfo` and
//!   `GrpcStatusClassifier` (gRFC A6: a pushback that cannot be honoured forbids the retry);
//! * `RetryConfig::from_lookup`'s numbers (`RETRY_MAX_ATTEMPTS`, `RETRY_QUOTA_CAPACITY`) and
//!   durations (`RETRY_TIMEOUT`, `RETRY_INITIAL_BACKOFF`, `RETRY_MAX_BACKOFF`), an error naming
//!   the variable.
//!
//! The references know each value by construction: a number is generated, then written (leading
//! zeros, whitespace, a sign); a date is generated as seconds since the epoch, then written in a
//! calendar computed here. The fuzz targets in `fuzz/` check the same parsers from the other
//! side: arbitrary text, read by reference parsers.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::{HeaderMap, HeaderValue, Response, StatusCode};
use proptest::prelude::*;
use proptest::sample::select;
use retry_core::http::{HttpStatusClassifier, RetryAfter, parse_retry_after};
use retry_core::tonic::GrpcStatusClassifier;
use retry_core::{ClassifyRetry, ConfigError, ErrorKind, RetryAction, RetryConfig, RetryInfo};

/// The longest `Retry-After` delay honoured: one day.
const ONE_DAY_SECONDS: u128 = 86_400;

/// The longest duration a configuration accepts: one year of 365 days.
const ONE_YEAR_NANOS: u128 = 365 * 86_400 * 1_000_000_000;

/// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the four-digit years an HTTP-date can write.
const YEAR_1_START: i64 = -62_135_596_800;
const YEAR_9999_END: i64 = 253_402_300_799;

/// An average Gregorian year, in seconds.
const YEAR: i64 = 31_556_952;

/// Cases per property: the limits are drawn often enough to be met in every run.
const CASES: u32 = 1_024;

// ---------------------------------------------------------------------------------------------
// Numbers: a value known by construction, written with leading zeros and surrounding spaces.

/// A non-negative whole number: one that fits a `u128`, or one of more than 39 significant digits.
#[derive(Debug, Clone)]
enum Number {
    Fits(u128),
    Huge(String),
}

impl Number {
    fn digits(&self) -> String {
        match self {
            Number::Fits(value) => value.to_string(),
            Number::Huge(digits) => digits.clone(),
        }
    }

    /// The value when it is at most `limit`.
    fn at_most(&self, limit: u128) -> Option<u128> {
        match self {
            Number::Fits(value) if *value <= limit => Some(*value),
            _ => None,
        }
    }
}

/// Numbers near every integer limit a parser could trip on (and the limits of the settings),
/// everyday values, and digit counts no integer holds.
fn number() -> impl Strategy<Value = Number> {
    let limits = [
        0,
        1,
        9,
        10,
        ONE_DAY_SECONDS,
        ONE_DAY_SECONDS * 1_000,
        u128::from(u8::MAX),
        u128::from(u16::MAX),
        u128::from(u32::MAX),
        u128::from(u64::MAX),
        ONE_YEAR_NANOS,
        u128::MAX / 1_000_000_000,
        u128::MAX / 3_600_000_000_000,
        u128::MAX,
    ];
    prop_oneof![
        3 => select(limits.to_vec()).prop_map(Number::Fits),
        3 => (select(limits.to_vec()), -3i8..=3).prop_map(|(limit, offset)| Number::Fits(
            limit.saturating_add_signed(i128::from(offset))
        )),
        1 => (0u128..100_000).prop_map(Number::Fits),
        1 => any::<u64>().prop_map(|value| Number::Fits(value.into())),
        1 => any::<u128>().prop_map(Number::Fits),
        1 => "[1-9][0-9]{39,120}".prop_map(Number::Huge),
    ]
}

/// Leading zeros, and spaces and tabs around: none of them change the value.
fn written(number: &Number, zeros: usize, before: &str, after: &str) -> String {
    format!("{before}{}{}{after}", "0".repeat(zeros), number.digits())
}

fn ows() -> impl Strategy<Value = &'static str> {
    select(vec!["", " ", "\t", "  \t "])
}

// ---------------------------------------------------------------------------------------------
// Dates: seconds since the epoch, written in the proleptic Gregorian calendar.

const DAY_NAMES: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAY_NAMES: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// A date and time of day, as an HTTP-date writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Civil {
    year: i64,
    month: usize,
    day: i64,
    weekday: usize,
    hour: i64,
    minute: i64,
    second: i64,
}

/// The calendar date of a day number (days since 1970-01-01), by the days-from-civil inverse
/// over 400-year eras (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms").
fn civil(unix_seconds: i64) -> Civil {
    let days = unix_seconds.div_euclid(86_400);
    let second_of_day = unix_seconds.rem_euclid(86_400);
    let shifted = days + 719_468; // days since 0000-03-01
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    Civil {
        year: year_of_era + era * 400 + i64::from(month <= 2),
        month: usize::try_from(month - 1).expect("1 to 12"),
        day,
        // 1970-01-01 was a Thursday.
        weekday: usize::try_from((days + 4).rem_euclid(7)).expect("0 to 6"),
        hour: second_of_day / 3_600,
        minute: second_of_day / 60 % 60,
        second: second_of_day % 60,
    }
}

fn imf_fixdate(c: Civil) -> String {
    format!(
        "{}, {:02} {} {:04} {:02}:{:02}:{:02} GMT",
        DAY_NAMES[c.weekday], c.day, MONTHS[c.month], c.year, c.hour, c.minute, c.second
    )
}

fn rfc850_date(c: Civil) -> String {
    format!(
        "{}, {:02}-{}-{:02} {:02}:{:02}:{:02} GMT",
        LONG_DAY_NAMES[c.weekday],
        c.day,
        MONTHS[c.month],
        c.year % 100,
        c.hour,
        c.minute,
        c.second
    )
}

fn asctime_date(c: Civil) -> String {
    format!(
        "{} {} {:>2} {:02}:{:02}:{:02} {:04}",
        DAY_NAMES[c.weekday], MONTHS[c.month], c.day, c.hour, c.minute, c.second, c.year
    )
}

/// Seconds since the epoch of a date and time (days-from-civil, the inverse of [`civil`]).
fn unix_of(year: i64, month: usize, day: i64, seconds_of_day: i64) -> i64 {
    let month = i64::try_from(month).expect("0 to 11") + 1;
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    (era * 146_097 + day_of_era - 719_468) * 86_400 + seconds_of_day
}

/// The instant an rfc850-date written for `written` names at `now`. RFC 9110 §5.6.7 reads a
/// two-digit year that "appears to be more than 50 years in the future" as the most recent
/// past year with those digits: the year with those digits in `(now_year - 50, now_year + 50]`.
/// In another century than the one written, the day name must still be the date's, and
/// February 29 must exist: otherwise the date is malformed (`None`).
fn rfc850_reading(written: i64, now_unix: i64) -> Option<i64> {
    let date = civil(written);
    let now_year = civil(now_unix).year;
    let mut year = now_year - now_year.rem_euclid(100) + date.year.rem_euclid(100);
    if year > now_year + 50 {
        year -= 100;
    } else if year <= now_year - 50 {
        year += 100;
    }
    let read = unix_of(year, date.month, date.day, written.rem_euclid(86_400));
    let read_civil = civil(read);
    (read_civil.day == date.day && read_civil.weekday == date.weekday).then_some(read)
}

/// Now, anywhere from the epoch to the end of year 9999, with the edges and today's decades well
/// represented, and a fraction of a second.
fn now() -> impl Strategy<Value = (i64, u32)> {
    let seconds = prop_oneof![
        Just(0),
        Just(YEAR_9999_END),
        1_600_000_000i64..2_000_000_000,
        0..=YEAR_9999_END,
    ];
    (seconds, prop_oneof![Just(0u32), 0u32..1_000_000_000])
}

fn system_time((seconds, nanos): (i64, u32)) -> SystemTime {
    UNIX_EPOCH + Duration::new(u64::try_from(seconds).expect("after the epoch"), nanos)
}

/// The delay an HTTP-date for `date` asks for at `now`: zero for a date at or before now,
/// `None` beyond a day.
fn delay_until(date: i64, (now_seconds, now_nanos): (i64, u32)) -> Option<Duration> {
    let date_nanos = i128::from(date) * 1_000_000_000;
    let now_total = i128::from(now_seconds) * 1_000_000_000 + i128::from(now_nanos);
    let nanos = u128::try_from(date_nanos - now_total).unwrap_or(0);
    (nanos <= ONE_DAY_SECONDS * 1_000_000_000)
        .then(|| Duration::from_nanos(u64::try_from(nanos).expect("at most a day")))
}

// ---------------------------------------------------------------------------------------------
// Headers.

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in pairs {
        map.append(
            *name,
            HeaderValue::from_str(value).expect("generated values are valid header values"),
        );
    }
    map
}

/// What `HttpStatusClassifier` says of a 503 with these headers, its clock fixed at `now`.
fn classify_503(map: &HeaderMap, now: (i64, u32)) -> RetryAction {
    thread_local! {
        static NOW: std::cell::Cell<(i64, u32)> = const { std::cell::Cell::new((0, 0)) };
    }
    fn clock() -> SystemTime {
        system_time(NOW.with(std::cell::Cell::get))
    }
    NOW.with(|cell| cell.set(now));
    let mut response = Response::new(());
    *response.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
    *response.headers_mut() = map.clone();
    let outcome: Result<_, ()> = Ok(response);
    HttpStatusClassifier::new()
        .with_clock(clock)
        .classify(&outcome)
}

/// The classifier's verdict on a 503 whose headers say `retry_after`: the delay, no retry when
/// it is more than a day away, the client's own backoff when unreadable or absent.
fn server_error_verdict(retry_after: RetryAfter) -> RetryAction {
    match retry_after {
        RetryAfter::After(delay) => RetryAction::retryable_after(ErrorKind::Server, delay),
        RetryAfter::TooLong => RetryAction::RetryForbidden,
        RetryAfter::Invalid | RetryAfter::Absent => RetryAction::retryable(ErrorKind::Server),
    }
}

/// What `RetryAfter::from_headers` says of these headers at `now`.
fn outcome(map: &HeaderMap, now: (i64, u32)) -> RetryAfter {
    RetryAfter::from_headers(map, system_time(now))
}

/// The outcome of a well-formed value that asks for `delay` (`None`: more than a day).
fn well_formed(delay: Option<Duration>) -> RetryAfter {
    delay.map_or(RetryAfter::TooLong, RetryAfter::After)
}

/// A value that is not `1*DIGIT`, made from a number: a sign, a fraction, an exponent, a unit,
/// a space or a non-ASCII digit put in.
fn malformed(number: &Number, shape: usize) -> String {
    let digits = number.digits();
    match shape {
        0 => format!("-{digits}"),
        1 => format!("+{digits}"),
        2 => format!("{digits}.5"),
        3 => format!("{digits}e3"),
        4 => format!("{digits}s"),
        5 => format!("{digits} 1"),
        6 => format!("0x{digits}"),
        _ => format!("{digits}\u{0665}"), // ARABIC-INDIC DIGIT FIVE
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn retry_after_delta_seconds_near_every_limit(
        seconds in number(),
        zeros in 0usize..25,
        before in ows(),
        after in ows(),
        now in now(),
    ) {
        let value = written(&seconds, zeros, before, after);
        let map = headers(&[("retry-after", &value)]);
        let expected = seconds
            .at_most(ONE_DAY_SECONDS)
            .map(|s| Duration::from_secs(u64::try_from(s).expect("at most a day")));
        prop_assert_eq!(parse_retry_after(&map, system_time(now)), expected, "{:?}", value);
        prop_assert_eq!(outcome(&map, now), well_formed(expected), "{:?}", value);
        prop_assert_eq!(classify_503(&map, now), server_error_verdict(well_formed(expected)));
    }

    #[test]
    fn x_amz_retry_after_milliseconds_near_every_limit(
        millis in number(),
        zeros in 0usize..25,
        before in ows(),
        after in ows(),
        fallback in prop::option::of(0u64..1_000),
    ) {
        let value = written(&millis, zeros, before, after);
        let fallback_text = fallback.map(|seconds| seconds.to_string());
        let mut pairs = vec![("x-amz-retry-after", value.as_str())];
        if let Some(text) = &fallback_text {
            pairs.push(("retry-after", text));
        }
        let map = headers(&pairs);
        // A valid x-amz-retry-after wins; an out-of-range one falls through to Retry-After.
        let expected = millis
            .at_most(ONE_DAY_SECONDS * 1_000)
            .map(|ms| Duration::from_millis(u64::try_from(ms).expect("at most a day")))
            .or(fallback.map(Duration::from_secs));
        let now = (1_779_969_600, 0);
        prop_assert_eq!(parse_retry_after(&map, system_time(now)), expected, "{:?}", value);
        // Either header's delay, else too long: both values are well-formed.
        prop_assert_eq!(outcome(&map, now), well_formed(expected), "{:?}", value);
        prop_assert_eq!(classify_503(&map, now), server_error_verdict(well_formed(expected)));
    }

    #[test]
    fn malformed_numbers_ask_for_no_delay(number in number(), shape in 0usize..8) {
        let value = malformed(&number, shape);
        let clock = (1_779_969_600, 0);
        let now = system_time(clock);
        let alone = headers(&[("retry-after", &value)]);
        prop_assert_eq!(parse_retry_after(&alone, now), None);
        prop_assert_eq!(outcome(&alone, clock), RetryAfter::Invalid, "{:?}", value);
        let amz = headers(&[("x-amz-retry-after", &value), ("retry-after", "7")]);
        prop_assert_eq!(parse_retry_after(&amz, now), Some(Duration::from_secs(7)), "{:?}", value);
        let amz_alone = headers(&[("x-amz-retry-after", &value)]);
        prop_assert_eq!(outcome(&amz_alone, clock), RetryAfter::Invalid, "{:?}", value);
    }

    #[test]
    fn http_dates_in_every_format_from_year_1_to_9999(
        now in now(),
        date in prop_oneof![
            // Around now: the delays a server asks for.
            (-3 * 86_400i64..=3 * 86_400).prop_map(|offset| (offset, true)),
            // Within 60 years of now: where a two-digit year changes century.
            (-60 * YEAR..=60 * YEAR).prop_map(|offset| (offset, true)),
            (YEAR_1_START..=YEAR_9999_END).prop_map(|date| (date, false)),
        ],
        format in 0usize..3,
        before in ows(),
        after in ows(),
    ) {
        let (date, relative) = date;
        let date = if relative { (now.0 + date).clamp(YEAR_1_START, YEAR_9999_END) } else { date };
        let written = civil(date);
        let (text, named) = match format {
            0 => (imf_fixdate(written), Some(date)),
            1 => (rfc850_date(written), rfc850_reading(date, now.0)),
            _ => (asctime_date(written), Some(date)),
        };
        let expected = named.and_then(|named| delay_until(named, now));
        let map = headers(&[("retry-after", &format!("{before}{text}{after}"))]);
        prop_assert_eq!(
            parse_retry_after(&map, system_time(now)),
            expected,
            "{:?} at {:?}",
            text,
            now
        );
        // A date that exists is a delay or too long; one that does not (an rfc850 February 29
        // or day name moved to another century) is unreadable.
        let expected_outcome = match named {
            Some(_) => well_formed(expected),
            None => RetryAfter::Invalid,
        };
        prop_assert_eq!(outcome(&map, now), expected_outcome, "{:?} at {:?}", text, now);
        prop_assert_eq!(classify_503(&map, now), server_error_verdict(expected_outcome));
    }

    #[test]
    fn a_leap_second_is_the_first_second_of_the_next_minute(
        now in now(),
        day in (YEAR_1_START / 86_400)..(YEAR_9999_END / 86_400),
        near in any::<bool>(),
        format in select(vec![0usize, 2]),
    ) {
        // The leap second ending `day` (23:59:60), near now or anywhere.
        let next_midnight = if near { (now.0 / 86_400 + 1) * 86_400 } else { (day + 1) * 86_400 };
        let mut written = civil(next_midnight - 1);
        written.second = 60;
        let text = if format == 0 { imf_fixdate(written) } else { asctime_date(written) };
        let map = headers(&[("retry-after", &text)]);
        let expected = delay_until(next_midnight, now);
        prop_assert_eq!(parse_retry_after(&map, system_time(now)), expected, "{:?}", text);
        prop_assert_eq!(outcome(&map, now), well_formed(expected), "{:?}", text);
    }

    #[test]
    fn a_date_with_another_day_name_is_malformed(
        // From 1970, with now on the date: a two-digit year then reads as the year written.
        date in 0..=YEAR_9999_END,
        wrong in 1usize..7,
        format in 0usize..3,
    ) {
        let mut written = civil(date);
        written.weekday = (written.weekday + wrong) % 7;
        let text = match format {
            0 => imf_fixdate(written),
            1 => rfc850_date(written),
            _ => asctime_date(written),
        };
        let map = headers(&[("retry-after", &text)]);
        prop_assert_eq!(parse_retry_after(&map, system_time((date, 0))), None, "{:?}", text);
        prop_assert_eq!(outcome(&map, (date, 0)), RetryAfter::Invalid, "{:?}", text);
    }

    #[test]
    fn grpc_pushback_milliseconds_near_every_limit(
        millis in number(),
        zeros in 0usize..25,
        before in ows(),
        after in ows(),
    ) {
        let value = written(&millis, zeros, before, after);
        let expected = millis
            .at_most(ONE_DAY_SECONDS * 1_000)
            .map(|ms| Duration::from_millis(u64::try_from(ms).expect("at most a day")));
        prop_assert_eq!(grpc_pushback_verdict(&value), grpc_verdict(expected), "{:?}", value);
        prop_assert_eq!(status_with_pushback(&value).retry_after(), expected, "{:?}", value);
    }

    #[test]
    fn malformed_grpc_pushback_forbids_the_retry(number in number(), shape in 0usize..8) {
        let value = malformed(&number, shape);
        prop_assert_eq!(grpc_pushback_verdict(&value), RetryAction::RetryForbidden, "{:?}", value);
    }
}

// ---------------------------------------------------------------------------------------------
// gRPC pushback.

/// `GrpcStatusClassifier`'s verdict on a trailers-only UNAVAILABLE with this pushback.
fn grpc_pushback_verdict(pushback: &str) -> RetryAction {
    GrpcStatusClassifier::classify_headers(&headers(&[
        ("grpc-status", "14"),
        ("grpc-retry-pushback-ms", pushback),
    ]))
}

/// An UNAVAILABLE `tonic::Status` with this pushback in its metadata.
fn status_with_pushback(pushback: &str) -> tonic::Status {
    let mut status = tonic::Status::unavailable("pushback");
    let value = pushback.parse().expect("ASCII pushback");
    status
        .metadata_mut()
        .insert("grpc-retry-pushback-ms", value);
    status
}

/// gRFC A6: UNAVAILABLE is retried after the pushback; a pushback that cannot be honoured (more
/// than a day, here) forbids the retry.
fn grpc_verdict(pushback: Option<Duration>) -> RetryAction {
    match pushback {
        Some(delay) => RetryAction::retryable_after(ErrorKind::Server, delay),
        None => RetryAction::RetryForbidden,
    }
}

// ---------------------------------------------------------------------------------------------
// RetryConfig::from_lookup.

fn from_lookup(vars: &[(&str, &str)]) -> Result<RetryConfig, ConfigError> {
    RetryConfig::from_lookup(|name| {
        vars.iter()
            .find(|(variable, _)| *variable == name)
            .map(|(_, value)| (*value).to_owned())
    })
}

/// The error's variable and message, when it names one.
fn blamed(result: &Result<RetryConfig, ConfigError>) -> Option<(&'static str, String)> {
    match result {
        Err(error @ ConfigError::Env { variable, .. }) => Some((variable, error.to_string())),
        _ => None,
    }
}

/// The units of a duration string, in nanoseconds.
const UNITS: [(&str, u128); 6] = [
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// A duration string known by construction: a whole number, an optional fraction of at most 30
/// digits, a unit; and its value rounded down to the nanosecond when that fits a `u128`.
#[derive(Debug, Clone)]
struct DurationText {
    text: String,
    nanos: Option<u128>,
}

/// `0.digits * unit_nanos`, rounded down, exactly. `digits * unit_nanos` can pass u128 (10^30 *
/// 3.6e12), so the digits are split: `head` (the first 20 at most) and `tail` (the rest,
/// `k` digits): `value * unit / 10^n = q + (r * 10^k + tail * unit) / 10^n` where
/// `head * unit = q * 10^(n-k) + r`, and every term stays below 2 * 10^30.
fn fraction_of(digits: &str, unit_nanos: u128) -> u128 {
    let value: u128 = digits.parse().expect("at most 30 digits");
    let n = u32::try_from(digits.len()).expect("at most 30 digits");
    let head_digits = n.min(20);
    let k = n - head_digits;
    let (head, tail) = (value / 10u128.pow(k), value % 10u128.pow(k));
    let product = head * unit_nanos;
    let (q, r) = (
        product / 10u128.pow(head_digits),
        product % 10u128.pow(head_digits),
    );
    q + (r * 10u128.pow(k) + tail * unit_nanos) / 10u128.pow(n)
}

fn duration_text() -> impl Strategy<Value = DurationText> {
    (
        number(),
        0usize..4,
        prop::option::of("[0-9]{1,30}"),
        select(UNITS.to_vec()),
        ows(),
    )
        .prop_map(|(whole, zeros, fraction, (unit, unit_nanos), space)| {
            let fraction_nanos = fraction
                .as_deref()
                .map_or(0, |digits| fraction_of(digits, unit_nanos));
            let nanos = match whole {
                Number::Fits(whole) => whole
                    .checked_mul(unit_nanos)
                    .and_then(|nanos| nanos.checked_add(fraction_nanos)),
                Number::Huge(_) => None,
            };
            let fraction_text = fraction
                .map(|digits| format!(".{digits}"))
                .unwrap_or_default();
            DurationText {
                text: format!(
                    "{space}{}{fraction_text}{unit}{space}",
                    written(&whole, zeros, "", "")
                ),
                nanos,
            }
        })
}

impl DurationText {
    /// The duration when it is at most a year.
    fn accepted(&self) -> Option<Duration> {
        self.nanos
            .filter(|&nanos| nanos <= ONE_YEAR_NANOS)
            .map(|nanos| Duration::from_nanos(u64::try_from(nanos).expect("at most a year")))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(CASES))]

    #[test]
    fn from_lookup_whole_numbers_near_every_limit(
        variable in select(vec!["RETRY_MAX_ATTEMPTS", "RETRY_QUOTA_CAPACITY"]),
        number in number(),
        zeros in 0usize..25,
        sign in select(vec!["", "+", "-"]),
        before in ows(),
        after in ows(),
    ) {
        let value = format!("{before}{sign}{}", written(&number, zeros, "", after));
        let result = from_lookup(&[(variable, &value)]);
        let accepted = number
            .at_most(u128::from(u32::MAX))
            .filter(|_| sign != "-")
            .map(|n| u32::try_from(n).expect("at most u32::MAX"));
        match accepted {
            Some(n) if n > 0 => {
                prop_assert!(result.is_ok(), "{:?}: {:?}", value, result);
                let config = result.expect("checked above");
                let got = if variable == "RETRY_MAX_ATTEMPTS" {
                    config.max_attempts()
                } else {
                    config.quota_capacity()
                };
                prop_assert_eq!(got, n, "{:?}", value);
            }
            _ => {
                let named = blamed(&result);
                prop_assert!(named.is_some(), "{:?}: {:?}", value, result);
                let (blamed, message) = named.expect("checked above");
                prop_assert_eq!(blamed, variable);
                let reason = if accepted == Some(0) && variable == "RETRY_MAX_ATTEMPTS" {
                    "max_attempts must be at least 1 (1 means no retries), got 0".to_owned()
                } else if accepted == Some(0) {
                    "quota capacity must be at least 1: to turn retries off, set max_attempts = 1"
                        .to_owned()
                } else {
                    format!(
                        "invalid number `{}`: expected a whole number such as 3",
                        value.trim()
                    )
                };
                prop_assert_eq!(message, format!("environment variable {variable}: {reason}"));
            }
        }
    }

    #[test]
    fn from_lookup_durations_near_every_limit(
        duration in duration_text(),
        variable in select(vec!["RETRY_TIMEOUT", "RETRY_INITIAL_BACKOFF", "RETRY_MAX_BACKOFF"]),
    ) {
        // The other backoff is set where any valid value of this one is in order.
        let (partner, partner_value) = match variable {
            "RETRY_INITIAL_BACKOFF" => ("RETRY_MAX_BACKOFF", "8760h"),
            _ => ("RETRY_INITIAL_BACKOFF", "0ns"),
        };
        let result = from_lookup(&[(variable, &duration.text), (partner, partner_value)]);
        match duration.accepted() {
            Some(expected) if !(variable == "RETRY_TIMEOUT" && expected.is_zero()) => {
                prop_assert!(result.is_ok(), "{:?}: {:?}", duration.text, result);
                let config = result.expect("checked above");
                let got = match variable {
                    "RETRY_TIMEOUT" => config.timeout().expect("set"),
                    "RETRY_INITIAL_BACKOFF" => config.initial_backoff(),
                    _ => config.max_backoff(),
                };
                prop_assert_eq!(got, expected, "{:?}", duration.text);
            }
            _ => {
                let named = blamed(&result);
                prop_assert!(named.is_some(), "{:?}: {:?}", duration.text, result);
                let (blamed, message) = named.expect("checked above");
                prop_assert_eq!(blamed, variable, "{:?}", duration.text);
                let prefix = format!("environment variable {variable}: ");
                prop_assert!(message.starts_with(&prefix), "{}", message);
                if duration.accepted().is_none() {
                    prop_assert!(message.contains("longer than one year"), "{}", message);
                }
            }
        }
    }
}

/// The references themselves, at values worked out by hand (RFC 9110's example date).
#[test]
fn the_references_at_known_values() {
    let example = 784_111_777; // Sun, 06 Nov 1994 08:49:37 GMT
    let c = civil(example);
    assert_eq!(imf_fixdate(c), "Sun, 06 Nov 1994 08:49:37 GMT");
    assert_eq!(rfc850_date(c), "Sunday, 06-Nov-94 08:49:37 GMT");
    assert_eq!(asctime_date(c), "Sun Nov  6 08:49:37 1994");
    assert_eq!(unix_of(1994, 10, 6, 8 * 3_600 + 49 * 60 + 37), example);
    assert_eq!(
        imf_fixdate(civil(YEAR_1_START)),
        "Mon, 01 Jan 0001 00:00:00 GMT"
    );
    assert_eq!(
        imf_fixdate(civil(YEAR_9999_END)),
        "Fri, 31 Dec 9999 23:59:59 GMT"
    );
    assert_eq!(
        imf_fixdate(civil(951_782_400)),
        "Tue, 29 Feb 2000 00:00:00 GMT"
    );
    // "94" read in 2026 is 1994; in 2080, 2094 (a Saturday, not a Sunday: malformed).
    assert_eq!(rfc850_reading(example, 1_779_969_600), Some(example));
    assert_eq!(rfc850_reading(example, 3_471_292_800), None);
    assert_eq!(fraction_of("5", 1_000_000_000), 500_000_000);
    assert_eq!(
        fraction_of(&"9".repeat(30), 3_600_000_000_000),
        3_599_999_999_999
    );
    assert_eq!(fraction_of("000000000000000000001", 3_600_000_000_000), 0);
    assert_eq!(
        fraction_of("1666666666666666666666666667", 60_000_000_000),
        10_000_000_000
    );
}
