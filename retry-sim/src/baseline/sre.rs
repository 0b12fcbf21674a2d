//! The SRE book's client-side adaptive throttling ("Handling Overload", Google SRE book ch. 21).

use super::{Budget, Outcome, second_of};
use crate::rng::Rng;
use crate::time::Nanos;

/// Client-side adaptive throttling: over a sliding window the client counts `requests`
/// (attempts its application layer made, rejected ones included) and `accepts` (attempts the
/// backend accepted), and rejects a new attempt locally with probability
/// `max(0, (requests - K * accepts) / (requests + 1))`.
///
/// ```
/// use retry_sim::baseline::{Budget, Outcome, SreThrottle};
/// use retry_sim::rng::Rng;
/// let mut sre = SreThrottle::new(2.0, 120);
/// let mut rng = Rng::new(1);
/// // 100 attempts, none accepted: the next is rejected with probability 100/101.
/// for _ in 0..100 {
///     sre.admit(0, &mut rng);
///     sre.on_response(Outcome::Failure { accepted: false }, 0);
/// }
/// let admitted = (0..1000).filter(|_| sre.admit(0, &mut rng)).count();
/// assert!(admitted < 100);
/// ```
#[derive(Debug, Clone)]
pub struct SreThrottle {
    k: f64,
    /// Per-second (requests, accepts), a ring over the window.
    buckets: Vec<(u32, u32)>,
    current: u64,
    requests: u64,
    accepts: u64,
}

impl SreThrottle {
    /// Multiplier `k` (the book uses 2) over a window of `window_secs` seconds (2 minutes).
    pub fn new(k: f64, window_secs: u32) -> Self {
        Self {
            k,
            buckets: vec![(0, 0); window_secs.max(1) as usize],
            current: 0,
            requests: 0,
            accepts: 0,
        }
    }

    /// Slides the window to the second of `now`, forgetting seconds that left it.
    fn advance(&mut self, now: Nanos) {
        let second = second_of(now);
        let len = self.buckets.len() as u64;
        if second.saturating_sub(self.current) >= len {
            self.buckets.fill((0, 0));
            self.requests = 0;
            self.accepts = 0;
            self.current = second;
            return;
        }
        while self.current < second {
            self.current += 1;
            let slot = &mut self.buckets[(self.current % len) as usize];
            self.requests -= u64::from(slot.0);
            self.accepts -= u64::from(slot.1);
            *slot = (0, 0);
        }
    }

    fn slot(&mut self) -> &mut (u32, u32) {
        let len = self.buckets.len() as u64;
        &mut self.buckets[(self.current % len) as usize]
    }
}

impl Budget for SreThrottle {
    fn admit(&mut self, now: Nanos, rng: &mut Rng) -> bool {
        self.advance(now);
        let requests = self.requests as f64;
        let reject = ((requests - self.k * self.accepts as f64) / (requests + 1.0)).max(0.0);
        self.requests += 1;
        self.slot().0 += 1;
        !rng.chance(reject)
    }

    fn on_response(&mut self, outcome: Outcome, now: Nanos) {
        let accepted = match outcome {
            Outcome::Success => true,
            Outcome::Failure { accepted } => accepted,
        };
        if accepted {
            self.advance(now);
            self.accepts += 1;
            self.slot().1 += 1;
        }
    }
}
