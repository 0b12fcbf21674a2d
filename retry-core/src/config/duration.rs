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
/// `m`, `h`), surrounding whitespace ignored, e.g. `"250ms"`, `"2s"`, `"1.5s"`, `"1m"`; the
/// value is rounded down to the nanosecond. Durations above one year are rejected, whatever
/// the number of digits. Zero is accepted here; whether zero makes sense is decided by the
/// setting that uses it.
///
/// ```
/// use retry_core::config::parse_duration;
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
///
/// ```
/// let error = retry_core::config::parse_duration("5 minutes").unwrap_err();
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

#[cfg(test)]
mod tests {
    use super::{UNITS, parse_duration};
    use proptest::prelude::*;
    use std::time::Duration;

    /// One year in nanoseconds, written out again rather than taken from the parser.
    const YEAR: u128 = 31_536_000_000_000_000;

    /// The nanoseconds `whole.fraction` units make, rounded down; `None` above one year.
    ///
    /// The model the parser is held to, computed another way: the digits of `whole` and
    /// `fraction` as one decimal number, multiplied by the unit digit by digit (schoolbook, from
    /// the last digit), then cut back by the fraction's length. No integer limit is involved
    /// until the result is known to have at most 20 digits.
    fn reference(whole: &str, fraction: &str, unit_nanos: u128) -> Option<Duration> {
        let mut digits: Vec<u128> = whole
            .bytes()
            .chain(fraction.bytes())
            .map(|digit| u128::from(digit - b'0'))
            .collect();
        let mut carry = 0;
        for digit in digits.iter_mut().rev() {
            let product = *digit * unit_nanos + carry;
            *digit = product % 10;
            carry = product / 10;
        }
        let mut product: Vec<u128> = carry
            .to_string()
            .bytes()
            .map(|digit| u128::from(digit - b'0'))
            .collect();
        product.extend(digits);
        product.truncate(product.len() - fraction.len());
        let first = product.iter().position(|&digit| digit != 0);
        let significant = first.map_or(&[][..], |first| &product[first..]);
        if significant.len() > 20 {
            return None;
        }
        let nanos = significant.iter().fold(0, |n, digit| n * 10 + digit);
        (nanos <= YEAR).then(|| Duration::from_nanos(u64::try_from(nanos).expect("a year fits")))
    }

    /// The parser against [`reference`] on `whole[.fraction]unit`.
    fn check(whole: &str, fraction: &str, unit: &str, unit_nanos: u128) {
        let dot = if fraction.is_empty() { "" } else { "." };
        let input = format!("{whole}{dot}{fraction}{unit}");
        match (
            reference(whole, fraction, unit_nanos),
            parse_duration(&input),
        ) {
            (Some(expected), parsed) => assert_eq!(parsed, Ok(expected), "{input:?}"),
            (None, parsed) => {
                let message = parsed.expect_err(&input).to_string();
                assert!(
                    message.contains("longer than one year"),
                    "{input:?}: {message}"
                );
            }
        }
    }

    /// Every limit the arithmetic meets for a unit: the integer types' maxima, the unit's count
    /// in a year, in a `u64` and in a `u128` of nanoseconds.
    fn limits(unit_nanos: u128) -> [u128; 6] {
        [
            u128::from(u32::MAX),
            u128::from(u64::MAX),
            u128::MAX,
            YEAR / unit_nanos,
            u128::from(u64::MAX) / unit_nanos,
            u128::MAX / unit_nanos,
        ]
    }

    /// Whole numbers around every limit of a unit, one past `u128::MAX` included.
    fn near_limits(unit_nanos: u128) -> Vec<String> {
        let mut numbers: Vec<String> = limits(unit_nanos)
            .iter()
            .flat_map(|&limit| [limit.checked_sub(1), Some(limit), limit.checked_add(1)])
            .flatten()
            .map(|n| n.to_string())
            .collect();
        numbers.push("340282366920938463463374607431768211456".to_owned());
        numbers
    }

    #[test]
    fn numbers_near_every_limit_match_the_reference() {
        for (unit, unit_nanos) in UNITS {
            for whole in near_limits(unit_nanos) {
                for fraction in ["", "0", "5", "9", "999999999999999999", "000000000001"] {
                    check(&whole, fraction, unit, unit_nanos);
                }
            }
        }
    }

    /// Issue 9.1: the fraction was added without a check, so a number just below the overflow
    /// of its whole part overflowed with its fraction: a panic in debug builds, a tiny wrong
    /// duration in release builds.
    #[test]
    fn a_fraction_that_overflows_the_whole_part_is_too_long_in_every_unit() {
        for (unit, unit_nanos) in UNITS {
            let input = format!("{}.9{unit}", u128::MAX / unit_nanos);
            let error = parse_duration(&input).expect_err(&input);
            assert!(
                error.to_string().contains("longer than one year"),
                "{input}: {error}"
            );
        }
        assert!(parse_duration("340282366920938463463374607431.9s").is_err());
    }

    /// Decimal strings of every length up to `max` digits, leading zeros included.
    fn digits(max: usize) -> impl Strategy<Value = String> {
        proptest::string::string_regex(&format!("[0-9]{{1,{max}}}")).expect("a regex")
    }

    /// Whole numbers: small ones (most durations), any length, and the integer types' ranges.
    fn whole_numbers() -> impl Strategy<Value = String> {
        prop_oneof![
            (0..100_000u32).prop_map(|n| n.to_string()),
            digits(45),
            any::<u128>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
        ]
    }

    proptest! {
        #[test]
        fn every_number_in_every_unit_matches_the_reference(
            whole in whole_numbers(),
            fraction in prop_oneof![Just(String::new()), digits(40)],
            unit in 0..UNITS.len(),
        ) {
            let (name, unit_nanos) = UNITS[unit];
            check(&whole, &fraction, name, unit_nanos);
        }

        #[test]
        fn numbers_next_to_a_limit_match_the_reference(
            unit in 0..UNITS.len(),
            limit in 0..6usize,
            offset in -3i8..=3,
            fraction in prop_oneof![Just(String::new()), digits(25)],
        ) {
            let (name, unit_nanos) = UNITS[unit];
            let base = limits(unit_nanos)[limit];
            let whole = base.checked_add_signed(i128::from(offset)).unwrap_or(base);
            check(&whole.to_string(), &fraction, name, unit_nanos);
        }

        #[test]
        fn no_string_panics(input in any::<String>()) {
            let _ = parse_duration(&input);
        }
    }
}
