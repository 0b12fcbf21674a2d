//! Fleet mode's side of a client: the scopes attached to the fleet on the harness's store (one
//! `redis-server`, or a Redis Cluster) before the first call (`Fleet::connect(..).start()` then
//! `attach`, as an application does at start-up), and the leases' state read for the reports.

use retry_core::RetryConfig;
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

/// The names of `count` scopes called `base`: `base` alone, or `base-0`, `base-1`, ...
pub fn scope_names(base: &str, count: u32) -> Vec<String> {
    if count == 1 {
        vec![base.to_owned()]
    } else {
        (0..count).map(|n| format!("{base}-{n}")).collect()
    }
}

/// Attaches the scopes in fleet mode (`None` in local mode). The store unreachable at start
/// is not an error (the library logs it and the scopes run on local limits until the store
/// answers); a wrong URL, a refused password or a store without scripting is.
pub async fn join(
    options: &ClientOptions,
    config: &RetryConfig,
) -> Result<Option<FleetLink>, String> {
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
    for name in scope_names(&options.scope, options.scopes) {
        fleet.attach(&name, config).map_err(fail)?;
    }
    Ok(Some(FleetLink { _fleet: fleet }))
}

impl FleetLink {
    /// The leases' state and figures now: live if every scope's lease is, else the first
    /// other state; the send rates added up.
    pub fn second(&self, strategies: &[ConfiguredStrategy]) -> FleetSecond {
        let mut lease = LeaseState::Live;
        let mut send_rate = None;
        for strategy in strategies {
            let stats: FleetStats = strategy.scope().stats().fleet.unwrap_or_default();
            let state = match stats.status {
                FleetStatus::Connecting => LeaseState::Connecting,
                FleetStatus::Live => LeaseState::Live,
                FleetStatus::Fallback => LeaseState::Fallback,
                FleetStatus::Conflict => LeaseState::Conflict,
                _ => LeaseState::Detached,
            };
            if lease == LeaseState::Live {
                lease = state;
            }
            if let Some(rate) = stats.send_rate {
                *send_rate.get_or_insert(0.0) += rate;
            }
        }
        FleetSecond { lease, send_rate }
    }
}
