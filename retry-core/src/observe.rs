//! Observability: the tracing events of the retry quota (the per-scope counters readable at run
//! time are [`ScopeStats`](crate::scope::ScopeStats)).
//!
//! Every event uses the target `retry_core`. Defined here and emitted by the standard strategy
//! (and so by adaptive mode too): `debug` "retrying" for each retry granted (scope, attempt —
//! the attempt that failed, as [`RetryEvent::attempt`](crate::RetryEvent::attempt) — kind, delay,
//! quota level), and `warn` "retry quota exhausted" when a scope's quota refuses a
//! retry (scope, cost, level). Emitted where they are decided: `warn` "throttled: client-side
//! rate limiting engaged" by the adaptive strategy when its scope's rate limiter turns on
//! (scope, fill rate), `debug` "not retrying" by the retry loop when a call stops (attempt,
//! reason), and `error` "invalid `#[retryable]` configuration" by the code `#[retryable]`
//! generates, should the runtime reject what the macro accepted.

use std::time::Duration;

use crate::classify::ErrorKind;

/// The event of a retry granted after attempt number `attempt` failed (1 for the first), the
/// number the `on_retry` hook is given.
pub(crate) fn retrying(
    scope: &str,
    attempt: u32,
    kind: ErrorKind,
    delay: Duration,
    quota: impl FnOnce() -> u32,
) {
    tracing::debug!(
        target: "retry_core",
        scope,
        attempt,
        kind = kind.as_str(),
        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
        quota = quota(),
        "retrying"
    );
}

/// The event of a retry the quota refused: it cost `cost` and the quota held `level`.
pub(crate) fn quota_exhausted(scope: &str, cost: u32, level: u32) {
    tracing::warn!(
        target: "retry_core",
        scope,
        cost,
        level,
        "retry quota exhausted: not retrying"
    );
}
