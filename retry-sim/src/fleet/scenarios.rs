//! The fleet's scenarios: S3's throttling and S1's outage over a fleet of processes, the three
//! arms side by side; the store's faults in the middle of the throttling; and the sweep that
//! chooses the fleet limiter's beta and the sync interval.

use super::arm::{Arm, FleetTuning};
use super::store_fault::{StoreFault, StoreFaultKind, StoreFaults};
use crate::fault::{Fault, FaultKind, FaultSchedule};
use crate::scenario::{Options, Scenario, Variant};
use crate::sim::SimConfig;
use crate::strategy::{StrategyKind, StrategySpec};
use crate::time::{MILLI, SECOND, secs};

/// The fleet scenarios' identifiers (run by `-s fleet`).
pub const FLEET_IDS: [&str; 3] = ["f1", "f3", "ff"];

/// The sweep's identifier (run by `-s fsweep`): it is not among [`FLEET_IDS`].
pub const SWEEP_ID: &str = "fsweep";

/// The processes of S3 over a fleet.
pub const F3_PROCESSES: u32 = 1_000;

/// Each process's request rate in S3 over a fleet: 0.7/s, 700/s in all.
pub const F3_RATE: f64 = 0.7;

/// The server's limit in S3: 500 attempts/s.
pub const F3_LIMIT: f64 = 500.0;

/// The fleet sizes of S1 over a fleet, 700 requests/s in all.
pub const F1_PROCESSES: [u32; 4] = [10, 100, 1_000, 10_000];

/// The fleet's requests per second in S1 over a fleet.
pub const F1_TOTAL_RATE: f64 = 700.0;

/// When the store's fault starts in the fault runs: 40 s into the throttling.
pub const STORE_FAULT_START_S: f64 = 160.0;

/// How long the store's fault lasts in the fault runs (a restart: how long it is down).
pub const STORE_FAULT_LENGTH_S: f64 = 10.0;

/// A slow store's round trip in the fault runs: longer than the command timeout (a quarter of
/// the sync interval), so that every sync meanwhile times out.
pub const SLOW_STORE_RTT: u64 = 400 * MILLI;

/// The betas the sweep tries, in parts per million (AWS's per-client 0.7 first).
pub const SWEEP_BETAS: [u64; 5] = [700_000, 800_000, 900_000, 950_000, 980_000];

/// The sync intervals the sweep tries.
pub const SWEEP_INTERVALS: [u64; 4] = [250 * MILLI, 500 * MILLI, SECOND, 2 * SECOND];

/// The retry-core strategy S3's arms run by default: the default configuration in adaptive
/// mode (fleet mode needs a quota sized by traffic; the `adaptive` preset's is fixed).
pub const F3_STRATEGY: &str = "default-adaptive";

/// The retry-core strategy S1's arms run by default: the default configuration.
pub const F1_STRATEGY: &str = "default";

/// The fleet scenario `id` ([`FLEET_IDS`] or [`SWEEP_ID`]).
///
/// ```
/// let options = retry_sim::scenario::Options::default();
/// let f3 = retry_sim::fleet::scenarios::builtin("f3", &options).unwrap();
/// assert_eq!(f3.strategies.len(), 3);
/// assert_eq!(f3.variants[0].config.layers[0].instances, 1_000);
/// ```
pub fn builtin(id: &str, options: &Options) -> Result<Scenario, String> {
    let (title, description, variants, strategies) = match id {
        "f1" => (
            "F1 — S1's outage over a fleet of 10 to 10,000 processes",
            "S1's fast-fail outage (120 s to 180 s) with 700 requests/s split over 10, 100, 1000 and \
             10,000 processes (10,000 × 0.07/s). Amplification over the outage.",
            F1_PROCESSES
                .iter()
                .map(|&processes| {
                    let mut config = base(options, processes, F1_TOTAL_RATE / f64::from(processes));
                    config.faults = one_fault(FaultKind::Outage, 60.0);
                    variant(&format!("{processes} processes"), config)
                })
                .collect(),
            arms(options, F1_STRATEGY)?,
        ),
        "f3" => (
            "F3 — S3's throttling over a fleet of 1000 processes",
            "1000 processes × 0.7 requests/s (700/s); from 120 s to 240 s the server admits 500 \
             attempts/s (a bucket of 50) and answers the rest 429 with `Retry-After: 1`.",
            vec![variant("1000 processes", throttled(options))],
            arms(options, F3_STRATEGY)?,
        ),
        "ff" => (
            "FF — the store's faults in the middle of F3's throttling",
            "F3, fleet mode, with the store failing at 160 s (40 s into the throttling): down for \
             10 s (commands never answered), paused for 10 s (commands answered when it resumes), \
             slow for 10 s (a 400 ms round trip, past the command timeout), flushed (keys and \
             script lost), restarted empty (down 10 s, then empty).",
            fault_variants(options),
            fleet_only(options, F3_STRATEGY)?,
        ),
        SWEEP_ID => (
            "Sweep — the fleet limiter's beta and the sync interval on F3",
            "F3, fleet mode, for every beta and sync interval of the sweep.",
            vec![variant("1000 processes", throttled(options))],
            sweep(options)?,
        ),
        other => {
            return Err(format!(
                "unknown fleet scenario `{other}`: expected one of {}, {SWEEP_ID} or `fleet`",
                FLEET_IDS.join(", ")
            ));
        }
    };
    Ok(Scenario {
        id: id.to_owned(),
        title: title.to_owned(),
        description: description.to_owned(),
        variants,
        strategies,
        seeds: options.seeds.max(1),
    })
}

