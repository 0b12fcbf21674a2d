//! [`RetryConfigBuilder`]: the settings given one by one, checked at `build()`; and the
//! builders a [`RetryConfig`] starts from (this crate's defaults, the presets, a configuration).

use std::time::Duration;

use super::defaults;
use super::error::ConfigError;
use super::mode::RetryMode;
use super::preset::RetryPreset;
use super::quota::Quota;
use super::quota_settings::{self, GivenSettings, QuotaSetting};
use super::retry_config::{RetryConfig, ThrottlingBackoff};
use crate::backoff::Jitter;

impl RetryConfig {
    /// A builder starting from this crate's defaults (the [`Default`]).
    ///
    /// ```
    /// let config = retry_core::RetryConfig::builder().build().unwrap();
    /// assert_eq!(config, retry_core::RetryConfig::default());
    /// ```
    pub fn builder() -> RetryConfigBuilder {
        RetryConfigBuilder::from_config(Self::default())
    }

    /// A builder starting from `preset`.
    ///
    /// ```
    /// use retry_core::{RetryConfig, RetryPreset};
    /// let classic = RetryConfig::from_preset(RetryPreset::AwsClassic).build().unwrap();
    /// assert_eq!(classic, RetryConfig::aws_classic().build().unwrap());
    /// ```
    pub fn from_preset(preset: RetryPreset) -> RetryConfigBuilder {
        match preset {
            RetryPreset::Default => Self::builder(),
            RetryPreset::AwsClassic => Self::aws_classic(),
            RetryPreset::Aws2026 => Self::aws_2026(),
        }
    }

    /// A builder starting from the AWS SDKs' classic standard mode:
    /// 3 attempts, backoff `1 s × 2^i` capped at 20 s, full jitter, a fixed quota of 500 per
    /// scope where a retry costs 5 and a retry after a timeout 10, and a first-try success
    /// returns 1.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = retry_core::RetryConfig::aws_classic().build().unwrap();
    /// assert_eq!(config.retry_cost(), 5);
    /// assert_eq!(config.initial_backoff(), Duration::from_secs(1));
    /// assert_eq!((config.quota_capacity(), config.quota_window()), (500, None));
    /// ```
    pub fn aws_classic() -> RetryConfigBuilder {
        use defaults::aws_classic as preset;
        RetryConfigBuilder::from_config(Self {
            mode: RetryMode::Standard,
            max_attempts: preset::MAX_ATTEMPTS,
            initial_backoff: preset::INITIAL_BACKOFF,
            throttling_backoff: ThrottlingBackoff::Initial,
            max_backoff: preset::MAX_BACKOFF,
            jitter: Jitter::Full,
            timeout: None,
            quota_capacity: preset::QUOTA_CAPACITY,
            retry_cost: preset::RETRY_COST,
            timeout_retry_cost: preset::TIMEOUT_RETRY_COST,
            throttling_retry_cost: preset::RETRY_COST,
            success_reward: preset::SUCCESS_REWARD,
            quota_refill_per_second: None,
            quota_window: None,
            retry_after_slack: None,
            max_wait: None,
            long_polling: false,
        })
    }

    /// A builder starting from the `aws-2026` preset: the classic
    /// standard mode with retry cost 14, throttling cost 5, timeout cost 14, backoff base 50 ms
    /// (1 s for throttling), and a server's `retry_after` clamped to `[t_i, t_i + 5 s]`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = retry_core::RetryConfig::aws_2026().build().unwrap();
    /// assert_eq!(config.retry_cost(), 14);
    /// assert_eq!(config.initial_backoff(), Duration::from_millis(50));
    /// assert_eq!(config.retry_after_slack(), Some(Duration::from_secs(5)));
    /// ```
    pub fn aws_2026() -> RetryConfigBuilder {
        use defaults::aws_2026 as preset;
        let classic = Self::aws_classic().config;
        RetryConfigBuilder::from_config(Self {
            initial_backoff: preset::INITIAL_BACKOFF,
            throttling_backoff: ThrottlingBackoff::Preset(preset::THROTTLING_INITIAL_BACKOFF),
            retry_cost: preset::RETRY_COST,
            timeout_retry_cost: preset::TIMEOUT_RETRY_COST,
            throttling_retry_cost: preset::THROTTLING_RETRY_COST,
            retry_after_slack: Some(preset::RETRY_AFTER_SLACK),
            ..classic
        })
    }

    /// A builder starting from this configuration.
    ///
    /// ```
    /// let base = retry_core::RetryConfig::default();
    /// let five = base.to_builder().max_attempts(5).build().unwrap();
    /// assert_eq!(five.max_attempts(), 5);
    /// ```
    pub fn to_builder(&self) -> RetryConfigBuilder {
        RetryConfigBuilder::from_config(self.clone())
    }
}

