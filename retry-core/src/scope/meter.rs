//! What a scope reports to the `metrics` facade (feature `metrics`): one handle per metric and
//! label value, made once when the scope is made, so that no call looks a metric up. Without the
//! feature the meter is empty and every report compiles to nothing.
//!
//! Values that cost something to compute (the quota's level reads the clock) are passed as
//! closures, called only with the feature on.

use std::time::Duration;

use super::outcome::CallOutcome;
use crate::classify::ErrorKind;

/// The metric handles of one scope (feature `metrics`).
#[cfg(feature = "metrics")]
#[derive(Debug)]
pub(crate) struct Meter {
    /// `retry.calls`, one per [`CallOutcome::ALL`].
    calls: [metrics::Counter; 9],
    attempts: metrics::Counter,
    /// `retry.retries`, one per [`ErrorKind::ALL`] (a kind's handle is at `kind as usize`).
    retries: [metrics::Counter; 5],
    attempts_per_call: metrics::Histogram,
    backoff_delay: metrics::Histogram,
    /// `retry.limiter.wait`, registered at the first wait for a send permit: a scope that never
    /// waits (standard mode, adaptive mode before its limiter engages) shows no histogram
    /// rather than an empty one.
    limiter_wait: std::sync::OnceLock<metrics::Histogram>,
    /// `retry.quota.level` and `retry.quota.capacity`, set when the scope is made; `None` in a
    /// scope without a quota (`Quota::Off`): a gauge with no meaning is never recorded.
    quota: Option<QuotaGauges>,
    /// `retry.limiter.rate`, registered when the limiter first reports a rate (it engaged): a
    /// scope whose limiter never engages (standard mode, adaptive mode before a throttle) has
    /// no send rate, and shows none rather than 0.
    limiter_rate: std::sync::OnceLock<metrics::Gauge>,
    /// The `scope` label, for the handles registered late.
    scope: String,
}

/// The quota's gauges.
#[cfg(feature = "metrics")]
#[derive(Debug)]
struct QuotaGauges {
    level: metrics::Gauge,
    capacity: metrics::Gauge,
}

/// Without the feature: nothing to report to.
#[cfg(not(feature = "metrics"))]
#[derive(Debug)]
pub(crate) struct Meter;

#[cfg(feature = "metrics")]
impl Meter {
    /// The handles of the scope `scope`, registered with the recorder installed now (the facade's
    /// rule: with none, they are no-ops for good), and the metrics' units and descriptions. The
    /// quota's gauges only for a scope with a quota (`metered_quota`); set them at once
    /// ([`quota`](Self::quota)), so that they are true from the scope's creation.
    pub(crate) fn new(scope: &str, metered_quota: bool) -> Self {
        use crate::metrics::names::*;
        use metrics::{counter, gauge, histogram};
        crate::metrics::describe::describe();
        let scope = scope.to_owned();
        let labeled = |key: &'static str, value: &'static str| {
            [(SCOPE, scope.clone()), (key, value.to_owned())]
        };
        Self {
            calls: CallOutcome::ALL
                .map(|outcome| counter!(CALLS, &labeled(OUTCOME, outcome.as_str()))),
            attempts: counter!(ATTEMPTS, SCOPE => scope.clone()),
            retries: ErrorKind::ALL.map(|kind| counter!(RETRIES, &labeled(REASON, kind.as_str()))),
            attempts_per_call: histogram!(ATTEMPTS_PER_CALL, SCOPE => scope.clone()),
            backoff_delay: histogram!(BACKOFF_DELAY, SCOPE => scope.clone()),
            limiter_wait: std::sync::OnceLock::new(),
            quota: metered_quota.then(|| QuotaGauges {
                level: gauge!(QUOTA_LEVEL, SCOPE => scope.clone()),
                capacity: gauge!(QUOTA_CAPACITY, SCOPE => scope.clone()),
            }),
            limiter_rate: std::sync::OnceLock::new(),
            scope,
        }
    }

    /// A call ended with `outcome` after sending `attempts` attempts.
    #[inline(always)]
    pub(crate) fn call_ended(&self, outcome: CallOutcome, attempts: u32) {
        self.calls[outcome.index()].increment(1);
        self.attempts.increment(u64::from(attempts));
        self.attempts_per_call.record(f64::from(attempts));
    }

    /// A retry for `kind` was granted, to be sent after `delay`.
    pub(crate) fn retry_granted(&self, kind: ErrorKind, delay: Duration) {
        self.retries[kind as usize].increment(1);
        self.backoff_delay.record(delay.as_secs_f64());
    }

    /// The quota's level and capacity now, as `levels` gives them (not called in a scope
    /// without a quota): when the scope is made, then on the retry path.
    pub(crate) fn quota(&self, levels: impl FnOnce() -> (u32, u32)) {
        let Some(gauges) = &self.quota else {
            return;
        };
        let (level, capacity) = levels();
        gauges.level.set(f64::from(level));
        gauges.capacity.set(f64::from(capacity));
    }

    /// An attempt got its send permit after waiting `wait` for it.
    pub(crate) fn limiter_waited(&self, wait: Duration) {
        let histogram = match self.limiter_wait.get() {
            Some(histogram) => histogram,
            None => self.register_late(&self.limiter_wait, |scope| {
                use crate::metrics::names::{LIMITER_WAIT, SCOPE};
                metrics::histogram!(LIMITER_WAIT, SCOPE => scope)
            }),
        };
        histogram.record(wait.as_secs_f64());
    }

    /// The engaged rate limiter's rate may have changed: `rate` gives it now. The first report
    /// registers the gauge (out of line: once per scope), with the recorder installed then.
    pub(crate) fn limiter_rate(&self, rate: impl FnOnce() -> f64) {
        let gauge = match self.limiter_rate.get() {
            Some(gauge) => gauge,
            None => self.register_late(&self.limiter_rate, |scope| {
                use crate::metrics::names::{LIMITER_RATE, SCOPE};
                metrics::gauge!(LIMITER_RATE, SCOPE => scope)
            }),
        };
        gauge.set(rate());
    }

    /// Registers the handle `register` makes for this scope's label into `cell` (out of line:
    /// once per scope), with the recorder installed then.
    #[cold]
    #[inline(never)]
    fn register_late<'a, T>(
        &self,
        cell: &'a std::sync::OnceLock<T>,
        register: impl FnOnce(String) -> T,
    ) -> &'a T {
        cell.get_or_init(|| register(self.scope.clone()))
    }
}

#[cfg(not(feature = "metrics"))]
impl Meter {
    /// No handles.
    #[inline(always)]
    pub(crate) fn new(_scope: &str, _metered_quota: bool) -> Self {
        Meter
    }

    /// Nothing reported.
    #[inline(always)]
    pub(crate) fn call_ended(&self, _outcome: CallOutcome, _attempts: u32) {}

    /// Nothing reported.
    #[inline(always)]
    pub(crate) fn retry_granted(&self, _kind: ErrorKind, _delay: Duration) {}

    /// Nothing reported (`levels` is not called).
    #[inline(always)]
    pub(crate) fn quota(&self, _levels: impl FnOnce() -> (u32, u32)) {}

    /// Nothing reported.
    #[inline(always)]
    pub(crate) fn limiter_waited(&self, _wait: Duration) {}

    /// Nothing reported (`rate` is not called).
    #[inline(always)]
    pub(crate) fn limiter_rate(&self, _rate: impl FnOnce() -> f64) {}
}
