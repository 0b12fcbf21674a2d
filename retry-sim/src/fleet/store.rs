//! The fleet's store as the simulator sees it: a round trip away (jittered), with its faults on
//! the timeline, holding one scope's state and running `retry-core`'s own store step
//! ([`store_model::step`](step), the Rust twin of the Redis script) on it.

use retry_core::fleet::ProtocolError;
use retry_core::fleet::protocol::{Reply, ReplyItem, Report, Settings};
use retry_core::fleet::store_model::{leave, step};
use retry_core::fleet::store_state::StoreState;

use super::store_fault::{StoreCondition, StoreFaults, WriteFailure};
use super::store_trace::StoreStep;
use crate::rng::Rng;
use crate::time::{MILLI, Nanos};

/// The default round trip to the store: 1 ms, a store in the same availability zone.
pub const DEFAULT_RTT: Nanos = MILLI;

/// The default jitter of each leg of a round trip: ±50 % of half the round trip.
pub const DEFAULT_RTT_JITTER: f64 = 0.5;

/// How far the store is and what goes wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreConfig {
    /// The mean round trip.
    pub rtt: Nanos,
    /// Each leg of a round trip takes `rtt / 2` times a factor drawn uniformly in
    /// `[1 - rtt_jitter, 1 + rtt_jitter]` (`0..=1`).
    pub rtt_jitter: f64,
    /// How long a client waits for the store's answer to a command before it gives up;
    /// `None`: a quarter of the sync interval (retry-core's `StoreOptions::for_interval`).
    pub command_timeout: Option<Nanos>,
    /// The store's faults.
    pub faults: StoreFaults,
    /// Whether the store keeps each step it replies to with a lease ([`Store::steps`]).
    pub trace_steps: bool,
}

impl Default for StoreConfig {
    /// A 1 ms round trip, ±50 % per leg, the backend's command timeout, no fault.
    fn default() -> Self {
        Self {
            rtt: DEFAULT_RTT,
            rtt_jitter: DEFAULT_RTT_JITTER,
            command_timeout: None,
            faults: StoreFaults::default(),
            trace_steps: false,
        }
    }
}

impl StoreConfig {
    /// Checks the numbers, for configurations that come from users.
    ///
    /// ```
    /// let mut config = retry_sim::fleet::store::StoreConfig::default();
    /// assert!(config.validate().is_ok());
    /// config.rtt_jitter = 2.0;
    /// assert!(config.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.rtt_jitter) {
            return Err(format!(
                "the store's round-trip jitter must be within 0..=1, not {}",
                self.rtt_jitter
            ));
        }
        if self.command_timeout == Some(0) {
            return Err("the store's command timeout must be longer than zero".into());
        }
        Ok(())
    }
}

/// What becomes of one command sent to the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// The store executes it at `exec` and the answer reaches the sender at `reply`, before
    /// the sender's timeout.
    Answered {
        /// When the store executes it.
        exec: Nanos,
        /// When the answer arrives.
        reply: Nanos,
    },
    /// The sender gives up at `gave_up`; the store may still execute the command, at `exec`
    /// (a paused store resuming, a slow one).
    Unanswered {
        /// When the store executes it, if it ever does.
        exec: Option<Nanos>,
        /// When the sender gives up.
        gave_up: Nanos,
    },
}

/// A command of the fleet's sync task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `EVALSHA`: the script by its digest, which the store may have lost.
    EvalSha,
    /// `EVAL`: the script's text, which the store then keeps.
    Eval,
    /// The script's leave form, for the report's process (a clean shutdown; sent again by
    /// `EVAL` where the store lost the script, as the Redis backend does).
    Leave,
}

/// The store's answer to a sync command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// `NOSCRIPT`: the store lost the script; the sender sends it again by `EVAL`.
    NoScript,
    /// The script's return array.
    Reply(Vec<ReplyItem>),
    /// The script refused its arguments (a report or settings out of bounds).
    Error(ProtocolError),
    /// The script failed at its first write (`OOM`, a partial write failure): nothing applied.
    OutOfMemory,
}

/// The store: its network, its faults, one fleet scope's state and its script cache.
#[derive(Debug)]
pub struct Store {
    config: StoreConfig,
    state: StoreState,
    script_loaded: bool,
    rng: Rng,
    commands: u64,
    steps: Vec<StoreStep>,
}

