//! Every run's figures, one per line (`runs.csv`), and the paired comparison of two runs of the
//! simulator over the same seeds (`--paired-with`): the difference seed by seed, averaged, with
//! its 95 % confidence interval.
//!
//! The simulation is deterministic: two builds run over the same seeds meet the very same
//! arrivals, so a change's effect shows in the differences seed by seed, whose spread is far
//! smaller than that of either build's figures (`docs/sim/README.md` has an example).

use std::fmt::Write as _;

use crate::metrics::RunMetrics;
use crate::runner::ScenarioResult;
use crate::scenario::Scenario;
use crate::stats::Summary;

/// A figure of a run: its name in `runs.csv` (the [`RunMetrics`] field's) and its value.
struct Figure {
    key: &'static str,
    value: fn(&RunMetrics) -> f64,
}

/// The figures `runs.csv` holds: every number of [`RunMetrics`], in its order (a test reads
/// the struct's fields from its `Debug` form and fails on one missing here; the two
/// `*_censored` flags are not numbers: a censored figure is the time left).
const FIGURES: [Figure; 27] = [
    Figure {
        key: "amplification",
        value: |m| m.amplification,
    },
    Figure {
        key: "amplification_late",
        value: |m| m.amplification_late,
    },
    Figure {
        key: "amplification_run",
        value: |m| m.amplification_run,
    },
    Figure {
        key: "goodput",
        value: |m| m.goodput,
    },
    Figure {
        key: "goodput_normalized",
        value: |m| m.goodput_normalized,
    },
    Figure {
        key: "success_rate",
        value: |m| m.success_rate,
    },
    Figure {
        key: "success_rate_run",
        value: |m| m.success_rate_run,
    },
    Figure {
        key: "wasted_work",
        value: |m| m.wasted_work,
    },
    Figure {
        key: "r95",
        value: |m| m.r95,
    },
    Figure {
        key: "t90",
        value: |m| m.t90,
    },
    Figure {
        key: "p99_latency_ms",
        value: |m| m.p99_latency_ms,
    },
    Figure {
        key: "p50_ms",
        value: |m| m.p50_ms,
    },
    Figure {
        key: "p99_ms",
        value: |m| m.p99_ms,
    },
    Figure {
        key: "p999_ms",
        value: |m| m.p999_ms,
    },
    Figure {
        key: "hedges",
        value: |m| m.hedges,
    },
    Figure {
        key: "hedges_refused",
        value: |m| m.hedges_refused,
    },
    Figure {
        key: "hedges_won",
        value: |m| m.hedges_won,
    },
    Figure {
        key: "retry_after_violations",
        value: |m| m.retry_after_violations,
    },
    Figure {
        key: "share_429",
        value: |m| m.share_429,
    },
    Figure {
        key: "admitted_1s",
        value: |m| m.admitted_1s,
    },
    Figure {
        key: "admitted_10s",
        value: |m| m.admitted_10s,
    },
    Figure {
        key: "store_commands",
        value: |m| m.store_commands,
    },
    Figure {
        key: "fleet_recovery",
        value: |m| m.fleet_recovery,
    },
    Figure {
        key: "peak_to_mean",
        value: |m| m.peak_to_mean,
    },
    Figure {
        key: "jain",
        value: |m| m.jain,
    },
    Figure {
        key: "local_rejections",
        value: |m| m.local_rejections,
    },
    Figure {
        key: "deadline_cancels",
        value: |m| m.deadline_cancels,
    },
];

/// The columns of `runs.csv` before the figures.
const RUN_COLUMNS: [&str; 4] = ["scenario", "variant", "strategy", "seed"];

/// One line of `runs.csv`: which run, and its figures in the file's column order.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    /// The scenario's id (`ff`, `s1`, ...).
    pub scenario: String,
    /// The variant's name.
    pub variant: String,
    /// The strategy's name.
    pub strategy: String,
    /// The run's seed (the first is 1).
    pub seed: u64,
    /// The figures, NaN where undefined.
    pub figures: Vec<f64>,
}

