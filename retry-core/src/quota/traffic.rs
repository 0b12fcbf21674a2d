//! A retry quota sized by the scope's traffic: a retry may find at most one token per call the
//! scope made in the last `quota_window`, and never less than one whole call's retries.
//!
//! With a fixed quota per client (the AWS SDKs' 500 tokens), a fleet's retry budget grows with
//! the number of clients that carry its load: the same traffic split over ten times more
//! clients gets ten times the retries in an outage. Sized by each client's own calls, the
//! fleet's budget is about `load × window` whatever the number of clients (`docs/sim`, S4).
//!
//! A process cannot tell a lone script from one of 10,000 small clients, so where it cannot
//! know better it is generous:
//! * a scope younger than its window has not seen a window of traffic yet: it starts with the
//!   AWS SDKs' 500 tokens and its cap is at least that ([`YOUNG_SCOPE_QUOTA`]), so it never
//!   grants fewer retries than `aws-2026` would;
//! * the first retry of a call, asked for after a whole window in which no call of the scope
//!   started retrying (granted or refused), finds at least the floor, one whole call's
//!   retries: a call an hour after the last failure is not refused for it. A client in an
//!   outage asks at every call, so it gets no such refill while the outage lasts;
//! * a call refused a retry gets back what its earlier retries paid, unless a refused call was
//!   already refunded since the scope's last success. While the scope's calls keep
//!   succeeding, a refusal comes from the scope's own concurrency (calls holding their retries
//!   at once), not from a failing service; kept, its cost would lower the level for good, and
//!   the next call, finding less than one retry, would be refused at once, and the next (in
//!   a program whose attempts take no time, every remaining call in the same instant). In an
//!   outage no call succeeds, so at most one refused call is refunded, and the quota drains
//!   through failing calls as before.
//!
//! * a retry may borrow what the scope's calls in flight hold (their retries' costs, which come
//!   back when they succeed) while its retried calls come back, or, before any has ended, while
//!   the scope is young ([`Lending`]): the quota drains through calls that fail, not through
//!   calls that are still running.
//!
//! A call reads the clock once, at its first retry: its later retries are sized from that
//! reading and the traffic's last sample.

use std::time::Duration;

use super::bucket::RetryBounds;
use super::lending::{Lending, RetriedCall};
use super::request_rate::RequestRate;
use crate::clock::duration_to_nanos;
use crate::config::RetryConfig;
use crate::config::defaults::YOUNG_SCOPE_QUOTA;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// The bounds a traffic-sized scope puts on what a retry finds in its quota.
#[derive(Debug)]
pub(crate) struct TrafficQuota {
    /// `quota_window`, in nanoseconds.
    window: u64,
    /// `quota_window`, in seconds.
    window_secs: f64,
    floor: u32,
    /// What a young scope starts with and the least its cap is: [`YOUNG_SCOPE_QUOTA`], or the
    /// floor if that is more, at most `quota_capacity`.
    young: u32,
    most: u32,
    /// When the scope was made (clock reading, nanoseconds).
    born: u64,
    /// When the first retry of a call was last asked for (clock reading, nanoseconds); `born`
    /// before any. The retry that finds a quiet window claims it by compare-and-swap, so that
    /// one floor is granted per quiet window however many retries race for it; other retries
    /// store their reading plainly (two racing may leave either's, which differ by far less
    /// than a window).
    last_first_retry: AtomicU64,
    /// The cap the last first retry of a call met, for the later retries of calls (a plain
    /// store and load: racing first retries leave either's cap, sized a moment apart).
    later_limit: AtomicU32,
    /// One more than the scope's success count when a refused call was last refunded; 0
    /// before any refund.
    refunded_at: AtomicU64,
    /// Whether the scope was younger than its window at the last first retry of a call (1) or
    /// not (0), for the later retries of calls (a plain store and load, as `later_limit`).
    later_young: AtomicU32,
    /// What the calls in flight hold, and whether it is lent.
    lending: Lending,
    rate: RequestRate,
}

