//! The run: the options checked as a whole, the server and (for fleet phases) `redis-server`
//! started, each phase in turn, the figures printed and written to JSON and CSV; the whole
//! under a timeout, and stopped (every process killed by its PID) on Ctrl-C or `SIGTERM`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;

use crate::client::{KEY_PREFIX, scope_names};
use crate::client_event::{ClientEvent, check_client_timeline};
use crate::cluster_store::ClusterStore;
use crate::duration_arg::parse_duration;
use crate::fault::{Fault, check_timeline};
use crate::phase::{OVERHEAD, PhaseContext, run_phase};
use crate::phase_spec::{Mode, PhaseSpec};
use crate::redis_process::RedisProcess;
use crate::report::{PhaseReport, RunReport, RunSettings, write_csv, write_json};
use crate::server::{Limit, LimitServer};
use crate::store::Store;
use crate::table;

/// The harness's options.
#[derive(Debug, Clone, Args)]
pub struct RunOptions {
    /// Client processes per phase at its start (the issue's runs use 8 or more; default 8, or
    /// as many as `--rates` names).
    #[arg(long)]
    pub processes: Option<u32>,
    /// Each process's own calls per second, comma-separated (mixed demand: `250,250,25,25,25,25`
    /// is 6 processes, 2 busy and 4 light); replaces `--rate` for the processes at the start.
    #[arg(long, value_delimiter = ',')]
    pub rates: Vec<f64>,
    /// Calls per second per process (Poisson arrivals, or on/off with `--on-off`); a phase may
    /// name its own (`fleet@900`). The default, 8 x 90 = 720/s against 500/s, is the
    /// simulator's S3 (700/s against a 500/s limit).
    #[arg(long, default_value_t = 90.0)]
    pub rate: f64,
    /// The phases in order, comma-separated, each `MODE[@RATE][+faults]`: `local` (each
    /// process on its own), `fleet` (the scope attached to the fleet on Redis), `split` (each
    /// process on its own behind a fixed gate at the limit times its share of the demand: the
    /// oracle's static split), `@RATE` calls per second per process, `+faults` plays the fault
    /// timeline.
    #[arg(long, value_delimiter = ',', default_value = "local,fleet")]
    pub phases: Vec<PhaseSpec>,
    /// On/off arrivals for every process: calls come only in on spells, at the rate that keeps
    /// each process's mean rate, with off spells between, both of exponential lengths with
    /// these means (`ON,OFF`, e.g. `2s,5s`: the simulator's on/off processes); without it,
    /// Poisson arrivals throughout.
    #[arg(long)]
    pub on_off: Option<crate::client::Spells>,
    /// Each phase's length, in whole seconds.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub duration: Duration,
    /// The seconds at the start of each phase left out of its summary, in whole seconds.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// Requests per second the server admits across all clients.
    #[arg(long, default_value_t = 500.0)]
    pub limit: f64,
    /// The server's token bucket: requests an idle server admits at once.
    #[arg(long, default_value_t = 50.0)]
    pub burst: f64,
    /// The `Retry-After` of the server's 429s, in seconds.
    #[arg(long, default_value_t = 1)]
    pub retry_after: u32,
    /// How long into each phase the server admits everything before it enforces the limit
    /// (0: from the start; the simulator's S3 throttles a fleet in its steady state, at
    /// 120 s), in whole seconds.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub enforce_after: Duration,
    /// A fault of the timeline of `+faults` phases: `<time>:<action>`, the action one of
    /// `stop` (SIGSTOP), `cont` (SIGCONT), `kill` (SIGKILL), `restart-empty` (a new empty
    /// server on the same port), `flushall`; repeat the option for each fault.
    #[arg(long = "fault")]
    pub faults: Vec<Fault>,
    /// A change of the client processes in every phase: `<time>:<action>:<count>`, the action
    /// one of `start` (new processes at `--rate`), `kill` (the last started ones crash:
    /// SIGKILL), `leave` (they exit cleanly: SIGTERM); repeat the option for each
    /// (`--client-event 30s:start:4 --client-event 45s:kill:3`).
    #[arg(long = "client-event")]
    pub client_events: Vec<ClientEvent>,
    /// The share of admitted requests the server answers 503 (drawn at random from `--seed`),
    /// in [0, 1): a flaky upstream as well as a throttling one.
    #[arg(long, default_value_t = 0.0)]
    pub error_rate: f64,
    /// The fleet's sync interval (e.g. `250ms`, `5s`).
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pub sync_interval: Duration,
    /// Attempts per call.
    #[arg(long, default_value_t = 3)]
    pub max_attempts: u32,
    /// The longest a call waits for its send permit; a call expected to wait longer is shed.
    #[arg(long, default_value = "100ms", value_parser = parse_duration)]
    pub max_wait: Duration,
    /// Each call's deadline (none by default): the clients' `timeout` (adaptive mode then
    /// sheds a call whose permit would come too late for its answer), and the caller gives up
    /// on the call then, counted as a failure.
    #[arg(long, value_parser = parse_duration)]
    pub call_timeout: Option<Duration>,
    /// The server's mean time to answer an admitted request (exponentially distributed,
    /// drawn from `--seed`); a 429 is answered at once.
    #[arg(long, default_value = "0s", value_parser = parse_duration)]
    pub service_time: Duration,
    /// The scope's name.
    #[arg(long, default_value = "harness")]
    pub scope: String,
    /// Scopes per process: each process attaches this many (`<scope>-0`, `<scope>-1`, ... when
    /// more than one) and spreads its calls over them in turn; its syncs stay one round trip
    /// per store node.
    #[arg(long, default_value_t = 1)]
    pub scopes: u32,
    /// Runs the fleet phases against a Redis Cluster of six `redis-server` processes (3 masters,
    /// 3 replicas; `redis-server` and `redis-cli` on `PATH`) instead of one server: the
    /// clients connect with a `redis-cluster://` URL, the faults are `failover` and `migrate`.
    #[arg(long)]
    pub redis_cluster: bool,
    /// How long a cluster's nodes wait for a silent master before they declare it failed (its
    /// replica is promoted about two of these after it died): short for quick failovers,
    /// longer for runs that load the machine (a busy master must not be failed over).
    #[arg(long, default_value = "500ms", value_parser = parse_duration)]
    pub cluster_node_timeout: Duration,
    /// The seed of the clients' arrivals.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The `redis-server` program to run.
    #[arg(long, default_value = "redis-server")]
    pub redis_server: PathBuf,
    /// Where `report.json` and `report.csv` are written.
    #[arg(long, default_value = "target/fleet-harness")]
    pub out_dir: PathBuf,
}

