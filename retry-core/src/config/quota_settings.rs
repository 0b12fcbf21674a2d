//! The quota's settings given one by one to a builder, and the one [`Quota`] setting applied
//! over them at `build()`, with the conflicts between the two.

use super::defaults;
use super::error::ConfigError;
use super::quota::Quota;
use super::retry_config::RetryConfig;

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
