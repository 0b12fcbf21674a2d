//! Jitter: how randomness spreads a backoff delay.
//!
//! `retry-macros` keeps a copy (`retry-macros/src/parse/jitter.rs`) to check `jitter = "..."` at
//! compile time; its tests fail when the two parse any string differently.

use crate::name::named_values;

/// How randomness spreads the exponential delay `t = min(initial * 2^(retry-1), max)`.
///
/// The formulas are those of the AWS Architecture Blog, "Exponential Backoff And Jitter" (2015),
/// which the AWS SDKs follow; full jitter is their default.
///
/// ```
/// use retry_core::backoff::Jitter;
/// assert_eq!(" Decorrelated ".parse::<Jitter>(), Ok(Jitter::Decorrelated));
/// assert_eq!(Jitter::default(), Jitter::Full);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Jitter {
    /// `t`: no randomness. Synchronizes retrying clients; for tests and single clients only.
    None,
    /// `U[0,1) * t`: the spread that minimizes contention (the default).
    #[default]
    Full,
    /// `t/2 + U[0,1) * t/2`: never less than half the exponential delay.
    Equal,
    /// `min(max, U(initial, previous * 3))`: grows from the previous delay instead of the
    /// retry number.
    Decorrelated,
}

named_values!(
    Jitter,
    "jitter",
    "expected one of \"none\", \"full\", \"equal\", \"decorrelated\"",
    {
        None => "none",
        Full => "full",
        Equal => "equal",
        Decorrelated => "decorrelated",
    }
);

#[cfg(test)]
mod tests {
    use super::Jitter;
    use proptest::prelude::*;

    /// The rule, written out: trimmed, ASCII case ignored, one of four names.
    fn reference(input: &str) -> Result<Jitter, String> {
        let trimmed = input.trim();
        match trimmed.to_ascii_lowercase().as_str() {
            "none" => Ok(Jitter::None),
            "full" => Ok(Jitter::Full),
            "equal" => Ok(Jitter::Equal),
            "decorrelated" => Ok(Jitter::Decorrelated),
            _ => Err(format!(
                "unknown jitter `{trimmed}`: expected one of \"none\", \"full\", \"equal\", \
                 \"decorrelated\""
            )),
        }
    }

    fn check(input: &str) {
        let parsed = input.parse::<Jitter>().map_err(|error| error.to_string());
        assert_eq!(parsed, reference(input), "{input:?}");
    }

    proptest! {
        #[test]
        fn any_string_matches_the_reference(input in any::<String>()) {
            check(&input);
        }

        #[test]
        fn names_in_any_case_spacing_and_with_extra_characters_match_the_reference(
            name in prop::sample::select(vec!["none", "full", "equal", "decorrelated"]),
            upper in prop::collection::vec(any::<bool>(), 12),
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
