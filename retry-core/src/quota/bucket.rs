//! The bucket of retry tokens a scope's calls share: [`RetryQuota`], and the bounds a
//! traffic-sized scope puts on what a retry finds in it.

use crate::clock::{SharedClock, duration_to_nanos};
use crate::config::{ConfigError, is_valid_refill};
use crate::sync::{AtomicI64, AtomicU64, Ordering};
use std::fmt;

/// The quota is kept in thousandths of a token so that a slow refill accumulates exactly.
const MILLI: u64 = 1_000;
/// [`MILLI`], for the signed level.
const MILLI_I: i64 = MILLI as i64;
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// The refill rate is kept in thousandths of a token per second as a fixed-point number with
/// this many fractional bits, so that a rate between two thousandths, or far below one, is kept
/// (to within 2^-32 thousandths of a token per second) rather than rounded down to nothing.
const RATE_FRACTION_BITS: u32 = 32;

/// `rate` tokens per second in the fixed-point unit of [`RATE_FRACTION_BITS`], rounded to the
/// nearest unit (saturating: a rate past `u128::MAX` of that unit fills any bucket within a
/// nanosecond anyway). Rounded, not truncated: a decimal rate such as 0.0001 tokens/s is not a
/// whole number of units, and truncated it would credit 999.99 thousandths of a token in
/// 10,000 s instead of one token (smithy-rs' refill vectors, tested below). Rounding errs by
/// at most half a unit, 2^-33 thousandths of a token per second.
fn fixed_point_rate(rate: f64) -> u128 {
    (rate * MILLI as f64 * (1u64 << RATE_FRACTION_BITS) as f64).round() as u128
}

/// What a retry may find in the quota: a traffic-sized scope's bounds
/// ([`TrafficQuota`](super::TrafficQuota)), or none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RetryBounds {
    /// The most: the tokens above it are dropped when a retry is paid.
    pub(crate) limit: u32,
    /// The least: the level is raised to it when a retry is paid.
    pub(crate) at_least: u32,
}

impl RetryBounds {
    /// No bounds: the level as it is.
    pub(crate) const NONE: RetryBounds = RetryBounds {
        limit: u32::MAX,
        at_least: 0,
    };

    /// The whole tokens a retry finds in a quota holding `level`.
    pub(crate) fn found(self, level: u32) -> u32 {
        level.max(self.at_least).min(self.limit)
    }
}

/// A shared, lock-free bucket of retry tokens.
///
/// ```
/// use retry_core::quota::RetryQuota;
/// use retry_core::clock::TokioClock;
/// use std::sync::Arc;
///
/// let quota = RetryQuota::new(500, None, Arc::new(TokioClock::new()))?;
/// assert!(quota.try_acquire(5));
/// assert_eq!(quota.level(), 495);
/// quota.release(5);
/// quota.release(1); // never above capacity
/// assert_eq!(quota.level(), 500);
/// # Ok::<(), retry_core::ConfigError>(())
/// ```
pub struct RetryQuota {
    /// Current level, in thousandths of a token; below zero only when a traffic-sized scope's
    /// retry borrowed against what its calls in flight hold (see
    /// [`try_acquire_within`](Self::try_acquire_within)): a debt that what comes back repays
    /// first.
    level: AtomicI64,
    /// Capacity, in thousandths of a token.
    capacity: i64,
    /// Refill rate in thousandths of a token per second, fixed point with
    /// [`RATE_FRACTION_BITS`] fractional bits; 0 when refill is off.
    refill_rate: u128,
    /// Clock reading (nanoseconds) up to which refill has been credited.
    refilled_until: AtomicU64,
    clock: SharedClock,
}

