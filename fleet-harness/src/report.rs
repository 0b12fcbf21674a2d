//! The run's figures: one [`Row`] per second of each phase, the phase's [`Summary`] and its
//! fault [`Episode`]s, written as JSON (everything) and CSV (the rows).

use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

use serde::{Serialize, Serializer};

use crate::command_stats::CommandCounts;
use crate::episode::Episode;
use crate::fault::{Fault, FaultAction};
use crate::node_stats::{NodeSecond, NodeSummary};
use crate::phase_spec::Mode;
use crate::server::Limit;
use crate::store_view::StoreView;
use crate::summary::Summary;

/// One second of a phase: the server's counts, the clients' sums, the store's commands.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Row {
    /// The second of the phase.
    pub second: u64,
    /// Requests the server admitted.
    pub admitted: u64,
    /// Requests the server answered 429.
    pub throttled: u64,
    /// Requests the server admitted but answered 503 (`--error-rate`; counted in `admitted`).
    pub errors: u64,
    /// Attempts the clients sent.
    pub attempts: u64,
    /// Calls that ended.
    pub calls: u64,
    /// Calls that ended in success.
    pub successes: u64,
    /// Calls that ended in failure after an attempt.
    pub failures: u64,
    /// Calls shed before their first attempt.
    pub shed: u64,
    /// The median latency of the calls that ended (and sent an attempt), in microseconds.
    pub p50_us: Option<u64>,
    /// Their 99th percentile, in microseconds.
    pub p99_us: Option<u64>,
    /// The store's commands (`None`: the store did not answer at this second's end).
    pub redis: Option<RedisSecond>,
    /// How many processes reported this second.
    pub clients: u32,
    /// How many processes held a live fleet lease at the second's end (fleet mode).
    pub leases_live: Option<u32>,
    /// When the last of those processes' leases became live, in milliseconds from the phase's
    /// second 0 (fleet mode, every process live).
    pub leases_live_since_ms: Option<u64>,
    /// The processes' send rates added up (their shares of the fleet rate, or the 0.5/s floor
    /// of a process without one), while the fleet limiter is engaged.
    pub send_rate: Option<f64>,
    /// The store's view of the fleet scope at the second's end (fleet mode).
    pub store: Option<StoreView>,
    /// Each store node's load over the reading's window (fleet mode; the nodes that answered).
    pub nodes: Vec<NodeSecond>,
    /// The faults that struck in this second.
    pub faults: Vec<FaultAction>,
    /// The client timeline's events in this second.
    pub client_events: Vec<crate::client_event::ClientEvent>,
    /// The latencies behind the percentiles (kept for the summaries, not written).
    #[serde(skip)]
    pub latencies_us: Vec<u64>,
}

/// The store's commands counted at the end of a second (50 ms before it, so that a fault due
/// at the second's end never meets the reading): since the last reading that answered,
/// `window_s` seconds earlier (1 unless the store was stopped or down).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct RedisSecond {
    /// Seconds since the last reading that answered.
    pub window_s: u64,
    /// The commands in that window.
    #[serde(flatten)]
    pub counts: CommandCounts,
}

/// A fault as it was applied.
#[derive(Debug, Clone, Serialize)]
pub struct FaultEvent {
    /// The fault on the timeline.
    pub fault: Fault,
    /// When it was applied, from the start of the phase, in milliseconds.
    pub applied_at_ms: u64,
    /// When applying it returned, from the start of the phase, in milliseconds: a Redis
    /// Cluster's `failover` and `migrate` return once the cluster settled (a replica promoted,
    /// the slot given to the target).
    pub settled_at_ms: u64,
}

/// One phase of the run.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseReport {
    /// The phase as written (`fleet@900+faults`).
    pub name: String,
    /// Its clients' mode.
    pub mode: Mode,
    /// Calls per second per process.
    pub rate: f64,
    /// Client processes.
    pub processes: u32,
    /// The faults applied.
    pub faults: Vec<FaultEvent>,
    /// One row per second.
    pub rows: Vec<Row>,
    /// The figures after the warm-up.
    pub summary: Summary,
    /// The first second from which the server admitted 0.9 of the limit (or of the offered
    /// calls, if fewer) over 5 seconds (`None`: never).
    pub cold_start_s: Option<u64>,
    /// Each store node's load after the warm-up (fleet mode).
    pub nodes: Vec<NodeSummary>,
    /// Each fault's episode (`+faults` phases).
    pub episodes: Vec<Episode>,
}

/// The whole run, as written to the JSON file.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The command line's settings.
    pub settings: RunSettings,
    /// Each phase in order.
    pub phases: Vec<PhaseReport>,
}

