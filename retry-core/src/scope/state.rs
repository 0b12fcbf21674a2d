//! A scope: the quota, rate limiter and counters that calls share; named ones live in the
//! process-wide registry ([`super::registry`]), which forgets them once no handle holds them and
//! they have nothing to remember.

use std::fmt;
use std::panic::Location;
use std::sync::Arc;
use std::time::Duration;

use super::declaration::{ScopeConflict, ScopeDeclaration};
use super::meter::Meter;
use super::registry::{Registered, Registry};
#[cfg(feature = "fleet")]
use super::stats::ScopeTotals;
use super::stats::{Counter, ScopeCounters, ScopeStats};
use crate::adaptive::ClientRateLimiter;
use crate::clock::{SharedClock, TokioClock};
use crate::config::defaults::QUOTA_WINDOW;
use crate::config::{Quota, RetryConfig};
use crate::hedge::{HedgeCell, ScopeHedging};
use crate::quota::{RetriedCall, RetryBounds, RetryQuota, TrafficQuota};
use crate::sync::{AtomicBool, AtomicUsize, Ordering};

/// The state shared by every call in a scope: a retry quota, an adaptive rate limiter and
/// counters. Cloning a scope shares it.
///
/// Get a process-wide scope by name with [`Scope::named`] (what `#[retryable(scope = "...")]`
/// does), or make a private one with [`Scope::new`] and give it to the strategies a client owns.
///
/// # How long a named scope lives
/// A named scope lives in the process-wide registry while a handle holds it (a strategy's, so
/// an attribute's static, a `RetryLayer`, a strategy the program keeps; a fleet's): its quota
/// and limiter carry over from call to call. Once no handle holds it, the registry forgets it:
/// * at once if its state is still a new scope's: no retry was asked for, its quota holds at
///   least what it started with, its rate limiter never engaged (a throttle in adaptive mode),
///   no fleet linked it. Successes alone leave nothing to remember;
/// * otherwise once it has been idle (no handle) for its `quota_window` (the default's 60 s;
///   60 s for a fixed quota too): forgotten by a sweep that runs as new names are made.
///
/// A name declared again before then gets the same scope; after, a new young scope (its quota
/// starts as a young scope's, its limiter off, its counts at 0), never another scope's state.
/// With the `metrics` feature a forgotten scope's series are no longer recorded (see the
/// `metrics` module for what exporters do with them). So a program may name scopes at run time
/// (per tenant, per host) and its memory stays bounded by the scopes in use and those that
/// retried within their window.
///
/// ```
/// use retry_core::{RetryConfig, Scope};
///
/// let scope = Scope::named("docs-forgotten", &RetryConfig::default());
/// drop(scope); // no retry, no throttle: nothing to remember
/// assert!(Scope::lookup("docs-forgotten").is_none());
/// ```
///
/// ```
/// use retry_core::{RetryConfig, Scope};
///
/// let a = Scope::named("docs-store", &RetryConfig::default());
/// let b = Scope::named("docs-store", &RetryConfig::default());
/// assert!(a.same_as(&b));
/// assert!(!a.same_as(&Scope::new("docs-store", &RetryConfig::default())));
/// ```
pub struct Scope {
    inner: Arc<ScopeInner>,
}

