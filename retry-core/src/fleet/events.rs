//! Fleet mode's tracing events, target `retry_core` like the rest of the crate's:
//! * `warn` "fleet settings conflict" when the store keeps other settings for a scope (once per
//!   conflict: scope, the settings that differ);
//! * `warn` "fleet lease expired" when a scope falls back to local limits (scope, the
//!   fallback's quota cap and rate);
//! * `info` "fleet lease live" when a scope gets a lease after none, a fallback or a conflict;
//! * `warn` "fleet store unreachable at start-up" (url, reason): the scopes run on local limits
//!   until it answers;
//! * `warn` "fleet sync failed" (the error) at the first failure after a success, `debug` for
//!   the next ones;
//! * `warn` "fleet reply refused" (scope, the reply's error): out of the protocol's bounds (or
//!   the store's clock too far ahead of the process's), the lease is left as it was; at the
//!   first failed sync after a success, `debug` for the next ones;
//! * `warn` "fleet store dropped garbage" (scope, what: `a process record` or `the scope's
//!   state`) when a sync's store met a stored value no process could have written and dropped
//!   it (the state is re-learned from the processes' reports): once per run of such syncs,
//!   `debug` for the next ones of the run;
//! * `warn` "fleet leave failed" (the error) when a process shutting down could not tell the
//!   store it leaves (its share is then handed on as a crashed process's is, over about a
//!   lease);
//! * `error` "fleet scope not attached" (scope, the error) when a scope attached by name before
//!   it was declared is declared with settings a fleet cannot share (a fixed quota), or is
//!   attached to another fleet: once, until a scope of that name is linked.

use super::error::FleetError;

/// The store keeps settings that differ from the scope's in `differences`.
pub(crate) fn conflict(scope: &str, differences: &[&'static str], fingerprinted: &str) {
    tracing::warn!(
        target: "retry_core",
        scope,
        differences = %differences.join(", "),
        "fleet settings conflict: another process attached this scope with other settings; \
         local limits until they agree (`config_hash` stands for {fingerprinted})"
    );
}

/// A process shutting down could not tell the store it leaves.
pub(crate) fn leave_failed(error: &FleetError) {
    tracing::warn!(
        target: "retry_core",
        error = %error,
        "fleet leave failed: the store hands this process's share on over about a lease"
    );
}

/// A scope's lease expired: local limits within `cap` tokens (`None`: the local quota, the
/// fleet was healthy), the limiter from `rate`.
pub(crate) fn lease_expired(scope: &str, cap: Option<u32>, rate: Option<f64>) {
    match cap {
        Some(cap) => tracing::warn!(
            target: "retry_core",
            scope,
            quota_cap = cap,
            rate = ?rate,
            "fleet lease expired: local limits, the quota capped at a share of the failing fleet's \
             (at least a young scope's tokens while the scope is young)"
        ),
        None => tracing::warn!(
            target: "retry_core",
            scope,
            rate = ?rate,
            "fleet lease expired: local limits, the quota local (the fleet was healthy)"
        ),
    }
}

/// A scope has a lease again (or for the first time).
pub(crate) fn lease_live(scope: &str, tokens: u32, live: u64) {
    tracing::info!(target: "retry_core", scope, tokens, live, "fleet lease live");
}

/// The store could not be reached at start-up.
pub(crate) fn unreachable_at_start(url: &str, error: &FleetError) {
    tracing::warn!(
        target: "retry_core",
        url,
        %error,
        "fleet store unreachable at start-up: local limits until it answers"
    );
}

/// A sync failed; `first`: the first failure since a success.
pub(crate) fn sync_failed(error: &FleetError, first: bool) {
    if first {
        tracing::warn!(target: "retry_core", %error, "fleet sync failed");
    } else {
        tracing::debug!(target: "retry_core", %error, "fleet sync failed");
    }
}

/// The store's reply for `scope` was refused; `first`: the first failed sync since a success.
pub(crate) fn reply_refused(scope: &str, error: &FleetError, first: bool) {
    if first {
        tracing::warn!(
            target: "retry_core",
            scope,
            %error,
            "fleet reply refused: the lease is left as it was"
        );
    } else {
        tracing::debug!(
            target: "retry_core",
            scope,
            %error,
            "fleet reply refused: the lease is left as it was"
        );
    }
}

/// The store dropped garbage (`what`) while syncing `scope`; `first`: the first of a run of
/// such syncs.
pub(crate) fn garbage_dropped(scope: &str, what: &'static str, first: bool) {
    if first {
        tracing::warn!(
            target: "retry_core",
            scope,
            what,
            "fleet store dropped garbage: a stored value no process could have written (out of \
             the protocol's bounds, or not in the store script's form); the fleet's state is \
             re-learned from the processes' reports"
        );
    } else {
        tracing::debug!(target: "retry_core", scope, what, "fleet store dropped garbage");
    }
}

/// A scope attached by name before its declaration could not be linked when it was declared.
pub(crate) fn attach_refused(scope: &str, error: &FleetError) {
    tracing::error!(
        target: "retry_core",
        scope,
        %error,
        "fleet scope not attached: it runs on its local limits"
    );
}
