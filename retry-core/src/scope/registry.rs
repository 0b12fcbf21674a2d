//! The process-wide registry of named scopes, and how it forgets them.
//!
//! A name's entry holds its scope for as long as the scope has something to remember:
//! * while a handle holds it ([`Scope`] handles are counted: a strategy's, a `RetryLayer`'s, an
//!   attribute's static, a fleet's), it is never forgotten;
//! * when its last handle is dropped, a scope whose state is still a new scope's (no retry,
//!   throttle or limiter touched it: [`ScopeInner::has_nothing_to_remember`]) is forgotten at
//!   once;
//! * otherwise it rests: it is forgotten once it has rested for its window
//!   ([`ScopeInner::idle_window`]), by a sweep that runs as new names are made (after as many
//!   new names as there are entries, so that a sweep's cost is spread over the names that
//!   called for it: amortized constant time a name).
//!
//! A name declared again while its scope rests gets the same scope, state and all; after it was
//! forgotten, a new young scope (never another scope's state: a scope's state lives in its own
//! allocation, and a name maps to at most one).
//!
//! Every decision is taken under the registry's lock, and a handle is only ever made under it
//! or from another handle: the count of handles read under the lock can only rise through the
//! registry, so a scope whose count is 0 there has no handle anywhere and none can appear.

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use super::declaration::{ScopeConflict, ScopeDeclaration};
use super::state::{Scope, ScopeInner};
use crate::clock::SharedClock;
use crate::config::RetryConfig;
use crate::sync::{Mutex, Ordering};

/// The fewest new names between two sweeps.
const SWEEP_AFTER_AT_LEAST: usize = 1024;

/// The registry: names to scopes. One per process ([`Registry::global`]); tests make their own.
#[derive(Debug, Default)]
pub(crate) struct Registry {
    entries: Mutex<Entries>,
}

#[derive(Debug, Default)]
struct Entries {
    by_name: HashMap<Box<str>, Entry>,
    /// New names made since the last sweep.
    made_since_sweep: usize,
}

/// One name's scope and its first declaration.
#[derive(Debug)]
struct Entry {
    scope: Arc<ScopeInner>,
    declared: ScopeDeclaration,
    /// Since when the scope rests (no handle, something to remember), on its clock, and the
    /// calls it had ended then: a rest that saw no call since keeps its start.
    resting: Option<(Duration, u64)>,
    /// The declarations whose conflict with `declared` was logged already.
    reported: Vec<ScopeDeclaration>,
}

