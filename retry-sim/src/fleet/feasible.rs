//! Which of fleet mode's misses are its own: per goal, the shapes where fleet mode misses the
//! per-shape bound, and how many of those the oracle's static split (and local mode) meet in
//! the same shape.
//!
//! A shape whose bound no arm meets (a bucket of one request admits a fraction of Poisson
//! arrivals whoever paces them) says little of fleet mode; one where the split meets it is
//! *feasible*, and fleet mode missing it there is fleet mode's own loss. The goals stay as
//! they are ([`GOALS`]); this only counts. For a goal measured against an arm (successes over
//! local mode's, over the split's) that arm meets it by definition in every shape.
//!
//! The calls fleet mode loses where local mode protects the server as well
//! ([`calls_lost_unprotected`]) are its plainest loss: no bound asked for them.
//!
//! What each arm protects the server from is counted too ([`unprotected`]): the shapes where
//! local mode, fleet mode or the split misses the 429 share's or the busiest second's bound.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::frontier::Frontier;
use super::sweep::{ARMS, FLEET, GOALS, Goal, LOCAL, SPLIT, ShapeResult, worst_p5_median};

/// How many of the shapes where fleet mode misses the admitted bound though the bucket allows
/// it are named, lowest first.
const HARDEST_LISTED: usize = 8;

/// The goals' indices in [`GOALS`]: admitted, the 429 share, the busiest second, successes
/// over local mode's.
const ADMITTED: usize = 0;
const SHARE_429: usize = 1;
const BUSIEST: usize = 2;
const OVER_LOCAL: usize = 3;

/// One goal's misses by fleet mode over a sweep, and who meets the bound in those shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Misses {
    /// Shapes where fleet mode misses the goal's per-shape bound.
    pub fleet: usize,
    /// Of those, shapes where the split meets it (feasible shapes).
    pub split_meets: usize,
    /// Of those, shapes where local mode meets it.
    pub local_meets: usize,
    /// Of those, shapes where neither the split nor local mode meets it.
    pub neither_meets: usize,
}

/// Whether `arm` meets `goal`'s per-shape bound in `result` (a goal that does not apply, NaN,
/// is met).
pub fn meets(goal: &Goal, result: &ShapeResult, arm: usize) -> bool {
    goal.meets((goal.value)(result, arm), goal.every_shape)
}

/// The goals' misses over `results`, in [`GOALS`] order.
pub fn misses(results: &[ShapeResult]) -> Vec<(&'static Goal, Misses)> {
    GOALS
        .iter()
        .map(|goal| {
            let mut m = Misses::default();
            for result in results.iter().filter(|r| !meets(goal, r, FLEET)) {
                let (split, local) = (meets(goal, result, SPLIT), meets(goal, result, LOCAL));
                m.fleet += 1;
                m.split_meets += usize::from(split);
                m.local_meets += usize::from(local);
                m.neither_meets += usize::from(!split && !local);
            }
            (goal, m)
        })
        .collect()
}

/// Whether a Poisson stream of requests could meet both the admitted goal's and the 429 share
/// goal's per-shape bounds in `result`'s shape: 0.9 of its offered load (at most the limit)
/// admitted with at most 2 % of the requests throttled by its server's bucket
/// ([`frontier`](super::frontier)). Where it could not, fleet mode missing one of the two
/// is the price of the other.
pub fn both_possible(frontier: &mut Frontier, result: &ShapeResult) -> bool {
    let shape = &result.shape;
    let wanted = GOALS[ADMITTED].every_shape * shape.load.min(1.0);
    frontier.admitted_at_share(shape.burst, GOALS[SHARE_429].every_shape) >= wanted
}

