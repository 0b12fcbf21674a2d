//! The process side against the store's model, in virtual time: leases granted, spent and
//! given back; the limiter's share; expiry and fallback; reports counted at most once.

use std::sync::Arc;

use super::*;
use crate::classify::{ErrorKind, RetryReason};
use crate::clock::{Clock, ManualClock};
use crate::config::{RetryConfig, RetryMode};
use crate::fleet::options::FleetOptions;
use crate::fleet::protocol::{Dropped, Lease};
use crate::fleet::store_model::step;
use crate::fleet::store_state::StoreState;
use crate::strategy::{AdaptiveStrategy, RetryStrategy, StandardStrategy};

/// The store's clock starts here (Unix ms), the processes' virtual clock at 0.
const EPOCH_MS: u64 = 1_700_000_000_000;

/// A fleet of processes, each with a private scope on one virtual clock, and the store's model.
struct Fleet {
    clock: Arc<ManualClock>,
    settings: Settings,
    store: StoreState,
    processes: Vec<Process>,
}

struct Process {
    holder: LeaseHolder,
    strategy: StandardStrategy,
}

impl Fleet {
    fn new(processes: u64) -> Self {
        let config = RetryConfig::default();
        let clock = Arc::new(ManualClock::new());
        let settings = Settings::from_config(&config, &FleetOptions::default()).expect("valid");
        let processes = (1..=processes)
            .map(|id| {
                let scope = Scope::with_clock("inventory", &config, clock.clone());
                let holder = LeaseHolder::attach(&scope, settings, ProcessId(id)).expect("free");
                let strategy = StandardStrategy::builder(config.clone())
                    .scope(scope)
                    .build();
                Process { holder, strategy }
            })
            .collect();
        Self {
            clock,
            settings,
            store: StoreState::default(),
            processes,
        }
    }

    fn now(&self) -> Duration {
        self.clock.now()
    }

    fn wall_ms(&self) -> u64 {
        EPOCH_MS + u64::try_from(self.now().as_millis()).expect("small")
    }

    /// Process `index` syncs (a round trip of no time): its lease.
    fn sync(&mut self, index: usize) -> Lease {
        let (now, wall_ms) = (self.now(), self.wall_ms());
        let holder = &mut self.processes[index].holder;
        let report = holder.report(now, wall_ms);
        let reply = step(&mut self.store, &self.settings, &report).expect("valid report");
        holder.apply(&reply, now);
        match reply {
            Reply::Lease(lease) => lease,
            Reply::Conflict(stored) => panic!("conflict with {stored:?}"),
        }
    }

    /// [`sync`](Self::sync), returning the report.
    fn sync_report(&mut self, index: usize) -> Report {
        let (now, wall_ms) = (self.now(), self.wall_ms());
        let holder = &mut self.processes[index].holder;
        let report = holder.report(now, wall_ms);
        let reply = step(&mut self.store, &self.settings, &report).expect("valid report");
        holder.apply(&reply, now);
        report
    }

    /// Processes `first` onwards sync, one after another.
    fn sync_all(&mut self, first: usize) {
        for index in first..self.processes.len() {
            self.sync(index);
        }
    }

    fn advance_ms(&self, ms: u64) {
        self.clock.advance(Duration::from_millis(ms));
    }

    fn scope(&self, index: usize) -> &Scope {
        self.processes[index].holder.scope()
    }

    fn level(&self, index: usize) -> u32 {
        self.scope(index).quota().level()
    }

    /// Process `index` makes a call that fails `failures` times with `kind` then succeeds
    /// (or gives up when refused): whether it succeeded.
    fn call(&self, index: usize, failures: u32, kind: ErrorKind) -> bool {
        let strategy = &self.processes[index].strategy;
        let mut token = strategy.acquire_initial_token();
        for _ in 0..failures {
            match strategy.refresh_retry_token(token, &RetryReason::error(kind)) {
                Ok(next) => token = next,
                Err(_) => return false,
            }
        }
        strategy.record_success(token);
        true
    }

    fn tick(&mut self, index: usize) {
        let now = self.now();
        self.processes[index].holder.tick(now);
    }

    fn stats(&self, index: usize) -> FleetStats {
        self.processes[index].holder.stats(self.now())
    }

    /// Process `index` sends a call's first attempt and then a hedge 50 ms later: whether the
    /// quota paid the hedge (the refusal's reason if not).
    fn hedge(&self, index: usize) -> Result<(), String> {
        use crate::classify::RetryInfoClassifier;
        use crate::driver::{HedgedLoop, NoHook};
        use crate::hedge::Hedging;

        let strategy = &self.processes[index].strategy;
        let hedging = Hedging::after(Duration::from_millis(50)).expect("valid");
        let mut call = HedgedLoop::new(strategy, RetryInfoClassifier, NoHook, hedging);
        assert_eq!(call.next_wait(true), None);
        let _first = call.attempt().expect("sent");
        call.try_hedge()
            .map(drop)
            .map_err(|refused| format!("{refused:?}"))
    }
}

#[test]
fn a_lone_process_gets_the_young_fleet_and_is_live() {
    let mut fleet = Fleet::new(1);
    assert_eq!(fleet.stats(0).status, FleetStatus::Connecting);
    let lease = fleet.sync(0);
    assert_eq!(
        (lease.grant, lease.live),
        (0, 1),
        "it held the young scope's 500"
    );
    assert_eq!(fleet.level(0), 500);
    let stats = fleet.stats(0);
    assert_eq!(stats.status, FleetStatus::Live);
    assert_eq!((stats.lease_tokens, stats.live_processes), (500, 1));
    assert_eq!(stats.last_sync_age, Some(Duration::ZERO));
    assert_eq!(fleet.scope(0).stats().fleet, Some(stats));
}

