//! What a fleet scope reports to the `metrics` facade (feature `metrics`): its status, its
//! lease's tokens, the fleet's rate and this process's share of it, the live processes, and its
//! syncs by result. Recorded by the sync task after each sync (once per sync interval), never
//! by a call. Without the feature the meter is empty.

use super::error::FleetError;
use super::protocol::Reply;
use super::status::FleetStats;
#[cfg(feature = "metrics")]
use super::status::FleetStatus;

/// How one sync of a scope ended, as the `result` label of `retry.fleet.syncs` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SyncResult {
    /// The store granted a lease.
    Lease,
    /// The store keeps other settings for the scope.
    Conflict,
    /// The store's reply was out of the protocol's bounds: refused, the lease left as it was.
    Refused,
    /// The sync failed (the store unreachable, a timeout, a lost connection, an error reply).
    Failed,
}

impl SyncResult {
    /// Every result, in the order of the `retry.fleet.syncs` handles.
    #[cfg(feature = "metrics")]
    const ALL: [SyncResult; 4] = [Self::Lease, Self::Conflict, Self::Refused, Self::Failed];

    /// The result of a sync that got `reply`.
    pub(crate) fn of(reply: Result<&Reply, &FleetError>) -> Self {
        match reply {
            Ok(Reply::Lease(_)) => Self::Lease,
            Ok(Reply::Conflict(_)) => Self::Conflict,
            Err(FleetError::Protocol(_)) => Self::Refused,
            Err(_) => Self::Failed,
        }
    }

    /// The label's value.
    #[cfg(feature = "metrics")]
    fn as_str(self) -> &'static str {
        match self {
            Self::Lease => "lease",
            Self::Conflict => "conflict",
            Self::Refused => "refused",
            Self::Failed => "failed",
        }
    }
}

/// The statuses, in the order of the `retry.fleet.status` handles, with their label values.
#[cfg(feature = "metrics")]
const STATUSES: [(FleetStatus, &str); 5] = [
    (FleetStatus::Connecting, "connecting"),
    (FleetStatus::Live, "live"),
    (FleetStatus::Fallback, "fallback"),
    (FleetStatus::Conflict, "conflict"),
    (FleetStatus::Detached, "detached"),
];

/// The metric handles of one fleet scope (feature `metrics`).
#[cfg(feature = "metrics")]
#[derive(Debug)]
pub(crate) struct FleetMeter {
    /// `retry.fleet.syncs`, one per [`SyncResult::ALL`].
    syncs: [metrics::Counter; 4],
    /// `retry.fleet.status`, one per [`STATUSES`]: 1 for the status in force, 0 for the others.
    status: [metrics::Gauge; 5],
    lease_tokens: metrics::Gauge,
    fleet_rate: metrics::Gauge,
    share: metrics::Gauge,
    processes: metrics::Gauge,
    /// `retry.fleet.garbage`: set to [`FleetStats::garbage_dropped`] after each sync.
    garbage: metrics::Counter,
}

/// Without the feature: nothing to report to.
#[cfg(not(feature = "metrics"))]
#[derive(Debug)]
pub(crate) struct FleetMeter;

#[cfg(feature = "metrics")]
impl FleetMeter {
    /// The handles of the fleet scope `scope`, with the recorder installed now.
    pub(crate) fn new(scope: &str) -> Self {
        use crate::metrics::names::*;
        use metrics::{counter, gauge};
        crate::metrics::describe::describe();
        let scope = scope.to_owned();
        let labeled = |key: &'static str, value: &'static str| {
            [(SCOPE, scope.clone()), (key, value.to_owned())]
        };
        Self {
            syncs: SyncResult::ALL
                .map(|result| counter!(FLEET_SYNCS, &labeled(RESULT, result.as_str()))),
            status: STATUSES.map(|(_, name)| gauge!(FLEET_STATUS, &labeled(STATUS, name))),
            lease_tokens: gauge!(FLEET_LEASE_TOKENS, SCOPE => scope.clone()),
            fleet_rate: gauge!(FLEET_RATE, SCOPE => scope.clone()),
            share: gauge!(FLEET_SHARE, SCOPE => scope.clone()),
            processes: gauge!(FLEET_PROCESSES, SCOPE => scope.clone()),
            garbage: counter!(FLEET_GARBAGE, SCOPE => scope),
        }
    }

    /// A sync ended with `result`, the scope's figures now being `stats`.
    pub(crate) fn synced(&self, result: SyncResult, stats: &FleetStats) {
        // `ALL` lists the results in their declaration order.
        self.syncs[result as usize].increment(1);
        self.show_status(stats.status);
        self.lease_tokens.set(f64::from(stats.lease_tokens));
        self.fleet_rate.set(stats.fleet_rate.unwrap_or(0.0));
        self.share.set(stats.send_rate.unwrap_or(0.0));
        // Live processes are few enough for a double's 53 bits.
        self.processes.set(stats.live_processes as f64);
        self.garbage.absolute(stats.garbage_dropped);
    }

    /// The scope is detached: its status shows it, the other gauges as they were.
    pub(crate) fn detached(&self) {
        self.show_status(FleetStatus::Detached);
    }

    /// 1 on `status`'s gauge, 0 on the others'.
    fn show_status(&self, status: FleetStatus) {
        for ((known, _), gauge) in STATUSES.iter().zip(&self.status) {
            gauge.set(if *known == status { 1.0 } else { 0.0 });
        }
    }
}

#[cfg(not(feature = "metrics"))]
impl FleetMeter {
    /// No handles.
    pub(crate) fn new(_scope: &str) -> Self {
        FleetMeter
    }

    /// Nothing reported.
    pub(crate) fn synced(&self, _result: SyncResult, _stats: &FleetStats) {}

    /// Nothing reported.
    pub(crate) fn detached(&self) {}
}

#[cfg(all(test, feature = "metrics"))]
mod tests {
    use super::*;

    #[test]
    fn every_sync_result_indexes_its_counter() {
        for (index, result) in SyncResult::ALL.into_iter().enumerate() {
            assert_eq!(result as usize, index, "{result:?}");
        }
    }

    #[test]
    fn every_status_has_its_gauge() {
        let statuses = [
            FleetStatus::Connecting,
            FleetStatus::Live,
            FleetStatus::Fallback,
            FleetStatus::Conflict,
            FleetStatus::Detached,
        ];
        for status in statuses {
            assert!(
                STATUSES.iter().any(|(known, _)| *known == status),
                "{status:?}"
            );
        }
    }
}
