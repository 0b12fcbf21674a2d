//! A scope: the quota, rate limiter and counters that calls share, and the process-wide
//! registry of named scopes.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use super::meter::Meter;
#[cfg(feature = "fleet")]
use super::stats::ScopeTotals;
use super::stats::{Counter, ScopeCounters, ScopeStats};
use crate::adaptive::ClientRateLimiter;
use crate::clock::{SharedClock, TokioClock};
use crate::config::{Quota, RetryConfig};
use crate::hedge::{HedgeCell, ScopeHedging};
use crate::quota::{RetryBounds, RetryQuota, TrafficQuota};

/// The state shared by every call in a scope: a retry quota, an adaptive rate limiter and
/// counters. Cloning a scope shares it.
///
/// Get a process-wide scope by name with [`Scope::named`] (what `#[retryable(scope = "...")]`
/// does), or make a private one with [`Scope::new`] and give it to the strategies a client owns.
///
/// ```
/// use retry_core::{RetryConfig, Scope};
///
/// let a = Scope::named("docs-store", &RetryConfig::default());
/// let b = Scope::named("docs-store", &RetryConfig::default());
/// assert!(a.same_as(&b));
/// assert!(!a.same_as(&Scope::new("docs-store", &RetryConfig::default())));
/// ```
#[derive(Clone)]
pub struct Scope {
    inner: Arc<ScopeInner>,
}

struct ScopeInner {
    name: Box<str>,
    quota: RetryQuota,
    limiter: Arc<ClientRateLimiter>,
    counters: ScopeCounters,
    clock: SharedClock,
    /// With a `quota_window`: the cap the scope's traffic puts on its quota.
    traffic_quota: Option<TrafficQuota>,
    /// The scope's metric handles (feature `metrics`; empty without it).
    meter: Meter,
    /// Hedging's state (its calls' latency histogram), made on the scope's first hedged call.
    hedging: HedgeCell,
    /// The configuration the scope was made from: what a fleet attaches it with.
    #[cfg(feature = "fleet")]
    config: RetryConfig,
    /// The link to a fleet, once the scope was attached to one: read on the retry path and by
    /// [`Scope::stats`], never on the success path.
    #[cfg(feature = "fleet")]
    fleet: std::sync::OnceLock<crate::fleet::link::FleetLink>,
}

/// The process-wide scopes, by name.
static REGISTRY: LazyLock<Mutex<HashMap<Box<str>, Scope>>> = LazyLock::new(Default::default);

impl Scope {
    /// A private scope sized by `config` (quota capacity and refill) on tokio's clock.
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// let scope = Scope::new("client", &RetryConfig::builder().quota_capacity(50).build().unwrap());
    /// assert_eq!(scope.quota().capacity(), 50);
    /// ```
    pub fn new(name: &str, config: &RetryConfig) -> Self {
        Self::with_clock(name, config, Arc::new(TokioClock::new()))
    }

    /// A private scope on the given clock: for simulations and virtual-time tests.
    ///
    /// ```
    /// use retry_core::clock::ManualClock;
    /// use retry_core::{RetryConfig, Scope};
    /// use std::sync::Arc;
    /// let clock = Arc::new(ManualClock::new());
    /// let scope = Scope::with_clock("sim", &RetryConfig::default(), clock);
    /// assert_eq!(scope.name(), "sim");
    /// ```
    pub fn with_clock(name: &str, config: &RetryConfig, clock: SharedClock) -> Self {
        let now = clock.now();
        let traffic_quota = TrafficQuota::new(config, now);
        // A traffic-sized quota starts with the young scope's tokens; a fixed one full.
        let level = traffic_quota
            .as_ref()
            .map_or(config.quota_capacity(), TrafficQuota::initial_level);
        let scope = Self {
            inner: Arc::new(ScopeInner {
                name: name.into(),
                quota: RetryQuota::starting_at(
                    config.quota_capacity(),
                    level,
                    config.quota_refill_per_second(),
                    Arc::clone(&clock),
                ),
                limiter: ClientRateLimiter::new(now),
                counters: ScopeCounters::default(),
                traffic_quota,
                clock,
                meter: Meter::new(name, config.quota() != Quota::Off),
                hedging: HedgeCell::default(),
                #[cfg(feature = "fleet")]
                config: config.clone(),
                #[cfg(feature = "fleet")]
                fleet: std::sync::OnceLock::new(),
            }),
        };
        // The quota's gauges are true from the scope's creation, not from its first retry.
        scope.inner.meter.quota(|| scope.quota_levels());
        scope
    }

    /// The process-wide scope called `name`, created from `config` on first use. Later calls
    /// share the first one's quota and limiter whatever their own config says.
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// let scope = Scope::named("docs-named", &RetryConfig::default());
    /// assert_eq!(scope.name(), "docs-named");
    /// ```
    pub fn named(name: &str, config: &RetryConfig) -> Self {
        let mut registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        registry
            .entry(name.into())
            .or_insert_with(|| Self::new(name, config))
            .clone()
    }

