//! The presets' backoff numbers, which `#[retryable]` checks `initial_backoff <= max_backoff`
//! against when only one of them is given, and whose throttling base a lower `max_backoff` caps.
//!
//! Copy of the numbers of `retry-core/src/config/defaults.rs` and of how
//! `RetryConfig::from_preset` (`retry-core/src/config/mod.rs`) uses them (see [`super`]).

use std::time::Duration;

use super::preset::RetryPreset;

/// Cap of the exponential backoff. Source: the AWS SDKs' standard mode (`MAX_BACKOFF = 20 s`).
const MAX_BACKOFF: Duration = Duration::from_secs(20);

/// The AWS SDKs' classic standard mode.
mod aws_classic {
    use std::time::Duration;

    /// Base of the exponential backoff (`t_i = 1 s * 2^i`), throttling errors included.
    pub(super) const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
}

/// The `aws-2026` preset: the retry behavior the AWS SDKs adopted in 2025–2026.
mod aws_2026 {
    use std::time::Duration;

    /// Backoff base for non-throttling errors.
    pub(super) const INITIAL_BACKOFF: Duration = Duration::from_millis(50);
    /// Backoff base for throttling errors.
    pub(super) const THROTTLING_INITIAL_BACKOFF: Duration = Duration::from_secs(1);
}

/// The backoff a preset starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PresetBackoff {
    /// `initial_backoff`.
    pub(crate) initial: Duration,
    /// `max_backoff`.
    pub(crate) max: Duration,
    /// The base of throttling errors' backoff, when the preset sets one apart from `initial`
    /// (`None`: throttling errors back off from `initial` too).
    pub(crate) throttling: Option<Duration>,
}

/// The backoff `preset` starts from.
pub(crate) fn backoff(preset: RetryPreset) -> PresetBackoff {
    match preset {
        RetryPreset::AwsClassic => PresetBackoff {
            initial: aws_classic::INITIAL_BACKOFF,
            max: MAX_BACKOFF,
            throttling: None,
        },
        // The default backs off like `aws-2026` (its quota and `retry_after` differ).
        RetryPreset::Default | RetryPreset::Aws2026 => PresetBackoff {
            initial: aws_2026::INITIAL_BACKOFF,
            max: MAX_BACKOFF,
            throttling: Some(aws_2026::THROTTLING_INITIAL_BACKOFF),
        },
    }
}
