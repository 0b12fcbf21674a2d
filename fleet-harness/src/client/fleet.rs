//! Fleet mode's side of a client: the scope attached to the fleet on the harness's
//! `redis-server` before the first call (`Fleet::connect(..).start()` then `attach`, as an
//! application does at start-up), and the lease's state read for the reports.

use retry_core::fleet::{Fleet, FleetStats, FleetStatus};
use retry_core::strategy::ConfiguredStrategy;

use super::ClientOptions;
use crate::phase_spec::Mode;
use crate::wire::{FleetSecond, LeaseState};

/// The prefix of the harness's keys in the store.
pub const KEY_PREFIX: &str = "harness:";

/// The process's membership of the fleet, kept for as long as it calls (dropping it would
/// stop the sync task).
#[derive(Debug)]
pub struct FleetLink {
    _fleet: Fleet,
}

/// Attaches the scope in fleet mode (`None` in local mode). The store unreachable at start
/// is not an error (the library logs it and the scope runs on local limits until the store
/// answers); a wrong URL, a refused password or a store without scripting is.
pub async fn join(options: &ClientOptions) -> Result<Option<FleetLink>, String> {
    if options.mode == Mode::Local {
        return Ok(None);
    }
    let fail = |error: retry_core::fleet::FleetError| format!("client {}: {error}", options.index);
    let url = options
        .redis_url
        .as_deref()
        .ok_or_else(|| format!("client {}: fleet mode needs --redis-url", options.index))?;
    let mut builder = Fleet::connect(url).map_err(fail)?.prefix(KEY_PREFIX);
    if let Some(interval) = options.sync_interval {
        builder = builder.sync_interval(interval);
    }
    let fleet = builder.start().await.map_err(fail)?;
    // The scope's settings are those `strategy_for` declares it with, after this.
    fleet.attach(&options.scope).map_err(fail)?;
    Ok(Some(FleetLink { _fleet: fleet }))
}

impl FleetLink {
    /// The lease's state and figures now.
    pub fn second(&self, strategy: &ConfiguredStrategy) -> FleetSecond {
        let stats: FleetStats = strategy.scope().stats().fleet.unwrap_or_default();
        FleetSecond {
            lease: match stats.status {
                FleetStatus::Connecting => LeaseState::Connecting,
                FleetStatus::Live => LeaseState::Live,
                FleetStatus::Fallback => LeaseState::Fallback,
                FleetStatus::Conflict => LeaseState::Conflict,
                _ => LeaseState::Detached,
            },
            send_rate: stats.send_rate,
        }
    }
}
