//! The client's measured send rate, smoothed over half-second buckets.

/// The weight of the newest bucket in the smoothed rate.
/// Source: the AWS SDKs' adaptive retry (`SMOOTH = 0.8`).
pub(crate) const SMOOTH: f64 = 0.8;

/// Width of a measurement bucket, in seconds (the AWS SDKs' `floor(t * 2) / 2`).
pub(crate) const BUCKET_SECONDS: f64 = 0.5;

/// The measured rate of responses per second.
///
/// Responses are counted into half-second buckets `floor(t * 2) / 2`; when a response falls into
/// a later bucket, `rate = count / (bucket - last_bucket)` and the measured rate becomes
/// `rate * 0.8 + measured * 0.2`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MeasuredRate {
    measured: f64,
    last_bucket: f64,
    /// Responses in the open bucket (fractional after a [`restart`](Self::restart)).
    count: f64,
}

impl MeasuredRate {
    /// No measurement yet, starting at `now` (seconds).
    pub fn new(now: f64) -> Self {
        Self {
            measured: 0.0,
            last_bucket: bucket_of(now),
            count: 0.0,
        }
    }

    /// Counts one response at `now` (seconds) and updates the rate when the bucket advances.
    pub fn record(&mut self, now: f64) {
        self.record_many(now, 1);
    }

    /// Counts `responses` at `now` (seconds) at once: a sample standing for that many.
    pub fn record_many(&mut self, now: f64, responses: u64) {
        let bucket = bucket_of(now);
        self.count += responses as f64;
        if bucket < self.last_bucket {
            // The clock stepped back: go on counting from the earlier bucket.
            self.last_bucket = bucket;
        } else if bucket > self.last_bucket {
            let rate = self.count / (bucket - self.last_bucket);
            self.measured = rate * SMOOTH + self.measured * (1.0 - SMOOTH);
            self.count = 0.0;
            self.last_bucket = bucket;
        }
    }

    /// Starts over at `now` (seconds) from `rate`, a rate measured otherwise: the open bucket
    /// holds the responses `rate` would have brought since it opened, so that it closes at
    /// `rate` if the responses go on at it.
    pub(crate) fn restart(&mut self, rate: f64, now: f64) {
        let bucket = bucket_of(now);
        self.measured = rate;
        self.last_bucket = bucket;
        self.count = rate * (now - bucket).max(0.0);
    }

    /// The smoothed rate, in responses per second.
    pub fn rate(&self) -> f64 {
        self.measured
    }
}

/// The start of the half-second bucket holding `t`.
fn bucket_of(t: f64) -> f64 {
    (t / BUCKET_SECONDS).floor() * BUCKET_SECONDS
}

/// The examples of this file's items, which are internal to the crate.
#[cfg(test)]
mod examples {
    use super::*;

    #[test]
    fn measured_rate() {
        let mut rate = MeasuredRate::new(0.0);
        for i in 0..10 {
            rate.record(i as f64 * 0.1); // 5 responses in [0, 0.5), 5 in [0.5, 1.0)
        }
        // The 6th response (t = 0.5) closed bucket 0 with 6 responses over 0.5 s: 12/s * 0.8.
        assert!((rate.rate() - 9.6).abs() < 1e-9);
    }

    #[test]
    fn new() {
        assert_eq!(MeasuredRate::new(3.2).rate(), 0.0);
    }

    #[test]
    fn record() {
        let mut rate = MeasuredRate::new(0.0);
        rate.record(0.1);
        rate.record(1.0); // bucket 1.0: 2 responses over 1 s
        assert!((rate.rate() - 1.6).abs() < 1e-9);
    }

    #[test]
    fn record_many() {
        let mut rate = MeasuredRate::new(0.0);
        rate.record_many(0.1, 4);
        rate.record_many(1.0, 4); // 8 responses over 1 s
        assert!((rate.rate() - 6.4).abs() < 1e-9);
    }
}
