//! The one reader of the delays servers ask for in headers: `x-amz-retry-after` and gRPC's
//! `grpc-retry-pushback-ms` (integer milliseconds), and `Retry-After` (delta-seconds or an
//! HTTP-date, whose reader is [`http`](crate::http)'s, built on this one). Every header of the
//! `http` and `tonic` modules reads its values here, so hostile values are judged alike
//! everywhere.

use std::time::Duration;

/// The longest delay a server may ask for: one day. A longer one, at any digit count, is
/// [`ServerDelay::TooLong`], so a hostile or broken server cannot park a client.
///
/// Source: this crate's choice, far above the AWS SDKs' 20-second cap on a backoff delay.
pub(crate) const MAX_SERVER_DELAY: Duration = Duration::from_secs(24 * 60 * 60);

/// What one header value says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerDelay {
    /// A usable delay, at most [`MAX_SERVER_DELAY`].
    After(Duration),
    /// A well-formed delay (or date) further away than [`MAX_SERVER_DELAY`], whatever its
    /// number of digits.
    TooLong,
    /// Not a value of the header's grammar: a sign, a fraction, an exponent, an empty value,
    /// non-ASCII bytes, trailing text, a date that does not exist.
    Invalid,
}

/// The unit of an integer delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DelayUnit {
    /// `Retry-After`'s delta-seconds.
    #[cfg(feature = "http")]
    Seconds,
    /// `x-amz-retry-after` and `grpc-retry-pushback-ms`.
    Milliseconds,
}

/// An integer delay (`1*DIGIT`, RFC 9110 §5.6.1's digits) after trimming optional whitespace:
/// any number of digits, an overflow being as much [`ServerDelay::TooLong`] as a value over the
/// maximum. Never panics.
pub(crate) fn read_integer_delay(value: &[u8], unit: DelayUnit) -> ServerDelay {
    let digits = trim_ows(value);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return ServerDelay::Invalid;
    }
    let number = digits.iter().try_fold(0u64, |acc, &digit| {
        acc.checked_mul(10)?.checked_add(u64::from(digit - b'0'))
    });
    let delay = number.map(|number| match unit {
        #[cfg(feature = "http")]
        DelayUnit::Seconds => Duration::from_secs(number),
        DelayUnit::Milliseconds => Duration::from_millis(number),
    });
    match delay {
        Some(delay) => at_most_max(delay),
        None => ServerDelay::TooLong,
    }
}

/// `delay`, unless it exceeds [`MAX_SERVER_DELAY`].
pub(crate) fn at_most_max(delay: Duration) -> ServerDelay {
    if delay <= MAX_SERVER_DELAY {
        ServerDelay::After(delay)
    } else {
        ServerDelay::TooLong
    }
}

/// The value without leading and trailing optional whitespace (SP and HTAB, RFC 9110 §5.6.3;
/// §5.5: it is not part of the field value).
pub(crate) fn trim_ows(value: &[u8]) -> &[u8] {
    let is_ows = |byte: &u8| *byte == b' ' || *byte == b'\t';
    let start = value.iter().position(|b| !is_ows(b)).unwrap_or(value.len());
    let end = value
        .iter()
        .rposition(|b| !is_ows(b))
        .map_or(start, |i| i + 1);
    value.get(start..end).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_at_every_limit() {
        let millis = |value: &[u8]| read_integer_delay(value, DelayUnit::Milliseconds);
        assert_eq!(millis(b"0"), ServerDelay::After(Duration::ZERO));
        assert_eq!(
            millis(b"\t 0250 \t"),
            ServerDelay::After(Duration::from_millis(250))
        );
        assert_eq!(millis(b"86400000"), ServerDelay::After(MAX_SERVER_DELAY));
        for too_long in [
            &b"86400001"[..],
            b"4294967296",
            b"18446744073709551615",
            b"18446744073709551616",
            b"340282366920938463463374607431768211456",
            b"0000000000000000000000000000000000000000086400001",
        ] {
            assert_eq!(millis(too_long), ServerDelay::TooLong, "{too_long:?}");
        }
        for invalid in [
            &b""[..],
            b" ",
            b"-1",
            b"+1",
            b"1.5",
            b"1e3",
            b"1 2",
            b"\xff",
            b"5\x00",
        ] {
            assert_eq!(millis(invalid), ServerDelay::Invalid, "{invalid:?}");
        }
    }
}
