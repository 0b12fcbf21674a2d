//! The fleets of the shape sweep: drawn at random from a seed, as users run them. Each shape is
//! a fleet (2 to 1,000 processes, each its own demand, up to 20 times another's, arriving
//! Poisson, in on/off bursts or periodically), a server's limit (50 to 5,000 requests per
//! second, a bucket burst of 0 to 20 % of it, random 5xx on 0 to 20 % of the attempts it
//! admits), fleet mode's sync interval (250 ms to 5 s), a cold or a steady start, each
//! process's start-up (0 to 3 s from its start, when it makes its scope and syncs, to its first
//! request), processes joining, leaving or crashing (up to half the fleet), and a store fault
//! (down, paused, slow, flushed, restarted empty, or writes failing for part of the fleet).

use std::fmt;
use std::time::Duration;

use super::arm::{Arm, FleetTuning};
use super::process::{Ending, ProcessArrivals, ProcessSpec};
use super::store_fault::{StoreFault, StoreFaultKind, StoreFaults};
use crate::fault::{Fault, FaultKind, FaultSchedule};
use crate::rng::Rng;
use crate::server::{ServerConfig, ServiceTime};
use crate::sim::SimConfig;
use crate::strategy::{StrategyKind, StrategySpec};
use crate::time::{MILLI, Nanos, SECOND, secs};

/// How a shape's description names its max wait, before the milliseconds.
const MAX_WAIT_LABEL: &str = ", max wait ";

/// The least and most processes of a shape.
pub const PROCESSES: (f64, f64) = (2.0, 1_000.0);

/// The least and most server limits, requests per second.
pub const LIMITS: (f64, f64) = (50.0, 5_000.0);

/// The most one process's demand may be over another's.
pub const MOST_SKEW: f64 = 20.0;

/// The least and most offered load, over the limit.
pub const LOADS: (f64, f64) = (0.6, 3.0);

/// The most of the limit the server's bucket may hold beyond it, as a burst.
pub const MOST_BURST: f64 = 0.2;

/// The most random 5xx among the attempts the server admits.
pub const MOST_ERRORS: f64 = 0.2;

/// The longest start-up of a process: its first request comes up to this long after it starts
/// (drawn uniformly from none), as an application makes its client at start-up and calls once
/// it is ready. The fleet harness's processes start calling 2 s after they start.
pub const MOST_STARTING: Nanos = 3 * SECOND;

/// The shortest and longest sync intervals.
pub const SYNC_INTERVALS: (Nanos, Nanos) = (250 * MILLI, 5 * SECOND);

/// How long the goals are measured over, after the warm-up.
pub const MEASURED: Nanos = 110 * SECOND;

/// The warm-up after the limit starts, not measured.
pub const WARM_UP: Nanos = 10 * SECOND;

/// When a steady start's limit starts: the fleet has run unthrottled until then.
pub const STEADY_FOR: Nanos = 30 * SECOND;

/// The server's mean service time (no queue, as many workers as attempts: the limit is the
/// only constraint).
pub const SERVICE: Nanos = 10 * MILLI;

/// The callers' deadline, and each attempt's timeout.
pub const DEADLINE: Nanos = 5 * SECOND;

/// How the fleet starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Everything from zero: the limit from the first request, no state anywhere.
    Cold,
    /// The fleet ran unthrottled for [`STEADY_FOR`] before the limit starts.
    Steady,
}

/// How the processes' demands differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Skew {
    /// Each process's weight drawn log-uniform within `1..=max` of the least's.
    Spread(f64),
    /// A few heavy processes (`heavy` of them) at `max` times the others.
    Tiers {
        /// How many are heavy.
        heavy: usize,
        /// How much heavier.
        max: f64,
    },
}

/// Which processes join, leave or crash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Churn {
    /// None: every process the whole run.
    None,
    /// `n` processes join during the run.
    Joining(usize),
    /// `n` processes leave.
    Leaving(usize),
    /// `n` processes crash.
    Crashing(usize),
    /// `n` join and as many crash (autoscaling with crashes).
    Autoscaling(usize),
}

/// One shape of the sweep: a fleet and everything around it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// Its seed: the shape and every run of it.
    pub seed: u64,
    /// The server's limit, requests per second.
    pub limit: f64,
    /// The server's bucket, requests (at least 1).
    pub burst: f64,
    /// The offered load over the limit, with every process alive.
    pub load: f64,
    /// Random 5xx among admitted attempts.
    pub errors: f64,
    /// Attempts per call.
    pub max_attempts: u32,
    /// Fleet mode's sync interval.
    pub sync_interval: Nanos,
    /// How the fleet starts.
    pub start: Start,
    /// How the demand is spread.
    pub skew: Skew,
    /// How requests arrive (the shape's kind; `None`: each process its own).
    pub arrivals: Option<ProcessArrivals>,
    /// Who joins, leaves, crashes.
    pub churn: Churn,
    /// The store's fault, if any.
    pub store_fault: Option<StoreFault>,
    /// The processes.
    pub processes: Vec<ProcessSpec>,
    /// The longest a call waits for its send permit (adaptive mode's `max_wait` in local and
    /// fleet mode, the longest wait for its turn in the static split), or `None` for its
    /// deadline ([`DEADLINE`]). Not drawn: the sweep's callers choose it (`--max-wait`), as
    /// the fleet harness's do (100 ms there).
    pub max_wait: Option<Nanos>,
}

