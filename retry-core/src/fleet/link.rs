//! A scope's link to its fleet: what the retry path reads (whether the lease is live, until
//! when, and the cap of the fallback) and what the scope's statistics show. Written by the
//! scope's [`LeaseHolder`](super::lease::LeaseHolder); read on the retry path with a few relaxed
//! loads, never on the success path.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::error::FleetErrorKind;
use super::status::FleetStats;
use crate::clock::duration_to_nanos;
use crate::quota::RetryBounds;

/// How a retry's bounds are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Mode {
    /// The scope's local rules (no lease yet, or a conflict).
    Local = 0,
    /// The lease: the quota's level is the lease, the local traffic sizing is off.
    Lease = 1,
    /// The local rules, within the fallback's cap if it has one (the lease expired).
    Fallback = 2,
}

/// The link: see the module's documentation.
#[derive(Debug, Default)]
pub(crate) struct FleetLink {
    mode: AtomicU8,
    /// The cap of the fallback: the last fleet cap over its live processes if the last lease
    /// found the fleet failing, `u32::MAX` (none) if it found it healthy. A young scope's
    /// tokens lift it while the scope is young ([`retry_bounds`](Self::retry_bounds)).
    fallback_cap: AtomicU32,
    /// When the lease expires, on the scope's clock (nanoseconds).
    expires_at: AtomicU64,
    /// Whether the last lease found the fleet failing ([`Lease::fleet_failing`]): its tokens
    /// under half its cap.
    ///
    /// [`Lease::fleet_failing`]: super::protocol::Lease::fleet_failing
    fleet_failing: AtomicBool,
    /// Whether a holder syncs the scope.
    claimed: AtomicBool,
    shown: Mutex<Shown>,
}

/// What the statistics show, when the last successful sync started, and the last failed
/// sync's error and start.
#[derive(Debug, Default)]
struct Shown {
    stats: FleetStats,
    synced_at: Option<Duration>,
    failed: Option<(FleetErrorKind, Duration)>,
}

