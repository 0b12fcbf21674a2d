//! Fleet mode's side of a client: the scopes attached to the fleet on the harness's store (one
//! `redis-server`, or a Redis Cluster) before the first call (`Fleet::connect(..).start()` then
//! `attach`, as an application does at start-up), and the leases' state read for the reports.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use retry_core::Scope;
use retry_core::fleet::{Fleet, FleetStats, FleetStatus};
use retry_core::strategy::ConfiguredStrategy;
use tokio::time::Instant;

use super::ClientOptions;
use crate::phase_spec::Mode;
use crate::wire::{FleetSecond, LeaseState};

/// The prefix of the harness's keys in the store.
pub const KEY_PREFIX: &str = "harness:";

/// How often a client looks at its leases, to tell when they all became live (a second's
/// report has the time to this precision).
const WATCH_EVERY: Duration = Duration::from_millis(5);

/// The process's membership of the fleet, kept for as long as it calls (dropping it would
/// stop the sync task), and when its leases last all became live.
#[derive(Debug)]
pub struct FleetLink {
    _fleet: Fleet,
    live_since: Arc<Mutex<Option<Instant>>>,
    watch: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for FleetLink {
    fn drop(&mut self) {
        if let Some(watch) = &self.watch {
            watch.abort();
        }
    }
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
    // The scopes' settings are those `strategy_for` declares them with, after this.
    let names = scope_names(&options.scope, options.scopes);
    for name in &names {
        fleet.attach(name).map_err(fail)?;
    }
    let live_since = Arc::new(Mutex::new(None));
    let watch = options
        .watch_leases
        .then(|| tokio::spawn(watch_leases(names, Arc::clone(&live_since))));
    Ok(Some(FleetLink {
        _fleet: fleet,
        live_since,
        watch,
    }))
}

/// Looks at the leases of the scopes called `names` every [`WATCH_EVERY`]: `live_since` holds
/// when they last all became live, `None` while one is not (or is not declared yet).
async fn watch_leases(names: Vec<String>, live_since: Arc<Mutex<Option<Instant>>>) {
    loop {
        let all_live = names.iter().all(|name| {
            Scope::lookup(name)
                .and_then(|scope| scope.stats().fleet)
                .is_some_and(|stats| stats.status == FleetStatus::Live)
        });
        {
            let mut since = live_since.lock().unwrap_or_else(PoisonError::into_inner);
            match (all_live, *since) {
                (true, None) => *since = Some(Instant::now()),
                (false, Some(_)) => *since = None,
                _ => {}
            }
        }
        tokio::time::sleep(WATCH_EVERY).await;
    }
}

impl FleetLink {
    /// The leases' state and figures now: live if every scope's lease is, else the first
    /// other state; the send rates added up; when they all became live, in milliseconds from
    /// `origin`.
    pub fn second(&self, strategies: &[ConfiguredStrategy], origin: Instant) -> FleetSecond {
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
        let live_since = *self
            .live_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        FleetSecond {
            lease,
            send_rate,
            live_since_ms: live_since.map(|since| {
                let after = since.saturating_duration_since(origin).as_millis();
                u64::try_from(after).unwrap_or(u64::MAX)
            }),
        }
    }
}
