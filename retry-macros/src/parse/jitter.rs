//! Jitter: `jitter = "none" | "full" | "equal" | "decorrelated"`.
//!
//! Copy of `retry-core/src/jitter.rs` (see [`super`]): same names, same message.

use std::fmt;
use std::str::FromStr;

use super::name::find_by_name;

/// The runtime's `Jitter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
}

impl Jitter {
    /// Every jitter.
    pub(crate) const ALL: [Jitter; 4] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];

    /// The name configuration uses.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
        }
    }

    /// The name of the runtime's variant, for the generated code.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            Jitter::None => "None",
            Jitter::Full => "Full",
            Jitter::Equal => "Equal",
            Jitter::Decorrelated => "Decorrelated",
        }
    }
}

/// A jitter name that is not one of the names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JitterParseError {
    input: String,
}

impl fmt::Display for JitterParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown jitter `{}`: expected one of \"none\", \"full\", \"equal\", \"decorrelated\"",
            self.input
        )
    }
}

impl FromStr for Jitter {
    type Err = JitterParseError;

    /// Parses a jitter name, trimmed and case-insensitive.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        find_by_name(Jitter::ALL, Jitter::as_str, value).map_err(|input| JitterParseError { input })
    }
}
