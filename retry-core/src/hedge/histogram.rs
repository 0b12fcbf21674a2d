//! The latency histogram a scope's hedged calls record into and read their percentile delay
//! from: bounded, allocation-free once made, and shared by every thread without a lock.
//!
//! Log-linear buckets, as HdrHistogram's at one significant binary digit and a half: the
//! latencies below 8 µs each have a bucket, and every octave above is split into 8 buckets, so
//! a bucket is at most 12.5 % wider than its lower edge. A percentile is read as the upper edge
//! of the bucket it falls in: at most 12.5 % above the true value, never below it (a hedge is
//! sent no earlier than the percentile asks). Latencies above about 76 hours share the last
//! bucket.
//!
//! The samples of two consecutive windows of [`WINDOW`] are kept; a percentile is read from
//! both (between one and two windows of samples), so that it follows the service as it speeds
//! up or slows down, as tower's `hedge` reads a rotating histogram. A window is cleared by the
//! first sample recorded after it expired: a sample recorded by another thread while it is being
//! cleared may be lost, which statistics can afford. The first window of each pair is empty
//! from the start and is not cleared, so the samples of a scope's first minute are all kept.

use std::time::Duration;

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// The length of one window of samples, 60 s: the scope's traffic window
/// ([`QUOTA_WINDOW`](crate::config::defaults::QUOTA_WINDOW)), so that a percentile and the quota
/// follow the same last minute or two of calls.
pub(crate) const WINDOW: Duration = Duration::from_secs(60);

/// Sub-buckets per octave, as a power of two: 2^3 = 8 buckets per doubling of the latency.
const SUB_BITS: u32 = 3;
/// Sub-buckets per octave.
const SUB_BUCKETS: u64 = 1 << SUB_BITS;
/// The highest octave with buckets of its own: latencies of 2^37 µs (38 hours) to 2^38 µs.
const MAX_OCTAVE: u32 = 37;
/// The number of buckets: one per microsecond below 8 µs, then 8 per octave up to [`MAX_OCTAVE`].
pub(crate) const BUCKETS: usize =
    (SUB_BUCKETS + (MAX_OCTAVE - SUB_BITS + 1) as u64 * SUB_BUCKETS) as usize;

/// The bucket of a latency of `micros` microseconds.
fn bucket_of(micros: u64) -> usize {
    if micros < SUB_BUCKETS {
        return micros as usize;
    }
    let octave = (63 - micros.leading_zeros()).min(MAX_OCTAVE);
    if octave == MAX_OCTAVE && micros >> (MAX_OCTAVE + 1) != 0 {
        return BUCKETS - 1;
    }
    let sub = (micros >> (octave - SUB_BITS)) & (SUB_BUCKETS - 1);
    (SUB_BUCKETS + u64::from(octave - SUB_BITS) * SUB_BUCKETS + sub) as usize
}

/// The largest latency, in microseconds, that falls in `bucket`.
fn upper_edge(bucket: usize) -> u64 {
    let bucket = bucket as u64;
    if bucket < SUB_BUCKETS {
        return bucket;
    }
    let octave = (bucket - SUB_BUCKETS) / SUB_BUCKETS + u64::from(SUB_BITS);
    let sub = (bucket - SUB_BUCKETS) % SUB_BUCKETS;
    ((SUB_BUCKETS + sub + 1) << (octave - u64::from(SUB_BITS))) - 1
}

/// One window's samples.
struct Window {
    /// Which window of [`WINDOW`] since the clock's zero, plus one (0: never used).
    epoch: AtomicU64,
    buckets: [AtomicU32; BUCKETS],
}

impl Window {
    fn new() -> Self {
        Self {
            epoch: AtomicU64::new(0),
            buckets: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }
}

/// The latencies of a scope's hedged calls over its last one or two windows (see the
/// [module](self)).
pub(crate) struct LatencyHistogram {
    windows: [Window; 2],
}

impl LatencyHistogram {
    /// An empty histogram.
    pub(crate) fn new() -> Self {
        Self {
            windows: [Window::new(), Window::new()],
        }
    }

