//! `#[retryable(crate = "...")]` and `#[retry(crate = "...")]` where `retry-core` is a
//! dependency under another name (`retry`) and through a re-exporting facade, and is not
//! reachable as `retry_core`: this crate compiles only if the generated code follows `crate`.

use std::sync::atomic::{AtomicU32, Ordering};

/// A facade re-exporting the runtime, the way a company-wide crate would.
pub mod facade {
    pub use retry as runtime;
}

/// Classified through the renamed runtime.
#[derive(Debug, PartialEq, retry::RetryInfo)]
#[retry(crate = "retry")]
pub enum StoreError {
    /// Retried.
    #[retry(transient)]
    Unavailable,
    /// Not retried.
    #[retry(never)]
    NotFound,
}

/// Classified through the facade.
#[derive(Debug, PartialEq, retry::RetryInfo)]
#[retry(crate = "crate::facade::runtime", throttling)]
pub struct SlowDown;

/// Fails with `error` until the `succeed_at`-th attempt; counts its attempts in `calls`.
#[retry::retryable(
    crate = "retry",
    max_attempts = 3,
    initial_backoff = "10ms",
    jitter = "none",
    scope = "renamed-runtime-fetch"
)]
pub async fn fetch(
    calls: &AtomicU32,
    succeed_at: u32,
    error: fn() -> StoreError,
) -> Result<u32, StoreError> {
    let attempt = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if attempt < succeed_at {
        Err(error())
    } else {
        Ok(attempt)
    }
}

/// Throttled until its third attempt, through the facade.
#[retry::retryable(
    crate = "crate::facade::runtime",
    preset = "aws-2026",
    max_attempts = 3,
    max_backoff = "100ms",
    scope = "renamed-runtime-facade"
)]
pub async fn through_facade(calls: &AtomicU32) -> Result<u32, SlowDown> {
    let attempt = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if attempt < 3 {
        Err(SlowDown)
    } else {
        Ok(attempt)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use retry::{RetryInfo, RetrySafety};

    #[test]
    fn the_derives_implement_the_renamed_runtimes_trait() {
        assert_eq!(StoreError::Unavailable.retry_safety(), RetrySafety::Yes);
        assert_eq!(StoreError::NotFound.retry_safety(), RetrySafety::No);
        assert!(SlowDown.is_throttling());
    }

    #[tokio::test(start_paused = true)]
    async fn retryable_functions_retry_through_the_renamed_runtime() {
        let calls = AtomicU32::new(0);
        assert_eq!(fetch(&calls, 3, || StoreError::Unavailable).await, Ok(3));
        let calls = AtomicU32::new(0);
        assert_eq!(
            fetch(&calls, 3, || StoreError::NotFound).await,
            Err(StoreError::NotFound)
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        let calls = AtomicU32::new(0);
        assert_eq!(through_facade(&calls).await, Ok(3));
    }
}
