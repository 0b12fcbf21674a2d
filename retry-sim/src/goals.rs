//! The goals, checked against the results, with figures (mean ± 95 % CI).

use std::fmt::Write as _;

use crate::fleet::arm::Arm;
use crate::fleet::scenarios::{F1_STRATEGY, F3_STRATEGY};
use crate::metrics::RunMetrics;
use crate::report::{analytic_attempts, summarize};
use crate::runner::{Cell, ScenarioResult};
use crate::scenario::S0_PROBABILITIES;
use crate::stats::Summary;

/// `retry-core`'s default configuration: `RetryConfig::default()`.
pub const DEFAULT: &str = "default";

/// `retry-core`'s strategies among the built-ins.
pub const OURS: [&str; 4] = [DEFAULT, "aws-classic", "aws-2026", "adaptive"];

/// The strategies whose S1 amplification is checked against the goals (`aws-2026` has the
/// default's costs and backoff, with a fixed quota).
const S1_AMPLIFICATION: [&str; 2] = [DEFAULT, "aws-2026"];

/// The strategies held to S1's and S3's R95 ≤ 2 s (adaptive: ≤ 10 s).
const R95_2S: [&str; 3] = [DEFAULT, "aws-classic", "aws-2026"];

/// S0's tolerance: attempts per request within 1 % of the analytic value.
pub const S0_TOLERANCE: f64 = 0.01;

/// S0 checks a strategy that retries only at failure probabilities where retries change the
/// answer by well over [`S0_TOLERANCE`]: one retry adds `p` attempts per request, so below
/// `p` = 3 % a strategy that never retries would land within 1 % of the analytic value too
/// (at `p` = 0.01 and 3 attempts, 1.0000 against 1.0101). Likewise `none` (1 attempt) is
/// checked only where a retry would show.
pub const S0_MIN_PROBABILITY: f64 = 3.0 * S0_TOLERANCE;

/// Whether S0 at failure probability `p` tells retrying from not retrying (see
/// [`S0_MIN_PROBABILITY`]).
pub fn s0_discriminates(p: f64) -> bool {
    p >= S0_MIN_PROBABILITY
}

/// One checked goal.
#[derive(Debug, Clone, PartialEq)]
pub struct GoalRow {
    /// What is checked.
    pub goal: String,
    /// Where: scenario and variant.
    pub scope: String,
    /// Which strategy.
    pub strategy: String,
    /// The figure.
    pub measured: Summary,
    /// Decimals to show.
    pub decimals: usize,
    /// The target, as text.
    pub target: String,
    /// Whether the mean meets the target.
    pub met: bool,
}

fn cell<'a>(
    results: &'a [ScenarioResult],
    id: &str,
    variant: &str,
    strategy: &str,
) -> Option<&'a Cell> {
    let result = results.iter().find(|r| r.scenario.id == id)?;
    let v = result
        .scenario
        .variants
        .iter()
        .position(|x| x.name == variant)?;
    let k = result
        .scenario
        .strategies
        .iter()
        .position(|x| x.name == strategy)?;
    result.cells.get(v)?.get(k)
}

fn variants(results: &[ScenarioResult], id: &str) -> Vec<String> {
    results
        .iter()
        .find(|r| r.scenario.id == id)
        .map(|r| r.scenario.variants.iter().map(|v| v.name.clone()).collect())
        .unwrap_or_default()
}

struct Check<'a> {
    results: &'a [ScenarioResult],
    rows: Vec<GoalRow>,
}

impl Check<'_> {
    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        goal: &str,
        id: &str,
        variant: &str,
        strategy: &str,
        metric: fn(&RunMetrics) -> f64,
        decimals: usize,
        target: &str,
        pass: impl Fn(f64) -> bool,
    ) {
        if let Some(cell) = cell(self.results, id, variant, strategy) {
            let measured = summarize(cell, metric);
            self.rows.push(GoalRow {
                goal: goal.to_owned(),
                scope: format!("{} {}", id.to_uppercase(), variant),
                strategy: strategy.to_owned(),
                measured,
                decimals,
                target: target.to_owned(),
                met: pass(measured.mean),
            });
        }
    }
}

