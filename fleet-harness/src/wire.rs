//! What a client process tells the harness once a second: one JSON object per line on its
//! standard output.

use serde::{Deserialize, Serialize};

/// One second of one client process, counted by when each call ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClientSecond {
    /// The client's index among the phase's processes.
    pub client: u32,
    /// The second of the phase (0 is the phase's first second).
    pub second: u64,
    /// Calls that ended in this second (successes, failures and sheds).
    pub calls: u64,
    /// Attempts sent in this second (each call's first and its retries).
    pub attempts: u64,
    /// Attempts answered 429 in this second.
    pub throttled: u64,
    /// Calls that ended in success.
    pub successes: u64,
    /// Calls that ended in failure after at least one attempt.
    pub failures: u64,
    /// Calls shed before their first attempt (adaptive mode's `max_wait`): never sent.
    pub shed: u64,
    /// The latency of each call that ended in this second and sent at least one attempt,
    /// in microseconds (merged across processes by the harness for its percentiles).
    pub latencies_us: Vec<u64>,
    /// The fleet scope's lease at the end of the second (`None` in local mode).
    pub fleet: Option<FleetSecond>,
}

/// A fleet scope's lease at the end of a second, as the library's `FleetStats` says it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FleetSecond {
    /// Where the lease stands.
    pub lease: LeaseState,
    /// This process's share of the fleet's send rate at the last lease (requests per second),
    /// while the fleet limiter is engaged.
    pub send_rate: Option<f64>,
    /// When the process's leases last all became live, in milliseconds from the phase's
    /// second 0 (to 5 ms; `None` while one is not live).
    #[serde(default)]
    pub live_since_ms: Option<u64>,
}

/// Where a process's fleet lease stands (the library's `FleetStatus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LeaseState {
    /// Attached, no lease yet (the store not reached since start-up): local limits.
    Connecting,
    /// Synced within the lease's life: the process runs on the fleet's figures.
    Live,
    /// No sync for longer than the lease's life: local limits at a safe share of the last
    /// fleet figures.
    Fallback,
    /// The store holds other settings for the scope.
    Conflict,
    /// The process's fleet was dropped.
    Detached,
}
