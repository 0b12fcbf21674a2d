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
//!
//! The registry holds any [`Registered`] state (a scope's, [`ScopeInner`]; a test's own), so that
//! it does not depend on the scope it keeps.
//!
//! [`ScopeInner`]: super::state

use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use super::declaration::{ScopeConflict, ScopeDeclaration};
use crate::config::RetryConfig;
use crate::sync::Mutex;

/// What the registry needs of a named scope's state.
pub(crate) trait Registered {
    /// The name it is registered under.
    fn name(&self) -> &str;
    /// The configuration it was made from (another declaration is checked against it).
    fn config(&self) -> &RetryConfig;
    /// Counts one more handle on it (the registry hands one out, under its lock).
    fn hold(&self);
    /// The handles on it now.
    fn holders(&self) -> usize;
    /// Whether its state is still a new one's.
    fn has_nothing_to_remember(&self) -> bool;
    /// How long it rests, no handle on it, before it is forgotten.
    fn idle_window(&self) -> Duration;
    /// Its clock's reading.
    fn now(&self) -> Duration;
    /// The calls it has ended so far (a rest that saw a call since starts again).
    fn calls_ended(&self) -> u64;
}

/// The fewest new names between two sweeps.
const SWEEP_AFTER_AT_LEAST: usize = 1024;

/// The registry: names to scopes. One per process (the scope's `Scope::named`); tests make
/// their own.
#[derive(Debug)]
pub(crate) struct Registry<T> {
    entries: Mutex<Entries<T>>,
}

#[derive(Debug)]
struct Entries<T> {
    by_name: HashMap<Box<str>, Entry<T>>,
    /// New names made since the last sweep.
    made_since_sweep: usize,
}

/// One name's scope and its first declaration.
#[derive(Debug)]
struct Entry<T> {
    scope: Arc<T>,
    declared: ScopeDeclaration,
    /// Since when the scope rests (no handle, something to remember), on its clock, and the
    /// calls it had ended then: a rest that saw no call since keeps its start.
    resting: Option<(Duration, u64)>,
    /// The declarations whose conflict with `declared` was logged already.
    reported: Vec<ScopeDeclaration>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Self {
            entries: Mutex::new(Entries {
                by_name: HashMap::new(),
                made_since_sweep: 0,
            }),
        }
    }
}

