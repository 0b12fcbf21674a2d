//! `retry_core::config::parse_duration`: a reference model and the properties every input must
//! keep.

use std::time::Duration;

use retry_core::config::parse_duration;

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

/// What the reference makes of a duration string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reference {
    /// Not `number unit`: the parser must reject it.
    Malformed,
    /// Well formed, worth this many whole nanoseconds (the exact value rounded down, as
    /// `parse_duration` documents).
    Nanos(u128),
    /// Well formed, beyond any u128 count of nanoseconds: the parser must reject it.
    Huge,
}

/// The reference model: trim, find the one unit the text ends with whose prefix is a number
/// (`1*DIGIT ["." 1*DIGIT]`), and compute the value exactly at any digit count: the number's
/// digits without the point, times the unit's nanoseconds by schoolbook multiplication, less
/// as many trailing digits as the fraction had.
///
/// ```
/// use retry_core_fuzz::duration::{Reference, reference};
/// assert_eq!(reference(" 1.5s\n"), Reference::Nanos(1_500_000_000));
/// assert_eq!(reference("250ms"), Reference::Nanos(250_000_000));
/// assert_eq!(reference("0.00000000002m"), Reference::Nanos(1)); // 1.2 ns
/// assert_eq!(reference(&format!("0.{}h", "9".repeat(60))), Reference::Nanos(3_599_999_999_999));
/// assert_eq!(reference("1.s"), Reference::Malformed);
/// assert_eq!(reference(&format!("{}h", "9".repeat(40))), Reference::Huge);
/// assert_eq!(reference(&format!("{}1ns", "0".repeat(100))), Reference::Nanos(1));
/// ```
pub fn reference(input: &str) -> Reference {
    let text = input.trim();
    let Some((number, unit_nanos)) = UNITS.iter().find_map(|&(name, nanos)| {
        let number = text.strip_suffix(name)?;
        is_number(number).then_some((number, nanos))
    }) else {
        return Reference::Malformed;
    };
    let fraction_digits = number
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len());
    let digits: Vec<u8> = number
        .bytes()
        .filter(u8::is_ascii_digit)
        .map(|b| b - b'0')
        .collect();
    let product = times(&digits, unit_nanos);
    let whole_nanos = &product[..product.len().saturating_sub(fraction_digits)];
    let significant: Vec<u8> = whole_nanos
        .iter()
        .copied()
        .skip_while(|&d| d == 0)
        .collect();
    if significant.len() > 39 {
        return Reference::Huge;
    }
    significant
        .iter()
        .try_fold(0u128, |value, &digit| {
            value.checked_mul(10)?.checked_add(digit.into())
        })
        .map_or(Reference::Huge, Reference::Nanos)
}

/// `digits` (decimal, most significant first) times `factor`, as decimal digits.
fn times(digits: &[u8], factor: u128) -> Vec<u8> {
    let mut product = Vec::with_capacity(digits.len() + 14);
    let mut carry = 0u128;
    for &digit in digits.iter().rev() {
        let value = u128::from(digit) * factor + carry;
        product.push((value % 10) as u8);
        carry = value / 10;
    }
    while carry > 0 {
        product.push((carry % 10) as u8);
        carry /= 10;
    }
    product.reverse();
    product
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
/// * it agrees with [`reference`] to the nanosecond, accepting exactly the well-formed values
///   of at most [`ONE_YEAR`];
/// * a parsed duration re-parses to itself from its canonical forms (`{n}ns`, the largest
///   exact unit, `{secs}.{nanos:09}s`), with any surrounding whitespace;
/// * an error's message quotes the trimmed input.
pub fn check(input: &str) {
    let parsed = parse_duration(input);
    let expected = reference(input);
    match (&parsed, expected) {
        (Ok(duration), Reference::Nanos(exact)) => assert_eq!(
            duration.as_nanos(),
            exact,
            "{input:?} parsed as {duration:?}, the value rounded down is {exact} ns"
        ),
        (Ok(duration), _) => {
            panic!("{input:?} accepted as {duration:?}, but the reference says {expected:?}")
        }
        (Err(error), Reference::Nanos(exact)) => assert!(
            exact > ONE_YEAR.as_nanos(),
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