    /// Records a latency of `latency`, measured at `now` (the scope's clock).
    pub(crate) fn record(&self, now: Duration, latency: Duration) {
        let epoch = epoch_of(now);
        let window = &self.windows[(epoch % 2) as usize];
        let seen = window.epoch.load(Ordering::Acquire);
        if seen != epoch {
            if seen > epoch {
                // A sample measured before a window another thread already started: too old.
                return;
            }
            // The window expired: the first thread to see it clears it for the new one. A
            // window never used (epoch 0) holds nothing to clear: clearing it would wipe the
            // samples other threads record into it meanwhile.
            let took_it = window
                .epoch
                .compare_exchange(seen, epoch, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
            if took_it && seen != 0 {
                for bucket in &window.buckets {
                    bucket.store(0, Ordering::Relaxed);
                }
            }
        }
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        let bucket = &window.buckets[bucket_of(micros)];
        // Saturating: a bucket of 4 billion samples in one minute stays where it is.
        let _ = bucket.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |count| {
            count.checked_add(1)
        });
    }

    /// The samples of the windows a percentile is read from at `now`, added up bucket by
    /// bucket, and their number.
    fn live_counts(&self, now: Duration) -> ([u64; BUCKETS], u64) {
        let epoch = epoch_of(now);
        let mut counts = [0u64; BUCKETS];
        let mut total = 0u64;
        for window in &self.windows {
            let seen = window.epoch.load(Ordering::Acquire);
            // This window or the one before it; anything older has expired.
            if seen == 0 || seen > epoch || epoch - seen > 1 {
                continue;
            }
            for (count, bucket) in counts.iter_mut().zip(&window.buckets) {
                let samples = u64::from(bucket.load(Ordering::Relaxed));
                *count += samples;
                total += samples;
            }
        }
        (counts, total)
    }

    /// The number of samples a percentile would be read from at `now`.
    pub(crate) fn samples(&self, now: Duration) -> u64 {
        self.live_counts(now).1
    }

    /// The latency below which `percentile` % of the live samples fall (the upper edge of its
    /// bucket), if there are at least [`min_samples`]`(percentile)` of them.
    pub(crate) fn percentile(&self, now: Duration, percentile: f64) -> Option<Duration> {
        let (counts, total) = self.live_counts(now);
        if total < min_samples(percentile) {
            return None;
        }
        // The rank of the percentile's sample, counted from 1.
        let rank = ((percentile / 100.0) * total as f64).ceil().max(1.0) as u64;
        let mut seen = 0u64;
        for (bucket, count) in counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Some(Duration::from_micros(upper_edge(bucket)));
            }
        }
        Some(Duration::from_micros(upper_edge(BUCKETS - 1)))
    }
}

/// The samples of the tail a percentile must see before it is used: 10 above it, so that the
/// percentile is read among samples rather than from the single slowest. `10 / (1 − p)`:
/// 200 samples for p95, 1,000 for p99, 10,000 for p99.9 (20 for the median).
pub(crate) const TAIL_SAMPLES: f64 = 10.0;

/// The samples `percentile` needs before it is used: [`TAIL_SAMPLES`] above it.
pub(crate) fn min_samples(percentile: f64) -> u64 {
    let tail = ((100.0 - percentile) / 100.0).max(f64::MIN_POSITIVE);
    let exact = TAIL_SAMPLES / tail;
    // 10 / 0.001 is 10000.000000000002 in floating point: a whole number within rounding is it.
    let nearest = exact.round();
    let samples = if (exact - nearest).abs() < 1e-6 {
        nearest
    } else {
        exact.ceil()
    };
    samples.min(u64::MAX as f64) as u64
}