/// The admitted goal over the shapes whose bucket lets both it and the 429 share's bound be
/// met ([`both_possible`]), as markdown: how many shapes those are, fleet mode's admitted
/// worst / 5 % / median over them and the shapes where each arm misses the bound there; and
/// how many admitted misses of fleet mode are in the other shapes.
pub fn admitted_where_possible(results: &[ShapeResult]) -> String {
    let mut frontier = Frontier::new();
    let (possible, not): (Vec<&ShapeResult>, Vec<&ShapeResult>) = results
        .iter()
        .partition(|result| both_possible(&mut frontier, result));
    let goal = &GOALS[ADMITTED];
    let missed = |shapes: &[&ShapeResult], arm: usize| {
        shapes.iter().filter(|r| !meets(goal, r, arm)).count()
    };
    let admitted: Vec<f64> = possible.iter().map(|r| (goal.value)(r, FLEET)).collect();
    let (worst, p5, median) = worst_p5_median(&admitted, goal.higher_is_better);
    let hardest = listed(goal, &fleet_misses(goal, possible.iter().copied()));
    format!(
        "Admitted with at most a {} % 429 share: in {} of {} shapes the server's bucket lets no \
         Poisson stream of requests have both (`retry_sim::fleet::frontier`); fleet mode misses \
         the admitted bound in {} of them. In the other {}: fleet mode's admitted worst / 5 % \
         / median {worst:.4} / {p5:.4} / {median:.4}; the bound missed by fleet mode in {}, \
         the split in {}, local mode in {}. Fleet mode's lowest there: {hardest}.\n",
        GOALS[SHARE_429].every_shape * 100.0,
        not.len(),
        results.len(),
        missed(&not, FLEET),
        possible.len(),
        missed(&possible, FLEET),
        missed(&possible, SPLIT),
        missed(&possible, LOCAL),
    )
}

/// The shapes where fleet mode costs calls and protects nothing: local mode meets the 429
/// share's and the busiest second's bounds, and fleet mode misses the bound of successes over
/// local mode's. Lowest successes over local mode's first.
pub fn calls_lost_unprotected(results: &[ShapeResult]) -> Vec<&ShapeResult> {
    let local_protects =
        |r: &&ShapeResult| meets(&GOALS[SHARE_429], r, LOCAL) && meets(&GOALS[BUSIEST], r, LOCAL);
    fleet_misses(&GOALS[OVER_LOCAL], results.iter().filter(local_protects))
}

/// [`calls_lost_unprotected`] as a line of markdown: how many shapes, and the lowest.
fn calls_lost_line(results: &[ShapeResult]) -> String {
    let goal = &GOALS[OVER_LOCAL];
    let lost = calls_lost_unprotected(results);
    format!(
        "Calls lost for no protection: in {} of {} shapes local mode keeps its 429 share and its \
         busiest second within their bounds and serves more calls than fleet mode (fleet \
         mode's {} under {}). Lowest: {}.\n",
        lost.len(),
        results.len(),
        goal.name,
        goal.every_shape,
        listed(goal, &lost),
    )
}

/// One arm's protection misses over a sweep: the shapes where it misses the 429 share's
/// per-shape bound, the busiest second's, and either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Unprotected {
    /// Shapes over the 429 share's per-shape bound.
    pub share_429: usize,
    /// Shapes over the busiest second's per-shape bound.
    pub busiest: usize,
    /// Shapes over either of the two.
    pub either: usize,
}

/// Each arm's protection misses over `results`, in [`ARMS`] order.
pub fn unprotected(results: &[ShapeResult]) -> [Unprotected; 3] {
    let mut counts = [Unprotected::default(); 3];
    for result in results {
        for (arm, count) in counts.iter_mut().enumerate() {
            let share_429 = !meets(&GOALS[SHARE_429], result, arm);
            let busiest = !meets(&GOALS[BUSIEST], result, arm);
            count.share_429 += usize::from(share_429);
            count.busiest += usize::from(busiest);
            count.either += usize::from(share_429 || busiest);
        }
    }
    counts
}

/// [`unprotected`] as a markdown table, one row per arm, under a line that says what it counts.
fn unprotected_table(results: &[ShapeResult]) -> String {
    let (share_429, busiest) = (GOALS[SHARE_429].every_shape, GOALS[BUSIEST].every_shape);
    let mut out = format!(
        "Protection per arm: shapes (of {}) where each arm misses a protection bound:\n\n\
         | arm | 429 share over {share_429} | busiest second over {busiest} | either |\n\
         |---|---:|---:|---:|\n",
        results.len(),
    );
    for (name, count) in ARMS.iter().zip(unprotected(results)) {
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {} |",
            count.share_429, count.busiest, count.either
        );
    }
    out
}