/// Log-uniform within `(low, high)`.
fn log_uniform(rng: &mut Rng, (low, high): (f64, f64)) -> f64 {
    (low.ln() + rng.next_f64() * (high.ln() - low.ln())).exp()
}

/// One of `items` by their weights.
fn pick<T: Copy>(rng: &mut Rng, items: &[(u32, T)]) -> T {
    let total: u32 = items.iter().map(|(w, _)| w).sum();
    let mut at = rng.below(u64::from(total)) as u32;
    for &(weight, item) in items {
        if at < weight {
            return item;
        }
        at -= weight;
    }
    items[items.len() - 1].1
}

impl Shape {
    /// The shape of `seed`.
    ///
    /// ```
    /// use retry_sim::fleet::shape::Shape;
    /// let shape = Shape::draw(7);
    /// assert_eq!(shape, Shape::draw(7));
    /// assert!((2..=1_000).contains(&shape.processes.len()));
    /// assert!((50.0..=5_000.0).contains(&shape.limit));
    /// ```
    pub fn draw(seed: u64) -> Self {
        let mut rng = Rng::stream(seed, 0x5a4e);
        let n = log_uniform(&mut rng, PROCESSES).round() as usize;
        let limit = log_uniform(&mut rng, LIMITS).round();
        let burst = (limit * rng.next_f64() * MOST_BURST).round().max(1.0);
        let load = log_uniform(&mut rng, LOADS);
        let errors = if rng.chance(0.3) {
            0.0
        } else {
            (rng.next_f64() * MOST_ERRORS * 1_000.0).round() / 1_000.0
        };
        let max_attempts = if rng.chance(0.3) { 5 } else { 3 };
        let interval = log_uniform(&mut rng, (SYNC_INTERVALS.0 as f64, SYNC_INTERVALS.1 as f64));
        let sync_interval = (interval / MILLI as f64).round() as Nanos * MILLI;
        let start = if rng.chance(0.5) {
            Start::Cold
        } else {
            Start::Steady
        };
        // Even, spread or tiered: the kind first, then its figures (the same draws as before).
        let skew = match pick(&mut rng, &[(1, 0), (2, 1), (1, 2)]) {
            0 => Skew::Spread(1.0),
            1 => Skew::Spread(log_uniform(&mut rng, (1.0, MOST_SKEW))),
            _ => Skew::Tiers {
                heavy: 1 + rng.below((n as u64 / 3).max(1)) as usize,
                max: log_uniform(&mut rng, (2.0, MOST_SKEW)),
            },
        };
        let arrivals = pick(
            &mut rng,
            &[(4, Some(0)), (3, Some(1)), (2, Some(2)), (1, None)],
        );
        let on_off = |rng: &mut Rng| ProcessArrivals::OnOff {
            on: secs(0.5 + 4.5 * rng.next_f64()),
            off: secs(0.5 + 9.5 * rng.next_f64()),
        };
        let arrivals = arrivals.map(|kind| match kind {
            0 => ProcessArrivals::Poisson,
            1 => on_off(&mut rng),
            _ => ProcessArrivals::Periodic,
        });
        let limit_from = match start {
            Start::Cold => 0,
            Start::Steady => STEADY_FOR,
        };
        let horizon = limit_from + WARM_UP + MEASURED;
        let measured_from = limit_from + WARM_UP;
        let most_churn = (n / 2).max(1);
        let churned = 1 + rng.below(most_churn as u64) as usize;
        let churn = pick(
            &mut rng,
            &[
                (4, Churn::None),
                (2, Churn::Joining(churned)),
                (1, Churn::Leaving(churned)),
                (2, Churn::Crashing(churned)),
                (1, Churn::Autoscaling(churned.div_ceil(2))),
            ],
        );
        let weights: Vec<f64> = (0..n)
            .map(|i| match skew {
                Skew::Spread(max) => max.powf(rng.next_f64()),
                Skew::Tiers { heavy, max } => {
                    if i < heavy {
                        max
                    } else {
                        1.0
                    }
                }
            })
            .collect();
        let total: f64 = weights.iter().sum();
        let offered = load * limit;
        let mut processes: Vec<ProcessSpec> = weights
            .iter()
            .map(|w| ProcessSpec {
                rate: offered * w / total,
                arrivals: arrivals.unwrap_or_else(|| match rng.below(3) {
                    0 => ProcessArrivals::Poisson,
                    1 => on_off(&mut rng),
                    _ => ProcessArrivals::Periodic,
                }),
                joins: 0,
                starting: 0,
                ends: None,
            })
            .collect();
        let during = |rng: &mut Rng| {
            measured_from + (rng.next_f64() * (MEASURED - 20 * SECOND) as f64) as Nanos
        };
        // The churned processes are the last ones (the weights are drawn in no order).
        let (joining, ending, ending_as) = match churn {
            Churn::None => (0, 0, Ending::Leaves),
            Churn::Joining(k) => (k, 0, Ending::Leaves),
            Churn::Leaving(k) => (0, k, Ending::Leaves),
            Churn::Crashing(k) => (0, k, Ending::Crashes),
            Churn::Autoscaling(k) => (k, k, Ending::Crashes),
        };
        for process in processes.iter_mut().rev().take(joining) {
            process.joins = during(&mut rng);
        }
        for process in processes.iter_mut().take(n - joining).rev().take(ending) {
            process.ends = Some((during(&mut rng), ending_as));
        }
        // From a stream of their own, so that the rest of each shape is drawn as before.
        let mut starting = Rng::stream(seed, 0x57a2);
        for process in &mut processes {
            process.starting = (starting.next_f64() * MOST_STARTING as f64) as Nanos;
        }
        let store_fault = Self::draw_store_fault(&mut rng, measured_from, horizon);
        Self {
            seed,
            limit,
            burst,
            load,
            errors,
            max_attempts,
            sync_interval,
            start,
            skew,
            arrivals,
            churn,
            store_fault,
            processes,
            max_wait: None,
        }
    }

