//! A scope's hedging state: the latency its hedged calls measured, whether a throttle paused its
//! hedges, and its hedges' metrics. Made on the scope's first hedged call: a scope whose calls
//! never hedge holds one empty pointer ([`HedgeCell`]).

use std::fmt;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use super::budget::{DELAY_STRETCH, HedgeBudget};
use super::histogram::{LatencyHistogram, min_samples};
use super::meter::HedgeMeter;
use super::policy::HedgeDelay;
use super::refusal::HedgeRefusal;
use crate::clock::{SharedClock, duration_to_nanos};
use crate::sync::{AtomicU64, Ordering};

/// How long a throttle pauses a scope's hedges when the server gave no longer `Retry-After`,
/// 1 s: the AWS SDKs' base backoff for a throttled request (the throttling backoff of the
/// [`defaults`](crate::guide::defaults) page). A service that keeps throttling keeps the pause
/// going.
pub const THROTTLE_PAUSE: Duration = Duration::from_secs(1);

/// How long a percentile read from the histogram is reused, 1 s: reading it walks the
/// histogram's buckets, which every hedged call would otherwise do.
const PERCENTILE_REFRESH: Duration = Duration::from_secs(1);

/// A scope's hedging state, shared by its calls (see the [module](super) for the rules it
/// applies): the latency of its hedged calls' first attempts, the pause a throttle puts on its
/// hedges, and the hedges' metrics (feature `metrics`).
///
/// Read it for a scope's measured latency:
///
/// ```
/// use retry_core::clock::ManualClock;
/// use retry_core::driver::{HedgedLoop, NoHook};
/// use retry_core::hedge::Hedging;
/// use retry_core::{RetryConfig, RetryStrategy, StandardStrategy};
/// use retry_core::classify::RetryInfoClassifier;
/// use std::{sync::Arc, time::Duration};
///
/// let clock = Arc::new(ManualClock::new());
/// let strategy = StandardStrategy::builder(RetryConfig::default()).clock(clock.clone()).build();
/// let hedging = Hedging::at_percentile(95.0).unwrap();
/// for _ in 0..200 {
///     let mut call = HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, hedging);
///     assert_eq!(call.next_wait(true), None);
///     clock.advance(Duration::from_millis(20)); // every first attempt answers in 20 ms
///     let first = call.attempt().unwrap();
///     call.finish(first, &Ok::<_, std::io::Error>(()));
/// }
/// let measured = strategy.scope_hedging().expect("a scope of ours");
/// assert_eq!(measured.samples(), 200);
/// let p95 = measured.latency(95.0).expect("200 samples: enough for p95");
/// assert!(p95 >= Duration::from_millis(20));
/// ```
pub struct ScopeHedging {
    histogram: LatencyHistogram,
    /// The clock of the scope: latencies and pauses are read on it.
    clock: SharedClock,
    /// Until when (nanoseconds on the scope's clock) a throttle paused the scope's hedges.
    paused_until: AtomicU64,
    /// The last percentile read, reused for [`PERCENTILE_REFRESH`].
    cached: Mutex<Option<CachedPercentile>>,
    /// What the scope's percentile hedges may still send.
    budget: HedgeBudget,
    meter: HedgeMeter,
}

/// A percentile read from the histogram, and when.
#[derive(Debug, Clone, Copy)]
struct CachedPercentile {
    percentile: f64,
    read_at: Duration,
    latency: Option<Duration>,
}

impl ScopeHedging {
    /// The hedging state of the scope `scope`, on its clock.
    pub(crate) fn new(scope: &str, clock: SharedClock) -> Self {
        Self {
            histogram: LatencyHistogram::new(),
            clock,
            paused_until: AtomicU64::new(0),
            cached: Mutex::new(None),
            budget: HedgeBudget::new(),
            meter: HedgeMeter::new(scope),
        }
    }

    /// The scope's clock, now.
    pub(crate) fn now(&self) -> Duration {
        self.clock.now()
    }

    /// The latency below which `percentile` % of the scope's hedged calls' first attempts were
    /// answered over the last one to two minutes, if it has the samples: at least 10 above the
    /// percentile (200 for p95, 1,000 for p99); `None` before (its calls are then not hedged).
    /// Read as the upper edge of a histogram bucket at most 12.5 % wide: never below the true
    /// value.
    pub fn latency(&self, percentile: f64) -> Option<Duration> {
        self.histogram.percentile(self.now(), percentile)
    }

    /// The samples [`latency`](Self::latency) reads now: the first attempts of the scope's hedged
    /// calls over the last one to two minutes (one per call, as explained in
    /// [`hedge`](super)'s documentation).
    pub fn samples(&self) -> u64 {
        self.histogram.samples(self.now())
    }

    /// The samples a percentile needs before it is used.
    ///
    /// ```
    /// assert_eq!(retry_core::hedge::ScopeHedging::min_samples(95.0), 200);
    /// ```
    pub fn min_samples(percentile: f64) -> u64 {
        min_samples(percentile)
    }

    /// [`latency`](Self::latency), reused for a second after it was read for the same
    /// percentile (the hedged path reads it once per call).
    pub(crate) fn delay_at(&self, percentile: f64) -> Option<Duration> {
        let now = self.now();
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(hit) = cached.filter(|hit| {
            hit.percentile == percentile && now.saturating_sub(hit.read_at) < PERCENTILE_REFRESH
        }) {
            return hit.latency;
        }
        let latency = self.histogram.percentile(now, percentile);
        *cached = Some(CachedPercentile {
            percentile,
            read_at: now,
            latency,
        });
        latency
    }

