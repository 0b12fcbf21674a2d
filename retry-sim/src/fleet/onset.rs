//! A steady start's onset, which no goal measures: the [`WARM_UP`] seconds after the server's
//! limit starts under a fleet that ran unthrottled (a steady start runs unthrottled for
//! [`STEADY_FOR`]; the goals count from the warm-up's end).
//!
//! In those seconds every arm learns the limit from its first 429s. The busiest second over
//! the limit ([`ArmResult::onset_busiest`](super::sweep::ArmResult::onset_busiest)) says how
//! far each overshoots while it learns. Where fleet mode is busier than local mode by more
//! than a tenth ([`busier_than_local`]), the store's first estimate of the limit paced the
//! fleet (in the traced shapes: measured on traffic sent before the limit started), or local
//! mode's own limiters collapsed (the held-out #839, a bucket of one request: local mode sent
//! 2-26 attempts a second for the 10 s); the trace says which.

use std::fmt::Write as _;

use super::shape::{STEADY_FOR, WARM_UP};
use super::sweep::{ARMS, FLEET, LOCAL, ShapeResult, worst_p5_median};
use crate::goals::FLEET_BUSIEST_SECOND;
use crate::time::SECOND;

/// Fleet mode is *busier than local mode* at the onset when its busiest second is over this
/// times local mode's.
pub const BUSIER_BY: f64 = 1.10;

/// The busiest-second bounds the report counts shapes over (the goals' bound, and two far
/// over it).
const COUNTED_OVER: [f64; 3] = [FLEET_BUSIEST_SECOND, 1.5, 2.0];

/// How many of the shapes where fleet mode is busier than local mode are named.
const NAMED: usize = 8;

/// The steady starts where fleet mode's busiest onset second is over [`BUSIER_BY`] times local
/// mode's, the furthest over first.
pub fn busier_than_local(results: &[ShapeResult]) -> Vec<&ShapeResult> {
    let by = |r: &ShapeResult| r.arms[FLEET].onset_busiest / r.arms[LOCAL].onset_busiest;
    let mut busier: Vec<&ShapeResult> = results.iter().filter(|r| by(r) > BUSIER_BY).collect();
    busier.sort_by(|a, b| by(b).total_cmp(&by(a)));
    busier
}

/// The onset's table: per arm the busiest second's worst / 95th percentile / median over the
/// steady starts and how many are over 1.10x, 1.5x and 2x the limit; then the shapes where
/// fleet mode is busier than local mode. Empty when no result has an onset (no steady start, or a
/// CSV from before the figure).
pub fn markdown(results: &[ShapeResult]) -> String {
    let steady: Vec<&ShapeResult> = results
        .iter()
        .filter(|r| !r.arms[FLEET].onset_busiest.is_nan())
        .collect();
    if steady.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nThe onset in {} steady starts (the {} s after the limit starts at {} s, which no goal measures): the busiest second over the limit\n",
        steady.len(),
        WARM_UP / SECOND,
        STEADY_FOR / SECOND
    );
    let over: Vec<String> = COUNTED_OVER.iter().map(|b| format!("{b}x")).collect();
    let _ = writeln!(
        out,
        "| arm | worst / 95th percentile / median | shapes over {} |\n|---|---|---|",
        over.join(" / ")
    );
    for (arm, name) in ARMS.iter().enumerate() {
        let values: Vec<f64> = steady.iter().map(|r| r.arms[arm].onset_busiest).collect();
        let (worst, p95, median) = worst_p5_median(&values, false);
        let counts: Vec<String> = COUNTED_OVER
            .iter()
            .map(|&bound| values.iter().filter(|&&v| v > bound).count().to_string())
            .collect();
        let _ = writeln!(
            out,
            "| {name} | {worst:.2} / {p95:.2} / {median:.2} | {} |",
            counts.join(" / ")
        );
    }
    let busier = busier_than_local(results);
    let named: Vec<String> = busier
        .iter()
        .take(NAMED)
        .map(|r| {
            format!(
                "#{} {:.2}x against {:.2}x",
                r.shape.seed, r.arms[FLEET].onset_busiest, r.arms[LOCAL].onset_busiest
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "\nFleet mode busier than local mode by more than a tenth in {} of {}{}",
        busier.len(),
        steady.len(),
        if named.is_empty() {
            String::new()
        } else {
            format!(": {}", named.join(", "))
        }
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::shape::Shape;
    use crate::fleet::sweep::ArmResult;

    fn result(seed: u64, local: f64, fleet: f64) -> ShapeResult {
        let arm = |onset_busiest: f64| ArmResult {
            admitted: 1.0,
            share_429: 0.0,
            busiest: 1.0,
            successes: 1,
            calls: 1,
            cold_start: f64::NAN,
            onset_busiest,
        };
        ShapeResult {
            shape: Shape::draw(seed),
            arms: [arm(local), arm(fleet), arm(0.9)],
        }
    }

    #[test]
    fn fleet_mode_is_busier_than_local_mode_only_over_a_tenth_more_and_furthest_first() {
        let results = [
            result(1, 1.0, 1.10),
            result(2, 1.0, 1.5),
            result(3, 0.5, 2.0),
            result(4, f64::NAN, f64::NAN),
            result(5, 2.0, 1.0),
        ];
        let seeds: Vec<u64> = busier_than_local(&results)
            .iter()
            .map(|r| r.shape.seed)
            .collect();
        assert_eq!(seeds, [3, 2]);
    }

    #[test]
    fn the_table_counts_steady_starts_only_and_names_the_busier_shapes() {
        let results = [
            result(1, 1.0, 1.2),
            result(2, 1.2, 2.5),
            result(3, f64::NAN, f64::NAN),
        ];
        let table = markdown(&results);
        assert!(table.contains("The onset in 2 steady starts"), "{table}");
        assert!(
            table.contains("| fleet | 2.50 / 2.50 / 1.20 | 2 / 1 / 1 |"),
            "{table}"
        );
        assert!(
            table.contains("| local | 1.20 / 1.20 / 1.00 | 1 / 0 / 0 |"),
            "{table}"
        );
        assert!(
            table.contains("| split | 0.90 / 0.90 / 0.90 | 0 / 0 / 0 |"),
            "{table}"
        );
        assert!(
            table.contains(
                "by more than a tenth in 2 of 2: #2 2.50x against 1.20x, #1 1.20x against 1.00x"
            ),
            "{table}"
        );
        assert_eq!(markdown(&results[2..]), "");
    }
}
