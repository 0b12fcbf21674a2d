//! The retry quota: a token bucket of retries shared by a scope, which stops retry storms.
//!
//! The AWS SDKs' retry quota (smithy-kotlin's retry design and the Smithy client guide call it a
//! token bucket): each retry takes a cost out of the bucket, a success after retries puts the last
//! retry's cost back, and a first-try success adds a small reward. When the bucket cannot pay for
//! a retry, the call stops retrying. Lock-free: the level is one atomic updated by
//! compare-and-swap, and the optional refill claims elapsed time by compare-and-swap on the last
//! refill instant (model-checked with loom in `tests/loom_quota.rs`).
//! The capacity may move (a scope with a `quota_window` sizes it by its request rate): the level
//! is clamped to it whenever it shrinks.

use crate::ConfigError;
use crate::clock::{SharedClock, duration_to_nanos};
use crate::sync::{AtomicU64, Ordering};
use std::fmt;

/// The quota is kept in thousandths of a token so that a slow refill accumulates exactly.
const MILLI: u64 = 1_000;
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// A shared, lock-free bucket of retry tokens.
///
/// ```
/// use retry_core::{RetryQuota, TokioClock};
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
    /// Current level, in thousandths of a token.
    level: AtomicU64,
    /// Current capacity, in thousandths of a token: at most `max_capacity`.
    capacity: AtomicU64,
    /// The capacity the bucket was created with, in thousandths of a token.
    max_capacity: u64,
    /// Refill rate in thousandths of a token per second; 0 when refill is off.
    refill_per_sec: u64,
    /// Clock reading (nanoseconds) up to which refill has been credited.
    refilled_until: AtomicU64,
    clock: SharedClock,
}

