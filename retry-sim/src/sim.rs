//! The discrete-event simulation: one run of one strategy under one scenario and seed.
//!
//! Events are ordered by (time, sequence number) in a binary heap. Attempt timeouts and call
//! deadlines are constant offsets from monotonic send and start times, so they live in FIFO
//! lanes instead of the heap. Every call into a strategy happens after the shared
//! [`SimClock`] was set to the event's time. `retry-core`'s strategies are driven by the real
//! `RetryLoop` ([`policy`](crate::policy)): `try_shed` when a call starts, `next_wait` until
//! the attempt may be sent (the simulator sleeping each wait in virtual time), `finish` with
//! each outcome; a call cancelled at the caller's deadline drops its loop. A hedged call of
//! theirs is driven by the real `HedgedLoop` the same way, plus a timer for each hedge it
//! asks for (`hedge_wait`, then `try_hedge`) and each copy's outcome handed to `finish` with
//! the copy's attempt.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use retry_core::attempt::Attempt;
use retry_core::driver::{HedgedLoop, Next};
use retry_core::fleet::FleetOptions;
use retry_core::fleet::protocol::Settings;
use retry_core::hedge::{HedgeRefusal, Hedging};
use retry_core::{ErrorKind, RetryStrategy, Scope};

use crate::baseline::{BaselineClient, Outcome};
use crate::clock::SimClock;

use crate::fault::{FaultKind, FaultSchedule, Phase};
use crate::fleet::arm::{Arm, FleetTuning};
use crate::fleet::process::{ArrivalStream, Ending, ProcessSpec};
use crate::fleet::static_split::StaticSplit;
use crate::fleet::store::{Delivery, Store, StoreConfig};
use crate::fleet::sync::{FleetEvent, FleetRuntime, ProcessLife};
use crate::hedge::{Answer, CallHedge, Due, HedgeSpec, Hedger, Verdict};
use crate::metrics::{Recorder, RunOutput, Windows};
use crate::policy::{Failure, OursLoop, Policy, SimClassifier, Token};
use crate::rng::Rng;
use crate::server::{Admission, Job, Server, ServerConfig};
use crate::strategy::{LayerBuild, StrategySpec};
use crate::time::{Nanos, SECOND, from_duration, to_duration};

/// How clients issue requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Arrivals {
    /// Open loop: Poisson arrivals at the clients' rate, whatever happens to earlier requests.
    #[default]
    Open,
    /// Closed loop: each client issues its next request an exponential think time (mean
    /// `1 / rate`) after the previous one ended.
    Closed,
}

/// One layer of callers. Layer 0 is the clients; a deeper layer is a tier of service instances
/// that each retry their own calls downstream (S5). The last layer calls the server.
#[derive(Debug, Clone, PartialEq)]
pub struct LayerConfig {
    /// Clients (layer 0) or instances.
    pub instances: u32,
    /// Per-attempt timeout.
    pub attempt_timeout: Nanos,
    /// Per-call deadline: no attempt starts after it (`RetryConfig::timeout`), and the caller
    /// cancels the call when it passes.
    pub deadline: Nanos,
    /// Whether this layer retries (with the run's strategy) or makes one attempt per call.
    pub retries: bool,
}

/// Everything a run needs but the strategy and the seed.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The service.
    pub server: ServerConfig,
    /// The callers, clients first.
    pub layers: Vec<LayerConfig>,
    /// Requests per second of each client.
    pub rate: f64,
    /// Open or closed loop.
    pub arrivals: Arrivals,
    /// Attempts per call (the first included) of strategies that do not fix their own.
    pub max_attempts: u32,
    /// The faults.
    pub faults: FaultSchedule,
    /// When arrivals stop; the run then drains.
    pub horizon: Nanos,
    /// Whether callers give up a call at its deadline, wherever it is (like a
    /// `tokio::time::timeout` around the call: a retry not yet sent is abandoned, an attempt in
    /// flight is left unanswered). Without it the deadline only stops new retries
    /// (`RetryConfig::timeout`), and a first attempt may wait for a send permit indefinitely.
    pub cancel_at_deadline: bool,
    /// The fleet's store, for the strategies that use one (a naive shared store, fleet mode).
    pub store: StoreConfig,
    /// The clients one by one (the shape sweep's processes): each its own rate, arrivals and
    /// life. Empty: `instances` alike clients at `rate` each, as `arrivals` says. With
    /// processes, `rate`, `arrivals` and load spikes do not apply, and there is one layer.
    pub processes: Vec<ProcessSpec>,
    /// Without a timed fault, the seconds before the metrics' window opens; `None`: 10 s, or a
    /// tenth of the horizon if shorter. (A hedging arm at a percentile needs its samples first.)
    pub warmup: Option<Nanos>,
    /// The longest an attempt waits for its turn in the static split (a governor's wait
    /// bound, as adaptive mode's `max_wait` bounds a permit's); `None`: until its call's
    /// deadline.
    pub split_max_wait: Option<Nanos>,
}

impl SimConfig {
    /// The issue's defaults: 50 workers, 50 ms mean service, queue 500, 100 clients × 7 req/s,
    /// attempt timeout 1 s, 3 attempts, 5 s deadline (callers cancel there), 600 s, no fault.
    ///
    /// ```
    /// let config = retry_sim::sim::SimConfig::default();
    /// assert_eq!(config.layers[0].instances, 100);
    /// ```
    pub fn new() -> Self {
        Self {
            server: ServerConfig::default(),
            layers: vec![LayerConfig {
                instances: 100,
                attempt_timeout: SECOND,
                deadline: 5 * SECOND,
                retries: true,
            }],
            rate: 7.0,
            arrivals: Arrivals::Open,
            max_attempts: 3,
            faults: FaultSchedule::default(),
            horizon: 600 * SECOND,
            cancel_at_deadline: true,
            store: StoreConfig::default(),
            processes: Vec::new(),
            warmup: None,
            split_max_wait: None,
        }
    }

    /// The windows metrics are computed over.
    ///
    /// ```
    /// use retry_sim::{sim::SimConfig, time::SECOND};
    /// let mut config = SimConfig::new();
    /// config.warmup = Some(60 * SECOND);
    /// assert_eq!(config.windows().window, (60 * SECOND, 600 * SECOND));
    /// ```
    pub fn windows(&self) -> Windows {
        let mut windows = Windows::new(&self.faults, self.horizon);
        if let Some(warmup) = self.warmup
            && self.faults.window().is_none()
        {
            let open = warmup.min(self.horizon);
            windows.window.0 = open;
            windows.late.0 = open;
            windows.baseline.0 = open;
        }
        windows
    }