impl TrafficQuota {
    /// The traffic sizing `config` asks for (`quota_window`), for a scope made at `now`; `None`
    /// for a fixed quota.
    pub(crate) fn new(config: &RetryConfig, now: Duration) -> Option<Self> {
        let window = config.quota_window()?;
        let floor = floor(config);
        let most = config.quota_capacity();
        let young = young_quota(config);
        let born = duration_to_nanos(now);
        Some(Self {
            window: duration_to_nanos(window),
            window_secs: window.as_secs_f64(),
            floor,
            young,
            most,
            born,
            last_first_retry: AtomicU64::new(born),
            later_limit: AtomicU32::new(young),
            refunded_at: AtomicU64::new(0),
            later_young: AtomicU32::new(1),
            lending: Lending::new(),
            rate: RequestRate::new(now, window),
        })
    }

    /// The tokens a new scope starts with: the young scope's.
    pub(crate) fn initial_level(&self) -> u32 {
        self.young
    }

    /// The young scope's tokens while the scope is younger than its window at `now`, 0 after.
    pub(crate) fn young_at(&self, now: Duration) -> u32 {
        let young = duration_to_nanos(now).saturating_sub(self.born) < self.window;
        if young { self.young } else { 0 }
    }

    /// The young scope's tokens at `now` ([`young_at`](Self::young_at)), or without a clock
    /// read (`None`, a later retry of a call) as the last first retry of a call found the
    /// scope.
    #[cfg(feature = "fleet")]
    pub(crate) fn young_when(&self, now: Option<Duration>) -> u32 {
        match now {
            Some(now) => self.young_at(now),
            None if self.later_young.load(Ordering::Relaxed) == 1 => self.young,
            None => 0,
        }
    }

    /// The bounds the first retry of a call meets, `now()` reading the clock (once, within a
    /// sample period) and `calls()` the calls ended so far (asked for only when a new sample of
    /// the traffic is taken, at most once a second). Counts as a retry asked for.
    pub(crate) fn first_retry_bounds(
        &self,
        now: impl Fn() -> Duration,
        calls: impl FnOnce() -> u64,
    ) -> RetryBounds {
        let (rate, now) = self.rate.measure(now, calls);
        let limit = self.limit_at(now, rate);
        if self.later_limit.load(Ordering::Relaxed) != limit {
            self.later_limit.store(limit, Ordering::Relaxed);
        }
        let young = u32::from(self.is_young(now));
        if self.later_young.load(Ordering::Relaxed) != young {
            self.later_young.store(young, Ordering::Relaxed);
        }
        RetryBounds {
            limit,
            at_least: if self.claim_quiet_window(now) {
                self.floor
            } else {
                0
            },
        }
    }

    /// The bounds a later retry of a call meets: the cap the last first retry met, without a
    /// clock read (a clock read costs more than the rest of a retry's bookkeeping; the window
    /// is a minute, a sample a second). It is no first retry after a quiet window: its call's
    /// first retry was that.
    pub(crate) fn later_retry_bounds(&self) -> RetryBounds {
        RetryBounds {
            limit: self.later_limit.load(Ordering::Relaxed),
            at_least: 0,
        }
    }