/// Builds a [`RetryConfig`]; [`build`](Self::build) checks every value.
///
/// ```
/// use retry_core::{ConfigError, RetryConfig};
/// use std::time::Duration;
///
/// let error = RetryConfig::builder()
///     .initial_backoff(Duration::from_secs(30))
///     .build()
///     .unwrap_err();
/// assert!(matches!(error, ConfigError::BackoffOrder { .. }));
/// ```
#[derive(Debug, Clone)]
#[must_use = "call .build() to get the configuration"]
pub struct RetryConfigBuilder {
    config: RetryConfig,
    /// The one setting for the quota, applied over the quota's settings at `build()`.
    quota: Option<Quota>,
    /// The quota's settings given one by one, which `quota` may contradict.
    given: GivenSettings,
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty => $field:ident $(= $wrap:path)? $(, sizes the quota: $setting:ident)?;)*) => {$(
        $(#[$doc])*
        pub fn $name(mut self, value: $ty) -> Self {
            self.config.$field = $($wrap)?(value);
            $(self.given.give(QuotaSetting::$setting);)?
            self
        }
    )*};
}

impl RetryConfigBuilder {
    fn from_config(config: RetryConfig) -> Self {
        Self {
            config,
            quota: None,
            given: GivenSettings::default(),
        }
    }