/// Checks the options as a whole: every problem is an error before anything starts.
fn check(options: &RunOptions) -> Result<(RunSettings, Vec<Fault>), String> {
    let whole_seconds = |name: &str, duration: Duration| {
        if duration.subsec_nanos() == 0 {
            Ok(duration.as_secs())
        } else {
            Err(format!(
                "--{name} must be whole seconds (the figures are per second)"
            ))
        }
    };
    let seconds = whole_seconds("duration", options.duration)?;
    let warmup_s = whole_seconds("warmup", options.warmup)?;
    let positive = |name: &str, value: f64| {
        if value.is_finite() && value > 0.0 {
            Ok(())
        } else {
            Err(format!("--{name} must be a positive number, not {value}"))
        }
    };
    positive("rate", options.rate)?;
    positive("limit", options.limit)?;
    if !(options.burst.is_finite() && options.burst >= 1.0) {
        return Err(format!("--burst must be at least 1, not {}", options.burst));
    }
    let processes = check_processes(options)?;
    if !(options.error_rate.is_finite() && (0.0..1.0).contains(&options.error_rate)) {
        return Err(format!(
            "--error-rate must be in [0, 1) (a share of admitted requests), not {}",
            options.error_rate
        ));
    }
    if options.scopes == 0 {
        return Err("--scopes must be at least 1".to_owned());
    }
    if options.enforce_after >= options.duration {
        return Err("--enforce-after must be shorter than --duration".to_owned());
    }
    if seconds < 2 || warmup_s >= seconds {
        return Err(format!(
            "--duration ({seconds} s) must be at least 2 s and longer than --warmup ({warmup_s} s)"
        ));
    }
    if options.phases.is_empty() {
        return Err("--phases names no phase".to_owned());
    }
    if options.sync_interval.is_zero() || options.max_wait.is_zero() {
        return Err("--sync-interval and --max-wait must be longer than zero".to_owned());
    }
    if options
        .call_timeout
        .is_some_and(|timeout| timeout.is_zero())
    {
        return Err("--call-timeout must be longer than zero: leave it out for none".to_owned());
    }
    if !options
        .sync_interval
        .subsec_nanos()
        .is_multiple_of(1_000_000)
        || options.sync_interval > MAX_SYNC_INTERVAL
    {
        return Err(format!(
            "--sync-interval must be whole milliseconds up to 1 h (fleet mode's bounds), not \
             {:?}",
            options.sync_interval
        ));
    }
    let playing = options.phases.iter().any(|phase| phase.faults);
    match (playing, options.faults.is_empty()) {
        (true, true) => {
            return Err("a `+faults` phase but no --fault: give the timeline".to_owned());
        }
        (false, false) => {
            return Err("--fault given but no phase plays it: add one, e.g. \
                        `--phases fleet,fleet+faults`"
                .to_owned());
        }
        _ => {}
    }
    let timeline = check_timeline(
        options.faults.clone(),
        options.duration,
        options.redis_cluster,
    )?;
    let client_events =
        check_client_timeline(options.client_events.clone(), processes, options.duration)?;
    let settings = RunSettings {
        limit: Limit {
            rate: options.limit,
            burst: options.burst,
            retry_after_secs: options.retry_after,
            enforced_after: Duration::from_secs(whole_seconds(
                "enforce-after",
                options.enforce_after,
            )?),
            error_rate: options.error_rate,
            error_seed: options.seed,
            service_time: options.service_time,
        },
        processes,
        rates: options.rates.clone(),
        client_events,
        seconds,
        warmup_s,
        sync_interval_ms: options.sync_interval,
        max_attempts: options.max_attempts,
        max_wait_ms: options.max_wait,
        call_timeout_ms: options.call_timeout,
        scope: options.scope.clone(),
        scopes: options.scopes,
        cluster: options.redis_cluster,
        on_off: options.on_off,
    };
    Ok((settings, timeline))
}