pub(crate) struct ScopeInner {
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
    /// The configuration the scope was made from: what a fleet attaches it with, and what
    /// another declaration of its name is checked against.
    config: RetryConfig,
    /// Whether a retry was asked for (on the retry path): the scope has something to remember.
    retried: AtomicBool,
    /// The [`Scope`] handles on it. A fleet's holder is one.
    holders: AtomicUsize,
    /// The registry of a named scope: told when the last handle goes.
    registry: Option<&'static Registry<ScopeInner>>,
    /// The link to a fleet, once the scope was attached to one: read on the retry path and by
    /// [`Scope::stats`], never on the success path.
    #[cfg(feature = "fleet")]
    /// Boxed: a scope attached to no fleet keeps a pointer, not the link's ~130 bytes.
    fleet: std::sync::OnceLock<Box<crate::fleet::link::FleetLink>>,
}

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
        let scope = Self::handle_on(&Arc::new(ScopeInner::new(name, config, clock, None)));
        scope.report_new_quota();
        scope
    }

    /// A new handle on `inner` (counted).
    fn handle_on(inner: &Arc<ScopeInner>) -> Self {
        inner.hold();
        Self::adopt(Arc::clone(inner))
    }

    /// The handle a registry counted already.
    fn adopt(inner: Arc<ScopeInner>) -> Self {
        Self { inner }
    }

    /// The process-wide registry of named scopes.
    fn registry() -> &'static Registry<ScopeInner> {
        static GLOBAL: std::sync::LazyLock<Registry<ScopeInner>> =
            std::sync::LazyLock::new(Registry::default);
        &GLOBAL
    }

    /// The process-wide scope called `name`, made from `config` if there is none (see
    /// [How long a named scope lives](Self#how-long-a-named-scope-lives)). A scope made by
    /// another declaration with other [`SCOPE_SETTINGS`](super::SCOPE_SETTINGS) is returned as
    /// it is, and the [`ScopeConflict`] logged as an ERROR event, once per place
    /// ([`declare`](Self::declare) returns it instead).
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// let scope = Scope::named("docs-named", &RetryConfig::default());
    /// assert_eq!(scope.name(), "docs-named");
    /// ```
    #[track_caller]
    #[must_use = "a named scope no handle holds is forgotten once it has nothing to remember: \
                  keep the handle for as long as the scope's settings and state should last"]
    pub fn named(name: &str, config: &RetryConfig) -> Self {
        Self::declared(name, config, ScopeDeclaration::Named(Location::caller()))
    }

    /// The process-wide scope called `name`, made from `config` if there is none, or the
    /// conflict with the declaration that made it, if that one had other
    /// [`SCOPE_SETTINGS`](super::SCOPE_SETTINGS).
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// let scope = Scope::declare("docs-declare", &RetryConfig::default())?;
    /// let again = Scope::declare("docs-declare", &RetryConfig::default())?;
    /// assert!(scope.same_as(&again));
    /// # Ok::<(), retry_core::scope::ScopeConflict>(())
    /// ```
    #[track_caller]
    pub fn declare(name: &str, config: &RetryConfig) -> Result<Self, ScopeConflict> {
        let declared = ScopeDeclaration::Named(Location::caller());
        match Self::declare_in_process(name, config, declared) {
            (scope, None) => Ok(scope),
            (_, Some(conflict)) => Err(conflict),
        }
    }

    /// The process-wide scope called `name` as `declared` declares it, a conflict logged.
    pub(crate) fn declared(name: &str, config: &RetryConfig, declared: ScopeDeclaration) -> Self {
        let (scope, conflict) = Self::declare_in_process(name, config, declared);
        if let Some(conflict) = conflict
            && Self::registry().first_report(&conflict)
        {
            conflict.log();
        }
        scope
    }

    /// The process-wide scope called `name` as `declared` declares it (made on tokio's clock
    /// if there is none), with the conflict if it was made from other settings.
    fn declare_in_process(
        name: &str,
        config: &RetryConfig,
        declared: ScopeDeclaration,
    ) -> (Self, Option<ScopeConflict>) {
        let clock = || -> SharedClock { Arc::new(TokioClock::new()) };
        Self::declare_on(Self::registry(), name, config, declared, clock)
    }

    /// The scope called `name` in `registry` as `declared` declares it, made on the clock
    /// `clock` gives if there is none (only then: a declaration of a scope that exists makes
    /// nothing).
    fn declare_on(
        registry: &'static Registry<ScopeInner>,
        name: &str,
        config: &RetryConfig,
        declared: ScopeDeclaration,
        clock: impl FnOnce() -> SharedClock,
    ) -> (Self, Option<ScopeConflict>) {
        let mut made = false;
        let make = || {
            made = true;
            ScopeInner::new(name, config, clock(), Some(registry))
        };
        let (inner, conflict) = registry.declare(name, config, declared, make);
        let scope = Self::adopt(inner);
        if made {
            scope.report_new_quota();
        }
        (scope, conflict)
    }

    /// The process-wide scope called `name`, if one was created.
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// assert!(Scope::lookup("docs-never-created").is_none());
    /// let held = Scope::named("docs-lookup", &RetryConfig::default());
    /// assert!(Scope::lookup("docs-lookup").is_some_and(|scope| scope.same_as(&held)));
    /// ```
    pub fn lookup(name: &str) -> Option<Self> {
        Self::registry().lookup(name).map(Self::adopt)
    }

    /// The names of the process-wide scopes, sorted.
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// let held = Scope::named("docs-names", &RetryConfig::default());
    /// assert!(Scope::registered().contains(&"docs-names".to_owned()));
    /// ```
    pub fn registered() -> Vec<String> {
        Self::registry().names()
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
    /// it has a `quota_window` (and borrowing what its calls in flight hold, when they come
    /// back). The first retry of a call (`first`) reads the clock, once: it is on the retry
    /// path, never on the success path; a later retry of the call is sized from that reading.
    /// `Err` with the whole tokens the retry found when it is not paid for.
    pub(crate) fn try_acquire_retry(&self, cost: u32, first: bool) -> Result<(), u32> {
        let inner = &self.inner;
        if first && !inner.retried.load(Ordering::Relaxed) {
            inner.retried.store(true, Ordering::Relaxed);
        }
        let local = || match &inner.traffic_quota {
            Some(traffic) if first => {
                traffic.first_retry_bounds(|| inner.clock.now(), || self.calls_ended())
            }
            Some(traffic) => traffic.later_retry_bounds(),
            None => RetryBounds::NONE,
        };
        // Only the first retry of a call reads the clock, for the lease's expiry.
        let bounds = self.within_lease(|| first.then(|| inner.clock.now()), local);
        let paid = inner.quota.try_acquire_within(cost, bounds, self.credit());
        inner.counters.add_tokens(cost, paid.is_ok());
        if let (Ok(()), Some(traffic)) = (paid, &inner.traffic_quota) {
            traffic.hold(cost);
        }
        paid
    }

    /// Takes `cost` from the quota for a hedge ([`hedge`](crate::hedge)): only from what the
    /// quota holds within the bounds a retry would meet now (no credit against the calls in
    /// flight, no quiet window's floor, which only a retry claims), and only if half the cap is
    /// left after paying (gRFC A6's throttling of hedges). Paid, its call holds it as it holds
    /// a retry's cost ([`end_retried_call`](Self::end_retried_call) or
    /// [`return_hedge`](Self::return_hedge) lets it go). Off the success path: it reads the
    /// clock. `Err` with the whole tokens the hedge found when it is not paid for.
    pub(crate) fn try_acquire_hedge(&self, cost: u32) -> Result<(), u32> {
        let inner = &self.inner;
        if !inner.retried.load(Ordering::Relaxed) {
            inner.retried.store(true, Ordering::Relaxed);
        }
        let local = || match &inner.traffic_quota {
            Some(traffic) => traffic.peek_bounds(|| inner.clock.now(), || self.calls_ended()),
            None => RetryBounds::NONE,
        };
        let bounds = RetryBounds {
            at_least: 0,
            ..self.within_lease(|| Some(inner.clock.now()), local)
        };
        let keep = self.hedge_reserve(bounds);
        let paid = inner.quota.try_acquire_keeping(cost, bounds, keep);
        inner.counters.add_tokens(cost, paid.is_ok());
        if let (Ok(()), Some(traffic)) = (paid, &inner.traffic_quota) {
            traffic.hold(cost);
        }
        paid
    }

    /// What a hedge must leave in the quota that `bounds` let a retry find: half of what the
    /// quota holds when full (gRFC A6's retry throttling threshold: a bucket that starts full
    /// and stops hedges below half). Full is the cap a retry meets, except while a
    /// traffic-sized scope is young: it starts with the young tokens while its cap follows the
    /// traffic at once, and a level below a cap it had no window to fill is not failures'
    /// evidence (a busy new scope would send no hedge for half a minute). Under a live fleet
    /// lease, the fleet's rule (`FleetLink::hedge_reserve`: the fleet's tokens, not the
    /// process's share, are the bucket that threshold speaks of).
    fn hedge_reserve(&self, bounds: RetryBounds) -> u32 {
        let now = self.inner.clock.now();
        #[cfg(feature = "fleet")]
        if let Some(link) = self.inner.fleet.get()
            && let Some(reserve) = link.hedge_reserve(now)
        {
            return reserve;
        }
        let cap = self.inner.quota.capacity().min(bounds.limit);
        let young = match &self.inner.traffic_quota {
            Some(traffic) => traffic.young_at(now),
            None => 0,
        };
        let full = if young > 0 { cap.min(young) } else { cap };
        full / 2
    }

    /// A hedge paid `cost` and was not sent (the rate limiter refused it): its cost goes back to
    /// the quota, and its call no longer holds it (no evidence of how retried calls end).
    pub(crate) fn return_hedge(&self, cost: u32) {
        self.end_retried_call(cost, RetriedCall::Undecided);
        self.inner.quota.release(cost);
    }

    /// What a retry may borrow beyond an empty quota: with a `quota_window`, what the scope's
    /// calls in flight hold while they come back ([`TrafficQuota::credit`]); nothing for a
    /// scope whose fleet lease (or its fallback) sets its bounds.
    fn credit(&self) -> u32 {
        let Some(traffic) = &self.inner.traffic_quota else {
            return 0;
        };
        #[cfg(feature = "fleet")]
        if let Some(link) = self.inner.fleet.get()
            && link.mode() != crate::fleet::link::Mode::Local
        {
            return 0;
        }
        traffic.credit()
    }

    /// A call whose retries paid `paid` ended as `call`: with a `quota_window`, its calls in
    /// flight hold that much less, and how it ended tells whether they come back.
    pub(crate) fn end_retried_call(&self, paid: u32, call: RetriedCall) {
        if let Some(traffic) = &self.inner.traffic_quota
            && paid > 0
        {
            traffic.end_retried_call(paid, call);
        }
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

    /// What the scope's calls in flight hold (0 without a `quota_window`).
    #[cfg(test)]
    pub(crate) fn held_in_flight(&self) -> u64 {
        self.inner
            .traffic_quota
            .as_ref()
            .map_or(0, TrafficQuota::held)
    }

    /// The tokens local mode lets the scope hold whatever its traffic at `now`: the young
    /// scope's while it is younger than its `quota_window`, 0 after (or without a window).
    #[cfg(feature = "fleet")]
    pub(crate) fn young_quota_at(&self, now: Duration) -> u32 {
        self.inner
            .traffic_quota
            .as_ref()
            .map_or(0, |traffic| traffic.young_at(now))
    }

    /// The most a retry would find at `now` under the scope's local rules, for its own
    /// traffic, without counting one as asked for: its `quota_window`'s cap (one token per call
    /// of the last window, at least one whole call's retries, at least the young scope's while
    /// younger than the window); 0 without a window (fleet mode needs one).
    #[cfg(feature = "fleet")]
    pub(crate) fn local_limit_at(&self, now: Duration) -> u32 {
        self.inner.traffic_quota.as_ref().map_or(0, |traffic| {
            traffic.peek_bounds(|| now, || self.calls_ended()).limit
        })
    }

    /// The whole tokens a retry finds in the quota now.
    pub(crate) fn quota_level(&self) -> u32 {
        self.peek_bounds().found(self.inner.quota.level())
    }

    /// Sets the quota's gauges of a scope just made, so that they are true from its creation,
    /// not from its first retry.
    fn report_new_quota(&self) {
        self.inner.meter.quota(|| self.quota_levels());
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
    /// reads the clock for the lease's expiry and the scope's youth, or does not (`None`: the
    /// lease counts as live, the scope as young as its call's first retry found it).
    #[cfg_attr(not(feature = "fleet"), allow(unused_variables))]
    #[inline]
    fn within_lease(
        &self,
        now: impl FnOnce() -> Option<Duration>,
        local: impl FnOnce() -> RetryBounds,
    ) -> RetryBounds {
        #[cfg(feature = "fleet")]
        if let Some(link) = self.inner.fleet.get() {
            let now = now();
            let young = || {
                self.inner
                    .traffic_quota
                    .as_ref()
                    .map_or(0, |traffic| traffic.young_when(now))
            };
            return link.retry_bounds(now, local, young);
        }
        local()
    }

    /// The configuration the scope was made from: for a named scope, that of the declaration
    /// that made it (its [`SCOPE_SETTINGS`](super::SCOPE_SETTINGS) are the scope's).
    ///
    /// ```
    /// use retry_core::{RetryConfig, Scope};
    /// let five = RetryConfig::builder().max_attempts(5).build()?;
    /// assert_eq!(Scope::new("docs-config", &five).config().max_attempts(), 5);
    /// # Ok::<(), retry_core::ConfigError>(())
    /// ```
    pub fn config(&self) -> &RetryConfig {
        &self.inner.config
    }

    /// The handles on the scope now (off the success path: a fleet asks, to tell whether it
    /// alone holds the scope).
    #[cfg(feature = "fleet")]
    pub(crate) fn holders(&self) -> usize {
        Registered::holders(&*self.inner)
    }

    /// Forgets the scope if the `holders` handles of whoever asks are all that hold it: `true`
    /// if so (its registry forgot a named scope, which a new declaration of its name then makes
    /// anew; a private scope has no registry), `false` if another handle holds it.
    #[cfg(feature = "fleet")]
    pub(crate) fn forget_held_only_by(&self, holders: usize) -> bool {
        match self.inner.registry {
            Some(registry) => registry.forget_held_only_by(&self.inner, holders),
            None => self.holders() == holders,
        }
    }

    /// The scope's link to a fleet, made on first use (an attach).
    #[cfg(feature = "fleet")]
    pub(crate) fn fleet_link(&self) -> &crate::fleet::link::FleetLink {
        self.inner.fleet.get_or_init(Box::default)
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

impl ScopeInner {
    /// The state of a new scope called `name`, sized by `config`, on `clock`, registered in
    /// `registry` if it is a named scope; no handle on it yet.
    pub(super) fn new(
        name: &str,
        config: &RetryConfig,
        clock: SharedClock,
        registry: Option<&'static Registry<ScopeInner>>,
    ) -> Self {
        let now = clock.now();
        let traffic_quota = TrafficQuota::new(config, now);
        Self {
            name: name.into(),
            quota: RetryQuota::starting_at(
                config.quota_capacity(),
                Self::initial_level(config, traffic_quota.as_ref()),
                config.quota_refill_per_second(),
                Arc::clone(&clock),
            ),
            limiter: ClientRateLimiter::new(now),
            counters: ScopeCounters::default(),
            traffic_quota,
            clock,
            meter: Meter::new(name, config.quota() != Quota::Off),
            hedging: HedgeCell::default(),
            config: config.clone(),
            retried: AtomicBool::new(false),
            holders: AtomicUsize::new(0),
            registry,
            #[cfg(feature = "fleet")]
            fleet: std::sync::OnceLock::new(),
        }
    }

    /// What a new scope's quota holds: a traffic-sized quota the young scope's tokens, a fixed
    /// one its capacity.
    fn initial_level(config: &RetryConfig, traffic_quota: Option<&TrafficQuota>) -> u32 {
        traffic_quota.map_or(config.quota_capacity(), TrafficQuota::initial_level)
    }
}

impl Registered for ScopeInner {
    fn name(&self) -> &str {
        &self.name
    }

    fn config(&self) -> &RetryConfig {
        &self.config
    }

    fn hold(&self) {
        self.holders.fetch_add(1, Ordering::AcqRel);
    }

    fn holders(&self) -> usize {
        self.holders.load(Ordering::Acquire)
    }

    /// Whether the scope's state is still a new scope's, so that forgetting it loses nothing
    /// but its counts: no retry was asked for, the quota holds at least what it started with
    /// (a strategy of the user's own may take from it directly), the rate limiter never
    /// engaged, and no fleet linked it (a lease is state too).
    fn has_nothing_to_remember(&self) -> bool {
        #[cfg(feature = "fleet")]
        if self.fleet.get().is_some() {
            return false;
        }
        !self.retried.load(Ordering::Relaxed)
            && !self.limiter.is_enabled()
            && self.quota.level() >= Self::initial_level(&self.config, self.traffic_quota.as_ref())
    }

    /// How long a scope that has something to remember rests, no handle on it, before it is
    /// forgotten: its `quota_window` (the time its quota's memory spans), or the default's
    /// for a fixed quota.
    fn idle_window(&self) -> Duration {
        self.config.quota_window().unwrap_or(QUOTA_WINDOW)
    }

    fn now(&self) -> Duration {
        self.clock.now()
    }

    fn calls_ended(&self) -> u64 {
        self.counters.calls()
    }
}

impl Clone for Scope {
    /// Another handle on the same scope (counted: see
    /// [How long a named scope lives](Self#how-long-a-named-scope-lives)).
    fn clone(&self) -> Self {
        Self::handle_on(&self.inner)
    }
}

impl Drop for Scope {
    /// The last handle on a named scope tells the registry, which forgets the scope or has it
    /// rest.
    fn drop(&mut self) {
        if self.inner.holders.fetch_sub(1, Ordering::AcqRel) == 1
            && let Some(registry) = self.inner.registry
        {
            registry.release(&self.inner);
        }
    }
}

impl fmt::Debug for ScopeInner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScopeInner")
            .field("name", &self.name)
            .field("holders", &self.holders)
            .finish_non_exhaustive()
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

#[cfg(all(test, not(loom)))]
mod registry_tests {
    //! A named scope's life in a registry: what it remembers, and when it is forgotten.
    use super::*;
    use crate::clock::{Clock, ManualClock};
    use std::panic::Location;

    /// A registry of its own (leaked: a scope refers to its registry for the program's life)
    /// on a manual clock.
    fn registry() -> (&'static Registry<ScopeInner>, Arc<ManualClock>) {
        (Box::leak(Box::default()), Arc::new(ManualClock::new()))
    }

    fn declare(
        registry: &'static Registry<ScopeInner>,
        clock: &Arc<ManualClock>,
        name: &str,
    ) -> Scope {
        declare_with(registry, clock, name, &RetryConfig::default()).0
    }

    fn declare_with(
        registry: &'static Registry<ScopeInner>,
        clock: &Arc<ManualClock>,
        name: &str,
        config: &RetryConfig,
    ) -> (Scope, Option<ScopeConflict>) {
        let declared = ScopeDeclaration::Named(Location::caller());
        Scope::declare_on(registry, name, config, declared, || clock.clone())
    }

    /// A retry taken from the scope's quota: something to remember.
    fn retry(scope: &Scope) {
        assert!(scope.try_acquire_retry(14, true).is_ok());
    }

    #[test]
    fn a_scope_with_nothing_to_remember_is_forgotten_with_its_last_handle() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        let clone = scope.clone();
        let again = declare(registry, &clock, "a");
        assert!(again.same_as(&scope));
        assert_eq!(scope.inner.holders(), 3);
        drop((scope, again));
        assert_eq!(registry.names(), ["a"], "one handle holds it still");
        drop(clone);
        assert!(registry.names().is_empty());
    }

    #[test]
    fn successes_leave_nothing_to_remember() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        for _ in 0..10 {
            scope.count(Counter::Success);
            scope.quota().release(1);
        }
        drop(scope);
        assert!(registry.lookup("a").is_none());
    }

    #[test]
    fn a_scope_that_retried_rests_for_its_window_then_is_forgotten() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        retry(&scope);
        drop(scope);
        clock.advance(Duration::from_secs(59));
        assert_eq!(registry.sweep(), 0, "within its window");
        let again = declare(registry, &clock, "a");
        assert_eq!(
            again.stats().retries,
            0,
            "counts of retries granted by a strategy"
        );
        assert_eq!(
            again.quota().level(),
            486,
            "the same scope: its quota as it was"
        );
        drop(again);
        // Declared again, it rests from its last handle on: 59 s more are not its window.
        clock.advance(Duration::from_secs(59));
        assert_eq!(registry.sweep(), 0);
        clock.advance(Duration::from_secs(1));
        assert_eq!(registry.sweep(), 1);
        assert!(registry.names().is_empty());
    }

    #[test]
    fn a_forgotten_scope_comes_back_young() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        for _ in 0..30 {
            let _ = scope.try_acquire_retry(14, true);
        }
        scope
            .limiter()
            .record_response(true, clock.now(), clock.now());
        let old = scope.clone();
        drop(scope);
        let held_elsewhere = old; // a handle: the scope is held, the name resolves to it
        assert!(declare(registry, &clock, "a").same_as(&held_elsewhere));
        drop(held_elsewhere);
        clock.advance(Duration::from_secs(61));
        assert_eq!(registry.sweep(), 1);
        let young = declare(registry, &clock, "a");
        assert_eq!(young.quota().level(), 500);
        assert!(!young.limiter().is_enabled());
        assert_eq!(young.stats().attempts, 0);
    }

    #[test]
    fn a_held_scope_is_never_forgotten() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        retry(&scope);
        let level = scope.quota().level();
        clock.advance(Duration::from_secs(3600));
        assert_eq!(registry.sweep(), 0);
        assert!(
            registry
                .lookup("a")
                .map(Scope::adopt)
                .is_some_and(|found| found.same_as(&scope))
        );
        assert_eq!(scope.quota().level(), level);
    }

    #[test]
    fn a_lookup_is_no_use() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        retry(&scope);
        drop(scope);
        clock.advance(Duration::from_secs(40));
        drop(registry.lookup("a").map(Scope::adopt));
        clock.advance(Duration::from_secs(20));
        assert_eq!(registry.sweep(), 1, "rested 60 s since its last use");
    }

    #[test]
    fn a_fixed_quota_rests_for_the_default_window() {
        let (registry, clock) = registry();
        let classic = RetryConfig::aws_classic().build().expect("valid");
        let scope = declare_with(registry, &clock, "a", &classic).0;
        retry(&scope);
        drop(scope);
        clock.advance(QUOTA_WINDOW - Duration::from_millis(1));
        assert_eq!(registry.sweep(), 0);
        clock.advance(Duration::from_millis(1));
        assert_eq!(registry.sweep(), 1);
    }

    #[test]
    fn a_second_declaration_with_other_settings_conflicts_once_reported() {
        let (registry, clock) = registry();
        let first = declare(registry, &clock, "a");
        let five = RetryConfig::builder()
            .max_attempts(5)
            .build()
            .expect("valid");
        let (second, conflict) = declare_with(registry, &clock, "a", &five);
        assert!(second.same_as(&first), "the scope as it is");
        let conflict = conflict.expect("a conflict");
        assert_eq!(conflict.settings(), ["max_attempts"]);
        assert!(registry.first_report(&conflict));
        assert!(!registry.first_report(&conflict), "logged once per place");
        let slower = RetryConfig::builder()
            .initial_backoff(Duration::from_secs(1))
            .build()
            .expect("valid");
        assert!(declare_with(registry, &clock, "a", &slower).1.is_none());
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::clock::ManualClock;

    fn declare(registry: &'static Registry<ScopeInner>, name: &str) -> Scope {
        let clock: SharedClock = Arc::new(ManualClock::new());
        let declared = ScopeDeclaration::Named(Location::caller());
        Scope::declare_on(registry, name, &RetryConfig::default(), declared, || clock).0
    }

    /// The last handle of a scope with nothing to remember is dropped while another thread
    /// declares the name again: in every interleaving the other thread's handle is the name's
    /// scope while it holds it, and once it is dropped too, nothing is left.
    #[test]
    fn loom_a_scope_forgotten_while_its_name_is_declared_again() {
        loom::model(|| {
            let registry: &'static Registry<ScopeInner> = Box::leak(Box::default());
            let first = declare(registry, "a");
            let other = loom::thread::spawn(move || {
                let again = declare(registry, "a");
                let found = registry
                    .lookup("a")
                    .map(Scope::adopt)
                    .expect("held, so registered");
                assert!(found.same_as(&again));
            });
            drop(first);
            other.join().expect("no panic");
            assert!(registry.names().is_empty());
        });
    }
}