#[test]
fn tokens_are_granted_spent_and_given_back_without_being_counted_twice() {
    let mut fleet = Fleet::new(2);
    // Scopes older than their window (a young one keeps the young scope's tokens: see
    // `a_process_starting_cold_keeps_the_young_scopes_quota`).
    fleet.advance_ms(60_000);
    fleet.sync(0);
    // The second process: its fair share of the fleet's 500 is 250, but the pool is empty: it
    // is asked for the 500 it held locally, and gives back all but what its local rules let a
    // retry find (the fleet is healthy): one whole call's retries, 28.
    let lease = fleet.sync(1);
    assert_eq!(lease.grant, -500);
    assert_eq!(fleet.level(1), 28);
    // The first process's share is now 250: it gives back 250.
    fleet.advance_ms(1_000);
    assert_eq!(fleet.sync(0).grant, -250);
    assert_eq!(fleet.level(0), 250);
    // Reported as returned, the 250 go back to the pool, and to the second process.
    fleet.advance_ms(1_000);
    let lease = fleet.sync(1);
    assert_eq!(
        fleet.level(1),
        28,
        "not yet: the first has not reported its return"
    );
    assert_eq!(lease.grant, -28, "the 28 it keeps are asked for again");
    fleet.sync(0);
    let lease = fleet.sync(1);
    assert_eq!((lease.grant, fleet.level(1)), (222, 250));

    // The second spends: three calls that each fail twice before succeeding (a success
    // refunds its retries) and one that fails for good.
    for _ in 0..3 {
        assert!(fleet.call(1, 2, ErrorKind::Transient));
    }
    assert!(fleet.call(1, 2, ErrorKind::Transient));
    let spent_before = fleet.level(1);
    let strategy = &fleet.processes[1].strategy;
    let token = strategy.acquire_initial_token();
    let token = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Transient))
        .expect("paid");
    strategy.record_failure(token);
    assert_eq!(fleet.level(1), spent_before - 14);
    let (now, wall) = (fleet.now(), fleet.wall_ms());
    let report = fleet.processes[1].holder.report(now, wall);
    assert_eq!(report.calls, 5);
    assert_eq!(report.first_try_successes, 0);
    assert_eq!(report.tokens_wanted, 4 * 2 * 14 + 14);
    assert_eq!(report.tokens_granted, 4 * 2 * 14 + 14);
    // Three attempts per call that succeeded; the failed one's retry failed too.
    assert_eq!(report.sends, 4 * 3 + 2);
    assert_eq!(report.held, u64::from(fleet.level(1)));
}

#[test]
fn a_report_whose_fate_is_unknown_is_not_counted_again_and_an_unsent_one_is() {
    let mut fleet = Fleet::new(1);
    fleet.sync(0);
    for _ in 0..3 {
        fleet.call(0, 0, ErrorKind::Transient);
    }
    let (now, wall) = (fleet.now(), fleet.wall_ms());
    let holder = &mut fleet.processes[0].holder;
    let lost = holder.report(now, wall);
    assert_eq!((lost.calls, lost.first_try_successes), (3, 3));
    // The command timed out: the store may have applied it.
    holder.failed(&lost, Delivery::Unknown, now);
    fleet.call(0, 0, ErrorKind::Transient);
    let holder = &mut fleet.processes[0].holder;
    let next = holder.report(now, wall);
    assert_eq!(
        next.calls, 1,
        "the 3 calls of the report in doubt are not sent twice"
    );
    // This one never left the process: its counts go with the next.
    holder.failed(&next, Delivery::NotSent, now);
    fleet.call(0, 0, ErrorKind::Transient);
    let holder = &mut fleet.processes[0].holder;
    let again = holder.report(now, wall);
    assert_eq!(again.calls, 2);
}

#[test]
fn an_unsent_reports_calls_and_tokens_go_with_the_next_but_not_its_sends() {
    // The store measures its rates (the fleet's send rate, the rate the server admitted) per
    // sync interval: ten seconds of sends delivered in one report after the store was down
    // read as ten times the fleet's rate (the simulator: the store's rate at 4.7x the limit,
    // the fleet sending 2.3x the limit for a second).
    let mut fleet = Fleet::new(1);
    fleet.sync(0);
    let mut unsent = Vec::new();
    for _ in 0..3 {
        fleet.call(0, 1, ErrorKind::Throttling);
        fleet.advance_ms(1_000);
        let (now, wall) = (fleet.now(), fleet.wall_ms());
        let holder = &mut fleet.processes[0].holder;
        let report = holder.report(now, wall);
        holder.failed(&report, Delivery::NotSent, now);
        unsent.push(report);
    }
    fleet.call(0, 1, ErrorKind::Throttling);
    let report = fleet.sync_report(0);
    assert_eq!(report.calls, 4, "every call counts toward the fleet's cap");
    assert_eq!(
        report.tokens_wanted,
        unsent[0].tokens_wanted * 4,
        "and every token"
    );
    assert_eq!(
        (report.sends, report.throttles),
        (2, 1),
        "this interval's sends only"
    );
}

#[test]
fn the_local_traffic_rules_are_off_while_the_lease_lives() {
    let mut fleet = Fleet::new(2);
    // Process 0 carries the traffic (10 calls/s), process 1 almost none, for two minutes.
    for _ in 0..120 {
        for _ in 0..10 {
            fleet.call(0, 0, ErrorKind::Transient);
        }
        fleet.sync(0);
        fleet.sync(1);
        fleet.advance_ms(1_000);
    }
    fleet.sync(0);
    let lease = fleet.sync(1);
    // The fleet's cap: about 10 calls/s over a 60 s window (the store's average starts from
    // its first tick, which held two instants' calls); each process its fair share.
    assert!((550..=700).contains(&lease.cap), "{lease:?}");
    let level = fleet.level(1);
    assert!(
        level > 28,
        "the lease holds {level} (process 0: {})",
        fleet.level(0)
    );
    // Locally, a scope that made no call in its window would be capped at one call's retries
    // (2 x 14 = 28): the lease lifts that.
    assert_eq!(fleet.scope(1).stats().quota_level, level);
    let strategy = &fleet.processes[1].strategy;
    let mut paid = 0;
    while strategy
        .refresh_retry_token(
            strategy.acquire_initial_token(),
            &RetryReason::error(ErrorKind::Transient),
        )
        .is_ok()
    {
        paid += 1;
    }
    assert_eq!(paid, level / 14);
}

