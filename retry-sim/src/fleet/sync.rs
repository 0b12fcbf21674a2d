//! Fleet mode in the simulation: each process's sync task and the store it talks to, in
//! virtual time.
//!
//! A process's sync task runs `retry-core`'s own process side ([`LeaseHolder`]): once per sync
//! interval (jittered ±10 %, ±50 % after its attach's sync) it builds its scope's report, sends it to the store (`EVALSHA`;
//! `EVAL` again after `NOSCRIPT`), and applies the reply the store's step
//! ([`store_model::step`](retry_core::fleet::store_model::step)) returns, decoded as a reply
//! from Redis is ([`Reply::decode`]); a sync that times out or cannot connect is reported as
//! failed. The store executes each command when it arrives, or when it resumes from a pause
//! (even a command whose sender gave up), and never while it is down.

use std::collections::HashMap;

use retry_core::Scope;
use retry_core::fleet::lease::{Delivery as Fate, LeaseHolder};
use retry_core::fleet::protocol::{ProcessId, Reply, Report, Settings};

use super::arm::FleetTuning;
use super::recovery::Recovery;
use super::store::{Answer, Command, Delivery, Store, StoreConfig};
use super::store_fault::StoreCondition;
use crate::metrics::Recorder;
use crate::rng::Rng;
use crate::time::{MILLI, Nanos, to_duration};

/// The processes' clocks in Unix milliseconds at the run's start (2025-06-15): the store orders
/// reports by them, and a report at Unix time 0 would read as "never synced".
pub const WALL_EPOCH_MS: u64 = 1_750_000_000_000;

/// How far a sync interval is jittered, each way: ±10 %, as the sync task does.
pub const SYNC_JITTER: f64 = 0.1;

/// How far the interval after a process's attach sync is spread, each way: ±50 % (never to
/// within a tenth of an interval of the lease's end), as the sync task does, so that processes
/// attached together do not sync in step.
pub const ATTACH_SYNC_SPREAD: f64 = 0.5;

/// What the fleet's runtime asks the event loop to do later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetEvent {
    /// A process's sync task wakes up.
    Sync {
        /// The process.
        process: u32,
    },
    /// A process's connection attempt ends (established, or given up).
    Connected {
        /// The process.
        process: u32,
        /// Whether the connection is established.
        established: bool,
    },
    /// The store executes a command.
    Execute {
        /// The command.
        command: u64,
    },
    /// A command's answer reaches its sender.
    Answer {
        /// The command.
        command: u64,
    },
    /// A command's sender gives up waiting.
    GiveUp {
        /// The command.
        command: u64,
    },
    /// The store loses its state (a flush, a restart completing).
    StateLoss,
    /// A process that leaves cleanly shuts its fleet down: it tells the store it leaves.
    Leave {
        /// The process.
        process: u32,
    },
}

/// A command the store has not yet executed or answered.
#[derive(Debug)]
struct Pending {
    process: u32,
    command: Command,
    report: Report,
    answer: Option<Answer>,
    /// Whether its sender still waits for it.
    awaited: bool,
}

/// When a process's sync task runs: from its process's start until its process is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessLife {
    /// When the process starts: its first sync comes at once (attaching a scope wakes the sync
    /// task, as `Fleet::attach` does).
    pub starts: Nanos,
    /// When its sync task stops (it crashed, or left and its calls ended); `Nanos::MAX`: never.
    pub stops: Nanos,
    /// Whether it shuts its fleet down cleanly when it stops (it left: it tells the store, as
    /// `Fleet::shutdown` does), rather than falling silent (it crashed).
    pub leaves: bool,
}

impl ProcessLife {
    /// A process there for the whole run.
    pub const ALWAYS: Self = Self {
        starts: 0,
        stops: Nanos::MAX,
        leaves: false,
    };
}

/// One process's sync task.
#[derive(Debug)]
struct SyncTask {
    holder: LeaseHolder,
    life: ProcessLife,
    connected: bool,
    /// When the current sync started.
    started: Nanos,
    /// The report of the sync in progress.
    report: Option<Report>,
    /// Whether the sync in progress is the attach's (the process's first).
    attaching: bool,
}

impl SyncTask {
    /// The process's own clock at run time `now` (zero at its start).
    fn local(&self, now: Nanos) -> std::time::Duration {
        to_duration(now.saturating_sub(self.life.starts))
    }
}

/// Fleet mode's processes and store during one run.
#[derive(Debug)]
pub struct FleetRuntime {
    store: Store,
    settings: Settings,
    tuning: FleetTuning,
    tasks: Vec<SyncTask>,
    pending: HashMap<u64, Pending>,
    next_command: u64,
    rng: Rng,
    recovery: Recovery,
}

