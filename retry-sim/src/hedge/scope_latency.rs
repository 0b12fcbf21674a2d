//! The latency a client's hedged calls measured, read as a percentile for `hedge_after = "p95"`:
//! the rules of `retry-core`'s hedging histogram, kept by the simulator for one client.
//!
//! * buckets log-linear, 8 per octave of microseconds (one per microsecond below 8 µs): a
//!   bucket is at most 12.5 % wider than its lower edge, and a percentile is read as the upper
//!   edge of its bucket (never below the true value, at most 12.5 % above);
//! * two windows of [`WINDOW`] (60 s, the quota's traffic window); a percentile reads both,
//!   one to two minutes of samples; a window is cleared when a sample arrives after it expired;
//! * a percentile is used once the windows hold 10 samples above it ([`min_samples`]: 200 for
//!   p95, 1,000 for p99); before, it is unknown and the calls are not hedged.

use crate::time::{MICRO, Nanos, SECOND};

/// One window of samples: 60 s.
pub const WINDOW: Nanos = 60 * SECOND;

/// The samples above a percentile it needs before it is used.
const TAIL_SAMPLES: f64 = 10.0;

/// Buckets per octave, as a power of two.
const SUB_BITS: u32 = 3;
/// Buckets per octave.
const SUB_BUCKETS: u64 = 1 << SUB_BITS;
/// The highest octave with buckets of its own (2^37 µs, 38 hours); above, the last bucket.
const MAX_OCTAVE: u32 = 37;
/// The number of buckets.
const BUCKETS: usize = (SUB_BUCKETS + (MAX_OCTAVE - SUB_BITS + 1) as u64 * SUB_BUCKETS) as usize;

/// The samples `percentile` (in (0, 100)) needs: 10 above it, `10 / (1 − p / 100)` in all.
///
/// ```
/// use retry_sim::hedge::scope_latency::min_samples;
/// assert_eq!(min_samples(95.0), 200);
/// assert_eq!(min_samples(99.0), 1_000);
/// ```
pub fn min_samples(percentile: f64) -> u64 {
    let exact = TAIL_SAMPLES / ((100.0 - percentile) / 100.0).max(f64::MIN_POSITIVE);
    let nearest = exact.round();
    if (exact - nearest).abs() < 1e-6 {
        nearest as u64
    } else {
        exact.ceil() as u64
    }
}

fn bucket_of(micros: u64) -> usize {
    if micros < SUB_BUCKETS {
        return micros as usize;
    }
    let octave = 63 - micros.leading_zeros();
    if octave > MAX_OCTAVE {
        return BUCKETS - 1;
    }
    let sub = (micros >> (octave - SUB_BITS)) & (SUB_BUCKETS - 1);
    (SUB_BUCKETS + u64::from(octave - SUB_BITS) * SUB_BUCKETS + sub) as usize
}

/// The largest latency, in microseconds, of `bucket`.
fn upper_edge(bucket: usize) -> u64 {
    let bucket = bucket as u64;
    if bucket < SUB_BUCKETS {
        return bucket;
    }
    let octave = (bucket - SUB_BUCKETS) / SUB_BUCKETS + u64::from(SUB_BITS);
    let sub = (bucket - SUB_BUCKETS) % SUB_BUCKETS;
    ((SUB_BUCKETS + sub + 1) << (octave - u64::from(SUB_BITS))) - 1
}

/// A client's measured latency over its last one or two windows.
///
/// ```
/// use retry_sim::hedge::scope_latency::ScopeLatency;
/// use retry_sim::time::{MILLI, SECOND};
/// let mut latency = ScopeLatency::new();
/// for i in 0..200 {
///     latency.record(SECOND, if i < 190 { MILLI } else { 100 * MILLI });
/// }
/// assert_eq!(latency.percentile(SECOND, 99.0), None); // 1,000 samples needed
/// let p95 = latency.percentile(SECOND, 95.0).unwrap();
/// assert!(p95 >= MILLI && p95 < MILLI * 9 / 8, "{p95}");
/// ```
#[derive(Debug, Clone)]
pub struct ScopeLatency {
    /// Per window: which window of [`WINDOW`] it holds (plus one; 0: never used), its counts.
    windows: [(u64, Vec<u32>); 2],
}

impl Default for ScopeLatency {
    fn default() -> Self {
        Self::new()
    }
}

impl ScopeLatency {
    /// No samples.
    pub fn new() -> Self {
        Self {
            windows: [(0, vec![0; BUCKETS]), (0, vec![0; BUCKETS])],
        }
    }

    /// Records `latency`, measured at `now`.
    pub fn record(&mut self, now: Nanos, latency: Nanos) {
        let epoch = now / WINDOW + 1;
        let (seen, counts) = &mut self.windows[(epoch % 2) as usize];
        if *seen != epoch {
            counts.fill(0);
            *seen = epoch;
        }
        let bucket = &mut counts[bucket_of(latency / MICRO)];
        *bucket = bucket.saturating_add(1);
    }

    /// The `percentile` (in (0, 100)) of the samples of the windows current at `now`, read as
    /// its bucket's upper edge; `None` without [`min_samples`] of them.
    pub fn percentile(&self, now: Nanos, percentile: f64) -> Option<Nanos> {
        let epoch = now / WINDOW + 1;
        let current = |seen: u64| seen != 0 && seen + 1 >= epoch && seen <= epoch;
        let mut total = 0u64;
        let mut merged = vec![0u64; BUCKETS];
        for (seen, counts) in &self.windows {
            if current(*seen) {
                for (sum, &count) in merged.iter_mut().zip(counts) {
                    *sum += u64::from(count);
                }
                total += counts.iter().map(|&c| u64::from(c)).sum::<u64>();
            }
        }
        if total == 0 || total < min_samples(percentile) {
            return None;
        }
        let rank = ((percentile / 100.0 * total as f64).ceil() as u64).clamp(1, total);
        let mut seen = 0;
        for (bucket, &count) in merged.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Some(upper_edge(bucket).saturating_mul(MICRO));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::MILLI;

    /// Every latency falls in a bucket whose upper edge is at least it and within 12.5 %.
    #[test]
    fn a_bucket_is_at_most_an_eighth_wide() {
        for micros in [
            1,
            7,
            8,
            9,
            15,
            16,
            1_000,
            2_999,
            3_000,
            1_000_000,
            123_456_789,
        ] {
            let edge = upper_edge(bucket_of(micros));
            assert!(edge >= micros, "{micros} → {edge}");
            assert!(edge as f64 <= micros as f64 * 1.125, "{micros} → {edge}");
        }
    }

    /// Samples older than two windows are not read.
    #[test]
    fn samples_expire_after_two_windows() {
        let mut latency = ScopeLatency::new();
        for _ in 0..200 {
            latency.record(0, 5 * MILLI);
        }
        assert!(latency.percentile(WINDOW + SECOND, 95.0).is_some());
        assert_eq!(latency.percentile(2 * WINDOW + SECOND, 95.0), None);
        // A new sample in a later window clears the window it reuses.
        latency.record(2 * WINDOW, MILLI);
        assert_eq!(latency.percentile(2 * WINDOW, 50.0), None, "1 sample");
    }
}