impl RetryQuota {
    /// A full bucket of `capacity` tokens, refilled by `refill_per_second` tokens each second
    /// when given (smithy-kotlin's retry design lets the bucket refill over time; off in every
    /// preset). A refill rate that is not a finite number of at least about 2.3e-13 tokens per
    /// second (a thousandth of a token in 136 years; anything slower would never refill) is an
    /// error, as it is in [`RetryConfig`](crate::RetryConfig).
    ///
    /// ```
    /// use retry_core::ConfigError;
    /// use retry_core::clock::ManualClock;
    /// use retry_core::quota::RetryQuota;
    /// use std::{sync::Arc, time::Duration};
    ///
    /// let clock = Arc::new(ManualClock::new());
    /// let quota = RetryQuota::new(10, Some(2.0), clock.clone())?;
    /// assert!(quota.try_acquire(10));
    /// clock.advance(Duration::from_millis(1500));
    /// assert_eq!(quota.level(), 3);
    /// assert!(matches!(
    ///     RetryQuota::new(10, Some(f64::NAN), clock),
    ///     Err(ConfigError::InvalidRate { setting: "refill_per_second", .. })
    /// ));
    /// # Ok::<(), ConfigError>(())
    /// ```
    pub fn new(
        capacity: u32,
        refill_per_second: Option<f64>,
        clock: SharedClock,
    ) -> Result<Self, ConfigError> {
        match refill_per_second {
            Some(rate) if !is_valid_refill(rate) => Err(ConfigError::InvalidRate {
                setting: "refill_per_second",
                value: rate,
            }),
            _ => Ok(Self::starting_at(
                capacity,
                capacity,
                refill_per_second,
                clock,
            )),
        }
    }

    /// A bucket of `capacity` tokens holding `level` of them (at most `capacity`), for a
    /// refill rate already validated (a [`RetryConfig`]'s).
    ///
    /// [`RetryConfig`]: crate::RetryConfig
    pub(crate) fn starting_at(
        capacity: u32,
        level: u32,
        refill_per_second: Option<f64>,
        clock: SharedClock,
    ) -> Self {
        let capacity = i64::from(capacity) * MILLI_I;
        let now = duration_to_nanos(clock.now());
        Self {
            level: AtomicI64::new((i64::from(level) * MILLI_I).min(capacity)),
            capacity,
            refill_rate: refill_per_second.map_or(0, fixed_point_rate),
            refilled_until: AtomicU64::new(now),
            clock,
        }
    }

