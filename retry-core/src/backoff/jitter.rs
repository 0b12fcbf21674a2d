//! Jitter: how randomness spreads a backoff delay.
//!
//! `retry-macros` keeps a copy (`retry-macros/src/parse/jitter.rs`) to check `jitter = "..."` at
//! compile time; its tests fail when the two parse any string differently.

use std::fmt;
use std::str::FromStr;

use crate::name::find_by_name;

/// How randomness spreads the exponential delay `t = min(initial * 2^(retry-1), max)`.
///
/// The formulas are those of the AWS Architecture Blog, "Exponential Backoff And Jitter" (2015),
/// which the AWS SDKs follow; full jitter is their default.
///
/// ```
/// use retry_core::Jitter;
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

impl Jitter {
    /// Every jitter, in the order of [`Jitter::NAMES`].
    pub const ALL: [Jitter; 4] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];

    /// The names configuration accepts.
    pub const NAMES: [&'static str; 4] = ["none", "full", "equal", "decorrelated"];

    /// The name configuration uses (`"none"`, `"full"`, `"equal"`, `"decorrelated"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
        }
    }
}

impl fmt::Display for Jitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A jitter name that is not one of [`Jitter::NAMES`].
///
/// ```
/// let error = "random".parse::<retry_core::Jitter>().unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "unknown jitter `random`: expected one of \"none\", \"full\", \"equal\", \"decorrelated\""
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JitterParseError {
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

impl std::error::Error for JitterParseError {}

impl FromStr for Jitter {
    type Err = JitterParseError;

    /// Parses a jitter name, trimmed and case-insensitive.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        find_by_name(Jitter::ALL, Jitter::as_str, value).map_err(|input| JitterParseError { input })
    }
}

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