impl FleetLink {
    /// Claims the link for a holder; `false` if another holder has it.
    pub(crate) fn claim(&self) -> bool {
        self.claimed
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Gives the link up (its holder detached).
    pub(crate) fn release(&self) {
        self.claimed.store(false, Ordering::Release);
    }

    /// The bounds a retry meets, `local` being the scope's own rules' and `now` the clock's
    /// reading when the retry read it (the first retry of a call): with a live lease none (the
    /// quota's level is the lease); expired or in fallback, the local rules within the
    /// fallback's cap, if any, but never under `young()`, the young scope's tokens the local
    /// rules give a scope younger than its window (read after `local`): a process starting
    /// cold has local mode's young-scope quota whatever the fleet, as under a live lease.
    pub(crate) fn retry_bounds(
        &self,
        now: Option<Duration>,
        local: impl FnOnce() -> RetryBounds,
        young: impl FnOnce() -> u32,
    ) -> RetryBounds {
        match self.mode() {
            Mode::Local => local(),
            Mode::Lease if !now.is_some_and(|now| self.expired_at(now)) => RetryBounds::NONE,
            Mode::Lease | Mode::Fallback => {
                let bounds = local();
                let cap = self.fallback_cap.load(Ordering::Relaxed).max(young());
                RetryBounds {
                    limit: bounds.limit.min(cap),
                    at_least: bounds.at_least.min(cap),
                }
            }
        }
    }

    /// What a hedge must leave in the quota at `now` under a live lease, `None` without one
    /// (the scope's own rule then applies). gRFC A6 stops hedges at half the retry-throttling
    /// bucket; under a lease that bucket is the fleet's budget, shared by the store, not the
    /// process's share of it (a process holds its share, a fraction of the cap): nothing while
    /// the last lease found the fleet holding at least half its cap, everything while it did
    /// not. The process pays from what it holds, never borrowing.
    pub(crate) fn hedge_reserve(&self, now: Duration) -> Option<u32> {
        if self.mode() != Mode::Lease || self.expired_at(now) {
            return None;
        }
        Some(if self.fleet_failing.load(Ordering::Relaxed) {
            u32::MAX
        } else {
            0
        })
    }

    /// Records whether the lease just applied found the fleet failing (see
    /// [`hedge_reserve`](Self::hedge_reserve)); before its [`set_mode`](Self::set_mode).
    pub(crate) fn set_fleet_failing(&self, failing: bool) {
        self.fleet_failing.store(failing, Ordering::Relaxed);
    }

    /// The mode in force.
    pub(crate) fn mode(&self) -> Mode {
        match self.mode.load(Ordering::Acquire) {
            1 => Mode::Lease,
            2 => Mode::Fallback,
            _ => Mode::Local,
        }
    }

    /// Whether the lease has expired at `now`.
    fn expired_at(&self, now: Duration) -> bool {
        duration_to_nanos(now) >= self.expires_at.load(Ordering::Relaxed)
    }

    /// Sets the mode: for a lease, until `expires_at`, the fallback then capped at
    /// `fallback_cap` (`None`: the local rules alone); for a fallback, capped at `fallback_cap`.
    pub(crate) fn set_mode(&self, mode: Mode, expires_at: Duration, fallback_cap: Option<u32>) {
        self.expires_at
            .store(duration_to_nanos(expires_at), Ordering::Relaxed);
        self.fallback_cap
            .store(fallback_cap.unwrap_or(u32::MAX), Ordering::Relaxed);
        self.mode.store(mode as u8, Ordering::Release);
    }

    /// Updates what the statistics show; `synced_at`: a successful sync started then.
    pub(crate) fn show(&self, synced_at: Option<Duration>, update: impl FnOnce(&mut FleetStats)) {
        let mut shown = self.shown.lock().unwrap_or_else(PoisonError::into_inner);
        if synced_at.is_some() {
            shown.synced_at = synced_at;
        }
        update(&mut shown.stats);
    }

    /// Notes a sync that started at `at` and failed with an error of `kind`.
    pub(crate) fn note_error(&self, kind: FleetErrorKind, at: Duration) {
        let mut shown = self.shown.lock().unwrap_or_else(PoisonError::into_inner);
        shown.failed = Some((kind, at));
    }

    /// The statistics at `now`.
    pub(crate) fn stats(&self, now: Duration) -> FleetStats {
        let shown = self.shown.lock().unwrap_or_else(PoisonError::into_inner);
        FleetStats {
            last_sync_age: shown.synced_at.map(|at| now.saturating_sub(at)),
            last_error: shown.failed.map(|(kind, _)| kind),
            last_error_age: shown.failed.map(|(_, at)| now.saturating_sub(at)),
            ..shown.stats
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local() -> RetryBounds {
        RetryBounds {
            limit: 600,
            at_least: 28,
        }
    }

    /// A scope older than its window: no young scope's tokens.
    fn old() -> u32 {
        0
    }

    #[test]
    fn a_live_lease_lifts_the_local_bounds_until_it_expires() {
        let link = FleetLink::default();
        assert_eq!(link.retry_bounds(None, local, old), local());
        link.set_mode(Mode::Lease, Duration::from_secs(3), Some(100));
        let at = |secs| Some(Duration::from_secs(secs));
        assert_eq!(link.retry_bounds(at(2), local, old), RetryBounds::NONE);
        // A later retry of a call reads no clock: the lease as the holder left it.
        assert_eq!(link.retry_bounds(None, local, old), RetryBounds::NONE);
        // Past the expiry, before the holder noticed: the fallback's cap already.
        let capped = RetryBounds {
            limit: 100,
            at_least: 28,
        };
        assert_eq!(link.retry_bounds(at(3), local, old), capped);
        link.set_mode(Mode::Fallback, Duration::ZERO, Some(10));
        assert_eq!(
            link.retry_bounds(None, local, old),
            RetryBounds {
                limit: 10,
                at_least: 10
            }
        );
    }

    #[test]
    fn a_fallbacks_cap_never_falls_under_a_young_scopes_tokens() {
        let link = FleetLink::default();
        link.set_mode(Mode::Fallback, Duration::ZERO, Some(10));
        let young = || 500;
        let at = Some(Duration::from_secs(2));
        let expected = RetryBounds {
            limit: 500,
            at_least: 28,
        };
        assert_eq!(link.retry_bounds(at, local, young), expected);
        assert_eq!(link.retry_bounds(None, local, young), expected);
        // Older than its window: the share again.
        assert_eq!(link.retry_bounds(at, local, old).limit, 10);
        // A healthy fleet's fallback: the local rules, whatever the youth.
        link.set_mode(Mode::Fallback, Duration::ZERO, None);
        assert_eq!(link.retry_bounds(at, local, young), local());
    }

    #[test]
    fn hedges_keep_nothing_back_under_a_healthy_lease_and_everything_under_a_failing_one() {
        let link = FleetLink::default();
        let at = Duration::from_secs(2);
        assert_eq!(link.hedge_reserve(at), None, "local: the scope's own rule");
        link.set_mode(Mode::Lease, Duration::from_secs(3), Some(100));
        assert_eq!(link.hedge_reserve(at), Some(0));
        link.set_fleet_failing(true);
        assert_eq!(link.hedge_reserve(at), Some(u32::MAX));
        assert_eq!(link.hedge_reserve(Duration::from_secs(3)), None, "expired");
        link.set_mode(Mode::Fallback, Duration::ZERO, Some(10));
        assert_eq!(
            link.hedge_reserve(at),
            None,
            "fallback: the scope's own rule"
        );
    }

    #[test]
    fn one_holder_at_a_time() {
        let link = FleetLink::default();
        assert!(link.claim());
        assert!(!link.claim());
        link.release();
        assert!(link.claim());
    }
}