    /// A hedged call whose hedges come after `delay` sent its first attempt: now, on the scope's
    /// clock. A call hedged at a percentile earns its share of the hedge budget
    /// ([`HedgeRefusal::BudgetExhausted`]).
    pub(crate) fn first_attempt_sent(&self, delay: HedgeDelay) -> Duration {
        if let HedgeDelay::Percentile(percentile) = delay {
            self.budget.earn(percentile);
        }
        self.now()
    }

    /// A hedge due after `delay` is about to be asked of the strategy: a percentile hedge takes
    /// one from the budget ([`HedgeRefusal::BudgetExhausted`] when that would go deeper than
    /// [`HEDGE_DEBT`](super::HEDGE_DEBT)); a fixed delay's hedge is the user's choice and takes nothing.
    /// `Ok(true)` when one was taken.
    pub(crate) fn take_budget(&self, delay: HedgeDelay) -> Result<bool, HedgeRefusal> {
        match delay {
            HedgeDelay::After(_) => Ok(false),
            HedgeDelay::Percentile(_) if self.budget.try_spend() => Ok(true),
            HedgeDelay::Percentile(_) => Err(HedgeRefusal::BudgetExhausted),
        }
    }

    /// Gives back a hedge [`take_budget`](Self::take_budget) took for a hedge not sent.
    pub(crate) fn refund_budget(&self) {
        self.budget.refund();
    }

    /// The hedges the scope's hedge budget holds now: at most [`HEDGE_BURST`](super::HEDGE_BURST),
    /// negative in debt, down to −[`HEDGE_DEBT`](super::HEDGE_DEBT). Each call hedged at a percentile `p` earns
    /// `(100 − p) / 100` of a hedge, each percentile hedge spends one; a call's delay is
    /// [`DELAY_STRETCH`] times the percentile while the budget holds less than one hedge, and
    /// a percentile hedge that would go deeper than the debt is refused
    /// ([`HedgeRefusal::BudgetExhausted`]). So a scope's percentile hedges are at most the
    /// share of its calls the percentile stands for (5 % at p95), plus
    /// [`HEDGE_BURST`](super::HEDGE_BURST) + [`HEDGE_DEBT`](super::HEDGE_DEBT). Hedges after a fixed delay neither earn nor spend.
    pub fn budget(&self) -> f64 {
        self.budget.hedges()
    }

    /// The delay of a call hedged at `percentile`: the percentile ([`delay_at`](Self::delay_at)),
    /// or [`DELAY_STRETCH`] times it while the hedge budget holds less than one hedge (see
    /// [`budget`](Self::budget)).
    pub(crate) fn call_delay(&self, percentile: f64) -> Option<Duration> {
        let delay = self.delay_at(percentile)?;
        if self.budget.has_credit() {
            return Some(delay);
        }
        Some(delay.saturating_mul(DELAY_STRETCH))
    }

    /// Records the latency of a hedged call's first attempt, sent at `sent_at` (the scope's
    /// clock) and answered, or left behind, now.
    pub(crate) fn record_latency(&self, sent_at: Duration) {
        let now = self.now();
        self.histogram.record(now, now.saturating_sub(sent_at));
    }

    /// A throttle (or a `Retry-After`, gRPC pushback) seen now: the scope's hedges pause for
    /// [`THROTTLE_PAUSE`], or `retry_after` if it is longer.
    pub(crate) fn throttled(&self, retry_after: Option<Duration>) {
        let pause = retry_after.map_or(THROTTLE_PAUSE, |after| after.max(THROTTLE_PAUSE));
        let until = duration_to_nanos(self.now().saturating_add(pause));
        self.paused_until.fetch_max(until, Ordering::AcqRel);
    }

    /// Whether a throttle pauses the scope's hedges now: the refusal if it does.
    pub(crate) fn check_pause(&self) -> Result<(), HedgeRefusal> {
        let until = self.paused_until.load(Ordering::Acquire);
        if until != 0 && duration_to_nanos(self.now()) < until {
            return Err(HedgeRefusal::Throttled);
        }
        Ok(())
    }

    /// The hedges' metrics.
    pub(crate) fn meter(&self) -> &HedgeMeter {
        &self.meter
    }
}

impl fmt::Debug for ScopeHedging {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeHedging")
            .field("samples", &self.samples())
            .field("paused_until", &self.paused_until.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// Where a scope keeps its [`ScopeHedging`]: one pointer, filled on the scope's first hedged
/// call.
#[derive(Default)]
pub(crate) struct HedgeCell(OnceLock<Box<ScopeHedging>>);

impl HedgeCell {
    /// The scope's hedging state, made now if it has none (`scope` and `clock` are the scope's).
    pub(crate) fn get_or_init(&self, scope: &str, clock: &SharedClock) -> &ScopeHedging {
        self.0
            .get_or_init(|| Box::new(ScopeHedging::new(scope, SharedClock::clone(clock))))
    }

    /// The scope's hedging state, if one of its calls hedged.
    pub(crate) fn get(&self) -> Option<&ScopeHedging> {
        self.0.get().map(Box::as_ref)
    }
}

impl fmt::Debug for HedgeCell {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("HedgeCell").field(&self.get()).finish()
    }
}
