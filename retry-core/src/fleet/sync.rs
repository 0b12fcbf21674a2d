//! The sync task: one tokio task per [`Fleet`](super::Fleet) (per process) for all its fleet
//! scopes. Once per sync interval, jittered by ±10 % so that a fleet's processes spread their
//! syncs (±50 % after a sync that took in an attach, so that processes started together do
//! not sync in step), it builds every scope's report, sends them in one pipeline per node (one
//! `EVALSHA` per scope; a cluster's scopes grouped by the master of their slot) within the store's
//! timeouts, and applies the replies; a failed sync's error is kept (the scope's
//! [`FleetStats::last_error`](super::FleetStats::last_error), the fleet's
//! [`Fleet::last_error`](super::Fleet::last_error)). Calls never wait on it: they read the
//! scopes' quotas, limiters and fleet links, which the task updates.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use tokio::sync::Notify;

use super::error::FleetError;
use super::events;
use super::keys::ScopeKeys;
use super::lease::LeaseHolder;
use super::meter::{FleetMeter, SyncResult};
use super::options::FleetOptions;
use super::protocol::{ProcessId, Report, Settings};
use super::redis::RedisStore;
use crate::scope::Scope;

/// How far a sync interval is jittered either way, as a fraction of it.
pub(crate) const INTERVAL_JITTER: f64 = 0.1;

/// How far the interval after a sync that took in an attach is spread either way, as a
/// fraction of it. A deploy starts its processes within a second or two and each syncs as it
/// attaches; at ±10 % a sync their syncs drift apart by about 6 % of an interval per sync (a
/// random walk), and the store takes their reports in bunches for dozens of intervals. One
/// interval drawn from [0.5, 1.5] spreads them over a whole interval at once (measured in the
/// simulator's shape sweep: `docs/sim/fleet.md`, "The sync after attach spread over an
/// interval").
pub(crate) const ATTACH_SYNC_SPREAD: f64 = 0.5;

/// What the sync task and its `Fleet` share: the store, the scopes and a bell to ring for a
/// sync now (a scope attached).
#[derive(Debug)]
pub(crate) struct Syncer {
    store: RedisStore,
    interval: Duration,
    options: FleetOptions,
    process: ProcessId,
    scopes: Mutex<Scopes>,
    wake: Notify,
    last_error: Mutex<Option<FleetError>>,
}

/// The scopes a fleet syncs, and the names attached to it.
#[derive(Debug, Default)]
struct Scopes {
    /// The scopes synced: attached and live (declared, not forgotten).
    synced: Vec<Synced>,
    /// The names attached ([`Fleet::attach`](super::Fleet::attach)), declared or not.
    names: Vec<AttachedName>,
    /// Attaches made (names and scopes), each ringing the bell.
    attaches: u64,
    /// Attaches the latest sync took in: a bell rung for one of them wakes nothing.
    covered: u64,
}

/// One fleet scope: its keys and its holder.
#[derive(Debug)]
struct Synced {
    keys: ScopeKeys,
    holder: LeaseHolder,
    meter: FleetMeter,
    /// Since when the fleet's holder alone holds the scope, on its clock.
    alone_since: Option<Duration>,
}

/// A name attached to the fleet: linked whenever a scope of that name is declared.
#[derive(Debug)]
struct AttachedName {
    keys: ScopeKeys,
    /// Whether its scope is synced now.
    linked: bool,
    /// Whether the scope declared under it could not be linked (logged once).
    refused: bool,
}

