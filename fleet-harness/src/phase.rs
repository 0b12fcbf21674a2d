//! One phase of a run: fresh client processes for `seconds`, the server's bucket and counts
//! started over, the store flushed with its command counts reset (fleet mode), the fault
//! timeline played (`+faults`), the client timeline played (processes started, killed,
//! leaving), and a row per second collected as each second ends: the clients' counts, the
//! server's, and the store's (its commands, each node's load, the scope's state).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::children::{ClientLine, Clients};
use crate::client::ClientOptions;
use crate::client::{KEY_PREFIX, scope_names};
use crate::client_event::ClientAction;
use crate::cluster_store::topology;
use crate::command_stats::script_commands;
use crate::episode::episodes;
use crate::fault::{Fault, FaultAction};
use crate::node_stats::{IDLE_WINDOW, NodeReading, NodeSecond};
use crate::phase_spec::{Mode, PhaseSpec};
use crate::report::{FaultEvent, PhaseReport, RedisSecond, Row, RunSettings};
use crate::server::LimitServer;
use crate::store::{Layout, Store};
use crate::store_view::StoreView;
use crate::summary::{Summary, SummaryContext};
use crate::table;
use crate::wire::{ClientSecond, LeaseState};

/// How long before its second 0 a phase starts its clients: time to start a process, build
/// its runtime and attach its scope.
const START_DELAY: Duration = Duration::from_secs(2);

/// How long before a second ends the harness reads the store: so that a fault due at the
/// next second's start (at a whole second of the timeline) never meets the reading.
const READ_LEAD: Duration = Duration::from_millis(50);

/// How long after a second ends the harness waits for every client's line of it.
const COLLECT_GRACE: Duration = Duration::from_millis(900);

/// How long after the phase's last second the clients have to exit.
pub const EXIT_GRACE: Duration = Duration::from_secs(5);

/// The extra time a phase takes beyond its seconds, for the run's overall timeout.
pub const OVERHEAD: Duration = Duration::from_secs(2 + 1 + 5);

/// What every phase of a run shares.
#[derive(Debug)]
pub struct PhaseContext<'a> {
    /// The run's settings.
    pub settings: &'a RunSettings,
    /// Calls per second per process when the phase names none.
    pub default_rate: f64,
    /// The arrivals' seed.
    pub seed: u64,
    /// The throttling server.
    pub server: &'a LimitServer,
    /// The store (present when a phase is in fleet mode).
    pub redis: Option<&'a Arc<Mutex<Store>>>,
    /// The fault timeline of `+faults` phases.
    pub timeline: &'a [Fault],
}

