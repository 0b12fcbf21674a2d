//! What is wrong with a retry configuration.

use std::fmt;
use std::time::Duration;

use super::{DurationParseError, Quota};
use crate::name::ValueParseError;

/// An invalid retry configuration. Every variant's message names the setting and the fix.
///
/// ```
/// use retry_core::RetryConfig;
/// let error = RetryConfig::builder().max_attempts(0).build().unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "max_attempts must be at least 1 (1 means no retries), got 0"
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// `max_attempts` was 0.
    MaxAttemptsZero,
    /// `initial_backoff` (or `throttling_backoff`) was longer than `max_backoff`.
    BackoffOrder {
        /// Which initial backoff.
        setting: &'static str,
        /// Its value.
        initial: Duration,
        /// The cap it exceeds.
        max: Duration,
    },
    /// A duration that must be positive was zero.
    ZeroDuration {
        /// The setting.
        setting: &'static str,
    },
    /// A refill rate that is not a finite number of tokens per second large enough to refill
    /// anything: at least 2^-32 thousandths of a token per second (about 2.3e-13).
    InvalidRate {
        /// The setting.
        setting: &'static str,
        /// The value given.
        value: f64,
    },
    /// A setting of adaptive mode's rate limiter (`max_wait`) given with another mode, which
    /// would ignore it.
    ///
    /// ```
    /// use retry_core::RetryConfig;
    /// let error = RetryConfig::builder().max_wait(std::time::Duration::from_secs(1)).build();
    /// assert_eq!(
    ///     error.unwrap_err().to_string(),
    ///     "max_wait applies to adaptive mode only (standard mode never waits for a send \
    ///      permit: it would be ignored): add .mode(RetryMode::Adaptive), or leave max_wait unset"
    /// );
    /// ```
    AdaptiveOnly {
        /// The setting.
        setting: &'static str,
    },
    /// The retry quota's capacity was 0.
    ZeroCapacity,
    /// `Quota::Fixed(0)`: a quota that would refuse every retry.
    ZeroQuota,
    /// A quota setting given beside [`RetryConfigBuilder::quota`](super::RetryConfigBuilder::quota)
    /// contradicts it.
    ///
    /// ```
    /// use retry_core::{Quota, RetryConfig};
    /// let error = RetryConfig::builder().quota(Quota::Fixed(100)).quota_window(std::time::Duration::from_secs(10));
    /// assert_eq!(
    ///     error.build().unwrap_err().to_string(),
    ///     "quota(Quota::Fixed(100)) conflicts with quota_window: a fixed quota is not sized by \
    ///      traffic; remove quota_window, or choose `Quota::Traffic`"
    /// );
    /// ```
    QuotaConflict {
        /// The quota given.
        quota: Quota,
        /// The builder setting that contradicts it.
        setting: &'static str,
        /// Why, and what to do.
        reason: &'static str,
    },
    /// An unknown retry mode or jitter, or an invalid quota (`off`, `traffic` or a number of
    /// tokens), written as text.
    Value(ValueParseError),
    /// A malformed duration string.
    Duration(DurationParseError),
    /// A malformed whole number.
    Number {
        /// The text given.
        input: String,
    },
    /// An environment variable held an invalid value.
    Env {
        /// The variable.
        variable: &'static str,
        /// What is wrong with its value.
        error: Box<ConfigError>,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::MaxAttemptsZero => {
                f.write_str("max_attempts must be at least 1 (1 means no retries), got 0")
            }
            ConfigError::BackoffOrder {
                setting,
                initial,
                max,
            } => write!(
                f,
                "{setting} ({initial:?}) must not exceed max_backoff ({max:?}): lower it or raise max_backoff"
            ),
            ConfigError::ZeroDuration { setting } => write!(
                f,
                "{setting} must be longer than zero: leave it unset for no limit"
            ),
            ConfigError::InvalidRate { setting, value } => write!(
                f,
                "{setting} must be a finite number of tokens per second, at least 2.3e-13 \
                 (slower never refills), got {value}: leave it unset to turn it off"
            ),
            ConfigError::AdaptiveOnly { setting } => write!(
                f,
                "{setting} applies to adaptive mode only (standard mode never waits for a send \
                 permit: it would be ignored): add .mode(RetryMode::Adaptive), or leave \
                 {setting} unset"
            ),
            ConfigError::ZeroCapacity => f.write_str(
                "quota capacity must be at least 1: to turn retries off, set max_attempts = 1",
            ),
            ConfigError::ZeroQuota => f.write_str(
                "a fixed quota of 0 tokens would refuse every retry: use Quota::Off for no \
                 quota, or set max_attempts = 1 for no retries",
            ),
            ConfigError::QuotaConflict {
                quota,
                setting,
                reason,
            } => write!(
                f,
                "quota(Quota::{quota:?}) conflicts with {setting}: {reason}"
            ),
            ConfigError::Value(error) => error.fmt(f),
            ConfigError::Duration(error) => error.fmt(f),
            ConfigError::Number { input } => {
                write!(
                    f,
                    "invalid number `{input}`: expected a whole number such as 3"
                )
            }
            ConfigError::Env { variable, error } => {
                write!(f, "environment variable {variable}: {error}")
            }
        }
    }
}

impl std::error::Error for ConfigError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigError::Value(error) => Some(error),
            ConfigError::Duration(error) => Some(error),
            ConfigError::Env { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<ValueParseError> for ConfigError {
    fn from(error: ValueParseError) -> Self {
        ConfigError::Value(error)
    }
}

impl From<DurationParseError> for ConfigError {
    fn from(error: DurationParseError) -> Self {
        ConfigError::Duration(error)
    }
}