    /// Checks the numbers, for configurations that come from users.
    pub fn validate(&self) -> Result<(), String> {
        if self.layers.is_empty() {
            return Err("at least one layer of clients is needed".into());
        }
        if self.layers.iter().any(|l| l.instances == 0) {
            return Err("every layer needs at least one client or instance".into());
        }
        if self
            .layers
            .iter()
            .any(|l| l.attempt_timeout == 0 || l.deadline == 0)
        {
            return Err("attempt timeouts and deadlines must be longer than zero".into());
        }
        if !(self.rate.is_finite() && self.rate > 0.0) {
            return Err(format!(
                "the request rate must be positive, not {}",
                self.rate
            ));
        }
        if self.server.workers == 0 {
            return Err("the server needs at least one worker".into());
        }
        if self.max_attempts == 0 {
            return Err("max_attempts must be at least 1".into());
        }
        if self.warmup.is_some_and(|warmup| warmup >= self.horizon) {
            return Err("the warm-up must end before the arrivals do (`duration`)".into());
        }
        if self.warmup.is_some() && self.faults.window().is_some() {
            return Err(
                "a warm-up applies to a run without a timed fault (the metrics' window is then \
                 the fault's)"
                    .into(),
            );
        }
        if self.horizon < SECOND {
            return Err("the run must last at least 1 s".into());
        }
        if !self.processes.is_empty() {
            if self.layers.len() != 1 || self.layers[0].instances as usize != self.processes.len() {
                return Err(format!(
                    "{} processes need one layer of as many clients",
                    self.processes.len()
                ));
            }
            for process in &self.processes {
                process.validate()?;
            }
        }
        self.store.validate()
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// A response to an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Response {
    Ok,
    /// 500 after service (an independent failure).
    ServerError,
    /// 503: outage or full queue.
    Unavailable,
    /// 429 with `Retry-After`.
    Throttled(Nanos),
    /// No answer within the attempt timeout.
    Timeout,
}

impl Response {
    fn failure(self) -> Failure {
        let (kind, retry_after, accepted) = match self {
            Response::ServerError => (ErrorKind::Server, None, true),
            Response::Throttled(after) => (ErrorKind::Throttling, Some(after), false),
            Response::Timeout => (ErrorKind::Timeout, None, false),
            Response::Ok | Response::Unavailable => (ErrorKind::Server, None, false),
        };
        Failure {
            kind,
            retry_after,
            accepted,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    ServiceDone {
        call: u32,
        epoch: u32,
        started: Nanos,
        fail: bool,
    },
    Wake {
        call: u32,
        epoch: u32,
    },
    Phase {
        index: u32,
    },
    Think {
        client: u32,
    },
    /// The store's answer to a send permit's ask arrives: the attempt is sent (naive store).
    Send {
        call: u32,
        epoch: u32,
    },
    /// Fleet mode's sync tasks and store.
    Fleet(FleetEvent),
    /// A request arrives at a process of [`SimConfig::processes`].
    Arrive {
        client: u32,
    },
    /// A process of [`SimConfig::processes`] joins or ends.
    Life {
        client: u32,
    },
    /// A call's hedge is due (stale unless `timer` is still the call's hedge timer).
    Hedge {
        call: u32,
        timer: u32,
    },
}

/// An event and its key `(time << 64) | sequence number`: one integer comparison orders
/// events by time, then by the order they were scheduled in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Scheduled {
    key: u128,
    event: Event,
}

impl Scheduled {
    fn at(&self) -> Nanos {
        (self.key >> 64) as Nanos
    }
}

impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap, the earliest event must come out first.
        other.key.cmp(&self.key)
    }
}

impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    /// Waiting for a send permit.
    Permit,
    /// Sleeping a backoff delay.
    Backoff,
    /// Waiting for the store's answer to its send permit's ask (naive store).
    Asking,
    InFlight,
}

#[derive(Debug)]
struct Call<'a> {
    /// Incarnation of the slot, for deadline entries.
    generation: u32,
    /// Bumped at every state change, for timeouts, wakes and responses.
    epoch: u32,
    state: State,
    layer: u32,
    instance: u32,
    parent: Option<(u32, u32)>,
    started: Nanos,
    token: Option<Token<'a>>,
    /// Whether the next request for the attempt starts with its backoff (the first after the
    /// call started or a retry was granted).
    backoff_pending: bool,
    /// Earliest time the next attempt may be sent (the last 429's `Retry-After`).
    not_before: Nanos,
    attempts: u32,
    /// The static split's turn the next attempt has taken, if it waits for it.
    turn: Option<Nanos>,
    /// The attempts in flight: the one sent, and its copies when the call hedges.
    flights: Vec<Flight>,
    /// The epoch of the attempt whose copies are in flight (a later epoch is a hedge).
    first_copy: u32,
    /// The call's hedging state.
    hedge: CallHedge,
    /// Bumped whenever a hedge is scheduled: a `Hedge` event of an older timer is stale.
    hedge_timer: u32,
}

/// One copy of a call's attempt in flight.
#[derive(Debug, Clone, Copy)]
struct Flight {
    epoch: u32,
    sent: Nanos,
    /// The copy's attempt, as a hedged call's `HedgedLoop` numbered it (`None` for the other
    /// loops, which have one attempt in flight).
    attempt: Option<Attempt>,
}

impl Call<'_> {
    /// Whether the attempt `epoch` (or its copy) is in flight, its answer awaited.
    fn awaits(&self, epoch: u32) -> bool {
        self.state == State::InFlight && self.flights.iter().any(|f| f.epoch == epoch)
    }
}