    /// The max wait a shape's description (its `Display`) names, `None` if it names none.
    ///
    /// ```
    /// use retry_sim::fleet::shape::Shape;
    /// let described = Shape::draw(7).with_max_wait(Some(2_500_000)).to_string();
    /// assert_eq!(Shape::described_max_wait(&described), Ok(Some(2_500_000)));
    /// assert_eq!(Shape::described_max_wait(&Shape::draw(7).to_string()), Ok(None));
    /// ```
    pub fn described_max_wait(described: &str) -> Result<Option<Nanos>, String> {
        let Some((_, wait)) = described.rsplit_once(MAX_WAIT_LABEL) else {
            return Ok(None);
        };
        let ms = wait
            .strip_suffix(" ms")
            .and_then(|ms| ms.parse::<f64>().ok());
        let ms = ms.ok_or_else(|| format!("max wait {wait:?}: not milliseconds"))?;
        Ok(Some((ms * MILLI as f64).round() as Nanos))
    }

    /// The shape with its callers waiting at most `max_wait` for a send permit
    /// ([`max_wait`](Self::max_wait)).
    ///
    /// ```
    /// use retry_sim::fleet::shape::Shape;
    /// let shape = Shape::draw(7).with_max_wait(Some(100_000_000));
    /// assert_eq!(shape.max_wait, Some(100_000_000));
    /// assert!(shape.to_string().ends_with("max wait 100 ms"));
    /// ```
    pub fn with_max_wait(self, max_wait: Option<Nanos>) -> Self {
        Self { max_wait, ..self }
    }

    fn draw_store_fault(rng: &mut Rng, from: Nanos, horizon: Nanos) -> Option<StoreFault> {
        let kind = pick(
            rng,
            &[
                (8, None),
                (2, Some(StoreFaultKind::Down)),
                (1, Some(StoreFaultKind::Paused)),
                (1, Some(StoreFaultKind::Slow { rtt: 0 })),
                (2, Some(StoreFaultKind::Flushed)),
                (1, Some(StoreFaultKind::RestartedEmpty)),
                (
                    5,
                    Some(StoreFaultKind::PartialWrites {
                        share_ppm: 0,
                        per_command: false,
                    }),
                ),
            ],
        )?;
        let kind = match kind {
            StoreFaultKind::Slow { .. } => StoreFaultKind::Slow {
                rtt: secs(0.1 + 0.9 * rng.next_f64()),
            },
            StoreFaultKind::PartialWrites { .. } => {
                let per_command = rng.chance(0.4);
                let share = if per_command {
                    0.5 + 0.45 * rng.next_f64()
                } else {
                    0.1 + 0.8 * rng.next_f64()
                };
                StoreFaultKind::PartialWrites {
                    share_ppm: (share * 1e6) as u32,
                    per_command,
                }
            }
            other => other,
        };
        let latest = horizon.saturating_sub(40 * SECOND).max(from);
        let start = from + (rng.next_f64() * (latest - from) as f64) as Nanos;
        let length = 5.0 + 25.0 * rng.next_f64();
        Some(StoreFault::at(kind, start as f64 / SECOND as f64, length))
    }