impl FleetRuntime {
    /// Attaches each process's scope to the fleet (process `i` is `ProcessId(i + 1)`), under
    /// `settings`, talking to a store configured by `store`; `lives[i]` says when process `i`
    /// syncs (all the run without).
    pub fn new(
        scopes: &[Scope],
        lives: &[ProcessLife],
        settings: Settings,
        tuning: FleetTuning,
        store: StoreConfig,
        store_rng: Rng,
        rng: Rng,
    ) -> Result<Self, String> {
        let mut tasks = Vec::with_capacity(scopes.len());
        for (index, scope) in scopes.iter().enumerate() {
            let holder = LeaseHolder::attach(scope, settings, ProcessId(index as u64 + 1))
                .map_err(|error| format!("attaching process {index}: {error}"))?;
            tasks.push(SyncTask {
                holder,
                life: lives.get(index).copied().unwrap_or(ProcessLife::ALWAYS),
                connected: false,
                started: 0,
                report: None,
                attaching: true,
            });
        }
        let recovery = Recovery::new(&store.faults, scopes.len());
        Ok(Self {
            store: Store::new(store, store_rng),
            settings,
            tuning,
            tasks,
            pending: HashMap::new(),
            next_command: 0,
            rng,
            recovery,
        })
    }

    /// The first events: each process's first sync at its start (it attaches its scope then,
    /// and the attach wakes its sync task, as in `retry-core`), the store's state losses.
    pub fn start(&mut self, out: &mut Vec<(Nanos, FleetEvent)>) {
        for (process, task) in self.tasks.iter().enumerate() {
            let process = process as u32;
            out.push((task.life.starts, FleetEvent::Sync { process }));
        }
        for at in self.store.config().faults.state_losses() {
            out.push((at, FleetEvent::StateLoss));
        }
        for (process, task) in self.tasks.iter().enumerate() {
            if task.life.leaves && task.life.stops < Nanos::MAX {
                let process = process as u32;
                out.push((task.life.stops, FleetEvent::Leave { process }));
            }
        }
    }

    /// The store, for tests and metrics.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The process side of process `index`.
    pub fn holder(&self, index: usize) -> Option<&LeaseHolder> {
        self.tasks.get(index).map(|task| &task.holder)
    }

    /// Seconds from the store's recovery until the fleet is back (see [`Recovery`]); NaN
    /// without a store fault, the time to `end` if it never got back.
    pub fn recovery_secs(&self, end: Nanos) -> f64 {
        self.recovery.secs(end)
    }

    /// Handles `event` at `now`; what to do later goes to `out`.
    pub fn handle(
        &mut self,
        now: Nanos,
        event: FleetEvent,
        recorder: &mut Recorder,
        out: &mut Vec<(Nanos, FleetEvent)>,
    ) {
        match event {
            FleetEvent::Sync { process } => self.sync(now, process, recorder, out),
            FleetEvent::Connected {
                process,
                established,
            } => self.connected(now, process, established, recorder, out),
            FleetEvent::Execute { command } => {
                self.execute(now, command);
                if let Some(fleet) = self.store.state().fleet() {
                    recorder.fleet_rate(now, u64::try_from(fleet.fleet_rate).unwrap_or(0));
                }
            }
            FleetEvent::Answer { command } => self.answer(now, command, recorder, out),
            FleetEvent::GiveUp { command } => self.give_up(now, command, out),
            FleetEvent::StateLoss => self.store.lose_state(),
            FleetEvent::Leave { process } => self.leave(now, process, recorder, out),
        }
    }

    /// A process leaves cleanly: one command telling the store (nobody waits for its answer;
    /// the store executes it when it arrives, as its faults allow, or never).
    fn leave(
        &mut self,
        now: Nanos,
        process: u32,
        recorder: &mut Recorder,
        out: &mut Vec<(Nanos, FleetEvent)>,
    ) {
        let report = Report {
            process: self.tasks[process as usize].holder.process(),
            now_ms: wall_ms(now),
            ..Report::default()
        };
        recorder.store_command(now);
        let id = self.next_command;
        self.next_command += 1;
        let exec = match self.store.send(now, self.timeout()) {
            Delivery::Answered { exec, .. } => Some(exec),
            Delivery::Unanswered { exec, .. } => exec,
        };
        if let Some(exec) = exec {
            out.push((exec, FleetEvent::Execute { command: id }));
            self.pending.insert(
                id,
                Pending {
                    process,
                    command: Command::Leave,
                    report,
                    answer: None,
                    awaited: false,
                },
            );
        }
    }

