//! Configuration: the validated settings a strategy is built from.

pub(crate) mod defaults;
mod duration;
mod env;
mod error;
mod mode;
mod preset;
mod quota;

use std::time::Duration;

pub use duration::{DurationParseError, parse_duration};
pub use error::ConfigError;
pub use mode::RetryMode;
pub use preset::RetryPreset;
pub use quota::Quota;

pub use crate::name::ValueParseError;

use quota::{GivenSettings, QuotaSetting};

use crate::backoff::Jitter;

/// Validated retry settings. Build one with [`RetryConfig::builder`] (this crate's defaults),
/// [`RetryConfig::aws_classic`] or [`RetryConfig::aws_2026`] (the AWS SDKs' presets),
/// [`RetryConfig::from_preset`] or [`RetryConfig::from_env`].
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
/// assert_eq!(config.initial_backoff(), Duration::from_millis(50));
/// # Ok::<(), retry_core::ConfigError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryConfig {
    mode: RetryMode,
    max_attempts: u32,
    initial_backoff: Duration,
    throttling_backoff: ThrottlingBackoff,
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
    long_polling: bool,
}

/// Where the backoff base of throttling errors comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
enum ThrottlingBackoff {
    /// `initial_backoff`, as for every other error.
    Initial,
    /// A preset's base: a `max_backoff` set lower caps it.
    Preset(Duration),
    /// Set with [`RetryConfigBuilder::throttling_backoff`]: must not exceed `max_backoff`.
    Set(Duration),
}

