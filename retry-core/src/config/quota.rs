//! The retry quota in one setting: off, a fixed number of tokens, or sized by the scope's
//! traffic. A façade over the quota's own settings (`quota_window`, `quota_capacity` and the
//! three retry costs; applied over them in `quota_settings.rs`), the same in
//! `RetryConfigBuilder::quota`, `#[retryable(quota = ...)]` and the `RETRY_QUOTA` environment
//! variable.
//!
//! `retry-macros` keeps a copy of the names' parser (`retry-macros/src/parse/quota.rs`) to check
//! `quota = "..."` at compile time; its tests fail when the two parse any string differently.

use std::fmt;
use std::str::FromStr;

use crate::name::ValueParseError;

/// How a scope's retry quota is sized: the one setting for it, given to
/// [`RetryConfigBuilder::quota`](super::RetryConfigBuilder::quota), `#[retryable(quota = ...)]`
/// or `RETRY_QUOTA`, and reported by [`RetryConfig::quota`](crate::RetryConfig::quota).
///
/// The quota is what stops retry storms: each retry takes tokens from its scope's quota (14 for
/// an error, 5 for a throttling error, by default), a success gives some back, and when the
/// quota cannot pay, the call returns its error instead of retrying.
///
/// ```
/// use retry_core::{Quota, RetryConfig};
///
/// // No quota: every call makes every attempt it asks for.
/// let off = RetryConfig::builder().quota(Quota::Off).build()?;
/// assert_eq!((off.retry_cost(), off.throttling_retry_cost(), off.quota_window()), (0, 0, None));
/// // The AWS SDKs' way: a fixed bucket per scope, full at first.
/// let fixed = RetryConfig::builder().quota(Quota::Fixed(2000)).build()?;
/// assert_eq!((fixed.quota_capacity(), fixed.quota_window()), (2000, None));
/// assert_eq!(fixed.quota(), Quota::Fixed(2000));
/// // The default: sized by the scope's own traffic.
/// assert_eq!(RetryConfig::default().quota(), Quota::Traffic);
/// assert_eq!("off".parse::<Quota>(), Ok(Quota::Off));
/// # Ok::<(), retry_core::ConfigError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Quota {
    /// No quota: every retry is free (the three retry costs are 0) and the scope's traffic is
    /// not sampled. Retries are then bounded by `max_attempts`, the backoff and the deadline
    /// only: right for a script, a test, a batch job; a fleet in an outage multiplies its load
    /// by `max_attempts`.
    Off,
    /// A fixed bucket of this many tokens per scope, full at first, refilled by successes (and
    /// `quota_refill_per_second` if set), as the AWS SDKs keep it (500 tokens). Size it as the
    /// retries a scope may make in a row: a retry of an error costs 14 by default, so 2000
    /// tokens are about 140 retries before successes must pay for more.
    Fixed(u32),
    /// The default: sized by the scope's own traffic. A retry finds at most one token per call
    /// the scope made in the last `quota_window` (60 s), at most `quota_capacity` (5000), so a
    /// fleet's retry budget follows its load, not its number of clients, and never less than
    /// one whole call's retries, so a lone call makes every attempt it asks for. What calls in
    /// flight hold is lent while retried calls come back, so many calls retrying at once are
    /// not refused for it ([`RetryConfig::quota_window`](crate::RetryConfig::quota_window)).
    #[default]
    Traffic,
}

impl Quota {
    /// The names configuration accepts beside a number of tokens.
    pub const NAMES: [&'static str; 2] = ["off", "traffic"];
}

impl fmt::Display for Quota {
    /// As configuration writes it: `off`, `traffic`, or the number of tokens.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Quota::Off => f.write_str("off"),
            Quota::Fixed(tokens) => write!(f, "{tokens}"),
            Quota::Traffic => f.write_str("traffic"),
        }
    }
}

impl FromStr for Quota {
    type Err = ValueParseError;

    /// Parses `off` or `traffic` (trimmed, case-insensitive), or a whole number of tokens
    /// from 1 to `u32::MAX` (a fixed quota).
    ///
    /// ```
    /// use retry_core::Quota;
    /// assert_eq!(" Traffic ".parse::<Quota>(), Ok(Quota::Traffic));
    /// assert_eq!("2000".parse::<Quota>(), Ok(Quota::Fixed(2000)));
    /// assert!("0".parse::<Quota>().is_err());
    /// ```
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let trimmed = value.trim();
        let error = |reason| ValueParseError::invalid("quota", trimmed.to_owned(), reason);
        if trimmed.eq_ignore_ascii_case("off") {
            return Ok(Quota::Off);
        }
        if trimmed.eq_ignore_ascii_case("traffic") {
            return Ok(Quota::Traffic);
        }
        if trimmed.is_empty() || !trimmed.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(error(
                "expected \"off\", \"traffic\" or a number of tokens such as 2000",
            ));
        }
        // Digits only: parsing fails on overflow alone, whatever the number of digits.
        match trimmed.parse::<u32>() {
            Ok(0) => Err(error(
                "a quota of 0 tokens would refuse every retry; write \"off\" for no quota, or set \
                 max_attempts to 1 for no retries",
            )),
            Ok(tokens) => Ok(Quota::Fixed(tokens)),
            Err(_) => Err(error(
                "at most 4294967295 tokens; write \"off\" for no quota",
            )),
        }
    }
}
