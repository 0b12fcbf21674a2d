//! The shape sweep: every shape ([`Shape::draw`]) run in local mode, fleet mode and the
//! oracle's static split side by side, each judged on the goals after its warm-up, and the
//! goals' worst, 5th percentile and median over the shapes.
//!
//! The goals (per shape, from [`WARM_UP`] after the limit starts):
//! * **admitted**: what the server admitted (attempts sent less those answered 429), over what
//!   it could have: the sum over the seconds of `min(offered, limit)`, the offered calls of
//!   each second times the attempts a call makes at the shape's 5xx rate: ≥ 0.95 in 95 % of
//!   the shapes, ≥ 0.90 in all;
//! * **429 share**: 429s over attempts sent: ≤ 1 % (≤ 2 % in the worst shape);
//! * **busiest second**: the most attempts sent in one second, over the limit: ≤ 1.10;
//! * **successes**: calls that succeeded, fleet mode's over local mode's and over the static
//!   split's in the same shape: ≥ 0.99 each;
//! * **cold start** (shapes that start cold): seconds until a second admitted at least 0.9 of
//!   `min(offered, limit)`: ≤ 15 s.
//!
//! Beside the goals, the report measures what no goal does: a steady start's onset, the
//! warm-up's seconds after the limit starts under a fleet that ran unthrottled
//! ([`super::onset`]).

use std::fmt::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::arm::Arm;
use super::shape::{Shape, Start, WARM_UP};
use super::store_trace;
use crate::metrics::{BIN, BINS_PER_SECOND, RunOutput};
use crate::sim::run;
use crate::time::{Nanos, SECOND};

/// The arms, in table order.
pub const ARMS: [&str; 3] = ["local", "fleet", "split"];

/// Local mode's index in [`ARMS`] and [`ShapeResult::arms`].
pub const LOCAL: usize = 0;
/// Fleet mode's index.
pub const FLEET: usize = 1;
/// The static split's index.
pub const SPLIT: usize = 2;

/// What one run of one shape measured.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ArmResult {
    /// Admitted over `min(offered, limit)`, summed over the measured seconds.
    pub admitted: f64,
    /// 429s over attempts sent.
    pub share_429: f64,
    /// The most attempts sent in one second, over the limit.
    pub busiest: f64,
    /// Calls arriving in the measured window that succeeded.
    pub successes: u64,
    /// Calls arriving in the measured window.
    pub calls: u64,
    /// Seconds from the limit's start until a second admitted 0.9 of `min(offered, limit)`
    /// (NaN for a steady start).
    pub cold_start: f64,
    /// A steady start's onset, which no goal measures: the most attempts sent in one second
    /// of the [`WARM_UP`] after the limit starts, over the limit ([`super::onset`]; NaN for a
    /// cold start, and for a sweep's CSV written before this figure).
    pub onset_busiest: f64,
}

/// One shape's three runs: local, fleet, split.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeResult {
    /// The shape.
    pub shape: Shape,
    /// Its runs, in [`ARMS`] order.
    pub arms: [ArmResult; 3],
}

impl ShapeResult {
    /// Fleet mode's successes over local mode's.
    pub fn fleet_over_local(&self) -> f64 {
        ratio(self.arms[FLEET].successes, self.arms[LOCAL].successes)
    }

