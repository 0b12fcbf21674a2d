//! Observability: the tracing events and spans of retries (the per-scope counters readable at run
//! time are [`ScopeStats`](crate::scope::ScopeStats); the metrics, with feature `metrics`, are
//! the `metrics` module's). The spans and the give-up event are documented for users in
//! [`attempt`](crate::attempt).
//!
//! Every event and span uses the target `retry_core`. Defined here: the span `retry.attempt` of
//! each attempt after the first (made by the drivers); `warn` "giving up" when a driver's
//! strategy refuses a retry (scope, attempts, `outcome` — [`RetryError::as_str`], the `outcome`
//! label of the `retry.calls` metric — and the last error); `debug` "retrying" for each retry
//! granted (scope, attempt — the attempt that failed, as
//! [`RetryEvent::attempt`](crate::RetryEvent::attempt) — `reason`, delay, quota level), and `debug`
//! "retry quota exhausted" when a scope's quota refuses a retry (scope, cost, level), both emitted
//! by the standard strategy (and so by adaptive mode too). Emitted where they are decided: `warn`
//! "throttled: client-side rate limiting engaged" by the adaptive strategy when its scope's rate
//! limiter turns on (scope, fill rate), `debug` "not retrying" by the drivers when a call stops
//! on an outcome that is not retried (attempt), and `error` "invalid `#[retryable]`
//! configuration" by the code `#[retryable]` generates, should the runtime reject what the macro
//! accepted.
//!
//! A retry's reason is one vocabulary everywhere: [`ErrorKind::as_str`], whose documentation has
//! the table (the span's `retry.reason`, the event's `reason`, the hook's
//! [`RetryEvent::reason`](crate::RetryEvent::reason), the metric's `reason` label).

use std::fmt::Debug;
use std::time::Duration;

use crate::attempt::Attempt;
use crate::classify::ErrorKind;
use crate::strategy::RetryError;

/// The event of a retry granted after attempt number `attempt` failed (1 for the first), the
/// number the `on_retry` hook is given.
pub(crate) fn retrying(
    scope: &str,
    attempt: u32,
    reason: ErrorKind,
    delay: Duration,
    quota: impl FnOnce() -> u32,
) {
    tracing::debug!(
        target: "retry_core",
        scope,
        attempt,
        reason = reason.as_str(),
        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        quota = quota(),
        "retrying"
    );
}

/// The event of a retry the quota refused: it cost `cost` and the quota held `level`. DEBUG: the
/// driver's "giving up" is the call's one warning.
pub(crate) fn quota_exhausted(scope: &str, cost: u32, level: u32) {
    tracing::debug!(
        target: "retry_core",
        scope,
        cost,
        level,
        "retry quota exhausted: not retrying"
    );
}

/// The one warning of a call whose retry the strategy refused after `attempts` attempts, for
/// `error`; `last` is the last attempt's error (`None` when a classifier retried an `Ok`).
#[cold]
#[inline(never)]
pub(crate) fn gave_up<E: Debug>(
    scope: Option<&str>,
    attempts: u32,
    error: &RetryError,
    last: Option<&E>,
) {
    tracing::warn!(
        target: "retry_core",
        scope = scope.unwrap_or(""),
        // Signed, as every integer below: OpenTelemetry's integers are i64, and
        // tracing-opentelemetry records an unsigned field as a string.
        attempts = i64::from(attempts),
        outcome = error.as_str(),
        error = last.map(tracing::field::debug),
        "giving up: {error}"
    );
}

/// The event of a call that stops after `attempt` on an outcome that is not retried.
#[cold]
#[inline(never)]
pub(crate) fn not_retried(attempt: u32) {
    tracing::debug!(target: "retry_core", attempt, "not retrying: the outcome is not retryable");
}

/// The span of `attempt`, a retry for `reason` sent after `delay`: a child of the current span,
/// with OpenTelemetry's `http.request.resend_count`.
#[cold]
#[inline(never)]
pub(crate) fn attempt_span(
    attempt: Attempt,
    reason: ErrorKind,
    delay: Duration,
    scope: Option<&str>,
) -> tracing::Span {
    tracing::info_span!(
        target: "retry_core",
        "retry.attempt",
        http.request.resend_count = i64::from(attempt.resend_count()),
        retry.attempt = i64::from(attempt.number()),
        retry.reason = reason.as_str(),
        retry.delay = delay.as_secs_f64(),
        retry.scope = scope,
    )
}

/// The span of `attempt`, a hedge sent `delay` after the copy before it: a child of the current
/// span, marked `retry.hedge = true`. A hedge has no `retry.reason`: it answers no failure.
#[cold]
#[inline(never)]
pub(crate) fn hedge_span(attempt: Attempt, delay: Duration, scope: Option<&str>) -> tracing::Span {
    tracing::info_span!(
        target: "retry_core",
        "retry.attempt",
        http.request.resend_count = i64::from(attempt.resend_count()),
        retry.attempt = i64::from(attempt.number()),
        retry.hedge = true,
        retry.delay = delay.as_secs_f64(),
        retry.scope = scope,
    )
}

/// The event of a hedge sent as attempt `attempt`, `delay` after the copy before it.
#[cold]
#[inline(never)]
pub(crate) fn hedging(scope: Option<&str>, attempt: u32, delay: Duration) {
    tracing::debug!(
        target: "retry_core",
        scope = scope.unwrap_or(""),
        attempt,
        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        "hedging: the copy in flight has not answered"
    );
}

/// The event of a hedge due but not sent, for `refusal`.
#[cold]
#[inline(never)]
pub(crate) fn not_hedged(scope: Option<&str>, refusal: crate::hedge::HedgeRefusal) {
    tracing::debug!(
        target: "retry_core",
        scope = scope.unwrap_or(""),
        refusal = refusal.as_str(),
        "{refusal}"
    );
}