impl<T: Registered> Registry<T> {
    /// The scope called `name`, made by `make` from `config` if there is none, as `declared`
    /// declares it, with one more handle counted on it; with the conflict if the scope was
    /// made from settings that differ.
    pub(crate) fn declare(
        &self,
        name: &str,
        config: &RetryConfig,
        declared: ScopeDeclaration,
        make: impl FnOnce() -> T,
    ) -> (Arc<T>, Option<ScopeConflict>) {
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
                entry.scope.hold();
                (Arc::clone(&entry.scope), conflict)
            }
            None => {
                swept = entries.sweep_if_due();
                let scope = Arc::new(make());
                scope.hold();
                entries.by_name.insert(
                    name.into(),
                    Entry {
                        scope: Arc::clone(&scope),
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
    pub(crate) fn lookup(&self, name: &str) -> Option<Arc<T>> {
        let entries = self.lock();
        entries.by_name.get(name).map(|entry| {
            entry.scope.hold();
            Arc::clone(&entry.scope)
        })
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
    pub(crate) fn release(&self, scope: &Arc<T>) {
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
            entry.resting = Some((scope.now(), calls));
        }
    }

    /// Forgets `scope` if `holders` handles are all that hold it (a fleet's, whose holder
    /// detaches it then): `true` if it was forgotten. A scope declared again meanwhile has
    /// more and is kept.
    #[cfg(feature = "fleet")]
    pub(crate) fn forget_held_only_by(&self, inner: &Arc<T>, holders: usize) -> bool {
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
    #[cfg(all(test, not(loom)))]
    pub(crate) fn sweep(&self) -> usize {
        let swept = self.lock().sweep();
        swept.len()
    }

    fn lock(&self) -> crate::sync::MutexGuard<'_, Entries<T>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<T: Registered> Entries<T> {
    /// A sweep ([`sweep`](Self::sweep)) when as many names were made since the last one as
    /// there are entries (at least [`SWEEP_AFTER_AT_LEAST`]): the scopes it forgot, to drop
    /// outside the lock.
    fn sweep_if_due(&mut self) -> Vec<Entry<T>> {
        self.made_since_sweep += 1;
        if self.made_since_sweep < self.by_name.len().max(SWEEP_AFTER_AT_LEAST) {
            return Vec::new();
        }
        self.made_since_sweep = 0;
        self.sweep()
    }

    fn sweep(&mut self) -> Vec<Entry<T>> {
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

    fn remove(&mut self, name: &str) -> Option<Entry<T>> {
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

impl<T: Registered> Entry<T> {
    /// Whether a sweep forgets the entry: no handle holds its scope, and the scope has nothing
    /// to remember or has rested for its window.
    fn forgettable(&self) -> bool {
        let scope = &self.scope;
        if scope.holders() != 0 {
            return false;
        }
        match self.resting {
            _ if scope.has_nothing_to_remember() => true,
            Some((since, _)) => scope.now().saturating_sub(since) >= scope.idle_window(),
            None => false,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::panic::Location;
    use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

    /// A registered state of the tests' own: a flag for something to remember, a clock.
    #[derive(Debug, Default)]
    struct Fake {
        name: String,
        config: RetryConfig,
        holders: AtomicUsize,
        remembers: AtomicBool,
        now: Arc<AtomicU64>,
    }

    impl Registered for Fake {
        fn name(&self) -> &str {
            &self.name
        }
        fn config(&self) -> &RetryConfig {
            &self.config
        }
        fn hold(&self) {
            self.holders.fetch_add(1, Ordering::AcqRel);
        }
        fn holders(&self) -> usize {
            self.holders.load(Ordering::Acquire)
        }
        fn has_nothing_to_remember(&self) -> bool {
            !self.remembers.load(Ordering::Acquire)
        }
        fn idle_window(&self) -> Duration {
            Duration::from_secs(60)
        }
        fn now(&self) -> Duration {
            Duration::from_secs(self.now.load(Ordering::Acquire))
        }
        fn calls_ended(&self) -> u64 {
            0
        }
    }

    fn declare(registry: &Registry<Fake>, now: &Arc<AtomicU64>, name: &str) -> Arc<Fake> {
        let make = || Fake {
            name: name.to_owned(),
            now: Arc::clone(now),
            ..Fake::default()
        };
        let declared = ScopeDeclaration::Named(Location::caller());
        registry
            .declare(name, &RetryConfig::default(), declared, make)
            .0
    }

    /// Drops a handle as `Scope`'s drop does.
    fn drop_handle(registry: &Registry<Fake>, scope: Arc<Fake>) {
        if scope.holders.fetch_sub(1, Ordering::AcqRel) == 1 {
            registry.release(&scope);
        }
    }

    #[test]
    fn sweeps_run_as_names_are_made() {
        let registry = Registry::default();
        let now = Arc::new(AtomicU64::new(0));
        let resting = declare(&registry, &now, "resting");
        resting.remembers.store(true, Ordering::Release);
        drop_handle(&registry, resting);
        now.store(61, Ordering::Release);
        for index in 0..SWEEP_AFTER_AT_LEAST - 2 {
            let made = declare(&registry, &now, &format!("new-{index}"));
            drop_handle(&registry, made);
        }
        assert_eq!(registry.names(), ["resting"]);
        let made = declare(&registry, &now, "one-more");
        drop_handle(&registry, made);
        assert!(registry.names().is_empty());
    }

    #[test]
    fn the_map_gives_its_room_back() {
        let registry = Registry::default();
        let now = Arc::new(AtomicU64::new(0));
        let held: Vec<_> = (0..20_000)
            .map(|index| declare(&registry, &now, &format!("n{index}")))
            .collect();
        let room = registry.lock().by_name.capacity();
        for scope in held {
            drop_handle(&registry, scope);
        }
        let left = registry.lock().by_name.capacity();
        assert!(left <= 4 * SWEEP_AFTER_AT_LEAST, "{room} -> {left}");
    }

    /// Threads declaring and dropping a few names at once, some remembering: whatever the
    /// interleaving, a held handle is its name's scope, and once every handle is gone only
    /// the scopes that remember are left, resting.
    #[test]
    fn racing_declarations_and_drops_keep_one_scope_a_name() {
        let registry: &'static Registry<Fake> = Box::leak(Box::default());
        let now = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..8)
            .map(|thread| {
                let now = Arc::clone(&now);
                std::thread::spawn(move || {
                    for round in 0..2_000 {
                        let name = format!("n{}", round % 4);
                        let scope = declare(registry, &now, &name);
                        let found = registry.lookup(&name).expect("declared");
                        assert!(Arc::ptr_eq(&found, &scope), "{name} is another scope");
                        drop_handle(registry, found);
                        if name == "n0" && thread == 0 {
                            scope.remembers.store(true, Ordering::Release);
                        }
                        drop_handle(registry, scope);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("no panic");
        }
        let left = registry.names();
        assert!(left.iter().all(|name| name == "n0"), "{left:?}");
        now.store(61, Ordering::Release);
        registry.sweep();
        assert!(registry.names().is_empty());
    }
}
