//! The numbers behind the default configuration and the presets, named, with their sources.
//! Users read them in the table of [`RetryConfig::default`] and in the presets' docs.
//!
//! The constants at the top are this crate's default ([`RetryConfig::default`], a bare
//! `#[retryable]`): the AWS SDKs' 2026 costs and backoff, with a retry quota sized by the
//! scope's own traffic and a floor of one whole call (the AWS SDKs' 500 while a scope is
//! young), and a server's `retry_after` always honoured as a minimum. [`aws_classic`] and
//! [`aws_2026`] hold the AWS SDKs' presets.
//!
//! The figures quoted are from the storm simulator (`cargo run -p retry-sim --release`,
//! `docs/sim/`): 100 clients × 7 req/s against a 1000 req/s server, 20 seeds; S1 is a 60 s
//! outage, S4 the same 700 req/s carried by 10, 100 or 1000 clients.
//!
//! [`RetryConfig::default`]: super::RetryConfig

use std::time::Duration;

/// Attempts per call, the first included. Source: the AWS SDKs' standard mode
/// (`max_attempts = 3`).
pub const MAX_ATTEMPTS: u32 = 3;

/// Base of the exponential backoff of non-throttling errors (`t_i = 50 ms × 2^i`, full jitter).
/// Source: the AWS SDKs' 2026 retry behavior ([`aws_2026::INITIAL_BACKOFF`]): a transient error
/// is usually gone within tens of milliseconds, and the quota, not the backoff, is what keeps a
/// fleet from hammering a failing service.
pub const INITIAL_BACKOFF: Duration = aws_2026::INITIAL_BACKOFF;

/// Base of the exponential backoff of throttling errors, 1 s. Source: the AWS SDKs' 2026 retry
/// behavior ([`aws_2026::THROTTLING_INITIAL_BACKOFF`]). A `max_backoff` set lower caps it.
pub const THROTTLING_INITIAL_BACKOFF: Duration = aws_2026::THROTTLING_INITIAL_BACKOFF;

/// Cap of every backoff delay. Source: the AWS SDKs' standard mode (`MAX_BACKOFF = 20 s`).
pub const MAX_BACKOFF: Duration = aws_classic::MAX_BACKOFF;

/// Quota cost of a retry of a transient or server error. Source: the AWS SDKs' 2026 retry
/// behavior ([`aws_2026::RETRY_COST`]). With a quota of one token per call of the last
/// [`QUOTA_WINDOW`], an outage of that length costs at most `1 + 1/14 = 1.071` attempts per
/// call; the classic cost of 5 would allow `1 + 1/5 = 1.2`, above S1's 1.11.
pub const RETRY_COST: u32 = aws_2026::RETRY_COST;

/// Quota cost of a retry after a timeout, 14. Source: the AWS SDKs' 2026 retry behavior
/// ([`aws_2026::TIMEOUT_RETRY_COST`]).
pub const TIMEOUT_RETRY_COST: u32 = aws_2026::TIMEOUT_RETRY_COST;

/// Quota cost of a retry of a throttling error, 5. Source: the AWS SDKs' 2026 retry behavior
/// ([`aws_2026::THROTTLING_RETRY_COST`]): a throttled request did not fail, it was asked to
/// come back later.
pub const THROTTLING_RETRY_COST: u32 = aws_2026::THROTTLING_RETRY_COST;

/// Quota returned by a success on the first attempt. Source: the AWS SDKs
/// (`NO_RETRY_INCREMENT = 1`).
pub const SUCCESS_REWARD: u32 = aws_classic::SUCCESS_REWARD;