    /// Records the first retry of a call asked for at `now`; whether it is the first after a
    /// quiet window (no call's first retry asked for in the whole window before `now`), claimed
    /// for this retry alone. A reading earlier than the last one (a clock that stepped back) is
    /// not quiet.
    fn claim_quiet_window(&self, now: u64) -> bool {
        let last = self.last_first_retry.load(Ordering::Relaxed);
        if !Self::is_quiet(last, now, self.window) {
            if last != now {
                self.last_first_retry.store(now, Ordering::Relaxed);
            }
            return false;
        }
        self.last_first_retry
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    /// Whether a call refused now, the scope's calls having succeeded `successes` times so far,
    /// gets back what its retries paid: unless a refused call was already refunded at this
    /// success count. Claimed for this call alone: of refusals racing at one count, one is
    /// refunded, and one that read an older count than the last refund's is not.
    pub(crate) fn claim_refusal_refund(&self, successes: u64) -> bool {
        let mark = successes.saturating_add(1);
        self.refunded_at.fetch_max(mark, Ordering::Relaxed) < mark
    }

    /// What a retry may borrow beyond an empty quota ([`Lending::credit`]): at most
    /// `quota_capacity`, young as the last first retry of a call found the scope (no clock
    /// read).
    pub(crate) fn credit(&self) -> u32 {
        let young = self.later_young.load(Ordering::Relaxed) == 1;
        self.lending.credit(young, self.most)
    }

    /// A retry of a call was paid `cost`: the call holds it until it ends.
    pub(crate) fn hold(&self, cost: u32) {
        self.lending.hold(cost);
    }

    /// A call that paid `paid` for retries ended as `call`.
    pub(crate) fn end_retried_call(&self, paid: u32, call: RetriedCall) {
        self.lending.end(paid, call);
    }

    /// What the scope's calls in flight hold.
    #[cfg(test)]
    pub(crate) fn held(&self) -> u64 {
        self.lending.held()
    }

    /// The bounds a retry would meet now, without counting one as asked for (for statistics).
    pub(crate) fn peek_bounds(
        &self,
        now: impl Fn() -> Duration,
        calls: impl FnOnce() -> u64,
    ) -> RetryBounds {
        let (rate, now) = self.rate.measure(now, calls);
        let quiet = Self::is_quiet(
            self.last_first_retry.load(Ordering::Relaxed),
            now,
            self.window,
        );
        RetryBounds {
            limit: self.limit_at(now, rate),
            at_least: if quiet { self.floor } else { 0 },
        }
    }

    /// The cap at clock reading `now`, the traffic's average being `rate` calls per second: one
    /// token per call of the last window (the rate times the window), at least the floor and at
    /// most `quota_capacity`, and at least the young scope's tokens while the scope is younger
    /// than its window (before any rate is measured, a scope younger than
    /// [`SAMPLE_PERIOD`](crate::request_rate::SAMPLE_PERIOD), that is the cap).
    fn limit_at(&self, now: u64, rate: Option<f64>) -> u32 {
        let sized = rate.map_or(self.floor, |rate| {
            let tokens = rate * self.window_secs;
            (tokens.min(f64::from(self.most)) as u32).max(self.floor)
        });
        if self.is_young(now) {
            sized.max(self.young)
        } else {
            sized
        }
    }

    /// Whether the scope is younger than its window at clock reading `now`.
    fn is_young(&self, now: u64) -> bool {
        now.saturating_sub(self.born) < self.window
    }

    /// Whether no retry was asked for in the whole `window` before `now`, the last at `last`
    /// (a reading earlier than that, a clock that stepped back, is not quiet).
    fn is_quiet(last: u64, now: u64, window: u64) -> bool {
        now.checked_sub(last).is_some_and(|since| since >= window)
    }
}

/// What a young scope starts with and the least its cap is: [`YOUNG_SCOPE_QUOTA`], or one
/// whole call's retries if that is more, at most `quota_capacity` (a young fleet's too).
pub(crate) fn young_quota(config: &RetryConfig) -> u32 {
    YOUNG_SCOPE_QUOTA
        .max(floor(config))
        .min(config.quota_capacity())
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

    fn sized(builder: crate::config::RetryConfigBuilder) -> TrafficQuota {
        let config = builder
            .quota_window(secs(60))
            .quota_capacity(5_000)
            .build()
            .expect("valid");
        TrafficQuota::new(&config, Duration::ZERO).expect("a window")
    }

    /// The limit a retry meets at `at`, `calls` having ended (a retry is asked for).
    fn limit(quota: &TrafficQuota, at: Duration, calls: u64) -> u32 {
        quota.first_retry_bounds(|| at, || calls).limit
    }

    #[test]
    fn the_floor_is_one_whole_call_at_the_dearest_cost() {
        // Costs 14 / 14 / 5: 9 retries of a 10-attempt call cost at most 9 x 14 = 126.
        let ten = sized(RetryConfig::aws_2026().max_attempts(10));
        assert_eq!(ten.floor, 126);
        // Classic costs 5 / 10 (timeout) / 5: 2 x 10 = 20.
        let classic = sized(RetryConfig::aws_classic());
        assert_eq!(classic.floor, 20);
        // Never above the capacity: 999 x 14 = 13,986 > 5000.
        let many = sized(RetryConfig::aws_2026().max_attempts(1_000));
        assert_eq!(many.floor, 5_000);
        // One attempt: no retry to pay for.
        assert_eq!(sized(RetryConfig::aws_2026().max_attempts(1)).floor, 0);
    }

    #[test]
    fn a_young_scope_starts_with_500_or_one_whole_call_if_that_is_more() {
        assert_eq!(sized(RetryConfig::aws_2026()).initial_level(), 500);
        // 49 retries x 14 = 686.
        let fifty = sized(RetryConfig::aws_2026().max_attempts(50));
        assert_eq!(fifty.initial_level(), 686);
        // Never above the capacity.
        let small = RetryConfig::builder()
            .quota_capacity(100)
            .build()
            .expect("valid");
        let small = TrafficQuota::new(&small, Duration::ZERO).expect("a window");
        assert_eq!(small.initial_level(), 100);
    }

    #[test]
    fn the_limit_is_a_token_per_call_of_the_window_within_floor_and_capacity() {
        let quota = sized(RetryConfig::aws_2026());
        // Before a rate is measured: the young scope's 500.
        assert_eq!(limit(&quota, Duration::from_millis(500), 10), 500);
        // 7 calls/s over the first 120 s: 7 x 60 = 420 tokens.
        assert_eq!(limit(&quota, secs(120), 840), 420);
        let busy = sized(RetryConfig::aws_2026());
        // 100 calls/s: 6000, capped at 5000 (young or not).
        assert_eq!(limit(&busy, secs(10), 1_000), 5_000);
        let quiet = sized(RetryConfig::aws_2026());
        // One call in 100 s: 0.6 tokens, raised to the floor of 2 x 14 = 28.
        assert_eq!(limit(&quiet, secs(100), 1), 28);
    }

    #[test]
    fn a_young_scope_is_capped_at_no_less_than_500_until_it_is_a_window_old() {
        let quota = sized(RetryConfig::aws_2026());
        // 1 call/s for 30 s: 60 tokens, but the scope is young.
        assert_eq!(limit(&quota, secs(30), 30), 500);
        // 59.9 s old: still young.
        assert_eq!(limit(&quota, Duration::from_millis(59_900), 60), 500);
        // A window old: the traffic's cap, 1/s x 60 s.
        assert_eq!(limit(&quota, secs(60), 60), 60);
    }

    #[test]
    fn a_later_retry_meets_the_cap_of_the_last_first_retry_and_no_floor() {
        let quota = sized(RetryConfig::aws_2026());
        // Before any first retry: the young scope's cap.
        assert_eq!(quota.later_retry_bounds().limit, 500);
        // A first retry after 120 s at 7 calls/s, a quiet window (no retry since the start):
        // 420 tokens at most, the floor at least.
        let first = quota.first_retry_bounds(|| secs(120), || 840);
        assert_eq!(
            first,
            RetryBounds {
                limit: 420,
                at_least: 28
            }
        );
        // The call's later retries: the same cap, and the quiet window was the first retry's.
        let later = RetryBounds {
            limit: 420,
            at_least: 0,
        };
        assert_eq!(quota.later_retry_bounds(), later);
    }

    #[cfg(feature = "fleet")]
    #[test]
    fn a_later_retry_finds_the_scope_as_young_as_its_calls_first_retry_did() {
        let quota = sized(RetryConfig::aws_2026());
        assert_eq!(quota.young_when(Some(secs(59))), 500);
        assert_eq!(quota.young_when(Some(secs(60))), 0);
        // No first retry yet: a new scope is young.
        assert_eq!(quota.young_when(None), 500);
        quota.first_retry_bounds(|| secs(30), || 30);
        assert_eq!(quota.young_when(None), 500);
        quota.first_retry_bounds(|| secs(61), || 61);
        assert_eq!(quota.young_when(None), 0);
    }

    #[test]
    fn a_retry_after_a_quiet_window_finds_at_least_the_floor() {
        let quota = sized(RetryConfig::aws_2026());
        let at_least = |at: u64| quota.first_retry_bounds(|| secs(at), || 0).at_least;
        // The scope was made at 0 and asked for no retry until 59 s: not a whole window.
        assert_eq!(at_least(59), 0);
        // Asked at 59 s, then 30 s later: not quiet; then a whole window later: quiet.
        assert_eq!(at_least(89), 0);
        assert_eq!(at_least(149), 28);
        // Just asked: not quiet again.
        assert_eq!(at_least(150), 0);
        // Peeking (statistics) tells the bounds without counting as a retry asked for.
        assert_eq!(quota.peek_bounds(|| secs(210), || 0).at_least, 28);
        assert_eq!(at_least(210), 28);
    }

    #[test]
    fn a_refused_call_is_refunded_once_per_success_count() {
        let quota = sized(RetryConfig::aws_2026());
        // The first refusal of a scope is refunded, even before any success (a cold start's
        // calls all hold their retries before any of them can succeed); a second at the same
        // count is not.
        assert!(quota.claim_refusal_refund(0));
        assert!(!quota.claim_refusal_refund(0));
        // A call succeeded since: one more refusal is refunded.
        assert!(quota.claim_refusal_refund(1));
        assert!(!quota.claim_refusal_refund(1));
        // A refusal that read the count before the last refund's is not.
        assert!(!quota.claim_refusal_refund(0));
        // Many successes since buy one refund, not many (an outage after a busy hour).
        assert!(quota.claim_refusal_refund(1_000));
        assert!(!quota.claim_refusal_refund(1_000));
    }

    #[test]
    fn a_clock_that_steps_back_is_not_a_quiet_window() {
        let quota = sized(RetryConfig::aws_2026());
        let at_least = |at: u64| quota.first_retry_bounds(|| secs(at), || 0).at_least;
        assert_eq!(at_least(100), 28);
        // The clock steps back 90 s (a later tokio runtime): no time passed; the window
        // starts over from the new reading.
        assert_eq!(at_least(10), 0);
        assert_eq!(at_least(69), 0);
        assert_eq!(at_least(130), 28);
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use loom::sync::Arc;

    /// Two refusals at once after a success (one read the count before it, one after): only
    /// the one that read the new count is refunded, whichever runs first; two at one count:
    /// one of them is.
    #[test]
    fn loom_racing_refusals_are_refunded_once_per_success_count() {
        for (counts, refunds) in [([3, 3], 1), ([2, 3], 1)] {
            loom::model(move || {
                let config = RetryConfig::default();
                let quota = Arc::new(TrafficQuota::new(&config, Duration::ZERO).expect("a window"));
                // A refusal was refunded at 2 successes.
                assert!(quota.claim_refusal_refund(2));
                let refusals: Vec<_> = counts
                    .into_iter()
                    .map(|successes| {
                        let quota = Arc::clone(&quota);
                        loom::thread::spawn(move || quota.claim_refusal_refund(successes))
                    })
                    .collect();
                let refunded: Vec<bool> = refusals
                    .into_iter()
                    .map(|refusal| refusal.join().expect("no panic"))
                    .collect();
                assert_eq!(refunded.iter().filter(|&&r| r).count(), refunds);
                if counts[0] != counts[1] {
                    assert_eq!(refunded, [false, true]);
                }
            });
        }
    }

    /// Two retries asked for at once after a quiet window: exactly one claims it and finds the
    /// floor (the other finds the level that one leaves), and the ask recorded is theirs.
    #[test]
    fn loom_racing_retries_after_a_quiet_window_claim_it_once() {
        loom::model(|| {
            let config = RetryConfig::aws_2026()
                .quota_window(Duration::from_secs(60))
                .build()
                .expect("valid");
            let quota = Arc::new(TrafficQuota::new(&config, Duration::ZERO).expect("a window"));
            let retries: Vec<_> = (0..2)
                .map(|_| {
                    let quota = Arc::clone(&quota);
                    loom::thread::spawn(move || {
                        quota.first_retry_bounds(|| Duration::from_secs(100), || 0)
                    })
                })
                .collect();
            let bounds: Vec<RetryBounds> = retries
                .into_iter()
                .map(|retry| retry.join().expect("no panic"))
                .collect();
            let floors: Vec<u32> = bounds.iter().map(|b| b.at_least).collect();
            assert!(floors == [28, 0] || floors == [0, 28], "{bounds:?}");
            assert_eq!(
                quota.last_first_retry.load(Ordering::Relaxed),
                duration_to_nanos(Duration::from_secs(100))
            );
        });
    }
}
