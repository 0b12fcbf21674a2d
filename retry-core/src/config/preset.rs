//! Named presets: the configurations a [`RetryConfig`](super::RetryConfig) can start from.
//!
//! `retry-macros` keeps a copy (`retry-macros/src/parse/preset.rs`) to check `preset = "..."` at
//! compile time; its tests fail when the two parse any string differently.

use crate::name::named_values;

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

named_values!(
    RetryPreset,
    "retry preset",
    "expected \"default\", \"aws-classic\" or \"aws-2026\"",
    {
        Default => "default",
        AwsClassic => "aws-classic",
        Aws2026 => "aws-2026",
    }
);

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