/// The shapes of `shapes` where fleet mode misses `goal`'s per-shape bound, its figure lowest
/// first.
fn fleet_misses<'a>(
    goal: &Goal,
    shapes: impl Iterator<Item = &'a ShapeResult>,
) -> Vec<&'a ShapeResult> {
    let mut missed: Vec<&ShapeResult> = shapes.filter(|r| !meets(goal, r, FLEET)).collect();
    missed.sort_by(|a, b| (goal.value)(a, FLEET).total_cmp(&(goal.value)(b, FLEET)));
    missed
}

/// The first [`HARDEST_LISTED`] of `shapes` as `#seed figure` (fleet mode's figure for
/// `goal`), or `none`.
fn listed(goal: &Goal, shapes: &[&ShapeResult]) -> String {
    if shapes.is_empty() {
        return "none".to_owned();
    }
    let named: Vec<String> = shapes
        .iter()
        .take(HARDEST_LISTED)
        .map(|r| format!("#{} {:.3}", r.shape.seed, (goal.value)(r, FLEET)))
        .collect();
    named.join(", ")
}

/// The shapes by the set of per-shape bounds fleet mode misses in them (the goals' names
/// joined by ` + `), most shapes first; shapes that miss none are left out.
pub fn by_bounds_missed(results: &[ShapeResult]) -> Vec<(String, usize)> {
    let mut counts = BTreeMap::<String, usize>::new();
    for result in results {
        let missed: Vec<&str> = GOALS
            .iter()
            .filter(|goal| !meets(goal, result, FLEET))
            .map(|goal| goal.name)
            .collect();
        if !missed.is_empty() {
            *counts.entry(missed.join(" + ")).or_default() += 1;
        }
    }
    let mut sorted: Vec<(String, usize)> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sorted
}

