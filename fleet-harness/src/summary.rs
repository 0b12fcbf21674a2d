//! A phase's figures over a span of its seconds: the admitted rate against the limit, the 429
//! share, the clients' calls, the call latency over every call of the span, and the store's
//! commands per second against the bound fleet mode promises (one per process per sync
//! interval).

use std::time::Duration;

use serde::Serialize;

use crate::percentile::percentile;
use crate::report::Row;

/// The figures of the seconds `[from_s, to_s)`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// The first second counted.
    pub from_s: u64,
    /// The second after the last one counted.
    pub to_s: u64,
    /// Requests admitted per second, on average.
    pub admitted_per_s: f64,
    /// The most requests admitted in one second, over the limit.
    pub admitted_max_1s_ratio: f64,
    /// The most requests admitted per second over any 10 consecutive seconds, over the limit.
    pub admitted_max_10s_ratio: f64,
    /// The most requests sent (admitted and refused) in one second, over the limit.
    pub sent_max_1s_ratio: f64,
    /// The admitted rate over what could be admitted: each second's limit, or the calls
    /// offered in it if fewer, summed over the seconds (issue 25's first goal, as the
    /// simulator's shape sweep counts it).
    pub admitted_of_possible: f64,
    /// The server's 429s over everything it answered.
    pub throttled_share: f64,
    /// The server's 503s over everything it answered.
    pub error_share: f64,
    /// Calls that ended in success.
    pub successes: u64,
    /// Calls that failed after an attempt.
    pub failures: u64,
    /// Calls shed before their first attempt.
    pub shed: u64,
    /// Attempts per second.
    pub attempts_per_s: f64,
    /// Calls that ended per second.
    pub calls_per_s: f64,
    /// Successes over calls.
    pub success_share: f64,
    /// Sheds over calls.
    pub shed_share: f64,
    /// The median call latency (calls that sent an attempt), in milliseconds.
    pub p50_ms: Option<f64>,
    /// The 99th percentile, in milliseconds.
    pub p99_ms: Option<f64>,
    /// The store's commands (fleet mode).
    pub redis: Option<RedisSummary>,
}

/// The store's load over the span.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RedisSummary {
    /// `EVALSHA` per second.
    pub evalsha_per_s: f64,
    /// `EVAL` per second.
    pub eval_per_s: f64,
    /// Commands sent per second (the syncs and the connections' set-up).
    pub sent_per_s: f64,
    /// The most commands sent in one reading's window, per second.
    pub sent_max_per_s: f64,
    /// Commands sent per process per sync interval (at most 1 plus reconnects).
    pub sent_per_process_per_interval: f64,
    /// Every command the store ran per second (the scripts' own included, the harness's
    /// left out).
    pub total_per_s: f64,
    /// Seconds whose store reading did not answer (stopped or down).
    pub unanswered_s: u64,
}

/// What a summary needs besides the rows.
#[derive(Debug, Clone, Copy)]
pub struct SummaryContext {
    /// The server's admitted rate.
    pub limit: f64,
    /// Client processes.
    pub processes: u32,
    /// The fleet's sync interval.
    pub sync_interval: Duration,
    /// Whether the store's figures mean anything (fleet mode).
    pub fleet: bool,
}

impl Summary {
    /// The figures of `rows` (consecutive seconds; empty gives all zeros).
    pub fn of(rows: &[Row], context: SummaryContext) -> Self {
        let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
            return Self::default();
        };
        let seconds = rows.len() as f64;
        let sum = |field: fn(&Row) -> u64| rows.iter().map(field).sum::<u64>() as f64;
        let (admitted, throttled, calls) = (
            sum(|row| row.admitted),
            sum(|row| row.throttled),
            sum(|row| row.calls),
        );
        let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
        let mut latencies: Vec<u64> = rows
            .iter()
            .flat_map(|row| row.latencies_us.iter().copied())
            .collect();
        let ms = |micros: Option<u64>| micros.map(|us| us as f64 / 1000.0);
        let p50_ms = ms(percentile(&mut latencies, 50.0));
        let max_1s = rows.iter().map(|row| row.admitted).max().unwrap_or(0) as f64;
        let sent_max_1s = rows
            .iter()
            .map(|row| row.admitted + row.throttled)
            .max()
            .unwrap_or(0) as f64;
        let total = |field: fn(&Row) -> u64| rows.iter().map(field).sum::<u64>();
        // Each second could admit the limit or the calls offered in it, if fewer (the
        // simulator's sum): a second without calls has no limit to use.
        let possible = rows
            .iter()
            .map(|row| (row.calls as f64).min(context.limit))
            .sum::<f64>()
            / seconds;
        let max_10s = rows
            .windows(10.min(rows.len()))
            .map(|window| window.iter().map(|row| row.admitted).sum::<u64>() as f64)
            .fold(0.0, f64::max)
            / 10.0_f64.min(seconds);
        Self {
            from_s: first.second,
            to_s: last.second + 1,
            admitted_per_s: admitted / seconds,
            admitted_max_1s_ratio: max_1s / context.limit,
            admitted_max_10s_ratio: max_10s / context.limit,
            sent_max_1s_ratio: sent_max_1s / context.limit,
            admitted_of_possible: share(admitted / seconds, possible),
            throttled_share: share(throttled, admitted + throttled),
            error_share: share(sum(|row| row.errors), admitted + throttled),
            successes: total(|row| row.successes),
            failures: total(|row| row.failures),
            shed: total(|row| row.shed),
            attempts_per_s: sum(|row| row.attempts) / seconds,
            calls_per_s: calls / seconds,
            success_share: share(sum(|row| row.successes), calls),
            shed_share: share(sum(|row| row.shed), calls),
            p50_ms,
            p99_ms: ms(percentile(&mut latencies, 99.0)),
            redis: context.fleet.then(|| RedisSummary::of(rows, context)),
        }
    }
}

