//! The server's admission: a token bucket, as a throttling service enforces a request rate
//! (S3's and DynamoDB's per-partition limits behave like one): `rate` tokens per second up to
//! `burst`; a request that finds a whole token is admitted and takes it.

use std::time::Duration;

/// A token bucket on an explicit clock (time since the bucket's start), full at first.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate: f64,
    burst: f64,
    tokens: f64,
    last: Duration,
}

impl TokenBucket {
    /// A full bucket of `burst` tokens refilled at `rate` per second; both must be positive
    /// and finite (the caller checks its options).
    pub fn new(rate: f64, burst: f64) -> Self {
        Self {
            rate,
            burst,
            tokens: burst,
            last: Duration::ZERO,
        }
    }

    /// Whether a request arriving at `now` is admitted (taking a token). A `now` before the
    /// last one counts as the last one: time never runs back.
    pub fn admit(&mut self, now: Duration) -> bool {
        if now > self.last {
            let refill = (now - self.last).as_secs_f64() * self.rate;
            self.tokens = (self.tokens + refill).min(self.burst);
            self.last = now;
        }
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_admits_its_burst_then_the_rate() {
        let mut bucket = TokenBucket::new(500.0, 50.0);
        let burst = (0..60).filter(|_| bucket.admit(Duration::ZERO)).count();
        assert_eq!(burst, 50);
        // One request every 0.5 ms for a second: 2000 offered, 500 refilled.
        let admitted = (1..=2000)
            .filter(|i| bucket.admit(Duration::from_micros(500 * i)))
            .count();
        assert_eq!(admitted, 500);
    }

    #[test]
    fn an_idle_bucket_refills_to_its_burst_only() {
        let mut bucket = TokenBucket::new(500.0, 50.0);
        (0..50).for_each(|_| assert!(bucket.admit(Duration::ZERO)));
        let later = Duration::from_secs(10);
        let admitted = (0..100).filter(|_| bucket.admit(later)).count();
        assert_eq!(admitted, 50);
    }

    #[test]
    fn time_running_back_refills_nothing() {
        let mut bucket = TokenBucket::new(1.0, 1.0);
        assert!(bucket.admit(Duration::from_secs(5)));
        assert!(!bucket.admit(Duration::from_secs(1)));
    }
}