    /// The process-wide scope called `name`, if one was created.
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// assert!(Scope::lookup("docs-never-created").is_none());
    /// Scope::named("docs-lookup", &RetryConfig::default());
    /// assert!(Scope::lookup("docs-lookup").is_some());
    /// ```
    pub fn lookup(name: &str) -> Option<Self> {
        let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        registry.get(name).cloned()
    }

    /// The names of the process-wide scopes, sorted.
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// Scope::named("docs-names", &RetryConfig::default());
    /// assert!(Scope::registered().contains(&"docs-names".to_owned()));
    /// ```
    pub fn registered() -> Vec<String> {
        let registry = REGISTRY.lock().unwrap_or_else(PoisonError::into_inner);
        let mut names: Vec<String> = registry.keys().map(|name| name.to_string()).collect();
        names.sort();
        names
    }

    /// The scope's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The retry quota. With a `quota_window`, what a retry may take from it is bounded by the
    /// scope's traffic (and by its age, and by how long it asked for no retry; see
    /// [`RetryConfig::quota_window`]): [`stats`](Self::stats) shows the level a retry finds.
    ///
    /// ```
    /// # use retry_core::{RetryConfig, Scope};
    /// let classic = Scope::new("q", &RetryConfig::aws_classic().build().unwrap());
    /// assert_eq!(classic.quota().level(), 500);
    /// // A young default scope starts with the AWS SDKs' 500 tokens too.
    /// assert_eq!(Scope::new("q", &RetryConfig::default()).quota().level(), 500);
    /// ```
    pub fn quota(&self) -> &RetryQuota {
        &self.inner.quota
    }

    /// The adaptive rate limiter (used by adaptive strategies only).
    #[inline]
    pub fn limiter(&self) -> &Arc<ClientRateLimiter> {
        &self.inner.limiter
    }

    /// The clock every time reading of this scope goes through.
    pub fn clock(&self) -> &SharedClock {
        &self.inner.clock
    }

    /// Counters and levels, for metrics. With a `quota_window`, the quota's level and capacity
    /// are those a retry would meet now: the level it would find and the cap in force (sized by
    /// the scope's traffic and age; this reads the clock).
    ///
    /// ```
    /// # use retry_core::{RetryConfig, Scope};
    /// let stats = Scope::new("docs-young", &RetryConfig::default()).stats();
    /// // A young scope: the AWS SDKs' 500, until it has seen a window of traffic.
    /// assert_eq!((stats.quota_level, stats.quota_capacity), (500, 500));
    /// ```
    pub fn stats(&self) -> ScopeStats {
        let inner = &self.inner;
        let (level, capacity) = self.quota_levels();
        #[cfg_attr(not(feature = "fleet"), allow(unused_mut))]
        let mut stats = inner
            .counters
            .snapshot(level, capacity, inner.limiter.stats());
        #[cfg(feature = "fleet")]
        {
            stats.fleet = inner.fleet.get().map(|link| link.stats(inner.clock.now()));
        }
        stats
    }

    /// The calls that ended so far, in success or failure (off the success path).
    pub(crate) fn calls_ended(&self) -> u64 {
        self.inner.counters.calls()
    }

    /// The calls that succeeded so far (off the success path).
    pub(crate) fn successes(&self) -> u64 {
        self.inner.counters.successes()
    }

    /// Whether two handles share one scope.
    pub fn same_as(&self, other: &Scope) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Takes `cost` from the quota for a retry, within the bounds of the scope's traffic when
    /// it has a `quota_window`. The first retry of a call (`first`) reads the clock, once: it
    /// is on the retry path, never on the success path; a later retry of the call is sized from
    /// that reading. `Err` with the whole tokens the retry found when it is not paid for.
    pub(crate) fn try_acquire_retry(&self, cost: u32, first: bool) -> Result<(), u32> {
        let inner = &self.inner;
        let local = || match &inner.traffic_quota {
            Some(traffic) if first => {
                traffic.first_retry_bounds(|| inner.clock.now(), || self.calls_ended())
            }
            Some(traffic) => traffic.later_retry_bounds(),
            None => RetryBounds::NONE,
        };
        // Only the first retry of a call reads the clock, for the lease's expiry.
        let bounds = self.within_lease(|| first.then(|| inner.clock.now()), local);
        let paid = inner.quota.try_acquire_within(cost, bounds);
        inner.counters.add_tokens(cost, paid.is_ok());
        paid
    }

    /// A call was refused a retry after its retries paid `paid`: with a `quota_window`, that
    /// comes back unless a refused call was already refunded since the scope's last success
    /// ([`TrafficQuota::claim_refusal_refund`]). On the refusal path only.
    pub(crate) fn refund_refused(&self, paid: u32) {
        let inner = &self.inner;
        if let Some(traffic) = &inner.traffic_quota
            && paid > 0
            && traffic.claim_refusal_refund(self.successes())
        {
            inner.quota.release(paid);
        }
    }