/// The processes at a phase's start: `--processes`, or as many as `--rates` names (both given,
/// they must agree); each rate positive, and no phase naming its own rate besides `--rates`.
fn check_processes(options: &RunOptions) -> Result<u32, String> {
    if let Some(bad) = options
        .rates
        .iter()
        .find(|rate| !(rate.is_finite() && **rate > 0.0))
    {
        return Err(format!(
            "--rates: each rate must be a positive number, not {bad}"
        ));
    }
    let named = u32::try_from(options.rates.len()).map_err(|_| "--rates names too many")?;
    let processes = match (options.processes, named) {
        (Some(0), _) => return Err("--processes must be at least 1".to_owned()),
        (Some(processes), 0) => processes,
        (None, 0) => DEFAULT_PROCESSES,
        (None, named) => named,
        (Some(processes), named) if processes == named => processes,
        (Some(processes), named) => {
            return Err(format!(
                "--processes {processes} but --rates names {named} rates: give one rate per \
                 process, or leave --processes out"
            ));
        }
    };
    if let Some(phase) = options.phases.iter().find(|phase| phase.rate.is_some())
        && named > 0
    {
        return Err(format!(
            "phase `{phase}` names its own rate and --rates names each process's: give one"
        ));
    }
    Ok(processes)
}

/// The longest sync interval fleet mode takes (`retry_core::fleet::protocol::MAX_WINDOW_MS`).
const MAX_SYNC_INTERVAL: Duration =
    Duration::from_millis(retry_core::fleet::protocol::MAX_WINDOW_MS);

/// Client processes per phase when neither `--processes` nor `--rates` says.
const DEFAULT_PROCESSES: u32 = 8;

