//! Jitter: `jitter = "none" | "full" | "equal" | "decorrelated"`.
//!
//! Copy of `retry-core/src/backoff/jitter.rs` (see [`super`]): same names, same message.

use super::name::named_values;

/// The runtime's `Jitter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Jitter {
    None,
    Full,
    Equal,
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