    /// A sync starts: the lease's expiry is checked, the report made; without a connection
    /// the process connects first.
    fn sync(
        &mut self,
        now: Nanos,
        process: u32,
        recorder: &mut Recorder,
        out: &mut Vec<(Nanos, FleetEvent)>,
    ) {
        let timeout = self.timeout();
        let task = &mut self.tasks[process as usize];
        if now >= task.life.stops {
            return;
        }
        let local = task.local(now);
        task.holder.tick(local);
        task.started = now;
        let report = task.holder.report(local, wall_ms(now));
        task.report = Some(report);
        if task.connected {
            self.send(now, process, Command::EvalSha, report, recorder, out);
            return;
        }
        // A connection: established after a round trip if the store's host answers (a paused
        // store's kernel still accepts it), given up after the timeout if it does not.
        let rtt = self.store.config().faults.rtt(now, self.store.config().rtt);
        let reachable =
            self.store.config().faults.condition(now + rtt / 2) != StoreCondition::Unreachable;
        let (at, established) = if reachable && rtt <= timeout {
            (now + rtt, true)
        } else {
            (now + timeout, false)
        };
        out.push((
            at,
            FleetEvent::Connected {
                process,
                established,
            },
        ));
    }

    fn connected(
        &mut self,
        now: Nanos,
        process: u32,
        established: bool,
        recorder: &mut Recorder,
        out: &mut Vec<(Nanos, FleetEvent)>,
    ) {
        let task = &mut self.tasks[process as usize];
        let Some(report) = task.report else {
            return;
        };
        if established {
            task.connected = true;
            self.send(now, process, Command::EvalSha, report, recorder, out);
        } else {
            self.finish(now, process, Err(Fate::NotSent), out);
        }
    }

    /// Sends `command` for `report` to the store.
    fn send(
        &mut self,
        now: Nanos,
        process: u32,
        command: Command,
        report: Report,
        recorder: &mut Recorder,
        out: &mut Vec<(Nanos, FleetEvent)>,
    ) {
        recorder.store_command(now);
        let id = self.next_command;
        self.next_command += 1;
        // The heap keeps the order of equal times: an execution before its answer.
        match self.store.send(now, self.timeout()) {
            Delivery::Answered { exec, reply } => {
                out.push((exec, FleetEvent::Execute { command: id }));
                out.push((reply, FleetEvent::Answer { command: id }));
            }
            Delivery::Unanswered { exec, gave_up } => {
                if let Some(exec) = exec {
                    out.push((exec, FleetEvent::Execute { command: id }));
                }
                out.push((gave_up, FleetEvent::GiveUp { command: id }));
            }
        }
        self.pending.insert(
            id,
            Pending {
                process,
                command,
                report,
                answer: None,
                awaited: true,
            },
        );
    }

    /// The store executes a command (its sender may have given up).
    fn execute(&mut self, now: Nanos, command: u64) {
        let Some(pending) = self.pending.get_mut(&command) else {
            return;
        };
        let answer = self
            .store
            .execute(pending.command, &self.settings, &pending.report, now);
        if pending.awaited {
            pending.answer = Some(answer);
        } else {
            self.pending.remove(&command);
        }
    }

    /// A command's answer arrives: `NOSCRIPT` sends the script again; a reply is decoded as
    /// the Redis backend decodes it and applied.
    fn answer(
        &mut self,
        now: Nanos,
        command: u64,
        recorder: &mut Recorder,
        out: &mut Vec<(Nanos, FleetEvent)>,
    ) {
        let Some(pending) = self.pending.remove(&command) else {
            return;
        };
        let process = pending.process;
        match pending.answer {
            Some(Answer::NoScript) => {
                self.send(now, process, Command::Eval, pending.report, recorder, out);
            }
            Some(Answer::Reply(items)) => {
                let result = Reply::decode(&items, &self.settings, &pending.report)
                    .map_err(|_| Fate::Unknown);
                self.finish(now, process, result, out);
            }
            // The script refused the report: the store applied nothing.
            Some(Answer::Error(_)) => self.finish(now, process, Err(Fate::NotSent), out),
            // An error reply, as the Redis backend classifies it: the report's fate unknown
            // (the store applied nothing, but the process cannot tell).
            Some(Answer::OutOfMemory) => self.finish(now, process, Err(Fate::Unknown), out),
            // Executed and answered is the only way here.
            None => self.finish(now, process, Err(Fate::Unknown), out),
        }
    }

    /// A command's sender gives up: the sync failed, its report's fate unknown; the
    /// connection is dropped (the backend reconnects at the next sync).
    fn give_up(&mut self, now: Nanos, command: u64, out: &mut Vec<(Nanos, FleetEvent)>) {
        let Some(pending) = self.pending.get_mut(&command) else {
            return;
        };
        if !pending.awaited {
            return;
        }
        pending.awaited = false;
        let process = pending.process;
        if pending.answer.is_some() {
            self.pending.remove(&command);
        }
        self.tasks[process as usize].connected = false;
        self.finish(now, process, Err(Fate::Unknown), out);
    }

