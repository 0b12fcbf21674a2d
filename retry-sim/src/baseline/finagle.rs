//! Finagle's retry budget (`RetryBudget(ttl, minRetriesPerSec, percentCanRetry)`).

use super::{Budget, second_of};
use crate::time::Nanos;

/// Finagle's token retry budget: every request deposits 1 token, a retry withdraws
/// `1 / percent_can_retry` tokens, deposits and withdrawals expire after `ttl`, and a reserve of
/// `min_retries_per_sec * ttl` retries is always available. So at most
/// `min_retries_per_sec * ttl + percent_can_retry * requests` retries happen in any `ttl`.
///
/// ```
/// use retry_sim::baseline::{Budget, FinagleBudget};
/// let mut finagle = FinagleBudget::new(0.2, 10.0, 10);
/// // No requests: the reserve allows 10/s * 10 s = 100 retries.
/// let retries = (0..1000).filter(|_| finagle.allow_retry(0)).count();
/// assert_eq!(retries, 100);
/// ```
#[derive(Debug, Clone)]
pub struct FinagleBudget {
    /// Per-second net deposits, in thousandths of a token, a ring over `ttl`.
    buckets: Vec<i64>,
    current: u64,
    sum: i64,
    reserve: i64,
    deposit: i64,
    withdrawal: i64,
}

/// Finagle keeps tokens in thousandths.
const SCALE: i64 = 1000;

impl FinagleBudget {
    /// `percent_can_retry` (0.2), `min_retries_per_sec` (10) and `ttl_secs` (10).
    pub fn new(percent_can_retry: f64, min_retries_per_sec: f64, ttl_secs: u32) -> Self {
        let ttl = ttl_secs.max(1);
        let withdrawal = (SCALE as f64 / percent_can_retry.max(1e-6)) as i64;
        Self {
            buckets: vec![0; ttl as usize],
            current: 0,
            sum: 0,
            reserve: (min_retries_per_sec * f64::from(ttl)) as i64 * withdrawal,
            deposit: SCALE,
            withdrawal,
        }
    }

    fn advance(&mut self, now: Nanos) {
        let second = second_of(now);
        let len = self.buckets.len() as u64;
        if second.saturating_sub(self.current) >= len {
            self.buckets.fill(0);
            self.sum = 0;
            self.current = second;
            return;
        }
        while self.current < second {
            self.current += 1;
            let slot = &mut self.buckets[(self.current % len) as usize];
            self.sum -= *slot;
            *slot = 0;
        }
    }

    fn add(&mut self, amount: i64) {
        let len = self.buckets.len() as u64;
        self.buckets[(self.current % len) as usize] += amount;
        self.sum += amount;
    }
}

impl Budget for FinagleBudget {
    fn on_request(&mut self, now: Nanos) {
        self.advance(now);
        self.add(self.deposit);
    }

    fn allow_retry(&mut self, now: Nanos) -> bool {
        self.advance(now);
        if self.reserve + self.sum >= self.withdrawal {
            self.add(-self.withdrawal);
            true
        } else {
            false
        }
    }
}