fn variant(name: &str, config: SimConfig) -> Variant {
    Variant {
        name: name.to_owned(),
        config,
    }
}

/// A fleet of `processes` at `rate` each, 300 s (the options' duration if given).
fn base(options: &Options, processes: u32, rate: f64) -> SimConfig {
    let mut config = SimConfig::new();
    config.horizon = secs(options.duration.unwrap_or(300.0));
    config.layers[0].instances = options.clients.unwrap_or(processes);
    config.rate = options.load.unwrap_or(rate);
    config.cancel_at_deadline = options.cancel_at_deadline;
    config
}

fn one_fault(kind: FaultKind, length_s: f64) -> FaultSchedule {
    FaultSchedule::new(vec![Fault::at(kind, 120.0, length_s)])
}

/// F3's configuration: S3's throttling over 1000 processes.
fn throttled(options: &Options) -> SimConfig {
    let mut config = base(options, F3_PROCESSES, F3_RATE);
    config.faults = one_fault(
        FaultKind::Throttle {
            rate: F3_LIMIT,
            burst: 50.0,
            retry_after: SECOND,
        },
        120.0,
    );
    config
}

fn fault_variants(options: &Options) -> Vec<Variant> {
    let kinds = [
        None,
        Some(StoreFaultKind::Down),
        Some(StoreFaultKind::Paused),
        Some(StoreFaultKind::Slow {
            rtt: SLOW_STORE_RTT,
        }),
        Some(StoreFaultKind::Flushed),
        Some(StoreFaultKind::RestartedEmpty),
    ];
    kinds
        .into_iter()
        .map(|kind| {
            let mut config = throttled(options);
            let name = match kind {
                None => "no store fault".to_owned(),
                Some(kind) => {
                    config.store.faults = StoreFaults::new(vec![StoreFault::at(
                        kind,
                        STORE_FAULT_START_S,
                        STORE_FAULT_LENGTH_S,
                    )]);
                    format!("store {}", kind.name())
                }
            };
            variant(&name, config)
        })
        .collect()
}

/// The strategies whose arms are compared: the user's `retry-core` strategies, or `default`.
fn bases(options: &Options, default: &str) -> Result<Vec<StrategySpec>, String> {
    if options.scenario_extras {
        return Ok(vec![StrategySpec::named(default)?]);
    }
    Ok(options
        .strategies
        .iter()
        .filter(|spec| {
            matches!(spec.kind, StrategyKind::Ours { .. }) && spec.arm() == Arm::PerProcess
        })
        .cloned()
        .collect())
}

/// Each base strategy on the three arms.
fn arms(options: &Options, default: &str) -> Result<Vec<StrategySpec>, String> {
    let mut specs = Vec::new();
    for spec in bases(options, default)? {
        specs.push(spec.clone());
        specs.push(spec.clone().on_arm(Arm::NaiveStore)?);
        specs.push(spec.on_arm(Arm::Fleet(options.fleet))?);
    }
    nonempty(specs)
}

/// Each base strategy in fleet mode only.
fn fleet_only(options: &Options, default: &str) -> Result<Vec<StrategySpec>, String> {
    let specs = bases(options, default)?
        .into_iter()
        .map(|spec| spec.on_arm(Arm::Fleet(options.fleet)))
        .collect::<Result<Vec<_>, _>>()?;
    nonempty(specs)
}

/// Each base strategy in fleet mode with every beta and interval of the sweep, named
/// `<strategy>+fleet β<beta> <interval>`.
fn sweep(options: &Options) -> Result<Vec<StrategySpec>, String> {
    let mut specs = Vec::new();
    for spec in bases(options, F3_STRATEGY)? {
        for interval in SWEEP_INTERVALS {
            for beta_ppm in SWEEP_BETAS {
                let tuning = FleetTuning {
                    beta_ppm,
                    sync_interval: interval,
                    ..options.fleet
                };
                let mut fleet = spec.clone().on_arm(Arm::Fleet(tuning))?;
                fleet.name = format!(
                    "{} β{} {} ms",
                    fleet.name,
                    beta_ppm as f64 / 1e6,
                    interval / MILLI
                );
                specs.push(fleet);
            }
        }
    }
    nonempty(specs)
}

fn nonempty(specs: Vec<StrategySpec>) -> Result<Vec<StrategySpec>, String> {
    if specs.is_empty() {
        return Err(
            "the fleet scenarios compare retry-core's strategies (default, default-adaptive, \
             aws-2026, ...): none was selected"
                .into(),
        );
    }
    Ok(specs)
}
