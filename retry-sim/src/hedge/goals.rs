//! Issue 27's hedging goals, checked against H1, HS1 and HS3 (worst seed where a seed's figure
//! is hedging's own):
//!
//! * H1, every shape: [`TAIL_GOAL_ARM`] (`hedge-p95x2`) cuts p99.9 at least [`P999_REDUCTION`]-fold against the same
//!   strategy without hedging, for at most [`EXTRA_REQUESTS`] % more requests, at its worst
//!   seed (the pair of runs on one seed see the same arrivals);
//! * HS1 and HS3, every variant, every `retry-core` hedging arm: the scenario's figures
//!   (attempts per request; in HS3 also goodput and the 429 share) stay within
//!   [`FAULT_TOLERANCE`] % of the same strategy's without hedging, as the mean over seeds of
//!   the paired ratios; the attempts per request are also held to it at the worst seed (a
//!   seed's run diverges from its unhedged twin as soon as the event sequence differs, a hedge
//!   sent or not, so the worst seed carries that noise too). The hedges sent are not the
//!   figure: in a blackhole every call is due one, and they spend the quota retries would
//!   have spent.

use super::report::{paired_values, reference_cell};
use super::scenarios::{OURS_P95X2, ours};
use crate::goals::GoalRow;
use crate::metrics::RunMetrics;
use crate::runner::ScenarioResult;
use crate::stats::Summary;

/// H1's goal: p99.9 cut at least tenfold.
pub const P999_REDUCTION: f64 = 10.0;

/// H1's goal: at most 5 % more requests at p95.
pub const EXTRA_REQUESTS: f64 = 5.0;

/// The arm H1's goals are checked on: hedging at the p95, up to two hedges a call. With one
/// hedge, a shape whose replicas go through slow periods leaves the calls whose hedge met the
/// same slow replica in the tail: on H1's shape 6, 0.1 % of the calls in a seed with a long
/// slow period, whatever the delay (p99.9 cut 7.2× with every slow call hedged).
pub const TAIL_GOAL_ARM: &str = OURS_P95X2;

/// HS1's and HS3's goal: within 1 % of the figures without hedging.
pub const FAULT_TOLERANCE: f64 = 1.0;

/// The hedging goals of `results` (none when they hold no hedging scenario).
pub fn check(results: &[ScenarioResult]) -> Vec<GoalRow> {
    let mut rows = Vec::new();
    for result in results {
        match result.scenario.id.as_str() {
            "h1" => tail_goals(result, &mut rows),
            "hs1" | "hs3" => fault_goals(result, &mut rows),
            _ => {}
        }
    }
    rows
}

fn tail_goals(result: &ScenarioResult, rows: &mut Vec<GoalRow>) {
    let scenario = &result.scenario;
    let arm = TAIL_GOAL_ARM;
    let Some(k) = scenario.strategies.iter().position(|s| s.name == arm) else {
        return;
    };
    for (v, variant) in scenario.variants.iter().enumerate() {
        let cell = &result.cells[v][k];
        let Some(base) = reference_cell(result, v, arm) else {
            continue;
        };
        let scope = format!("H1 {}", variant.name);
        let reduction = paired_values(cell, base, |arm, base| base.p999_ms / arm.p999_ms);
        let worst = reduction.iter().copied().fold(f64::INFINITY, f64::min);
        rows.push(GoalRow {
            goal: format!(
                "p99.9 reduction vs without hedging, worst of {} seeds",
                reduction.len()
            ),
            scope: scope.clone(),
            strategy: arm.to_owned(),
            measured: Summary::of(&[worst]),
            decimals: 1,
            target: format!("≥ {P999_REDUCTION}×"),
            met: worst >= P999_REDUCTION,
        });
        let extra = paired_values(cell, base, extra_requests);
        let worst = extra.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        rows.push(GoalRow {
            goal: format!("extra requests (%), worst of {} seeds", extra.len()),
            scope,
            strategy: arm.to_owned(),
            measured: Summary::of(&[worst]),
            decimals: 2,
            target: format!("≤ {EXTRA_REQUESTS} %"),
            met: worst <= EXTRA_REQUESTS,
        });
    }
}

/// Extra requests of `arm` over `base`, percent.
fn extra_requests(arm: &RunMetrics, base: &RunMetrics) -> f64 {
    (arm.amplification / base.amplification - 1.0) * 100.0
}

