//! Backoff: how long to wait before a retry. A [`Backoff`] policy ([`ExponentialBackoff`])
//! spreads its delays by a [`Jitter`], drawing from a [`RandomSource`] ([`ThreadRandom`] by
//! default; [`SeededRandom`], [`FixedRandom`] or, with feature `rand`, any `rand` generator
//! through [`RngRandom`] for reproducible runs).

mod exponential;
mod jitter;
mod random;

use std::fmt;
use std::time::Duration;

pub use exponential::ExponentialBackoff;
pub use jitter::Jitter;
#[cfg(feature = "rand")]
pub use random::RngRandom;
pub use random::{FixedRandom, RandomSource, SeededRandom, ThreadRandom};

/// A stateless backoff policy: the delay before retry number `retry` (1 for the first retry).
///
/// Policies that depend on the previous delay (decorrelated jitter) get it as an argument, so one
/// policy serves every call concurrently.
///
/// ```
/// use retry_core::backoff::{Backoff, ExponentialBackoff, FixedRandom, Jitter};
/// use std::time::Duration;
///
/// let backoff = ExponentialBackoff::new(Duration::from_millis(100), Duration::from_secs(1), Jitter::None);
/// let delays: Vec<_> = (1..=5)
///     .map(|retry| backoff.delay(retry, Duration::ZERO, &FixedRandom(0.5)).as_millis())
///     .collect();
/// assert_eq!(delays, [100, 200, 400, 800, 1000]);
/// ```
pub trait Backoff: Send + Sync + fmt::Debug {
    /// The delay before retry number `retry` (1-based). `previous` is the delay that was slept
    /// before the previous retry (zero before the first). `random` supplies the jitter.
    fn delay(&self, retry: u32, previous: Duration, random: &dyn RandomSource) -> Duration;
}
