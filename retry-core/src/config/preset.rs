//! Named presets: the configurations a [`RetryConfig`](super::RetryConfig) can start from.
//!
//! `retry-macros` keeps a copy (`retry-macros/src/parse/preset.rs`) to check `preset = "..."` at
//! compile time; its tests fail when the two parse any string differently.

use std::fmt;
use std::str::FromStr;

use crate::name::find_by_name;

/// A named starting configuration: this crate's default, or one of the AWS SDKs' presets.
///
/// ```
/// use retry_core::RetryPreset;
/// assert_eq!(" AWS-Classic ".parse::<RetryPreset>(), Ok(RetryPreset::AwsClassic));
/// assert_eq!(RetryPreset::default(), RetryPreset::Default);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum RetryPreset {
    /// This crate's default ([`RetryConfig::default`](super::RetryConfig::default)).
    #[default]
    Default,
    /// The AWS SDKs' classic standard mode
    /// ([`RetryConfig::aws_classic`](super::RetryConfig::aws_classic)).
    AwsClassic,
    /// The AWS SDKs' 2026 retry behavior
    /// ([`RetryConfig::aws_2026`](super::RetryConfig::aws_2026)).
    Aws2026,
}

impl RetryPreset {
    /// Every preset, in the order of [`RetryPreset::NAMES`].
    pub const ALL: [RetryPreset; 3] = [
        RetryPreset::Default,
        RetryPreset::AwsClassic,
        RetryPreset::Aws2026,
    ];

    /// The names configuration accepts.
    pub const NAMES: [&'static str; 3] = ["default", "aws-classic", "aws-2026"];

    /// The preset's configuration name.
    pub fn as_str(self) -> &'static str {
        match self {
            RetryPreset::Default => "default",
            RetryPreset::AwsClassic => "aws-classic",
            RetryPreset::Aws2026 => "aws-2026",
        }
    }
}

impl fmt::Display for RetryPreset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A preset name that is not one of [`RetryPreset::NAMES`].
///
/// ```
/// let error = "aws".parse::<retry_core::RetryPreset>().unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "unknown retry preset `aws`: expected \"default\", \"aws-classic\" or \"aws-2026\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPresetParseError {
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

impl std::error::Error for RetryPresetParseError {}

impl FromStr for RetryPreset {
    type Err = RetryPresetParseError;

    /// Parses a preset name, trimmed and case-insensitive.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        find_by_name(RetryPreset::ALL, RetryPreset::as_str, value)
            .map_err(|input| RetryPresetParseError { input })
    }
}

#[cfg(test)]
mod tests {
    use super::RetryPreset;
    use proptest::prelude::*;

    /// The rule, written out: trimmed, ASCII case ignored, one of three names.
    fn reference(input: &str) -> Result<RetryPreset, String> {
        let trimmed = input.trim();
        match trimmed.to_ascii_lowercase().as_str() {
            "default" => Ok(RetryPreset::Default),
            "aws-classic" => Ok(RetryPreset::AwsClassic),
            "aws-2026" => Ok(RetryPreset::Aws2026),
            _ => Err(format!(
                "unknown retry preset `{trimmed}`: expected \"default\", \"aws-classic\" or \
                 \"aws-2026\""
            )),
        }
    }

    fn check(input: &str) {
        let parsed = input
            .parse::<RetryPreset>()
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
            name in prop::sample::select(vec!["default", "aws-classic", "aws-2026", "aws_2026"]),
            upper in prop::collection::vec(any::<bool>(), 11),
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