/// Every run of `results`, one per line: scenario, variant, strategy, seed, then each figure
/// of [`RunMetrics`] (NaN where undefined).
///
/// ```
/// use retry_sim::runs::{csv, parse};
/// let text = csv(&[]);
/// assert!(text.starts_with("scenario,variant,strategy,seed,amplification,"));
/// assert_eq!(parse(&text).unwrap(), vec![]);
/// ```
pub fn csv(results: &[ScenarioResult]) -> String {
    let mut out = RUN_COLUMNS.join(",");
    for figure in &FIGURES {
        let _ = write!(out, ",{}", figure.key);
    }
    out.push('\n');
    for row in rows(results) {
        let _ = write!(
            out,
            "{},{},{},{}",
            quoted(&row.scenario),
            quoted(&row.variant),
            quoted(&row.strategy),
            row.seed
        );
        for value in &row.figures {
            let _ = write!(out, ",{value}");
        }
        out.push('\n');
    }
    out
}

/// The runs of `results`, in their order (scenario, variant, strategy, seed).
fn rows(results: &[ScenarioResult]) -> Vec<RunRow> {
    let mut rows = Vec::new();
    for result in results {
        let scenario = &result.scenario;
        for (variant, cells) in scenario.variants.iter().zip(&result.cells) {
            for (strategy, cell) in scenario.strategies.iter().zip(cells) {
                for (seed, metrics) in (1..).zip(&cell.metrics) {
                    rows.push(RunRow {
                        scenario: scenario.id.clone(),
                        variant: variant.name.clone(),
                        strategy: strategy.name.clone(),
                        seed,
                        figures: FIGURES.iter().map(|f| (f.value)(metrics)).collect(),
                    });
                }
            }
        }
    }
    rows
}

/// A name in double quotes, its own double quotes made single.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "'"))
}