#[test]
fn a_failing_fleets_lease_expires_into_a_fallback_at_its_cap_over_its_processes() {
    // Two processes older than their window (no young scope's tokens), the first making 10
    // calls a second; then two seconds of its calls failing at every attempt: the fleet's
    // calls say the upstream is failing.
    let (mut fleet, _) = healthy_fleet(61, [10, 0]);
    assert_eq!(fleet.scope(0).young_quota_at(fleet.now()), 0);
    for _ in 0..2 {
        for _ in 0..10 {
            failing_call(&fleet.processes[0].strategy);
        }
        fleet.advance_ms(1_000);
        fleet.sync(1);
    }
    let lease = fleet.sync(0);
    assert!(lease.fleet_failing(), "{lease:?}");
    let share = u32::try_from(lease.cap / lease.live).expect("small");
    assert_eq!((lease.cap, share), (794, 397), "{lease:?}");
    // 2.999 s later the lease (3 s) still lives: a retry finds the whole level.
    fleet.advance_ms(2_999);
    fleet.tick(0);
    assert_eq!(fleet.stats(0).status, FleetStatus::Live);
    fleet.scope(0).quota().release(600);
    let level = fleet.level(0);
    assert!(level > share, "{level}");
    assert_eq!(fleet.scope(0).stats().quota_level, level);
    // At 3 s a retry already meets the fallback's cap, before the holder's tick.
    fleet.advance_ms(1);
    assert_eq!(fleet.scope(0).stats().quota_level, share);
    fleet.tick(0);
    let stats = fleet.stats(0);
    assert_eq!(stats.status, FleetStatus::Fallback);
    assert_eq!(stats.last_sync_age, Some(Duration::from_secs(3)));
    assert_eq!(fleet.scope(0).stats().quota_level, share);
    // The next successful sync makes it live again.
    fleet.sync(0);
    assert_eq!(fleet.stats(0).status, FleetStatus::Live);
}

#[test]
fn a_healthy_fleets_fallback_grants_every_retry_local_mode_would() {
    // Fifty young processes and five calls a second: the young fleet's cap of 500 over them is
    // 10 tokens each, under one retry's cost (14). The store goes away while the fleet is
    // healthy (its tokens over half its cap, its calls first-try successes).
    const PROCESSES: usize = 50;
    let mut fleet = Fleet::new(PROCESSES as u64);
    let twin = local_twin(&fleet.clock);
    fleet.sync_all(0);
    for _ in 0..5 {
        fleet.call(0, 0, ErrorKind::Transient);
    }
    fleet.advance_ms(1_000);
    fleet.sync_all(1);
    let lease = fleet.sync(0);
    assert!(!lease.fleet_failing(), "{lease:?}");
    assert_eq!(lease.cap / lease.live, 10, "{lease:?}");
    // Its calls now fail once each: every retry local mode grants the same process (a young
    // scope's 500 tokens: 35 retries at 14) is granted.
    let (local, fleet_mode) = retries_in_fallback(&mut fleet, &twin);
    assert_eq!(local, 20, "local mode granted {local} retries");
    assert!(
        fleet_mode >= local,
        "fleet mode granted {fleet_mode} retries in its fallback, local mode {local}"
    );
}

#[test]
fn a_young_process_keeps_its_young_quota_in_a_failing_fleets_fallback() {
    // A hundred young processes, two of them making 10 calls a second whose first attempts
    // fail: the fleet is failing, and its cap (600 tokens, from its calls a second over the
    // 60 s window) over them is 6 tokens each, under one retry's cost (14). The store goes away.
    const PROCESSES: usize = 100;
    let mut fleet = Fleet::new(PROCESSES as u64);
    let twin = local_twin(&fleet.clock);
    fleet.sync_all(0);
    for _ in 0..2 {
        for index in 0..2 {
            for _ in 0..10 {
                fleet.call(index, 1, ErrorKind::Transient);
            }
        }
        fleet.advance_ms(1_000);
        fleet.sync_all(1);
    }
    let lease = fleet.sync(0);
    assert!(lease.fleet_failing(), "{lease:?}");
    assert_eq!((lease.cap, lease.cap / lease.live), (600, 6), "{lease:?}");
    // The fleet is failing, but a process starting cold has local mode's young-scope quota
    // (500 tokens: 35 retries at 14) whatever the fleet: every retry its local twin is granted.
    let (local, fleet_mode) = retries_in_fallback(&mut fleet, &twin);
    assert_eq!(local, 20, "local mode granted {local} retries");
    assert!(
        fleet_mode >= local,
        "fleet mode granted a young process {fleet_mode} retries in a failing fleet's \
         fallback, local mode {local}"
    );
}

#[test]
fn an_engaged_fleet_sets_each_limiter_to_its_share_and_no_share_to_the_floor() {
    let mut fleet = Fleet::new(2);
    fleet.sync(0);
    fleet.sync(1);
    // Process 0 sends 100 attempts over a second, 10 throttled; process 1 sends nothing.
    for i in 0..100 {
        let kind = if i % 10 == 0 {
            ErrorKind::Throttling
        } else {
            ErrorKind::Transient
        };
        fleet.call(0, u32::from(i % 10 == 0), kind);
    }
    fleet.advance_ms(1_000);
    let lease = fleet.sync(0);
    assert!(lease.engaged, "{lease:?}");
    let limiter = fleet.scope(0).limiter().stats();
    assert!(limiter.enabled);
    assert_eq!(limiter.fill_rate, lease.send_rate as f64 / 1_000.0);
    assert_eq!(fleet.stats(0).send_rate, Some(limiter.fill_rate));
    // Its own first throttle under the lease steps its rate down once; the fleet's share (its
    // stats) is unchanged, and the next lease sets it again.
    let scope = fleet.scope(0).clone();
    let now = fleet.now();
    scope.limiter().record_response(true, now, now);
    scope.limiter().record_response(true, now, now);
    assert_eq!(scope.limiter().stats().fill_rate, limiter.fill_rate * 0.7);
    assert_eq!(fleet.stats(0).send_rate, Some(limiter.fill_rate));
    let again = fleet.sync(0);
    assert_eq!(
        scope.limiter().stats().fill_rate,
        again.send_rate as f64 / 1_000.0
    );
    // Process 1 has no demand: no share, the floor.
    let idle = fleet.sync(1);
    assert_eq!((idle.engaged, idle.share_ppm), (true, 0));
    assert_eq!(fleet.scope(1).limiter().stats().fill_rate, 0.5);
}

