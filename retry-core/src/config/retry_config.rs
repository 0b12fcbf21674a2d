//! The validated settings a strategy is built from: [`RetryConfig`], its defaults and what it
//! reads back.

use std::time::Duration;

use super::defaults;
use super::mode::RetryMode;
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
    pub(super) mode: RetryMode,
    pub(super) max_attempts: u32,
    pub(super) initial_backoff: Duration,
    pub(super) throttling_backoff: ThrottlingBackoff,
    pub(super) max_backoff: Duration,
    pub(super) jitter: Jitter,
    pub(super) timeout: Option<Duration>,
    pub(super) quota_capacity: u32,
    pub(super) retry_cost: u32,
    pub(super) timeout_retry_cost: u32,
    pub(super) throttling_retry_cost: u32,
    pub(super) success_reward: u32,
    pub(super) quota_refill_per_second: Option<f64>,
    pub(super) quota_window: Option<Duration>,
    pub(super) retry_after_slack: Option<Duration>,
    pub(super) max_wait: Option<Duration>,
    pub(super) long_polling: bool,
}

/// Where the backoff base of throttling errors comes from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum ThrottlingBackoff {
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
    /// capped no lower; a success gives back every retry its call paid for; while retried calls
    /// come back, a retry may borrow what the calls in flight hold; a call refused a retry
    /// while the scope's calls keep succeeding gets back what it paid; a call that starts
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
    /// [`throttling_backoff`](super::RetryConfigBuilder::throttling_backoff); else the preset's
    /// (1 s in the default and `aws-2026`), capped by `max_backoff`; else `initial_backoff`.
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
    /// flight is never cut by it. In adaptive mode a caller that sheds load is refused a first
    /// attempt whose send permit would come too late for its answer to arrive before it (see
    /// [`AdaptiveStrategy`](crate::AdaptiveStrategy)).
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
    /// * so what calls in flight hold is not spent yet: while the scope's retried calls come
    ///   back (one succeeded since two in a row last failed; before any ended, while the scope
    ///   is young), a retry may take the quota below zero by up to what they hold (at most
    ///   `quota_capacity`), a debt that what comes back repays first. However many calls hold
    ///   retries at once, a program whose calls succeed after retries is not refused; two
    ///   retried calls failing in a row (an outage) stop the lending until one succeeds;
    /// * the first retry of a call, asked for when no call of the scope started retrying
    ///   (granted or refused) during the whole last `window`, finds at least the floor: a call
    ///   ten minutes after a failed one makes every attempt. A client in an outage asks at each
    ///   call, so it gets no such refill;
    /// * a call refused a retry gets back what its earlier retries paid, unless a refused call
    ///   was already refunded since the scope's last success: while the scope's calls keep
    ///   succeeding, a refusal comes from its own calls holding their retries at once, and one
    ///   refusal does not leave the next calls less than a retry. In an outage no call
    ///   succeeds, so at most one refused call is refunded.
    ///
    /// A call reads the clock once, at its first retry; its later retries are sized from that
    /// reading (the success path reads none).
    ///
    /// When unset (the AWS presets), the quota is a fixed bucket of `quota_capacity`, full at
    /// first, under the AWS SDKs' rules. (A process-wide scope is sized by the configuration
    /// that created it: [`Scope::named`](crate::Scope::named).)
    ///
    /// ```
    /// use retry_core::{ErrorKind, RetryConfig, RetryReason, RetryStrategy, StandardStrategy};
    /// use retry_core::clock::ManualClock;
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

    /// Whether calls are long polls (see
    /// [`RetryConfigBuilder::long_polling`](super::RetryConfigBuilder::long_polling)): when the
    /// quota refuses a retry, the call still sleeps the backoff it computed before it returns its
    /// error.
    pub fn long_polling(&self) -> bool {
        self.long_polling
    }
}
