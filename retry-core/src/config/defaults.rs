//! The numbers behind the presets, named, with their sources.

use std::time::Duration;

/// Attempts per call, the first included. Source: the AWS SDKs' standard mode (`max_attempts = 3`).
pub const MAX_ATTEMPTS: u32 = 3;
/// Base of the exponential backoff. Source: the AWS SDKs' standard mode (`t_i = 1 s * 2^i`).
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Cap of the exponential backoff. Source: the AWS SDKs' standard mode (`MAX_BACKOFF = 20 s`).
pub const MAX_BACKOFF: Duration = Duration::from_secs(20);
/// Retry quota capacity. Source: the AWS SDKs (`INITIAL_RETRY_TOKENS = 500`).
pub const QUOTA_CAPACITY: u32 = 500;
/// Quota cost of a retry. Source: the AWS SDKs (`RETRY_COST = 5`).
pub const RETRY_COST: u32 = 5;
/// Quota cost of a retry after a timeout. Source: the AWS SDKs (`RETRY_TIMEOUT_COST = 10`).
pub const TIMEOUT_RETRY_COST: u32 = 10;
/// Quota returned by a success on the first attempt. Source: the AWS SDKs (`NO_RETRY_INCREMENT = 1`).
pub const SUCCESS_REWARD: u32 = 1;

/// The `aws-2026` preset: the retry behavior the AWS SDKs adopted in 2025–2026.
pub mod aws_2026 {
    use std::time::Duration;

    /// Quota cost of a retry of a non-throttling error.
    pub const RETRY_COST: u32 = 14;
    /// Quota cost of a retry of a throttling error.
    pub const THROTTLING_RETRY_COST: u32 = 5;
    /// Quota cost of a retry after a timeout.
    pub const TIMEOUT_RETRY_COST: u32 = 14;
    /// Backoff base for non-throttling errors.
    pub const INITIAL_BACKOFF: Duration = Duration::from_millis(50);
    /// Backoff base for throttling errors.
    pub const THROTTLING_INITIAL_BACKOFF: Duration = Duration::from_secs(1);
    /// A server's `retry_after` is clamped to `[t_i, t_i + RETRY_AFTER_SLACK]`.
    pub const RETRY_AFTER_SLACK: Duration = Duration::from_secs(5);
}

/// The preset this crate recommends (`RetryConfig::recommended()`): `aws-2026` with a retry quota
/// sized by the scope's own traffic.
pub mod recommended {
    use std::time::Duration;

    /// The quota holds one token per call of the last `QUOTA_WINDOW` (at the `aws-2026` cost of
    /// 14 a retry, about 4 s of the scope's traffic in retries), so that the retries an outage
    /// draws from a fleet depend on its traffic, not on how many clients carry it. At most
    /// 1 + 60 / (14 * 60) = 1.07 attempts per call over a 60 s outage; measured in the storm
    /// simulator (`docs/sim/`): 1.046 in S1, and 1.065 / 1.046 / 1.034 with the same load on
    /// 10 / 100 / 1000 clients in S4 (`aws-2026`: 1.008 / 1.083 / 1.834).
    pub const QUOTA_WINDOW: Duration = Duration::from_secs(60);

    /// The most the traffic-sized quota holds: 60 s of 83 calls/s. Above it a client's
    /// retries stop growing with its traffic; it is also the level a new client starts with,
    /// for the first second before its rate is measured.
    pub const QUOTA_CAPACITY: u32 = 5_000;
}
