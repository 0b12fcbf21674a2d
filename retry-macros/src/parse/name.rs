//! Settings written as text: the names of the named values (a retry mode, a jitter, a preset;
//! trimmed, ASCII case ignored), their parse written once ([`named_values!`]), and the one error
//! of every such value, the quota's included.
//!
//! Copy of `retry-core/src/name.rs` (see [`super`]): same rule, same messages. The copy also
//! names each value's variant in the runtime, for the generated code.

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

/// A value written as text that its setting does not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValueParseError {
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

/// The names of a fieldless enum that copies one of the runtime's, written once: `ALL`,
/// `as_str`, `variant` (the runtime variant's name, for the generated code) and `FromStr`
/// (a name, trimmed, ASCII case ignored; otherwise a [`ValueParseError`] saying that the value
/// of `$what` is unknown and what was `$expected`).
macro_rules! named_values {
    ($ty:ident, $what:literal, $expected:literal, { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in the runtime's order.
            pub(crate) const ALL: [$ty; [$($name),+].len()] = [$($ty::$variant),+];

            /// The name configuration uses.
            pub(crate) fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }

            /// The name of the runtime's variant, for the generated code.
            pub(crate) fn variant(self) -> &'static str {
                match self {
                    $($ty::$variant => stringify!($variant),)+
                }
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::parse::name::ValueParseError;

            /// Parses a name, trimmed and case-insensitive.
            fn from_str(value: &str) -> Result<Self, Self::Err> {
                $crate::parse::name::find_by_name(Self::ALL, Self::as_str, value).map_err(|input| {
                    $crate::parse::name::ValueParseError::unknown($what, input, $expected)
                })
            }
        }
    };
}

pub(crate) use named_values;
