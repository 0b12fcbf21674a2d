//! Integration and compile-fail tests of `retry-core` and `retry-macros`, and the fixtures they
//! share.

pub mod fleet_acl;
pub mod fleet_process;
pub mod redis_cluster;
pub mod redis_server;
pub mod test_ca;

use std::time::Duration;

use retry_core::backoff::Jitter;
use retry_core::{Quota, RetryConfig, StandardStrategy};

/// The integration tests' strategy against servers on loopback: 3 attempts, backoffs of 10 ms
/// then 20 ms without jitter, in a scope of its own (real sleeps of a few milliseconds).
pub fn quick_strategy() -> StandardStrategy {
    StandardStrategy::new(
        RetryConfig::builder()
            .max_attempts(3)
            .initial_backoff(Duration::from_millis(10))
            .jitter(Jitter::None)
            .build()
            .expect("valid config"),
    )
}

/// The hedging tests' strategy: `max_attempts`, backoffs of 10 ms then 20 ms without jitter, and
/// a fixed quota of 500 (full from the start and the same at every age, so that a test measures
/// its hedges, not the default quota's age).
pub fn hedging_strategy(max_attempts: u32) -> StandardStrategy {
    StandardStrategy::new(
        RetryConfig::builder()
            .max_attempts(max_attempts)
            .initial_backoff(Duration::from_millis(10))
            .jitter(Jitter::None)
            .quota(Quota::Fixed(500))
            .build()
            .expect("valid config"),
    )
}