    /// When the server's limit starts.
    pub fn limit_from(&self) -> Nanos {
        match self.start {
            Start::Cold => 0,
            Start::Steady => STEADY_FOR,
        }
    }

    /// The measured window: from the warm-up's end to the horizon.
    pub fn measured(&self) -> (Nanos, Nanos) {
        let from = self.limit_from() + WARM_UP;
        (from, from + MEASURED)
    }

    /// The attempts a call makes on average at the shape's 5xx, unthrottled.
    pub fn attempts_per_call(&self) -> f64 {
        (0..self.max_attempts)
            .map(|k| self.errors.powi(k as i32))
            .sum()
    }

    /// The run's configuration.
    pub fn config(&self) -> SimConfig {
        let mut config = SimConfig::new();
        let (_, horizon) = self.measured();
        config.horizon = horizon;
        config.server = ServerConfig {
            workers: 1_000_000,
            service: ServiceTime::Exponential { mean: SERVICE },
            queue: 0,
        };
        config.layers[0].instances = self.processes.len() as u32;
        config.layers[0].deadline = DEADLINE;
        config.max_attempts = self.max_attempts;
        config.processes = self.processes.clone();
        config.split_max_wait = self.max_wait;
        let start = self.limit_from() as f64 / SECOND as f64;
        let mut faults = vec![Fault::at(
            FaultKind::Throttle {
                rate: self.limit,
                burst: self.burst,
                retry_after: SECOND,
            },
            start,
            1e6,
        )];
        if self.errors > 0.0 {
            faults.push(Fault {
                kind: FaultKind::Failures {
                    probability: self.errors,
                },
                start: 0,
                end: Nanos::MAX,
            });
        }
        config.faults = FaultSchedule::new(faults);
        config.store.faults = StoreFaults::new(self.store_fault.into_iter().collect());
        config
    }

    /// The three arms' strategies: local mode, fleet mode (at the shape's sync interval) and
    /// the static split, on the default configuration in adaptive mode (the split in standard
    /// mode behind its buckets).
    pub fn strategies(&self) -> Result<[StrategySpec; 3], String> {
        let mut base = StrategySpec::named("default-adaptive")?;
        if let (Some(wait), StrategyKind::Ours { config, .. }) = (self.max_wait, &mut base.kind) {
            *config = config
                .to_builder()
                .max_wait(Duration::from_nanos(wait))
                .build()
                .map_err(|e| e.to_string())?;
        }
        let tuning = FleetTuning {
            sync_interval: self.sync_interval,
            ..FleetTuning::default()
        };
        Ok([
            base.clone(),
            base.clone().on_arm(Arm::Fleet(tuning))?,
            StrategySpec::named("default")?.on_arm(Arm::StaticSplit)?,
        ])
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let arrivals = self.arrivals.map_or("mixed", |a| a.name());
        let skew = match self.skew {
            Skew::Spread(max) => format!("skew {max:.1}x"),
            Skew::Tiers { heavy, max } => format!("{heavy} heavy at {max:.1}x"),
        };
        let churn = match self.churn {
            Churn::None => String::new(),
            Churn::Joining(k) => format!(", {k} join"),
            Churn::Leaving(k) => format!(", {k} leave"),
            Churn::Crashing(k) => format!(", {k} crash"),
            Churn::Autoscaling(k) => format!(", {k} join + {k} crash"),
        };
        let wait = self.max_wait.map_or(String::new(), |wait| {
            format!("{MAX_WAIT_LABEL}{} ms", wait as f64 / MILLI as f64)
        });
        let fault = match self.store_fault {
            None => String::new(),
            Some(fault) => {
                let what = match fault.kind {
                    StoreFaultKind::PartialWrites {
                        share_ppm,
                        per_command,
                    } => format!(
                        "writes failing for {:.0} % of the {}",
                        f64::from(share_ppm) / 1e4,
                        if per_command { "commands" } else { "processes" }
                    ),
                    kind => kind.name().to_owned(),
                };
                format!(
                    ", store {what} {:.0}-{:.0} s",
                    fault.start as f64 / SECOND as f64,
                    fault.end as f64 / SECOND as f64
                )
            }
        };
        write!(
            f,
            "#{}: {} processes, {arrivals}, {skew}, load {:.2}x of {}/s (burst {}), 5xx {:.0} %, \
             {} attempts, sync {} ms, {} start{churn}{fault}{wait}",
            self.seed,
            self.processes.len(),
            self.load,
            self.limit,
            self.burst,
            self.errors * 100.0,
            self.max_attempts,
            self.sync_interval / MILLI,
            match self.start {
                Start::Cold => "cold",
                Start::Steady => "steady",
            },
        )
    }
}
