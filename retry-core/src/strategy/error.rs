//! Why a strategy stopped retrying.

use std::fmt;
use std::time::Duration;

/// Why a call is not retried. The driver logs it; the call returns its last attempt's own error.
///
/// ```
/// let error = retry_core::RetryError::MaxAttemptsReached { attempts: 3 };
/// assert_eq!(error.to_string(), "gave up after 3 attempts (max_attempts)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RetryError {
    /// The classifiers did not ask for a retry.
    NotRetryable,
    /// Every allowed attempt was made.
    MaxAttemptsReached {
        /// Attempts made.
        attempts: u32,
    },
    /// The scope's retry quota could not pay for the retry.
    QuotaExhausted {
        /// What the retry would have cost.
        cost: u32,
        /// What the quota held.
        level: u32,
        /// A long-polling call
        /// ([`RetryConfigBuilder::long_polling`](crate::config::RetryConfigBuilder::long_polling)):
        /// the backoff it computed for the retry, which the driver sleeps before it returns the
        /// call's error ([`wait_before_returning`](RetryError::wait_before_returning)). `None`
        /// otherwise: the error is returned at once.
        backoff: Option<Duration>,
    },
    /// The retry would start after the call's deadline.
    DeadlineExceeded {
        /// The deadline (`timeout`).
        timeout: Duration,
    },
    /// The server asked for a longer wait than the strategy allows.
    RetryAfterTooLong {
        /// The server's `retry_after`.
        retry_after: Duration,
        /// The longest wait allowed (`max_backoff`).
        limit: Duration,
    },
    /// Adaptive mode: the rate limiter would make the retry wait longer than `max_wait`.
    RateLimited {
        /// The wait the limiter asked for.
        wait: Duration,
        /// The configured `max_wait`.
        max_wait: Duration,
    },
}

impl RetryError {
    /// How long the driver sleeps before it returns the call's error: the backoff of a
    /// long-polling call whose retry the quota refused, so that a consumer loop calling again
    /// at once does not spin against a failing queue. `None` for every other refusal.
    ///
    /// ```
    /// use retry_core::RetryError;
    /// use std::time::Duration;
    /// let refused = RetryError::QuotaExhausted { cost: 14, level: 0, backoff: Some(Duration::from_millis(50)) };
    /// assert_eq!(refused.wait_before_returning(), Some(Duration::from_millis(50)));
    /// assert_eq!(RetryError::MaxAttemptsReached { attempts: 3 }.wait_before_returning(), None);
    /// ```
    pub fn wait_before_returning(&self) -> Option<Duration> {
        match self {
            RetryError::QuotaExhausted { backoff, .. } => *backoff,
            _ => None,
        }
    }

    /// A short name for logs and metrics.
    ///
    /// ```
    /// assert_eq!(retry_core::RetryError::NotRetryable.as_str(), "not_retryable");
    /// ```
    pub fn as_str(&self) -> &'static str {
        match self {
            RetryError::NotRetryable => "not_retryable",
            RetryError::MaxAttemptsReached { .. } => "max_attempts",
            RetryError::QuotaExhausted { .. } => "quota_exhausted",
            RetryError::DeadlineExceeded { .. } => "deadline",
            RetryError::RetryAfterTooLong { .. } => "retry_after_too_long",
            RetryError::RateLimited { .. } => "rate_limited",
        }
    }
}

impl fmt::Display for RetryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RetryError::NotRetryable => f.write_str("the outcome is not retryable"),
            RetryError::MaxAttemptsReached { attempts } => {
                write!(f, "gave up after {attempts} attempts (max_attempts)")
            }
            RetryError::QuotaExhausted {
                cost,
                level,
                backoff: None,
            } => write!(
                f,
                "retry quota exhausted: a retry costs {cost}, the quota holds {level}"
            ),
            RetryError::QuotaExhausted {
                cost,
                level,
                backoff: Some(backoff),
            } => write!(
                f,
                "retry quota exhausted: a retry costs {cost}, the quota holds {level} (long \
                 polling: the error is returned after the {backoff:?} backoff)"
            ),
            RetryError::DeadlineExceeded { timeout } => {
                write!(f, "the retry would start after the {timeout:?} deadline")
            }
            RetryError::RetryAfterTooLong { retry_after, limit } => write!(
                f,
                "the server asked to retry after {retry_after:?}, longer than max_backoff {limit:?}"
            ),
            RetryError::RateLimited { wait, max_wait } => write!(
                f,
                "the rate limiter asked to wait {wait:?}, longer than max_wait {max_wait:?}"
            ),
        }
    }
}

impl std::error::Error for RetryError {}