    /// Sizes the retry quota, or switches it off: the one setting over the quota's own
    /// (`quota_window`, `quota_capacity` and the three retry costs), also written
    /// `#[retryable(quota = "off" | "traffic" | 2000)]` and `RETRY_QUOTA=off|traffic|2000`.
    ///
    /// * [`Quota::Off`]: every retry cost 0 and no traffic sampling (no window);
    /// * [`Quota::Fixed(n)`](Quota::Fixed): no window, a capacity of `n`, full at first;
    /// * [`Quota::Traffic`] (the default): the default window (60 s) and cap (5000).
    ///
    /// Applied at [`build`](Self::build), whatever the order of the calls: a quota setting
    /// given beside it that contradicts it is an error naming both (`Off` with a nonzero cost
    /// or any sizing setting; `Fixed(n)` with a `quota_window` or another capacity; `Fixed` or
    /// `Traffic` with every cost given as 0). Beside `Traffic`, a `quota_window` or
    /// `quota_capacity` tunes the traffic-sized quota; beside `Fixed`, the costs, the
    /// success reward and a refill rate tune the bucket.
    ///
    /// ```
    /// use retry_core::{ConfigError, Quota, RetryConfig};
    /// use std::time::Duration;
    ///
    /// let off = RetryConfig::builder().quota(Quota::Off).build()?;
    /// assert_eq!(off.quota(), Quota::Off);
    /// let cap = RetryConfig::builder().quota(Quota::Traffic).quota_capacity(1000).build()?;
    /// assert_eq!((cap.quota(), cap.quota_capacity()), (Quota::Traffic, 1000));
    /// let error = RetryConfig::builder().retry_cost(5).quota(Quota::Off).build().unwrap_err();
    /// assert!(matches!(error, ConfigError::QuotaConflict { setting: "retry_cost", .. }));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn quota(mut self, quota: Quota) -> Self {
        self.quota = Some(quota);
        self
    }

    setters! {
        /// Standard or adaptive.
        mode: RetryMode => mode;
        /// Attempts per call, the first included; at least 1 (1 = no retries).
        max_attempts: u32 => max_attempts;
        /// Backoff base for non-throttling errors; at most `max_backoff`. Zero retries at once.
        initial_backoff: Duration => initial_backoff;
        /// Backoff base for throttling errors, apart from `initial_backoff`; at most
        /// `max_backoff`.
        ///
        /// ```
        /// # use std::time::Duration;
        /// let c = retry_core::RetryConfig::builder().throttling_backoff(Duration::from_secs(2)).build().unwrap();
        /// assert_eq!(c.throttling_backoff(), Duration::from_secs(2));
        /// ```
        throttling_backoff: Duration => throttling_backoff = ThrottlingBackoff::Set;
        /// Cap on every backoff delay (and on the longest `retry_after` honoured, unless
        /// `retry_after_slack` is set).
        max_backoff: Duration => max_backoff;
        /// The jitter.
        jitter: Jitter => jitter;
        /// Deadline for starting new attempts; positive.
        timeout: Duration => timeout = Some;
        /// The retry quota's capacity; at least 1. With a `quota_window`, the most a retry may
        /// find in it (the default's 5000 is 60 s of 83 calls/s).
        quota_capacity: u32 => quota_capacity, sizes the quota: Capacity;
        /// Quota cost of a retry of a transient or server error. 0 makes such retries free:
        /// the quota never refuses them. To switch the whole quota off, write
        /// [`quota(Quota::Off)`](Self::quota).
        ///
        /// ```
        /// use retry_core::{ErrorKind, RetryConfig, RetryReason, RetryStrategy, StandardStrategy};
        ///
        /// // Free retries: the quota of 1 token never stops them.
        /// let config = RetryConfig::builder()
        ///     .max_attempts(100)
        ///     .quota_capacity(1)
        ///     .retry_cost(0)
        ///     .build()?;
        /// let strategy = StandardStrategy::new(config);
        /// let mut token = strategy.acquire_initial_token();
        /// for _ in 1..100 {
        ///     token = strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))?;
        /// }
        /// assert_eq!(token.attempt(), 100);
        /// # strategy.record_failure(token);
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        retry_cost: u32 => retry_cost, sizes the quota: RetryCost;
        /// Quota cost of a retry after a timeout; 0 makes them free (see `retry_cost`).
        timeout_retry_cost: u32 => timeout_retry_cost, sizes the quota: TimeoutRetryCost;
        /// Quota cost of a retry of a throttling error; 0 makes them free (see `retry_cost`).
        throttling_retry_cost: u32 => throttling_retry_cost, sizes the quota: ThrottlingRetryCost;
        /// Quota returned by a first-try success.
        success_reward: u32 => success_reward, sizes the quota: SuccessReward;
        /// Tokens per second the quota refills by: a finite number of at least about 2.3e-13
        /// (a thousandth of a token in 136 years; anything slower would never refill).
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().quota_refill_per_second(0.5).build().unwrap();
        /// assert_eq!(c.quota_refill_per_second(), Some(0.5));
        /// assert!(retry_core::RetryConfig::builder().quota_refill_per_second(f64::NAN).build().is_err());
        /// ```
        quota_refill_per_second: f64 => quota_refill_per_second = Some, sizes the quota: Refill;
        /// Size the quota by traffic (see [`RetryConfig::quota_window`]); positive.
        quota_window: Duration => quota_window = Some, sizes the quota: Window;
        /// Clamp a server's `retry_after` to `[t_i, t_i + slack]` instead of always honoring it.
        retry_after_slack: Duration => retry_after_slack = Some;
        /// Adaptive mode: fail fast instead of waiting longer than this for a send permit (see
        /// [`RetryConfig::max_wait`]); with another [`mode`](Self::mode), `build` fails rather
        /// than ignore it.
        max_wait: Duration => max_wait = Some;
        /// Long polling (SQS `ReceiveMessage`, Step Functions `GetActivityTask`): when the
        /// quota refuses a retry, the call still sleeps the backoff it computed (jitter
        /// included) before it returns its error, so a consumer loop that calls again at once
        /// does not spin against a failing queue. Only a refusal by the quota waits; a call
        /// that is not retryable or has made every attempt returns at once. The AWS SDKs' 2026
        /// retry behavior does this for their long-polling operations. Every driver honours it
        /// (`retry`, `RetryLoop`, the blocking loop, `#[retryable(long_polling = true)]`, the
        /// tower layer).
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().long_polling(true).build().unwrap();
        /// assert!(c.long_polling());
        /// assert!(!retry_core::RetryConfig::default().long_polling());
        /// ```
        long_polling: bool => long_polling;
    }

    /// Checks every value and returns the configuration, or the first problem found.
    ///
    /// ```
    /// use retry_core::RetryConfig;
    /// use std::time::Duration;
    /// let error = RetryConfig::builder().timeout(Duration::ZERO).build().unwrap_err();
    /// assert_eq!(error.to_string(), "timeout must be longer than zero: leave it unset for no limit");
    /// ```
    pub fn build(self) -> Result<RetryConfig, ConfigError> {
        let config = match self.quota {
            Some(quota) => quota_settings::apply(quota, self.given, self.config)?,
            None => self.config,
        };
        if config.max_attempts == 0 {
            return Err(ConfigError::MaxAttemptsZero);
        }
        for (setting, initial) in [
            ("initial_backoff", config.initial_backoff),
            ("throttling_backoff", config.throttling_backoff()),
        ] {
            if initial > config.max_backoff {
                return Err(ConfigError::BackoffOrder {
                    setting,
                    initial,
                    max: config.max_backoff,
                });
            }
        }
        for (setting, value) in [
            ("timeout", config.timeout),
            ("quota_window", config.quota_window),
        ] {
            if value == Some(Duration::ZERO) {
                return Err(ConfigError::ZeroDuration { setting });
            }
        }
        if let Some(rate) = config.quota_refill_per_second
            && !is_valid_refill(rate)
        {
            return Err(ConfigError::InvalidRate {
                setting: "quota_refill_per_second",
                value: rate,
            });
        }
        if config.quota_capacity == 0 {
            return Err(ConfigError::ZeroCapacity);
        }
        if config.max_wait.is_some() && config.mode != RetryMode::Adaptive {
            return Err(ConfigError::AdaptiveOnly {
                setting: "max_wait",
            });
        }
        Ok(config)
    }
}

/// The slowest refill honoured, in tokens per second: 2^-32 thousandths of a token per second,
/// the resolution of the quota's fixed-point rate (`quota/bucket.rs` checks that they agree).
/// At this rate a thousandth of a token takes 2^32 s (136 years), within the ~584 years a clock
/// reading in nanoseconds spans; a slower rate would never credit anything, so it is rejected
/// rather than accepted and ignored.
pub(crate) const MIN_REFILL_PER_SECOND: f64 = 1.0 / (1_000.0 * (1u64 << 32) as f64);

/// Whether `rate` tokens per second is a refill the quota honours.
pub(crate) fn is_valid_refill(rate: f64) -> bool {
    rate.is_finite() && rate >= MIN_REFILL_PER_SECOND
}
