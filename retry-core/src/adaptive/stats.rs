//! A snapshot of the rate limiter, for metrics and tests.

/// A snapshot of the limiter for metrics and tests.
///
/// ```
/// let stats = retry_core::adaptive::ClientRateLimiter::new(std::time::Duration::ZERO).stats();
/// assert!(!stats.enabled);
/// assert_eq!(stats.fill_rate, 0.5); // the floor, the AWS SDKs' `MIN_FILL_RATE`
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct LimiterStats {
    /// Whether a throttle has switched the bucket on.
    pub enabled: bool,
    /// Permits per second added to the bucket.
    pub fill_rate: f64,
    /// Permits in the bucket.
    pub capacity: f64,
    /// Most permits the bucket holds.
    pub max_capacity: f64,
    /// The smoothed rate of responses per second.
    pub measured_rate: f64,
    /// Callers waiting for a permit.
    pub waiting: u32,
}
