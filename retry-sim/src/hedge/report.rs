//! The hedging table of a scenario variant: latency percentiles, and the requests each arm
//! sends over its reference (the same retries without hedging), paired seed by seed.

use std::fmt::Write as _;

use super::scenarios::reference;
use crate::latency::{TailLatency, ideal_hedging};
use crate::metrics::RunMetrics;
use crate::report::summarize;
use crate::rng::Rng;
use crate::runner::{Cell, ScenarioResult};
use crate::server::ServiceTime;
use crate::stats::Summary;
use crate::time::MILLI;

/// Draws behind the ideal-hedging line of a tail shape.
const IDEAL_DRAWS: usize = 1_000_000;

/// The seed of the ideal-hedging estimates.
const IDEAL_SEED: u64 = 1;

/// Whether a scenario's variants get a hedging table: one of its strategies hedges.
pub fn hedges(result: &ScenarioResult) -> bool {
    result.scenario.strategies.iter().any(|s| s.hedge.is_some())
}

/// The cell of `name`'s reference in variant `v`, if the scenario runs it.
pub fn reference_cell<'a>(result: &'a ScenarioResult, v: usize, name: &str) -> Option<&'a Cell> {
    let wanted = reference(name);
    let k = result
        .scenario
        .strategies
        .iter()
        .position(|s| s.name == wanted)?;
    result.cells.get(v)?.get(k)
}

/// `f(arm, reference)` per seed, summarized: figures paired on the same seed (the same
/// arrivals), NaN without a reference.
pub fn paired(
    cell: &Cell,
    reference: Option<&Cell>,
    f: fn(&RunMetrics, &RunMetrics) -> f64,
) -> Summary {
    match reference {
        Some(reference) => Summary::of(&paired_values(cell, reference, f)),
        None => Summary::of(&[]),
    }
}

/// `f(arm, reference)` per seed: figures paired on the same seed (the same arrivals).
pub fn paired_values(
    cell: &Cell,
    reference: &Cell,
    f: impl Fn(&RunMetrics, &RunMetrics) -> f64,
) -> Vec<f64> {
    cell.metrics
        .iter()
        .zip(&reference.metrics)
        .map(|(arm, reference)| f(arm, reference))
        .collect()
}

/// Extra requests over the reference, in percent: `sent / sent(reference) − 1`.
pub fn extra_requests(arm: &RunMetrics, reference: &RunMetrics) -> f64 {
    (arm.amplification / reference.amplification - 1.0) * 100.0
}

/// How many times shorter p99.9 is than the reference's.
pub fn p999_reduction(arm: &RunMetrics, reference: &RunMetrics) -> f64 {
    reference.p999_ms / arm.p999_ms
}

/// The hedging table of variant `v` (and, for a tail shape, what ideal hedging gives it).
pub fn hedge_table(out: &mut String, result: &ScenarioResult, v: usize) {
    if let ServiceTime::Tail(shape) = result.scenario.variants[v].config.server.service {
        ideal_line(out, &shape);
    }
    let _ = writeln!(
        out,
        "| strategy | p50 (ms) | p99 (ms) | p99.9 (ms) | p99.9 reduction | attempts/request | \
         extra requests | hedges/request | hedges refused/request | answered by a hedge | \
         success rate |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for (k, strategy) in result.scenario.strategies.iter().enumerate() {
        let cell = &result.cells[v][k];
        let base = reference_cell(result, v, &strategy.name).filter(|_| strategy.hedge.is_some());
        let versus = if base.is_some() {
            format!(" (vs {})", reference(&strategy.name))
        } else {
            String::new()
        };
        let extra = paired(cell, base, extra_requests);
        let _ = writeln!(
            out,
            "| {}{versus} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            strategy.name,
            summarize(cell, |m| m.p50_ms).format(1),
            summarize(cell, |m| m.p99_ms).format(1),
            summarize(cell, |m| m.p999_ms).format(1),
            times(paired(cell, base, p999_reduction)),
            summarize(cell, |m| m.amplification).format(4),
            percent(extra),
            summarize(cell, |m| m.hedges).format(4),
            summarize(cell, |m| m.hedges_refused).format(4),
            summarize(cell, |m| m.hedges_won).format(4),
            summarize(cell, |m| m.success_rate).format(4),
        );
    }
}

fn times(summary: Summary) -> String {
    if summary.mean.is_nan() {
        "–".to_owned()
    } else {
        format!("{}×", summary.format(1))
    }
}

fn percent(summary: Summary) -> String {
    if summary.mean.is_nan() {
        "–".to_owned()
    } else {
        format!("{} %", summary.format(2))
    }
}

/// One line: the shape, and what one hedge at its own p95 gives, estimated outside the
/// simulation.
fn ideal_line(out: &mut String, shape: &TailLatency) {
    let (unhedged, hedged, delay) =
        ideal_hedging(shape, 0.95, 0.999, IDEAL_DRAWS, &mut Rng::new(IDEAL_SEED));
    let ms = |n: u64| n as f64 / MILLI as f64;
    let _ = writeln!(
        out,
        "Shape: {shape}. Ideal hedging (one hedge at the shape's own p95, {:.1} ms, no budget, \
         no queueing; {IDEAL_DRAWS} draws): p99.9 {:.1} ms → {:.1} ms ({:.1}×).\n",
        ms(delay),
        ms(unhedged),
        ms(hedged),
        unhedged as f64 / hedged as f64
    );
}
