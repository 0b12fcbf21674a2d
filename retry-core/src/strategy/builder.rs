//! The builder of [`StandardStrategy`] and [`AdaptiveStrategy`](super::AdaptiveStrategy): the
//! scope, the randomness and the backoff policies injected.

use std::sync::Arc;

use super::StandardStrategy;
use crate::backoff::{Backoff, ExponentialBackoff, RandomSource, ThreadRandom};
use crate::clock::SharedClock;
use crate::config::RetryConfig;
use crate::scope::Scope;

/// Builds a [`StandardStrategy`] or [`AdaptiveStrategy`](super::AdaptiveStrategy): the scope,
/// the randomness and the backoff policies can be injected.
///
/// ```
/// use retry_core::clock::ManualClock;
/// use retry_core::{RetryConfig, StandardStrategy};
/// use retry_core::backoff::SeededRandom;
/// use std::sync::Arc;
///
/// let strategy = StandardStrategy::builder(RetryConfig::default())
///     .clock(Arc::new(ManualClock::new()))
///     .random(Arc::new(SeededRandom::new(7)))
///     .build();
/// # let _ = strategy;
/// ```
#[derive(Debug, Clone)]
#[must_use = "call .build() to get the strategy"]
pub struct StrategyBuilder {
    config: RetryConfig,
    scope: Option<Scope>,
    clock: Option<SharedClock>,
    random: Option<Arc<dyn RandomSource>>,
    backoff: Option<Arc<dyn Backoff>>,
}

impl StrategyBuilder {
    /// The configuration the strategy will follow.
    pub fn config(&self) -> &RetryConfig {
        &self.config
    }

    /// Share this scope's quota, limiter and counters. Default: a private scope.
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope, StandardStrategy};
    /// let scope = Scope::new("shared", &RetryConfig::default());
    /// let a = StandardStrategy::builder(RetryConfig::default()).scope(scope.clone()).build();
    /// # use retry_core::RetryStrategy;
    /// assert!(a.scope().same_as(&scope));
    /// ```
    pub fn scope(mut self, scope: Scope) -> Self {
        self.scope = Some(scope);
        self
    }

    /// The clock of the private scope, when no [`scope`](Self::scope) is given.
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The jitter's randomness. Default: [`ThreadRandom`].
    pub fn random(mut self, random: Arc<dyn RandomSource>) -> Self {
        self.random = Some(random);
        self
    }

    /// A backoff policy for every error kind, replacing the configured exponential ones.
    ///
    /// ```
    /// use retry_core::backoff::{ExponentialBackoff, Jitter};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use std::{sync::Arc, time::Duration};
    /// let fixed = ExponentialBackoff::new(Duration::from_millis(10), Duration::from_millis(10), Jitter::None);
    /// let s = StandardStrategy::builder(RetryConfig::default()).backoff(Arc::new(fixed)).build();
    /// # let _ = s;
    /// ```
    pub fn backoff(mut self, backoff: Arc<dyn Backoff>) -> Self {
        self.backoff = Some(backoff);
        self
    }

    /// The standard strategy.
    pub fn build(self) -> StandardStrategy {
        let config = self.config;
        let scope = self.scope.unwrap_or_else(|| match self.clock {
            Some(clock) => Scope::with_clock("private", &config, clock),
            None => Scope::new("private", &config),
        });
        let exponential = |initial| -> Arc<dyn Backoff> {
            Arc::new(ExponentialBackoff::new(
                initial,
                config.max_backoff(),
                config.jitter(),
            ))
        };
        let (backoff, throttling_backoff) = match self.backoff {
            Some(backoff) => (Arc::clone(&backoff), backoff),
            None => (
                exponential(config.initial_backoff()),
                exponential(config.throttling_backoff()),
            ),
        };
        StandardStrategy {
            random: self.random.unwrap_or_else(|| Arc::new(ThreadRandom)),
            config,
            scope,
            backoff,
            throttling_backoff,
        }
    }
}

impl StandardStrategy {
    /// A builder for a strategy following `config`.
    pub fn builder(config: RetryConfig) -> StrategyBuilder {
        StrategyBuilder {
            config,
            scope: None,
            clock: None,
            random: None,
            backoff: None,
        }
    }
}

#[cfg(all(test, feature = "rand"))]
mod tests {
    use super::*;
    use crate::backoff::RngRandom;
    use crate::classify::{ErrorKind, RetryReason};
    use crate::strategy::RetryStrategy;
    use rand::{SeedableRng, rngs::StdRng};

    #[test]
    fn a_seeded_rng_makes_a_strategys_jitter_reproducible() {
        let delays = |seed| {
            let strategy = StandardStrategy::builder(RetryConfig::default())
                .random(Arc::new(RngRandom::new(StdRng::seed_from_u64(seed))))
                .build();
            let mut token = strategy.acquire_initial_token();
            let mut delays = Vec::new();
            for _ in 0..2 {
                token = strategy
                    .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
                    .expect("retry granted");
                delays.push(token.delay());
            }
            strategy.record_success(token);
            delays
        };
        assert_eq!(delays(3), delays(3));
        assert_ne!(delays(3), delays(4));
    }
}