#[test]
fn a_fallback_holds_the_limiter_at_its_last_share() {
    // Each process's CUBIC growing again from its share on its own: 1000 processes sent 1.4x
    // the limit over 10 s in the simulator while the store was down, paused or slow.
    let mut fleet = Fleet::new(1);
    fleet.sync(0);
    for i in 0..50 {
        fleet.call(0, u32::from(i % 5 == 0), ErrorKind::Throttling);
    }
    fleet.advance_ms(1_000);
    let lease = fleet.sync(0);
    assert!(lease.engaged);
    let share = lease.send_rate as f64 / 1_000.0;
    fleet.advance_ms(3_000);
    fleet.tick(0);
    assert_eq!(fleet.stats(0).status, FleetStatus::Fallback);
    let scope = fleet.scope(0).clone();
    assert_eq!(scope.limiter().stats().fill_rate, share);
    assert!(scope.limiter().is_pinned(), "held at the last share");
    // Successes do not grow it.
    let now = fleet.now();
    for i in 0..20 {
        let at = now + Duration::from_millis(100 * i);
        scope.limiter().record_response(false, at, at);
    }
    assert_eq!(scope.limiter().stats().fill_rate, share);
    // Detached, the local rules go on from it.
    drop(fleet);
    assert!(!scope.limiter().is_pinned());
    assert_eq!(scope.limiter().stats().fill_rate, share);
}

/// Each of `fleet`'s processes sends 100 attempts, 1 in 10 throttled, then a second passes.
fn a_throttled_second(fleet: &Fleet) {
    for index in 0..fleet.processes.len() {
        for i in 0..100 {
            let throttled = i % 10 == 0;
            let kind = if throttled {
                ErrorKind::Throttling
            } else {
                ErrorKind::Transient
            };
            fleet.call(index, u32::from(throttled), kind);
        }
    }
    fleet.advance_ms(1_000);
}

#[test]
fn a_store_that_lost_its_state_cannot_give_one_process_the_fleets_rate() {
    let mut fleet = Fleet::new(4);
    for index in 0..4 {
        fleet.sync(index);
    }
    for _ in 0..3 {
        a_throttled_second(&fleet);
        for index in 0..4 {
            fleet.sync(index);
        }
    }
    let before = fleet.scope(0).limiter().stats().fill_rate;
    // Flushed: the first process to report is the only demand the store knows.
    fleet.store = StoreState::default();
    a_throttled_second(&fleet);
    let lease = fleet.sync(0);
    let granted = lease.send_rate as f64 / 1_000.0;
    assert!(granted > 2.0 * before, "{before} -> {lease:?}");
    let after = fleet.scope(0).limiter().stats().fill_rate;
    let even = lease.fleet_rate as f64 / 1_000.0 / 4.0;
    assert!(
        after <= (before * 1.25).max(even),
        "{before} -> {after} (the store granted {granted}, the fleet's rate over 4 is {even})"
    );
}

#[test]
fn a_conflict_leaves_the_scope_local_and_says_which_setting() {
    let mut fleet = Fleet::new(1);
    fleet.sync(0);
    let other = RetryConfig::builder()
        .max_attempts(5)
        .build()
        .expect("valid");
    let scope = Scope::with_clock("inventory", &other, fleet.clock.clone());
    let settings = Settings::from_config(&other, &FleetOptions::default()).expect("valid");
    let mut holder = LeaseHolder::attach(&scope, settings, ProcessId(9)).expect("free");
    let report = holder.report(fleet.now(), fleet.wall_ms());
    let reply = step(&mut fleet.store, &fleet.settings, &report).expect("valid");
    // The store answers the stranger with its own settings.
    let reply = match reply {
        Reply::Lease(_) => step(&mut fleet.store, &settings, &report).expect("valid"),
        conflict => conflict,
    };
    holder.apply(&reply, fleet.now());
    let stats = holder.stats(fleet.now());
    assert_eq!(stats.status, FleetStatus::Conflict);
    // `max_attempts` is not one of the store's numbers: its fingerprint differs.
    assert_eq!(stats.conflict, Some("config_hash"));
    assert_eq!(scope.quota().level(), 500, "its local quota, untouched");
}

#[test]
fn one_holder_per_scope_and_dropping_it_detaches() {
    let fleet = Fleet::new(1);
    let scope = fleet.scope(0).clone();
    let error = LeaseHolder::attach(&scope, fleet.settings, ProcessId(2)).expect_err("taken");
    assert!(
        matches!(error, FleetError::AlreadyAttached { .. }),
        "{error}"
    );
    drop(fleet);
    assert_eq!(
        scope.stats().fleet.map(|stats| stats.status),
        Some(FleetStatus::Detached)
    );
    let settings =
        Settings::from_config(&RetryConfig::default(), &FleetOptions::default()).expect("valid");
    assert!(LeaseHolder::attach(&scope, settings, ProcessId(2)).is_ok());
}

#[test]
fn a_reply_out_of_bounds_changes_nothing_but_counts_as_a_sync_in_doubt() {
    use crate::fleet::protocol::ReplyItem;
    let mut fleet = Fleet::new(1);
    let lease = fleet.sync(0);
    let (now, wall) = (fleet.now(), fleet.wall_ms());
    let holder = &mut fleet.processes[0].holder;
    let report = holder.report(now, wall);
    // A hostile store grants more than its own cap.
    let mut items = Reply::Lease(Lease { grant: 1, ..lease }).encode();
    items[2] = ReplyItem::Int(i64::try_from(lease.cap).expect("small"));
    let error = Reply::decode(&items, &fleet.settings, &report).expect_err("beyond the cap");
    holder.failed_with(&report, &FleetError::Protocol(error), now);
    assert_eq!(fleet.level(0), 500, "the lease as it was");
    assert_eq!(fleet.stats(0).status, FleetStatus::Live);
}

