//! The sync task: one tokio task per [`Fleet`](super::Fleet) (per process) for all its fleet
//! scopes. Once per sync interval, jittered by ±10 % so that a fleet's processes spread their
//! syncs, it builds every scope's report, sends them in one pipeline per node (one `EVALSHA`
//! per scope; a cluster's scopes grouped by the master of their slot) within the store's
//! timeouts, and applies the replies; a failed sync's error is kept (the scope's
//! [`FleetStats::last_error`](super::FleetStats::last_error), the fleet's
//! [`Fleet::last_error`](super::Fleet::last_error)). Calls never wait on it: they read the
//! scopes' quotas, limiters and fleet links, which the task updates.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;

use super::error::FleetError;
use super::keys::ScopeKeys;
use super::lease::LeaseHolder;
use super::protocol::{Report, Settings};
use super::redis::RedisStore;

/// How far a sync interval is jittered either way, as a fraction of it.
pub(crate) const INTERVAL_JITTER: f64 = 0.1;

/// What the sync task and its `Fleet` share: the store, the scopes and a bell to ring for a
/// sync now (a scope attached).
#[derive(Debug)]
pub(crate) struct Syncer {
    store: RedisStore,
    interval: Duration,
    scopes: Mutex<Vec<Synced>>,
    wake: Notify,
    last_error: Mutex<Option<FleetError>>,
}

/// One fleet scope: its keys and its holder.
#[derive(Debug)]
struct Synced {
    keys: ScopeKeys,
    holder: LeaseHolder,
}

impl Syncer {
    /// A syncer of no scope yet.
    pub(crate) fn new(store: RedisStore, interval: Duration) -> Self {
        Self {
            store,
            interval,
            scopes: Mutex::new(Vec::new()),
            wake: Notify::new(),
            last_error: Mutex::new(None),
        }
    }

    /// The last error a sync met.
    pub(crate) fn last_error(&self) -> Option<FleetError> {
        self.last_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The store.
    pub(crate) fn store(&self) -> &RedisStore {
        &self.store
    }

    /// Adds a scope, and has it synced now.
    pub(crate) fn add(&self, keys: ScopeKeys, holder: LeaseHolder) {
        self.lock().push(Synced { keys, holder });
        self.wake.notify_one();
    }

    /// Detaches every scope (their `Fleet` is gone).
    pub(crate) fn detach_all(&self) {
        let detached: Vec<Synced> = self.lock().drain(..).collect();
        drop(detached);
    }

    /// Syncs every scope once per interval, jittered, and at once when a scope is added.
    pub(crate) async fn run(self: Arc<Self>) {
        loop {
            self.sync_all().await;
            let wait = self
                .interval
                .mul_f64(1.0 - INTERVAL_JITTER + 2.0 * INTERVAL_JITTER * fastrand::f64());
            // Woken early by an attach, or the interval is over: either way, sync.
            let _ = tokio::time::timeout(wait, self.wake.notified()).await;
        }
    }

    /// One sync of every scope: one pipeline to the store, then each reply applied (or the
    /// failure noted) by the scope's holder.
    pub(crate) async fn sync_all(&self) {
        let wall_ms = unix_ms();
        let batch: Vec<(ScopeKeys, Settings, Report, Duration)> = self
            .lock()
            .iter_mut()
            .map(|synced| {
                let now = synced.holder.scope().clock().now();
                let report = synced.holder.report(now, wall_ms);
                (synced.keys.clone(), *synced.holder.settings(), report, now)
            })
            .collect();
        if batch.is_empty() {
            return;
        }
        let refs: Vec<(&ScopeKeys, &Settings, &Report)> = batch
            .iter()
            .map(|(keys, settings, report, _)| (keys, settings, report))
            .collect();
        let results = self.store.sync_many(&refs).await;
        let mut scopes = self.lock();
        for (index, (keys, _, report, started)) in batch.iter().enumerate() {
            // Scopes are only ever appended (or all detached): the index finds the same one.
            let Some(synced) = scopes.get_mut(index).filter(|synced| synced.keys == *keys) else {
                continue;
            };
            let holder = &mut synced.holder;
            let now = holder.scope().clock().now();
            let missing = missing_reply();
            let error = match results.as_ref().map(|results| results.get(index)) {
                Ok(Some(Ok(reply))) => {
                    holder.apply(reply, now);
                    continue;
                }
                Ok(Some(Err(error))) | Err(error) => error,
                Ok(None) => &missing,
            };
            holder.failed_with(report, error, now);
            holder
                .scope()
                .fleet_link()
                .note_error(error.kind(), *started);
            *self
                .last_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(error.clone());
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Synced>> {
        self.scopes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The error of a pipeline that returned fewer results than scopes.
fn missing_reply() -> FleetError {
    FleetError::Server {
        reason: "the pipeline returned fewer results than scopes".into(),
    }
}

/// The process's clock in Unix milliseconds (0 before 1970).
fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        })
}
