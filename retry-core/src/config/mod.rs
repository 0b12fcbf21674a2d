//! Configuration: the validated settings a strategy is built from.

pub mod defaults;
mod duration;
mod env;
mod error;
mod mode;
mod preset;

use std::time::Duration;

pub use duration::{DurationParseError, parse_duration};
pub use error::ConfigError;
pub use mode::{RetryMode, RetryModeParseError};
pub use preset::{RetryPreset, RetryPresetParseError};

use crate::Jitter;

/// Validated retry settings. Build one with [`RetryConfig::builder`] (the AWS SDKs' classic
/// standard mode), [`RetryConfig::aws_2026`] (the 2026 preset) or [`RetryConfig::from_env`].
///
/// ```
/// use retry_core::{RetryConfig, RetryMode};
/// use std::time::Duration;
///
/// let config = RetryConfig::builder()
///     .mode(RetryMode::Adaptive)
///     .max_attempts(5)
///     .max_backoff(Duration::from_secs(5))
///     .build()?;
/// assert_eq!(config.max_attempts(), 5);
/// assert_eq!(config.initial_backoff(), Duration::from_secs(1));
/// # Ok::<(), retry_core::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryConfig {
    mode: RetryMode,
    max_attempts: u32,
    initial_backoff: Duration,
    /// `None`: throttling errors back off from `initial_backoff` like the others.
    throttling_backoff: Option<Duration>,
    max_backoff: Duration,
    jitter: Jitter,
    timeout: Option<Duration>,
    quota_capacity: u32,
    retry_cost: u32,
    timeout_retry_cost: u32,
    throttling_retry_cost: u32,
    success_reward: u32,
    quota_refill_per_second: Option<f64>,
    quota_window: Option<Duration>,
    retry_after_slack: Option<Duration>,
    max_wait: Option<Duration>,
}

impl Default for RetryConfig {
    /// The AWS SDKs' classic standard mode: 3 attempts, 1 s base, 20 s cap, full jitter, a quota
    /// of 500 with costs 5 / 10.
    fn default() -> Self {
        Self {
            mode: RetryMode::Standard,
            max_attempts: defaults::MAX_ATTEMPTS,
            initial_backoff: defaults::INITIAL_BACKOFF,
            throttling_backoff: None,
            max_backoff: defaults::MAX_BACKOFF,
            jitter: Jitter::Full,
            timeout: None,
            quota_capacity: defaults::QUOTA_CAPACITY,
            retry_cost: defaults::RETRY_COST,
            timeout_retry_cost: defaults::TIMEOUT_RETRY_COST,
            throttling_retry_cost: defaults::RETRY_COST,
            success_reward: defaults::SUCCESS_REWARD,
            quota_refill_per_second: None,
            quota_window: None,
            retry_after_slack: None,
            max_wait: None,
        }
    }
}

impl RetryConfig {
    /// A builder starting from the classic standard mode (the [`Default`]).
    ///
    /// ```
    /// let config = retry_core::RetryConfig::builder().build().unwrap();
    /// assert_eq!(config, retry_core::RetryConfig::default());
    /// ```
    pub fn builder() -> RetryConfigBuilder {
        RetryConfigBuilder {
            config: Self::default(),
        }
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

    /// A builder starting from the AWS SDKs' classic standard mode: 3 attempts, backoff base
    /// 1 s, cap 20 s, full jitter, a quota of 500 where a retry costs 5 and a retry after a
    /// timeout 10, and a first-try success returns 1.
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = retry_core::RetryConfig::aws_classic().build().unwrap();
    /// assert_eq!(config.retry_cost(), 5);
    /// assert_eq!(config.initial_backoff(), Duration::from_secs(1));
    /// assert_eq!(config.quota_capacity(), 500);
    /// ```
    pub fn aws_classic() -> RetryConfigBuilder {
        Self::builder()
    }

    /// A builder starting from the `aws-2026` preset: retry cost 14, throttling cost 5, timeout
    /// cost 14, backoff base 50 ms (1 s for throttling), and a server's `retry_after` clamped to
    /// `[t_i, t_i + 5 s]`.
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
        RetryConfigBuilder {
            config: Self {
                initial_backoff: preset::INITIAL_BACKOFF,
                throttling_backoff: Some(preset::THROTTLING_INITIAL_BACKOFF),
                retry_cost: preset::RETRY_COST,
                timeout_retry_cost: preset::TIMEOUT_RETRY_COST,
                throttling_retry_cost: preset::THROTTLING_RETRY_COST,
                retry_after_slack: Some(preset::RETRY_AFTER_SLACK),
                ..Self::default()
            },
        }
    }