/// Runs one phase and returns its figures (printing each second's line as it goes).
pub async fn run_phase(
    context: &PhaseContext<'_>,
    spec: PhaseSpec,
    number: u64,
) -> Result<PhaseReport, String> {
    let settings = context.settings;
    let rate = spec.rate.unwrap_or(context.default_rate);
    let redis = match spec.mode {
        Mode::Local | Mode::Split => None,
        Mode::Fleet => Some(
            context
                .redis
                .ok_or("a fleet phase without a redis-server (the harness's bug)")?,
        ),
    };
    let (redis_url, unheard_url, layout) = match redis {
        Some(redis) => {
            let shared = Arc::clone(redis);
            blocking(move || {
                lock(&shared)
                    .prepare_phase()
                    .map_err(|error| format!("the store: {error}"))
            })
            .await?;
            let redis = lock(redis);
            (Some(redis.url()), redis.unheard_url(), Some(redis.layout()))
        }
        None => (None, None, None),
    };
    let writes_fail = spec.faults
        && (context.timeline.iter()).any(|fault| fault.action == FaultAction::WritesFail);
    let unheard = unheard_url
        .filter(|_| writes_fail)
        .map(|url| (url, settings.processes / 2));
    let first_scope = scope_names(&settings.scope, settings.scopes)
        .into_iter()
        .next()
        .unwrap_or_default();
    let mut readings = Readings::new(&first_scope)?;
    // The nodes idle, before the clients start: the baseline of the first second's counts.
    let idle = match &layout {
        Some(layout) => readings.watch_idle(layout.clone()).await,
        None => BTreeMap::new(),
    };
    let origin = Instant::now() + START_DELAY;
    let origin_unix_ms = unix_ms(SystemTime::now() + START_DELAY);
    context
        .server
        .start_phase(origin, seconds_usize(settings.seconds));
    let template = ClientOptions {
        index: 0,
        url: context.server.url(),
        rate,
        on_off: settings.on_off,
        seconds: settings.seconds,
        first_second: 0,
        origin_unix_ms,
        seed: 0,
        mode: spec.mode,
        scope: settings.scope.clone(),
        scopes: settings.scopes,
        max_attempts: settings.max_attempts,
        max_wait: settings.max_wait_ms,
        call_timeout: settings.call_timeout_ms,
        redis_url: redis_url.clone(),
        sync_interval: redis_url.as_ref().map(|_| settings.sync_interval_ms),
        watch_leases: spec.faults,
        split_rate: None,
        split_burst: 1.0,
    };
    let mut running = Running::new(template, context.seed ^ (number << 32), settings, unheard);
    let options = running.start(settings.processes, 0);
    let (line_sender, mut lines) = mpsc::unbounded_channel();
    let mut clients = Clients::spawn(&options, &line_sender)?;
    let name = spec.to_string();
    let mut rates = if settings.rates.is_empty() {
        format!("{rate}")
    } else {
        format!(
            "[{}]",
            settings
                .rates
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    if let Some(spells) = settings.on_off {
        rates.push_str(&format!(" (on/off, spells {spells})"));
    }
    println!("{}", table::header(&name, settings.processes, &rates));
    let (fault_sender, mut fault_events) = mpsc::unbounded_channel();
    let timeline = if spec.faults {
        context.timeline.to_vec()
    } else {
        Vec::new()
    };
    let fault_task = redis.map(|redis| {
        tokio::spawn(play_timeline(
            timeline.clone(),
            origin,
            Arc::clone(redis),
            fault_sender,
        ))
    });
    let mut collector = Collector::new();
    let mut rows = Vec::new();
    let mut applied = Vec::new();
    let mut client_events = settings.client_events.iter().peekable();
    for second in 0..settings.seconds {
        let mut changed = Vec::new();
        while let Some(event) = client_events.next_if(|event| event.at.as_secs() == second) {
            tokio::time::sleep_until(origin + event.at).await;
            match event.action {
                ClientAction::Start => {
                    for options in running.start(event.count, second) {
                        clients.add(&options, &line_sender)?;
                    }
                }
                ClientAction::Kill | ClientAction::Leave => {
                    let crash = event.action == ClientAction::Kill;
                    let ended = clients.end_last(event.count, crash).await?;
                    running.end(&ended);
                }
            }
            changed.push(*event);
        }
        let end = origin + Duration::from_secs(second + 1);
        tokio::time::sleep_until(end - READ_LEAD).await;
        let (redis_second, store, nodes) = match &layout {
            Some(layout) => readings.read(layout.clone(), second).await,
            None => (None, None, Vec::new()),
        };
        let expected = running.reporting(second);
        collector
            .collect(&mut lines, second, expected, end + COLLECT_GRACE)
            .await?;
        while let Ok(event) = fault_events.try_recv() {
            applied.push(event?);
        }
        let mut row = collector.row(second, expected);
        let counts = context.server.second(seconds_usize(second));
        (row.admitted, row.throttled, row.errors) =
            (counts.admitted, counts.throttled, counts.errors);
        row.client_events = changed;
        row.redis = redis_second;
        row.store = store;
        row.nodes = nodes;
        row.faults = applied
            .iter()
            .filter(|event: &&FaultEvent| event.applied_at_ms / 1000 == second)
            .map(|event| event.fault.action)
            .collect();
        println!("{}", table::line(&row));
        rows.push(row);
    }
    if let Some(task) = fault_task {
        task.abort();
    }
    drop(line_sender);
    clients.wait(EXIT_GRACE).await?;
    let summary_context = SummaryContext {
        limit: settings.limit.rate,
        processes: settings.processes,
        sync_interval: settings.sync_interval_ms,
        fleet: spec.mode == Mode::Fleet,
    };
    let warmup = seconds_usize(settings.warmup_s).min(rows.len());
    let summary = Summary::of(&rows[warmup..], summary_context);
    let cold_start_s = cold_start(&rows, settings.limit.rate);
    println!("{}", table::summary("summary", &summary));
    println!("{}", table::goals(&summary, cold_start_s));
    let nodes = crate::node_stats::summaries(
        &rows[warmup..],
        settings.processes,
        settings.sync_interval_ms,
        &idle,
    );
    if !nodes.is_empty() {
        println!("{}", table::nodes(&nodes));
    }
    Ok(PhaseReport {
        name,
        mode: spec.mode,
        rate,
        processes: settings.processes,
        cold_start_s,
        episodes: episodes(&timeline, &applied, &rows, summary_context),
        nodes,
        faults: applied,
        rows,
        summary,
    })
}

/// Applies each fault at its time, sending what happened (or why it failed) to `events`.
async fn play_timeline(
    timeline: Vec<Fault>,
    origin: Instant,
    redis: Arc<Mutex<Store>>,
    events: mpsc::UnboundedSender<Result<FaultEvent, String>>,
) {
    let since_origin = || u64::try_from(origin.elapsed().as_millis()).unwrap_or(u64::MAX);
    for fault in timeline {
        tokio::time::sleep_until(origin + fault.at).await;
        let applied_at_ms = since_origin();
        let redis = Arc::clone(&redis);
        let result = blocking(move || lock(&redis).apply(fault.action)).await;
        let event = result
            .map(|()| FaultEvent {
                fault,
                applied_at_ms,
                settled_at_ms: since_origin(),
            })
            .map_err(|error| format!("fault {fault}: {error}"));
        if events.send(event).is_err() {
            return;
        }
    }
}

/// The store's command counts, each node's load and the scope's state, read at each second's
/// end.
#[derive(Debug)]
struct Readings {
    state_key: String,
    script_commands: std::collections::BTreeSet<String>,
    /// Each node's last reading that answered, the second after which it was taken (0: the
    /// phase's start, when the command counts were reset) and when.
    last: BTreeMap<u16, (NodeReading, u64, Instant)>,
}

/// One second's reading of every node: what each answered, the port that answered `CLUSTER
/// NODES` (a cluster), the port the scope's state was read from, and the state.
#[derive(Debug)]
struct NodesRead {
    nodes: Vec<(u16, NodeReading, Instant)>,
    topology_port: Option<u16>,
    state_port: Option<u16>,
    view: Option<StoreView>,
}

impl Readings {
    fn new(scope: &str) -> Result<Self, String> {
        let keys = retry_core::fleet::keys::ScopeKeys::new(KEY_PREFIX, scope)
            .map_err(|error| format!("scope {scope:?}: {error}"))?;
        Ok(Self {
            state_key: keys.state().to_owned(),
            script_commands: script_commands(retry_core::fleet::redis::STORE_SCRIPT),
            last: BTreeMap::new(),
        })
    }

    /// Reads every node twice, [`IDLE_WINDOW`] apart, before the phase's clients start: returns
    /// each node's CPU then, milliseconds per second, and keeps the second reading as the
    /// baseline of the phase's first second.
    async fn watch_idle(&mut self, layout: Layout) -> BTreeMap<u16, f64> {
        let read = |layout: Layout| async move {
            blocking(move || {
                Ok(layout
                    .ports
                    .iter()
                    .filter_map(|&port| {
                        let reading = NodeReading::read(port).ok()?;
                        Some((port, (reading, Instant::now())))
                    })
                    .collect::<BTreeMap<u16, (NodeReading, Instant)>>())
            })
            .await
            .unwrap_or_default()
        };
        let before = read(layout.clone()).await;
        tokio::time::sleep(IDLE_WINDOW).await;
        let after = read(layout).await;
        let idle = after
            .iter()
            .filter_map(|(port, (reading, at))| {
                let (earlier, then) = before.get(port)?;
                let used = reading.cpu_us.saturating_sub(earlier.cpu_us) as f64 / 1000.0;
                Some((
                    *port,
                    used / at.duration_since(*then).as_secs_f64().max(1e-3),
                ))
            })
            .collect();
        self.last = after
            .into_iter()
            .map(|(port, (reading, at))| (port, (reading, 0, at)))
            .collect();
        idle
    }

    /// Reads the store at the end of `second`: the masters' commands since the last reading
    /// that answered (less the harness's own), each node's load, the scope's state (from the
    /// master serving its slot); `None` and no nodes when no node answers.
    async fn read(
        &mut self,
        layout: Layout,
        second: u64,
    ) -> (Option<RedisSecond>, Option<StoreView>, Vec<NodeSecond>) {
        let key = self.state_key.clone();
        let Ok(read) = blocking(move || Ok(read_nodes(&layout, &key))).await else {
            return (None, None, Vec::new());
        };
        let mut counts = crate::command_stats::CommandCounts::default();
        let mut window_s = 0;
        let mut nodes = Vec::with_capacity(read.nodes.len());
        for (port, reading, at) in read.nodes {
            let Some((earlier, last_end, then)) = self.last.remove(&port) else {
                // A node that did not answer before (started since): its baseline.
                self.last.insert(port, (reading, second + 1, at));
                continue;
            };
            let window = second + 1 - last_end;
            let connections = 1
                + u64::from(read.topology_port == Some(port))
                + u64::from(read.state_port == Some(port));
            nodes.push(reading.since(&earlier, port, at.duration_since(then), connections));
            if reading.master {
                let delta = reading
                    .commands
                    .since(&earlier.commands, &self.script_commands);
                counts.evalsha += delta.evalsha;
                counts.eval += delta.eval;
                counts.sent += delta.sent;
                // The harness's HGETALL counts among the store's commands (a script's, not
                // sent).
                let own = u64::from(read.state_port == Some(port));
                counts.total += delta.total.saturating_sub(own);
                window_s = window_s.max(window);
            }
            self.last.insert(port, (reading, second + 1, at));
        }
        let redis = (window_s > 0).then_some(RedisSecond { window_s, counts });
        (redis, read.view, nodes)
    }
}

/// Reads every node of `layout` (`INFO all`), and the scope's state at `key` from its master (a
/// cluster's, found with `CLUSTER NODES`).
fn read_nodes(layout: &Layout, key: &str) -> NodesRead {
    let (topology_port, state_port) = match layout.slot {
        Some(slot) => match topology(&layout.ports) {
            Some((port, nodes)) => {
                let master = nodes
                    .iter()
                    .find(|node| node.master && !node.failed && node.serves(slot))
                    .map(|node| node.port);
                (Some(port), master)
            }
            None => (None, None),
        },
        None => (None, layout.ports.first().copied()),
    };
    let view = state_port.and_then(|port| StoreView::read(port, key).ok().flatten());
    // Every node at once: a slow node costs the reading one timeout, not one each.
    let nodes = std::thread::scope(|threads| {
        let readers: Vec<_> = layout
            .ports
            .iter()
            .map(|&port| {
                threads.spawn(move || {
                    let reading = NodeReading::read(port).ok()?;
                    Some((port, reading, Instant::now()))
                })
            })
            .collect();
        readers
            .into_iter()
            .filter_map(|reader| reader.join().ok().flatten())
            .collect()
    });
    NodesRead {
        nodes,
        topology_port,
        state_port,
        view,
    }
}

/// How many seconds of admitted requests [`cold_start`] averages.
const COLD_START_WINDOW: usize = 5;

/// The share of the limit a cold fleet must reach (issue 25: 0.9 of the limit within 15 s).
const COLD_START_SHARE: f64 = 0.9;

/// The first second from which the server admitted, on average over [`COLD_START_WINDOW`]
/// seconds, at least 0.9 of the limit or of what the clients offered (their calls) if less;
/// `None` if never.
pub fn cold_start(rows: &[Row], limit: f64) -> Option<u64> {
    rows.windows(COLD_START_WINDOW.min(rows.len()).max(1))
        .find(|window| {
            let mean = |field: fn(&Row) -> u64| {
                window.iter().map(field).sum::<u64>() as f64 / window.len() as f64
            };
            mean(|row| row.admitted) >= COLD_START_SHARE * mean(|row| row.calls).min(limit)
        })
        .and_then(|window| window.first())
        .map(|row| row.second)
}

/// The client processes a phase has running, in the order they started (the timeline ends
/// the last started first), and how each new one is set up.
#[derive(Debug)]
struct Running {
    template: ClientOptions,
    seed: u64,
    limit: f64,
    burst: f64,
    rates: Vec<f64>,
    /// Each running process: its index, its rate and the second it started in.
    processes: Vec<(u32, f64, u64)>,
    next_index: u32,
    /// In a phase with `writes-fail`: the store's URL as the user that fault refuses, and the
    /// first index to connect as it (the later half of the processes, and any started later).
    unheard: Option<(String, u32)>,
}

impl Running {
    fn new(
        template: ClientOptions,
        seed: u64,
        settings: &RunSettings,
        unheard: Option<(String, u32)>,
    ) -> Self {
        Self {
            template,
            seed,
            limit: settings.limit.rate,
            burst: settings.limit.burst,
            rates: settings.rates.clone(),
            processes: Vec::new(),
            next_index: 0,
            unheard,
        }
    }

    /// The options of `count` new processes starting in `second`: the first ones at their
    /// `--rates`, the rest at the phase's rate. In a `split` phase each gets the limit times
    /// its share of the demand of the processes running with it (those running keep theirs:
    /// a split sized by hand is static).
    fn start(&mut self, count: u32, second: u64) -> Vec<ClientOptions> {
        let first = self.processes.len();
        for _ in 0..count {
            let index = self.next_index;
            let rate = self
                .rates
                .get(index as usize)
                .copied()
                .unwrap_or(self.template.rate);
            self.processes.push((index, rate, second));
            self.next_index += 1;
        }
        let demand: f64 = self.processes.iter().map(|(_, rate, _)| rate).sum();
        self.processes[first..]
            .iter()
            .map(|&(index, rate, first_second)| {
                let (split_rate, split_burst) = split_share(self.limit, self.burst, rate, demand);
                let redis_url = match &self.unheard {
                    Some((url, first)) if index >= *first => Some(url.clone()),
                    _ => self.template.redis_url.clone(),
                };
                ClientOptions {
                    index,
                    rate,
                    first_second,
                    seed: self.seed ^ u64::from(index),
                    split_rate: (self.template.mode == Mode::Split).then_some(split_rate),
                    split_burst,
                    redis_url,
                    ..self.template.clone()
                }
            })
            .collect()
    }

    /// Forgets the processes with these indexes (ended).
    fn end(&mut self, ended: &[u32]) {
        self.processes
            .retain(|(index, _, _)| !ended.contains(index));
    }

    /// How many running processes report `second` (those started by then).
    fn reporting(&self, second: u64) -> u32 {
        let count = self
            .processes
            .iter()
            .filter(|(_, _, first)| *first <= second)
            .count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }
}

/// A process's static split at `rate` among processes offering `demand` in all: the limit
/// times its share, and its part of the server's burst (at least one send), as the
/// simulator's oracle split sizes it.
pub fn split_share(limit: f64, burst: f64, rate: f64, demand: f64) -> (f64, f64) {
    let share = rate / demand;
    (limit * share, (burst * share).max(1.0))
}

/// The clients' lines, gathered by second.
#[derive(Debug)]
struct Collector {
    pending: BTreeMap<u64, Vec<ClientSecond>>,
}

impl Collector {
    fn new() -> Self {
        Self {
            pending: BTreeMap::new(),
        }
    }

    /// Reads lines until `expected` processes have reported `second`, or `deadline`. A
    /// garbled line is an error.
    async fn collect(
        &mut self,
        lines: &mut mpsc::UnboundedReceiver<ClientLine>,
        second: u64,
        expected: u32,
        deadline: Instant,
    ) -> Result<(), String> {
        while self.pending.get(&second).map_or(0, Vec::len) < expected as usize {
            match tokio::time::timeout_at(deadline, lines.recv()).await {
                Ok(Some(ClientLine::Second(counts))) => {
                    self.pending.entry(counts.second).or_default().push(counts);
                }
                Ok(Some(ClientLine::Garbled(client, line))) => {
                    return Err(format!("client {client} wrote `{line}`"));
                }
                // Every client's output closed, or the deadline: what came is what there is.
                Ok(None) | Err(_) => break,
            }
        }
        Ok(())
    }

    /// The clients' sums for `second` (the server's and the store's figures left to fill).
    fn row(&mut self, second: u64, expected: u32) -> Row {
        let reports = self.pending.remove(&second).unwrap_or_default();
        let mut row = Row {
            second,
            clients: u32::try_from(reports.len()).unwrap_or(u32::MAX),
            ..Row::default()
        };
        let mut live = None;
        let mut live_since: Option<u64> = None;
        for mut counts in reports {
            if let Some(fleet) = counts.fleet {
                *live.get_or_insert(0) += u32::from(fleet.lease == LeaseState::Live);
                if let Some(since) = fleet.live_since_ms {
                    live_since = Some(live_since.map_or(since, |latest| latest.max(since)));
                }
                if let Some(rate) = fleet.send_rate {
                    *row.send_rate.get_or_insert(0.0) += rate;
                }
            }
            row.calls += counts.calls;
            row.attempts += counts.attempts;
            row.successes += counts.successes;
            row.failures += counts.failures;
            row.shed += counts.shed;
            row.latencies_us.append(&mut counts.latencies_us);
        }
        row.leases_live = live;
        row.leases_live_since_ms = live_since.filter(|_| live == Some(expected));
        let mut latencies = row.latencies_us.clone();
        row.p50_us = crate::percentile::percentile(&mut latencies, 50.0);
        row.p99_us = crate::percentile::percentile(&mut latencies, 99.0);
        row
    }
}

/// Runs blocking work (a signal, a process start, a Redis command with its timeout) off the
/// runtime's threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| format!("a blocking task failed: {error}"))?
}

fn lock(redis: &Mutex<Store>) -> std::sync::MutexGuard<'_, Store> {
    redis.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unix_ms(time: SystemTime) -> u64 {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

fn seconds_usize(seconds: u64) -> usize {
    usize::try_from(seconds).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(second: u64, admitted: u64, calls: u64) -> Row {
        Row {
            second,
            admitted,
            calls,
            ..Row::default()
        }
    }

    #[test]
    fn the_split_gives_each_process_the_limit_times_its_demand_share() {
        // The mixed demand: 2 x 250/s and 4 x 25/s against 300/s, a burst of 15.
        let demand = 2.0 * 250.0 + 4.0 * 25.0;
        let (busy, busy_burst) = split_share(300.0, 15.0, 250.0, demand);
        let (light, light_burst) = split_share(300.0, 15.0, 25.0, demand);
        assert_eq!((busy, light), (125.0, 12.5));
        assert_eq!(busy_burst, 6.25);
        // A light process's part of the burst is under one send: it still sends one.
        assert_eq!(light_burst, 1.0);
        assert_eq!(2.0 * busy + 4.0 * light, 300.0);
    }

    #[test]
    fn processes_start_at_their_rates_and_the_last_started_end_first() {
        let settings = RunSettings {
            limit: crate::server::Limit {
                rate: 300.0,
                burst: 15.0,
                retry_after_secs: 1,
                enforced_after: Duration::ZERO,
                error_rate: 0.0,
                error_seed: 1,
                service_time: Duration::ZERO,
            },
            processes: 3,
            rates: vec![200.0, 50.0, 50.0],
            client_events: Vec::new(),
            seconds: 60,
            warmup_s: 10,
            sync_interval_ms: Duration::from_secs(1),
            max_attempts: 3,
            max_wait_ms: Duration::from_millis(100),
            call_timeout_ms: None,
            scope: "harness".to_owned(),
            scopes: 1,
            cluster: false,
            on_off: None,
        };
        let template = ClientOptions {
            index: 0,
            url: String::new(),
            rate: 100.0,
            on_off: None,
            seconds: 60,
            first_second: 0,
            origin_unix_ms: 0,
            seed: 0,
            mode: Mode::Split,
            scope: "harness".to_owned(),
            scopes: 1,
            max_attempts: 3,
            max_wait: Duration::from_millis(100),
            call_timeout: None,
            redis_url: None,
            sync_interval: None,
            watch_leases: false,
            split_rate: None,
            split_burst: 1.0,
        };
        let unheard = Some(("redis://unheard@127.0.0.1:1/".to_owned(), 2));
        let mut running = Running::new(template, 7, &settings, unheard);
        let first = running.start(3, 0);
        // With `writes-fail` in the timeline, the later processes connect as the user it
        // refuses, those started later too.
        let urls: Vec<Option<&str>> = (first.iter())
            .map(|options| options.redis_url.as_deref())
            .collect();
        assert_eq!(urls, [None, None, Some("redis://unheard@127.0.0.1:1/")]);
        let rates: Vec<(f64, Option<f64>)> = first
            .iter()
            .map(|options| (options.rate, options.split_rate))
            .collect();
        assert_eq!(
            rates,
            [(200.0, Some(200.0)), (50.0, Some(50.0)), (50.0, Some(50.0))]
        );
        // One joins at second 20 at the phase's rate: its share is of the 400/s now offered.
        let joined = running.start(1, 20);
        assert_eq!(
            (joined[0].index, joined[0].rate, joined[0].split_rate),
            (3, 100.0, Some(75.0))
        );
        assert_eq!(joined[0].first_second, 20);
        assert!(joined[0].redis_url.is_some());
        assert_eq!((running.reporting(19), running.reporting(20)), (3, 4));
        running.end(&[3, 2]);
        assert_eq!(running.reporting(30), 2);
    }

    #[test]
    fn the_cold_start_is_the_first_second_of_five_at_nine_tenths() {
        let mut rows: Vec<Row> = (0..20).map(|second| row(second, 100, 1000)).collect();
        for (second, row) in rows.iter_mut().enumerate().skip(6) {
            row.admitted = if second == 6 { 400 } else { 470 };
        }
        // Seconds 6-10 average 456/s: 0.912 of a 500/s limit.
        assert_eq!(cold_start(&rows, 500.0), Some(6));
        // Offered less than the limit: 0.9 of what was offered.
        let light: Vec<Row> = (0..10).map(|second| row(second, 95, 100)).collect();
        assert_eq!(cold_start(&light, 500.0), Some(0));
        assert_eq!(cold_start(&rows[..5], 500.0), None);
    }
}