impl Registry {
    /// The process-wide registry.
    pub(crate) fn global() -> &'static Registry {
        static GLOBAL: std::sync::LazyLock<Registry> = std::sync::LazyLock::new(Registry::default);
        &GLOBAL
    }

    /// The scope called `name`, made from `config` on `clock` if there is none, as `declared`
    /// declares it; with the conflict if the scope was made from settings that differ.
    pub(crate) fn declare(
        &'static self,
        name: &str,
        config: &RetryConfig,
        declared: ScopeDeclaration,
        clock: impl FnOnce() -> SharedClock,
    ) -> (Scope, Option<ScopeConflict>) {
        let mut swept = Vec::new();
        let mut entries = self.lock();
        let declared_scope = match entries.by_name.get_mut(name) {
            Some(entry) => {
                entry.resting = None;
                let conflict = ScopeConflict::between(
                    name,
                    (entry.declared, entry.scope.config()),
                    (declared, config),
                );
                (Scope::handle_on(&entry.scope), conflict)
            }
            None => {
                swept = entries.sweep_if_due();
                let inner = Arc::new(ScopeInner::new(name, config, clock(), Some(self)));
                let scope = Scope::handle_on(&inner);
                entries.by_name.insert(
                    name.into(),
                    Entry {
                        scope: inner,
                        declared,
                        resting: None,
                        reported: Vec::new(),
                    },
                );
                (scope, None)
            }
        };
        drop(entries);
        drop(swept);
        declared_scope
    }

    /// Whether `conflict` is reported for the first time (its second declaration's place is
    /// remembered with the scope's entry while the scope lives).
    pub(crate) fn first_report(&self, conflict: &ScopeConflict) -> bool {
        let mut entries = self.lock();
        let Some(entry) = entries.by_name.get_mut(conflict.scope()) else {
            return true;
        };
        if entry.reported.contains(&conflict.second()) {
            return false;
        }
        entry.reported.push(conflict.second());
        true
    }

    /// A handle on the scope called `name`, if there is one. A lookup is no use of the scope:
    /// a resting scope keeps resting from when it started.
    pub(crate) fn lookup(&self, name: &str) -> Option<Scope> {
        let entries = self.lock();
        entries
            .by_name
            .get(name)
            .map(|entry| Scope::handle_on(&entry.scope))
    }

    /// The names, sorted.
    pub(crate) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.lock().by_name.keys().map(|n| n.to_string()).collect();
        names.sort();
        names
    }

    /// The last handle on `scope` was dropped: forgets it at once if it has nothing to
    /// remember, or has it rest. Nothing when the name was declared again meanwhile (a handle
    /// made since), or is another scope's now.
    pub(crate) fn release(&self, scope: &Arc<ScopeInner>) {
        let mut entries = self.lock();
        let Some(entry) = entries.by_name.get_mut(scope.name()) else {
            return;
        };
        if !Arc::ptr_eq(&entry.scope, scope) || scope.holders() != 0 {
            return;
        }
        if scope.has_nothing_to_remember() {
            let forgotten = entries.remove(scope.name());
            drop(entries);
            drop(forgotten);
            return;
        }
        let calls = scope.calls_ended();
        if entry.resting.is_none_or(|(_, at)| at != calls) {
            entry.resting = Some((scope.clock().now(), calls));
        }
    }

    /// Forgets `scope` if `holders` handles are all that hold it (a fleet's, whose holder
    /// detaches it then): `true` if it was forgotten. A scope declared again meanwhile has
    /// more and is kept.
    #[cfg(feature = "fleet")]
    pub(crate) fn forget_held_only_by(&self, scope: &Scope, holders: usize) -> bool {
        let inner = scope.inner();
        let mut entries = self.lock();
        let ours = entries
            .by_name
            .get(inner.name())
            .is_some_and(|entry| Arc::ptr_eq(&entry.scope, inner));
        if !ours || inner.holders() != holders {
            return false;
        }
        let forgotten = entries.remove(inner.name());
        drop(entries);
        drop(forgotten);
        true
    }

    /// Forgets every resting scope that has rested for its window, and every scope no handle
    /// holds that has nothing to remember: the number forgotten.
    #[cfg(test)]
    pub(crate) fn sweep(&self) -> usize {
        let swept = self.lock().sweep();
        swept.len()
    }

    fn lock(&self) -> crate::sync::MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Entries {
    /// A sweep ([`sweep`](Self::sweep)) when as many names were made since the last one as
    /// there are entries (at least [`SWEEP_AFTER_AT_LEAST`]): the scopes it forgot, to drop
    /// outside the lock.
    fn sweep_if_due(&mut self) -> Vec<Entry> {
        self.made_since_sweep += 1;
        if self.made_since_sweep < self.by_name.len().max(SWEEP_AFTER_AT_LEAST) {
            return Vec::new();
        }
        self.made_since_sweep = 0;
        self.sweep()
    }

    fn sweep(&mut self) -> Vec<Entry> {
        let forgettable: Vec<Box<str>> = self
            .by_name
            .iter()
            .filter(|(_, entry)| entry.forgettable())
            .map(|(name, _)| name.clone())
            .collect();
        let swept = forgettable
            .iter()
            .filter_map(|name| self.remove(name))
            .collect();
        self.shrink();
        swept
    }

    fn remove(&mut self, name: &str) -> Option<Entry> {
        let entry = self.by_name.remove(name);
        self.shrink();
        entry
    }

    /// Gives memory back once the map holds far fewer names than it has room for (a burst of
    /// names gone): to twice its names, so that a few new ones do not grow it again at once.
    fn shrink(&mut self) {
        let len = self.by_name.len();
        if self.by_name.capacity() > 4 * len.max(SWEEP_AFTER_AT_LEAST) {
            self.by_name.shrink_to(2 * len);
        }
    }
}

