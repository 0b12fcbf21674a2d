//! Duration strings: `"250ms"`, `"2s"`, `"1.5s"`, `"1m"`.
//!
//! Copy of `retry-core/src/config/duration.rs` (see [`super`]): same rules, same messages.

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
/// `m`, `h`), surrounding whitespace ignored, rounded down to the nanosecond. Durations above
/// one year are rejected, whatever the number of digits; zero is accepted (whether it makes
/// sense is up to the setting).
pub(crate) fn parse_duration(input: &str) -> Result<Duration, DurationParseError> {
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
    let too_long = || error(DurationProblem::TooLong);
    // Digits only: parsing fails on overflow alone.
    let whole: u128 = whole.parse().map_err(|_| too_long())?;
    let nanos = whole
        .checked_mul(unit_nanos)
        .and_then(|nanos| nanos.checked_add(fraction_nanos(fraction, unit_nanos)))
        .filter(|&nanos| nanos <= MAX_NANOS)
        .and_then(|nanos| u64::try_from(nanos).ok())
        .ok_or_else(too_long)?;
    Ok(Duration::from_nanos(nanos))
}

/// The nanoseconds of a fraction of the unit (the digits after the point), rounded down: the
/// decimal fraction multiplied by `unit_nanos` digit by digit, from the last digit; the carry
/// out of the first digit is the whole part of the product. Less than `unit_nanos`.
fn fraction_nanos(digits: &str, unit_nanos: u128) -> u128 {
    digits.bytes().rev().fold(0, |carry, digit| {
        (u128::from(digit - b'0') * unit_nanos + carry) / 10
    })
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DurationParseError {
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