    /// The sync ends: the lease applied, or the failure told; the next sync is scheduled a
    /// jittered interval after this one started (spread wider after the attach's sync).
    fn finish(
        &mut self,
        now: Nanos,
        process: u32,
        result: Result<Reply, Fate>,
        out: &mut Vec<(Nanos, FleetEvent)>,
    ) {
        let task = &mut self.tasks[process as usize];
        let Some(report) = task.report.take() else {
            return;
        };
        let local = task.local(now);
        match result {
            Ok(reply) => {
                task.holder.apply(&reply, local);
                if let Reply::Lease(lease) = reply {
                    self.recovery.synced(now, process, lease.engaged);
                }
            }
            Err(fate) => task.holder.failed(&report, fate, local),
        }
        let interval = self.tuning.sync_interval as f64;
        let draw = self.rng.next_f64();
        let wait = if task.attaching {
            // Never a tenth of an interval short of the lease, as the sync task.
            let longest = (self.tuning.lease_ttl() as f64 - SYNC_JITTER * interval)
                .max((1.0 + SYNC_JITTER) * interval);
            (interval * (1.0 - ATTACH_SYNC_SPREAD + 2.0 * ATTACH_SYNC_SPREAD * draw)).min(longest)
        } else {
            interval * (1.0 - SYNC_JITTER + 2.0 * SYNC_JITTER * draw)
        };
        task.attaching = false;
        let next = task.started + wait as Nanos;
        out.push((next.max(now + 1), FleetEvent::Sync { process }));
    }

    fn timeout(&self) -> Nanos {
        self.store.command_timeout(self.tuning.sync_interval)
    }
}

/// A process's clock at virtual time `now`, in Unix milliseconds.
pub fn wall_ms(now: Nanos) -> u64 {
    WALL_EPOCH_MS + now / MILLI
}

#[cfg(test)]
mod tests {
    use retry_core::RetryConfig;

    use super::*;
    use crate::metrics::Windows;
    use crate::time::SECOND;

    /// When each process's syncs start over the first `end`, `processes` of them all started
    /// (and attached) at 0, syncing every second.
    fn syncs_of_a_fleet_started_together(processes: usize, end: Nanos) -> Vec<Vec<Nanos>> {
        let scopes: Vec<Scope> = (0..processes)
            .map(|index| {
                Scope::new(
                    &format!("started-together-{index}"),
                    &RetryConfig::default(),
                )
            })
            .collect();
        let mut runtime = FleetRuntime::new(
            &scopes,
            &[],
            Settings::example(),
            FleetTuning::default(),
            StoreConfig::default(),
            Rng::new(1),
            Rng::new(2),
        )
        .expect("the scopes attach");
        let windows = Windows {
            window: (0, end),
            late: (0, end),
            baseline: (0, 0),
            recovery_from: None,
            horizon: end,
        };
        let mut recorder = Recorder::new(windows, processes as u32, end);
        let mut events = Vec::new();
        runtime.start(&mut events);
        let mut syncs = vec![Vec::new(); processes];
        while let Some(next) = (0..events.len()).min_by_key(|&index| events[index].0) {
            let (now, event) = events.swap_remove(next);
            if now >= end {
                break;
            }
            if let FleetEvent::Sync { process } = event {
                syncs[process as usize].push(now);
            }
            runtime.handle(now, event, &mut recorder, &mut events);
        }
        syncs
    }

    #[test]
    fn processes_started_together_spread_their_second_syncs_over_an_interval() {
        let syncs = syncs_of_a_fleet_started_together(20, 4 * SECOND);
        let second: Vec<Nanos> = syncs.iter().map(|starts| starts[1]).collect();
        let (first, last) = (second.iter().min(), second.iter().max());
        let (Some(&first), Some(&last)) = (first, last) else {
            panic!("no second syncs: {syncs:?}");
        };
        assert!(first >= SECOND / 2 && last <= 3 * SECOND / 2, "{second:?}");
        // At ±10 % a sync they would be within a fifth of an interval; drawn from [0.5, 1.5]
        // intervals, twenty processes' spread is under half an interval about once in 50,000 draws.
        assert!(last - first > SECOND / 2, "{second:?}");
        for starts in &syncs {
            let interval = starts[2] - starts[1];
            assert!(
                (9 * SECOND / 10..=11 * SECOND / 10).contains(&interval),
                "the third sync comes an interval (±10 %) after the second: {starts:?}"
            );
        }
    }
}
