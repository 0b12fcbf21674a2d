//! A retry quota sized by the scope's traffic: a retry may find at most one token per call the
//! scope made in the last `quota_window`, and never less than one whole call's retries.
//!
//! With a fixed quota per client (the AWS SDKs' 500 tokens), a fleet's retry budget grows with
//! the number of clients that carry its load: the same traffic split over ten times more
//! clients gets ten times the retries in an outage. Sized by each client's own calls, the
//! fleet's budget is about `load × window` whatever the number of clients (`docs/sim`, S4).
//! The floor keeps a client that calls rarely (a script, a test, a cold start) able to retry a
//! call as often as its `max_attempts` allows.

use std::time::Duration;

use crate::RetryConfig;
use crate::request_rate::RequestRate;

/// The cap a traffic-sized scope puts on its quota when a retry is paid for.
#[derive(Debug)]
pub(crate) struct TrafficQuota {
    window: Duration,
    floor: u32,
    most: u32,
    rate: RequestRate,
}

impl TrafficQuota {
    /// The traffic sizing `config` asks for (`quota_window`), measuring from `now`; `None`
    /// for a fixed quota.
    pub(crate) fn new(config: &RetryConfig, now: Duration) -> Option<Self> {
        let window = config.quota_window()?;
        Some(Self {
            window,
            floor: floor(config),
            most: config.quota_capacity(),
            rate: RequestRate::new(now, window),
        })
    }

    /// The tokens a new scope starts with: one whole call's retries.
    pub(crate) fn floor(&self) -> u32 {
        self.floor
    }

    /// The most tokens a retry may find in the quota now (`now()` reads the clock), `calls()`
    /// having ended so far (asked for only when a new sample of the traffic is taken, at most
    /// once a second):
    /// one per call of the last window (the scope's average call rate times the window), at
    /// least the floor and at most `quota_capacity`. Before a rate is measured (a scope younger
    /// than [`SAMPLE_PERIOD`](crate::request_rate::SAMPLE_PERIOD)), `quota_capacity`: the level
    /// itself (the floor plus a token per success since) then bounds the retries.
    pub(crate) fn limit(&self, now: impl Fn() -> Duration, calls: impl FnOnce() -> u64) -> u32 {
        match self.rate.measure(now, calls) {
            None => self.most,
            Some(rate) => {
                let tokens = (rate * self.window.as_secs_f64()).min(f64::from(u32::MAX)) as u32;
                tokens.clamp(self.floor, self.most)
            }
        }
    }
}

/// One whole call's retries at the dearest retry cost, `(max_attempts - 1) × cost`, at most the
/// quota's capacity: what a lone call needs to make every attempt it is allowed.
fn floor(config: &RetryConfig) -> u32 {
    let dearest = config
        .retry_cost()
        .max(config.timeout_retry_cost())
        .max(config.throttling_retry_cost());
    config
        .max_attempts()
        .saturating_sub(1)
        .saturating_mul(dearest)
        .min(config.quota_capacity())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    fn sized(builder: crate::RetryConfigBuilder) -> TrafficQuota {
        let config = builder
            .quota_window(secs(60))
            .quota_capacity(5_000)
            .build()
            .expect("valid");
        TrafficQuota::new(&config, Duration::ZERO).expect("a window")
    }

    #[test]
    fn the_floor_is_one_whole_call_at_the_dearest_cost() {
        // Costs 14 / 14 / 5: 9 retries of a 10-attempt call cost at most 9 x 14 = 126.
        let ten = sized(RetryConfig::aws_2026().max_attempts(10));
        assert_eq!(ten.floor(), 126);
        // Classic costs 5 / 10 (timeout) / 5: 2 x 10 = 20.
        let classic = sized(RetryConfig::aws_classic());
        assert_eq!(classic.floor(), 20);
        // Never above the capacity: 999 x 14 = 13,986 > 5000.
        let many = sized(RetryConfig::aws_2026().max_attempts(1_000));
        assert_eq!(many.floor(), 5_000);
        // One attempt: no retry to pay for.
        assert_eq!(sized(RetryConfig::aws_2026().max_attempts(1)).floor(), 0);
    }

    #[test]
    fn the_limit_is_a_token_per_call_of_the_window_within_floor_and_capacity() {
        let quota = sized(RetryConfig::aws_2026());
        // Before a rate is measured: the capacity.
        assert_eq!(quota.limit(|| Duration::from_millis(500), || 10), 5_000);
        // 7 calls/s over the first 120 s: 7 x 60 = 420 tokens.
        assert_eq!(quota.limit(|| secs(120), || 840), 420);
        let busy = sized(RetryConfig::aws_2026());
        // 100 calls/s: 6000, capped at 5000.
        assert_eq!(busy.limit(|| secs(10), || 1_000), 5_000);
        let quiet = sized(RetryConfig::aws_2026());
        // One call in 100 s: 0.6 tokens, raised to the floor of 2 x 14 = 28.
        assert_eq!(quiet.limit(|| secs(100), || 1), 28);
    }
}
