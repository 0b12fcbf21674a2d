//! The table on standard output: a line per second as each phase runs, then its summary and
//! its fault episodes.

use crate::episode::Episode;
use crate::node_stats::NodeSummary;
use crate::report::{RedisSecond, Row};
use crate::summary::Summary;

/// The columns: their heading and width.
const COLUMNS: [(&str, usize); 18] = [
    ("s", 4),
    ("admit", 6),
    ("429", 5),
    ("attempts", 8),
    ("calls", 6),
    ("shed", 6),
    ("failed", 6),
    ("p50 ms", 7),
    ("p99 ms", 8),
    ("sent/s", 7),
    ("evalsha", 7),
    ("eval", 5),
    ("total/s", 7),
    ("clients", 7),
    ("live", 4),
    ("fleet/s", 7),
    ("w_max", 7),
    ("sends/s", 7),
];

/// Cells right-aligned to their columns' widths, then the faults.
fn aligned(cells: &[String], faults: &str) -> String {
    let mut line: Vec<String> = COLUMNS
        .iter()
        .zip(cells)
        .map(|((_, width), cell)| format!("{cell:>width$}"))
        .collect();
    line.push(format!(" {faults}"));
    line.join(" ")
}

/// The columns' heading.
pub fn header(phase: &str, processes: u32, rate: f64) -> String {
    let names: Vec<String> = COLUMNS.iter().map(|(name, _)| (*name).to_owned()).collect();
    format!(
        "\n== phase {phase}: {processes} processes x {rate} calls/s\n{}",
        aligned(&names, "faults")
    )
}

/// One second's line.
pub fn line(row: &Row) -> String {
    let dash = || "-".to_owned();
    let ms =
        |micros: Option<u64>| micros.map_or_else(dash, |us| format!("{:.2}", us as f64 / 1000.0));
    let rate = |rate: Option<f64>| rate.map_or_else(dash, |rate| format!("{rate:.1}"));
    let redis = |field: fn(&RedisSecond) -> u64| {
        rate(
            row.redis
                .map(|redis| field(&redis) as f64 / redis.window_s.max(1) as f64),
        )
    };
    let faults: Vec<&str> = row.faults.iter().map(|fault| fault.name()).collect();
    let cells = [
        row.second.to_string(),
        row.admitted.to_string(),
        row.throttled.to_string(),
        row.attempts.to_string(),
        row.calls.to_string(),
        row.shed.to_string(),
        row.failures.to_string(),
        ms(row.p50_us),
        ms(row.p99_us),
        redis(|r| r.counts.sent),
        redis(|r| r.counts.evalsha),
        redis(|r| r.counts.eval),
        redis(|r| r.counts.total),
        row.clients.to_string(),
        row.leases_live.map_or_else(dash, |live| live.to_string()),
        rate(row.store.map(|view| view.fleet_rate)),
        rate(row.store.map(|view| view.w_max)),
        rate(row.send_rate),
    ];
    aligned(&cells, &faults.join(" "))
}

/// A summary in one line.
pub fn summary(label: &str, summary: &Summary) -> String {
    let ms = |value: Option<f64>| value.map_or("-".to_owned(), |ms| format!("{ms:.2}"));
    let mut text = format!(
        "{label} [{}s, {}s): admitted {:.1}/s (max 1 s {:.3}x, 10 s {:.3}x the limit), 429 share \
         {:.4}, attempts {:.1}/s, calls {:.1}/s (success {:.4}, shed {:.4}), p50 {} ms, p99 {} ms",
        summary.from_s,
        summary.to_s,
        summary.admitted_per_s,
        summary.admitted_max_1s_ratio,
        summary.admitted_max_10s_ratio,
        summary.throttled_share,
        summary.attempts_per_s,
        summary.calls_per_s,
        summary.success_share,
        summary.shed_share,
        ms(summary.p50_ms),
        ms(summary.p99_ms),
    );
    if let Some(redis) = summary.redis {
        text.push_str(&format!(
            "; redis: {:.2} commands sent/s (evalsha {:.2}, eval {:.2}, most {:.1}/s), {:.3} per \
             process per sync interval, {:.1} run/s with the scripts' own, {} s unanswered",
            redis.sent_per_s,
            redis.evalsha_per_s,
            redis.eval_per_s,
            redis.sent_max_per_s,
            redis.sent_per_process_per_interval,
            redis.total_per_s,
            redis.unanswered_s
        ));
    }
    text
}

/// Each store node's load, a line each.
pub fn nodes(nodes: &[NodeSummary]) -> String {
    nodes
        .iter()
        .map(|node| {
            format!(
                "  node {} ({}): {:.2} round trips/s ({:.3} per process per interval), {:.1} \
                 scripts/s, CPU {:.2} ms/s{}",
                node.port,
                if node.master { "master" } else { "replica" },
                node.reads_per_s,
                node.reads_per_process_per_interval,
                node.scripts_per_s,
                node.cpu_ms_per_s,
                node.cpu_us_per_script
                    .map_or(String::new(), |us| format!(", {us:.1} us per script run")),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An episode in two lines.
pub fn episode(episode: &Episode) -> String {
    let delta = episode.p99_delta_ms.map_or(String::new(), |delta| {
        format!(" (p99 {delta:+.2} ms against the fault-free phase)")
    });
    let live = episode
        .leases_live_after_s
        .map_or("not again".to_owned(), |after| {
            format!("{after} s after the recovery's second")
        });
    let live = match (episode.leases_lapsed, episode.leases_live_after_ms) {
        (false, _) => format!("{live} (no lease lapsed)"),
        (true, Some(ms)) => format!("{live}, the last {ms} ms after the recovery"),
        (true, None) => live,
    };
    format!(
        "{}\n  leases all live: {live}{delta}\n{}",
        summary(&format!("  {} during", episode.name), &episode.during),
        summary("  after", &episode.after)
    )
}
