//! Each store node's own counts, read once a second with `INFO all` (Redis 7): its role, the
//! reads of client sockets it processed (`total_reads_processed`: a pipeline that arrives in one
//! read is one, so this counts round trips), the store scripts it ran (`EVALSHA` and `EVAL`
//! calls) and the CPU it used (`used_cpu_sys` + `used_cpu_user`). Per second, the store's load
//! node by node: it must follow the processes and the sync interval, never the request rate.

use std::io;

use serde::Serialize;

use std::collections::BTreeMap;
use std::time::Duration;

use crate::command_stats::CommandStats;
use crate::redis_process::COMMAND_TIMEOUT;
use crate::report::Row;
use crate::resp::{self, Reply};

/// Reads of client sockets one harness connection costs a node: its command, and its close.
pub const READS_PER_HARNESS_CONNECTION: u64 = 2;

/// How long the harness watches the nodes idle before a phase's clients start: the CPU a node
/// uses with no client (its timers, a cluster's gossip), left out of the CPU per script run.
pub const IDLE_WINDOW: Duration = Duration::from_secs(1);

/// One node's counts since it started (or since `CONFIG RESETSTAT`, for all but the CPU).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeReading {
    /// Whether it is a master (or a single node).
    pub master: bool,
    /// `total_reads_processed`.
    pub reads: u64,
    /// `used_cpu_sys` + `used_cpu_user`, in microseconds.
    pub cpu_us: u64,
    /// Its command counts.
    pub commands: CommandStats,
}

/// One node's load over a reading's window, per second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NodeSecond {
    /// The node's port on 127.0.0.1.
    pub port: u16,
    /// Whether it was a master at the reading.
    pub master: bool,
    /// Reads of the clients' sockets per second (the harness's own left out): round trips.
    pub reads_per_s: f64,
    /// Store scripts run per second (`EVALSHA` and `EVAL`).
    pub scripts_per_s: f64,
    /// CPU used, milliseconds per second.
    pub cpu_ms_per_s: f64,
}

impl NodeReading {
    /// Reads the node on 127.0.0.1:`port` (`INFO all`); an error when it does not answer
    /// within the harness's command timeout.
    pub fn read(port: u16) -> io::Result<Self> {
        match resp::command(port, &["INFO", "all"], COMMAND_TIMEOUT)? {
            Reply::Bulk(Some(info)) => Ok(Self::parse(&info)),
            other => Err(io::Error::other(format!("INFO all answered {other:?}"))),
        }
    }