impl Syncer {
    /// A syncer of no scope yet, for the fleet's `options` as process `process`.
    pub(crate) fn new(
        store: RedisStore,
        interval: Duration,
        options: FleetOptions,
        process: ProcessId,
    ) -> Self {
        Self {
            store,
            interval,
            options,
            process,
            scopes: Mutex::new(Scopes::default()),
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

    /// Attaches the scope called `keys.scope()`: linked now if it is declared (an error if it
    /// cannot be: a configuration a fleet cannot share, a scope attached to another fleet),
    /// otherwise when it is.
    pub(crate) fn attach_name(&self, keys: ScopeKeys) -> Result<(), FleetError> {
        let mut scopes = self.lock();
        if scopes.names.iter().any(|named| named.keys == keys) {
            return Err(FleetError::AlreadyAttached {
                scope: keys.scope().to_owned(),
            });
        }
        let mut named = AttachedName {
            keys,
            linked: false,
            refused: false,
        };
        if let Some(scope) = Scope::lookup(named.keys.scope()) {
            let synced = self.link(&scope, named.keys.clone())?;
            scopes.synced.push(synced);
            named.linked = true;
        }
        scopes.names.push(named);
        scopes.attaches += 1;
        drop(scopes);
        self.wake.notify_one();
        Ok(())
    }

    /// Attaches `scope` as it is (not by name), and has it synced now.
    pub(crate) fn attach_scope(&self, scope: &Scope, keys: ScopeKeys) -> Result<(), FleetError> {
        let synced = self.link(scope, keys)?;
        let mut scopes = self.lock();
        scopes.synced.push(synced);
        scopes.attaches += 1;
        drop(scopes);
        self.wake.notify_one();
        Ok(())
    }

    /// The names of the scopes synced now, sorted.
    pub(crate) fn synced_names(&self) -> Vec<String> {
        let mut names: Vec<String> = (self.lock().synced.iter())
            .map(|synced| synced.keys.scope().to_owned())
            .collect();
        names.sort();
        names
    }

    /// A holder of `scope` under its configuration's settings, and its meter.
    fn link(&self, scope: &Scope, keys: ScopeKeys) -> Result<Synced, FleetError> {
        let settings = Settings::from_config(scope.config(), &self.options)?;
        let holder = LeaseHolder::attach(scope, settings, self.process)?;
        Ok(Synced {
            meter: FleetMeter::new(scope.name()),
            keys,
            holder,
            alone_since: None,
        })
    }

    /// Detaches every scope (their `Fleet` is gone or shut down); the keys of those it synced.
    pub(crate) fn detach_all(&self) -> Vec<ScopeKeys> {
        let detached: Vec<Synced> = self.lock().synced.drain(..).collect();
        detached
            .iter()
            .map(|synced| {
                synced.meter.detached();
                synced.keys.clone()
            })
            .collect()
    }

    /// The process leaves the fleet of each scope of `keys` (it shuts down cleanly): one
    /// command per scope, one round trip per node, within the store's command timeout. The
    /// first error, if any (logged too).
    pub(crate) async fn leave(&self, keys: &[ScopeKeys]) -> Result<(), FleetError> {
        if keys.is_empty() {
            return Ok(());
        }
        let outcome = match self.store.leave(keys, self.process).await {
            Ok(answers) => answers
                .into_iter()
                .find_map(Result::err)
                .map_or(Ok(()), Err),
            Err(error) => Err(error),
        };
        if let Err(error) = &outcome {
            events::leave_failed(error);
        }
        outcome
    }

    /// Syncs every scope once per interval, jittered, and at once when a scope is added.
    pub(crate) async fn run(self: Arc<Self>) {
        loop {
            let took_in_attaches = self.sync_all().await;
            let wait = next_sync_wait(
                self.interval,
                self.options.lease(),
                took_in_attaches,
                fastrand::f64(),
            );
            let until = tokio::time::Instant::now() + wait;
            // Woken early by an attach the sync did not take in, or the interval is over:
            // either way, sync. The bell an attach rang before the task first ran is still
            // ringing after the sync that took the attach in: it wakes nothing (synced again,
            // the store took a report of no traffic for an interval's).
            while tokio::time::timeout_at(until, self.wake.notified())
                .await
                .is_ok()
            {
                if self.attached_since_sync() {
                    break;
                }
            }
        }
    }

    /// Whether a scope or name was attached since the latest sync took the attaches in.
    fn attached_since_sync(&self) -> bool {
        let scopes = self.lock();
        scopes.attaches > scopes.covered
    }

    /// One sync of every scope: the attached names declared since linked, the scopes only the
    /// fleet held for their window forgotten, then one pipeline to the store, and each reply
    /// applied (or the failure noted) by the scope's holder. Returns whether it took in an
    /// attach made since the sync before.
    pub(crate) async fn sync_all(&self) -> bool {
        let wall_ms = unix_ms();
        let took_in_attaches;
        let batch: Vec<(ScopeKeys, Settings, Report, Duration)> = {
            let mut scopes = self.lock();
            took_in_attaches = scopes.attaches > scopes.covered;
            scopes.covered = scopes.attaches;
            self.link_declared(&mut scopes);
            scopes.forget_idle();
            scopes
                .synced
                .iter_mut()
                .map(|synced| {
                    let now = synced.holder.scope().clock().now();
                    let report = synced.holder.report(now, wall_ms);
                    (synced.keys.clone(), *synced.holder.settings(), report, now)
                })
                .collect()
        };
        if batch.is_empty() {
            return took_in_attaches;
        }
        let refs: Vec<(&ScopeKeys, &Settings, &Report)> = batch
            .iter()
            .map(|(keys, settings, report, _)| (keys, settings, report))
            .collect();
        let results = self.store.sync_many(&refs).await;
        let mut scopes = self.lock();
        for (index, (keys, _, report, started)) in batch.iter().enumerate() {
            // Scopes are only removed here, before the batch, or all at once: the index finds
            // the same one.
            let Some(synced) = (scopes.synced.get_mut(index)).filter(|synced| synced.keys == *keys)
            else {
                continue;
            };
            let holder = &mut synced.holder;
            let now = holder.scope().clock().now();
            let failure;
            let reply = match results.as_ref().map(|results| results.get(index)) {
                Ok(Some(Ok(reply))) => {
                    match reply.check_clock(report, now.saturating_sub(*started)) {
                        Ok(()) => Ok(reply),
                        Err(error) => {
                            failure = FleetError::Protocol(error);
                            Err(&failure)
                        }
                    }
                }
                Ok(Some(Err(error))) | Err(error) => Err(error),
                Ok(None) => {
                    failure = missing_reply();
                    Err(&failure)
                }
            };
            match reply {
                Ok(reply) => holder.apply(reply, now),
                Err(error) => {
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
            synced
                .meter
                .synced(SyncResult::of(reply), &holder.stats(now));
        }
        took_in_attaches
    }

    /// Links the attached names whose scopes were declared since the last sync.
    fn link_declared(&self, scopes: &mut Scopes) {
        let Scopes { synced, names, .. } = scopes;
        for named in names.iter_mut().filter(|named| !named.linked) {
            let Some(scope) = Scope::lookup(named.keys.scope()) else {
                continue;
            };
            match self.link(&scope, named.keys.clone()) {
                Ok(linked) => {
                    synced.push(linked);
                    named.linked = true;
                    named.refused = false;
                }
                Err(error) if !named.refused => {
                    named.refused = true;
                    events::attach_refused(named.keys.scope(), &error);
                }
                Err(_) => {}
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Scopes> {
        self.scopes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Scopes {
    /// Forgets the scopes the fleet alone has held for their window (their quota's window): the
    /// registry forgets a named one, and its holder, dropped, detaches it. An attached name
    /// is linked again when a scope of that name is declared again.
    fn forget_idle(&mut self) {
        let forgotten: Vec<Synced> = (self.synced)
            .extract_if(.., Synced::forget_if_alone_for_its_window)
            .collect();
        for synced in &forgotten {
            if let Some(named) = (self.names.iter_mut()).find(|named| named.keys == synced.keys) {
                named.linked = false;
            }
            synced.meter.detached();
        }
    }
}

impl Synced {
    /// Forgets the scope if the fleet's holder alone has held it for its window (its registry
    /// forgets a named one; a named scope declared again meanwhile is held again and kept):
    /// `true` if so, and the holder is to be dropped.
    fn forget_if_alone_for_its_window(&mut self) -> bool {
        let scope = self.holder.scope();
        let now = scope.clock().now();
        if scope.holders() > 1 {
            self.alone_since = None;
            return false;
        }
        let since = *self.alone_since.get_or_insert(now);
        let window = Duration::from_millis(self.holder.settings().window_ms);
        now.saturating_sub(since) >= window && scope.forget_held_only_by(1)
    }
}

/// The wait before the next sync: `interval` jittered by ±10 %, or spread by ±50 % after a
/// sync that took in an attach, though no longer than a tenth of an interval short of the
/// `lease` (a lease set to under 1.6 intervals is not let lapse by the spread; at one
/// interval the wait is at most what the jitter gives); `draw` is uniform in [0, 1).
fn next_sync_wait(
    interval: Duration,
    lease: Duration,
    took_in_attaches: bool,
    draw: f64,
) -> Duration {
    let jittered = |spread: f64| interval.mul_f64(1.0 - spread + 2.0 * spread * draw);
    if !took_in_attaches {
        return jittered(INTERVAL_JITTER);
    }
    let longest = lease
        .saturating_sub(interval.mul_f64(INTERVAL_JITTER))
        .max(interval.mul_f64(1.0 + INTERVAL_JITTER));
    jittered(ATTACH_SYNC_SPREAD).min(longest)
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

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn the_sync_after_an_attach_comes_within_half_an_interval_either_way() {
        let lease = 3 * SECOND;
        assert_eq!(next_sync_wait(SECOND, lease, true, 0.0), SECOND / 2);
        assert_eq!(next_sync_wait(SECOND, lease, true, 0.5), SECOND);
        assert_eq!(next_sync_wait(SECOND, lease, true, 1.0), 3 * SECOND / 2);
        assert_eq!(next_sync_wait(SECOND, lease, false, 0.0), SECOND * 9 / 10);
        assert_eq!(next_sync_wait(SECOND, lease, false, 1.0), SECOND * 11 / 10);
    }

    #[test]
    fn the_spread_after_an_attach_never_lets_a_short_lease_lapse_more_than_the_jitter_does() {
        let short = next_sync_wait(SECOND, SECOND, true, 1.0);
        assert_eq!(
            short,
            SECOND * 11 / 10,
            "a one-interval lease: the jitter's longest"
        );
        let longer = next_sync_wait(SECOND, SECOND * 3 / 2, true, 1.0);
        assert_eq!(
            longer,
            SECOND * 14 / 10,
            "a tenth of an interval short of the lease"
        );
        assert_eq!(next_sync_wait(SECOND, SECOND, true, 0.0), SECOND / 2);
    }
}
