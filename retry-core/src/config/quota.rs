//! The retry quota in one setting: off, a fixed number of tokens, or sized by the scope's
//! traffic. A façade over the quota's own settings (`quota_window`, `quota_capacity` and the
//! three retry costs), the same in `RetryConfigBuilder::quota`, `#[retryable(quota = ...)]` and
//! the `RETRY_QUOTA` environment variable.
//!
//! `retry-macros` keeps a copy of the names' parser (`retry-macros/src/parse/quota.rs`) to check
//! `quota = "..."` at compile time; its tests fail when the two parse any string differently.

use std::fmt;
use std::str::FromStr;

use super::{ConfigError, RetryConfig, defaults};
use crate::name::ValueParseError;

/// How a scope's retry quota is sized: the one setting for it, given to
/// [`RetryConfigBuilder::quota`](super::RetryConfigBuilder::quota), `#[retryable(quota = ...)]`
/// or `RETRY_QUOTA`, and reported by [`RetryConfig::quota`].
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
    /// one whole call's retries, so a lone call makes every attempt it asks for.
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

/// A quota setting a builder was given one by one, which a [`Quota`] may contradict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum QuotaSetting {
    Capacity,
    Window,
    Refill,
    RetryCost,
    TimeoutRetryCost,
    ThrottlingRetryCost,
    SuccessReward,
}

impl QuotaSetting {
    /// The builder method's name.
    fn name(self) -> &'static str {
        match self {
            QuotaSetting::Capacity => "quota_capacity",
            QuotaSetting::Window => "quota_window",
            QuotaSetting::Refill => "quota_refill_per_second",
            QuotaSetting::RetryCost => "retry_cost",
            QuotaSetting::TimeoutRetryCost => "timeout_retry_cost",
            QuotaSetting::ThrottlingRetryCost => "throttling_retry_cost",
            QuotaSetting::SuccessReward => "success_reward",
        }
    }

    /// The three costs, in the order a conflict names them.
    const COSTS: [QuotaSetting; 3] = [
        QuotaSetting::RetryCost,
        QuotaSetting::TimeoutRetryCost,
        QuotaSetting::ThrottlingRetryCost,
    ];

    /// The setting's value in `config`, for the costs.
    fn cost(self, config: &RetryConfig) -> Option<u32> {
        match self {
            QuotaSetting::RetryCost => Some(config.retry_cost),
            QuotaSetting::TimeoutRetryCost => Some(config.timeout_retry_cost),
            QuotaSetting::ThrottlingRetryCost => Some(config.throttling_retry_cost),
            _ => None,
        }
    }
}

/// The quota settings given to one builder.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct GivenSettings {
    given: [bool; 7],
}

impl GivenSettings {
    fn index(setting: QuotaSetting) -> usize {
        setting as usize
    }

    /// Records that `setting` was given.
    pub(super) fn give(&mut self, setting: QuotaSetting) {
        self.given[Self::index(setting)] = true;
    }

    fn has(&self, setting: QuotaSetting) -> bool {
        self.given[Self::index(setting)]
    }
}