#[test]
fn reports_made_while_threads_call_count_every_call_once() {
    const THREADS: usize = 8;
    const CALLS: usize = 2_000;
    let fleet = std::sync::Mutex::new(Fleet::new(1));
    let strategy = fleet.lock().expect("not poisoned").processes[0]
        .strategy
        .clone();
    let mut reported = Vec::new();
    // Halfway through, each thread waits for a sync: syncs and calls interleave.
    let synced = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|threads| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (strategy, synced) = (strategy.clone(), &synced);
                threads.spawn(move || {
                    for i in 0..CALLS {
                        while i == CALLS / 2 && !synced.load(std::sync::atomic::Ordering::Acquire) {
                            std::thread::yield_now();
                        }
                        let token = strategy.acquire_initial_token();
                        if (i + t) % 3 != 0 {
                            strategy.record_success(token);
                            continue;
                        }
                        let reason = RetryReason::error(ErrorKind::Transient);
                        match strategy.refresh_retry_token(token, &reason) {
                            Ok(token) if i % 2 == 0 => strategy.record_success(token),
                            // Cancelled while it waited: the retry was never sent.
                            Ok(token) => strategy.abandon(token),
                            Err(_) => {}
                        }
                    }
                })
            })
            .collect();
        // Meanwhile the process syncs, over and over.
        while !workers.iter().all(|worker| worker.is_finished()) {
            let mut fleet = fleet.lock().expect("not poisoned");
            reported.push(fleet.sync_report(0));
            synced.store(true, std::sync::atomic::Ordering::Release);
            fleet.advance_ms(10);
        }
    });
    let mut fleet = fleet.into_inner().expect("not poisoned");
    reported.push(fleet.sync_report(0));
    let sum = |field: fn(&Report) -> u64| reported.iter().map(field).sum::<u64>();
    let totals = fleet.scope(0).totals();
    assert_eq!(totals.calls, (THREADS * CALLS) as u64);
    assert_eq!(sum(|report| report.calls), totals.calls);
    assert_eq!(sum(|report| report.sends), totals.attempts);
    assert_eq!(sum(|report| report.tokens_wanted), totals.tokens_asked);
    assert_eq!(sum(|report| report.tokens_granted), totals.tokens_paid);
    let first_tries = totals.successes - totals.retried_successes;
    assert_eq!(sum(|report| report.first_try_successes), first_tries);
    assert!(fleet.level(0) <= 5_000);
}

/// An engaged lease of a fleet of `live` processes at `fleet_rate`/s, the process's share
/// `send_rate`/s.
fn engaged_lease(live: u64, fleet_rate: f64, send_rate: f64) -> Lease {
    Lease {
        grant: 0,
        cap: 500,
        live,
        born_ms: 1,
        now_ms: 1,
        engaged: true,
        fleet_rate: (fleet_rate * 1_000.0) as u64,
        share_ppm: (send_rate / fleet_rate * 1e6) as u64,
        send_rate: (send_rate * 1_000.0) as u64,
        fleet_tokens: 500,
        dropped: Dropped::Nothing,
    }
}

#[test]
fn a_lease_raises_a_process_share_at_most_a_tenth() {
    let last = engaged_lease(10, 500.0, 50.0);
    // The share doubles at the same fleet rate: a tenth more this lease.
    let doubled = engaged_lease(10, 500.0, 100.0);
    assert_rate(limiter_rate(&doubled, Some(&last), Some(50.0), true), 55.0);
    // The fleet's rate rises a fifth, the share stays: the rate follows the fleet's.
    let regained = engaged_lease(10, 600.0, 60.0);
    assert_rate(limiter_rate(&regained, Some(&last), Some(50.0), true), 60.0);
    // Both rise: a quarter in all, at most.
    let both = engaged_lease(10, 600.0, 90.0);
    assert_rate(limiter_rate(&both, Some(&last), Some(50.0), true), 62.5);
}

#[test]
fn a_share_that_may_not_rise_does_not() {
    let last = engaged_lease(10, 500.0, 50.0);
    // Re-learning: 5 processes heard so far, this one given twice its share.
    let relearning = engaged_lease(5, 500.0, 100.0);
    assert_rate(
        limiter_rate(&relearning, Some(&last), Some(50.0), false),
        50.0,
    );
    // The fleet's own rise still passes.
    let relearning_higher = engaged_lease(5, 550.0, 110.0);
    assert_rate(
        limiter_rate(&relearning_higher, Some(&last), Some(50.0), false),
        55.0,
    );
}

#[test]
fn a_lease_counting_under_half_the_processes_does_not_raise_a_rate_to_the_even_one() {
    // A store re-learning after a flush: 1,000 processes shared 500/s, this one 0.3/s of it.
    // The first lease after counts 3 processes and gives this one a third of the fleet's rate:
    // its rate stays, not the fleet's rate over 1,000 (0.5/s).
    let last = engaged_lease(1_000, 500.0, 0.3);
    let relearning = engaged_lease(3, 500.0, 500.0 / 3.0);
    assert_rate(
        limiter_rate(&relearning, Some(&last), Some(0.3), false),
        0.3,
    );
    // Half the processes counted (half the fleet crashed at once): the even rate is a floor.
    let half = engaged_lease(500, 500.0, 1.0);
    assert_rate(limiter_rate(&half, Some(&last), Some(0.3), false), 0.5);
}

#[test]
fn no_share_of_a_small_fleet_rises_until_three_leases_count_the_same_processes() {
    // One process's leases in a fleet under 20 processes (a twentieth of its count is under
    // one process): 10 live processes and a share of 50/s; then the store counts 5 (it forgot
    // the others and hears them again), then 10 again, each lease offering twice the share.
    // The share stays until three leases in a row counted the same processes, then rises a
    // tenth per lease.
    let rates = rates_through_leases(&[10, 5, 10, 10, 10, 10, 10], 500.0, 50.0);
    assert_rates(&rates, &[50.0, 50.0, 50.0, 50.0, 50.0, 55.0, 60.5]);
}

