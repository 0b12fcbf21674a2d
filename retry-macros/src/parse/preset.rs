//! Named presets: `preset = "default" | "aws-classic" | "aws-2026"`.
//!
//! Copy of `retry-core/src/config/preset.rs` (see [`super`]): same names, same message.

use std::fmt;
use std::str::FromStr;

use super::name::find_by_name;

/// The runtime's `RetryPreset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryPreset {
    Default,
    AwsClassic,
    Aws2026,
}

impl RetryPreset {
    /// Every preset.
    pub(crate) const ALL: [RetryPreset; 3] = [
        RetryPreset::Default,
        RetryPreset::AwsClassic,
        RetryPreset::Aws2026,
    ];

    /// The preset's configuration name.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RetryPreset::Default => "default",
            RetryPreset::AwsClassic => "aws-classic",
            RetryPreset::Aws2026 => "aws-2026",
        }
    }

    /// The name of the runtime's variant, for the generated code.
    pub(crate) fn variant(self) -> &'static str {
        match self {
            RetryPreset::Default => "Default",
            RetryPreset::AwsClassic => "AwsClassic",
            RetryPreset::Aws2026 => "Aws2026",
        }
    }
}

/// A preset name that is not one of the names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RetryPresetParseError {
    input: String,
}

impl fmt::Display for RetryPresetParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown retry preset `{}`: expected \"default\", \"aws-classic\" or \"aws-2026\"",
            self.input
        )
    }
}

impl FromStr for RetryPreset {
    type Err = RetryPresetParseError;

    /// Parses a preset name, trimmed and case-insensitive.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        find_by_name(RetryPreset::ALL, RetryPreset::as_str, value)
            .map_err(|input| RetryPresetParseError { input })
    }
}