/// A FIFO of (time, call, tag) whose times are non-decreasing.
#[derive(Debug, Default)]
struct Lane {
    entries: VecDeque<(Nanos, u32, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Heap,
    Timeout(usize),
    Deadline(usize),
    Arrival,
}

struct Engine<'a> {
    config: &'a SimConfig,
    /// Each layer's `retry-core` strategies, one per client (empty for a baseline's layer).
    ours: &'a [Vec<Box<dyn RetryStrategy>>],
    /// Each layer's baseline clients (empty for a `retry-core` layer).
    baselines: Vec<Vec<BaselineClient>>,
    now: Nanos,
    clock: Arc<SimClock>,
    heap: BinaryHeap<Scheduled>,
    seq: u64,
    timeouts: Vec<Lane>,
    deadlines: Vec<Lane>,
    calls: Vec<Call<'a>>,
    free: Vec<u32>,
    server: Server,
    phases: Vec<Phase>,
    load: f64,
    next_arrival: Nanos,
    arrival_rng: Rng,
    route_rng: Rng,
    think_rng: Rng,
    recorder: Recorder,
    /// The store every decision asks, for a naive shared store.
    naive: Option<Store>,
    /// Fleet mode's sync tasks and store.
    fleet: Option<FleetRuntime>,
    /// The events the fleet's runtime asks for, before they are scheduled.
    fleet_out: Vec<(Nanos, FleetEvent)>,
    /// Each process's arrivals ([`SimConfig::processes`]).
    streams: Vec<ArrivalStream>,
    /// The oracle's static split of the server's limit.
    split: Option<StaticSplit>,
    /// The baseline clients' hedging (empty when the strategy does not hedge, or hedges with
    /// `retry-core`).
    hedgers: Vec<Hedger>,
    /// `retry-core`'s hedging, which each call's `HedgedLoop` runs, when the strategy hedges
    /// with it.
    hedging: Option<Hedging>,
    /// Whether the attempt timeout cuts every attempt (a hedging policy may have none).
    cut_attempts: bool,
}

/// Runs `strategy` under `config` with `seed`.
///
/// ```
/// use retry_sim::{sim::{SimConfig, run}, strategy::StrategySpec, time::SECOND};
/// let mut config = SimConfig::default();
/// config.horizon = 5 * SECOND;
/// config.layers[0].instances = 5;
/// let out = run(&config, &StrategySpec::named("aws-classic").unwrap(), 1).unwrap();
/// assert!(out.metrics.success_rate > 0.99);
/// ```
pub fn run(config: &SimConfig, strategy: &StrategySpec, seed: u64) -> Result<RunOutput, String> {
    config.validate()?;
    let arm = strategy.arm();
    if arm != Arm::PerProcess && config.layers.len() > 1 {
        return Err(format!(
            "strategy `{}`: a fleet arm runs with one layer of clients (the processes)",
            strategy.name
        ));
    }
    if strategy.hedge.is_some() && config.layers.len() > 1 {
        return Err(format!(
            "strategy `{}`: hedging is simulated with one layer of clients",
            strategy.name
        ));
    }
    if arm == Arm::NaiveStore && !config.store.faults.is_empty() {
        return Err(format!(
            "strategy `{}`: the naive store arm is not simulated with store faults (what its \
             clients do when the store fails is a choice of their rate-limit client, failing \
             open or closed, not a property of the store)",
            strategy.name
        ));
    }
    // A run is one thread's from start to end: adaptive mode's sampling of idle responses
    // then depends on the seed alone.
    retry_core::adaptive::reseed_idle_sampling(seed);
    let clock = Arc::new(SimClock::new());
    let none = StrategySpec::no_retries();
    let mut policies = Vec::with_capacity(config.layers.len());
    let starts: Vec<Nanos> = config.processes.iter().map(|p| p.joins).collect();
    for (index, layer) in config.layers.iter().enumerate() {
        let spec = if layer.retries { strategy } else { &none };
        let build = LayerBuild {
            index: index as u32,
            clients: layer.instances,
            attempts: config.max_attempts,
            deadline: layer.deadline,
            starts: if index == 0 { &starts } else { &[] },
        };
        policies.push(spec.build_layer(&build, &clock, seed)?);
    }
    let fleet = match arm {
        Arm::Fleet(tuning) => Some(fleet_runtime(config, strategy, tuning, &policies[0], seed)?),
        _ => None,
    };
    let (hedgers, hedging) = match strategy.hedge {
        Some(HedgeSpec::Ours(spec)) => (Vec::new(), Some(spec.hedging)),
        Some(hedge) => (
            policies[0].iter().filter_map(|_| hedge.client()).collect(),
            None,
        ),
        None => (Vec::new(), None),
    };
    let mut scopes: Vec<Scope> = Vec::new();
    let mut ours = Vec::with_capacity(policies.len());
    let mut baselines = Vec::with_capacity(policies.len());
    for layer in policies {
        let (mut strategies, mut clients) = (Vec::new(), Vec::new());
        for policy in layer {
            match policy {
                Policy::Ours(strategy, scope) => {
                    if !scopes.iter().any(|known| known.same_as(&scope)) {
                        scopes.push(scope);
                    }
                    strategies.push(strategy);
                }
                Policy::Baseline(client) => clients.push(client),
            }
        }
        ours.push(strategies);
        baselines.push(clients);
    }
    let drain = config
        .layers
        .iter()
        .map(|l| l.deadline + l.attempt_timeout)
        .max()
        .unwrap_or(0)
        + 2 * SECOND;
    let end = config.horizon + drain;
    let windows = config.windows();
    let mut engine = Engine {
        config,
        ours: &ours,
        baselines,
        now: 0,
        clock,
        heap: BinaryHeap::with_capacity(4096),
        seq: 0,
        timeouts: config.layers.iter().map(|_| Lane::default()).collect(),
        deadlines: config.layers.iter().map(|_| Lane::default()).collect(),
        calls: Vec::with_capacity(8192),
        free: Vec::with_capacity(8192),
        server: Server::new(config.server, Rng::stream(seed, 1), Rng::stream(seed, 2)),
        phases: config.faults.phases(),
        load: 1.0,
        next_arrival: Nanos::MAX,
        arrival_rng: Rng::stream(seed, 3),
        route_rng: Rng::stream(seed, 4),
        think_rng: Rng::stream(seed, 5),
        recorder: Recorder::new(windows, config.layers[0].instances, end),
        naive: (arm == Arm::NaiveStore)
            .then(|| Store::new(config.store.clone(), Rng::stream(seed, STORE_STREAM))),
        fleet,
        fleet_out: Vec::new(),
        streams: config
            .processes
            .iter()
            .enumerate()
            .map(|(i, p)| ArrivalStream::new(*p, Rng::stream(seed, PROCESS_STREAMS + i as u64)))
            .collect(),
        split: match arm {
            Arm::StaticSplit => Some(static_split(config, &strategy.name)?),
            _ => None,
        },
        hedgers,
        hedging,
        cut_attempts: strategy.hedge.is_none_or(|hedge| hedge.cuts_attempts()),
    };
    if let Some(fleet) = engine.fleet.as_mut() {
        fleet.start(&mut engine.fleet_out);
        engine.schedule_fleet();
    }
    engine.run(end);
    // Calls refused locally (shed before the first attempt, or a retry whose permit was
    // expected later than `max_wait`): the scopes count them.
    engine.recorder.local_rejections += scopes
        .iter()
        .map(|scope| scope.stats().rate_limited)
        .sum::<u64>();
    let capacity = config.faults.window_capacity(config.server.capacity());
    let mut output = engine.recorder.finish(capacity);
    if let Some(fleet) = &engine.fleet {
        output.metrics.fleet_recovery = fleet.recovery_secs(end);
        output.store_steps = fleet.store().steps().to_vec();
    }
    Ok(output)
}

