//! When calls start: a Poisson process (exponential gaps) at a rate per second, from a seed,
//! so that processes do not call in step.

use std::time::Duration;

/// The gaps between calls of a Poisson process at `rate` calls per second.
#[derive(Debug)]
pub struct Arrivals {
    rate: f64,
    random: fastrand::Rng,
}

impl Arrivals {
    /// Arrivals at `rate` (positive and finite: the options are checked) drawn from `seed`.
    pub fn new(rate: f64, seed: u64) -> Self {
        Self {
            rate,
            random: fastrand::Rng::with_seed(seed),
        }
    }

    /// The time to the next call.
    pub fn next_gap(&mut self) -> Duration {
        // 1 - u is in (0, 1]: its logarithm is finite.
        let uniform = 1.0 - self.random.f64();
        Duration::from_secs_f64(-uniform.ln() / self.rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_gap_is_one_over_the_rate() {
        let mut arrivals = Arrivals::new(100.0, 7);
        let total: Duration = (0..100_000).map(|_| arrivals.next_gap()).sum();
        let mean = total.as_secs_f64() / 100_000.0;
        assert!((mean - 0.01).abs() < 0.0002, "mean gap {mean}");
    }
}
