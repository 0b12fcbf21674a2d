//! Hedge delays: `hedge_after = "50ms" | "p95"`, and `max_hedges`'s range.
//!
//! Copy of `retry-core/src/hedge/policy.rs`'s `HedgeDelay` parser, with the messages of
//! `retry-core/src/hedge/error.rs` (see [`super`]): same rules, same messages.

use std::fmt;
use std::time::Duration;

use super::duration::{DurationParseError, parse_duration};

/// The most hedges a call may send: the runtime's `hedge::MAX_HEDGES` (gRPC's hedging policy,
/// gRFC A6, sends at most 5 copies of a request).
pub(crate) const MAX_HEDGES: u32 = 4;

/// The runtime's `HedgeDelay`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum HedgeDelay {
    /// A fixed delay, longer than zero.
    After(Duration),
    /// A percentile of the scope's measured latency, strictly between 0 and 100.
    Percentile(f64),
}

/// The runtime's `HedgeConfigError`, for the errors a delay string can have.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum HedgeDelayError {
    ZeroDelay,
    Duration(DurationParseError),
    Parse {
        input: String,
        problem: &'static str,
    },
}

impl fmt::Display for HedgeDelayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HedgeDelayError::ZeroDelay => f.write_str(
                "a hedge delay must be longer than zero (a delay of zero sends every copy at \
                 once): write e.g. 50ms, or a percentile such as p95",
            ),
            HedgeDelayError::Duration(error) => write!(
                f,
                "invalid hedge delay: {error}; or a percentile of the scope's latency, e.g. \"p95\""
            ),
            HedgeDelayError::Parse { input, problem } => write!(
                f,
                "invalid hedge delay `{input}`: {problem}; write e.g. \"p95\" or \"p99.9\""
            ),
        }
    }
}

/// Parses a hedge delay: a duration longer than zero, or `p` (either case) and a percentile
/// strictly between 0 and 100 in plain decimal digits; surrounding whitespace ignored.
pub(crate) fn parse_hedge_delay(input: &str) -> Result<HedgeDelay, HedgeDelayError> {
    let text = input.trim();
    let invalid = |problem| HedgeDelayError::Parse {
        input: text.to_owned(),
        problem,
    };
    let Some(number) = text.strip_prefix(['p', 'P']) else {
        let delay = parse_duration(text).map_err(HedgeDelayError::Duration)?;
        if delay.is_zero() {
            return Err(HedgeDelayError::ZeroDelay);
        }
        return Ok(HedgeDelay::After(delay));
    };
    let well_formed = !number.is_empty()
        && number
            .bytes()
            .all(|byte| byte.is_ascii_digit() || byte == b'.')
        && number.bytes().filter(|&byte| byte == b'.').count() <= 1
        && !number.starts_with('.')
        && !number.ends_with('.');
    let percentile = number
        .parse::<f64>()
        .ok()
        .filter(|_| well_formed)
        .ok_or_else(|| invalid("`p` is followed by a number"))?;
    if !(percentile > 0.0 && percentile < 100.0) {
        return Err(invalid("a percentile is strictly between 0 and 100"));
    }
    Ok(HedgeDelay::Percentile(percentile))
}