/// Fleet mode's runtime: each client of the layer (a process) attached to the fleet with the
/// settings of its strategy's configuration.
fn fleet_runtime(
    config: &SimConfig,
    strategy: &StrategySpec,
    tuning: FleetTuning,
    clients: &[Policy],
    seed: u64,
) -> Result<FleetRuntime, String> {
    let layer = &config.layers[0];
    let retry_config = strategy.layer_config(config.max_attempts, layer.deadline)?;
    let mut options = FleetOptions::default();
    options.sync_interval = to_duration(tuning.sync_interval);
    options.lease_ttl = Some(to_duration(tuning.lease_ttl()));
    options.beta = tuning.beta_ppm as f64 / 1e6;
    let settings = Settings::from_config(&retry_config, &options)
        .map_err(|error| format!("strategy `{}`: {error}", strategy.name))?;
    let scopes: Vec<Scope> = clients
        .iter()
        .filter_map(|policy| match policy {
            Policy::Ours(_, scope) => Some(scope.clone()),
            Policy::Baseline(_) => None,
        })
        .collect();
    // A process that leaves detaches once the calls it has have ended; one that crashes at once.
    let drain = layer.deadline + layer.attempt_timeout;
    let lives: Vec<ProcessLife> = config
        .processes
        .iter()
        .map(|process| ProcessLife {
            starts: process.joins,
            stops: match process.ends {
                Some((end, Ending::Leaves)) => end.saturating_add(drain),
                Some((end, Ending::Crashes)) => end,
                None => Nanos::MAX,
            },
            leaves: matches!(process.ends, Some((_, Ending::Leaves))),
        })
        .collect();
    FleetRuntime::new(
        &scopes,
        &lives,
        settings,
        tuning,
        config.store.clone(),
        Rng::stream(seed, STORE_STREAM),
        Rng::stream(seed, SYNC_STREAM),
    )
}

/// The oracle's split of the server's limit (the throttle's) over the run's processes.
fn static_split(config: &SimConfig, strategy: &str) -> Result<StaticSplit, String> {
    let throttle = config
        .faults
        .faults()
        .iter()
        .find_map(|fault| match fault.kind {
            FaultKind::Throttle { rate, burst, .. } => Some((rate, burst)),
            _ => None,
        });
    match throttle {
        Some((limit, burst)) if !config.processes.is_empty() => {
            Ok(StaticSplit::new(limit, burst, &config.processes, 0))
        }
        _ => Err(format!(
            "strategy `{strategy}`: the static split shares a throttle's limit over the run's \
             processes: both are needed"
        )),
    }
}

/// The first of the processes' own random streams (their arrivals).
const PROCESS_STREAMS: u64 = 100;

/// The random stream of the store's round trips.
const STORE_STREAM: u64 = 6;

/// The random stream of fleet mode's sync tasks (their jitter).
const SYNC_STREAM: u64 = 7;

/// Whether an attempt may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Permit {
    /// Send now.
    Granted,
    /// Ask again after this long.
    Wait(Nanos),
    /// Not sent: the call ends (a call shed before its first attempt, or an attempt a
    /// baseline rejected locally).
    Refused,
}