impl Store {
    /// An empty store (its script not yet loaded) whose round trips draw from `rng`.
    ///
    /// ```
    /// use retry_sim::fleet::store::{Store, StoreConfig};
    /// let store = Store::new(StoreConfig::default(), retry_sim::rng::Rng::new(1));
    /// assert!(store.state().fleet().is_none());
    /// ```
    pub fn new(config: StoreConfig, rng: Rng) -> Self {
        Self {
            config,
            state: StoreState::default(),
            script_loaded: false,
            rng,
            commands: 0,
            steps: Vec::new(),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &StoreConfig {
        &self.config
    }

    /// The scope's state as the store holds it.
    pub fn state(&self) -> &StoreState {
        &self.state
    }

    /// The commands sent to the store so far (executed or not).
    pub fn commands(&self) -> u64 {
        self.commands
    }

    /// The steps that replied with a lease so far, if the configuration asked to keep them
    /// ([`StoreConfig::trace_steps`]); none otherwise.
    pub fn steps(&self) -> &[StoreStep] {
        &self.steps
    }

    /// The command timeout for a sync interval of `interval`.
    pub fn command_timeout(&self, interval: Nanos) -> Nanos {
        self.config.command_timeout.unwrap_or(interval / 4).max(1)
    }

    /// Sends a command at `sent` whose sender gives up after `timeout`: when the store
    /// executes it and when its answer arrives, as the store's faults allow.
    ///
    /// ```
    /// use retry_sim::fleet::store::{Delivery, Store, StoreConfig};
    /// use retry_sim::time::MILLI;
    /// let mut config = StoreConfig::default();
    /// config.rtt_jitter = 0.0;
    /// let mut store = Store::new(config, retry_sim::rng::Rng::new(1));
    /// let delivery = store.send(0, 250 * MILLI);
    /// assert_eq!(delivery, Delivery::Answered { exec: MILLI / 2, reply: MILLI });
    /// assert_eq!(store.commands(), 1);
    /// ```
    pub fn send(&mut self, sent: Nanos, timeout: Nanos) -> Delivery {
        self.commands += 1;
        let rtt = self.config.faults.rtt(sent, self.config.rtt);
        let gave_up = sent.saturating_add(timeout);
        let arrive = sent.saturating_add(self.leg(rtt));
        let exec = match self.config.faults.condition(arrive) {
            StoreCondition::Up => arrive,
            StoreCondition::PausedUntil(resume) => resume,
            StoreCondition::Unreachable => {
                return Delivery::Unanswered {
                    exec: None,
                    gave_up,
                };
            }
        };
        let reply = exec.saturating_add(self.leg(rtt));
        if reply <= gave_up {
            Delivery::Answered { exec, reply }
        } else {
            Delivery::Unanswered {
                exec: Some(exec),
                gave_up,
            }
        }
    }

    /// Executes a sync command at `at`: `EVALSHA` finds the script only if the store kept it;
    /// either then runs `retry-core`'s store step on the scope's state and encodes its reply as
    /// the script returns it, unless the store's writes fail for the command then.
    pub fn execute(
        &mut self,
        command: Command,
        settings: &Settings,
        report: &Report,
        at: Nanos,
    ) -> Answer {
        if command == Command::EvalSha && !self.script_loaded {
            return Answer::NoScript;
        }
        self.script_loaded = true;
        let fails = match self.config.faults.write_failure(at, report.process.0) {
            WriteFailure::None => false,
            WriteFailure::Fails => true,
            WriteFailure::FailsWithChance(share) => self.rng.chance(share),
        };
        if fails {
            return Answer::OutOfMemory;
        }
        if command == Command::Leave {
            let removed = leave(&mut self.state, report.process);
            return Answer::Reply(vec![
                ReplyItem::Int(1),
                ReplyItem::Int(2),
                ReplyItem::Int(i64::from(removed)),
            ]);
        }
        match step(&mut self.state, settings, report) {
            Ok(reply) => {
                self.keep_step(at, report, &reply);
                Answer::Reply(reply.encode())
            }
            Err(error) => Answer::Error(error),
        }
    }

    /// Keeps the step executed `at` for `report`, if it replied with a lease and steps are
    /// traced.
    fn keep_step(&mut self, at: Nanos, report: &Report, reply: &Reply) {
        if !self.config.trace_steps {
            return;
        }
        if let (Reply::Lease(lease), Some(fleet)) = (reply, self.state.fleet()) {
            self.steps.push(StoreStep::new(at, report, lease, fleet));
        }
    }

    /// The store loses every key and its script cache (a flush, or a restart completing).
    pub fn lose_state(&mut self) {
        self.state.clear();
        self.script_loaded = false;
    }

    /// One leg of a round trip of `rtt`, jittered.
    fn leg(&mut self, rtt: Nanos) -> Nanos {
        let jitter = self.config.rtt_jitter;
        let factor = 1.0 - jitter + 2.0 * jitter * self.rng.next_f64();
        (rtt as f64 / 2.0 * factor).round() as Nanos
    }
}

#[cfg(test)]
mod tests {
    use retry_core::fleet::protocol::ProcessId;

    use super::*;

    fn report(process: u64) -> Report {
        Report {
            process: ProcessId(process),
            now_ms: 1_000,
            send_demand: 10_000,
            ..Report::default()
        }
    }

    #[test]
    fn a_leave_removes_its_process_and_hands_its_demand_on() {
        let mut store = Store::new(StoreConfig::default(), Rng::new(1));
        let settings = Settings::example();
        for process in [1, 2] {
            let answer = store.execute(Command::Eval, &settings, &report(process), 0);
            assert!(matches!(answer, Answer::Reply(_)), "{answer:?}");
        }
        let left = |removed| {
            Answer::Reply(
                vec![1, 2, removed]
                    .into_iter()
                    .map(ReplyItem::Int)
                    .collect(),
            )
        };
        assert_eq!(
            store.execute(Command::Leave, &settings, &report(1), 0),
            left(1)
        );
        let live: Vec<ProcessId> = store.state().processes().keys().copied().collect();
        assert_eq!(live, [ProcessId(2)]);
        let fleet = store.state().fleet().expect("a fleet");
        assert_eq!((fleet.send_demand, fleet.departed_demand), (10_000, 0));
        assert_eq!(
            store.execute(Command::Leave, &settings, &report(1), 0),
            left(0)
        );
    }
}
