//! One phase of a run: fresh client processes for `seconds`, the server's bucket and counts
//! started over, the store flushed with its command counts reset (fleet mode), the fault
//! timeline played (`+faults`), and a row per second collected as each second ends: the
//! clients' counts, the server's, and the store's (its commands, each node's load, the
//! scope's state).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::children::{ClientLine, Clients};
use crate::client::ClientOptions;
use crate::client::{KEY_PREFIX, scope_names};
use crate::cluster_store::topology;
use crate::command_stats::script_commands;
use crate::episode::episodes;
use crate::fault::Fault;
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
        Mode::Local => None,
        Mode::Fleet => Some(
            context
                .redis
                .ok_or("a fleet phase without a redis-server (the harness's bug)")?,
        ),
    };
    let (redis_url, layout) = match redis {
        Some(redis) => {
            let shared = Arc::clone(redis);
            blocking(move || {
                lock(&shared)
                    .prepare_phase()
                    .map_err(|error| format!("the store: {error}"))
            })
            .await?;
            let redis = lock(redis);
            (Some(redis.url()), Some(redis.layout()))
        }
        None => (None, None),
    };
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
    let options: Vec<ClientOptions> = (0..settings.processes)
        .map(|index| ClientOptions {
            index,
            url: context.server.url(),
            rate,
            seconds: settings.seconds,
            origin_unix_ms,
            seed: context.seed ^ (number << 32) ^ u64::from(index),
            mode: spec.mode,
            scope: settings.scope.clone(),
            scopes: settings.scopes,
            max_attempts: settings.max_attempts,
            max_wait: settings.max_wait_ms,
            redis_url: redis_url.clone(),
            sync_interval: redis_url.as_ref().map(|_| settings.sync_interval_ms),
            watch_leases: spec.faults,
        })
        .collect();
    let (line_sender, mut lines) = mpsc::unbounded_channel();
    let clients = Clients::spawn(&options, &line_sender)?;
    drop(line_sender);
    let name = spec.to_string();
    println!("{}", table::header(&name, settings.processes, rate));
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
    let mut collector = Collector::new(settings.processes);
    let mut rows = Vec::new();
    let mut applied = Vec::new();
    for second in 0..settings.seconds {
        let end = origin + Duration::from_secs(second + 1);
        tokio::time::sleep_until(end - READ_LEAD).await;
        let (redis_second, store, nodes) = match &layout {
            Some(layout) => readings.read(layout.clone(), second).await,
            None => (None, None, Vec::new()),
        };
        collector
            .collect(&mut lines, second, end + COLLECT_GRACE)
            .await?;
        while let Ok(event) = fault_events.try_recv() {
            applied.push(event?);
        }
        let mut row = collector.row(second);
        let counts = context.server.second(seconds_usize(second));
        (row.admitted, row.throttled) = (counts.admitted, counts.throttled);
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
    clients.wait(EXIT_GRACE).await?;
    let summary_context = SummaryContext {
        limit: settings.limit.rate,
        processes: settings.processes,
        sync_interval: settings.sync_interval_ms,
        fleet: spec.mode == Mode::Fleet,
    };
    let warmup = seconds_usize(settings.warmup_s).min(rows.len());
    let summary = Summary::of(&rows[warmup..], summary_context);
    println!("{}", table::summary("summary", &summary));
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

/// The clients' lines, gathered by second.
#[derive(Debug)]
struct Collector {
    processes: u32,
    pending: BTreeMap<u64, Vec<ClientSecond>>,
}

impl Collector {
    fn new(processes: u32) -> Self {
        Self {
            processes,
            pending: BTreeMap::new(),
        }
    }

    /// Reads lines until every process has reported `second`, or `deadline`. A garbled line
    /// is an error.
    async fn collect(
        &mut self,
        lines: &mut mpsc::UnboundedReceiver<ClientLine>,
        second: u64,
        deadline: Instant,
    ) -> Result<(), String> {
        while self.pending.get(&second).map_or(0, Vec::len) < self.processes as usize {
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
    fn row(&mut self, second: u64) -> Row {
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
        row.leases_live_since_ms = live_since.filter(|_| live == Some(self.processes));
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
