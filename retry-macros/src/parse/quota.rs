//! The retry quota: `quota = "off" | "traffic"` (and, as the runtime reads text, a number of
//! tokens).
//!
//! Copy of `retry-core/src/config/quota.rs`'s parser (see [`super`]): same values, same
//! messages. In the attribute a number of tokens is written unquoted (`quota = 2000`), read by
//! `retryable::value`; the copy reads it too so that the two parsers can be compared on every
//! string.

use std::str::FromStr;

use super::name::ValueParseError;

/// The runtime's `Quota`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Quota {
    Off,
    Fixed(u32),
    Traffic,
}

impl FromStr for Quota {
    type Err = ValueParseError;

    /// Parses `off` or `traffic` (trimmed, case-insensitive), or a whole number of tokens
    /// from 1 to `u32::MAX`.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let trimmed = value.trim();
        let error = |reason| ValueParseError::invalid("quota", trimmed.to_owned(), reason);
        if trimmed.eq_ignore_ascii_case("off") {
            return Ok(Quota::Off);
        }
        if trimmed.eq_ignore_ascii_case("traffic") {
            return Ok(Quota::Traffic);
        }
        if trimmed.is_empty() || !trimmed.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(error(
                "expected \"off\", \"traffic\" or a number of tokens such as 2000",
            ));
        }
        match trimmed.parse::<u32>() {
            Ok(0) => Err(error(
                "a quota of 0 tokens would refuse every retry; write \"off\" for no quota, or set \
                 max_attempts to 1 for no retries",
            )),
            Ok(tokens) => Ok(Quota::Fixed(tokens)),
            Err(_) => Err(error(
                "at most 4294967295 tokens; write \"off\" for no quota",
            )),
        }
    }
}
