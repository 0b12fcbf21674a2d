//! The client role: one OS process of the fleet, started by the harness as
//! `fleet-harness client ...`. It calls the server at its rate (Poisson or on/off arrivals)
//! through the library in adaptive mode, in the scope the harness names (local, or attached to
//! the fleet), and writes one [`ClientSecond`](crate::wire::ClientSecond) per second of the
//! phase to its standard output as a JSON line, from the second it started in (a process that
//! joins later reports from then). It ends after the phase's last second (calls still running
//! are cancelled), on `SIGTERM` (it leaves the fleet: reports the second so far and exits
//! cleanly), or when the harness is gone (its output pipe breaks). In a `split` phase every
//! attempt first takes its turn at the process's [`SplitGate`](split_gate::SplitGate).

mod arrivals;
mod call;
mod fleet;
mod split_gate;
mod tally;

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use retry_core::RetryConfig;
use retry_core::strategy::ConfiguredStrategy;
use retry_core::{RetryMode, strategy_for};
use tokio::time::Instant;

use crate::duration_arg::parse_duration;
use crate::phase_spec::Mode;
use arrivals::Arrivals;
use call::Gate;
use split_gate::SplitGate;
use tally::Tally;

pub use arrivals::Spells;
pub use fleet::{KEY_PREFIX, scope_names};

/// How long an attempt may wait for the server's answer: far above a loopback round trip,
/// so that a slow answer on a loaded machine is not mistaken for a fault.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(2);

/// A client process's options (the harness writes them).
#[derive(Debug, Clone, Args)]
pub struct ClientOptions {
    /// The client's index among the phase's processes.
    #[arg(long)]
    pub index: u32,
    /// The server's URL.
    #[arg(long)]
    pub url: String,
    /// Calls per second (the mean, with `--on-off`).
    #[arg(long)]
    pub rate: f64,
    /// On/off arrivals: the mean on and off spells (`2s,5s`); Poisson throughout without.
    #[arg(long)]
    pub on_off: Option<Spells>,
    /// The phase's length in seconds.
    #[arg(long)]
    pub seconds: u64,
    /// The second of the phase the process starts in (0, or when it joins).
    #[arg(long, default_value_t = 0)]
    pub first_second: u64,
    /// When the phase's second 0 starts, in Unix milliseconds.
    #[arg(long)]
    pub origin_unix_ms: u64,
    /// The seed of the arrivals.
    #[arg(long)]
    pub seed: u64,
    /// `local`, `fleet` or `split`.
    #[arg(long)]
    pub mode: Mode,
    /// The scope's name.
    #[arg(long)]
    pub scope: String,
    /// How many scopes (named as [`scope_names`] says); calls go to them in turn.
    #[arg(long, default_value_t = 1)]
    pub scopes: u32,
    /// Attempts per call.
    #[arg(long)]
    pub max_attempts: u32,
    /// The longest wait for a send permit before a call is shed.
    #[arg(long, value_parser = parse_duration)]
    pub max_wait: Duration,
    /// Each call's deadline: the configuration's `timeout`, and the caller gives up then.
    #[arg(long, value_parser = parse_duration)]
    pub call_timeout: Option<Duration>,
    /// The fleet's store (fleet mode).
    #[arg(long)]
    pub redis_url: Option<String>,
    /// The fleet's sync interval (fleet mode).
    #[arg(long, value_parser = parse_duration)]
    pub sync_interval: Option<Duration>,
    /// Whether to watch the leases every few milliseconds, to report when they all became
    /// live (phases with faults: the watching costs a client CPU in proportion to its scopes).
    #[arg(long)]
    pub watch_leases: bool,
    /// The static split's share of the limit, sends per second (`split` mode).
    #[arg(long)]
    pub split_rate: Option<f64>,
    /// The static split's burst, sends (`split` mode).
    #[arg(long, default_value_t = 1.0)]
    pub split_burst: f64,
}

/// Runs the client role to the end of its phase.
pub fn main(options: ClientOptions) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| format!("client {}: no runtime: {error}", options.index))?;
    runtime.block_on(run(options))
}

