//! Deterministic randomness: one seeded SplitMix64 stream per component.
//!
//! Every random choice of a run comes from a stream derived from the run's seed and a fixed
//! stream number, so a run is a pure function of its inputs and seed.

use crate::time::Nanos;

/// SplitMix64's increment (Steele, Lea and Flood, OOPSLA 2014).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function: a bijective mixer of 64 bits.
///
/// ```
/// assert_ne!(retry_sim::rng::mix(1), retry_sim::rng::mix(2));
/// ```
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of stream `stream` of a run seeded with `seed`.
///
/// ```
/// use retry_sim::rng::derive_seed;
/// assert_eq!(derive_seed(7, 3), derive_seed(7, 3));
/// assert_ne!(derive_seed(7, 3), derive_seed(7, 4));
/// ```
pub fn derive_seed(seed: u64, stream: u64) -> u64 {
    mix(mix(seed ^ GAMMA).wrapping_add(stream.wrapping_mul(GAMMA)))
}

/// A SplitMix64 generator: small, fast, and good enough for simulation.
///
/// ```
/// use retry_sim::rng::Rng;
/// let mut a = Rng::new(1);
/// let mut b = Rng::new(1);
/// assert_eq!(a.next_u64(), b.next_u64());
/// ```
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator starting from `seed`.
    ///
    /// ```
    /// let rng = retry_sim::rng::Rng::new(42);
    /// # let _ = rng;
    /// ```
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// Stream `stream` of the run seeded with `seed`.
    ///
    /// ```
    /// let rng = retry_sim::rng::Rng::stream(42, 1);
    /// # let _ = rng;
    /// ```
    pub fn stream(seed: u64, stream: u64) -> Self {
        Self::new(derive_seed(seed, stream))
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// let mut rng = retry_sim::rng::Rng::new(0);
    /// assert_ne!(rng.next_u64(), rng.next_u64());
    /// ```
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix(self.state)
    }

    /// A uniform number in `[0, 1)`.
    ///
    /// ```
    /// let u = retry_sim::rng::Rng::new(3).next_f64();
    /// assert!((0.0..1.0).contains(&u));
    /// ```
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniform integer in `[0, n)` (`n > 0`), by multiply-shift.
    ///
    /// ```
    /// let mut rng = retry_sim::rng::Rng::new(3);
    /// assert!(rng.below(10) < 10);
    /// ```
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// `true` with probability `p`.
    ///
    /// ```
    /// let mut rng = retry_sim::rng::Rng::new(3);
    /// assert!(!rng.chance(0.0));
    /// assert!(rng.chance(1.0));
    /// ```
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (p >= 1.0 || self.next_f64() < p)
    }

    /// An exponentially distributed duration with mean `mean`.
    ///
    /// ```
    /// let mut rng = retry_sim::rng::Rng::new(3);
    /// let _gap = rng.exp(1_000_000.0);
    /// ```
    pub fn exp(&mut self, mean: f64) -> Nanos {
        // 1 - U is in (0, 1], so the logarithm is finite.
        let u = 1.0 - self.next_f64();
        let value = -u.ln() * mean;
        value.min(u64::MAX as f64 / 2.0) as Nanos
    }

    /// A standard normal deviate (Box–Muller, one of the pair).
    ///
    /// ```
    /// let z = retry_sim::rng::Rng::new(3).normal();
    /// assert!(z.is_finite());
    /// ```
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.next_f64();
        let u2 = self.next_f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// `retry-core`'s randomness for one simulated client's jitter, from a derived seed.
///
/// ```
/// let random = retry_sim::rng::strategy_random(7, 1, 2);
/// # let _ = random;
/// ```
pub fn strategy_random(
    seed: u64,
    layer: u64,
    client: u64,
) -> std::sync::Arc<retry_core::backoff::SeededRandom> {
    std::sync::Arc::new(retry_core::backoff::SeededRandom::new(derive_seed(
        seed,
        1_000_000 + layer * 10_000_000 + client,
    )))
}