impl<'a> Engine<'a> {
    /// A new call's token: `retry-core`'s loop, or a baseline's token.
    fn start_token(&mut self, layer: u32, instance: u32) -> Token<'a> {
        let ours: &'a [Vec<Box<dyn RetryStrategy>>] = self.ours;
        match ours[layer as usize].get(instance as usize) {
            Some(strategy) => {
                let strategy: &'a (dyn RetryStrategy + 'static) = strategy.as_ref();
                let hook = retry_core::driver::NoHook;
                match self.hedging {
                    Some(hedging) => Token::Hedged(Box::new(HedgedLoop::new(
                        strategy,
                        SimClassifier,
                        hook,
                        hedging,
                    ))),
                    None => Token::Ours(OursLoop::new(strategy, SimClassifier, hook)),
                }
            }
            None => {
                Token::Baseline(self.baselines[layer as usize][instance as usize].start(self.now))
            }
        }
    }

    /// May the call's attempt be sent now.
    fn permit(&mut self, slot: u32) -> Permit {
        let now = self.now;
        let call = &mut self.calls[slot as usize];
        let backoff = std::mem::replace(&mut call.backoff_pending, false);
        match call.token.as_mut() {
            Some(Token::Ours(retry)) => {
                // Before the first attempt waits for its permit and after each of its waits,
                // as a shedding `RetryLoop::ready` does.
                if call.attempts == 0 && retry.try_shed().is_some() {
                    return Permit::Refused;
                }
                match retry.next_wait(backoff) {
                    None => self.split_turn(slot),
                    Some(wait) => Permit::Wait(from_duration(wait).max(1)),
                }
            }
            Some(Token::Hedged(hedged)) => {
                if call.attempts == 0 && hedged.try_shed().is_some() {
                    return Permit::Refused;
                }
                match hedged.next_wait(backoff) {
                    None => self.split_turn(slot),
                    Some(wait) => Permit::Wait(from_duration(wait).max(1)),
                }
            }
            Some(Token::Baseline(token)) => {
                if backoff && token.delay > 0 {
                    return Permit::Wait(token.delay);
                }
                let client = &mut self.baselines[call.layer as usize][call.instance as usize];
                if client.admit(now) {
                    Permit::Granted
                } else {
                    Permit::Refused
                }
            }
            None => Permit::Refused,
        }
    }

    /// The static split's answer for an attempt its strategy lets go now: its turn in its
    /// process's bucket (taken at its first ask), or a refusal when the turn would come after
    /// the call's deadline or more than [`SimConfig::split_max_wait`] from now. Without a
    /// split, at once.
    fn split_turn(&mut self, slot: u32) -> Permit {
        let now = self.now;
        let Some(split) = self.split.as_mut() else {
            return Permit::Granted;
        };
        let call = &mut self.calls[slot as usize];
        let turn = match call.turn {
            Some(turn) => turn,
            None => {
                let deadline = call.started + self.config.layers[0].deadline;
                let latest = self
                    .config
                    .split_max_wait
                    .map_or(deadline, |wait| deadline.min(now.saturating_add(wait)));
                match split.turn(call.instance as usize, now, latest) {
                    Some(turn) => turn,
                    None => return Permit::Refused,
                }
            }
        };
        if turn <= now {
            call.turn = None;
            Permit::Granted
        } else {
            call.turn = Some(turn);
            Permit::Wait(turn - now)
        }
    }

    /// A process of the plan joins or ends at `now`: the static split is shared again over
    /// those alive; a process that crashed loses its calls (their callers see them fail).
    fn life(&mut self, client: u32) {
        let now = self.now;
        if let Some(split) = self.split.as_mut() {
            split.resize(&self.config.processes, now);
        }
        let crashed = self
            .config
            .processes
            .get(client as usize)
            .and_then(|p| p.ends)
            == Some((now, Ending::Crashes));
        if !crashed {
            return;
        }
        for slot in 0..self.calls.len() as u32 {
            let call = &mut self.calls[slot as usize];
            if call.state != State::Free && call.layer == 0 && call.instance == client {
                call.token = None;
                self.finish(slot, Response::Timeout);
            }
        }
    }

    /// The next request of process `client` after one at `at`, if it gets one before the
    /// horizon.
    fn schedule_arrival(&mut self, client: u32, next: Option<Nanos>) {
        if let Some(at) = next.filter(|&at| at < self.config.horizon) {
            self.schedule(at, Event::Arrive { client });
        }
    }

    /// Schedules what the fleet's runtime asked for, in the order it asked.
    fn schedule_fleet(&mut self) {
        let mut out = std::mem::take(&mut self.fleet_out);
        for (at, event) in out.drain(..) {
            self.schedule(at, Event::Fleet(event));
        }
        self.fleet_out = out;
    }

    fn schedule(&mut self, at: Nanos, event: Event) {
        self.seq += 1;
        self.heap.push(Scheduled {
            key: (u128::from(at) << 64) | u128::from(self.seq),
            event,
        });
    }

    fn mean_gap(&self) -> Option<f64> {
        if !self.config.processes.is_empty() {
            return None;
        }
        let total = self.config.rate * f64::from(self.config.layers[0].instances) * self.load;
        (total > 0.0).then(|| SECOND as f64 / total)
    }

    fn draw_arrival(&mut self) {
        self.next_arrival = match self.mean_gap() {
            Some(gap) if self.now < self.config.horizon => self.now + self.arrival_rng.exp(gap),
            _ => Nanos::MAX,
        };
    }

    fn run(&mut self, end: Nanos) {
        for index in 1..self.phases.len() {
            let at = self.phases[index].start;
            self.schedule(
                at,
                Event::Phase {
                    index: index as u32,
                },
            );
        }
        if let Some(first) = self.phases.first().copied() {
            self.enter_phase(first);
        }
        for client in 0..self.streams.len() as u32 {
            let first = self.streams[client as usize].first();
            self.schedule_arrival(client, first);
            let process = self.config.processes[client as usize];
            if process.joins > 0 {
                self.schedule(process.joins, Event::Life { client });
            }
            if let Some((end, _)) = process.ends {
                self.schedule(end, Event::Life { client });
            }
        }
        match self.config.arrivals {
            Arrivals::Open => self.draw_arrival(),
            Arrivals::Closed => {
                let mean = SECOND as f64 / self.config.rate;
                for client in 0..self.config.layers[0].instances {
                    let at = self.think_rng.exp(mean);
                    self.schedule(at, Event::Think { client });
                }
            }
        }
        loop {
            let mut at = Nanos::MAX;
            let mut source = Source::Arrival;
            if let Some(top) = self.heap.peek() {
                at = top.at();
                source = Source::Heap;
            }
            // Most timeouts and deadlines are stale (the attempt was answered, the call
            // ended): drop those here, without an iteration of the loop. An entry that is stale
            // stays stale: epochs and generations only grow.
            for (index, lane) in self.timeouts.iter_mut().enumerate() {
                while let Some(&(t, slot, epoch)) = lane.entries.front() {
                    if !self.calls[slot as usize].awaits(epoch) {
                        lane.entries.pop_front();
                        continue;
                    }
                    if t < at {
                        at = t;
                        source = Source::Timeout(index);
                    }
                    break;
                }
            }
            for (index, lane) in self.deadlines.iter_mut().enumerate() {
                while let Some(&(t, slot, generation)) = lane.entries.front() {
                    let call = &self.calls[slot as usize];
                    if call.generation != generation || call.state == State::Free {
                        lane.entries.pop_front();
                        continue;
                    }
                    if t < at {
                        at = t;
                        source = Source::Deadline(index);
                    }
                    break;
                }
            }
            if self.next_arrival < at {
                at = self.next_arrival;
                source = Source::Arrival;
            }
            if at == Nanos::MAX || at > end {
                break;
            }
            self.now = at;
            self.clock.set(at);
            match source {
                Source::Heap => {
                    if let Some(scheduled) = self.heap.pop() {
                        self.dispatch(scheduled.event);
                    }
                }
                Source::Timeout(index) => {
                    if let Some((_, call, epoch)) = self.timeouts[index].entries.pop_front() {
                        self.on_timeout(call, epoch);
                    }
                }
                Source::Deadline(index) => {
                    if let Some((_, call, generation)) = self.deadlines[index].entries.pop_front() {
                        self.on_deadline(call, generation);
                    }
                }
                Source::Arrival => {
                    let client = self
                        .arrival_rng
                        .below(u64::from(self.config.layers[0].instances))
                        as u32;
                    self.draw_arrival();
                    self.start_call(0, client, None);
                }
            }
        }
    }

    fn dispatch(&mut self, event: Event) {
        match event {
            Event::ServiceDone {
                call,
                epoch,
                started,
                fail,
            } => {
                if let Some((job, admission)) = self.server.complete(self.now) {
                    self.admitted(job, admission);
                }
                let response = if fail {
                    Response::ServerError
                } else {
                    Response::Ok
                };
                let delivered = self.respond(call, epoch, response);
                self.recorder
                    .busy(self.now, self.now - started, delivered && !fail);
            }
            Event::Wake { call, epoch } => {
                let slot = &self.calls[call as usize];
                if slot.epoch == epoch && matches!(slot.state, State::Permit | State::Backoff) {
                    self.try_send(call);
                }
            }
            Event::Send { call, epoch } => {
                let slot = &self.calls[call as usize];
                if slot.epoch == epoch && slot.state == State::Asking {
                    self.send(call);
                }
            }
            Event::Fleet(event) => {
                if let Some(fleet) = self.fleet.as_mut() {
                    fleet.handle(self.now, event, &mut self.recorder, &mut self.fleet_out);
                    self.schedule_fleet();
                }
            }
            Event::Hedge { call, timer } => {
                let slot = &self.calls[call as usize];
                if slot.state == State::InFlight && slot.hedge_timer == timer {
                    self.hedge_due(call);
                }
            }
            Event::Phase { index } => {
                if let Some(phase) = self.phases.get(index as usize).copied() {
                    self.enter_phase(phase);
                }
            }
            Event::Think { client } => {
                if self.now < self.config.horizon {
                    self.start_call(0, client, None);
                }
            }
            Event::Arrive { client } => {
                let next = self.streams[client as usize].next_after(self.now);
                self.schedule_arrival(client, next);
                self.start_call(0, client, None);
            }
            Event::Life { client } => self.life(client),
        }
    }

    fn enter_phase(&mut self, phase: Phase) {
        if self.server.enter_phase(phase, self.now) {
            while let Some((job, admission)) = self.server.next_queued(self.now) {
                self.admitted(job, admission);
            }
        }
        if phase.load != self.load {
            self.load = phase.load;
            if self.config.arrivals == Arrivals::Open {
                // Poisson arrivals are memoryless: redraw at the new rate from now.
                self.draw_arrival();
            }
        }
    }

    /// A queued attempt got a worker.
    fn admitted(&mut self, job: Job, admission: Admission) {
        if let Admission::Started { done_at, fail } = admission {
            self.schedule(
                done_at,
                Event::ServiceDone {
                    call: job.call,
                    epoch: job.epoch,
                    started: self.now,
                    fail,
                },
            );
        }
    }

    fn alloc(&mut self) -> u32 {
        if let Some(slot) = self.free.pop() {
            return slot;
        }
        self.calls.push(Call {
            generation: 0,
            epoch: 0,
            state: State::Free,
            layer: 0,
            instance: 0,
            parent: None,
            started: 0,
            token: None,
            backoff_pending: false,
            not_before: 0,
            attempts: 0,
            turn: None,
            flights: Vec::with_capacity(1),
            first_copy: 0,
            hedge: CallHedge::Off,
            hedge_timer: 0,
        });
        (self.calls.len() - 1) as u32
    }

    fn start_call(&mut self, layer: u32, instance: u32, parent: Option<(u32, u32)>) {
        let slot = self.alloc();
        let now = self.now;
        let token = self.start_token(layer, instance);
        let call = &mut self.calls[slot as usize];
        call.generation = call.generation.wrapping_add(1);
        call.epoch = call.epoch.wrapping_add(1);
        call.state = State::Permit;
        call.layer = layer;
        call.instance = instance;
        call.parent = parent;
        call.started = now;
        call.token = Some(token);
        call.backoff_pending = true;
        call.not_before = 0;
        call.attempts = 0;
        call.turn = None;
        call.hedge = CallHedge::Off;
        let generation = call.generation;
        if layer == 0 {
            self.recorder.request(now, instance);
        }
        if self.config.cancel_at_deadline {
            let deadline = now.saturating_add(self.config.layers[layer as usize].deadline);
            self.deadlines[layer as usize]
                .entries
                .push_back((deadline, slot, generation));
        }
        self.try_send(slot);
    }

    fn try_send(&mut self, slot: u32) {
        let now = self.now;
        let backoff = self.calls[slot as usize].backoff_pending;
        let retrying = self.calls[slot as usize].attempts > 0;
        let permit = self.permit(slot);
        // A naive store decides every permit: the answer comes a round trip later. A retry's
        // first wait is its backoff, slept locally.
        let asked = match permit {
            Permit::Wait(_) if backoff && retrying => 0,
            _ => self.store_round_trip(),
        };
        match permit {
            Permit::Granted if asked > 0 => {
                let call = &mut self.calls[slot as usize];
                call.state = State::Asking;
                call.epoch = call.epoch.wrapping_add(1);
                let epoch = call.epoch;
                self.schedule(now + asked, Event::Send { call: slot, epoch });
            }
            Permit::Granted => self.send(slot),
            Permit::Wait(wait) => {
                let wait = wait.saturating_add(asked);
                let call = &mut self.calls[slot as usize];
                call.state = if backoff {
                    State::Backoff
                } else {
                    State::Permit
                };
                call.epoch = call.epoch.wrapping_add(1);
                let epoch = call.epoch;
                self.schedule(now.saturating_add(wait), Event::Wake { call: slot, epoch });
            }
            Permit::Refused => {
                // A shed call's loop abandoned its token; a baseline's refusal ends its call.
                self.calls[slot as usize].token = None;
                if self.ours[self.calls[slot as usize].layer as usize].is_empty() {
                    self.recorder.local_rejections += 1;
                }
                self.finish(slot, Response::Unavailable);
            }
        }
    }

    fn send(&mut self, slot: u32) {
        let now = self.now;
        let call = &mut self.calls[slot as usize];
        call.attempts += 1;
        call.epoch = call.epoch.wrapping_add(1);
        call.state = State::InFlight;
        if call.attempts > 1 && now < call.not_before {
            self.recorder.retry_after_violations += 1;
        }
        let epoch = call.epoch;
        call.flights.clear();
        call.first_copy = epoch;
        if let Some(Token::Hedged(hedged)) = call.token.as_mut() {
            // The attempt `next_wait` let go; a timer of the call's previous attempt is stale.
            let (attempt, wait) = (hedged.attempt(), hedged.hedge_wait());
            call.flights.push(Flight {
                epoch,
                sent: now,
                attempt,
            });
            call.hedge_timer = call.hedge_timer.wrapping_add(1);
            if let Some(wait) = wait {
                self.set_hedge_timer(slot, now.saturating_add(from_duration(wait)));
            }
            self.put(slot, epoch);
            return;
        }
        call.flights.push(Flight {
            epoch,
            sent: now,
            attempt: None,
        });
        if let Some(hedger) = self.hedgers.get_mut(call.instance as usize) {
            // A timer of the call's previous attempt is stale now.
            call.hedge_timer = call.hedge_timer.wrapping_add(1);
            if let Some(at) = hedger.start(&mut call.hedge, now) {
                self.set_hedge_timer(slot, at);
            }
        }
        self.put(slot, epoch);
    }

    /// Sends the attempt `(slot, epoch)` on: to the next layer, or to the server.
    fn put(&mut self, slot: u32, epoch: u32) {
        let now = self.now;
        let layer = self.calls[slot as usize].layer as usize;
        if self.cut_attempts {
            let timeout = now.saturating_add(self.config.layers[layer].attempt_timeout);
            self.timeouts[layer]
                .entries
                .push_back((timeout, slot, epoch));
        }
        if layer + 1 < self.config.layers.len() {
            let instances = self.config.layers[layer + 1].instances;
            let instance = self.route_rng.below(u64::from(instances)) as u32;
            self.start_call(layer as u32 + 1, instance, Some((slot, epoch)));
            return;
        }
        self.recorder.attempt(now);
        let job = Job { call: slot, epoch };
        match self.server.arrive(job, now) {
            admission @ Admission::Started { .. } => self.admitted(job, admission),
            Admission::Queued | Admission::Dropped => {}
            Admission::Unavailable => {
                self.respond(slot, epoch, Response::Unavailable);
            }
            Admission::Throttled(after) => {
                self.recorder.throttled(now);
                self.respond(slot, epoch, Response::Throttled(after));
            }
        }
    }

    /// Schedules the call's next hedge at `at` (any earlier one is dropped).
    fn set_hedge_timer(&mut self, slot: u32, at: Nanos) {
        let call = &mut self.calls[slot as usize];
        call.hedge_timer = call.hedge_timer.wrapping_add(1);
        let timer = call.hedge_timer;
        self.schedule(at, Event::Hedge { call: slot, timer });
    }

    /// A hedge of the call is due: sent if its client's hedging lets it, or refused (and a
    /// call with nothing in flight and no hedge left fails).
    fn hedge_due(&mut self, slot: u32) {
        let now = self.now;
        let call = &mut self.calls[slot as usize];
        if let Some(Token::Hedged(_)) = call.token {
            self.hedge_ours(slot);
            return;
        }
        let Some(hedger) = self.hedgers.get_mut(call.instance as usize) else {
            return;
        };
        match hedger.due(&mut call.hedge, now) {
            Due::Send(next) => {
                self.recorder.hedge(now, true);
                if let Some(at) = next {
                    self.set_hedge_timer(slot, at);
                }
                let call = &mut self.calls[slot as usize];
                call.epoch = call.epoch.wrapping_add(1);
                if now < call.not_before {
                    self.recorder.retry_after_violations += 1;
                }
                let epoch = call.epoch;
                call.flights.push(Flight {
                    epoch,
                    sent: now,
                    attempt: None,
                });
                self.put(slot, epoch);
            }
            Due::Refused => {
                self.recorder.hedge(now, false);
                if call.flights.is_empty() {
                    self.finish(slot, Response::Unavailable);
                }
            }
        }
    }

    /// A hedge of a call that `retry-core`'s `HedgedLoop` drives is due: the loop charges it
    /// and gives its attempt, sent now (and the next hedge's timer armed), or refuses it.
    fn hedge_ours(&mut self, slot: u32) {
        let now = self.now;
        let call = &mut self.calls[slot as usize];
        let Some(Token::Hedged(hedged)) = call.token.as_mut() else {
            return;
        };
        let attempt = match hedged.try_hedge() {
            Ok(attempt) => attempt,
            // No hedge was due (the call stopped hedging since the timer was armed): nothing
            // refused, as the runtime's drivers count it.
            Err(HedgeRefusal::NoHedgeDue) => return,
            Err(_) => {
                self.recorder.hedge(now, false);
                return;
            }
        };
        let next = hedged.hedge_wait();
        call.epoch = call.epoch.wrapping_add(1);
        let epoch = call.epoch;
        call.flights.push(Flight {
            epoch,
            sent: now,
            attempt: Some(attempt),
        });
        let early = now < call.not_before;
        self.recorder.hedge(now, true);
        if early {
            self.recorder.retry_after_violations += 1;
        }
        if let Some(wait) = next {
            self.set_hedge_timer(slot, now.saturating_add(from_duration(wait)));
        }
        self.put(slot, epoch);
    }

    /// A copy of a call that `retry-core`'s `HedgedLoop` drives answered: the loop says what
    /// it means (the call's answer, its retry, or wait for the other copies).
    fn respond_ours_hedged(&mut self, slot: u32, epoch: u32, response: Response) {
        let now = self.now;
        let call = &mut self.calls[slot as usize];
        let Some(index) = call.flights.iter().position(|f| f.epoch == epoch) else {
            return;
        };
        let flight = call.flights.swap_remove(index);
        let (Some(Token::Hedged(hedged)), Some(attempt)) = (call.token.as_mut(), flight.attempt)
        else {
            return;
        };
        let outcome = match response {
            Response::Ok => Ok(()),
            failed => Err(failed.failure()),
        };
        match hedged.finish(attempt, &outcome) {
            Next::Wait => {
                if let Response::Throttled(after) = response {
                    call.not_before = now.saturating_add(after);
                }
            }
            Next::Return => {
                call.flights.clear();
                if response == Response::Ok && attempt.is_hedge() {
                    let started = call.started;
                    self.recorder.hedge_won(started);
                }
                self.decided(slot, response, false, true);
            }
            Next::Retry => self.decided(slot, response, true, true),
        }
    }

    /// Delivers a response to the attempt `(slot, epoch)`; `false` when nobody waits for it
    /// any more (the attempt timed out or the call was cancelled).
    fn respond(&mut self, slot: u32, epoch: u32, response: Response) -> bool {
        let call = &mut self.calls[slot as usize];
        if !call.awaits(epoch) {
            return false;
        }
        if let Some(Token::Hedged(_)) = call.token {
            self.respond_ours_hedged(slot, epoch, response);
            return true;
        }
        if call.hedge == CallHedge::Off {
            self.handle(slot, response);
            return true;
        }
        // One copy of a hedged attempt answered: its client's hedging says what it means.
        let now = self.now;
        let index = call.flights.iter().position(|f| f.epoch == epoch);
        let sent = index.map_or(now, |index| call.flights.swap_remove(index).sent);
        let answer = match response {
            Response::Ok => Answer::Ok {
                latency: now - sent,
            },
            Response::Throttled(after) => Answer::Failed {
                pushback: Some(after),
            },
            Response::Timeout => Answer::TimedOut,
            Response::ServerError | Response::Unavailable => Answer::Failed { pushback: None },
        };
        if let Response::Throttled(after) = response {
            call.not_before = now.saturating_add(after);
        }
        let in_flight = call.flights.len();
        let verdict = match self.hedgers.get_mut(call.instance as usize) {
            Some(hedger) => hedger.answer(&mut call.hedge, answer, in_flight, now),
            None => Verdict::Final,
        };
        match verdict {
            Verdict::Final => {
                if response == Response::Ok && epoch != call.first_copy {
                    self.recorder.hedge_won(call.started);
                }
                call.flights.clear();
                self.handle(slot, response);
            }
            Verdict::Wait => {}
            Verdict::SendAt(at) => self.set_hedge_timer(slot, at),
        }
        true
    }

    fn on_timeout(&mut self, slot: u32, epoch: u32) {
        self.respond(slot, epoch, Response::Timeout);
    }

    fn on_deadline(&mut self, slot: u32, generation: u32) {
        let call = &mut self.calls[slot as usize];
        if call.generation != generation || call.state == State::Free {
            return;
        }
        // Like dropping a `retry(..)` future: the loop settles its token (an attempt in flight
        // is a failure, one not yet sent is abandoned and its place in line given up).
        call.token = None;
        self.recorder.deadline_cancels += 1;
        self.finish(slot, Response::Timeout);
    }

    fn handle(&mut self, slot: u32, response: Response) {
        let now = self.now;
        let call = &mut self.calls[slot as usize];
        let ours = matches!(call.token, Some(Token::Ours(_)));
        let retried = match call.token.as_mut() {
            None => return,
            Some(Token::Ours(retry)) => {
                let outcome = match response {
                    Response::Ok => Ok(()),
                    failed => Err(failed.failure()),
                };
                retry.finish(&outcome).is_continue()
            }
            // Its copies' answers go to `respond_ours_hedged`.
            Some(Token::Hedged(_)) => return,
            Some(Token::Baseline(_)) => {
                let Some(Token::Baseline(token)) = call.token.take() else {
                    return;
                };
                let client = &mut self.baselines[call.layer as usize][call.instance as usize];
                if response == Response::Ok {
                    client.on_response(Outcome::Success, now);
                    false
                } else {
                    let failure = response.failure();
                    client.on_response(
                        Outcome::Failure {
                            accepted: failure.accepted,
                        },
                        now,
                    );
                    match client.retry(token, failure.retry_after, now) {
                        Some(next) => {
                            call.token = Some(Token::Baseline(next));
                            true
                        }
                        None => false,
                    }
                }
            }
        };
        self.decided(slot, response, retried, ours);
    }

    /// The call's loop decided on the attempt's `response`: the call ends with it, or its
    /// retry (`retried`) starts its backoff. `ours`: a loop of `retry-core`.
    fn decided(&mut self, slot: u32, response: Response, retried: bool, ours: bool) {
        let now = self.now;
        let call = &mut self.calls[slot as usize];
        if let Response::Throttled(after) = response {
            call.not_before = now.saturating_add(after);
        }
        call.backoff_pending = true;
        // A naive store hears of every outcome (its limiter and quota live there) and decides
        // every retry: a retry starts when the answer arrives. (A call whose retry it refused
        // ends at once, a round trip early; a success's report is off the call's path.)
        let asked = if ours { self.store_round_trip() } else { 0 };
        if !retried {
            self.finish(slot, response);
            return;
        }
        if asked > 0 {
            let call = &mut self.calls[slot as usize];
            call.state = State::Backoff;
            call.epoch = call.epoch.wrapping_add(1);
            let epoch = call.epoch;
            self.schedule(now + asked, Event::Wake { call: slot, epoch });
            return;
        }
        self.try_send(slot);
    }

    /// For a naive shared store, one command asked now: counted, and its round trip returned
    /// (at least 1 ns); 0 for the other arms, which decide locally.
    fn store_round_trip(&mut self) -> Nanos {
        let Some(store) = self.naive.as_mut() else {
            return 0;
        };
        let now = self.now;
        self.recorder.store_command(now);
        match store.send(now, Nanos::MAX / 4) {
            Delivery::Answered { reply, .. } => (reply - now).max(1),
            // Without store faults (checked when the run starts) every command is answered.
            Delivery::Unanswered { gave_up, .. } => gave_up.saturating_sub(now).max(1),
        }
    }

    /// The call ended with `response` (its last attempt's, or `Timeout` when cancelled).
    fn finish(&mut self, slot: u32, response: Response) {
        let now = self.now;
        let call = &mut self.calls[slot as usize];
        call.state = State::Free;
        call.epoch = call.epoch.wrapping_add(1);
        call.token = None;
        let (layer, instance, parent, started) =
            (call.layer, call.instance, call.parent, call.started);
        self.free.push(slot);
        if layer == 0 {
            self.recorder
                .request_done(started, now, instance, response == Response::Ok);
            if self.config.arrivals == Arrivals::Closed && now < self.config.horizon {
                let think = self.think_rng.exp(SECOND as f64 / self.config.rate);
                self.schedule(now.saturating_add(think), Event::Think { client: instance });
            }
        }
        if let Some((parent, epoch)) = parent {
            // A tier answers its caller with its last attempt's error; a timeout becomes a 504.
            let upstream = match response {
                Response::Timeout => Response::ServerError,
                other => other,
            };
            self.respond(parent, epoch, upstream);
        }
    }
}