/// The runs of a `runs.csv` this simulator wrote; an error names the line and what is wrong
/// (a header from another version of the simulator is one).
///
/// ```
/// use retry_sim::runs::parse;
/// let err = parse("scenario,variant\n").unwrap_err();
/// assert!(err.contains("header"), "{err}");
/// ```
pub fn parse(text: &str) -> Result<Vec<RunRow>, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let expected = csv(&[]);
    match lines.next() {
        Some((_, header)) if header == expected.trim_end() => {}
        _ => {
            return Err(format!(
                "not a runs.csv of this simulator: its header is not `{}`",
                expected.trim_end()
            ));
        }
    }
    lines
        .map(|(i, line)| parse_row(line).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

fn parse_row(line: &str) -> Result<RunRow, String> {
    let mut rest = line;
    let scenario = take_quoted(&mut rest, "scenario")?;
    let variant = take_quoted(&mut rest, "variant")?;
    let strategy = take_quoted(&mut rest, "strategy")?;
    let fields: Vec<&str> = rest.split(',').collect();
    if fields.len() != 1 + FIGURES.len() {
        return Err(format!(
            "{} fields after the strategy, not {}",
            fields.len(),
            1 + FIGURES.len()
        ));
    }
    let seed = fields[0]
        .parse()
        .map_err(|e| format!("seed {:?}: {e}", fields[0]))?;
    let figures = FIGURES
        .iter()
        .zip(&fields[1..])
        .map(|(figure, text)| {
            text.parse::<f64>()
                .map_err(|e| format!("{} {text:?}: {e}", figure.key))
        })
        .collect::<Result<_, _>>()?;
    Ok(RunRow {
        scenario,
        variant,
        strategy,
        seed,
        figures,
    })
}

/// The quoted name `rest` starts with, and its comma; `rest` moves past them.
fn take_quoted(rest: &mut &str, column: &str) -> Result<String, String> {
    let inner = rest
        .strip_prefix('"')
        .ok_or_else(|| format!("no quoted {column}"))?;
    let (name, after) = inner
        .split_once("\",")
        .ok_or_else(|| format!("the {column} is not closed"))?;
    *rest = after;
    Ok(name.to_owned())
}

/// Whether `earlier` holds a run of `scenarios` (the same scenario, variant, strategy and
/// seed), to pair with before running them; [`paired_markdown`] pairs what it finds.
pub fn pairs_with(scenarios: &[Scenario], earlier: &[RunRow]) -> bool {
    earlier.iter().any(|row| {
        scenarios.iter().any(|scenario| {
            scenario.id == row.scenario
                && scenario.variants.iter().any(|v| v.name == row.variant)
                && scenario.strategies.iter().any(|k| k.name == row.strategy)
                && (1..=u64::from(scenario.seeds)).contains(&row.seed)
        })
    })
}

/// The paired comparison of `results` with `earlier` (the runs of an earlier `runs.csv`): for
/// each scenario variant and strategy in both, each figure of this run, of the earlier one,
/// and their difference seed by seed (this run's less the earlier's), averaged, with its 95 %
/// confidence interval, over the seeds both ran. Figures equal on every seed are left out (a
/// cell with none says so). An error when no run of `earlier` matches one of `results`.
pub fn paired_markdown(results: &[ScenarioResult], earlier: &[RunRow]) -> Result<String, String> {
    let now = rows(results);
    let mut out = String::from(
        "# Paired with an earlier run\n\nEach figure's mean over the seeds both runs made, \
         and the mean of the differences seed by seed (this run's less the earlier's) ± the \
         half-width of its 95 % confidence interval; figures equal on every seed are left \
         out.\n",
    );
    let mut matched = 0;
    for cell in now.chunk_by(same_cell) {
        let pairs: Vec<(&RunRow, &RunRow)> = cell
            .iter()
            .filter_map(|row| {
                earlier
                    .iter()
                    .find(|e| same_cell(e, row) && e.seed == row.seed)
                    .map(|e| (row, e))
            })
            .collect();
        if !pairs.is_empty() {
            matched += pairs.len();
            cell_table(&mut out, &pairs);
        }
    }
    if matched == 0 {
        return Err(
            "no run of the earlier runs.csv has this run's scenario, variant, strategy and seed"
                .to_owned(),
        );
    }
    Ok(out)
}

fn same_cell(a: &RunRow, b: &RunRow) -> bool {
    a.scenario == b.scenario && a.variant == b.variant && a.strategy == b.strategy
}

/// The table of one scenario variant and strategy, over its paired seeds; a line saying so
/// when every figure is the same on every seed (the change did not reach these runs).
fn cell_table(out: &mut String, pairs: &[(&RunRow, &RunRow)]) {
    let (first, _) = pairs[0];
    let _ = write!(
        out,
        "\n## {} — {} — {} ({} seeds)\n\n",
        first.scenario,
        first.variant,
        first.strategy,
        pairs.len()
    );
    let mut rows = String::new();
    for (i, figure) in FIGURES.iter().enumerate() {
        let now: Vec<f64> = pairs.iter().map(|(n, _)| n.figures[i]).collect();
        let then: Vec<f64> = pairs.iter().map(|(_, e)| e.figures[i]).collect();
        let differences: Vec<f64> = now.iter().zip(&then).map(|(n, e)| n - e).collect();
        if differences.iter().all(|d| *d == 0.0 || d.is_nan()) {
            continue;
        }
        let _ = writeln!(
            rows,
            "| {} | {:.4} | {:.4} | {} |",
            figure.key,
            Summary::of(&now).mean,
            Summary::of(&then).mean,
            signed(Summary::of(&differences))
        );
    }
    if rows.is_empty() {
        out.push_str("Every figure the same on every seed.\n");
    } else {
        out.push_str("| figure | this run | earlier | difference |\n|---|---:|---:|---:|\n");
        out.push_str(&rows);
    }
}

/// `+m ± h` (or `-m ± h`) to four decimals.
fn signed(summary: Summary) -> String {
    format!("{:+.4} ± {:.4}", summary.mean, summary.half_width)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::Cell;
    use crate::scenario::{Options, builtin};

    fn result(peaks: &[f64]) -> ScenarioResult {
        let mut scenario = builtin("s1", &Options::default()).unwrap();
        scenario.variants.truncate(1);
        scenario.strategies.truncate(1);
        let metrics = peaks
            .iter()
            .map(|&admitted_1s| RunMetrics {
                admitted_1s,
                r95: f64::NAN,
                ..RunMetrics::default()
            })
            .collect();
        ScenarioResult {
            scenario,
            cells: vec![vec![Cell {
                metrics,
                attempts: Vec::new(),
                successes: Vec::new(),
            }]],
        }
    }

    fn column(key: &str) -> usize {
        FIGURES.iter().position(|f| f.key == key).unwrap()
    }

    #[test]
    fn runs_csv_reads_back_every_run() {
        let rows = parse(&csv(&[result(&[1.05, 1.0625])])).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1].scenario, "s1");
        assert_eq!(rows[1].seed, 2);
        assert_eq!(rows[1].figures[column("admitted_1s")], 1.0625);
        assert!(rows[1].figures[column("r95")].is_nan());
    }

    #[test]
    fn every_number_of_run_metrics_is_a_figure() {
        let debug = format!("{:?}", RunMetrics::default());
        let fields = debug
            .strip_prefix("RunMetrics { ")
            .and_then(|rest| rest.strip_suffix(" }"))
            .expect("a struct's Debug form");
        let numbers: Vec<&str> = fields
            .split(", ")
            .filter_map(|field| field.split_once(": "))
            .filter(|(_, value)| value.parse::<f64>().is_ok())
            .map(|(name, _)| name)
            .collect();
        let keys: Vec<&str> = FIGURES.iter().map(|figure| figure.key).collect();
        assert_eq!(
            numbers, keys,
            "runs.csv's figures are RunMetrics' numbers, in order"
        );
    }

    #[test]
    fn the_paired_difference_is_taken_seed_by_seed() {
        let earlier = parse(&csv(&[result(&[1.00, 1.10, 1.05])])).unwrap();
        let paired = paired_markdown(&[result(&[1.01, 1.11, 1.06])], &earlier).unwrap();
        // The means' intervals overlap widely; the difference is the same on every seed.
        assert!(
            paired.contains("| admitted_1s | 1.0600 | 1.0500 | +0.0100 ± 0.0000 |"),
            "{paired}"
        );
        assert!(
            !paired.contains("| amplification |"),
            "equal on every seed: {paired}"
        );
        let same = paired_markdown(&[result(&[1.00, 1.10, 1.05])], &earlier).unwrap();
        assert!(
            same.contains("Every figure the same on every seed."),
            "{same}"
        );
        assert!(!same.contains("| figure |"), "no empty table: {same}");
    }

    #[test]
    fn runs_of_other_seeds_or_variants_are_an_error() {
        let mut earlier = parse(&csv(&[result(&[1.0])])).unwrap();
        earlier[0].variant = "another".to_owned();
        let err = paired_markdown(&[result(&[1.0])], &earlier).unwrap_err();
        assert!(err.contains("no run of the earlier runs.csv"), "{err}");
        let scenario = result(&[1.0]).scenario;
        assert!(!pairs_with(std::slice::from_ref(&scenario), &earlier));
        earlier[0].variant = scenario.variants[0].name.clone();
        assert!(pairs_with(&[scenario], &earlier));
    }

    #[test]
    fn a_damaged_line_is_named() {
        let text = csv(&[result(&[1.0])]).replace("1,0,", "1,x,");
        let err = parse(&text).unwrap_err();
        assert!(err.starts_with("line 2: amplification \"x\""), "{err}");
        let short = csv(&[result(&[1.0])]).replace(",0,", ",");
        assert!(
            parse(&short)
                .unwrap_err()
                .contains("fields after the strategy")
        );
    }
}