/// The settings every phase shares.
#[derive(Debug, Clone, Serialize)]
pub struct RunSettings {
    /// The server's limit.
    pub limit: Limit,
    /// Client processes at the start of each phase.
    pub processes: u32,
    /// Each of those processes' calls per second (`--rates`; empty: the phase's rate).
    pub rates: Vec<f64>,
    /// The client processes' timeline, in every phase.
    pub client_events: Vec<crate::client_event::ClientEvent>,
    /// Seconds per phase.
    pub seconds: u64,
    /// Seconds left out of the summaries at the start of each phase.
    pub warmup_s: u64,
    /// The fleet's sync interval, in milliseconds.
    #[serde(serialize_with = "millis")]
    pub sync_interval_ms: Duration,
    /// Attempts per call.
    pub max_attempts: u32,
    /// The longest wait for a send permit before a call is shed, in milliseconds.
    #[serde(serialize_with = "millis")]
    pub max_wait_ms: Duration,
    /// Each call's deadline, in milliseconds (`None`: no deadline).
    #[serde(serialize_with = "optional_millis")]
    pub call_timeout_ms: Option<Duration>,
    /// The scope's name.
    pub scope: String,
    /// Scopes per process (named `<scope>-<n>` when more than one), calls spread over them.
    pub scopes: u32,
    /// Whether the store is a Redis Cluster (else one `redis-server`).
    pub cluster: bool,
    /// The processes' on/off spells (`--on-off`); `None`: Poisson arrivals throughout.
    pub on_off: Option<crate::client::Spells>,
}

/// Serializes a duration as whole milliseconds.
pub fn millis<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

/// [`millis`] of a duration that may be absent (`null`).
pub fn optional_millis<S: Serializer>(
    duration: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match duration {
        Some(duration) => millis(duration, serializer),
        None => serializer.serialize_none(),
    }
}

/// Writes the run as pretty JSON to `path`.
pub fn write_json(report: &RunReport, path: &Path) -> io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut out = io::BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, report)?;
    writeln!(out)?;
    out.flush()
}

/// The CSV file's columns.
const CSV_HEADER: &str = "phase,second,admitted,throttled,attempts,calls,successes,failures,\
    shed,p50_ms,p99_ms,redis_window_s,redis_evalsha,redis_eval,redis_sent,redis_total,clients,\
    leases_live,send_rate,store_engaged,store_fleet_rate,store_w_max,store_admitted_rate,\
    store_calls_rate,store_pool,store_leased,store_curve_paused_s,faults,errors,client_events";

/// Writes every phase's rows as CSV to `path` (empty cells for figures not measured).
pub fn write_csv(report: &RunReport, path: &Path) -> io::Result<()> {
    let mut out = io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "{CSV_HEADER}")?;
    for phase in &report.phases {
        for row in &phase.rows {
            writeln!(out, "{},{}", phase.name, csv_fields(row))?;
        }
    }
    out.flush()
}

fn csv_fields(row: &Row) -> String {
    let option = |value: Option<String>| value.unwrap_or_default();
    let ms = |micros: Option<u64>| option(micros.map(|us| format!("{:.3}", us as f64 / 1000.0)));
    let redis =
        |field: fn(&RedisSecond) -> u64| option(row.redis.as_ref().map(|r| field(r).to_string()));
    let rate = |rate: Option<f64>| option(rate.map(|rate| format!("{rate:.3}")));
    let store = |field: fn(&StoreView) -> String| option(row.store.as_ref().map(field));
    let faults: Vec<&str> = row.faults.iter().map(|action| action.name()).collect();
    [
        row.second.to_string(),
        row.admitted.to_string(),
        row.throttled.to_string(),
        row.attempts.to_string(),
        row.calls.to_string(),
        row.successes.to_string(),
        row.failures.to_string(),
        row.shed.to_string(),
        ms(row.p50_us),
        ms(row.p99_us),
        redis(|r| r.window_s),
        redis(|r| r.counts.evalsha),
        redis(|r| r.counts.eval),
        redis(|r| r.counts.sent),
        redis(|r| r.counts.total),
        row.clients.to_string(),
        option(row.leases_live.map(|live| live.to_string())),
        rate(row.send_rate),
        store(|view| u8::from(view.engaged).to_string()),
        store(|view| format!("{:.3}", view.fleet_rate)),
        store(|view| format!("{:.3}", view.w_max)),
        store(|view| {
            view.admitted_rate
                .map_or(String::new(), |r| format!("{r:.3}"))
        }),
        store(|view| view.calls_rate.map_or(String::new(), |r| format!("{r:.3}"))),
        store(|view| view.pool.to_string()),
        store(|view| view.leased.to_string()),
        store(|view| format!("{:.3}", view.curve_paused_s)),
        faults.join(" "),
        row.errors.to_string(),
        row.client_events
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" "),
    ]
    .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_csv_row_has_a_field_per_column_and_empty_cells_for_the_unmeasured() {
        let row = Row {
            second: 4,
            admitted: 500,
            p99_us: Some(1500),
            faults: vec![FaultAction::Stop],
            ..Row::default()
        };
        let fields = csv_fields(&row);
        assert_eq!(fields.split(',').count() + 1, CSV_HEADER.split(',').count());
        assert!(fields.starts_with("4,500,0,"), "{fields}");
        assert!(fields.contains(",,1.500,,,,,,"), "{fields}");
        assert!(fields.ends_with(",0,,,,,,,,,,,stop,0,"), "{fields}");
    }
}
