//! The source of jitter: thread-local randomness by default, seeded for reproducible runs.

use std::fmt;

use crate::sync::{AtomicU64, Ordering};

/// Random numbers for jitter, uniform in `[0, 1)`.
///
/// ```
/// use retry_core::backoff::{RandomSource, SeededRandom};
/// let a = SeededRandom::new(7);
/// let b = SeededRandom::new(7);
/// assert_eq!(a.next_f64(), b.next_f64());
/// ```
pub trait RandomSource: Send + Sync + fmt::Debug {
    /// The next number, in `[0, 1)` (a test source may return exactly `1.0`).
    fn next_f64(&self) -> f64;
}

/// Fast thread-local randomness (`fastrand`, seeded from the OS): the default.
///
/// ```
/// use retry_core::backoff::{RandomSource, ThreadRandom};
/// let u = ThreadRandom.next_f64();
/// assert!((0.0..1.0).contains(&u));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadRandom;

impl RandomSource for ThreadRandom {
    fn next_f64(&self) -> f64 {
        fastrand::f64()
    }
}

/// A seeded generator (SplitMix64): the same seed gives the same sequence, for reproducible
/// tests and simulations. Lock-free; under concurrency the sequence is shared among callers.
///
/// ```
/// use retry_core::backoff::{RandomSource, SeededRandom};
/// let rng = SeededRandom::new(42);
/// let u = rng.next_f64();
/// assert!((0.0..1.0).contains(&u));
/// ```
pub struct SeededRandom {
    state: AtomicU64,
}

impl SeededRandom {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            state: AtomicU64::new(seed),
        }
    }
}

/// SplitMix64's increment (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014).
const SPLITMIX_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

impl RandomSource for SeededRandom {
    fn next_f64(&self) -> f64 {
        let state = self
            .state
            .fetch_add(SPLITMIX_GAMMA, Ordering::Relaxed)
            .wrapping_add(SPLITMIX_GAMMA);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        unit_f64(z)
    }
}

/// A uniform double in `[0, 1)` from the top 53 bits of `bits`.
fn unit_f64(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

impl fmt::Debug for SeededRandom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeededRandom").finish_non_exhaustive()
    }
}

/// Always the same number: pins jitter in tests (`FixedRandom(1.0)` means "no jitter reduction").
///
/// ```
/// use retry_core::backoff::{FixedRandom, RandomSource};
/// assert_eq!(FixedRandom(1.0).next_f64(), 1.0);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct FixedRandom(pub f64);

impl RandomSource for FixedRandom {
    fn next_f64(&self) -> f64 {
        self.0.clamp(0.0, 1.0)
    }
}

/// Any `rand` generator as the jitter's randomness (feature `rand`), for programs that seed all
/// their randomness from one place. The generator sits behind a mutex: a draw is made per retry,
/// never on the success path. The default stays [`ThreadRandom`].
///
/// ```
/// use rand::{SeedableRng, rngs::StdRng};
/// use retry_core::backoff::{RandomSource, RngRandom};
/// use retry_core::{RetryConfig, StandardStrategy};
/// use std::sync::Arc;
///
/// let a = RngRandom::new(StdRng::seed_from_u64(7));
/// let b = RngRandom::new(StdRng::seed_from_u64(7));
/// assert_eq!(a.next_f64(), b.next_f64());
///
/// let strategy = StandardStrategy::builder(RetryConfig::default())
///     .random(Arc::new(RngRandom::new(StdRng::seed_from_u64(42))))
///     .build();
/// # let _ = strategy;
/// ```
#[cfg(feature = "rand")]
#[cfg_attr(docsrs, doc(cfg(feature = "rand")))]
pub struct RngRandom<R> {
    rng: std::sync::Mutex<R>,
}

#[cfg(feature = "rand")]
impl<R: rand_core::Rng> RngRandom<R> {
    /// Draws the jitter from `rng`.
    ///
    /// ```
    /// use rand::{SeedableRng, rngs::StdRng};
    /// let random = retry_core::backoff::RngRandom::new(StdRng::seed_from_u64(1));
    /// # let _ = random;
    /// ```
    pub fn new(rng: R) -> Self {
        Self {
            rng: std::sync::Mutex::new(rng),
        }
    }

    /// The generator back, in the state the draws left it.
    pub fn into_inner(self) -> R {
        self.rng
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(feature = "rand")]
impl<R: rand_core::Rng + Send> RandomSource for RngRandom<R> {
    fn next_f64(&self) -> f64 {
        // A panic inside the generator poisons nothing a draw depends on: keep drawing.
        let mut rng = self
            .rng
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        unit_f64(rng.next_u64())
    }
}

#[cfg(feature = "rand")]
impl<R> fmt::Debug for RngRandom<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RngRandom")
            .field("rng", &std::any::type_name::<R>())
            .finish()
    }
}

#[cfg(all(test, feature = "rand"))]
mod rand_tests {
    use super::*;
    use rand::{SeedableRng, rngs::StdRng};

    #[test]
    fn the_same_seed_gives_the_same_draws_in_unit_range() {
        let a = RngRandom::new(StdRng::seed_from_u64(11));
        let b = RngRandom::new(StdRng::seed_from_u64(11));
        let other = RngRandom::new(StdRng::seed_from_u64(12));
        let draws: Vec<f64> = (0..1000).map(|_| a.next_f64()).collect();
        assert_eq!(draws, (0..1000).map(|_| b.next_f64()).collect::<Vec<_>>());
        assert_ne!(
            draws,
            (0..1000).map(|_| other.next_f64()).collect::<Vec<_>>()
        );
        assert!(draws.iter().all(|u| (0.0..1.0).contains(u)));
        let mean = draws.iter().sum::<f64>() / draws.len() as f64;
        assert!((0.45..0.55).contains(&mean), "uniform: mean {mean}");
    }

    #[test]
    fn into_inner_gives_the_generator_back_where_the_draws_left_it() {
        let random = RngRandom::new(StdRng::seed_from_u64(5));
        random.next_f64();
        let mut rng = random.into_inner();
        let mut fresh = StdRng::seed_from_u64(5);
        rand_core::Rng::next_u64(&mut fresh);
        assert_eq!(
            rand_core::Rng::next_u64(&mut rng),
            rand_core::Rng::next_u64(&mut fresh)
        );
    }
}
