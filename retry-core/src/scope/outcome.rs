//! How a call ended, as the scope's metrics label it.

use crate::strategy::RetryError;

/// How a call ended: the `outcome` label of the `retry.calls` metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallOutcome {
    /// The call succeeded (perhaps after retries).
    Success,
    /// Its last outcome was not retryable.
    NotRetryable,
    /// The strategy refused a retry, for this reason.
    Refused(Refusal),
    /// Refused before its first attempt (adaptive mode's load shedding).
    Shed,
    /// Dropped before its outcome was known (while an attempt was in flight or waited).
    Cancelled,
}

/// Why the strategy refused a retry: the [`RetryError`]s other than `NotRetryable`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    MaxAttempts,
    QuotaExhausted,
    Deadline,
    RetryAfterTooLong,
    RateLimited,
}

impl CallOutcome {
    /// Every outcome, in the order of [`index`](Self::index).
    #[cfg(feature = "metrics")]
    pub(crate) const ALL: [CallOutcome; 9] = [
        CallOutcome::Success,
        CallOutcome::NotRetryable,
        CallOutcome::Refused(Refusal::MaxAttempts),
        CallOutcome::Refused(Refusal::QuotaExhausted),
        CallOutcome::Refused(Refusal::Deadline),
        CallOutcome::Refused(Refusal::RetryAfterTooLong),
        CallOutcome::Refused(Refusal::RateLimited),
        CallOutcome::Shed,
        CallOutcome::Cancelled,
    ];

    /// The outcome of a call the strategy stopped with `error`.
    pub(crate) fn of(error: &RetryError) -> Self {
        match error {
            RetryError::NotRetryable => CallOutcome::NotRetryable,
            RetryError::MaxAttemptsReached { .. } => CallOutcome::Refused(Refusal::MaxAttempts),
            RetryError::QuotaExhausted { .. } => CallOutcome::Refused(Refusal::QuotaExhausted),
            RetryError::DeadlineExceeded { .. } => CallOutcome::Refused(Refusal::Deadline),
            RetryError::RetryAfterTooLong { .. } => {
                CallOutcome::Refused(Refusal::RetryAfterTooLong)
            }
            RetryError::RateLimited { .. } => CallOutcome::Refused(Refusal::RateLimited),
        }
    }

    /// The position of the outcome in [`ALL`](Self::ALL).
    #[cfg(feature = "metrics")]
    pub(crate) fn index(self) -> usize {
        match self {
            CallOutcome::Success => 0,
            CallOutcome::NotRetryable => 1,
            CallOutcome::Refused(Refusal::MaxAttempts) => 2,
            CallOutcome::Refused(Refusal::QuotaExhausted) => 3,
            CallOutcome::Refused(Refusal::Deadline) => 4,
            CallOutcome::Refused(Refusal::RetryAfterTooLong) => 5,
            CallOutcome::Refused(Refusal::RateLimited) => 6,
            CallOutcome::Shed => 7,
            CallOutcome::Cancelled => 8,
        }
    }

    /// The label's value: a refusal's is [`RetryError::as_str`]'s, the name the logs use.
    #[cfg(feature = "metrics")]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CallOutcome::Success => "success",
            CallOutcome::NotRetryable => "not_retryable",
            CallOutcome::Refused(Refusal::MaxAttempts) => "max_attempts",
            CallOutcome::Refused(Refusal::QuotaExhausted) => "quota_exhausted",
            CallOutcome::Refused(Refusal::Deadline) => "deadline",
            CallOutcome::Refused(Refusal::RetryAfterTooLong) => "retry_after_too_long",
            CallOutcome::Refused(Refusal::RateLimited) => "rate_limited",
            CallOutcome::Shed => "shed",
            CallOutcome::Cancelled => "cancelled",
        }
    }
}

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use std::time::Duration;

    use super::CallOutcome;
    use crate::strategy::RetryError;

    #[test]
    fn every_outcome_has_its_place_and_a_refusal_is_named_as_in_the_logs() {
        for (index, outcome) in CallOutcome::ALL.into_iter().enumerate() {
            assert_eq!(outcome.index(), index, "{outcome:?}");
        }
        let refusals = [
            RetryError::NotRetryable,
            RetryError::MaxAttemptsReached { attempts: 3 },
            RetryError::QuotaExhausted {
                cost: 5,
                level: 0,
                backoff: None,
            },
            RetryError::DeadlineExceeded {
                timeout: Duration::from_secs(1),
            },
            RetryError::RetryAfterTooLong {
                retry_after: Duration::from_secs(60),
                limit: Duration::from_secs(20),
            },
            RetryError::RateLimited {
                wait: Duration::from_secs(2),
                max_wait: Duration::from_secs(1),
            },
        ];
        for error in refusals {
            assert_eq!(CallOutcome::of(&error).as_str(), error.as_str());
        }
    }
}