impl Default for RetryConfig {
    /// This crate's defaults, those of a bare `#[retryable]` (each number's source is cited in
    /// `config/defaults.rs`):
    ///
    /// | setting | default |
    /// |---|---|
    /// | `mode` | `"standard"` |
    /// | `max_attempts` | `3` |
    /// | `initial_backoff` | `"50ms"` (retry *i* backs off up to `50 ms × 2^(i-1)`) |
    /// | `throttling_backoff` | `"1s"` |
    /// | `max_backoff` | `"20s"` |
    /// | `jitter` | `"full"` |
    /// | `timeout` | none |
    /// | `quota` | `"traffic"` |
    /// | `retry_cost` | `14` |
    /// | `timeout_retry_cost` | `14` |
    /// | `throttling_retry_cost` | `5` |
    /// | `success_reward` | `1` |
    /// | `quota_window` | `"60s"` |
    /// | `quota_capacity` | `5000` |
    /// | `retry_after_slack` | none: a server's `retry_after` is honoured as a minimum |
    /// | `max_wait` | none |
    /// | `long_polling` | `false` |
    ///
    /// The AWS SDKs' costs and backoff of 2026, with a retry quota sized by the scope's
    /// traffic — a retry finds at most one token per call of the last `quota_window`, at least
    /// one whole call's retries, at most `quota_capacity` — that does not grow with the number
    /// of clients. A scope younger than its window starts with the AWS SDKs' 500 tokens and is
    /// capped no lower; a success gives back every retry its call paid for; a call that starts
    /// retrying after a window without any finds one whole call's retries. So a new scope, a
    /// caller whose retried calls succeed, or a call after a quiet window never gets fewer
    /// retries than `aws-2026` would.
    fn default() -> Self {
        Self {
            mode: RetryMode::Standard,
            max_attempts: defaults::MAX_ATTEMPTS,
            initial_backoff: defaults::INITIAL_BACKOFF,
            throttling_backoff: ThrottlingBackoff::Preset(defaults::THROTTLING_INITIAL_BACKOFF),
            max_backoff: defaults::MAX_BACKOFF,
            jitter: Jitter::Full,
            timeout: None,
            quota_capacity: defaults::QUOTA_CAPACITY,
            retry_cost: defaults::RETRY_COST,
            timeout_retry_cost: defaults::TIMEOUT_RETRY_COST,
            throttling_retry_cost: defaults::THROTTLING_RETRY_COST,
            success_reward: defaults::SUCCESS_REWARD,
            quota_refill_per_second: None,
            quota_window: Some(defaults::QUOTA_WINDOW),
            retry_after_slack: None,
            max_wait: None,
            long_polling: false,
        }
    }
}

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

    /// Standard or adaptive.
    pub fn mode(&self) -> RetryMode {
        self.mode
    }

    /// Attempts per call, the first included (1 = no retries).
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The backoff base for non-throttling errors.
    pub fn initial_backoff(&self) -> Duration {
        self.initial_backoff
    }

    /// The backoff base for throttling errors: the one set with
    /// [`throttling_backoff`](RetryConfigBuilder::throttling_backoff); else the preset's (1 s
    /// in the default and `aws-2026`), capped by `max_backoff`; else `initial_backoff`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use retry_core::RetryConfig;
    /// assert_eq!(RetryConfig::default().throttling_backoff(), Duration::from_secs(1));
    /// let fast = RetryConfig::builder().max_backoff(Duration::from_millis(500)).build().unwrap();
    /// assert_eq!(fast.throttling_backoff(), Duration::from_millis(500));
    /// let classic = RetryConfig::aws_classic().build().unwrap();
    /// assert_eq!(classic.throttling_backoff(), classic.initial_backoff());
    /// ```
    pub fn throttling_backoff(&self) -> Duration {
        match self.throttling_backoff {
            ThrottlingBackoff::Initial => self.initial_backoff,
            ThrottlingBackoff::Preset(base) => base.min(self.max_backoff),
            ThrottlingBackoff::Set(base) => base,
        }
    }

    /// The cap on every backoff delay.
    pub fn max_backoff(&self) -> Duration {
        self.max_backoff
    }

    /// The jitter.
    pub fn jitter(&self) -> Jitter {
        self.jitter
    }

    /// The deadline for starting new attempts, measured from the first attempt. An attempt in
    /// flight is never cut by it.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The retry quota's capacity (with a `quota_window`, the most a retry may find in it).
    pub fn quota_capacity(&self) -> u32 {
        self.quota_capacity
    }

    /// Quota cost of a retry of a transient or server error (0: such retries are free, not
    /// limited by the quota).
    pub fn retry_cost(&self) -> u32 {
        self.retry_cost
    }

    /// Quota cost of a retry after a timeout (0: free).
    pub fn timeout_retry_cost(&self) -> u32 {
        self.timeout_retry_cost
    }

    /// Quota cost of a retry of a throttling error (0: free).
    pub fn throttling_retry_cost(&self) -> u32 {
        self.throttling_retry_cost
    }

    /// Quota returned by a first-try success.
    pub fn success_reward(&self) -> u32 {
        self.success_reward
    }

    /// Tokens per second the quota refills by, if it refills.
    pub fn quota_refill_per_second(&self) -> Option<f64> {
        self.quota_refill_per_second
    }

    /// When set (60 s by default), the quota follows the scope's traffic: a retry finds at most
    /// one token per call of the last `window` (at most `quota_capacity`), and at least one
    /// whole call's retries, `(max_attempts − 1) ×` the dearest retry cost (the floor). Where
    /// a process cannot tell a lone caller from one of many clients, it is generous:
    /// * a scope younger than `window` starts with the AWS SDKs' 500 tokens (or the floor, if
    ///   more; the AWS SDKs' `INITIAL_RETRY_TOKENS`) and finds at least that until it is one window
    ///   old, so it never grants fewer retries than `aws-2026`;
    /// * a success gives back every retry cost its call paid (not only the last retry's): the
    ///   quota drains only through calls that fail, as in an outage;
    /// * the first retry of a call, asked for when no call of the scope started retrying
    ///   (granted or refused) during the whole last `window`, finds at least the floor: a call
    ///   ten minutes after a failed one makes every attempt. A client in an outage asks at each
    ///   call, so it gets no such refill.
    ///
    /// A call reads the clock once, at its first retry; its later retries are sized from that
    /// reading (the success path reads none).
    ///
    /// When unset (the AWS presets), the quota is a fixed bucket of `quota_capacity`, full at
    /// first, under the AWS SDKs' rules. (A process-wide scope is sized by the configuration
    /// that created it: [`Scope::named`](crate::Scope::named).)
    ///
    /// ```
    /// use retry_core::{ErrorKind, ManualClock, RetryConfig, RetryReason, RetryStrategy, StandardStrategy};
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let clock = Arc::new(ManualClock::new());
    /// let config = RetryConfig::builder().max_attempts(5).build().unwrap();
    /// let strategy = StandardStrategy::builder(config).clock(clock.clone()).build();
    /// // A call whose every attempt fails, then ten minutes later another: each makes all of
    /// // its 5 attempts (4 retries x 14 = 56 tokens).
    /// for _ in 0..2 {
    ///     let mut token = strategy.acquire_initial_token();
    ///     for _ in 0..4 {
    ///         let server = RetryReason::error(ErrorKind::Server);
    ///         token = strategy.refresh_retry_token(token, &server).unwrap();
    ///     }
    ///     assert_eq!(token.attempt(), 5);
    ///     strategy.record_failure(token);
    ///     clock.advance(Duration::from_secs(600));
    /// }
    /// ```
    pub fn quota_window(&self) -> Option<Duration> {
        self.quota_window
    }

    /// When set (`aws-2026`), a server's `retry_after` is clamped to `[t_i, t_i + slack]`; when
    /// unset (the default), the retry waits at least `retry_after` or does not happen.
    pub fn retry_after_slack(&self) -> Option<Duration> {
        self.retry_after_slack
    }

    /// Adaptive mode: a retry whose send permit is expected later than this is not made (fail
    /// fast, decided when the retry is asked for), and no attempt waits longer than this for
    /// its permit: one whose wait grows past it is then sent.
    pub fn max_wait(&self) -> Option<Duration> {
        self.max_wait
    }

    /// Whether calls are long polls (see [`RetryConfigBuilder::long_polling`]): when the quota
    /// refuses a retry, the call still sleeps the backoff it computed before it returns its
    /// error.
    pub fn long_polling(&self) -> bool {
        self.long_polling
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
        /// [`RetryConfig::max_wait`]).
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
            Some(quota) => quota::apply(quota, self.given, self.config)?,
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