#[test]
fn a_share_rises_while_leases_count_within_a_twentieth_of_the_last() {
    // A fleet of about 800 processes that scales up and down: no two leases in a row count the
    // same, each at most a twentieth of the last count from it, up and down (800 -> 840: 40 of
    // 800; 840 -> 882: 42 of 840, the edge). Each lease offers the process twice its share;
    // after three such leases it rises a tenth per lease. A count moving by more than a
    // twentieth (840 -> 883: 43 of 840) starts the three again. A fortieth, a tenth or counting
    // exactly fails this.
    let lives = [800, 840, 800, 840, 882, 840, 883, 927, 973, 1_021];
    let rates = rates_through_leases(&lives, 400.0, 0.5);
    let expected = [
        0.5, 0.5, 0.5, 0.55, 0.605, 0.6655, 0.6655, 0.6655, 0.6655, 0.73205,
    ];
    assert_rates(&rates, &expected);
}

/// The limiter's rate after each of one process's engaged leases a second apart, counting
/// `lives` live processes of a fleet at `fleet_rate`: the first lease gives it `first_share`/s,
/// every later one twice that.
fn rates_through_leases(lives: &[u64], fleet_rate: f64, first_share: f64) -> Vec<f64> {
    let mut fleet = Fleet::new(1);
    fleet.sync(0);
    let mut rates = Vec::new();
    for (i, &live) in lives.iter().enumerate() {
        let send_rate = if i == 0 {
            first_share
        } else {
            2.0 * first_share
        };
        let lease = Lease {
            now_ms: fleet.wall_ms(),
            ..engaged_lease(live, fleet_rate, send_rate)
        };
        fleet.advance_ms(1_000);
        let (now, wall_ms) = (fleet.now(), fleet.wall_ms());
        let holder = &mut fleet.processes[0].holder;
        holder.report(now, wall_ms);
        holder.apply(&Reply::Lease(lease), now);
        rates.push(fleet.scope(0).limiter().stats().fill_rate);
    }
    rates
}

fn assert_rates(rates: &[f64], expected: &[f64]) {
    assert_eq!(rates.len(), expected.len(), "{rates:?}");
    for (rate, expected) in rates.iter().zip(expected) {
        assert!((rate - expected).abs() < 1e-6, "{rates:?}");
    }
}

fn assert_rate(rate: f64, expected: f64) {
    assert!((rate - expected).abs() < 1e-9, "{rate} is not {expected}");
}

#[test]
fn a_throttled_attempt_is_reported_sent_with_its_throttle_not_when_its_call_ends() {
    // A call throttled and waiting for its retry (`Retry-After: 1`) when the process reports:
    // the report holds the throttle, so it must hold the attempt too. Counted at the call's
    // end, the attempt came a report later, and the store measured `sent - throttled` short by
    // every throttle of the interval (the harness: 421/s measured of a 500/s limit).
    let mut fleet = Fleet::new(1);
    fleet.sync(0);
    let strategy = &fleet.processes[0].strategy;
    let token = strategy.acquire_initial_token();
    let waiting = strategy
        .refresh_retry_token(token, &RetryReason::error(ErrorKind::Throttling))
        .expect("a retry");
    fleet.advance_ms(1_000);
    let report = fleet.sync_report(0);
    assert_eq!((report.sends, report.throttles), (1, 1));
    // The retry succeeds in the next interval: one more attempt, none counted twice.
    let strategy = &fleet.processes[0].strategy;
    strategy.record_success(waiting);
    fleet.advance_ms(1_000);
    let report = fleet.sync_report(0);
    assert_eq!((report.sends, report.throttles), (1, 0));
}

#[test]
fn a_process_starting_cold_keeps_the_young_scopes_quota() {
    let mut fleet = Fleet::new(2);
    fleet.sync(0);
    // The second process joins a fleet whose pool the first holds: the store asks for the
    // young scope's 500 back (it cannot account for them), but local mode would let a young
    // scope spend them: it keeps them while it is younger than its window.
    let lease = fleet.sync(1);
    assert_eq!(lease.grant, -500);
    assert_eq!(fleet.level(1), 500);
    // Every retry local mode grants a young scope: 35 calls failing twice, 14 tokens each.
    for call in 0..35 {
        let strategy = &fleet.processes[1].strategy;
        let token = strategy.acquire_initial_token();
        let token = strategy
            .refresh_retry_token(token, &RetryReason::error(ErrorKind::Transient))
            .unwrap_or_else(|_| panic!("retry of call {call} refused"));
        strategy.record_failure(token);
    }
    fleet.advance_ms(1_000);
    fleet.sync(1);
    assert_eq!(fleet.level(1), 500 - 35 * 14);
    // Once older than its window, it keeps what local mode would let it spend for its own
    // traffic (35 calls in a minute: one call's retries, 28 tokens) while the fleet is not
    // failing: a negative grant is applied down to that.
    fleet.advance_ms(60_000);
    fleet.sync(0);
    let before = fleet.level(1);
    let lease = fleet.sync(1);
    assert!(lease.grant < 0 && !lease.fleet_failing(), "{lease:?}");
    assert_eq!(
        i64::from(fleet.level(1)),
        (i64::from(before) + lease.grant).max(i64::from(before.min(28)))
    );
}

/// A scope on `clock` in local mode, on the fleet's configuration: what the same process would
/// grant without a fleet.
fn local_twin(clock: &Arc<ManualClock>) -> StandardStrategy {
    let config = RetryConfig::default();
    let scope = Scope::with_clock("inventory", &config, clock.clone());
    StandardStrategy::builder(config).scope(scope).build()
}

/// A call on `strategy` that fails with a transient error at every attempt: the retries it was
/// granted before a refusal or its last attempt.
fn failing_call(strategy: &StandardStrategy) -> u32 {
    let mut token = strategy.acquire_initial_token();
    let mut granted = 0;
    while let Ok(next) =
        strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Transient))
    {
        granted += 1;
        token = next;
    }
    granted
}