/// `config` with `quota` applied over its quota settings, or the setting `given` that
/// contradicts `quota`. Done at `build()`, so the order of the builder's calls does not matter.
pub(super) fn apply(
    quota: Quota,
    given: GivenSettings,
    mut config: RetryConfig,
) -> Result<RetryConfig, ConfigError> {
    let conflict = |setting: QuotaSetting, reason: &'static str| ConfigError::QuotaConflict {
        quota,
        setting: setting.name(),
        reason,
    };
    match quota {
        Quota::Off => {
            for setting in QuotaSetting::COSTS {
                if given.has(setting) && setting.cost(&config) != Some(0) {
                    return Err(conflict(
                        setting,
                        "with the quota off a retry costs nothing; remove it, or choose \
                         `Quota::Fixed(n)` or `Quota::Traffic`",
                    ));
                }
            }
            let sizes = [
                QuotaSetting::Capacity,
                QuotaSetting::Window,
                QuotaSetting::Refill,
                QuotaSetting::SuccessReward,
            ];
            if let Some(&setting) = sizes.iter().find(|&&setting| given.has(setting)) {
                return Err(conflict(
                    setting,
                    "with the quota off there is no quota to size; remove it, or choose \
                     `Quota::Fixed(n)` or `Quota::Traffic`",
                ));
            }
            config.retry_cost = 0;
            config.timeout_retry_cost = 0;
            config.throttling_retry_cost = 0;
            config.quota_window = None;
            Ok(config)
        }
        Quota::Fixed(0) => Err(ConfigError::ZeroQuota),
        Quota::Fixed(tokens) => {
            if given.has(QuotaSetting::Window) {
                return Err(conflict(
                    QuotaSetting::Window,
                    "a fixed quota is not sized by traffic; remove quota_window, or choose \
                     `Quota::Traffic`",
                ));
            }
            if given.has(QuotaSetting::Capacity) && config.quota_capacity != tokens {
                return Err(conflict(
                    QuotaSetting::Capacity,
                    "the fixed quota sets the capacity; remove quota_capacity",
                ));
            }
            config.quota_window = None;
            config.quota_capacity = tokens;
            paid_retries(config, given, conflict)
        }
        Quota::Traffic => {
            if !given.has(QuotaSetting::Window) {
                config.quota_window = Some(defaults::QUOTA_WINDOW);
            }
            if !given.has(QuotaSetting::Capacity) {
                config.quota_capacity = defaults::QUOTA_CAPACITY;
            }
            paid_retries(config, given, conflict)
        }
    }
}

/// A fixed or traffic-sized quota needs retries that cost something: costs given as 0 in the
/// same builder contradict it; costs of 0 inherited from a configuration whose quota was off
/// (`to_builder`) are this crate's default costs again.
fn paid_retries(
    mut config: RetryConfig,
    given: GivenSettings,
    conflict: impl Fn(QuotaSetting, &'static str) -> ConfigError,
) -> Result<RetryConfig, ConfigError> {
    let free = |config: &RetryConfig| {
        QuotaSetting::COSTS
            .iter()
            .all(|setting| setting.cost(config) == Some(0))
    };
    if !free(&config) {
        return Ok(config);
    }
    if let Some(&setting) = QuotaSetting::COSTS
        .iter()
        .find(|&&setting| given.has(setting))
    {
        return Err(conflict(
            setting,
            "every retry costs 0, so the quota would never refuse one; choose `Quota::Off`, \
             or give retries a cost",
        ));
    }
    config.retry_cost = defaults::RETRY_COST;
    config.timeout_retry_cost = defaults::TIMEOUT_RETRY_COST;
    config.throttling_retry_cost = defaults::THROTTLING_RETRY_COST;
    Ok(config)
}

impl RetryConfig {
    /// How the quota is sized, read from the quota's settings: [`Quota::Off`] when every
    /// retry cost is 0, [`Quota::Fixed`] with the capacity when there is no `quota_window`,
    /// else [`Quota::Traffic`].
    ///
    /// ```
    /// use retry_core::{Quota, RetryConfig};
    /// assert_eq!(RetryConfig::default().quota(), Quota::Traffic);
    /// assert_eq!(RetryConfig::aws_classic().build()?.quota(), Quota::Fixed(500));
    /// let free = RetryConfig::builder().retry_cost(0).timeout_retry_cost(0).throttling_retry_cost(0);
    /// assert_eq!(free.build()?.quota(), Quota::Off);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn quota(&self) -> Quota {
        let free = self.retry_cost == 0 && self.timeout_retry_cost == 0;
        if free && self.throttling_retry_cost == 0 {
            Quota::Off
        } else if self.quota_window.is_none() {
            Quota::Fixed(self.quota_capacity)
        } else {
            Quota::Traffic
        }
    }
}