impl Entry {
    /// Whether a sweep forgets the entry: no handle holds its scope, and the scope has nothing
    /// to remember or has rested for its window.
    fn forgettable(&self) -> bool {
        let scope = &self.scope;
        if scope.holders.load(Ordering::Acquire) != 0 {
            return false;
        }
        match self.resting {
            _ if scope.has_nothing_to_remember() => true,
            Some((since, _)) => scope.clock().now().saturating_sub(since) >= scope.idle_window(),
            None => false,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::clock::{Clock, ManualClock};
    use crate::config::defaults::QUOTA_WINDOW;
    use std::panic::Location;

    /// A registry of its own (leaked: a scope refers to its registry for the program's life)
    /// on a manual clock.
    fn registry() -> (&'static Registry, Arc<ManualClock>) {
        (Box::leak(Box::default()), Arc::new(ManualClock::new()))
    }

    fn declare(registry: &'static Registry, clock: &Arc<ManualClock>, name: &str) -> Scope {
        declare_with(registry, clock, name, &RetryConfig::default()).0
    }

    fn declare_with(
        registry: &'static Registry,
        clock: &Arc<ManualClock>,
        name: &str,
        config: &RetryConfig,
    ) -> (Scope, Option<ScopeConflict>) {
        let clock: SharedClock = clock.clone();
        registry.declare(
            name,
            config,
            ScopeDeclaration::Named(Location::caller()),
            || clock,
        )
    }

    /// A retry taken from the scope's quota: something to remember.
    fn retry(scope: &Scope) {
        assert!(scope.try_acquire_retry(14, true).is_ok());
    }

    #[test]
    fn a_scope_with_nothing_to_remember_is_forgotten_with_its_last_handle() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        let clone = scope.clone();
        let again = declare(registry, &clock, "a");
        assert!(again.same_as(&scope));
        assert_eq!(scope.holders(), 3);
        drop((scope, again));
        assert_eq!(registry.names(), ["a"], "one handle holds it still");
        drop(clone);
        assert!(registry.names().is_empty());
    }

    #[test]
    fn successes_leave_nothing_to_remember() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        for _ in 0..10 {
            scope.count(crate::scope::Counter::Success);
            scope.quota().release(1);
        }
        drop(scope);
        assert!(registry.lookup("a").is_none());
    }

