//! Reference model of `1*DIGIT`: a decimal number of any digit count, compared with a limit.
//!
//! Written apart from retry-core's digit parsers: it never multiplies a running value (no overflow
//! to get wrong), it strips the leading zeros and compares digit counts first.

/// What a `1*DIGIT` candidate is worth next to a limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decimal {
    /// Empty, or some byte is not an ASCII digit.
    NotDigits,
    /// A number no greater than the limit.
    AtMost(u64),
    /// A number greater than the limit (possibly beyond any integer type).
    Above,
}

/// `text` as `1*DIGIT`, next to `limit`.
///
/// ```
/// use retry_core_fuzz::decimal::{Decimal, digits};
/// assert_eq!(digits(b"00042", 42), Decimal::AtMost(42));
/// assert_eq!(digits(b"43", 42), Decimal::Above);
/// assert_eq!(digits(&[b'9'; 100], u64::MAX), Decimal::Above);
/// assert_eq!(digits(b"4 2", 42), Decimal::NotDigits);
/// assert_eq!(digits(b"", 42), Decimal::NotDigits);
/// ```
pub fn digits(text: &[u8], limit: u64) -> Decimal {
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return Decimal::NotDigits;
    }
    let significant = &text[text.iter().take_while(|&&byte| byte == b'0').count()..];
    let limit_text = limit.to_string();
    let above = match significant.len().cmp(&limit_text.len()) {
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Greater => true,
        // Same length, ASCII digits: byte order is numeric order.
        std::cmp::Ordering::Equal => significant > limit_text.as_bytes(),
    };
    if above {
        return Decimal::Above;
    }
    // At most `limit`, so at most 20 digits: the value, digit by digit in u128.
    let value = significant
        .iter()
        .fold(0u128, |value, &byte| value * 10 + u128::from(byte - b'0'));
    Decimal::AtMost(u64::try_from(value).expect("at most the limit, a u64"))
}