impl RetryQuota {
    /// A full bucket of `capacity` tokens, refilled by `refill_per_second` tokens each second
    /// when given (smithy-kotlin's retry design lets the bucket refill over time; off in the AWS
    /// presets). A refill rate that is not a positive finite number is an error, as it is in
    /// [`RetryConfig`](crate::RetryConfig).
    ///
    /// ```
    /// use retry_core::{ConfigError, ManualClock, RetryQuota};
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
            Some(rate) if !(rate.is_finite() && rate > 0.0) => Err(ConfigError::InvalidRate {
                setting: "refill_per_second",
                value: rate,
            }),
            _ => Ok(Self::with_valid_refill(capacity, refill_per_second, clock)),
        }
    }

    /// [`new`](Self::new) for a refill rate already validated (a [`RetryConfig`]'s).
    ///
    /// [`RetryConfig`]: crate::RetryConfig
    pub(crate) fn with_valid_refill(
        capacity: u32,
        refill_per_second: Option<f64>,
        clock: SharedClock,
    ) -> Self {
        let capacity = u64::from(capacity) * MILLI;
        let refill_per_sec =
            refill_per_second.map_or(0, |rate| (rate * MILLI as f64).min(u64::MAX as f64) as u64);
        let now = duration_to_nanos(clock.now());
        Self {
            level: AtomicU64::new(capacity),
            capacity: AtomicU64::new(capacity),
            max_capacity: capacity,
            refill_per_sec,
            refilled_until: AtomicU64::new(now),
            clock,
        }
    }

    /// Takes `cost` tokens if the bucket holds them; otherwise takes nothing and returns `false`.
    ///
    /// ```
    /// # use retry_core::{RetryQuota, TokioClock};
    /// # use std::sync::Arc;
    /// let quota = RetryQuota::new(12, None, Arc::new(TokioClock::new()))?;
    /// assert!(quota.try_acquire(10));
    /// assert!(!quota.try_acquire(10));
    /// assert_eq!(quota.level(), 2);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn try_acquire(&self, cost: u32) -> bool {
        self.refill();
        let cost = u64::from(cost) * MILLI;
        self.level
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |level| {
                self.clamped(level).checked_sub(cost)
            })
            .is_ok()
    }

    /// Puts `amount` tokens back, never above capacity.
    ///
    /// ```
    /// # use retry_core::{RetryQuota, TokioClock};
    /// # use std::sync::Arc;
    /// let quota = RetryQuota::new(10, None, Arc::new(TokioClock::new()))?;
    /// quota.release(100);
    /// assert_eq!(quota.level(), 10);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    #[inline]
    pub fn release(&self, amount: u32) {
        self.refill();
        self.add(u64::from(amount) * MILLI);
    }

    /// The whole tokens in the bucket now.
    ///
    /// ```
    /// # use retry_core::{RetryQuota, TokioClock};
    /// # use std::sync::Arc;
    /// assert_eq!(RetryQuota::new(7, None, Arc::new(TokioClock::new()))?.level(), 7);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn level(&self) -> u32 {
        self.refill();
        let whole = self.clamped(self.level.load(Ordering::Acquire)) / MILLI;
        u32::try_from(whole).unwrap_or(u32::MAX)
    }

    /// The bucket's capacity in tokens.
    ///
    /// ```
    /// # use retry_core::{RetryQuota, TokioClock};
    /// # use std::sync::Arc;
    /// assert_eq!(RetryQuota::new(500, None, Arc::new(TokioClock::new()))?.capacity(), 500);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn capacity(&self) -> u32 {
        let capacity = self.capacity.load(Ordering::Acquire) / MILLI;
        u32::try_from(capacity).unwrap_or(u32::MAX)
    }

    /// Moves the capacity to `tokens`, at most the capacity the bucket was created with; a
    /// level above the new capacity drops to it. Tokens released later never exceed it.
    ///
    /// ```
    /// # use retry_core::{RetryQuota, TokioClock};
    /// # use std::sync::Arc;
    /// let quota = RetryQuota::new(500, None, Arc::new(TokioClock::new()))?;
    /// quota.set_capacity(42);
    /// assert_eq!((quota.level(), quota.capacity()), (42, 42));
    /// quota.set_capacity(1_000);
    /// quota.release(1_000);
    /// assert_eq!((quota.level(), quota.capacity()), (500, 500));
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn set_capacity(&self, tokens: u32) {
        let capacity = (u64::from(tokens) * MILLI).min(self.max_capacity);
        self.capacity.store(capacity, Ordering::Release);
        // fetch_update never fails with a closure that always returns Some.
        let _ = self
            .level
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |level| {
                Some(level.min(capacity))
            });
    }

    #[inline]
    fn add(&self, amount: u64) {
        // A full bucket (the steady state of a healthy scope) is only read, never written, so
        // successes on many threads do not contend for its cache line.
        if self.level.load(Ordering::Acquire) >= self.capacity.load(Ordering::Acquire) {
            return;
        }
        // fetch_update never fails with a closure that always returns Some.
        let _ = self
            .level
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |level| {
                Some(self.clamped(level.saturating_add(amount)))
            });
    }

    /// `level` as seen against the current capacity. A release racing a shrinking capacity may
    /// leave the stored level above it for a moment; every reader sees it clamped.
    #[inline]
    fn clamped(&self, level: u64) -> u64 {
        level.min(self.capacity.load(Ordering::Acquire))
    }

    /// Credits the refill, if the quota refills (a check cheap enough to inline).
    #[inline]
    fn refill(&self) {
        if self.refill_per_sec != 0 {
            self.credit_refill();
        }
    }

    /// Credits the refill for the time elapsed since the last credit. The caller that wins the
    /// compare-and-swap on `refilled_until` credits that interval; the others see it credited.
    fn credit_refill(&self) {
        let now = duration_to_nanos(self.clock.now());
        let since = self.refilled_until.load(Ordering::Acquire);
        if now <= since {
            return;
        }
        let elapsed = u128::from(now - since);
        let amount = elapsed * u128::from(self.refill_per_sec) / NANOS_PER_SEC;
        if amount == 0 {
            // Leave the interval uncredited until it is worth a thousandth of a token.
            return;
        }
        // Claim only the time the whole thousandths credited are worth (amount <= elapsed * rate,
        // so this is at most `elapsed`): the remainder carries over to the next credit, and the
        // refill does not slow down when the quota is read often.
        let worth = amount * NANOS_PER_SEC;
        let rate = u128::from(self.refill_per_sec);
        let claimed = worth.div_ceil(rate);
        let until = since
            .saturating_add(u64::try_from(claimed).unwrap_or(u64::MAX))
            .min(now);
        if self
            .refilled_until
            .compare_exchange(since, until, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            self.add(u64::try_from(amount).unwrap_or(u64::MAX));
        }
    }
}

impl fmt::Debug for RetryQuota {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryQuota")
            .field("level", &self.level())
            .field("capacity", &self.capacity())
            .finish()
    }
}