impl RedisSummary {
    fn of(rows: &[Row], context: SummaryContext) -> Self {
        let readings: Vec<_> = rows.iter().filter_map(|row| row.redis).collect();
        let window: u64 = readings.iter().map(|reading| reading.window_s).sum();
        let per_s = |field: fn(&crate::command_stats::CommandCounts) -> u64| {
            let count: u64 = readings.iter().map(|reading| field(&reading.counts)).sum();
            if window > 0 {
                count as f64 / window as f64
            } else {
                0.0
            }
        };
        let sent_per_s = per_s(|counts| counts.sent);
        Self {
            evalsha_per_s: per_s(|counts| counts.evalsha),
            eval_per_s: per_s(|counts| counts.eval),
            sent_per_s,
            sent_max_per_s: readings
                .iter()
                .map(|reading| reading.counts.sent as f64 / reading.window_s.max(1) as f64)
                .fold(0.0, f64::max),
            sent_per_process_per_interval: sent_per_s * context.sync_interval.as_secs_f64()
                / f64::from(context.processes.max(1)),
            total_per_s: per_s(|counts| counts.total),
            unanswered_s: rows.len() as u64 - readings.len() as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command_stats::CommandCounts;
    use crate::report::RedisSecond;

    fn context() -> SummaryContext {
        SummaryContext {
            limit: 500.0,
            processes: 8,
            sync_interval: Duration::from_millis(500),
            fleet: true,
        }
    }

    fn row(second: u64, admitted: u64, throttled: u64, redis: Option<u64>) -> Row {
        Row {
            second,
            admitted,
            throttled,
            calls: admitted,
            successes: admitted,
            latencies_us: if second == 0 {
                (1..=100).map(|us| us * 10).collect()
            } else {
                Vec::new()
            },
            redis: redis.map(|total| RedisSecond {
                window_s: if second == 3 { 2 } else { 1 },
                counts: CommandCounts {
                    evalsha: total,
                    eval: 0,
                    sent: total,
                    total: total * 8,
                },
            }),
            ..Row::default()
        }
    }

    #[test]
    fn rates_shares_and_ratios_over_the_span() {
        let rows = [
            row(0, 500, 100, Some(16)),
            row(1, 550, 50, Some(16)),
            row(2, 450, 150, None),
            row(3, 500, 100, Some(32)),
        ];
        let summary = Summary::of(&rows, context());
        assert_eq!((summary.from_s, summary.to_s), (0, 4));
        assert_eq!(summary.admitted_per_s, 500.0);
        assert_eq!(summary.admitted_max_1s_ratio, 1.1);
        assert_eq!(summary.admitted_max_10s_ratio, 1.0);
        assert_eq!(summary.throttled_share, 400.0 / 2400.0);
        assert_eq!(summary.sent_max_1s_ratio, 1.2);
        // 2,000 admitted of min(calls, 500) summed over the seconds: 500 + 500 + 450 + 500.
        assert_eq!(summary.admitted_of_possible, 2000.0 / 1950.0);
        assert_eq!((summary.successes, summary.failures), (2000, 0));
        assert_eq!(summary.p50_ms, Some(0.5));
        let redis = summary.redis.expect("fleet mode");
        // 64 commands over 4 seconds of readings (the last one's window is 2 s).
        assert_eq!((redis.sent_per_s, redis.total_per_s), (16.0, 128.0));
        assert_eq!(redis.sent_per_process_per_interval, 1.0);
        assert_eq!((redis.sent_max_per_s, redis.unanswered_s), (16.0, 1));
    }

    #[test]
    fn what_could_be_admitted_is_summed_second_by_second() {
        // Bursts: 1,000 calls in one second, none in the next. The server could admit its
        // limit in the first second and nothing in the second, as the simulator counts it:
        // the limit each second is not there to be used when no call comes.
        let burst = |second, calls, admitted| Row {
            calls,
            ..row(second, admitted, 0, None)
        };
        let rows = [
            burst(0, 1_000, 500),
            burst(1, 0, 0),
            burst(2, 1_000, 500),
            burst(3, 0, 0),
        ];
        let summary = Summary::of(&rows, context());
        assert_eq!(summary.admitted_per_s, 250.0);
        assert_eq!(summary.admitted_of_possible, 1.0);
    }

    #[test]
    fn no_rows_no_figures() {
        assert_eq!(Summary::of(&[], context()), Summary::default());
    }
}
