//! Duration strings: `"250ms"`, `"2s"`, `"1.5s"`, `"1m"`.
//!
//! `retry-macros` keeps a copy (`retry-macros/src/parse/duration.rs`) to check `#[retryable]`'s
//! durations at compile time; its tests fail when the two parse any string differently.

use std::fmt;
use std::time::Duration;

/// The units a duration string may end with, and their length in nanoseconds.
const UNITS: [(&str, u128); 6] = [
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The longest duration accepted: one year. Longer values are mistakes, not retry settings.
const MAX_NANOS: u128 = 365 * 24 * 3_600_000_000_000;

/// Parses a duration: a non-negative decimal number followed by a unit (`ns`, `us`, `ms`, `s`,
/// `m`, `h`), surrounding whitespace ignored, e.g. `"250ms"`, `"2s"`, `"1.5s"`, `"1m"`.
/// Durations above one year are rejected. Zero is accepted here; whether zero makes sense is
/// decided by the setting that uses it.
///
/// ```
/// use retry_core::parse_duration;
/// use std::time::Duration;
///
/// assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// assert_eq!(parse_duration(" 1.5s "), Ok(Duration::from_millis(1500)));
/// assert_eq!(parse_duration("1m"), Ok(Duration::from_secs(60)));
/// assert_eq!(
///     parse_duration("2").unwrap_err().to_string(),
///     "invalid duration `2`: missing unit; write e.g. \"2s\" or \"250ms\" (units: ns, us, ms, s, m, h)"
/// );
/// ```
pub fn parse_duration(input: &str) -> Result<Duration, DurationParseError> {
    let text = input.trim();
    let error = |problem| DurationParseError {
        input: text.to_owned(),
        problem,
    };
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if number.is_empty() {
        return Err(error(if text.starts_with('-') {
            DurationProblem::Negative
        } else {
            DurationProblem::MissingNumber
        }));
    }
    if unit.is_empty() {
        return Err(error(DurationProblem::MissingUnit));
    }
    let Some(&(_, unit_nanos)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(error(DurationProblem::UnknownUnit));
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() || fraction.contains('.') || (number.contains('.') && fraction.is_empty()) {
        return Err(error(DurationProblem::BadNumber));
    }
    let whole: u128 = whole.parse().map_err(|_| error(DurationProblem::TooLong))?;
    let mut nanos = whole
        .checked_mul(unit_nanos)
        .ok_or_else(|| error(DurationProblem::TooLong))?;
    let mut scale = unit_nanos;
    for digit in fraction.bytes() {
        scale /= 10;
        nanos += u128::from(digit - b'0') * scale;
    }
    if nanos > MAX_NANOS {
        return Err(error(DurationProblem::TooLong));
    }
    // MAX_NANOS fits in u64.
    Ok(Duration::from_nanos(nanos as u64))
}

/// What is wrong with a duration string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DurationProblem {
    MissingNumber,
    Negative,
    MissingUnit,
    UnknownUnit,
    BadNumber,
    TooLong,
}

/// A duration string that [`parse_duration`] rejects; the message says what to write instead.
///
/// ```
/// let error = retry_core::parse_duration("5 minutes").unwrap_err();
/// assert!(error.to_string().contains("unknown unit"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DurationParseError {
    input: String,
    problem: DurationProblem,
}

impl fmt::Display for DurationParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let problem = match self.problem {
            DurationProblem::MissingNumber => "expected a number first",
            DurationProblem::Negative => "a duration cannot be negative",
            DurationProblem::MissingUnit => "missing unit",
            DurationProblem::UnknownUnit => "unknown unit",
            DurationProblem::BadNumber => "malformed number",
            DurationProblem::TooLong => "longer than one year",
        };
        write!(
            f,
            "invalid duration `{}`: {problem}; write e.g. \"2s\" or \"250ms\" (units: ns, us, ms, s, m, h)",
            self.input
        )
    }
}

impl std::error::Error for DurationParseError {}