/// The counts as markdown: per goal, the shapes fleet mode misses and how many of them the
/// split and local mode meet; each arm's protection misses; then the shapes by the bounds
/// missed.
pub fn markdown(results: &[ShapeResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| goal (per-shape bound) | fleet misses | of which the split meets (feasible) | local meets | neither meets |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|");
    for (goal, m) in misses(results) {
        let sign = if goal.higher_is_better { "≥" } else { "≤" };
        let _ = writeln!(
            out,
            "| {} ({sign} {}) | {} | **{}** | {} | {} |",
            goal.name, goal.every_shape, m.fleet, m.split_meets, m.local_meets, m.neither_meets
        );
    }
    let _ = writeln!(out, "\n{}", admitted_where_possible(results));
    let _ = writeln!(out, "{}", calls_lost_line(results));
    let _ = writeln!(out, "{}", unprotected_table(results));
    let _ = writeln!(out, "Shapes by the per-shape bounds fleet mode misses:\n");
    for (bounds, count) in by_bounds_missed(results) {
        let _ = writeln!(out, "* {count}: {bounds}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::shape::Shape;
    use crate::fleet::sweep::ArmResult;

    fn arm(admitted: f64, share_429: f64, busiest: f64, successes: u64) -> ArmResult {
        ArmResult {
            admitted,
            share_429,
            busiest,
            successes,
            calls: 1_000,
            cold_start: f64::NAN,
            onset_busiest: f64::NAN,
        }
    }

    fn result(seed: u64, arms: [ArmResult; 3]) -> ShapeResult {
        ShapeResult {
            shape: Shape::draw(seed),
            arms,
        }
    }

    fn good() -> ArmResult {
        arm(0.99, 0.001, 1.01, 990)
    }

    fn of<'a>(all: &'a [(&'static Goal, Misses)], name: &str) -> &'a Misses {
        &all.iter().find(|(goal, _)| goal.name == name).unwrap().1
    }

    #[test]
    fn a_miss_the_split_meets_is_feasible_and_one_no_arm_meets_is_not() {
        let results = [
            // Fleet under 0.9 admitted where both others meet it: feasible.
            result(1, [good(), arm(0.5, 0.001, 1.0, 990), good()]),
            // Fleet under 0.9 where neither meets it (a bucket of one): not feasible.
            result(
                2,
                [
                    arm(0.6, 0.3, 2.0, 990),
                    arm(0.5, 0.001, 1.0, 990),
                    arm(0.5, 0.0, 1.0, 990),
                ],
            ),
            // Local meets, the split does not.
            result(
                3,
                [good(), arm(0.5, 0.001, 1.0, 990), arm(0.8, 0.0, 1.0, 990)],
            ),
            // Fleet meets it.
            result(4, [good(), good(), good()]),
        ];
        let all = misses(&results);
        let admitted = of(&all, "admitted / min(offered, limit)");
        assert_eq!(
            *admitted,
            Misses {
                fleet: 3,
                split_meets: 1,
                local_meets: 2,
                neither_meets: 1
            }
        );
        // Successes against local mode: fleet's 990 of local's 990 in each; none missed.
        assert_eq!(of(&all, "successes / local mode's").fleet, 0);
    }

    #[test]
    fn successes_are_judged_against_each_arm_in_the_same_shape() {
        // Fleet 500 of local's 1000; the split 1000 meets "successes / local mode's".
        let results = [result(
            5,
            [
                arm(0.99, 0.0, 1.0, 1_000),
                arm(0.99, 0.0, 1.0, 500),
                arm(0.99, 0.0, 1.0, 1_000),
            ],
        )];
        let all = misses(&results);
        let local = of(&all, "successes / local mode's");
        assert_eq!(
            (local.fleet, local.split_meets, local.local_meets),
            (1, 1, 1)
        );
        let split = of(&all, "successes / the split's");
        assert_eq!(
            (split.fleet, split.split_meets, split.local_meets),
            (1, 1, 1)
        );
    }

    /// Calls fleet mode loses count as lost for no protection only where local mode kept both
    /// protection bounds; lowest first.
    #[test]
    fn calls_lost_for_no_protection_are_where_local_mode_protects() {
        let results = [
            // Local mode over 2 % 429s: its extra calls cost the server.
            result(
                1,
                [arm(1.0, 0.05, 1.0, 1_000), arm(0.9, 0.0, 1.0, 500), good()],
            ),
            // Local mode over 1.10x in a second.
            result(
                2,
                [arm(1.0, 0.0, 1.3, 1_000), arm(0.9, 0.0, 1.0, 500), good()],
            ),
            // Local mode protects and serves more: lost, twice, the lower first.
            result(
                3,
                [arm(1.0, 0.01, 1.05, 1_000), arm(0.9, 0.0, 1.0, 800), good()],
            ),
            result(
                4,
                [arm(1.0, 0.01, 1.05, 1_000), arm(0.5, 0.0, 1.0, 500), good()],
            ),
            // Within 1 % of local mode: not lost.
            result(
                5,
                [arm(1.0, 0.0, 1.0, 1_000), arm(1.0, 0.0, 1.0, 995), good()],
            ),
        ];
        let lost: Vec<u64> = calls_lost_unprotected(&results)
            .iter()
            .map(|r| r.shape.seed)
            .collect();
        assert_eq!(lost, [4, 3]);
        let line = calls_lost_line(&results);
        assert!(line.contains("in 2 of 5 shapes"), "{line}");
        assert!(line.contains("Lowest: #4 0.500, #3 0.800."), "{line}");
    }

    /// Each arm's 429 share and busiest second are counted against their own bounds: over
    /// them is a miss, at them or under is not.
    #[test]
    fn each_arm_counts_its_own_protection_misses() {
        let results = [
            // Local mode over 2 % 429s only.
            result(1, [arm(1.0, 0.05, 1.0, 990), good(), good()]),
            // Local mode over both; fleet mode over 1.10x only.
            result(
                2,
                [arm(1.0, 0.03, 1.3, 990), arm(0.99, 0.0, 1.2, 990), good()],
            ),
            // The split just over 2 % 429s; local and fleet mode at the bounds, which meets them.
            result(
                3,
                [
                    arm(1.0, 0.01, 1.1, 990),
                    arm(0.99, 0.02, 1.0, 990),
                    arm(0.9, 0.021, 0.5, 990),
                ],
            ),
            // Nobody sends: no miss.
            result(4, [arm(0.0, 0.0, 0.0, 0); 3]),
        ];
        let counts = unprotected(&results);
        let miss = |share_429, busiest, either| Unprotected {
            share_429,
            busiest,
            either,
        };
        assert_eq!(counts[LOCAL], miss(2, 1, 2));
        assert_eq!(counts[FLEET], miss(0, 1, 1));
        assert_eq!(counts[SPLIT], miss(1, 0, 1));
        let table = markdown(&results);
        assert!(
            table.contains("| arm | 429 share over 0.02 | busiest second over 1.1 | either |"),
            "{table}"
        );
        assert!(
            table.contains("| local | 2 | 1 | 2 |\n| fleet | 0 | 1 | 1 |\n| split | 1 | 0 | 1 |"),
            "{table}"
        );
    }

    /// `result` with its shape's server bucket and offered load replaced.
    fn in_shape(mut result: ShapeResult, burst: f64, load: f64) -> ShapeResult {
        result.shape.burst = burst;
        result.shape.load = load;
        result
    }

    #[test]
    fn the_goals_index_the_admitted_and_429_goals() {
        assert_eq!(GOALS[ADMITTED].name, "admitted / min(offered, limit)");
        assert_eq!(GOALS[SHARE_429].name, "429 share");
    }

    #[test]
    fn a_small_bucket_lets_no_poisson_stream_have_both_at_the_limit_but_may_below_it() {
        let mut frontier = Frontier::new();
        let shape = |burst, load| in_shape(result(1, [good(), good(), good()]), burst, load);
        // A bucket of 5 admits about 0.72 of the limit at a 2 % 429 share.
        assert!(!both_possible(&mut frontier, &shape(5.0, 1.0)));
        assert!(!both_possible(&mut frontier, &shape(5.0, 3.0)));
        assert!(both_possible(&mut frontier, &shape(5.0, 0.5)));
        assert!(both_possible(&mut frontier, &shape(100.0, 3.0)));
        assert!(!both_possible(&mut frontier, &shape(1.0, 0.1)));
    }

    #[test]
    fn admitted_is_judged_apart_where_the_bucket_allows_it_with_few_429s() {
        let starved = arm(0.02, 0.01, 0.1, 10);
        let results = [
            // A bucket of 1 at twice the limit: fleet mode's 0.02 is all it can have.
            in_shape(result(1, [good(), starved, good()]), 1.0, 2.0),
            // A bucket of 100: fleet mode's 0.5 is its own loss; the split's 0.8 too.
            in_shape(
                result(
                    2,
                    [good(), arm(0.5, 0.0, 1.0, 990), arm(0.8, 0.0, 1.0, 990)],
                ),
                100.0,
                1.5,
            ),
            in_shape(result(3, [good(), good(), good()]), 100.0, 1.5),
        ];
        let line = admitted_where_possible(&results);
        assert!(line.contains("in 1 of 3 shapes"), "{line}");
        assert!(
            line.contains("misses the admitted bound in 1 of them"),
            "{line}"
        );
        assert!(line.contains("In the other 2:"), "{line}");
        assert!(line.contains("0.5000 / 0.5000 / 0.9900"), "{line}");
        assert!(
            line.contains("by fleet mode in 1, the split in 1, local mode in 0."),
            "{line}"
        );
        assert!(
            line.contains("Fleet mode's lowest there: #2 0.500."),
            "{line}"
        );
        assert!(
            line.starts_with("Admitted with at most a 2 % 429 share"),
            "{line}"
        );
        // Where fleet mode misses nothing the bucket allows, the list says so.
        let line = admitted_where_possible(&results[2..]);
        assert!(line.contains("Fleet mode's lowest there: none."), "{line}");
    }

    #[test]
    fn shapes_are_grouped_by_the_bounds_they_miss_most_first() {
        let results = [
            result(1, [good(), arm(0.5, 0.001, 1.0, 990), good()]),
            result(2, [good(), arm(0.5, 0.001, 1.0, 990), good()]),
            result(3, [good(), arm(0.99, 0.05, 1.2, 990), good()]),
            result(4, [good(), good(), good()]),
        ];
        assert_eq!(
            by_bounds_missed(&results),
            vec![
                ("admitted / min(offered, limit)".to_owned(), 2),
                ("429 share + busiest second / limit".to_owned(), 1),
            ]
        );
        let table = markdown(&results);
        assert!(
            table.contains("| admitted / min(offered, limit) (≥ 0.9) | 2 | **2** | 2 | 0 |"),
            "{table}"
        );
    }
}