/// The window of traffic that sizes the quota: a retry finds at most one token per call the
/// scope made in the last 60 s (at least one whole call's retries, `(max_attempts − 1) × 14`,
/// so a lone call makes every attempt it asks for; at least [`YOUNG_SCOPE_QUOTA`] while the
/// scope is younger than 60 s). A call that starts retrying after 60 s in which no call did
/// finds one whole call's retries again, and a success gives back every retry its call paid
/// for, so the quota drains only through calls that fail (what calls in flight hold is lent to
/// other retries while retried calls come back; a call refused a retry gets back what it paid
/// unless one was already refunded since the scope's last success: at most one per client in
/// an outage). A fleet's retries in an outage then follow its load, not its
/// number of clients: at most `1 + 60 / (14 × 60) = 1.071` attempts per call over a 60 s
/// outage, and one refused call's retries per client. Measured: S1 1.072 attempts per request
/// over the outage, 1.000 from 10 s in; S4 1.072 / 1.072 / 1.069 with 10 / 100 / 1000 clients
/// (a fixed quota of 500: 1.008 / 1.083 / 1.834 with `aws-2026`'s costs, 1.024 / 1.238 / 2.953
/// with the classic ones). The floor's price: 10,000 clients at 0.07 calls/s each, too few to
/// buy one retry, keep one call's retries each and make 1.470 attempts per request in S1's
/// outage (the fixed quotas: 2.967 and 2.998).
pub const QUOTA_WINDOW: Duration = Duration::from_secs(60);

/// The most the traffic-sized quota holds, 5000 tokens: 60 s of 83 calls/s. Above that rate a client's retry
/// budget stops growing with its traffic.
pub const QUOTA_CAPACITY: u32 = 5_000;

/// What a traffic-sized scope younger than its [`QUOTA_WINDOW`] starts with, and the least its
/// cap is until it is one window old (or one whole call's retries, if that is more): the AWS
/// SDKs' initial retry quota ([`aws_classic::QUOTA_CAPACITY`], `INITIAL_RETRY_TOKENS = 500`).
/// A scope that has not yet seen a window of traffic cannot tell a lone script from one of many
/// clients, so it grants what `aws-2026` would: never fewer retries (in the newcomer's program
/// of 20 workers against a store that fails each key twice, 0 of 190 keys were served when a
/// new scope started with one call's retries).
pub const YOUNG_SCOPE_QUOTA: u32 = aws_classic::QUOTA_CAPACITY;

/// The AWS SDKs' classic standard mode (`RetryConfig::aws_classic()`). Sources: the AWS SDKs and
/// Tools Reference Guide, "Retry behavior"; botocore's and smithy-rs's standard retry strategy
/// and retry quota constants.
pub mod aws_classic {
    use std::time::Duration;

    /// Attempts per call, the first included (`max_attempts = 3`).
    pub const MAX_ATTEMPTS: u32 = 3;
    /// Base of the exponential backoff (`t_i = 1 s × 2^i`), for every error kind.
    pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
    /// Cap of the exponential backoff (`MAX_BACKOFF = 20 s`).
    pub const MAX_BACKOFF: Duration = Duration::from_secs(20);
    /// Retry quota capacity, per client (`INITIAL_RETRY_TOKENS = 500`).
    pub const QUOTA_CAPACITY: u32 = 500;
    /// Quota cost of a retry, throttling included (`RETRY_COST = 5`).
    pub const RETRY_COST: u32 = 5;
    /// Quota cost of a retry after a timeout (`RETRY_TIMEOUT_COST = 10`).
    pub const TIMEOUT_RETRY_COST: u32 = 10;
    /// Quota returned by a success on the first attempt (`NO_RETRY_INCREMENT = 1`).
    pub const SUCCESS_REWARD: u32 = 1;
}

/// The `aws-2026` preset (`RetryConfig::aws_2026()`): the retry behavior the AWS SDKs adopted
/// in 2025–2026, on the classic standard mode.
pub mod aws_2026 {
    use std::time::Duration;

    /// Quota cost of a retry of a non-throttling error (14).
    pub const RETRY_COST: u32 = 14;
    /// Quota cost of a retry of a throttling error (5).
    pub const THROTTLING_RETRY_COST: u32 = 5;
    /// Quota cost of a retry after a timeout (14).
    pub const TIMEOUT_RETRY_COST: u32 = 14;
    /// Backoff base for non-throttling errors (`t_i = 50 ms × 2^i`).
    pub const INITIAL_BACKOFF: Duration = Duration::from_millis(50);
    /// Backoff base for throttling errors (`t_i = 1 s × 2^i`).
    pub const THROTTLING_INITIAL_BACKOFF: Duration = Duration::from_secs(1);
    /// A server's `retry_after` is clamped to `[t_i, t_i + RETRY_AFTER_SLACK]`, 5 s.
    pub const RETRY_AFTER_SLACK: Duration = Duration::from_secs(5);
}