/// Runs the harness's role to the end and writes its reports.
pub fn main(options: RunOptions) -> Result<(), String> {
    let (settings, timeline) = check(&options)?;
    // The longest the run may take: every phase, its start and its end, and a minute for
    // redis-server's starts.
    let phases = u32::try_from(options.phases.len()).unwrap_or(u32::MAX);
    let deadline =
        (Duration::from_secs(settings.seconds) + OVERHEAD) * phases + Duration::from_secs(60);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|error| format!("no runtime: {error}"))?;
    let report = runtime.block_on(async {
        tokio::select! {
            result = tokio::time::timeout(deadline, run(&options, &settings, &timeline)) => {
                result.map_err(|_| format!("the run took longer than {deadline:?}: stopped"))?
            }
            signal = shutdown_signal() => Err(format!("{signal}: stopped")),
        }
    })?;
    std::fs::create_dir_all(&options.out_dir)
        .map_err(|error| format!("{}: {error}", options.out_dir.display()))?;
    let json = options.out_dir.join("report.json");
    let csv = options.out_dir.join("report.csv");
    write_json(&report, &json).map_err(|error| format!("{}: {error}", json.display()))?;
    write_csv(&report, &csv).map_err(|error| format!("{}: {error}", csv.display()))?;
    println!("\nwrote {} and {}", json.display(), csv.display());
    Ok(())
}

async fn run(
    options: &RunOptions,
    settings: &RunSettings,
    timeline: &[Fault],
) -> Result<RunReport, String> {
    let server = LimitServer::start(settings.limit)
        .await
        .map_err(|error| format!("the HTTP server cannot start: {error}"))?;
    let redis = if options.phases.iter().any(|phase| phase.mode == Mode::Fleet) {
        let program = options.redis_server.clone();
        let cluster = options.redis_cluster;
        let node_timeout = options.cluster_node_timeout;
        let first_scope = scope_names(&settings.scope, settings.scopes)
            .into_iter()
            .next()
            .unwrap_or_default();
        let store = tokio::task::spawn_blocking(move || -> Result<Store, String> {
            if cluster {
                let key = retry_core::fleet::keys::ScopeKeys::new(KEY_PREFIX, &first_scope)
                    .map_err(|error| format!("scope {first_scope:?}: {error}"))?;
                ClusterStore::start(key.state(), node_timeout).map(Store::Cluster)
            } else {
                RedisProcess::start(program)
                    .map(Store::Node)
                    .map_err(|error| error.to_string())
            }
        })
        .await
        .map_err(|error| format!("starting the store failed: {error}"))??;
        Some(Arc::new(Mutex::new(store)))
    } else {
        None
    };
    let context = PhaseContext {
        settings,
        default_rate: options.rate,
        seed: options.seed,
        server: &server,
        redis: redis.as_ref(),
        timeline,
    };
    let mut phases: Vec<PhaseReport> = Vec::with_capacity(options.phases.len());
    for (number, spec) in options.phases.iter().enumerate() {
        let phase = run_phase(&context, *spec, number as u64).await?;
        phases.push(phase);
    }
    compare_with_fault_free(&mut phases);
    println!("\n== summaries (after the {} s warm-up)", settings.warmup_s);
    for phase in &phases {
        println!("{}", table::summary(&phase.name, &phase.summary));
        println!("{}", table::goals(&phase.summary, phase.cold_start_s));
        if !phase.nodes.is_empty() {
            println!("{}", table::nodes(&phase.nodes));
        }
        for episode in &phase.episodes {
            println!("{}", table::episode(episode));
        }
    }
    Ok(RunReport {
        settings: settings.clone(),
        phases,
    })
}

/// Sets each fault episode's p99 against the fault-free phase of the same mode and rate.
fn compare_with_fault_free(phases: &mut [PhaseReport]) {
    let baselines: Vec<(Mode, f64, Option<f64>)> = phases
        .iter()
        .filter(|phase| phase.episodes.is_empty() && phase.faults.is_empty())
        .map(|phase| (phase.mode, phase.rate, phase.summary.p99_ms))
        .collect();
    for phase in phases.iter_mut() {
        let baseline = baselines
            .iter()
            .find(|(mode, rate, _)| *mode == phase.mode && *rate == phase.rate)
            .and_then(|(_, _, p99)| *p99);
        for episode in &mut phase.episodes {
            episode.p99_delta_ms = baseline
                .zip(episode.during.p99_ms)
                .map(|(baseline, p99)| p99 - baseline);
        }
    }
}