/// The first retries of `calls` calls that fail once, one call after another, on `strategy`:
/// how many were granted (a granted retry holds its tokens until the call ends, failing).
fn first_retries(strategy: &StandardStrategy, calls: u32) -> u32 {
    let mut granted = 0;
    for _ in 0..calls {
        let token = strategy.acquire_initial_token();
        if let Ok(token) =
            strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Transient))
        {
            granted += 1;
            strategy.record_failure(token);
        }
    }
    granted
}

/// Process 0's lease expires (3 s without a sync) into its fallback; then the first retries of
/// 20 calls that fail once, on its local `twin` and on it: (local mode's, fleet mode's).
fn retries_in_fallback(fleet: &mut Fleet, twin: &StandardStrategy) -> (u32, u32) {
    fleet.advance_ms(3_000);
    fleet.tick(0);
    assert_eq!(fleet.stats(0).status, FleetStatus::Fallback);
    let fleet_mode = &fleet.processes[0].strategy;
    (first_retries(twin, 20), first_retries(fleet_mode, 20))
}

/// Two processes and the first's local twin, older than their window, after `seconds` in
/// which the first (and its twin) makes `rates[0]` calls a second and the second `rates[1]`,
/// all first-try successes, each syncing every second.
fn healthy_fleet(seconds: u32, rates: [u32; 2]) -> (Fleet, StandardStrategy) {
    let mut fleet = Fleet::new(2);
    let twin = local_twin(&fleet.clock);
    for _ in 0..seconds {
        for _ in 0..rates[0] {
            fleet.call(0, 0, ErrorKind::Transient);
            twin.record_success(twin.acquire_initial_token());
        }
        for _ in 0..rates[1] {
            fleet.call(1, 0, ErrorKind::Transient);
        }
        fleet.advance_ms(1_000);
        fleet.sync(0);
        fleet.sync(1);
    }
    (fleet, twin)
}

#[test]
fn a_healthy_fleet_grants_every_retry_local_mode_would() {
    let (mut fleet, twin) = healthy_fleet(70, [20, 2]);
    // The second process retries (a few calls fail once, then succeed): the store moves the
    // fleet's tokens toward its demand and asks the first, which has none, for its own.
    for _ in 0..5 {
        assert!(fleet.call(1, 1, ErrorKind::Transient));
    }
    fleet.advance_ms(1_000);
    fleet.sync(1);
    let lease = fleet.sync(0);
    assert!(lease.grant < 0, "the first is asked for tokens: {lease:?}");
    assert!(!lease.fleet_failing(), "{lease:?}");
    // Now the first process's calls fail once each: every retry local mode grants the same
    // process (its own traffic, about 20 calls a second: about 1,200 tokens, 85 retries at 14)
    // is granted.
    let local = first_retries(&twin, 120);
    let fleet_mode = first_retries(&fleet.processes[0].strategy, 120);
    assert!(local >= 80, "local mode granted {local} retries");
    assert!(
        fleet_mode >= local,
        "fleet mode granted {fleet_mode} retries, local mode {local}"
    );
}

#[test]
fn a_fleet_failing_everywhere_still_refuses() {
    let (mut fleet, twin) = healthy_fleet(70, [2, 20]);
    // The second process, nine tenths of the fleet's traffic, sees every call fail: it spends
    // what it holds and asks for more, until the fleet's tokens are below half its cap. The
    // first (and its twin) go on succeeding.
    for _ in 0..30 {
        for _ in 0..20 {
            failing_call(&fleet.processes[1].strategy);
        }
        for _ in 0..2 {
            fleet.call(0, 0, ErrorKind::Transient);
            twin.record_success(twin.acquire_initial_token());
        }
        fleet.advance_ms(1_000);
        fleet.sync(1);
        fleet.sync(0);
    }
    let lease = fleet.sync(0);
    assert!(lease.fleet_failing(), "{lease:?}");
    // The first process gave what it held to the failing one: its retries are refused, though
    // local mode, seeing only its own traffic (2 calls a second: 120 tokens, 8 retries),
    // would grant them.
    assert_eq!(fleet.level(0), 0);
    assert_eq!(first_retries(&fleet.processes[0].strategy, 10), 0);
    let local = first_retries(&twin, 10);
    assert!(local >= 8, "local mode granted {local} retries");
}

#[test]
fn a_fleet_whose_calls_all_fail_is_failing_within_a_sync() {
    // Four processes of 50 calls a second, older than their window, all first-try successes:
    // each keeps what local mode would let its own traffic spend (3,000 tokens), together
    // more than the fleet's cap (the quota's most, 5,000), so the store counts each as holding
    // its share of the cap, not all it keeps.
    const PROCESSES: usize = 4;
    let mut fleet = Fleet::new(PROCESSES as u64);
    let syncs =
        |fleet: &mut Fleet| -> Vec<Lease> { (0..PROCESSES).map(|i| fleet.sync(i)).collect() };
    for _ in 0..70 {
        for index in 0..PROCESSES {
            for _ in 0..50 {
                fleet.call(index, 0, ErrorKind::Transient);
            }
        }
        fleet.advance_ms(1_000);
        syncs(&mut fleet);
    }
    // An outage: every call fails at every attempt.
    let mut rounds = Vec::new();
    for _ in 0..2 {
        for index in 0..PROCESSES {
            for _ in 0..50 {
                failing_call(&fleet.processes[index].strategy);
            }
        }
        fleet.advance_ms(1_000);
        let leases = syncs(&mut fleet);
        let levels: Vec<u32> = (0..PROCESSES).map(|i| fleet.level(i)).collect();
        rounds.push((leases, levels));
    }
    // Every report since the outage began says no first try succeeded: by each process's
    // second sync the fleet is failing, whatever its tokens (replied as none), and no process
    // keeps a local allowance beyond what the store counts: together they hold at most the
    // fleet's cap, where each kept 3,000 of their own before.
    let (leases, levels) = rounds.last().expect("two rounds");
    for lease in leases {
        assert!(lease.fleet_failing(), "{rounds:?}");
        assert_eq!(lease.fleet_tokens, 0, "{rounds:?}");
    }
    let held: u64 = levels.iter().map(|&level| u64::from(level)).sum();
    assert!(held <= leases[0].cap, "held {held}: {rounds:?}");
}