    /// The whole tokens a retry finds in the quota now.
    pub(crate) fn quota_level(&self) -> u32 {
        self.peek_bounds().found(self.inner.quota.level())
    }

    /// The quota's level and cap as a retry would meet them now, as [`stats`](Self::stats) gives
    /// them (off the success path: it reads the clock).
    fn quota_levels(&self) -> (u32, u32) {
        self.levels_within(self.peek_bounds())
    }

    /// The quota's level and cap for the metrics' gauges, on the retry path without a clock
    /// read: within the cap the scope's last first retry was sized with, or its fleet lease.
    pub(crate) fn quota_gauges(&self) -> (u32, u32) {
        let local = || match &self.inner.traffic_quota {
            Some(traffic) => traffic.later_retry_bounds(),
            None => RetryBounds::NONE,
        };
        self.levels_within(self.within_lease(|| None, local))
    }

    /// The level a retry finds within `bounds`, and the cap they set.
    fn levels_within(&self, bounds: RetryBounds) -> (u32, u32) {
        let quota = &self.inner.quota;
        (
            bounds.found(quota.level()),
            quota.capacity().min(bounds.limit),
        )
    }

    /// Whether a success after retries gives back every retry it paid for (a traffic-sized
    /// quota), rather than the last one (the AWS SDKs' rule, a fixed quota).
    #[inline]
    pub(crate) fn refunds_every_retry(&self) -> bool {
        self.inner.traffic_quota.is_some()
    }

    /// The bounds a retry would meet now (without counting one as asked for).
    fn peek_bounds(&self) -> RetryBounds {
        let inner = &self.inner;
        let local = || match &inner.traffic_quota {
            Some(traffic) => traffic.peek_bounds(|| inner.clock.now(), || self.calls_ended()),
            None => RetryBounds::NONE,
        };
        self.within_lease(|| Some(inner.clock.now()), local)
    }

    /// The bounds of the scope's own rules (`local`), or, for a scope attached to a fleet,
    /// those its lease sets ([`FleetLink::retry_bounds`](crate::fleet::link::FleetLink)); `now`
    /// reads the clock for the lease's expiry, or does not (`None`: the lease counts as live).
    #[cfg_attr(not(feature = "fleet"), allow(unused_variables))]
    #[inline]
    fn within_lease(
        &self,
        now: impl FnOnce() -> Option<Duration>,
        local: impl FnOnce() -> RetryBounds,
    ) -> RetryBounds {
        #[cfg(feature = "fleet")]
        if let Some(link) = self.inner.fleet.get() {
            return link.retry_bounds(now(), local);
        }
        local()
    }

    /// The configuration the scope was made from.
    #[cfg(feature = "fleet")]
    pub(crate) fn config(&self) -> &RetryConfig {
        &self.inner.config
    }

    /// The scope's link to a fleet, made on first use (an attach).
    #[cfg(feature = "fleet")]
    pub(crate) fn fleet_link(&self) -> &crate::fleet::link::FleetLink {
        self.inner.fleet.get_or_init(Default::default)
    }

    /// The running totals a fleet's report is made of (off the success path).
    #[cfg(feature = "fleet")]
    pub(crate) fn totals(&self) -> ScopeTotals {
        self.inner.counters.totals()
    }

    #[inline]
    pub(crate) fn count(&self, counter: Counter) {
        self.inner.counters.add(counter);
    }

    /// Counts a successful call that retried.
    pub(crate) fn count_retried_success(&self) {
        self.inner.counters.add_retried_success();
    }

    /// Counts an attempt sent that did not end its call in success: when its answer comes (as
    /// its throttle is), or when its call is dropped while it is in flight. (A success counts
    /// its own last attempt.)
    pub(crate) fn count_unsuccessful_attempt(&self) {
        self.inner.counters.add_attempt();
    }

    /// What the scope reports to the `metrics` facade.
    #[inline]
    pub(crate) fn meter(&self) -> &Meter {
        &self.inner.meter
    }

    /// The scope's hedging state: made now when `make` and none exists yet (the scope's first
    /// hedged call); `None` for a scope none of whose calls hedged, when not `make`.
    pub(crate) fn hedging(&self, make: bool) -> Option<&ScopeHedging> {
        let inner = &self.inner;
        match make {
            true => Some(inner.hedging.get_or_init(&inner.name, &inner.clock)),
            false => inner.hedging.get(),
        }
    }

    /// Counts a call that ended in failure (its attempts are counted one by one).
    pub(crate) fn count_failure(&self) {
        self.count(Counter::Failure);
    }
}

impl fmt::Debug for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Scope")
            .field("name", &self.inner.name)
            .field("quota", &self.inner.quota)
            .finish_non_exhaustive()
    }
}
