//! The retry mode: `mode = "standard" | "adaptive"`.
//!
//! Copy of `retry-core/src/config/mode.rs` (see [`super`]): same names, same message.

use std::fmt;
use std::str::FromStr;

use super::name::find_by_name;

/// The runtime's `RetryMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryMode {
    Standard,
    Adaptive,
}

impl RetryMode {
    /// Every mode.
    pub(crate) const ALL: [RetryMode; 2] = [RetryMode::Standard, RetryMode::Adaptive];

    /// The mode's configuration name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RetryMode::Standard => "standard",
            RetryMode::Adaptive => "adaptive",
        }
    }

    /// The name of the runtime's variant, for the generated code.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            RetryMode::Standard => "Standard",
            RetryMode::Adaptive => "Adaptive",
        }
    }
}

/// A mode name that is neither `standard` nor `adaptive`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RetryModeParseError {
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

impl FromStr for RetryMode {
    type Err = RetryModeParseError;

    /// Parses a mode name, trimmed and case-insensitive.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        find_by_name(RetryMode::ALL, RetryMode::as_str, value)
            .map_err(|input| RetryModeParseError { input })
    }
}
