//! Markdown tables: one per scenario variant, mean ± 95 % CI half-width over the seeds.

use std::fmt::Write as _;

use crate::fault::FaultKind;
use crate::hedge::report as hedge_report;
use crate::metrics::RunMetrics;
use crate::runner::{Cell, ScenarioResult};
use crate::stats::Summary;
use crate::time::SECOND;

/// A column of the standard table.
struct Column {
    header: &'static str,
    decimals: usize,
    value: fn(&RunMetrics) -> f64,
}

const COLUMNS: [Column; 12] = [
    Column {
        header: "amplification",
        decimals: 3,
        value: |m| m.amplification,
    },
    Column {
        header: "ampl. from +10 s",
        decimals: 3,
        value: |m| m.amplification_late,
    },
    Column {
        header: "norm. goodput",
        decimals: 3,
        value: |m| m.goodput_normalized,
    },
    Column {
        header: "success rate",
        decimals: 3,
        value: |m| m.success_rate,
    },
    Column {
        header: "wasted work",
        decimals: 3,
        value: |m| m.wasted_work,
    },
    Column {
        header: "R95 (s)",
        decimals: 2,
        value: |m| m.r95,
    },
    Column {
        header: "T90 (s)",
        decimals: 2,
        value: |m| m.t90,
    },
    Column {
        header: "p99 latency (ms)",
        decimals: 0,
        value: |m| m.p99_latency_ms,
    },
    Column {
        header: "Retry-After violations",
        decimals: 0,
        value: |m| m.retry_after_violations,
    },
    Column {
        header: "429 share",
        decimals: 3,
        value: |m| m.share_429,
    },
    Column {
        header: "peak/mean attempts",
        decimals: 2,
        value: |m| m.peak_to_mean,
    },
    Column {
        header: "Jain",
        decimals: 3,
        value: |m| m.jain,
    },
];

/// The columns of the fleet scenarios' tables: the arms' figures, the store's load and the
/// admitted rate's peaks.
const FLEET_COLUMNS: [Column; 10] = [
    Column {
        header: "amplification",
        decimals: 3,
        value: |m| m.amplification,
    },
    Column {
        header: "norm. goodput",
        decimals: 3,
        value: |m| m.goodput_normalized,
    },
    Column {
        header: "429 share",
        decimals: 4,
        value: |m| m.share_429,
    },
    Column {
        header: "admitted, peak 1 s",
        decimals: 3,
        value: |m| m.admitted_1s,
    },
    Column {
        header: "admitted, peak 10 s",
        decimals: 3,
        value: |m| m.admitted_10s,
    },
    Column {
        header: "store commands/s",
        decimals: 0,
        value: |m| m.store_commands,
    },
    Column {
        header: "fleet back after the store (s)",
        decimals: 2,
        value: |m| m.fleet_recovery,
    },
    Column {
        header: "T90 (s)",
        decimals: 2,
        value: |m| m.t90,
    },
    Column {
        header: "R95 (s)",
        decimals: 2,
        value: |m| m.r95,
    },
    Column {
        header: "p99 latency (ms)",
        decimals: 0,
        value: |m| m.p99_latency_ms,
    },
];

/// Whether a scenario is one of the fleet's (its tables show [`FLEET_COLUMNS`]).
fn is_fleet(result: &ScenarioResult) -> bool {
    result.scenario.id.starts_with('f')
}

/// The summary of one metric of a cell over its seeds.
///
/// ```
/// use retry_sim::{metrics::RunMetrics, report::summarize, runner::Cell};
/// let cell = Cell { metrics: vec![RunMetrics { amplification: 1.0, ..Default::default() }; 3], attempts: vec![], successes: vec![] };
/// assert_eq!(summarize(&cell, |m| m.amplification).mean, 1.0);
/// ```
pub fn summarize(cell: &Cell, metric: fn(&RunMetrics) -> f64) -> Summary {
    let samples: Vec<f64> = cell.metrics.iter().map(metric).collect();
    Summary::of(&samples)
}

/// The markdown section of one scenario.
pub fn scenario_markdown(result: &ScenarioResult) -> String {
    let scenario = &result.scenario;
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n\n{}\n", scenario.title, scenario.description);
    let horizons: Vec<String> = {
        let mut h: Vec<u64> = scenario
            .variants
            .iter()
            .map(|v| v.config.horizon / SECOND)
            .collect();
        h.dedup();
        h.iter().map(|s| format!("{s} s")).collect()
    };
    let _ = writeln!(
        out,
        "{} seeds per cell, {} of arrivals per run; each cell is mean ± half-width of the 95 % \
         confidence interval.\n",
        scenario.seeds,
        horizons.join(" / ")
    );
    for (v, variant) in scenario.variants.iter().enumerate() {
        let _ = writeln!(
            out,
            "### {} — {}\n",
            scenario.id.to_uppercase(),
            variant.name
        );
        // A calibration variant: only background failures, no timed fault.
        let faults = variant.config.faults.faults();
        let calibration = match faults {
            [fault] if fault.start == 0 => match fault.kind {
                FaultKind::Failures { probability } => Some(probability),
                _ => None,
            },
            _ => None,
        };
        match calibration {
            Some(p) => calibration_table(&mut out, result, v, p),
            None if hedge_report::hedges(result) => {
                // H1 has no fault for the standard table's columns to tell apart.
                if scenario.id != "h1" {
                    standard_table(&mut out, result, v);
                    out.push('\n');
                }
                hedge_report::hedge_table(&mut out, result, v);
            }
            None => standard_table(&mut out, result, v),
        }
        out.push('\n');
    }
    out
}