    /// Reads the fields of an `INFO all` text.
    pub fn parse(info: &str) -> Self {
        let field = |name: &str| {
            info.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .map(str::trim)
        };
        let seconds = |name: &str| {
            field(name)
                .and_then(|value| value.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        Self {
            master: field("role") == Some("master"),
            reads: field("total_reads_processed")
                .and_then(|value| value.parse().ok())
                .unwrap_or(0),
            cpu_us: ((seconds("used_cpu_sys") + seconds("used_cpu_user")) * 1e6).round() as u64,
            commands: CommandStats::parse(info),
        }
    }

    /// The load between `earlier` and `self`, `window` apart, the harness's own
    /// `harness_connections` connections to the node left out.
    pub fn since(
        &self,
        earlier: &NodeReading,
        port: u16,
        window: Duration,
        harness_connections: u64,
    ) -> NodeSecond {
        let seconds = window.as_secs_f64().max(1e-3);
        let per_s = |delta: u64| delta as f64 / seconds;
        let reads = self
            .reads
            .saturating_sub(earlier.reads)
            .saturating_sub(READS_PER_HARNESS_CONNECTION * harness_connections);
        let scripts = self.commands.calls_of("evalsha") + self.commands.calls_of("eval");
        let scripts_before =
            earlier.commands.calls_of("evalsha") + earlier.commands.calls_of("eval");
        NodeSecond {
            port,
            master: self.master,
            reads_per_s: per_s(reads),
            scripts_per_s: per_s(scripts.saturating_sub(scripts_before)),
            cpu_ms_per_s: per_s(self.cpu_us.saturating_sub(earlier.cpu_us)) / 1000.0,
        }
    }
}

/// One node's load over a span of seconds: means per second, and what one script run (one
/// scope's sync) costs it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NodeSummary {
    /// The node's port on 127.0.0.1.
    pub port: u16,
    /// Whether it was a master at the span's last reading.
    pub master: bool,
    /// Seconds it answered in.
    pub seconds: u64,
    /// Reads of the clients' sockets per second: round trips.
    pub reads_per_s: f64,
    /// Round trips per process per sync interval.
    pub reads_per_process_per_interval: f64,
    /// Store scripts run per second: scope syncs.
    pub scripts_per_s: f64,
    /// CPU used, milliseconds per second.
    pub cpu_ms_per_s: f64,
    /// CPU used idle before the phase's clients started, milliseconds per second.
    pub idle_cpu_ms_per_s: Option<f64>,
    /// CPU per script run above the idle CPU, microseconds (`None` without scripts): the node
    /// carries `1e6 / cpu_us_per_script` scope syncs per second on one core.
    pub cpu_us_per_script: Option<f64>,
}

/// Each node's load over `rows` (its readings' means), for `processes` processes syncing every
/// `interval`; `idle` its CPU before the clients started, milliseconds per second.
pub fn summaries(
    rows: &[Row],
    processes: u32,
    interval: Duration,
    idle: &BTreeMap<u16, f64>,
) -> Vec<NodeSummary> {
    let mut by_port: BTreeMap<u16, Vec<NodeSecond>> = BTreeMap::new();
    for row in rows {
        for node in &row.nodes {
            by_port.entry(node.port).or_default().push(*node);
        }
    }
    by_port
        .into_iter()
        .map(|(port, seconds)| {
            let count = seconds.len() as f64;
            let mean = |field: fn(&NodeSecond) -> f64| {
                seconds.iter().map(field).sum::<f64>() / count.max(1.0)
            };
            let (reads, scripts, cpu) = (
                mean(|node| node.reads_per_s),
                mean(|node| node.scripts_per_s),
                mean(|node| node.cpu_ms_per_s),
            );
            let idle = idle.get(&port).copied();
            let working = cpu - idle.unwrap_or(0.0);
            NodeSummary {
                port,
                master: seconds.last().is_some_and(|node| node.master),
                seconds: seconds.len() as u64,
                reads_per_s: reads,
                reads_per_process_per_interval: reads * interval.as_secs_f64()
                    / f64::from(processes.max(1)),
                scripts_per_s: scripts,
                cpu_ms_per_s: cpu,
                idle_cpu_ms_per_s: idle,
                cpu_us_per_script: (scripts > 0.0).then(|| working.max(0.0) * 1000.0 / scripts),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n\
        # Stats\r\ntotal_reads_processed:120\r\n\
        # CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:0.250000\r\n\
        # Commandstats\r\n\
        cmdstat_evalsha:calls=40,usec=900,usec_per_call=22.5,rejected_calls=2,failed_calls=0\r\n\
        cmdstat_eval:calls=3,usec=100,usec_per_call=33.3,rejected_calls=0,failed_calls=0\r\n";

    #[test]
    fn a_nodes_role_reads_cpu_and_scripts_are_read() {
        let reading = NodeReading::parse(INFO);
        assert!(reading.master);
        assert_eq!(reading.reads, 120);
        assert_eq!(reading.cpu_us, 1_750_000);
        let earlier = NodeReading {
            master: true,
            reads: 100,
            cpu_us: 1_700_000,
            commands: CommandStats::parse("cmdstat_evalsha:calls=20,rejected_calls=0\r\n"),
        };
        let second = reading.since(&earlier, 7000, Duration::from_secs(2), 1);
        assert_eq!(
            second.reads_per_s, 9.0,
            "20 reads less the harness's 2, over 2 s"
        );
        assert_eq!(second.scripts_per_s, 12.5, "22 EVALSHA and 3 EVAL over 2 s");
        assert_eq!(second.cpu_ms_per_s, 25.0);
        assert!(!NodeReading::parse("role:slave\r\n").master);
    }

    #[test]
    fn a_nodes_seconds_sum_up_per_second_and_per_script() {
        let second = |reads_per_s, scripts_per_s, cpu_ms_per_s| NodeSecond {
            port: 7000,
            master: true,
            reads_per_s,
            scripts_per_s,
            cpu_ms_per_s,
        };
        let rows: Vec<Row> = [second(8.0, 80.0, 4.0), second(10.0, 120.0, 6.0)]
            .into_iter()
            .map(|node| Row {
                nodes: vec![node],
                ..Row::default()
            })
            .collect();
        let idle = BTreeMap::from([(7000, 1.0)]);
        let [summary] = summaries(&rows, 9, Duration::from_secs(1), &idle)[..] else {
            panic!("one node")
        };
        assert_eq!(summary.reads_per_s, 9.0);
        assert_eq!(summary.reads_per_process_per_interval, 1.0);
        assert_eq!(
            summary.cpu_us_per_script,
            Some(40.0),
            "(5 - 1) ms over 100 scripts"
        );
    }
}