    /// A builder starting from the preset this crate recommends for clients of a service that
    /// must not be hammered: [`aws_2026`](Self::aws_2026) with a quota sized by traffic
    /// ([`quota_window`](RetryConfigBuilder::quota_window) of 60 s, up to 5000 tokens), so
    /// that the retries a fleet sends during an outage do not grow with the number of clients
    /// that carry its load (`docs/sim/`).
    ///
    /// ```
    /// use std::time::Duration;
    /// let config = retry_core::RetryConfig::recommended().build().unwrap();
    /// assert_eq!(config.retry_cost(), 14);
    /// assert_eq!(config.quota_window(), Some(Duration::from_secs(60)));
    /// assert_eq!(config.quota_capacity(), 5000);
    /// ```
    pub fn recommended() -> RetryConfigBuilder {
        use defaults::recommended as preset;
        Self::aws_2026()
            .quota_window(preset::QUOTA_WINDOW)
            .quota_capacity(preset::QUOTA_CAPACITY)
    }

    /// A builder starting from this configuration.
    ///
    /// ```
    /// let base = retry_core::RetryConfig::default();
    /// let five = base.to_builder().max_attempts(5).build().unwrap();
    /// assert_eq!(five.max_attempts(), 5);
    /// ```
    pub fn to_builder(&self) -> RetryConfigBuilder {
        RetryConfigBuilder {
            config: self.clone(),
        }
    }

    /// Standard or adaptive.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().mode(), retry_core::RetryMode::Standard);
    /// ```
    pub fn mode(&self) -> RetryMode {
        self.mode
    }