    /// Takes `cost` tokens if the bucket holds them; otherwise takes nothing and returns
    /// `false`. A cost of 0 is always granted: a retry that costs nothing is not limited by
    /// the quota.
    ///
    /// ```
    /// # use retry_core::quota::RetryQuota;
    /// # use retry_core::clock::TokioClock;
    /// # use std::sync::Arc;
    /// let quota = RetryQuota::new(12, None, Arc::new(TokioClock::new()))?;
    /// assert!(quota.try_acquire(10));
    /// assert!(!quota.try_acquire(10));
    /// assert_eq!(quota.level(), 2);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn try_acquire(&self, cost: u32) -> bool {
        self.try_acquire_within(cost, RetryBounds::NONE, 0).is_ok()
    }

    /// [`try_acquire`](Self::try_acquire) from what `bounds` let a retry find: the level raised
    /// to `at_least` and lowered to `limit` (a traffic-sized scope's bounds: one token per call
    /// of its last window; one whole call's retries after a quiet window), and `credit` tokens
    /// more that the level may go below zero by (a traffic-sized scope's lending against what
    /// its calls in flight hold, [`Lending`](super::lending::Lending)). The level moves only
    /// when the retry is paid; when it is not, the whole tokens the retry found (0 when the
    /// level is below zero).
    pub(crate) fn try_acquire_within(
        &self,
        cost: u32,
        bounds: RetryBounds,
        credit: u32,
    ) -> Result<(), u32> {
        self.take_within(cost, bounds, -i64::from(credit))
    }

    /// Takes `cost` for a hedge from what `bounds` let it find, only if `keep` tokens are left
    /// after paying: a hedge pays from what the quota holds, never from a credit, and leaves
    /// half the cap to the retries (gRFC A6). Checked and paid in one step, so that hedges
    /// racing on many threads never take the level below `keep` together. When it is not paid,
    /// the whole tokens the hedge found.
    pub(crate) fn try_acquire_keeping(
        &self,
        cost: u32,
        bounds: RetryBounds,
        keep: u32,
    ) -> Result<(), u32> {
        self.take_within(cost, bounds, i64::from(keep))
    }

    /// Takes `cost` from the level `bounds` let a draw find if at least `least_after` tokens
    /// (below zero: a debt that much deep) are left after paying.
    fn take_within(&self, cost: u32, bounds: RetryBounds, least_after: i64) -> Result<(), u32> {
        self.refill();
        let milli = |tokens: u32| i64::from(tokens) * MILLI_I;
        let (cost, least_after) = (milli(cost), least_after * MILLI_I);
        let (limit, at_least) = (milli(bounds.limit), milli(bounds.at_least));
        // A floor of 0 is none: it must not wipe out a debt.
        let found = |level: i64| {
            let raised = if at_least > 0 {
                level.max(at_least)
            } else {
                level
            };
            raised.min(limit)
        };
        self.level
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |level| {
                let found = found(level);
                (found - cost >= least_after).then_some(found - cost)
            })
            .map(drop)
            .map_err(|level| whole_tokens(found(level)))
    }

    /// Puts `amount` tokens back, never above capacity.
    ///
    /// ```
    /// # use retry_core::quota::RetryQuota;
    /// # use retry_core::clock::TokioClock;
    /// # use std::sync::Arc;
    /// let quota = RetryQuota::new(10, None, Arc::new(TokioClock::new()))?;
    /// quota.release(100);
    /// assert_eq!(quota.level(), 10);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    #[inline]
    pub fn release(&self, amount: u32) {
        self.refill();
        self.add(i64::from(amount) * MILLI_I);
    }

    /// Takes up to `amount` whole tokens, as many as the bucket holds; returns how many it took
    /// (a fleet's lease asking for tokens back).
    #[cfg(feature = "fleet")]
    pub(crate) fn take_up_to(&self, amount: u32) -> u32 {
        self.refill();
        let wanted = i64::from(amount) * MILLI_I;
        // Whole tokens, of a level above zero only: a debt lends nothing.
        let takable = |level: i64| (level.max(0) / MILLI_I * MILLI_I).min(wanted);
        let before = self
            .level
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |level| {
                Some(level - takable(level))
            })
            .unwrap_or_else(|level| level);
        whole_tokens(takable(before))
    }

    /// The whole tokens in the bucket now (0 while a traffic-sized scope's retries have
    /// borrowed beyond it).
    pub fn level(&self) -> u32 {
        self.refill();
        whole_tokens(self.level.load(Ordering::Acquire))
    }

    /// The bucket's capacity in tokens.
    pub fn capacity(&self) -> u32 {
        whole_tokens(self.capacity)
    }

    #[inline]
    fn add(&self, amount: i64) {
        // A full bucket (the steady state of a healthy scope) is only read, never written, so
        // successes on many threads do not contend for its cache line.
        if self.level.load(Ordering::Acquire) >= self.capacity {
            return;
        }
        // fetch_update never fails with a closure that always returns Some.
        let _ = self
            .level
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |level| {
                Some(level.saturating_add(amount).min(self.capacity))
            });
    }

    /// Credits the refill, if the quota refills (a check cheap enough to inline).
    #[inline]
    fn refill(&self) {
        if self.refill_rate != 0 {
            self.credit_refill();
        }
    }

    /// Credits the refill for the time elapsed since the last credit. The caller that wins the
    /// compare-and-swap on `refilled_until` credits that interval; the others see it credited.
    /// A clock reading earlier than the last credit (a clock that stepped back, as tokio's does
    /// in the next runtime) counts as no time passing: the refill carries on from it.
    fn credit_refill(&self) {
        // `since` first: the clock read after it is then at least as late as the one that
        // wrote it, so an earlier reading is the clock stepping back, not a stale read (which
        // would restart the refill behind a credit already made, and credit it twice).
        let since = self.refilled_until.load(Ordering::Acquire);
        let now = duration_to_nanos(self.clock.now());
        if now <= since {
            if now < since {
                // Whoever loses this race saw the same step back; one restart is enough.
                let _ = self.refilled_until.compare_exchange(
                    since,
                    now,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
            }
            return;
        }
        let elapsed = now - since;
        let (amount, until) = self.refill_over(since, elapsed);
        if amount == 0 {
            // Leave the interval uncredited until it is worth a thousandth of a token.
            return;
        }
        if self
            .refilled_until
            .compare_exchange(since, until.min(now), Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            // Less than the capacity, in range.
            self.add(i64::try_from(amount).unwrap_or(i64::MAX));
        }
    }

    /// The whole thousandths of a token `elapsed` nanoseconds from `since` refill, and the
    /// instant up to which they are credited: only the time the credited thousandths are worth
    /// is claimed, so the remainder carries over to the next credit and the refill does not slow
    /// down when the quota is read often.
    fn refill_over(&self, since: u64, elapsed: u64) -> (u64, u64) {
        let unit = NANOS_PER_SEC << RATE_FRACTION_BITS;
        let full = self.capacity.unsigned_abs();
        let amount = u128::from(elapsed)
            .checked_mul(self.refill_rate)
            .map_or(u128::MAX, |product| product / unit);
        match u64::try_from(amount) {
            // A whole bucket or more: credit it all and claim the whole interval.
            Ok(amount) if amount < full => {
                // amount <= elapsed * rate / unit, so this is at most `elapsed`; and
                // amount < 2^42 (a u32 of tokens in thousandths) keeps amount * unit in range.
                let claimed = (u128::from(amount) * unit).div_ceil(self.refill_rate);
                let claimed = u64::try_from(claimed).unwrap_or(u64::MAX);
                (amount, since.saturating_add(claimed))
            }
            _ => (full, since.saturating_add(elapsed)),
        }
    }
}