    /// Fleet mode's successes over the split's.
    pub fn fleet_over_split(&self) -> f64 {
        ratio(self.arms[FLEET].successes, self.arms[SPLIT].successes)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// Measures one run of `shape`.
pub fn measure(shape: &Shape, output: &RunOutput) -> ArmResult {
    let (from, to) = shape.measured();
    let per_call = shape.attempts_per_call();
    let second = |series: &[u32], s: usize| -> u64 {
        series
            .iter()
            .skip(s * BINS_PER_SECOND)
            .take(BINS_PER_SECOND)
            .map(|&v| u64::from(v))
            .sum()
    };
    let seconds = |from: Nanos, to: Nanos| (from / SECOND) as usize..(to / SECOND) as usize;
    let ideal = |s: usize| (second(&output.arrivals, s) as f64 * per_call).min(shape.limit);
    let admitted_in =
        |s: usize| second(&output.attempts, s).saturating_sub(second(&output.throttled, s)) as f64;
    let (mut admitted, mut could, mut sent, mut throttled, mut busiest) = (0.0, 0.0, 0, 0, 0);
    for s in seconds(from, to) {
        admitted += admitted_in(s);
        could += ideal(s);
        sent += second(&output.attempts, s);
        throttled += second(&output.throttled, s);
        busiest = busiest.max(second(&output.attempts, s));
    }
    let bins = (from / BIN) as usize..(to / BIN) as usize;
    let sum = |series: &[u32]| -> u64 {
        series
            .get(bins.clone())
            .map_or(0, |bins| bins.iter().map(|&v| u64::from(v)).sum())
    };
    let cold_start = match shape.start {
        Start::Cold => seconds(0, to)
            .find(|&s| admitted_in(s) >= 0.9 * ideal(s) && ideal(s) > 0.0)
            .map_or((to / SECOND) as f64, |s| (s + 1) as f64),
        Start::Steady => f64::NAN,
    };
    let onset_busiest = match shape.start {
        Start::Cold => f64::NAN,
        Start::Steady => {
            let onset = seconds(shape.limit_from(), shape.limit_from() + WARM_UP);
            let busiest = onset.map(|s| second(&output.attempts, s)).max();
            busiest.unwrap_or(0) as f64 / shape.limit
        }
    };
    ArmResult {
        admitted: if could > 0.0 { admitted / could } else { 1.0 },
        share_429: if sent > 0 {
            throttled as f64 / sent as f64
        } else {
            0.0
        },
        busiest: busiest as f64 / shape.limit,
        successes: sum(&output.ok_by_arrival),
        calls: sum(&output.arrivals),
        cold_start,
        onset_busiest,
    }
}

/// Runs the shapes of `seeds` on `threads` threads, their callers waiting at most `max_wait`
/// for a send permit ([`Shape::max_wait`]); results in seed order.
pub fn sweep(
    seeds: &[u64],
    max_wait: Option<Nanos>,
    threads: usize,
) -> Result<Vec<ShapeResult>, String> {
    let shapes: Vec<Shape> = seeds
        .iter()
        .map(|&seed| Shape::draw(seed).with_max_wait(max_wait))
        .collect();
    let mut tasks: Vec<(usize, usize)> = (0..shapes.len())
        .flat_map(|s| (0..ARMS.len()).map(move |a| (s, a)))
        .collect();
    // The costliest first, for a balanced finish: cost ~ offered load × processes' syncs.
    let cost = |&(s, _): &(usize, usize)| {
        let shape = &shapes[s];
        shape.limit * shape.load
            + shape.processes.len() as f64 * SECOND as f64 / shape.sync_interval as f64
    };
    tasks.sort_by(|a, b| cost(b).total_cmp(&cost(a)));
    let results = Mutex::new(vec![[ArmResult::default(); 3]; shapes.len()]);
    let error = Mutex::new(None::<String>);
    let next = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                while let Some(&(s, a)) = tasks.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let shape = &shapes[s];
                    let outcome = shape.strategies().and_then(|strategies| {
                        run(&shape.config(), &strategies[a], shape.seed)
                            .map(|output| measure(shape, &output))
                    });
                    match outcome {
                        Ok(result) => {
                            results.lock().unwrap_or_else(|e| e.into_inner())[s][a] = result;
                        }
                        Err(message) => {
                            let mut error = error.lock().unwrap_or_else(|e| e.into_inner());
                            error.get_or_insert(format!("shape {}: {message}", shape.seed));
                            next.store(tasks.len(), Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    if let Some(message) = error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(message);
    }
    let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(shapes
        .into_iter()
        .zip(results)
        .map(|(shape, arms)| ShapeResult { shape, arms })
        .collect())
}

/// One goal of the sweep: how to read it off a shape's result for an arm, and its bounds.
#[derive(Debug, Clone, Copy)]
pub struct Goal {
    /// Its name in the table.
    pub name: &'static str,
    /// Whether more is better.
    pub higher_is_better: bool,
    /// The bound 95 % of the shapes meet, if any.
    pub most_shapes: Option<f64>,
    /// The bound every shape meets.
    pub every_shape: f64,
    /// The value for arm `arm` of a shape (NaN when it does not apply).
    pub value: fn(&ShapeResult, usize) -> f64,
}

impl Goal {
    /// Whether `value` meets the bound `bound` (NaN, a goal that does not apply, meets it).
    pub fn meets(&self, value: f64, bound: f64) -> bool {
        value.is_nan()
            || if self.higher_is_better {
                value >= bound
            } else {
                value <= bound
            }
    }
}

/// The goals, in table order.
pub const GOALS: [Goal; 6] = [
    Goal {
        name: "admitted / min(offered, limit)",
        higher_is_better: true,
        most_shapes: Some(0.95),
        every_shape: 0.90,
        value: |r, a| r.arms[a].admitted,
    },
    Goal {
        name: "429 share",
        higher_is_better: false,
        most_shapes: Some(0.01),
        every_shape: 0.02,
        value: |r, a| r.arms[a].share_429,
    },
    Goal {
        name: "busiest second / limit",
        higher_is_better: false,
        most_shapes: None,
        every_shape: crate::goals::FLEET_BUSIEST_SECOND,
        value: |r, a| r.arms[a].busiest,
    },
    Goal {
        name: "successes / local mode's",
        higher_is_better: true,
        most_shapes: None,
        every_shape: 0.99,
        value: |r, a| ratio(r.arms[a].successes, r.arms[LOCAL].successes),
    },
    Goal {
        name: "successes / the split's",
        higher_is_better: true,
        most_shapes: None,
        every_shape: 0.99,
        value: |r, a| ratio(r.arms[a].successes, r.arms[SPLIT].successes),
    },
    Goal {
        name: "cold start: s to 0.9 of min(offered, limit)",
        higher_is_better: false,
        most_shapes: None,
        every_shape: 15.0,
        value: |r, a| r.arms[a].cold_start,
    },
];

/// The worst, the 5th percentile from the worst end, and the median of `values` (NaNs
/// ignored), for a goal where more is better or not.
pub fn worst_p5_median(values: &[f64], higher_is_better: bool) -> (f64, f64, f64) {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if sorted.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    sorted.sort_by(f64::total_cmp);
    if !higher_is_better {
        sorted.reverse();
    }
    let at = |q: f64| sorted[((sorted.len() - 1) as f64 * q).round() as usize];
    (sorted[0], at(0.05), at(0.5))
}

/// Whether fleet mode meets every goal over `results`.
pub fn fleet_meets_goals(results: &[ShapeResult]) -> bool {
    GOALS.iter().all(|goal| {
        let values: Vec<f64> = results.iter().map(|r| (goal.value)(r, 1)).collect();
        let (worst, p5, _) = worst_p5_median(&values, goal.higher_is_better);
        goal.meets(worst, goal.every_shape)
            && goal.most_shapes.is_none_or(|bound| goal.meets(p5, bound))
    })
}

/// The sweep's table (worst / 5 % / median of every goal, local, fleet and split side by side)
/// and the hardest shapes for fleet mode: the worst of each goal, and every shape that misses
/// a goal.
pub fn markdown(results: &[ShapeResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "| goal (bound: 95 % of shapes / every shape) | local: worst / 5 % / median | fleet: worst / 5 % / median | split: worst / 5 % / median | fleet meets |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for goal in &GOALS {
        let mut cells = Vec::new();
        let mut met = true;
        for arm in 0..ARMS.len() {
            let values: Vec<f64> = results.iter().map(|r| (goal.value)(r, arm)).collect();
            let (worst, p5, median) = worst_p5_median(&values, goal.higher_is_better);
            cells.push(format!("{} / {} / {}", fmt(worst), fmt(p5), fmt(median)));
            if arm == 1 {
                met = goal.meets(worst, goal.every_shape)
                    && goal.most_shapes.is_none_or(|bound| goal.meets(p5, bound));
            }
        }
        let sign = if goal.higher_is_better { "≥" } else { "≤" };
        let bound = match goal.most_shapes {
            Some(most) => format!("{sign} {most} / {sign} {}", goal.every_shape),
            None => format!("{sign} {}", goal.every_shape),
        };
        let _ = writeln!(
            out,
            "| {} ({bound}) | {} | {} | {} | {} |",
            goal.name,
            cells[0],
            cells[1],
            cells[2],
            if met { "yes" } else { "**no**" }
        );
    }
    let _ = writeln!(out, "\nHardest shapes for fleet mode:\n");
    let mut listed = Vec::new();
    for goal in &GOALS {
        let worst = results
            .iter()
            .filter(|r| !(goal.value)(r, 1).is_nan())
            .min_by(|a, b| {
                let (a, b) = ((goal.value)(a, 1), (goal.value)(b, 1));
                if goal.higher_is_better {
                    a.total_cmp(&b)
                } else {
                    b.total_cmp(&a)
                }
            });
        if let Some(worst) = worst {
            let _ = writeln!(
                out,
                "* worst {}: {} — {}",
                goal.name,
                fmt((goal.value)(worst, 1)),
                describe(worst)
            );
            listed.push(worst.shape.seed);
        }
    }
    let missing: Vec<&ShapeResult> = results
        .iter()
        .filter(|r| {
            GOALS
                .iter()
                .any(|goal| !goal.meets((goal.value)(r, 1), goal.every_shape))
        })
        .collect();
    let _ = writeln!(
        out,
        "\nShapes where fleet mode misses a per-shape bound: {} of {}\n",
        missing.len(),
        results.len()
    );
    for result in missing.iter().filter(|r| !listed.contains(&r.shape.seed)) {
        let _ = writeln!(out, "* {}", describe(result));
    }
    let _ = writeln!(
        out,
        "\nFleet mode's misses, and whether the split or local mode meets the bound in the same shape:\n"
    );
    out.push_str(&super::feasible::markdown(results));
    out.push_str(&super::onset::markdown(results));
    out
}

/// One arm's run of a shape, traced.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The run's seconds, comma-separated with a header: requests offered, attempts sent,
    /// 429s, successes (by arrival) and the fleet's rate (the store's last step in the second).
    pub seconds: String,
    /// Fleet mode's store steps, one line each ([`store_trace::csv`]); `None` for an arm
    /// without a fleet.
    pub store_steps: Option<String>,
}

/// Runs `shape`'s arm `arm` (an index into [`ARMS`]) traced.
pub fn trace(shape: &Shape, arm: usize) -> Result<Trace, String> {
    let strategies = shape.strategies()?;
    let strategy = strategies
        .get(arm)
        .ok_or_else(|| format!("no arm {arm}: the arms are {ARMS:?}"))?;
    let mut config = shape.config();
    config.store.trace_steps = true;
    let output = run(&config, strategy, shape.seed)?;
    let store_steps =
        matches!(strategy.arm(), Arm::Fleet(_)).then(|| store_trace::csv(&output.store_steps));
    Ok(Trace {
        seconds: seconds(&output, shape),
        store_steps,
    })
}

/// `output`'s seconds as [`Trace::seconds`] holds them.
fn seconds(output: &RunOutput, shape: &Shape) -> String {
    let mut out = String::from("second,offered,sent,throttled,ok,fleet_rate\n");
    let (_, to) = shape.measured();
    for s in 0..(to / SECOND) as usize {
        let bins = s * BINS_PER_SECOND..(s + 1) * BINS_PER_SECOND;
        let sum = |series: &[u32]| -> u64 {
            series
                .get(bins.clone())
                .map_or(0, |b| b.iter().map(|&v| u64::from(v)).sum())
        };
        let rate = output
            .fleet_rate
            .get(bins.clone())
            .and_then(|b| b.iter().rev().find(|&&v| v > 0))
            .map_or(0.0, |&v| f64::from(v) / 1e3);
        let _ = writeln!(
            out,
            "{s},{},{},{},{},{rate:.1}",
            sum(&output.arrivals),
            sum(&output.attempts),
            sum(&output.throttled),
            sum(&output.ok_by_arrival)
        );
    }
    out
}

/// Every shape's figures, one line each, comma-separated, with a header; each figure as it
/// was measured (not rounded), so that [`from_csv`] makes the same table again.
pub fn csv(results: &[ShapeResult]) -> String {
    let mut out = String::from("seed,shape");
    for arm in ARMS {
        for field in [
            "admitted",
            "share_429",
            "busiest",
            "successes",
            "calls",
            "cold_start",
            "onset_busiest",
        ] {
            let _ = write!(out, ",{arm}_{field}");
        }
    }
    out.push('\n');
    for result in results {
        let _ = write!(
            out,
            "{},\"{}\"",
            result.shape.seed,
            result.shape.to_string().replace('"', "'")
        );
        for r in &result.arms {
            let _ = write!(
                out,
                ",{},{},{},{},{},{},{}",
                r.admitted,
                r.share_429,
                r.busiest,
                r.successes,
                r.calls,
                r.cold_start,
                r.onset_busiest
            );
        }
        out.push('\n');
    }
    out
}

/// The figures [`csv`] writes for an arm.
const FIGURES: usize = 7;

/// The figures an arm had in a sweep's CSV before [`ArmResult::onset_busiest`]; such a CSV
/// still reads, without the onset.
const FIGURES_BEFORE_ONSET: usize = 6;

/// The results a sweep wrote with [`csv`], read back (each shape drawn again from its seed),
/// so that a sweep's table can be made again, with this simulator's report, from its CSV.
/// An error names the line that is not such a line, or a shape this simulator draws otherwise.
pub fn from_csv(text: &str) -> Result<Vec<ShapeResult>, String> {
    text.lines()
        .enumerate()
        .skip(1)
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| from_csv_line(line).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

fn from_csv_line(line: &str) -> Result<ShapeResult, String> {
    let (seed, rest) = line.split_once(",\"").ok_or("no seed and quoted shape")?;
    let (described, figures) = rest.split_once("\",").ok_or("no figures after the shape")?;
    let seed: u64 = seed.parse().map_err(|e| format!("seed {seed:?}: {e}"))?;
    let shape = Shape::draw(seed).with_max_wait(Shape::described_max_wait(described)?);
    if shape.to_string().replace('"', "'") != described {
        return Err(format!(
            "shape {seed} is drawn otherwise by this simulator: {shape}"
        ));
    }
    let fields: Vec<&str> = figures.split(',').collect();
    let per_arm = [FIGURES, FIGURES_BEFORE_ONSET]
        .into_iter()
        .find(|&n| fields.len() == n * ARMS.len())
        .ok_or_else(|| {
            format!(
                "{} figures, not {} (or {} from a sweep before the onset figure)",
                fields.len(),
                FIGURES * ARMS.len(),
                FIGURES_BEFORE_ONSET * ARMS.len()
            )
        })?;
    let mut arms = [ArmResult::default(); ARMS.len()];
    for (a, arm) in arms.iter_mut().enumerate() {
        let at = a * per_arm;
        *arm = ArmResult {
            admitted: parse_field(&fields, at)?,
            share_429: parse_field(&fields, at + 1)?,
            busiest: parse_field(&fields, at + 2)?,
            successes: parse_field(&fields, at + 3)?,
            calls: parse_field(&fields, at + 4)?,
            cold_start: parse_field(&fields, at + 5)?,
            onset_busiest: match per_arm {
                FIGURES => parse_field(&fields, at + 6)?,
                _ => f64::NAN,
            },
        };
    }
    Ok(ShapeResult { shape, arms })
}

/// The `i`th of a CSV line's `fields`, parsed; an error names the text.
fn parse_field<T: std::str::FromStr>(fields: &[&str], i: usize) -> Result<T, String>
where
    T::Err: std::fmt::Display,
{
    fields[i]
        .parse()
        .map_err(|e| format!("{:?}: {e}", fields[i]))
}

/// A shape and its three arms' figures, on one line.
pub fn describe(result: &ShapeResult) -> String {
    let arm = |a: usize| {
        let r = &result.arms[a];
        format!(
            "{} admitted {:.3}, 429 {:.4}, busiest {:.3}, ok {}{}",
            ARMS[a],
            r.admitted,
            r.share_429,
            r.busiest,
            r.successes,
            if r.cold_start.is_nan() {
                String::new()
            } else {
                format!(", cold {} s", r.cold_start)
            }
        )
    };
    format!("{} [{}; {}; {}]", result.shape, arm(1), arm(0), arm(2))
}

fn fmt(value: f64) -> String {
    if value.is_nan() {
        "–".to_owned()
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::process::{ProcessArrivals, ProcessSpec};
    use crate::fleet::shape::{Churn, Skew};
    use crate::strategy::StrategyKind;
    use crate::time::MILLI;

    #[test]
    fn a_traced_fleet_arm_keeps_its_store_steps_and_runs_as_it_would_untraced() {
        // #99: 10 processes offered 2.3 times a 113/s limit, throttled from the cold start.
        let shape = Shape::draw(99);
        let fleet = trace(&shape, 1).expect("the fleet arm runs");
        let steps = fleet.store_steps.expect("the fleet arm has a store");
        let mut lines = steps.lines();
        assert_eq!(lines.next(), Some(store_trace::csv(&[]).trim_end()));
        let rows: Vec<Vec<i64>> = lines
            .map(|line| {
                line.split(',')
                    .map(|field| field.parse().expect("a number"))
                    .collect()
            })
            .collect();
        assert!(rows.len() > 100, "{} steps", rows.len());
        assert!(
            rows.iter()
                .all(|row| row.len() == 18 && (1..=10).contains(&row[1]))
        );
        assert!(
            rows.iter().any(|row| row[16] > 0),
            "the ticks' reports carry demand"
        );
        assert!(
            rows.windows(2).all(|pair| pair[0][0] <= pair[1][0]),
            "in time order"
        );
        assert!(rows.iter().any(|row| row[8] == 1), "the fleet engages");
        // Tracing changes nothing of the run.
        let strategies = shape.strategies().expect("strategies");
        let untraced = run(&shape.config(), &strategies[1], shape.seed).expect("runs");
        assert_eq!(seconds(&untraced, &shape), fleet.seconds);
        assert!(untraced.store_steps.is_empty());
        // Local mode has no store; there is no fourth arm.
        assert_eq!(trace(&shape, 0).expect("runs").store_steps, None);
        assert!(trace(&shape, 3).is_err());
    }

    #[test]
    fn a_fleet_that_starts_up_before_it_calls_estimates_its_first_limit_from_its_traffic() {
        // The harness's section Y in the simulator: 6 Poisson processes offered 150/s each
        // against 500/s (a bucket of 27), a 3 s sync, each attaching 2 s before its first call.
        // Their first reports of traffic span the 1 s or less since their first responses;
        // counted as sync intervals, and with the attach syncs' reports of no traffic among
        // them, the first estimate was 14/s (seed 8), and the fleet took 3 s to reach 0.9 of
        // the limit only by luck of its later cuts (12 s for seed 16).
        let mut shape = Shape::draw(8);
        shape.limit = 500.0;
        shape.burst = 27.0;
        shape.load = 1.8;
        shape.errors = 0.0;
        shape.max_attempts = 5;
        shape.sync_interval = 3 * SECOND;
        shape.start = Start::Cold;
        shape.skew = Skew::Spread(1.0);
        shape.arrivals = Some(ProcessArrivals::Poisson);
        shape.churn = Churn::None;
        shape.store_fault = None;
        let starting = 2 * SECOND;
        shape.processes = vec![
            ProcessSpec {
                starting,
                ..ProcessSpec::steady(150.0)
            };
            6
        ];
        let strategies = shape.strategies().expect("strategies");
        let mut config = shape.config();
        config.store.trace_steps = true;
        let output = run(&config, &strategies[1], shape.seed).expect("runs");
        let first = output
            .store_steps
            .iter()
            .find(|step| step.cold_cut && step.engaged)
            .expect("a cold cut");
        assert!(first.w_max >= 100_000, "first estimate {first:?}");
    }

    #[test]
    fn a_shapes_max_wait_bounds_each_arms_wait_for_a_permit() {
        // #37: 3 on/off processes at 0.86 times a 218/s limit. Their on spells want several
        // times their share, so calls queue for permits in every arm.
        let waiting = Shape::draw(37);
        let bounded = waiting.clone().with_max_wait(Some(100 * MILLI));
        let [local, fleet, _] = bounded.strategies().expect("strategies");
        for spec in [&local, &fleet] {
            let StrategyKind::Ours { config, .. } = &spec.kind else {
                panic!("{}: not retry-core's", spec.name);
            };
            assert_eq!(
                config.max_wait(),
                Some(std::time::Duration::from_millis(100))
            );
        }
        assert_eq!(bounded.config().split_max_wait, Some(100 * MILLI));
        // The median call that succeeded waited seconds in its queue; bounded, about the
        // bound (1 % latency bins; the attempt's service is 10 ms on average).
        let p50_ms = |shape: &Shape, arm: usize| {
            let strategies = shape.strategies().expect("strategies");
            let output = run(&shape.config(), &strategies[arm], shape.seed).expect("runs");
            output.metrics.p50_ms
        };
        for (arm, name) in ARMS.iter().enumerate() {
            let (waited, bound) = (p50_ms(&waiting, arm), p50_ms(&bounded, arm));
            assert!(
                waited > 500.0 && bound < 150.0,
                "{name}: the median success's latency {waited:.0} ms, {bound:.0} ms bounded"
            );
        }
    }

    #[test]
    fn the_onset_is_the_busiest_second_of_the_warm_up_after_a_steady_limit_starts() {
        // #37 starts steady: the limit from 30 s, the goals from 40 s.
        let shape = Shape::draw(37);
        assert_eq!(shape.start, Start::Steady);
        let strategies = shape.strategies().expect("strategies");
        let mut output = run(&shape.config(), &strategies[LOCAL], shape.seed).expect("runs");
        output.attempts.iter_mut().for_each(|bin| *bin = 0);
        let first = (shape.limit_from() / SECOND) as usize;
        let last = first + (WARM_UP / SECOND) as usize - 1;
        let limit = shape.limit;
        let mut send = |second: usize, times_limit: f64| {
            output.attempts[second * BINS_PER_SECOND] = (times_limit * limit) as u32;
        };
        send(first - 1, 5.0); // before the limit: not the onset
        send(first, 1.5);
        send(last, 2.0);
        send(last + 1, 4.0); // the goals' window
        let onset = measure(&shape, &output).onset_busiest;
        assert_eq!(onset, (2.0 * limit) as u32 as f64 / limit);
        let cold = Shape {
            start: Start::Cold,
            ..shape
        };
        assert!(measure(&cold, &output).onset_busiest.is_nan());
    }

    #[test]
    fn a_sweeps_csv_reads_back_as_its_results() {
        // Figures whose rounding at the report's digits a rounded CSV would change.
        let arm = |admitted: f64, cold_start: f64| ArmResult {
            admitted,
            share_429: 0.000_449_7,
            busiest: 1.062_49,
            successes: 990,
            calls: 1_000,
            cold_start,
            onset_busiest: if cold_start.is_nan() {
                1.234_56 + admitted
            } else {
                f64::NAN
            },
        };
        let results = vec![
            ShapeResult {
                shape: Shape::draw(3),
                arms: [arm(0.5, f64::NAN), arm(0.25, 12.0), arm(1.0, 1.0)],
            },
            ShapeResult {
                shape: Shape::draw(4),
                arms: [arm(0.75, 2.0), arm(0.125, f64::NAN), arm(1.0, 3.0)],
            },
            ShapeResult {
                shape: Shape::draw(5).with_max_wait(Some(2_500_000)),
                arms: [arm(0.5, 1.0), arm(0.5, 1.0), arm(1.0, 1.0)],
            },
        ];
        let read = from_csv(&csv(&results)).unwrap();
        assert_eq!(read.len(), 3);
        for (read, written) in read.iter().zip(&results) {
            assert_eq!(read.shape, written.shape);
            for (r, w) in read.arms.iter().zip(&written.arms) {
                assert_eq!(
                    (r.admitted, r.share_429, r.busiest, r.successes, r.calls),
                    (w.admitted, w.share_429, w.busiest, w.successes, w.calls)
                );
                assert_eq!(r.cold_start.is_nan(), w.cold_start.is_nan());
                assert!(
                    r.onset_busiest == w.onset_busiest
                        || r.onset_busiest.is_nan() && w.onset_busiest.is_nan()
                );
            }
        }
        // So the table made again is the table.
        assert_eq!(markdown(&read), markdown(&results));
    }

    #[test]
    fn a_csv_line_of_another_shape_or_too_few_figures_is_an_error() {
        let line = |seed: u64, shape: u64| {
            format!(
                "{seed},\"{}\"{}",
                Shape::draw(shape).to_string().replace('"', "'"),
                ",1,0,1,1,1,NaN,1.5".repeat(3)
            )
        };
        let header = "seed,shape\n";
        let read = from_csv(&format!("{header}{}", line(7, 7))).unwrap();
        assert_eq!(read[0].arms[FLEET].onset_busiest, 1.5);
        // A sweep's CSV from before the onset figure reads without it.
        let before = line(7, 7).replace(",NaN,1.5", ",NaN");
        let read = from_csv(&format!("{header}{before}")).unwrap();
        assert!(read[0].arms.iter().all(|arm| arm.onset_busiest.is_nan()));
        let other = from_csv(&format!("{header}{}", line(7, 8))).unwrap_err();
        assert!(
            other.starts_with("line 2: shape 7 is drawn otherwise"),
            "{other}"
        );
        let short = from_csv(&format!(
            "{header}{}",
            line(7, 7).trim_end_matches(",1,1,1,NaN,1.5")
        ))
        .unwrap_err();
        assert!(
            short.contains("16 figures, not 21 (or 18 from a sweep before"),
            "{short}"
        );
    }
}
