//! The client role: one OS process of the fleet, started by the harness as
//! `fleet-harness client ...`. It calls the server at its rate (Poisson arrivals) through the
//! library in adaptive mode, in the scope the harness names (local, or attached to the fleet),
//! and writes one [`ClientSecond`](crate::wire::ClientSecond) per second of the phase to its
//! standard output as a JSON line. It ends after the phase's last second (calls still running
//! are cancelled), or when the harness is gone (its output pipe breaks).

mod arrivals;
mod call;
mod fleet;
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
use tally::Tally;

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
    /// Calls per second.
    #[arg(long)]
    pub rate: f64,
    /// The phase's length in seconds.
    #[arg(long)]
    pub seconds: u64,
    /// When the phase's second 0 starts, in Unix milliseconds.
    #[arg(long)]
    pub origin_unix_ms: u64,
    /// The seed of the arrivals.
    #[arg(long)]
    pub seed: u64,
    /// `local` or `fleet`.
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
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .max_attempts(options.max_attempts)
        .max_wait(options.max_wait)
        .build()
        .map_err(|error| format!("client {}: {error}", options.index))?;
    let link = fleet::join(&options).await?;
    let strategies: Arc<[ConfiguredStrategy]> = scope_names(&options.scope, options.scopes)
        .iter()
        .map(|name| strategy_for(config.clone(), name))
        .collect();
    let client = reqwest::Client::builder()
        .timeout(ATTEMPT_TIMEOUT)
        .tcp_nodelay(true)
        .build()
        .map_err(|error| format!("client {}: {error}", options.index))?;
    let origin = origin_instant(options.origin_unix_ms);
    let tally = Arc::new(Tally::new(options.index, origin));
    let end = origin + Duration::from_secs(options.seconds);
    let arrivals = Arrivals::new(options.rate, options.seed);
    let url: Arc<str> = options.url.into();
    tokio::spawn(make_calls(
        arrivals,
        origin,
        end,
        Arc::clone(&strategies),
        client,
        url,
        Arc::clone(&tally),
    ));
    report_seconds(&tally, origin, options.seconds, &strategies, link.as_ref()).await
}

/// Starts a call at every arrival from `origin` to `end`, each in a task of its own, on the
/// scopes in turn.
async fn make_calls(
    mut arrivals: Arrivals,
    origin: Instant,
    end: Instant,
    strategies: Arc<[ConfiguredStrategy]>,
    client: reqwest::Client,
    url: Arc<str>,
    tally: Arc<Tally>,
) {
    let mut next = origin + arrivals.next_gap();
    let mut turn = 0;
    while next < end {
        tokio::time::sleep_until(next).await;
        // Every arrival due by now starts now (the timer's granularity is a millisecond).
        let now = Instant::now();
        while next <= now && next < end {
            let (strategies, client, url, tally) = (
                Arc::clone(&strategies),
                client.clone(),
                Arc::clone(&url),
                Arc::clone(&tally),
            );
            let scope = turn % strategies.len();
            turn += 1;
            tokio::spawn(
                async move { call::call(&strategies[scope], &client, &url, &tally).await },
            );
            next += arrivals.next_gap();
        }
    }
}

/// Writes each second's counts once it is over; an error when the harness is gone.
async fn report_seconds(
    tally: &Tally,
    origin: Instant,
    seconds: u64,
    strategies: &[ConfiguredStrategy],
    link: Option<&fleet::FleetLink>,
) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    for second in 0..seconds {
        tokio::time::sleep_until(origin + Duration::from_secs(second + 1)).await;
        let mut counts = tally.take(second);
        counts.fleet = link.map(|link| link.second(strategies, origin));
        let line = serde_json::to_string(&counts).map_err(|error| error.to_string())?;
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