/// Checks every goal whose scenario is in `results`.
pub fn check(results: &[ScenarioResult]) -> Vec<GoalRow> {
    let mut c = Check {
        results,
        rows: Vec::new(),
    };
    // S0: the simulator counts attempts like the analytic model, where no budget binds.
    if let Some(result) = results.iter().find(|r| r.scenario.id == "s0") {
        for (v, variant) in result.scenario.variants.iter().enumerate() {
            let p = S0_PROBABILITIES.get(v).copied().unwrap_or(f64::NAN);
            for (k, strategy) in result.scenario.strategies.iter().enumerate() {
                let unbudgeted =
                    matches!(strategy.name.as_str(), "none" | "fixed" | "fixed-backoff");
                let quota_not_binding = match strategy.name.as_str() {
                    "aws-classic" | "adaptive" => p <= 0.3,
                    // The default's quota is sized by S0's 2 calls/s (120 tokens per client)
                    // and drains only through calls that fail all 4 attempts (a success gives
                    // back every retry): 2/s × p^4 × 42 tokens against 2/s × (1 − p) of
                    // rewards, so it binds from p = 0.5 (at p = 0.3: 0.68/s against 1.4/s).
                    DEFAULT => p <= 0.3,
                    "aws-2026" => p <= 0.1,
                    _ => false,
                };
                if !(unbudgeted || quota_not_binding) || !s0_discriminates(p) {
                    continue;
                }
                let n = strategy.attempts(variant.config.max_attempts);
                let analytic = analytic_attempts(p, n);
                let samples: Vec<f64> = result.cells[v][k]
                    .metrics
                    .iter()
                    .map(|m| (m.amplification / analytic - 1.0) * 100.0)
                    .collect();
                let measured = Summary::of(&samples);
                c.rows.push(GoalRow {
                    goal: format!("S0 attempts/request = analytic {analytic:.4} within 1 %"),
                    scope: format!("S0 {}", variant.name),
                    strategy: strategy.name.clone(),
                    measured,
                    decimals: 2,
                    target: "|deviation| ≤ 1 %".to_owned(),
                    met: measured.mean.abs() <= S0_TOLERANCE * 100.0,
                });
            }
        }
    }
    for variant in variants(results, "s1") {
        for strategy in S1_AMPLIFICATION {
            c.add(
                "S1 amplification over the outage",
                "s1",
                &variant,
                strategy,
                |m| m.amplification,
                3,
                "≤ 1.11",
                |x| x <= 1.11,
            );
            c.add(
                "S1 amplification from 10 s after the start",
                "s1",
                &variant,
                strategy,
                |m| m.amplification_late,
                3,
                "≤ 1.02",
                |x| x <= 1.02,
            );
        }
        for strategy in R95_2S {
            c.add(
                "R95 after the outage",
                "s1",
                &variant,
                strategy,
                |m| m.r95,
                2,
                "≤ 2 s",
                |x| x <= 2.0,
            );
        }
        c.add(
            "R95 after the outage",
            "s1",
            &variant,
            "adaptive",
            |m| m.r95,
            2,
            "≤ 10 s",
            |x| x <= 10.0,
        );
    }
    for variant in variants(results, "s3") {
        for strategy in OURS {
            c.add(
                "S3 Retry-After violations",
                "s3",
                &variant,
                strategy,
                |m| m.retry_after_violations,
                0,
                "0",
                |x| x == 0.0,
            );
            c.add(
                "S3 429 share",
                "s3",
                &variant,
                strategy,
                |m| m.share_429,
                3,
                "≤ 0.05",
                |x| x <= 0.05,
            );
            c.add(
                "S3 goodput / 500/s limit",
                "s3",
                &variant,
                strategy,
                |m| m.goodput_normalized,
                3,
                "≥ 0.95",
                |x| x >= 0.95,
            );
        }
        for strategy in R95_2S {
            c.add(
                "R95 after throttling",
                "s3",
                &variant,
                strategy,
                |m| m.r95,
                2,
                "≤ 2 s",
                |x| x <= 2.0,
            );
        }
        c.add(
            "R95 after throttling",
            "s3",
            &variant,
            "adaptive",
            |m| m.r95,
            2,
            "≤ 10 s",
            |x| x <= 10.0,
        );
    }
    let s4 = variants(results, "s4");
    if let Some(first) = s4.first() {
        let names: Vec<String> = results
            .iter()
            .find(|r| r.scenario.id == "s4")
            .map(|r| {
                r.scenario
                    .strategies
                    .iter()
                    .map(|s| s.name.clone())
                    .collect()
            })
            .unwrap_or_default();
        let ours = |name: &str| OURS.contains(&name) || crate::strategy::EXTRA.contains(&name);
        for strategy in names.iter().filter(|name| ours(name)) {
            let figures: Option<Vec<(&String, Summary)>> = s4
                .iter()
                .map(|variant| {
                    cell(results, "s4", variant, strategy)
                        .map(|cell| (variant, summarize(cell, |m| m.amplification)))
                })
                .collect();
            let Some(figures) = figures else {
                continue;
            };
            let low = figures[0].1;
            // The most clients make relative to the fewest.
            let (worst, high) = figures
                .iter()
                .skip(1)
                .max_by(|a, b| a.1.mean.total_cmp(&b.1.mean))
                .map_or((first, low), |(variant, summary)| (*variant, *summary));
            let growth = Summary {
                mean: high.mean / low.mean,
                half_width: f64::NAN,
                n: 0,
            };
            let listed: Vec<String> = figures
                .iter()
                .map(|(variant, summary)| format!("{variant}: {}", summary.format(3)))
                .collect();
            c.rows.push(GoalRow {
                goal: format!(
                    "S4 amplification does not grow with clients ({})",
                    listed.join(", ")
                ),
                scope: "S4 outage".to_owned(),
                strategy: strategy.clone(),
                measured: growth,
                decimals: 3,
                target: format!("ratio {worst} / {first} ≤ 1.02"),
                met: growth.mean <= 1.02,
            });
        }
    }
    fleet_goals(&mut c);
    c.rows.extend(crate::hedge::goals::check(results));
    c.rows
}