    #[test]
    fn a_scope_that_retried_rests_for_its_window_then_is_forgotten() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        retry(&scope);
        drop(scope);
        clock.advance(Duration::from_secs(59));
        assert_eq!(registry.sweep(), 0, "within its window");
        let again = declare(registry, &clock, "a");
        assert_eq!(
            again.stats().retries,
            0,
            "counts of retries granted by a strategy"
        );
        assert_eq!(
            again.quota().level(),
            486,
            "the same scope: its quota as it was"
        );
        drop(again);
        // Declared again, it rests from its last handle on: 59 s more are not its window.
        clock.advance(Duration::from_secs(59));
        assert_eq!(registry.sweep(), 0);
        clock.advance(Duration::from_secs(1));
        assert_eq!(registry.sweep(), 1);
        assert!(registry.names().is_empty());
    }

    #[test]
    fn a_forgotten_scope_comes_back_young() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        for _ in 0..30 {
            let _ = scope.try_acquire_retry(14, true);
        }
        scope
            .limiter()
            .record_response(true, clock.now(), clock.now());
        let old = scope.clone();
        drop(scope);
        let held_elsewhere = old; // a handle: the scope is held, the name resolves to it
        assert!(declare(registry, &clock, "a").same_as(&held_elsewhere));
        drop(held_elsewhere);
        clock.advance(Duration::from_secs(61));
        assert_eq!(registry.sweep(), 1);
        let young = declare(registry, &clock, "a");
        assert_eq!(young.quota().level(), 500);
        assert!(!young.limiter().is_enabled());
        assert_eq!(young.stats().attempts, 0);
    }

    #[test]
    fn a_held_scope_is_never_forgotten() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        retry(&scope);
        let level = scope.quota().level();
        clock.advance(Duration::from_secs(3600));
        assert_eq!(registry.sweep(), 0);
        assert!(
            registry
                .lookup("a")
                .is_some_and(|found| found.same_as(&scope))
        );
        assert_eq!(scope.quota().level(), level);
    }

    #[test]
    fn a_lookup_is_no_use() {
        let (registry, clock) = registry();
        let scope = declare(registry, &clock, "a");
        retry(&scope);
        drop(scope);
        clock.advance(Duration::from_secs(40));
        drop(registry.lookup("a"));
        clock.advance(Duration::from_secs(20));
        assert_eq!(registry.sweep(), 1, "rested 60 s since its last use");
    }

    #[test]
    fn a_fixed_quota_rests_for_the_default_window() {
        let (registry, clock) = registry();
        let classic = RetryConfig::aws_classic().build().expect("valid");
        let scope = declare_with(registry, &clock, "a", &classic).0;
        retry(&scope);
        drop(scope);
        clock.advance(QUOTA_WINDOW - Duration::from_millis(1));
        assert_eq!(registry.sweep(), 0);
        clock.advance(Duration::from_millis(1));
        assert_eq!(registry.sweep(), 1);
    }

    #[test]
    fn a_second_declaration_with_other_settings_conflicts_once_reported() {
        let (registry, clock) = registry();
        let first = declare(registry, &clock, "a");
        let five = RetryConfig::builder()
            .max_attempts(5)
            .build()
            .expect("valid");
        let (second, conflict) = declare_with(registry, &clock, "a", &five);
        assert!(second.same_as(&first), "the scope as it is");
        let conflict = conflict.expect("a conflict");
        assert_eq!(conflict.settings(), ["max_attempts"]);
        assert!(registry.first_report(&conflict));
        assert!(!registry.first_report(&conflict), "logged once per place");
        let slower = RetryConfig::builder()
            .initial_backoff(Duration::from_secs(1))
            .build()
            .expect("valid");
        assert!(declare_with(registry, &clock, "a", &slower).1.is_none());
    }

    #[test]
    fn sweeps_run_as_names_are_made() {
        let (registry, clock) = registry();
        let resting = declare(registry, &clock, "resting");
        retry(&resting);
        drop(resting);
        clock.advance(Duration::from_secs(61));
        for index in 0..SWEEP_AFTER_AT_LEAST - 2 {
            drop(declare(registry, &clock, &format!("new-{index}")));
        }
        assert_eq!(registry.names(), ["resting"]);
        drop(declare(registry, &clock, "one-more"));
        assert!(registry.names().is_empty());
    }

    /// Threads declaring and dropping a few names at once, some retrying: whatever the
    /// interleaving, a held handle is its name's scope, and once every handle is gone only the
    /// scopes that retried are left, resting.
    #[test]
    fn racing_declarations_and_drops_keep_one_scope_a_name() {
        let (registry, clock) = registry();
        let threads: Vec<_> = (0..8)
            .map(|thread| {
                let clock = Arc::clone(&clock);
                std::thread::spawn(move || {
                    for round in 0..2_000 {
                        let name = format!("n{}", round % 4);
                        let scope = declare(registry, &clock, &name);
                        let found = registry.lookup(&name).expect("declared");
                        assert!(found.same_as(&scope), "{name} resolves to another scope");
                        if name == "n0" && thread == 0 {
                            let _ = scope.try_acquire_retry(1, true);
                        }
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("no panic");
        }
        let left = registry.names();
        assert!(left.iter().all(|name| name == "n0"), "{left:?}");
        clock.advance(Duration::from_secs(61));
        registry.sweep();
        assert!(registry.names().is_empty());
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::clock::ManualClock;
    use std::panic::Location;

    fn declare(registry: &'static Registry, name: &str) -> Scope {
        let clock: SharedClock = Arc::new(ManualClock::new());
        let declared = ScopeDeclaration::Named(Location::caller());
        registry
            .declare(name, &RetryConfig::default(), declared, || clock)
            .0
    }

    /// The last handle of a scope with nothing to remember is dropped while another thread
    /// declares the name again: in every interleaving the other thread's handle is the name's
    /// scope while it holds it, and once it is dropped too, nothing is left.
    #[test]
    fn loom_a_scope_forgotten_while_its_name_is_declared_again() {
        loom::model(|| {
            let registry: &'static Registry = Box::leak(Box::default());
            let first = declare(registry, "a");
            let other = loom::thread::spawn(move || {
                let again = declare(registry, "a");
                let found = registry.lookup("a").expect("held, so registered");
                assert!(found.same_as(&again));
            });
            drop(first);
            other.join().expect("no panic");
            assert!(registry.names().is_empty());
        });
    }
}
