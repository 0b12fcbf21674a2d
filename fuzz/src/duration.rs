//! `retry_core::parse_duration`: a reference model and the properties every input must keep.

use std::time::Duration;

use retry_core::parse_duration;

/// The units of the duration grammar, in nanoseconds (the reference's own table).
const UNITS: [(&str, u128); 6] = [
    ("h", 3_600 * NANOS_PER_SECOND),
    ("m", 60 * NANOS_PER_SECOND),
    ("s", NANOS_PER_SECOND),
    ("ms", 1_000_000),
    ("us", 1_000),
    ("ns", 1),
];

const NANOS_PER_SECOND: u128 = 1_000_000_000;

/// The longest duration `parse_duration` documents it accepts: one year (365 days).
pub const ONE_YEAR: Duration = Duration::from_secs(365 * 24 * 3_600);

/// How far below the exact value the parser may land: it may drop the sub-nanosecond part of
/// each fraction digit (`0.99999999999999m` is 59.999999994 s, exactly 59.99999999994 s), and a
/// rewrite may round to nearest instead (one above). Far below anything a retry setting can
/// tell apart; a wrong digit or unit is off by at least a nanosecond times a power of ten more.
pub const ROUNDING_TOLERANCE_NANOS: u128 = 16;

/// The fraction digits the reference reads: past 24 they change the value by less than
/// 10^-24 * 3.6e12 ns, and 10^24 * 3.6e12 still fits in a u128.
const FRACTION_DIGITS_READ: usize = 24;

/// What the reference makes of a duration string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// Not `number unit`: the parser must reject it.
    Malformed,
    /// Well formed, worth this many whole nanoseconds (the exact value rounded down).
    Nanos(u128),
    /// Well formed, beyond any u128 count of nanoseconds: the parser must reject it.
    Huge,
}

/// The reference model: trim, find the one unit the text ends with whose prefix is a number
/// (`1*DIGIT ["." 1*DIGIT]`), and compute the value with checked u128 arithmetic.
///
/// ```
/// use retry_core_fuzz::duration::{Reference, reference};
/// assert_eq!(reference(" 1.5s\n"), Reference::Nanos(1_500_000_000));
/// assert_eq!(reference("250ms"), Reference::Nanos(250_000_000));
/// assert_eq!(reference("1.s"), Reference::Malformed);
/// assert_eq!(reference(&format!("{}h", "9".repeat(40))), Reference::Huge);
/// ```
pub fn reference(input: &str) -> Reference {
    let text = input.trim();
    let Some((number, unit_nanos)) = UNITS.iter().find_map(|&(name, nanos)| {
        let number = text.strip_suffix(name)?;
        is_number(number).then_some((number, nanos))
    }) else {
        return Reference::Malformed;
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    // Leading zeros stripped, so that only the value's own digit count can overflow.
    let significant = whole.trim_start_matches('0');
    let whole_value = if significant.is_empty() {
        Some(0)
    } else {
        significant.parse::<u128>().ok()
    };
    let whole_nanos = whole_value.and_then(|whole| whole.checked_mul(unit_nanos));
    let read = &fraction[..fraction.len().min(FRACTION_DIGITS_READ)];
    let fraction_nanos = if read.is_empty() {
        0
    } else {
        let digits: u128 = read.parse().expect("ASCII digits, at most 24");
        digits * unit_nanos / 10u128.pow(read.len() as u32)
    };
    match whole_nanos.and_then(|whole| whole.checked_add(fraction_nanos)) {
        Some(nanos) => Reference::Nanos(nanos),
        None => Reference::Huge,
    }
}

/// `1*DIGIT ["." 1*DIGIT]`.
fn is_number(text: &str) -> bool {
    let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    match text.split_once('.') {
        Some((whole, fraction)) => all_digits(whole) && all_digits(fraction),
        None => all_digits(text),
    }
}

/// Every property of `parse_duration` on `input`:
/// * it agrees with [`reference`] (within [`ROUNDING_TOLERANCE_NANOS`]), accepting exactly the
///   well-formed values of at most [`ONE_YEAR`];
/// * a parsed duration re-parses to itself from its canonical forms (`{n}ns`, the largest
///   exact unit, `{secs}.{nanos:09}s`), with any surrounding whitespace;
/// * an error's message quotes the trimmed input.
pub fn check(input: &str) {
    let parsed = parse_duration(input);
    let expected = reference(input);
    match (&parsed, expected) {
        (Ok(duration), Reference::Nanos(exact)) => {
            let nanos = duration.as_nanos();
            assert!(
                nanos <= exact.saturating_add(1) && nanos + ROUNDING_TOLERANCE_NANOS >= exact,
                "{input:?} parsed as {nanos} ns, the exact value is {exact} ns"
            );
        }
        (Ok(duration), _) => {
            panic!("{input:?} accepted as {duration:?}, but the reference says {expected:?}")
        }
        (Err(error), Reference::Nanos(exact)) => assert!(
            exact.saturating_add(ROUNDING_TOLERANCE_NANOS) > ONE_YEAR.as_nanos(),
            "{input:?} ({exact} ns, at most a year) rejected: {error}"
        ),
        (Err(_), Reference::Malformed | Reference::Huge) => {}
    }
    match parsed {
        Ok(duration) => check_canonical_forms(input, duration),
        Err(error) => {
            let message = error.to_string();
            assert!(
                message.starts_with("invalid duration `") && message.contains(input.trim()),
                "{input:?}: the message does not quote the input: {message}"
            );
        }
    }
}

fn check_canonical_forms(input: &str, duration: Duration) {
    assert!(
        duration <= ONE_YEAR,
        "{input:?} accepted as {duration:?}, over a year"
    );
    let nanos = duration.as_nanos();
    let (largest_unit, unit_nanos) = UNITS
        .iter()
        .copied()
        .find(|&(_, unit_nanos)| nanos.is_multiple_of(unit_nanos))
        .expect("every count of nanoseconds is a whole number of ns");
    for canonical in [
        format!("{nanos}ns"),
        format!("{}{largest_unit}", nanos / unit_nanos),
        format!("{}.{:09}s", duration.as_secs(), duration.subsec_nanos()),
        format!(" \t{nanos}ns\n"),
    ] {
        assert_eq!(
            parse_duration(&canonical),
            Ok(duration),
            "{input:?} parsed as {duration:?}, its canonical form {canonical:?} does not"
        );
    }
}