/// The name of `base`'s fleet-mode arm in the fleet scenarios.
fn on_fleet(base: &str) -> String {
    format!("{base}+fleet")
}

/// The most attempts fleet mode may send in one second, over the limit: issue 25's bound on
/// every shape of its sweep ("sent in any second ≤ 1.10× the limit"), which replaced issue
/// 17's 1.06 for F3 and FF. Issue 25 names that bound as the one the rules were fitted to, one
/// shape checked on its busiest second, which pushed the fleet under the limit; its goals
/// "replace that one". F3's busiest ten seconds stay held to 1.02.
pub const FLEET_BUSIEST_SECOND: f64 = 1.10;

/// Fleet mode's goals (issue 17, the busiest second issue 25's): S3's throttling over 1000
/// processes held to the limit with few 429s; S1's amplification flat from 10 to 10,000
/// processes; the store's faults no worse in a second than [`FLEET_BUSIEST_SECOND`], the
/// fleet back within two sync intervals.
fn fleet_goals(c: &mut Check<'_>) {
    let f3 = on_fleet(F3_STRATEGY);
    for variant in variants(c.results, "f3") {
        c.add(
            "F3 429 share",
            "f3",
            &variant,
            &f3,
            |m| m.share_429,
            4,
            "≤ 0.01",
            |x| x <= 0.01,
        );
        c.add(
            "F3 goodput / 500/s limit",
            "f3",
            &variant,
            &f3,
            |m| m.goodput_normalized,
            3,
            "≥ 0.95",
            |x| x >= 0.95,
        );
        c.add(
            "F3 admitted, peak 10 s / limit",
            "f3",
            &variant,
            &f3,
            |m| m.admitted_10s,
            3,
            "≤ 1.02",
            |x| x <= 1.02,
        );
        c.add(
            "F3 admitted, peak 1 s / limit",
            "f3",
            &variant,
            &f3,
            |m| m.admitted_1s,
            3,
            &format!("≤ {FLEET_BUSIEST_SECOND:.2}"),
            |x| x <= FLEET_BUSIEST_SECOND,
        );
    }
    let f1 = on_fleet(F1_STRATEGY);
    for variant in variants(c.results, "f1") {
        c.add(
            "F1 amplification over the outage",
            "f1",
            &variant,
            &f1,
            |m| m.amplification,
            3,
            "≤ 1.10",
            |x| x <= 1.10,
        );
    }
    let two_intervals = fleet_interval_s(c.results, "ff", &f3).map(|interval| 2.0 * interval);
    for variant in variants(c.results, "ff") {
        c.add(
            "FF admitted, peak 1 s / limit (the store's fault within)",
            "ff",
            &variant,
            &f3,
            |m| m.admitted_1s,
            3,
            &format!("≤ {FLEET_BUSIEST_SECOND:.2}"),
            |x| x <= FLEET_BUSIEST_SECOND,
        );
        if let (Some(limit), true) = (two_intervals, variant.starts_with("store ")) {
            c.add(
                "FF the fleet back after the store (s)",
                "ff",
                &variant,
                &f3,
                |m| m.fleet_recovery,
                2,
                &format!("≤ {limit} s (two sync intervals)"),
                move |x| x <= limit,
            );
        }
    }
}

/// The sync interval of `strategy`'s fleet arm in scenario `id`, seconds.
fn fleet_interval_s(results: &[ScenarioResult], id: &str, strategy: &str) -> Option<f64> {
    let result = results.iter().find(|r| r.scenario.id == id)?;
    let spec = result
        .scenario
        .strategies
        .iter()
        .find(|spec| spec.name == strategy)?;
    match spec.arm() {
        Arm::Fleet(tuning) => Some(tuning.sync_interval as f64 / crate::time::SECOND as f64),
        _ => None,
    }
}

/// The goals as a markdown section.
pub fn goals_markdown(results: &[ScenarioResult]) -> String {
    let rows = check(results);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "## Goals\n\nMean ± 95 % CI half-width over the seeds; *met* compares the mean with the target (the \
         worst seed's figure where the goal names it).\n\n\
         | goal | where | strategy | measured | target | met |\n|---|---|---|---:|---|---|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            row.goal,
            row.scope,
            row.strategy,
            row.measured.format(row.decimals),
            row.target,
            if row.met { "yes" } else { "**no**" }
        );
    }
    out
}
