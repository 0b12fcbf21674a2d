//! Scopes: the quota, rate limiter and counters that calls share.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use crate::adaptive::ClientRateLimiter;
use crate::observe::{Counter, ScopeCounters};
use crate::request_rate::RequestRate;
use crate::{RetryConfig, RetryQuota, ScopeStats, SharedClock, TokioClock};

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
    /// With a `quota_window`: the call rate that sizes the quota.
    traffic_quota: Option<TrafficQuota>,
}

/// A quota sized by traffic: one token per call of the last `window`, at least `floor`.
struct TrafficQuota {
    window: std::time::Duration,
    floor: u32,
    rate: RequestRate,
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
    /// use retry_core::{ManualClock, RetryConfig, Scope};
    /// use std::sync::Arc;
    /// let clock = Arc::new(ManualClock::new());
    /// let scope = Scope::with_clock("sim", &RetryConfig::default(), clock);
    /// assert_eq!(scope.name(), "sim");
    /// ```
    pub fn with_clock(name: &str, config: &RetryConfig, clock: SharedClock) -> Self {
        Self {
            inner: Arc::new(ScopeInner {
                name: name.into(),
                quota: RetryQuota::with_valid_refill(
                    config.quota_capacity(),
                    config.quota_refill_per_second(),
                    Arc::clone(&clock),
                ),
                limiter: ClientRateLimiter::new(clock.now()),
                counters: ScopeCounters::default(),
                traffic_quota: config.quota_window().map(|window| TrafficQuota {
                    window,
                    // Every scope can afford at least one retry of any kind.
                    floor: config
                        .retry_cost()
                        .max(config.timeout_retry_cost())
                        .max(config.throttling_retry_cost()),
                    rate: RequestRate::new(clock.now()),
                }),
                clock,
            }),
        }
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
    ///
    /// ```
    /// # use retry_core::{RetryConfig, Scope};
    /// assert_eq!(Scope::new("orders", &RetryConfig::default()).name(), "orders");
    /// ```
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The retry quota.
    ///
    /// ```
    /// # use retry_core::{RetryConfig, Scope};
    /// assert_eq!(Scope::new("q", &RetryConfig::default()).quota().level(), 500);
    /// ```
    pub fn quota(&self) -> &RetryQuota {
        &self.inner.quota
    }

    /// The adaptive rate limiter (used by adaptive strategies only).
    ///
    /// ```
    /// # use retry_core::{RetryConfig, Scope};
    /// assert!(!Scope::new("l", &RetryConfig::default()).limiter().is_enabled());
    /// ```
    pub fn limiter(&self) -> &Arc<ClientRateLimiter> {
        &self.inner.limiter
    }

    /// The clock every time reading of this scope goes through.
    ///
    /// ```
    /// # use retry_core::{RetryConfig, Scope};
    /// let scope = Scope::new("c", &RetryConfig::default());
    /// let _now = scope.clock().now();
    /// ```
    pub fn clock(&self) -> &SharedClock {
        &self.inner.clock
    }

    /// Counters and levels, for metrics.
    ///
    /// ```
    /// # use retry_core::{RetryConfig, Scope};
    /// assert_eq!(Scope::new("s", &RetryConfig::default()).stats().retries, 0);
    /// ```
    pub fn stats(&self) -> ScopeStats {
        let inner = &self.inner;
        inner.counters.snapshot(
            inner.quota.level(),
            inner.quota.capacity(),
            inner.limiter.stats(),
        )
    }

    /// Whether two handles share one scope.
    ///
    /// ```
    /// # use retry_core::{RetryConfig, Scope};
    /// let a = Scope::new("a", &RetryConfig::default());
    /// assert!(a.same_as(&a.clone()));
    /// ```
    pub fn same_as(&self, other: &Scope) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Counts a call; with a `quota_window`, resizes the quota when the call rate is updated.
    #[inline]
    pub(crate) fn record_call(&self) {
        if let Some(traffic) = &self.inner.traffic_quota {
            self.record_traffic(traffic);
        }
    }

    /// `record_call` with a traffic-sized quota, out of line (a clock read and a rate update).
    #[inline(never)]
    fn record_traffic(&self, traffic: &TrafficQuota) {
        let inner = &self.inner;
        if let Some(rate) = traffic.rate.record(inner.clock.now()) {
            let tokens = (rate * traffic.window.as_secs_f64()).min(f64::from(u32::MAX)) as u32;
            inner.quota.set_capacity(tokens.max(traffic.floor));
        }
    }

    #[inline]
    pub(crate) fn count(&self, counter: Counter) {
        self.inner.counters.add(counter);
    }

    /// Counts `attempts` sent by a call that ended, beyond the first attempt of a success.
    pub(crate) fn count_attempts(&self, attempts: u32) {
        self.inner.counters.add_attempts(attempts);
    }

    /// Counts a call that ended in failure after sending `attempts` attempts.
    pub(crate) fn count_failure(&self, attempts: u32) {
        self.count(Counter::Failure);
        self.count_attempts(attempts);
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