/// The whole tokens in `level` thousandths (0 below zero).
fn whole_tokens(level: i64) -> u32 {
    u32::try_from(level.max(0) / MILLI_I).unwrap_or(u32::MAX)
}

impl fmt::Debug for RetryQuota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryQuota")
            .field("level", &self.level())
            .field("capacity", &self.capacity())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::config::MIN_REFILL_PER_SECOND;
    use std::sync::Arc;
    use std::time::Duration;

    /// The configuration's slowest refill is this bucket's resolution: one unit of the
    /// fixed-point rate.
    #[test]
    fn the_slowest_refill_is_one_unit_of_the_fixed_point_rate() {
        assert_eq!(
            MIN_REFILL_PER_SECOND,
            1.0 / (MILLI as f64 * (1u64 << RATE_FRACTION_BITS) as f64)
        );
        assert_eq!(fixed_point_rate(MIN_REFILL_PER_SECOND), 1);
    }

    /// A bucket of 100 tokens holding `level`, on a clock that does not move.
    fn holding(level: u32) -> RetryQuota {
        RetryQuota::starting_at(100, level, None, Arc::new(SteppingClock::default()))
    }

    #[test]
    fn a_retry_borrows_up_to_its_credit_and_what_comes_back_repays_the_debt_first() {
        let quota = holding(10);
        // 10 tokens and 20 of credit pay for two retries of 14: -18, a debt.
        assert_eq!(quota.try_acquire_within(14, RetryBounds::NONE, 20), Ok(()));
        assert_eq!(quota.try_acquire_within(14, RetryBounds::NONE, 20), Ok(()));
        assert_eq!(quota.level(), 0);
        // A third would take it to -32, past the credit: refused, having found nothing.
        assert_eq!(quota.try_acquire_within(14, RetryBounds::NONE, 20), Err(0));
        // Without credit, a debt pays for nothing.
        assert_eq!(quota.try_acquire_within(1, RetryBounds::NONE, 0), Err(0));
        assert!(!quota.try_acquire(1));
        // What comes back repays the debt before the level rises.
        quota.release(14);
        assert_eq!(quota.level(), 0);
        quota.release(14);
        assert_eq!(quota.level(), 10);
    }

    #[test]
    fn a_floor_lifts_a_debt_and_no_floor_keeps_it() {
        let quota = holding(0);
        assert_eq!(quota.try_acquire_within(14, RetryBounds::NONE, 14), Ok(()));
        // No floor (0): the debt of 14 stays; with a cap too.
        let capped = RetryBounds {
            limit: 50,
            at_least: 0,
        };
        assert_eq!(quota.try_acquire_within(14, capped, 14), Err(0));
        // A quiet window's floor of 28: the retry finds 28, whatever the debt.
        let floor = RetryBounds {
            limit: 50,
            at_least: 28,
        };
        assert_eq!(quota.try_acquire_within(14, floor, 0), Ok(()));
        assert_eq!(quota.level(), 14);
    }

    #[cfg(feature = "fleet")]
    #[test]
    fn a_fleet_takes_whole_tokens_above_zero_only() {
        let quota = holding(5);
        assert_eq!(quota.try_acquire_within(14, RetryBounds::NONE, 14), Ok(()));
        assert_eq!(quota.take_up_to(10), 0, "a debt of 9 lends nothing");
        quota.release(12);
        assert_eq!(quota.take_up_to(10), 3);
        assert_eq!(quota.level(), 0);
    }

    /// A clock set by hand that may step back, as tokio's does when a process-wide scope is
    /// first used in one runtime and then in a later one (its time starts over).
    #[derive(Debug, Default)]
    struct SteppingClock(AtomicU64);

    impl SteppingClock {
        fn set(&self, to: Duration) {
            self.0.store(duration_to_nanos(to), Ordering::SeqCst);
        }
    }

    impl Clock for SteppingClock {
        fn now(&self) -> Duration {
            Duration::from_nanos(self.0.load(Ordering::SeqCst))
        }
    }

    #[test]
    fn a_clock_that_steps_back_does_not_freeze_the_refill() {
        let clock = Arc::new(SteppingClock::default());
        clock.set(Duration::from_secs(100));
        let quota = RetryQuota::new(10, Some(1.0), clock.clone()).expect("valid refill");
        assert!(quota.try_acquire(10));
        // The clock steps back 90 s: that counts as no time passing, and the refill carries on
        // from the new reading.
        clock.set(Duration::from_secs(10));
        assert_eq!(quota.level(), 0);
        clock.set(Duration::from_secs(12));
        assert_eq!(quota.level(), 2, "2 s at 1 token/s after the step back");
    }

    #[test]
    fn a_refill_below_a_thousandth_of_a_token_per_second_refills() {
        let clock = Arc::new(SteppingClock::default());
        let quota = RetryQuota::new(1, Some(0.0005), clock.clone()).expect("valid refill");
        assert!(quota.try_acquire(1));
        clock.set(Duration::from_secs(1_999));
        assert_eq!(quota.level(), 0, "0.9995 tokens after 1999 s");
        clock.set(Duration::from_secs(2_000));
        assert_eq!(quota.level(), 1, "one token after 2000 s at 0.0005/s");
    }

    #[test]
    fn a_refill_rate_between_thousandths_is_not_rounded_down() {
        // 0.0015 tokens/s: 3 tokens in 2000 s (rounded down to 0.001/s it would be 2).
        let clock = Arc::new(SteppingClock::default());
        let quota = RetryQuota::new(10, Some(0.0015), clock.clone()).expect("valid refill");
        assert!(quota.try_acquire(10));
        clock.set(Duration::from_secs(2_000));
        assert_eq!(quota.level(), 3);
    }

    /// smithy-rs' published refill vectors (`aws-smithy-runtime`, `client/retries/
    /// token_bucket.rs`, test `test_refill_rates`): (tokens per second, seconds elapsed, whole
    /// tokens refilled, the fraction left over) from an empty bucket of 100. The fraction is
    /// kept here in thousandths of a token.
    #[test]
    fn the_smithy_rs_refill_vectors_hold_exactly() {
        let vectors = [
            (10.0, 2, 20, 0),
            (0.001, 1_100, 1, 100),
            (0.0001, 11_000, 1, 100),
            (0.001, 1_200, 1, 200),
            (0.0001, 10_000, 1, 0),
            (0.001, 500, 0, 500),
        ];
        for (rate, elapsed, tokens, thousandths) in vectors {
            let clock = Arc::new(SteppingClock::default());
            let quota = RetryQuota::starting_at(100, 0, Some(rate), clock.clone());
            clock.set(Duration::from_secs(elapsed));
            assert_eq!(
                (quota.level(), quota.level.load(Ordering::Acquire) % MILLI_I),
                (tokens, thousandths),
                "{rate} tokens/s for {elapsed} s"
            );
        }
    }

    #[test]
    fn a_refill_too_slow_to_ever_credit_is_rejected() {
        // 1e-20 tokens/s: a thousandth of a token every 3 billion years, far past the ~584 years
        // a clock reading in nanoseconds spans. Accepting it would be ignoring it.
        let clock: SharedClock = Arc::new(SteppingClock::default());
        assert!(matches!(
            RetryQuota::new(1, Some(1e-20), clock),
            Err(ConfigError::InvalidRate {
                setting: "refill_per_second",
                ..
            })
        ));
        assert!(
            crate::config::RetryConfig::builder()
                .quota_refill_per_second(1e-20)
                .build()
                .is_err()
        );
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::clock::ManualClock;
    use loom::sync::Arc;

    /// Two retries of a traffic-sized scope race for a quota whose level (10) is above the
    /// traffic's limit (6): each finds at most 6, so only one of two retries costing 4 is paid,
    /// and the tokens above the limit are dropped by the one that pays.
    #[test]
    fn loom_racing_retries_within_a_limit_pay_once() {
        assert_eq!(race_two_retries(10, 4, 6, [0, 0]), (1, 2));
    }

    /// Two retries race for an empty quota after a quiet window (at most 6), one of them
    /// having claimed the window's floor of 6: only one of two retries costing 4 is paid,
    /// whichever runs first.
    #[test]
    fn loom_racing_retries_after_a_quiet_window_find_the_floor_once() {
        assert_eq!(race_two_retries(0, 4, 6, [6, 0]), (1, 2));
    }

    /// Two retries race for a quota of 10 holding 10, each with a credit of 10: the first to
    /// pay leaves 2, the second borrows to -6; with a credit of 5 the second is refused.
    /// Whatever the interleaving, the level moves by what was paid.
    #[test]
    fn loom_racing_retries_borrow_within_their_credit() {
        for (credit, paid, level) in [(10, 2, -6_000), (5, 1, 2_000)] {
            loom::model(move || {
                let quota = Arc::new(RetryQuota::starting_at(
                    10,
                    10,
                    None,
                    std::sync::Arc::new(ManualClock::new()),
                ));
                let retries: Vec<_> = (0..2)
                    .map(|_| {
                        let quota = Arc::clone(&quota);
                        loom::thread::spawn(move || {
                            quota
                                .try_acquire_within(8, RetryBounds::NONE, credit)
                                .is_ok()
                        })
                    })
                    .collect();
                let granted = retries
                    .into_iter()
                    .map(|retry| retry.join().expect("no panic"))
                    .filter(|granted| *granted)
                    .count();
                assert_eq!(granted, paid);
                assert_eq!(quota.level.load(Ordering::Acquire), level);
            });
        }
    }

    /// Two retries costing `cost` race for a quota of 10 holding `level`, both capped at
    /// `limit`, each raising the level to its `at_least`: the retries paid and the level left,
    /// the same in every interleaving (checked by loom).
    fn race_two_retries(level: u32, cost: u32, limit: u32, at_least: [u32; 2]) -> (usize, u32) {
        let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
        let outcome = std::sync::Arc::clone(&seen);
        loom::model(move || {
            let quota = Arc::new(RetryQuota::starting_at(
                10,
                level,
                None,
                std::sync::Arc::new(ManualClock::new()),
            ));
            let retries: Vec<_> = at_least
                .into_iter()
                .map(|at_least| {
                    let quota = Arc::clone(&quota);
                    let bounds = RetryBounds { limit, at_least };
                    loom::thread::spawn(move || quota.try_acquire_within(cost, bounds, 0).is_ok())
                })
                .collect();
            let paid = retries
                .into_iter()
                .map(|retry| retry.join().expect("no panic"))
                .filter(|paid| *paid)
                .count();
            let this = (paid, quota.level());
            let mut seen = outcome.lock().expect("not poisoned");
            assert!(
                seen.is_none_or(|first| first == this),
                "{seen:?} then {this:?}"
            );
            *seen = Some(this);
        });
        let seen = *seen.lock().expect("not poisoned");
        seen.expect("loom ran the model")
    }
}
