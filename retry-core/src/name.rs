//! Settings written as text: the names of the named values ([`RetryMode`], [`RetryPreset`],
//! [`Jitter`]; trimmed, ASCII case ignored), their parse and display written once
//! ([`named_values!`]), and the one error of every such value, [`Quota`] included.
//!
//! `retry-macros` keeps a copy (`retry-macros/src/parse/name.rs`) to check the attribute's
//! values at compile time; its tests fail when the two parse any string differently.
//!
//! [`RetryMode`]: crate::RetryMode
//! [`RetryPreset`]: crate::RetryPreset
//! [`Jitter`]: crate::backoff::Jitter
//! [`Quota`]: crate::Quota

use std::fmt;

/// The one of `all` whose `name` is `value` once trimmed, ASCII case ignored; otherwise the
/// trimmed input, for the caller's error.
pub(crate) fn find_by_name<T: Copy, const N: usize>(
    all: [T; N],
    name: fn(T) -> &'static str,
    value: &str,
) -> Result<T, String> {
    let trimmed = value.trim();
    all.into_iter()
        .find(|&item| name(item).eq_ignore_ascii_case(trimmed))
        .ok_or_else(|| trimmed.to_owned())
}

/// A setting's value written as text that its type does not accept: an unknown
/// [`RetryMode`](crate::RetryMode), [`RetryPreset`](crate::RetryPreset) or
/// [`Jitter`](crate::backoff::Jitter) name, or an invalid [`Quota`](crate::Quota). The
/// message names the setting, the value (trimmed) and what to write instead.
///
/// ```
/// use retry_core::backoff::Jitter;
/// use retry_core::{Quota, RetryMode, RetryPreset};
///
/// let mode = "legacy".parse::<RetryMode>().unwrap_err();
/// assert_eq!(mode.to_string(), "unknown retry mode `legacy`: expected \"standard\" or \"adaptive\"");
/// let preset = "aws".parse::<RetryPreset>().unwrap_err();
/// assert_eq!(
///     preset.to_string(),
///     "unknown retry preset `aws`: expected \"default\", \"aws-classic\" or \"aws-2026\""
/// );
/// let jitter = "random".parse::<Jitter>().unwrap_err();
/// assert_eq!(
///     jitter.to_string(),
///     "unknown jitter `random`: expected one of \"none\", \"full\", \"equal\", \"decorrelated\""
/// );
/// let quota = "unlimited".parse::<Quota>().unwrap_err();
/// assert_eq!(
///     quota.to_string(),
///     "invalid quota `unlimited`: expected \"off\", \"traffic\" or a number of tokens such as 2000"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueParseError {
    /// The value as given, trimmed.
    input: String,
    /// The setting (`retry mode`, `jitter`, `quota`).
    what: &'static str,
    problem: Problem,
}

/// What is wrong with a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Problem {
    /// Not one of the names; what to write instead.
    Unknown(&'static str),
    /// Not a value of the setting; why, and what to write instead.
    Invalid(&'static str),
}

impl ValueParseError {
    /// `input` is none of the names of `what`: `expected` says which are.
    pub(crate) fn unknown(what: &'static str, input: String, expected: &'static str) -> Self {
        Self {
            input,
            what,
            problem: Problem::Unknown(expected),
        }
    }

    /// `input` is not a value of `what`, for `reason`.
    pub(crate) fn invalid(what: &'static str, input: String, reason: &'static str) -> Self {
        Self {
            input,
            what,
            problem: Problem::Invalid(reason),
        }
    }
}

impl fmt::Display for ValueParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { input, what, .. } = self;
        match self.problem {
            Problem::Unknown(expected) => write!(f, "unknown {what} `{input}`: {expected}"),
            Problem::Invalid(reason) => write!(f, "invalid {what} `{input}`: {reason}"),
        }
    }
}

impl std::error::Error for ValueParseError {}

/// The names of a fieldless enum of settings, written once: `ALL` and `NAMES` (in the same
/// order), `as_str`, `Display` (the name) and `FromStr` (a name, trimmed, ASCII case ignored;
/// otherwise a [`ValueParseError`] saying that the value of `$what` is unknown and what was
/// `$expected`).
macro_rules! named_values {
    ($ty:ident, $what:literal, $expected:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in the order of [`NAMES`](Self::NAMES).
            pub const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// The names configuration accepts.
            pub const NAMES: [&'static str; [$($name),+].len()] = [$($name),+];

            /// The name configuration uses.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::name::ValueParseError;

            /// Parses a name, trimmed and case-insensitive.
            fn from_str(value: &str) -> Result<Self, Self::Err> {
                $crate::name::find_by_name(Self::ALL, Self::as_str, value).map_err(|input| {
                    $crate::name::ValueParseError::unknown($what, input, $expected)
                })
            }
        }
    };
}

pub(crate) use named_values;
