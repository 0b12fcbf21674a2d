//! The retry mode: standard, or adaptive with client-side rate limiting.
//!
//! `retry-macros` keeps a copy (`retry-macros/src/parse/mode.rs`) to check `mode = "..."` at
//! compile time; its tests fail when the two parse any string differently.

use std::fmt;
use std::str::FromStr;

use crate::name::find_by_name;

/// Which retry behavior a strategy follows: the AWS SDKs' `standard` and `adaptive` retry modes.
///
/// ```
/// use retry_core::RetryMode;
/// assert_eq!(" ADAPTIVE ".parse::<RetryMode>(), Ok(RetryMode::Adaptive));
/// assert_eq!(RetryMode::default(), RetryMode::Standard);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum RetryMode {
    /// Exponential backoff with jitter and a retry quota.
    #[default]
    Standard,
    /// Standard, plus a client-side rate limiter that slows down after throttling errors.
    Adaptive,
}

impl RetryMode {
    /// Every mode, in the order of [`RetryMode::NAMES`].
    pub const ALL: [RetryMode; 2] = [RetryMode::Standard, RetryMode::Adaptive];

    /// The names configuration accepts.
    pub const NAMES: [&'static str; 2] = ["standard", "adaptive"];

    /// The mode's configuration name.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryMode::Standard => "standard",
            RetryMode::Adaptive => "adaptive",
        }
    }
}

impl fmt::Display for RetryMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A mode name that is neither `standard` nor `adaptive`.
///
/// ```
/// let error = "legacy".parse::<retry_core::RetryMode>().unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "unknown retry mode `legacy`: expected \"standard\" or \"adaptive\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryModeParseError {
    input: String,
}

impl fmt::Display for RetryModeParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown retry mode `{}`: expected \"standard\" or \"adaptive\"",
            self.input
        )
    }
}

impl std::error::Error for RetryModeParseError {}

impl FromStr for RetryMode {
    type Err = RetryModeParseError;

    /// Parses a mode name, trimmed and case-insensitive.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        find_by_name(RetryMode::ALL, RetryMode::as_str, value)
            .map_err(|input| RetryModeParseError { input })
    }
}

#[cfg(test)]
mod tests {
    use super::RetryMode;
    use proptest::prelude::*;

    /// The rule, written out: trimmed, ASCII case ignored, one of two names.
    fn reference(input: &str) -> Result<RetryMode, String> {
        let trimmed = input.trim();
        match trimmed.to_ascii_lowercase().as_str() {
            "standard" => Ok(RetryMode::Standard),
            "adaptive" => Ok(RetryMode::Adaptive),
            _ => Err(format!(
                "unknown retry mode `{trimmed}`: expected \"standard\" or \"adaptive\""
            )),
        }
    }

    fn check(input: &str) {
        let parsed = input
            .parse::<RetryMode>()
            .map_err(|error| error.to_string());
        assert_eq!(parsed, reference(input), "{input:?}");
    }

    proptest! {
        #[test]
        fn any_string_matches_the_reference(input in any::<String>()) {
            check(&input);
        }

        #[test]
        fn names_in_any_case_spacing_and_with_extra_characters_match_the_reference(
            name in prop::sample::select(vec!["standard", "adaptive"]),
            upper in prop::collection::vec(any::<bool>(), 8),
            before in "\\s{0,3}",
            after in "\\s{0,3}",
            extra in prop_oneof![Just(String::new()), "[a-zA-Z0-9 _-]{1,2}"],
        ) {
            let cased: String = name
                .chars()
                .zip(&upper)
                .map(|(c, &up)| if up { c.to_ascii_uppercase() } else { c })
                .collect();
            check(&format!("{before}{cased}{extra}{after}"));
        }
    }
}