#[test]
fn every_sync_whose_store_dropped_garbage_is_counted() {
    let mut fleet = Fleet::new(1);
    let lease = fleet.sync(0);
    assert_eq!(fleet.stats(0).garbage_dropped, 0);
    let drops = [
        Dropped::ProcessRecord,
        Dropped::State,
        Dropped::Nothing,
        Dropped::ProcessRecord,
    ];
    for dropped in drops {
        let (now, wall_ms) = (fleet.now(), fleet.wall_ms());
        let holder = &mut fleet.processes[0].holder;
        holder.report(now, wall_ms);
        let reply = Reply::Lease(Lease {
            grant: 0,
            dropped,
            ..lease
        });
        holder.apply(&reply, now);
    }
    let stats = fleet.stats(0);
    assert_eq!(
        (stats.garbage_dropped, stats.status),
        (3, FleetStatus::Live)
    );
}

#[test]
fn a_new_fleets_first_lease_lets_a_hedge_through() {
    // A new fleet holds the young quota: its first lease (its call rate not known yet) finds
    // it healthy, so a hedge is paid from the lease as a retry is, in its first second too.
    let mut fleet = Fleet::new(1);
    let lease = fleet.sync(0);
    assert!(!lease.fleet_failing(), "{lease:?}");
    let hedge = fleet.hedge(0);
    assert!(
        hedge.is_ok(),
        "the young lease's quota pays a hedge: {hedge:?}"
    );
}

#[test]
fn a_store_relearning_an_old_fleet_lets_a_hedge_through() {
    // A fleet older than its window, healthy, whose store lost its state: the re-learning
    // store's first lease (the fleet's call rate not known yet) finds it healthy, as it was, so
    // a hedge is paid from what the process holds.
    let mut fleet = Fleet::new(2);
    for _ in 0..=61 {
        for index in 0..2 {
            for _ in 0..10 {
                assert!(fleet.call(index, 0, ErrorKind::Transient));
            }
        }
        fleet.sync_all(0);
        fleet.advance_ms(1_000);
    }
    let before = fleet.sync(0);
    assert!(!before.fleet_failing(), "{before:?}");
    fleet.store = StoreState::default();
    let lease = fleet.sync(0);
    assert!(!lease.fleet_failing(), "{lease:?}");
    let hedge = fleet.hedge(0);
    assert!(hedge.is_ok(), "the held tokens pay a hedge: {hedge:?}");
}

#[test]
fn a_hedge_is_reported_sent_and_paid_from_the_lease() {
    // A hedge is an attempt like any other for the fleet: the store counts it in the process's
    // sends (its share of the fleet's rate follows what it really sends), and it pays from the
    // quota the lease set, as a retry does.
    use crate::classify::RetryInfoClassifier;
    use crate::driver::{HedgedLoop, Next, NoHook};
    use crate::hedge::Hedging;

    let mut fleet = Fleet::new(1);
    fleet.sync(0);
    fleet.advance_ms(1_000);
    assert_eq!(fleet.sync_report(0).sends, 0, "nothing sent yet");
    let leased = fleet.level(0);
    let strategy = &fleet.processes[0].strategy;
    let hedging = Hedging::after(Duration::from_millis(50)).expect("valid");
    let mut call = HedgedLoop::new(strategy, RetryInfoClassifier, NoHook, hedging);
    assert_eq!(call.next_wait(true), None);
    let first = call.attempt().expect("sent");
    let hedge = call.try_hedge().expect("the lease's quota pays a hedge");
    let paid = leased - fleet.level(0);
    assert_eq!(paid, RetryConfig::default().retry_cost(), "a retry's cost");
    let ok: Result<(), std::io::Error> = Ok(());
    assert_eq!(call.finish(hedge, &ok), Next::Return);
    let _ = call.finish(first, &ok);
    drop(call);
    fleet.advance_ms(1_000);
    let report = fleet.sync_report(0);
    assert_eq!(report.sends, 2, "the first attempt and its hedge");
}

#[test]
fn a_report_spans_nothing_before_its_scopes_traffic_then_the_time_since_the_last_report() {
    let mut fleet = Fleet::new(1);
    assert_eq!(fleet.sync_report(0).span_ms, 0, "attached, no traffic");
    fleet.advance_ms(1_000);
    assert_eq!(fleet.sync_report(0).span_ms, 0, "still no traffic");
    fleet.call(0, 0, ErrorKind::Transient);
    fleet.advance_ms(1_000);
    // A standard scope marks no first response: its first report of traffic spans from the
    // report before.
    assert_eq!(fleet.sync_report(0).span_ms, 1_000);
    fleet.advance_ms(700);
    assert_eq!(
        fleet.sync_report(0).span_ms,
        700,
        "no call since, but the scope has had traffic"
    );
}

#[test]
fn an_adaptive_scopes_first_report_of_traffic_spans_from_its_first_response() {
    // Attached at start-up (reports at 0 and 1 s), its first call at 2.6 s, its sync at 3 s:
    // the report tells of 400 ms of traffic, not of the 2 s since the report before.
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid");
    let clock = Arc::new(ManualClock::new());
    let scope = Scope::with_clock("inventory", &config, clock.clone());
    let settings = Settings::from_config(&config, &FleetOptions::default()).expect("valid");
    let mut holder = LeaseHolder::attach(&scope, settings, ProcessId(1)).expect("free");
    let strategy =
        AdaptiveStrategy::from_builder(StandardStrategy::builder(config).scope(scope.clone()));
    let mut report_at = |ms: u64| {
        clock.advance(Duration::from_millis(ms).saturating_sub(clock.now()));
        holder.report(clock.now(), EPOCH_MS + ms).span_ms
    };
    assert_eq!((report_at(0), report_at(1_000)), (0, 0));
    clock.advance(Duration::from_millis(1_600));
    strategy.record_success(strategy.acquire_initial_token());
    assert_eq!(report_at(3_000), 400);
    assert_eq!(report_at(4_000), 1_000, "then from the report before");
}