fn standard_table(out: &mut String, result: &ScenarioResult, v: usize) {
    let columns: &[Column] = if is_fleet(result) {
        &FLEET_COLUMNS
    } else {
        &COLUMNS
    };
    let _ = write!(out, "| strategy |");
    for column in columns {
        let _ = write!(out, " {} |", column.header);
    }
    let _ = write!(out, "\n|---|");
    for _ in columns {
        let _ = write!(out, "---:|");
    }
    out.push('\n');
    for (k, strategy) in result.scenario.strategies.iter().enumerate() {
        let cell = &result.cells[v][k];
        let _ = write!(out, "| {} |", strategy.name);
        for column in columns {
            let mut text = summarize(cell, column.value).format(column.decimals);
            let censored = match column.header {
                "R95 (s)" => cell.metrics.iter().any(|m| m.r95_censored),
                "T90 (s)" => cell.metrics.iter().any(|m| m.t90_censored),
                _ => false,
            };
            if censored {
                // Some seed never recovered before the horizon.
                text = format!("≥ {text}");
            }
            let _ = write!(out, " {text} |");
        }
        out.push('\n');
    }
}

/// The analytic attempts per request with failure probability `p` and `n` attempts:
/// `Σ_{k<n} p^k`.
///
/// ```
/// let a = retry_sim::report::analytic_attempts(0.3, 4);
/// assert!((a - 1.417).abs() < 1e-12);
/// ```
pub fn analytic_attempts(p: f64, n: u32) -> f64 {
    (0..n).map(|k| p.powi(k as i32)).sum()
}

fn calibration_table(out: &mut String, result: &ScenarioResult, v: usize, p: f64) {
    let default_attempts = result.scenario.variants[v].config.max_attempts;
    let _ = writeln!(
        out,
        "| strategy | attempts/request (analytic) | attempts/request (measured) | deviation | success (analytic) | success (measured) | p99 latency (ms) |\n|---|---:|---:|---:|---:|---:|---:|"
    );
    for (k, strategy) in result.scenario.strategies.iter().enumerate() {
        let cell = &result.cells[v][k];
        let n = strategy.attempts(default_attempts);
        let analytic = analytic_attempts(p, n);
        let measured = summarize(cell, |m| m.amplification);
        let success = summarize(cell, |m| m.success_rate);
        let _ = writeln!(
            out,
            "| {} | {:.4} | {} | {:+.2} % | {:.4} | {} | {} |",
            strategy.name,
            analytic,
            measured.format(4),
            (measured.mean / analytic - 1.0) * 100.0,
            1.0 - p.powi(n as i32),
            success.format(4),
            summarize(cell, |m| m.p99_latency_ms).format(0),
        );
    }
}

/// The strategies' legend.
pub fn legend_markdown(results: &[ScenarioResult]) -> String {
    let mut out = String::from("| strategy | what it is |\n|---|---|\n");
    let mut seen: Vec<&str> = Vec::new();
    for result in results {
        for strategy in &result.scenario.strategies {
            if !seen.contains(&strategy.name.as_str()) {
                seen.push(&strategy.name);
                let _ = writeln!(out, "| {} | {} |", strategy.name, strategy.describe());
            }
        }
    }
    out
}

/// The whole report: legend, one section per scenario, then `goals` (already rendered).
pub fn full_markdown(results: &[ScenarioResult], header: &str, goals: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# retry-sim results\n\n{header}\n");
    let _ = writeln!(out, "## Strategies\n\n{}", legend_markdown(results));
    let _ = writeln!(out, "{}", METRIC_NOTES);
    if !goals.is_empty() {
        let _ = writeln!(out, "{goals}");
    }
    for result in results {
        out.push_str(&scenario_markdown(result));
    }
    out
}

/// What the columns mean.
pub const METRIC_NOTES: &str = "## Metrics\n\n\
* **amplification**: attempts reaching the server per request arriving, over the fault window \
(sent-time / arrival-time bins); **from +10 s**: the same from 10 s after the fault's start.\n\
* **norm. goodput**: successful requests per second in the window over what the service could \
deliver, `min(offered, capacity in the window)` (the offered load in an outage).\n\
* **success rate**: share of the window's requests that succeeded (within the 5 s deadline).\n\
* **wasted work**: share of worker time in the window spent on attempts whose success no caller \
received (failed attempts, answers after the caller timed out).\n\
* **R95**: seconds after the fault's end until every 1 s window of the next 5 s has a success \
ratio of arriving requests ≥ 95 % of the healthy one (the 60 s before the fault); `≥ x` when some \
seed had not recovered at the horizon (censored).\n\
* **p99 latency**: of the window's successful requests, arrival to success.\n\
* **Retry-After violations**: retries sent before the `Retry-After` of the 429 they follow \
(per run, whole run).\n\
* **429 share**: 429 answers over attempts in the window.\n\
* **peak/mean attempts**: highest 100 ms attempt count over the mean, whole run.\n\
* **Jain**: Jain's index of the clients' success ratios in the window (1 = fair).\n\
\n\
The fleet scenarios' tables (F1, F3, FF, the sweep) show, besides:\n\
\n\
* **admitted, peak 1 s / 10 s**: *admitted* is the rate of attempts the clients let through to \
the server, counted as they reach it, whatever it answers (so throttled attempts count); the \
window from 10 s after the fault's start is cut into consecutive 1 s (10 s) windows, and the \
busiest one's rate is shown over the throttle's limit.\n\
* **store commands/s**: commands sent to the fleet's store per second over the window.\n\
* **fleet back after the store**: seconds from the store's recovery (the end of its fault) \
until every process holds a live lease again from a store whose limiter is engaged as it was \
before the fault.\n";