async fn run(options: ClientOptions) -> Result<(), String> {
    let mut config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .max_attempts(options.max_attempts)
        .max_wait(options.max_wait);
    if let Some(timeout) = options.call_timeout {
        config = config.timeout(timeout);
    }
    let config = config
        .build()
        .map_err(|error| format!("client {}: {error}", options.index))?;
    let link = fleet::join(&options).await?;
    let strategies: Arc<[ConfiguredStrategy]> = scope_names(&options.scope, options.scopes)
        .iter()
        .map(|name| strategy_for(config.clone(), name))
        .collect();
    // An attempt may take as long as its call may.
    let attempt_timeout = options
        .call_timeout
        .map_or(ATTEMPT_TIMEOUT, |timeout| timeout.max(ATTEMPT_TIMEOUT));
    let client = reqwest::Client::builder()
        .timeout(attempt_timeout)
        .tcp_nodelay(true)
        .build()
        .map_err(|error| format!("client {}: {error}", options.index))?;
    let origin = origin_instant(options.origin_unix_ms);
    let tally = Arc::new(Tally::new(options.index, origin));
    let end = origin + Duration::from_secs(options.seconds);
    let arrivals = Arrivals::new(options.rate, options.on_off, options.seed);
    let gate = split_gate(&options)?;
    let url: Arc<str> = options.url.into();
    // A process that joins later calls from when it is ready, not from the phase's start.
    let begin = origin.max(Instant::now());
    tokio::spawn(make_calls(
        arrivals,
        begin,
        end,
        Calls {
            strategies: Arc::clone(&strategies),
            client,
            url,
            tally: Arc::clone(&tally),
            gate,
            max_wait: options.max_wait,
            call_timeout: options.call_timeout,
        },
    ));
    let seconds = options.first_second..options.seconds;
    tokio::select! {
        result = report_seconds(&tally, origin, seconds, &strategies, link.as_ref()) => result,
        () = terminated() => {
            // Leaving: the second so far reported, then a clean exit (the fleet dropped).
            let second = Instant::now().saturating_duration_since(origin).as_secs();
            let counts = tally.take(second);
            let line = serde_json::to_string(&counts).map_err(|error| error.to_string())?;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}").and_then(|()| out.flush());
            Ok(())
        }
    }
}

/// The static split's gate (`split` mode, which needs its rate); `None` in the other modes.
fn split_gate(options: &ClientOptions) -> Result<Option<Arc<SplitGate>>, String> {
    match (options.mode, options.split_rate) {
        (Mode::Split, Some(rate)) if rate.is_finite() && rate > 0.0 => {
            Ok(Some(Arc::new(SplitGate::new(rate, options.split_burst))))
        }
        (Mode::Split, rate) => Err(format!(
            "client {}: split mode needs a positive --split-rate, not {rate:?}",
            options.index
        )),
        _ => Ok(None),
    }
}

/// `SIGTERM` (never, if it cannot be watched).
async fn terminated() {
    match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(mut signal) => {
            signal.recv().await;
        }
        Err(_) => std::future::pending::<()>().await,
    }
}

/// What every call of a process shares.
#[derive(Debug)]
struct Calls {
    strategies: Arc<[ConfiguredStrategy]>,
    client: reqwest::Client,
    url: Arc<str>,
    tally: Arc<Tally>,
    gate: Option<Arc<SplitGate>>,
    max_wait: Duration,
    call_timeout: Option<Duration>,
}

/// Starts a call at every arrival from `origin` to `end`, each in a task of its own, on the
/// scopes in turn.
async fn make_calls(mut arrivals: Arrivals, origin: Instant, end: Instant, calls: Calls) {
    let calls = Arc::new(calls);
    let mut next = origin + arrivals.next_gap();
    let mut turn = 0;
    while next < end {
        tokio::time::sleep_until(next).await;
        // Every arrival due by now starts now (the timer's granularity is a millisecond).
        let now = Instant::now();
        while next <= now && next < end {
            let calls = Arc::clone(&calls);
            let scope = turn % calls.strategies.len();
            turn += 1;
            tokio::spawn(async move {
                let gate = calls.gate.as_deref().map(|gate| Gate {
                    gate,
                    max_wait: calls.max_wait,
                });
                call::call(
                    &calls.strategies[scope],
                    &calls.client,
                    &calls.url,
                    &calls.tally,
                    gate,
                    calls.call_timeout,
                )
                .await;
            });
            next += arrivals.next_gap();
        }
    }
}

/// Writes each second's counts once it is over; an error when the harness is gone.
async fn report_seconds(
    tally: &Tally,
    origin: Instant,
    seconds: std::ops::Range<u64>,
    strategies: &[ConfiguredStrategy],
    link: Option<&fleet::FleetLink>,
) -> Result<(), String> {
    for second in seconds {
        tokio::time::sleep_until(origin + Duration::from_secs(second + 1)).await;
        let mut counts = tally.take(second);
        counts.fleet = link.map(|link| link.second(strategies, origin));
        let line = serde_json::to_string(&counts).map_err(|error| error.to_string())?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}")
            .and_then(|()| out.flush())
            .map_err(|error| format!("the harness is gone: {error}"))?;
    }
    Ok(())
}

/// The instant of `unix_ms` on this process's monotonic clock.
fn origin_instant(unix_ms: u64) -> Instant {
    let now = Instant::now();
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let origin = Duration::from_millis(unix_ms);
    match origin.checked_sub(wall) {
        Some(ahead) => now + ahead,
        None => now.checked_sub(wall - origin).unwrap_or(now),
    }
}