/// The window `now` falls in, plus one (0 is "never used").
fn epoch_of(now: Duration) -> u64 {
    now.as_secs() / WINDOW.as_secs() + 1
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn every_latency_falls_in_a_bucket_whose_edges_hold_it() {
        let mut previous_edge = None;
        for bucket in 0..BUCKETS {
            let edge = upper_edge(bucket);
            assert_eq!(bucket_of(edge), bucket, "bucket {bucket}'s edge {edge}");
            if let Some(previous) = previous_edge {
                assert_eq!(
                    bucket_of(previous + 1),
                    bucket,
                    "the value after {previous}"
                );
                // At most 12.5 % wider than its lower edge.
                assert!((edge - previous) * 8 <= previous + 1 + 8, "bucket {bucket}");
            }
            previous_edge = Some(edge);
        }
        assert_eq!(bucket_of(u64::MAX), BUCKETS - 1);
        assert_eq!(bucket_of(0), 0);
        assert_eq!(upper_edge(BUCKETS - 1), (1 << (MAX_OCTAVE + 1)) - 1);
    }

    #[test]
    fn a_percentile_is_read_once_the_tail_has_its_samples() {
        let histogram = LatencyHistogram::new();
        let now = Duration::from_secs(5);
        // 199 samples: p95 needs 200.
        for i in 0..199u64 {
            histogram.record(now, Duration::from_millis(1 + i % 100));
        }
        assert_eq!(histogram.percentile(now, 95.0), None);
        histogram.record(now, Duration::from_millis(100));
        // 1..=100 ms twice: the 190th sample of 200 is 95 ms, read as its bucket's upper edge.
        let p95 = histogram.percentile(now, 95.0).unwrap();
        assert!(
            p95 >= Duration::from_millis(95) && p95 <= Duration::from_micros(95_000 * 9 / 8),
            "{p95:?}"
        );
        assert_eq!(min_samples(95.0), 200);
        assert_eq!(min_samples(99.0), 1_000);
        assert_eq!(min_samples(99.9), 10_000);
        assert_eq!(min_samples(50.0), 20);
    }

    #[test]
    fn samples_expire_after_two_windows() {
        let histogram = LatencyHistogram::new();
        let at = |secs| Duration::from_secs(secs);
        for _ in 0..20 {
            histogram.record(at(10), Duration::from_millis(10));
        }
        assert_eq!(histogram.samples(at(10)), 20);
        // The next window still reads the previous one.
        for _ in 0..20 {
            histogram.record(at(70), Duration::from_millis(500));
        }
        assert_eq!(histogram.samples(at(70)), 40);
        let median = histogram.percentile(at(70), 50.0).unwrap();
        assert!(median < Duration::from_millis(12), "{median:?}");
        // Two windows later, the 10 ms samples are gone: the window is reused.
        for _ in 0..20 {
            histogram.record(at(130), Duration::from_millis(500));
        }
        assert_eq!(histogram.samples(at(130)), 40);
        let median = histogram.percentile(at(130), 50.0).unwrap();
        assert!(median >= Duration::from_millis(500), "{median:?}");
        // Read later still, nothing is live.
        assert_eq!(histogram.samples(at(300)), 0);
        // A sample from a window already replaced is dropped.
        histogram.record(at(10), Duration::from_millis(1));
        assert_eq!(histogram.samples(at(130)), 40);
    }

    #[test]
    fn threads_recording_at_once_lose_no_sample_within_a_window() {
        let histogram = std::sync::Arc::new(LatencyHistogram::new());
        let threads: Vec<_> = (0..4)
            .map(|thread| {
                let histogram = std::sync::Arc::clone(&histogram);
                std::thread::spawn(move || {
                    for i in 0..10_000u64 {
                        let latency = Duration::from_micros(1 + (i * 7 + thread) % 5_000);
                        histogram.record(Duration::from_secs(1), latency);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(histogram.samples(Duration::from_secs(1)), 40_000);
    }
}
