//! Where a fleet scope stands, as [`ScopeStats::fleet`](crate::scope::ScopeStats::fleet) shows
//! it: whether its lease is live, and the figures of the last lease.

use std::time::Duration;

use super::error::FleetErrorKind;

/// Whether a fleet scope's calls follow the fleet's lease or local limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FleetStatus {
    /// Attached, no lease received yet (the store not reached since start-up): the scope runs
    /// on its local limits.
    Connecting,
    /// The lease is live: the quota holds the process's share of the fleet's tokens and the
    /// limiter (when the fleet limiter is engaged) sends at its share of the fleet's rate.
    Live,
    /// The lease expired (no successful sync for a lease's length): local limits at a safe
    /// share of the last fleet figures (the quota capped at the fleet's cap over its live
    /// processes if the last lease found the fleet failing, never under a young scope's
    /// tokens while the scope is younger than its window; local if it found it healthy; the
    /// limiter from the last share of the fleet's rate). Live again at the next successful
    /// sync.
    Fallback,
    /// The store keeps other settings for this scope (another process attached it with another
    /// configuration or other fleet options): the scope runs on its local limits, and a warning
    /// named the settings that differ ([`FleetStats::conflict`]).
    Conflict,
    /// The scope's `Fleet` was dropped: nothing syncs it anymore. Local limits, at the safe
    /// share of the last fleet figures if it had a lease.
    Detached,
}

/// A fleet scope's figures: its status and what its last lease said.
///
/// ```
/// use retry_core::fleet::{FleetStats, FleetStatus};
/// let stats = FleetStats::default();
/// assert_eq!(stats.status, FleetStatus::Connecting);
/// assert_eq!(stats.last_sync_age, None);
/// assert_eq!(stats.last_error, None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct FleetStats {
    /// Whether the lease is live.
    pub status: FleetStatus,
    /// Tokens the last lease left the process holding (the quota's level then).
    pub lease_tokens: u32,
    /// The fleet's cap at the last lease, in tokens (0 before any).
    pub fleet_cap: u64,
    /// The processes the store counted as live at the last lease (0 before any).
    pub live_processes: u64,
    /// The fleet's send rate at the last lease, requests per second, while the fleet limiter
    /// is engaged.
    pub fleet_rate: Option<f64>,
    /// This process's share of it, requests per second: the limiter's fill rate while the
    /// lease is live and in fallback (its share as it is, below 0.5/s too; without a share the
    /// AWS SDKs' floor of 0.5/s, or the fleet's rate over its live processes if less; raised at
    /// most 1.25x per lease, the share at most 1.1x and only once three leases in a row counted
    /// about as many live processes as the one before, within a twentieth; or to the fleet's
    /// rate over its live processes unless the lease counts under half of the last one's).
    /// The process's first throttle under a lease steps the limiter down to 0.7 times it until
    /// the next lease; this figure stays the lease's.
    pub send_rate: Option<f64>,
    /// How long ago the last successful sync started; `None` before any.
    pub last_sync_age: Option<Duration>,
    /// With [`FleetStatus::Conflict`]: the first setting that differs from the store's (the
    /// warning lists them all).
    pub conflict: Option<&'static str>,
    /// The kind of the last error a sync of this scope met, kept after later syncs succeed
    /// (compare [`last_error_age`](Self::last_error_age) with
    /// [`last_sync_age`](Self::last_sync_age)); `None` if none failed. The whole error:
    /// [`Fleet::last_error`](super::Fleet::last_error), and the `fleet sync failed` warning.
    pub last_error: Option<FleetErrorKind>,
    /// How long ago that sync started.
    pub last_error_age: Option<Duration>,
    /// The syncs of this scope whose store dropped garbage since it was attached: a stored
    /// record or state no process could have written (out of the bounds the protocol checks on
    /// a report, or of another type or form than the store's script writes), dropped and
    /// re-learned from the processes' reports ([`Lease::dropped`](super::protocol::Lease)).
    /// Each is also a `fleet store dropped garbage` warning and a `retry.fleet.garbage` count.
    pub garbage_dropped: u64,
}

impl Default for FleetStats {
    fn default() -> Self {
        Self {
            status: FleetStatus::Connecting,
            lease_tokens: 0,
            fleet_cap: 0,
            live_processes: 0,
            fleet_rate: None,
            send_rate: None,
            last_sync_age: None,
            conflict: None,
            last_error: None,
            last_error_age: None,
            garbage_dropped: 0,
        }
    }
}
