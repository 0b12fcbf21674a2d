//! The table on standard output: a line per second as each phase runs, then its summary and
//! its fault episodes.

use crate::episode::Episode;
use crate::report::Row;
use crate::summary::Summary;

/// The columns' heading.
pub fn header(phase: &str, processes: u32, rate: f64) -> String {
    format!(
        "\n== phase {phase}: {processes} processes x {rate} calls/s\n\
         {:>4} {:>6} {:>6} {:>8} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8} {:>7} {:>5} {:>7} {:>5}  {}",
        "s",
        "admit",
        "429",
        "attempts",
        "calls",
        "shed",
        "failed",
        "p50 ms",
        "p99 ms",
        "redis/s",
        "evalsha",
        "eval",
        "clients",
        "live",
        "faults"
    )
}

/// One second's line.
pub fn line(row: &Row) -> String {
    let ms = |micros: Option<u64>| {
        micros.map_or("-".to_owned(), |us| format!("{:.2}", us as f64 / 1000.0))
    };
    let (total, evalsha, eval) = match row.redis {
        Some(redis) => {
            let per_s = |count: u64| format!("{:.1}", count as f64 / redis.window_s.max(1) as f64);
            (
                per_s(redis.counts.total),
                per_s(redis.counts.evalsha),
                per_s(redis.counts.eval),
            )
        }
        None => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
    };
    let faults: Vec<&str> = row.faults.iter().map(|fault| fault.name()).collect();
    format!(
        "{:>4} {:>6} {:>6} {:>8} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8} {:>7} {:>5} {:>7} {:>5}  {}",
        row.second,
        row.admitted,
        row.throttled,
        row.attempts,
        row.calls,
        row.shed,
        row.failures,
        ms(row.p50_us),
        ms(row.p99_us),
        total,
        evalsha,
        eval,
        row.clients,
        row.leases_live
            .map_or("-".to_owned(), |live| live.to_string()),
        faults.join(" ")
    )
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
            "; redis {:.2} commands/s (evalsha {:.2}, eval {:.2}, max {:.1}/s), {:.3} per process \
             per sync interval, {} s unanswered",
            redis.total_per_s,
            redis.evalsha_per_s,
            redis.eval_per_s,
            redis.total_max_per_s,
            redis.per_process_per_interval,
            redis.unanswered_s
        ));
    }
    text
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
    format!(
        "{}\n  leases all live: {live}{delta}\n{}",
        summary(&format!("  {} during", episode.name), &episode.during),
        summary("  after", &episode.after)
    )
}
