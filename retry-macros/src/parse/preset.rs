//! Named presets: `preset = "default" | "aws-classic" | "aws-2026"`.
//!
//! Copy of `retry-core/src/config/preset.rs` (see [`super`]): same names, same message.

use super::name::named_values;

/// The runtime's `RetryPreset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RetryPreset {
    Default,
    AwsClassic,
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
