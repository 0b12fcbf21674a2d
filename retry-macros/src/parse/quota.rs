//! The retry quota: `quota = "off" | "traffic"` (and, as the runtime reads text, a number of
//! tokens).
//!
//! Copy of `retry-core/src/config/quota.rs`'s parser (see [`super`]): same values, same
//! messages. In the attribute a number of tokens is written unquoted (`quota = 2000`), read by
//! `retryable::value`; the copy reads it too so that the two parsers can be compared on every
//! string.

use std::fmt;
use std::str::FromStr;

/// The runtime's `Quota`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quota {
    Off,
    Fixed(u32),
    Traffic,
}

/// What is wrong with a quota written as text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum QuotaProblem {
    Unknown,
    Zero,
    TooLarge,
}

/// A quota the parser rejects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QuotaParseError {
    input: String,
    problem: QuotaProblem,
}

impl fmt::Display for QuotaParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let input = &self.input;
        match self.problem {
            QuotaProblem::Unknown => write!(
                f,
                "invalid quota `{input}`: expected \"off\", \"traffic\" or a number of tokens \
                 such as 2000"
            ),
            QuotaProblem::Zero => write!(
                f,
                "invalid quota `{input}`: a quota of 0 tokens would refuse every retry; write \
                 \"off\" for no quota, or set max_attempts to 1 for no retries"
            ),
            QuotaProblem::TooLarge => write!(
                f,
                "invalid quota `{input}`: at most 4294967295 tokens; write \"off\" for no quota"
            ),
        }
    }
}

impl FromStr for Quota {
    type Err = QuotaParseError;

    /// Parses `off` or `traffic` (trimmed, case-insensitive), or a whole number of tokens
    /// from 1 to `u32::MAX`.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let trimmed = value.trim();
        let error = |problem| QuotaParseError {
            input: trimmed.to_owned(),
            problem,
        };
        if trimmed.eq_ignore_ascii_case("off") {
            return Ok(Quota::Off);
        }
        if trimmed.eq_ignore_ascii_case("traffic") {
            return Ok(Quota::Traffic);
        }
        if trimmed.is_empty() || !trimmed.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(error(QuotaProblem::Unknown));
        }
        match trimmed.parse::<u32>() {
            Ok(0) => Err(error(QuotaProblem::Zero)),
            Ok(tokens) => Ok(Quota::Fixed(tokens)),
            Err(_) => Err(error(QuotaProblem::TooLarge)),
        }
    }
}
