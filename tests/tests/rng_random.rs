//! `RngRandom` (feature `rand`): a strategy whose jitter comes from a seeded `rand` generator
//! gives the same delays for the same seed.

use std::sync::Arc;
use std::time::Duration;

use rand::{SeedableRng, rngs::StdRng};
use retry_core::backoff::RngRandom;
use retry_core::{ErrorKind, RetryConfig, RetryReason, RetryStrategy, StandardStrategy};

/// A strategy whose jitter comes from the program's own seeded generator.
fn seeded_strategy(config: RetryConfig, seed: u64) -> StandardStrategy {
    StandardStrategy::builder(config)
        .random(Arc::new(RngRandom::new(StdRng::seed_from_u64(seed))))
        .build()
}

/// The delay before the first retry of a server error, under a strategy seeded with `seed`.
fn first_delay(seed: u64) -> Duration {
    let strategy = seeded_strategy(RetryConfig::default(), seed);
    let token = strategy.acquire_initial_token();
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
        .expect("a retry");
    let delay = token.delay();
    strategy.record_failure(token);
    delay
}

#[test]
fn a_seeded_generator_makes_jitter_reproducible() {
    assert_eq!(first_delay(9), first_delay(9));
    assert_ne!(first_delay(9), first_delay(10));
}
