//! The retry mode: standard, or adaptive with client-side rate limiting.
//!
//! `retry-macros` keeps a copy (`retry-macros/src/parse/mode.rs`) to check `mode = "..."` at
//! compile time; its tests fail when the two parse any string differently.

use crate::name::named_values;

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

named_values!(RetryMode, "retry mode", "expected \"standard\" or \"adaptive\"", {
    Standard => "standard",
    Adaptive => "adaptive",
});

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