fn fault_goals(result: &ScenarioResult, rows: &mut Vec<GoalRow>) {
    let scenario = &result.scenario;
    let throttled = scenario.id == "hs3";
    for (k, strategy) in scenario.strategies.iter().enumerate() {
        if !matches!(ours(&strategy.name), Some(Ok(_))) {
            continue;
        }
        for (v, variant) in scenario.variants.iter().enumerate() {
            let cell = &result.cells[v][k];
            let Some(base) = reference_cell(result, v, &strategy.name) else {
                continue;
            };
            let scope = format!("{} {}", scenario.id.to_uppercase(), variant.name);
            let extra = paired_values(cell, base, extra_requests);
            let worst = extra.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            rows.push(GoalRow {
                goal: format!("extra requests (%), worst of {} paired seeds", extra.len()),
                scope: scope.clone(),
                strategy: strategy.name.clone(),
                measured: Summary::of(&[worst]),
                decimals: 2,
                target: format!("≤ {FAULT_TOLERANCE} %"),
                met: worst <= FAULT_TOLERANCE,
            });
            let mut within = |figure: &str, f: fn(&RunMetrics) -> f64| {
                let ratios = paired_values(cell, base, move |arm, base| {
                    (f(arm) / f(base) - 1.0) * 100.0
                });
                let measured = Summary::of(&ratios);
                rows.push(GoalRow {
                    goal: format!("{figure} vs without hedging (%), mean of paired seeds"),
                    scope: scope.clone(),
                    strategy: strategy.name.clone(),
                    measured,
                    decimals: 2,
                    target: format!("within ± {FAULT_TOLERANCE} %"),
                    met: measured.mean.abs() <= FAULT_TOLERANCE,
                });
            };
            within("attempts per request", |m| m.amplification);
            if throttled {
                within("goodput", |m| m.goodput_normalized);
                within("429 share", |m| m.share_429);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hedge::scenarios::OURS_P95;
    use crate::runner::Cell;
    use crate::scenario::{Options, builtin};
    use crate::strategy::StrategySpec;

    fn cell(figures: &[(f64, f64, f64)]) -> Cell {
        Cell {
            metrics: figures
                .iter()
                .map(|&(amplification, p999_ms, hedges)| RunMetrics {
                    amplification,
                    p999_ms,
                    hedges,
                    goodput_normalized: 1.0,
                    share_429: 0.5,
                    ..RunMetrics::default()
                })
                .collect(),
            attempts: Vec::new(),
            successes: Vec::new(),
        }
    }

    fn scenario(id: &str, reference: Cell, hedged: Cell) -> ScenarioResult {
        let arm = if id == "h1" { TAIL_GOAL_ARM } else { OURS_P95 };
        let options = Options {
            strategies: ["default", arm]
                .iter()
                .map(|name| StrategySpec::named(name).unwrap())
                .collect(),
            scenario_extras: false,
            ..Options::default()
        };
        let mut scenario = builtin(id, &options).unwrap();
        scenario.variants.truncate(1);
        ScenarioResult {
            scenario,
            cells: vec![vec![reference, hedged]],
        }
    }

    /// H1 is judged at its worst seed: one seed at 6 % more requests fails the goal that the
    /// mean (4 %) would meet, and the smallest reduction is the one reported.
    #[test]
    fn the_tail_goals_take_the_worst_seed() {
        let reference = cell(&[(1.0, 1000.0, 0.0), (1.0, 1000.0, 0.0)]);
        let hedged = cell(&[(1.02, 20.0, 0.02), (1.06, 50.0, 0.06)]);
        let rows = check(&[scenario("h1", reference, hedged)]);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].measured.mean, 20.0);
        assert!(rows[0].met);
        assert!((rows[1].measured.mean - 6.0).abs() < 1e-9);
        assert!(!rows[1].met);
    }

    /// Under a fault the extra requests are judged at the worst seed and by their mean, the
    /// other figures by their mean.
    #[test]
    fn the_fault_goals_take_the_worst_seed_and_the_mean() {
        let reference = cell(&[(1.10, f64::NAN, 0.0), (1.10, f64::NAN, 0.0)]);
        let hedged = cell(&[(1.122, f64::NAN, 0.002), (1.089, f64::NAN, 0.012)]);
        let rows = check(&[scenario("hs3", reference, hedged)]);
        let worst = &rows[0];
        assert!(
            (worst.measured.mean - 2.0).abs() < 1e-9,
            "{}",
            worst.measured.mean
        );
        assert!(!worst.met);
        let attempts = &rows[1];
        assert!(attempts.goal.starts_with("attempts per request"));
        assert!(
            attempts.measured.mean.abs() < 0.51,
            "{}",
            attempts.measured.mean
        );
        assert!(attempts.met);
        assert_eq!(
            rows.len(),
            4,
            "worst, attempts, goodput and 429 share in HS3"
        );
    }
}
