//! A latency histogram with bins of 1 % relative width, for percentiles of latencies that
//! range from a millisecond to seconds (the hedging tables' p50, p99 and p99.9).

use crate::time::{MILLI, Nanos};

/// The lowest latency told apart: 10 µs (every bin below is the first).
const FLOOR: f64 = 10_000.0;

/// Each bin's upper edge over its lower edge.
const RATIO: f64 = 1.01;

/// Bins: from 10 µs to past an hour (10 µs × 1.01^2000 ≈ 4.4 × 10⁵ s).
const BINS: usize = 2000;

/// Counts of latencies in bins `[FLOOR × RATIO^i, FLOOR × RATIO^(i+1))`.
///
/// ```
/// use retry_sim::{log_histogram::LogHistogram, time::MILLI};
/// let mut histogram = LogHistogram::new();
/// for ms in 1..=100 {
///     histogram.record(ms * MILLI);
/// }
/// let p50 = histogram.quantile_ms(0.5);
/// assert!((p50 - 50.0).abs() < 0.5, "{p50}");
/// ```
#[derive(Debug, Clone)]
pub struct LogHistogram {
    counts: Vec<u32>,
    total: u64,
}

impl Default for LogHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LogHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        Self {
            counts: vec![0; BINS],
            total: 0,
        }
    }

    /// Counts one latency.
    pub fn record(&mut self, latency: Nanos) {
        let bin = if (latency as f64) < FLOOR {
            0
        } else {
            (((latency as f64) / FLOOR).ln() / RATIO.ln()) as usize
        };
        self.counts[bin.min(BINS - 1)] += 1;
        self.total += 1;
    }

    /// The `q` quantile in milliseconds (the geometric middle of its bin, within 0.5 % of
    /// every latency in it), NaN when empty.
    ///
    /// ```
    /// let empty = retry_sim::log_histogram::LogHistogram::new();
    /// assert!(empty.quantile_ms(0.99).is_nan());
    /// ```
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0u64;
        for (bin, &count) in self.counts.iter().enumerate() {
            seen += u64::from(count);
            if seen >= rank {
                return FLOOR * RATIO.powf(bin as f64 + 0.5) / MILLI as f64;
            }
        }
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SECOND;

    /// Every quantile is within 0.5 % of the exact one, from a millisecond to seconds.
    #[test]
    fn quantiles_are_within_half_a_percent() {
        let mut histogram = LogHistogram::new();
        let latencies: Vec<Nanos> = (0..10_000u64).map(|i| MILLI + i * SECOND / 2_000).collect();
        for &latency in &latencies {
            histogram.record(latency);
        }
        for q in [0.01, 0.5, 0.9, 0.99, 0.999] {
            let exact = latencies[(q * 10_000.0) as usize - 1] as f64 / MILLI as f64;
            let measured = histogram.quantile_ms(q);
            assert!(
                (measured / exact - 1.0).abs() <= 0.005,
                "{q}: {measured} vs {exact}"
            );
        }
    }
}
