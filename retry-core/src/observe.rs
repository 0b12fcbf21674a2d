//! Observability: per-scope counters readable at run time, and the tracing events.
//!
//! Events use the target `retry_core`: `debug` for each retry (scope, attempt, kind, delay),
//! `warn` when a scope's quota runs out or its rate limiter engages.

use crate::adaptive::LimiterStats;
use crate::sync::{AtomicU64, Ordering};

/// Counters of one scope, updated with relaxed atomics (they are statistics, not
/// synchronization).
#[derive(Debug, Default)]
pub(crate) struct ScopeCounters {
    attempts: AtomicU64,
    retries: AtomicU64,
    successes: AtomicU64,
    failures: AtomicU64,
    quota_exhausted: AtomicU64,
    throttles: AtomicU64,
    rate_limited: AtomicU64,
}

/// One counter of [`ScopeCounters`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Counter {
    Attempt,
    Retry,
    Success,
    Failure,
    QuotaExhausted,
    Throttle,
    RateLimited,
}

impl ScopeCounters {
    pub(crate) fn add(&self, counter: Counter) {
        let cell = match counter {
            Counter::Attempt => &self.attempts,
            Counter::Retry => &self.retries,
            Counter::Success => &self.successes,
            Counter::Failure => &self.failures,
            Counter::QuotaExhausted => &self.quota_exhausted,
            Counter::Throttle => &self.throttles,
            Counter::RateLimited => &self.rate_limited,
        };
        cell.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(
        &self,
        quota_level: u32,
        quota_capacity: u32,
        limiter: LimiterStats,
    ) -> ScopeStats {
        let read = |cell: &AtomicU64| cell.load(Ordering::Relaxed);
        ScopeStats {
            attempts: read(&self.attempts),
            retries: read(&self.retries),
            successes: read(&self.successes),
            failures: read(&self.failures),
            quota_exhausted: read(&self.quota_exhausted),
            throttles: read(&self.throttles),
            rate_limited: read(&self.rate_limited),
            quota_level,
            quota_capacity,
            limiter,
        }
    }
}

/// A snapshot of one scope: what its calls did and where its shared state stands.
///
/// ```
/// use retry_core::{RetryConfig, Scope};
/// let scope = Scope::new("docs-stats", &RetryConfig::default());
/// let stats = scope.stats();
/// assert_eq!(stats.attempts, 0);
/// assert_eq!(stats.quota_level, 500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ScopeStats {
    /// Attempts sent (first attempts and retries).
    pub attempts: u64,
    /// Retries granted.
    pub retries: u64,
    /// Calls that ended in success.
    pub successes: u64,
    /// Calls that ended in failure.
    pub failures: u64,
    /// Retries refused because the quota could not pay for them.
    pub quota_exhausted: u64,
    /// Throttling responses seen.
    pub throttles: u64,
    /// Retries refused because the rate limiter's wait exceeded `max_wait`.
    pub rate_limited: u64,
    /// Retry tokens in the quota now.
    pub quota_level: u32,
    /// The quota's capacity.
    pub quota_capacity: u32,
    /// The adaptive rate limiter.
    pub limiter: LimiterStats,
}