/// Ctrl-C or `SIGTERM`, named.
async fn shutdown_signal() -> String {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "interrupted".to_owned(),
        () = terminate => "terminated".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::Cli;

    fn check_args(args: &[&str]) -> Result<(RunSettings, Vec<Fault>), String> {
        let cli = Cli::try_parse_from(["fleet-harness", "run"].iter().chain(args))
            .map_err(|error| error.to_string())?;
        match cli.command {
            crate::Command::Run(options) => check(&options),
            crate::Command::Client(_) => Err("not a run".to_owned()),
        }
    }

    #[test]
    fn the_defaults_are_the_issue_run() {
        let (settings, timeline) = check_args(&[]).expect("valid");
        assert_eq!(
            (settings.processes, settings.seconds, settings.warmup_s),
            (8, 60, 10)
        );
        assert_eq!(settings.limit.rate, 500.0);
        assert!(timeline.is_empty());
    }

    #[test]
    fn inconsistent_options_are_refused_before_anything_starts() {
        let cases: [(&[&str], &str); 16] = [
            (&["--duration", "1.5s"], "whole seconds"),
            (
                &["--duration", "10s", "--warmup", "10s"],
                "longer than --warmup",
            ),
            (&["--processes", "0"], "at least 1"),
            (&["--phases", "fleet+faults"], "no --fault"),
            (&["--fault", "5s:stop"], "no phase plays it"),
            (&["--rate=-3"], "positive"),
            (
                &["--rates", "250,0,25"],
                "each rate must be a positive number",
            ),
            (&["--rates", "250,fast"], "invalid value"),
            (&["--rates", "250,25", "--processes", "3"], "names 2 rates"),
            (
                &["--rates", "250,25", "--phases", "fleet@90"],
                "names its own rate",
            ),
            (&["--error-rate", "1"], "in [0, 1)"),
            (&["--error-rate=-0.1"], "in [0, 1)"),
            (&["--client-event", "30s:kill:8"], "no process running"),
            (&["--sync-interval", "1.5ms"], "whole milliseconds"),
            (&["--on-off", "2s"], "`ON,OFF`"),
            (
                &["--call-timeout", "0s"],
                "--call-timeout must be longer than zero",
            ),
        ];
        for (args, expected) in cases {
            let error = check_args(args).unwrap_err();
            assert!(error.contains(expected), "{args:?}: {error}");
        }
    }

    #[test]
    fn the_new_shapes_are_read_into_the_settings() {
        let (settings, _) = check_args(&[
            "--rates",
            "250,250,25,25,25,25",
            "--error-rate",
            "0.1",
            "--sync-interval",
            "250ms",
            "--client-event",
            "40s:kill:3",
            "--client-event",
            "20s:start:4",
            "--phases",
            "local,fleet,split",
            "--on-off",
            "2s,5s",
        ])
        .expect("valid");
        assert_eq!(settings.processes, 6);
        assert_eq!(settings.rates, [250.0, 250.0, 25.0, 25.0, 25.0, 25.0]);
        assert_eq!(settings.limit.error_rate, 0.1);
        assert_eq!(settings.sync_interval_ms, Duration::from_millis(250));
        assert_eq!(settings.on_off, "2000ms,5000ms".parse().ok());
        let events: Vec<String> = settings
            .client_events
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(events, ["20s:start:4", "40s:kill:3"]);
        let (five, _) = check_args(&["--sync-interval", "5s"]).expect("valid");
        assert_eq!(five.sync_interval_ms, Duration::from_secs(5));
        assert_eq!(five.call_timeout_ms, None);
        assert_eq!(five.limit.service_time, Duration::ZERO);
        let (slow, _) = check_args(&[
            "--call-timeout",
            "1s",
            "--service-time",
            "50ms",
            "--max-wait",
            "10s",
        ])
        .expect("valid");
        assert_eq!(slow.call_timeout_ms, Some(Duration::from_secs(1)));
        assert_eq!(slow.limit.service_time, Duration::from_millis(50));
        assert_eq!(slow.max_wait_ms, Duration::from_secs(10));
    }
}