    /// Attempts per call, the first included (1 = no retries).
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().max_attempts(), 3);
    /// ```
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The backoff base for non-throttling errors.
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(retry_core::RetryConfig::default().initial_backoff(), Duration::from_secs(1));
    /// ```
    pub fn initial_backoff(&self) -> Duration {
        self.initial_backoff
    }

    /// The backoff base for throttling errors: `initial_backoff` unless set apart (the
    /// `aws-2026` preset sets it to 1 s).
    ///
    /// ```
    /// # use std::time::Duration;
    /// let config = retry_core::RetryConfig::builder().initial_backoff(Duration::from_millis(50)).build().unwrap();
    /// assert_eq!(config.throttling_backoff(), Duration::from_millis(50));
    /// ```
    pub fn throttling_backoff(&self) -> Duration {
        self.throttling_backoff.unwrap_or(self.initial_backoff)
    }

    /// The cap on every backoff delay.
    ///
    /// ```
    /// # use std::time::Duration;
    /// assert_eq!(retry_core::RetryConfig::default().max_backoff(), Duration::from_secs(20));
    /// ```
    pub fn max_backoff(&self) -> Duration {
        self.max_backoff
    }

    /// The jitter.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().jitter(), retry_core::Jitter::Full);
    /// ```
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The deadline for starting new attempts, measured from the first attempt. An attempt in
    /// flight is never cut by it.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().timeout(), None);
    /// ```
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The retry quota's capacity (the most it holds, with a `quota_window`).
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().quota_capacity(), 500);
    /// ```
    pub fn quota_capacity(&self) -> u32 {
        self.quota_capacity
    }

    /// Quota cost of a retry of a transient or server error.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().retry_cost(), 5);
    /// ```
    pub fn retry_cost(&self) -> u32 {
        self.retry_cost
    }

    /// Quota cost of a retry after a timeout.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().timeout_retry_cost(), 10);
    /// ```
    pub fn timeout_retry_cost(&self) -> u32 {
        self.timeout_retry_cost
    }

    /// Quota cost of a retry of a throttling error.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().throttling_retry_cost(), 5);
    /// ```
    pub fn throttling_retry_cost(&self) -> u32 {
        self.throttling_retry_cost
    }

    /// Quota returned by a first-try success.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().success_reward(), 1);
    /// ```
    pub fn success_reward(&self) -> u32 {
        self.success_reward
    }

    /// Tokens per second the quota refills by, if it refills.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().quota_refill_per_second(), None);
    /// ```
    pub fn quota_refill_per_second(&self) -> Option<f64> {
        self.quota_refill_per_second
    }

    /// When set, the quota's capacity follows the scope's traffic: one token per call of the
    /// last `window`, at least one retry's cost and at most `quota_capacity`.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().quota_window(), None);
    /// ```
    pub fn quota_window(&self) -> Option<Duration> {
        self.quota_window
    }

    /// When set, a server's `retry_after` is clamped to `[t_i, t_i + slack]` (`aws-2026`);
    /// when unset, the retry waits at least `retry_after` or does not happen.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().retry_after_slack(), None);
    /// ```
    pub fn retry_after_slack(&self) -> Option<Duration> {
        self.retry_after_slack
    }

    /// Adaptive mode: a retry whose send permit is expected later than this is not made (fail
    /// fast, decided when the retry is asked for), and no attempt waits longer than this for
    /// its permit: one whose wait grows past it is then sent.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryConfig::default().max_wait(), None);
    /// ```
    pub fn max_wait(&self) -> Option<Duration> {
        self.max_wait
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
}

macro_rules! setters {
    ($($(#[$doc:meta])* $name:ident: $ty:ty => $field:ident $(= $wrap:ident)?;)*) => {$(
        $(#[$doc])*
        pub fn $name(mut self, value: $ty) -> Self {
            self.config.$field = $($wrap)?(value);
            self
        }
    )*};
}

impl RetryConfigBuilder {
    setters! {
        /// Standard or adaptive.
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().mode(retry_core::RetryMode::Adaptive).build().unwrap();
        /// assert_eq!(c.mode(), retry_core::RetryMode::Adaptive);
        /// ```
        mode: RetryMode => mode;
        /// Attempts per call, the first included; at least 1.
        ///
        /// ```
        /// assert!(retry_core::RetryConfig::builder().max_attempts(1).build().is_ok());
        /// ```
        max_attempts: u32 => max_attempts;
        /// Backoff base for non-throttling errors; at most `max_backoff`. Zero retries at once.
        ///
        /// ```
        /// # use std::time::Duration;
        /// let c = retry_core::RetryConfig::builder().initial_backoff(Duration::ZERO).build().unwrap();
        /// assert_eq!(c.initial_backoff(), Duration::ZERO);
        /// ```
        initial_backoff: Duration => initial_backoff;
        /// Backoff base for throttling errors, apart from `initial_backoff`; at most `max_backoff`.
        ///
        /// ```
        /// # use std::time::Duration;
        /// let c = retry_core::RetryConfig::builder().throttling_backoff(Duration::from_secs(2)).build().unwrap();
        /// assert_eq!(c.throttling_backoff(), Duration::from_secs(2));
        /// ```
        throttling_backoff: Duration => throttling_backoff = Some;
        /// Cap on every backoff delay.
        ///
        /// ```
        /// # use std::time::Duration;
        /// let c = retry_core::RetryConfig::builder().max_backoff(Duration::from_secs(60)).build().unwrap();
        /// assert_eq!(c.max_backoff(), Duration::from_secs(60));
        /// ```
        max_backoff: Duration => max_backoff;
        /// The jitter.
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().jitter(retry_core::Jitter::None).build().unwrap();
        /// assert_eq!(c.jitter(), retry_core::Jitter::None);
        /// ```
        jitter: Jitter => jitter;
        /// Deadline for starting new attempts; positive.
        ///
        /// ```
        /// # use std::time::Duration;
        /// let c = retry_core::RetryConfig::builder().timeout(Duration::from_secs(5)).build().unwrap();
        /// assert_eq!(c.timeout(), Some(Duration::from_secs(5)));
        /// ```
        timeout: Duration => timeout = Some;
        /// The retry quota's capacity; at least 1.
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().quota_capacity(100).build().unwrap();
        /// assert_eq!(c.quota_capacity(), 100);
        /// ```
        quota_capacity: u32 => quota_capacity;
        /// Quota cost of a retry of a transient or server error.
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().retry_cost(1).build().unwrap();
        /// assert_eq!(c.retry_cost(), 1);
        /// ```
        retry_cost: u32 => retry_cost;
        /// Quota cost of a retry after a timeout.
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().timeout_retry_cost(20).build().unwrap();
        /// assert_eq!(c.timeout_retry_cost(), 20);
        /// ```
        timeout_retry_cost: u32 => timeout_retry_cost;
        /// Quota cost of a retry of a throttling error.
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().throttling_retry_cost(2).build().unwrap();
        /// assert_eq!(c.throttling_retry_cost(), 2);
        /// ```
        throttling_retry_cost: u32 => throttling_retry_cost;
        /// Quota returned by a first-try success.
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().success_reward(0).build().unwrap();
        /// assert_eq!(c.success_reward(), 0);
        /// ```
        success_reward: u32 => success_reward;
        /// Tokens per second the quota refills by; positive and finite.
        ///
        /// ```
        /// let c = retry_core::RetryConfig::builder().quota_refill_per_second(0.5).build().unwrap();
        /// assert_eq!(c.quota_refill_per_second(), Some(0.5));
        /// assert!(retry_core::RetryConfig::builder().quota_refill_per_second(f64::NAN).build().is_err());
        /// ```
        quota_refill_per_second: f64 => quota_refill_per_second = Some;
        /// Size the quota by traffic: one token per call of the last `window`; positive.
        ///
        /// ```
        /// # use std::time::Duration;
        /// let c = retry_core::RetryConfig::builder().quota_window(Duration::from_secs(30)).build().unwrap();
        /// assert_eq!(c.quota_window(), Some(Duration::from_secs(30)));
        /// ```
        quota_window: Duration => quota_window = Some;
        /// Clamp a server's `retry_after` to `[t_i, t_i + slack]` instead of always honoring it.
        ///
        /// ```
        /// # use std::time::Duration;
        /// let c = retry_core::RetryConfig::builder().retry_after_slack(Duration::from_secs(5)).build().unwrap();
        /// assert_eq!(c.retry_after_slack(), Some(Duration::from_secs(5)));
        /// ```
        retry_after_slack: Duration => retry_after_slack = Some;
        /// Adaptive mode: fail fast instead of waiting longer than this for a send permit (see
        /// [`RetryConfig::max_wait`]).
        ///
        /// ```
        /// # use std::time::Duration;
        /// let c = retry_core::RetryConfig::builder().max_wait(Duration::ZERO).build().unwrap();
        /// assert_eq!(c.max_wait(), Some(Duration::ZERO));
        /// ```
        max_wait: Duration => max_wait = Some;
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
        let config = self.config;
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
            && !crate::quota::is_valid_refill(rate)
        {
            return Err(ConfigError::InvalidRate {
                setting: "quota_refill_per_second",
                value: rate,
            });
        }
        if config.quota_capacity == 0 {
            return Err(ConfigError::ZeroCapacity);
        }
        Ok(config)
    }
}
