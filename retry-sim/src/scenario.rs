//! The built-in scenarios S0–S6, and the options that adjust them.

use crate::fault::{Fault, FaultKind, FaultSchedule};
use crate::fleet::arm::FleetTuning;
use crate::sim::{Arrivals, LayerConfig, SimConfig};
use crate::strategy::{BUILT_IN, StrategySpec};
use crate::time::{SECOND, secs};

/// One configuration of a scenario (e.g. S1's blackhole).
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// Short name, used in tables and file names.
    pub name: String,
    /// The run's configuration.
    pub config: SimConfig,
}

/// A scenario: variants, each run with every strategy and seed.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Identifier (`s0` … `s5`, or the name of a user's TOML file).
    pub id: String,
    /// Title for the report.
    pub title: String,
    /// What it models and how it differs from the defaults.
    pub description: String,
    /// Its variants.
    pub variants: Vec<Variant>,
    /// The strategies compared.
    pub strategies: Vec<StrategySpec>,
    /// Seeds per (variant, strategy); seed values are `1..=seeds`.
    pub seeds: u32,
}

impl Scenario {
    /// Runs in this scenario.
    ///
    /// ```
    /// let options = retry_sim::scenario::Options::default();
    /// let s1 = retry_sim::scenario::builtin("s1", &options).unwrap();
    /// assert_eq!(s1.runs(), 3 * 10 * 20);
    /// ```
    pub fn runs(&self) -> usize {
        self.variants.len() * self.strategies.len() * self.seeds as usize
    }
}

/// The built-in scenario identifiers.
pub const IDS: [&str; 7] = ["s0", "s1", "s2", "s3", "s4", "s5", "s6"];

/// The p values of S0's calibration.
pub const S0_PROBABILITIES: [f64; 6] = [0.01, 0.1, 0.3, 0.5, 0.9, 1.0];

/// Adjustments from the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Clients (S4 varies its own).
    pub clients: Option<u32>,
    /// Requests per second per client (S4 and S0 derive their own unless given).
    pub load: Option<f64>,
    /// Horizon in seconds, for every scenario.
    pub duration: Option<f64>,
    /// Seeds per (variant, strategy).
    pub seeds: u32,
    /// Run every scenario for the issue's 600 s (by default S0 runs 120 s, S2 and S5 300 s).
    pub full: bool,
    /// Closed-loop clients instead of open-loop arrivals.
    pub closed_loop: bool,
    /// Callers cancel a call at its deadline (the default).
    pub cancel_at_deadline: bool,
    /// The strategies to compare.
    pub strategies: Vec<StrategySpec>,
    /// Whether scenarios may add the strategies that answer their question (S4 adds
    /// `aws-2026-shared`, one scope for every client; the fleet scenarios choose their
    /// strategies). Off when the user chose the strategies.
    pub scenario_extras: bool,
    /// Fleet mode's beta, sync interval and lease, for the fleet scenarios' `+fleet` arms.
    pub fleet: FleetTuning,
    /// The seed H1's drawn latency shapes come from
    /// ([`SHAPE_SEED`](crate::hedge::scenarios::SHAPE_SEED) unless given): another seed draws
    /// shapes the hedging rules were not tuned on.
    pub hedge_shape_seed: Option<u64>,
}

impl Default for Options {
    /// 20 seeds, every built-in strategy, the scenarios' own sizes.
    fn default() -> Self {
        Self {
            clients: None,
            load: None,
            duration: None,
            seeds: 20,
            full: false,
            closed_loop: false,
            cancel_at_deadline: true,
            scenario_extras: true,
            fleet: FleetTuning::default(),
            hedge_shape_seed: None,
            strategies: BUILT_IN
                .iter()
                .filter_map(|name| StrategySpec::named(name).ok())
                .collect(),
        }
    }
}

fn fault(kind: FaultKind, length_s: f64) -> FaultSchedule {
    FaultSchedule::new(vec![Fault::at(kind, 120.0, length_s)])
}

/// The built-in scenario `id` (one of [`IDS`]).
///
/// ```
/// let s0 = retry_sim::scenario::builtin("s0", &Default::default()).unwrap();
/// assert_eq!(s0.variants.len(), 6);
/// ```
pub fn builtin(id: &str, options: &Options) -> Result<Scenario, String> {
    if id.starts_with('f') {
        return crate::fleet::scenarios::builtin(id, options);
    }
    if id.starts_with('h') {
        return crate::hedge::scenarios::builtin(id, options);
    }
    let base = |default_secs: f64| {
        let mut config = SimConfig::new();
        let horizon = options
            .duration
            .unwrap_or(if options.full { 600.0 } else { default_secs });
        config.horizon = secs(horizon);
        if let Some(clients) = options.clients {
            config.layers[0].instances = clients;
        }
        if let Some(load) = options.load {
            config.rate = load;
        }
        if options.closed_loop {
            config.arrivals = Arrivals::Closed;
        }
        config.cancel_at_deadline = options.cancel_at_deadline;
        config
    };
    let variant = |name: &str, config: SimConfig| Variant {
        name: name.to_owned(),
        config,
    };
    let (title, description, variants) = match id {
        "s0" => {
            let variants = S0_PROBABILITIES
                .iter()
                .map(|&p| {
                    let mut config = base(120.0);
                    if options.load.is_none() {
                        config.rate = 2.0;
                    }
                    config.max_attempts = 4;
                    config.layers[0].deadline = 60 * SECOND;
                    config.faults = FaultSchedule::new(vec![Fault {
                        kind: FaultKind::Failures { probability: p },
                        start: 0,
                        end: u64::MAX,
                    }]);
                    variant(&format!("p={p}"), config)
                })
                .collect();
            (
                "S0 — calibration",
                "Each served attempt fails (500) independently with probability p; 3 retries (4 attempts), \
                 no timed fault. The load is 100 clients × 2 req/s so that even 4 attempts per request \
                 (800/s) stay under the 1000/s capacity, and the deadline is 60 s so that it never cuts \
                 a retry: the analytic values (attempts = Σ_{k<4} p^k, success = 1 − p^4) then hold for \
                 strategies without a budget. Metrics over [10 s, end).",
                variants,
            )
        }
        "s1" => (
            "S1 — full outage for 60 s",
            "At 120 s the service goes down for 60 s: `fast-fail` answers every attempt with 503 at \
             once; `blackhole` answers nothing, so every attempt times out after 1 s; `fast-fail, \
             closed loop` is the fast-fail outage with closed-loop clients (each issues its next \
             request an exponential think time of mean 1/7 s after the previous one ended). Metrics \
             over the outage [120 s, 180 s); R95 from 180 s.",
            vec![
                variant("fast-fail", {
                    let mut c = base(600.0);
                    c.faults = fault(FaultKind::Outage, 60.0);
                    c
                }),
                variant("blackhole", {
                    let mut c = base(600.0);
                    c.faults = fault(FaultKind::Blackhole, 60.0);
                    c
                }),
                variant("fast-fail, closed loop", {
                    let mut c = base(600.0);
                    c.arrivals = Arrivals::Closed;
                    c.faults = fault(FaultKind::Outage, 60.0);
                    c
                }),
            ],
        ),
        "s2" => (
            "S2 — brownout and load spike",
            "`brownout`: at 120 s half the workers stop for 60 s (capacity 500/s under a 700/s load); \
             the queue of 500 then holds 1 s of work, so queued attempts time out. `spike`: at 120 s \
             the arrival rate doubles (1400/s) for 30 s. Metrics over the fault window.",
            vec![
                variant("brownout", {
                    let mut c = base(300.0);
                    c.faults = fault(FaultKind::Brownout { capacity: 0.5 }, 60.0);
                    c
                }),
                variant("spike", {
                    let mut c = base(300.0);
                    c.faults = fault(FaultKind::LoadSpike { factor: 2.0 }, 30.0);
                    c
                }),
            ],
        ),
        "s3" => (
            "S3 — throttling at 500/s",
            "At 120 s the service starts admitting 500 attempts/s (a token bucket of 50) for 120 s and \
             answers the rest at once with 429 and `Retry-After: 1`. Goodput is normalized by the \
             500/s limit. Metrics over [120 s, 240 s).",
            vec![variant("throttle", {
                let mut c = base(600.0);
                c.faults = fault(
                    FaultKind::Throttle {
                        rate: 500.0,
                        burst: 50.0,
                        retry_after: SECOND,
                    },
                    120.0,
                );
                c
            })],
        ),
        "s4" => {
            let total = options.load.unwrap_or(7.0) * f64::from(options.clients.unwrap_or(100));
            let variants = [10u32, 100, 1000]
                .iter()
                .map(|&clients| {
                    let mut c = base(600.0);
                    c.layers[0].instances = clients;
                    c.rate = total / f64::from(clients);
                    c.faults = fault(FaultKind::Outage, 60.0);
                    variant(&format!("{clients} clients"), c)
                })
                .collect();
            (
                "S4 — the same load over 10, 100 and 1000 clients",
                "S1's fast-fail outage with the same total load (700 req/s) split over 10, 100 and 1000 \
                 clients. Per-client budgets (quotas, token counts) multiply with the number of clients; \
                 `default` sizes each client's quota by its own measured call rate (one token per \
                 call of the last 60 s), so the fleet's budget follows the load, not the client count. \
                 `aws-2026-shared` (one scope for all clients) is added for comparison.",
                variants,
            )
        }
        "s5" => {
            let layered = |retry_inner: bool| {
                let mut c = base(300.0);
                c.faults = fault(FaultKind::Outage, 60.0);
                for _ in 0..2 {
                    c.layers.push(LayerConfig {
                        instances: 10,
                        attempt_timeout: SECOND,
                        deadline: SECOND,
                        retries: retry_inner,
                    });
                }
                c
            };
            (
                "S5 — three layers each retrying vs retrying at one layer",
                "Clients → tier A (10 instances) → tier B (10 instances) → server, S1's fast-fail \
                 outage. `every layer`: the clients and both tiers retry with the strategy (3 attempts \
                 each: up to 27 attempts at the server per request); `top only`: the tiers make one \
                 attempt and only the clients retry. Tier calls have a 1 s deadline (their caller's \
                 attempt timeout). Amplification is attempts at the server per client request.",
                vec![
                    variant("every layer", layered(true)),
                    variant("top only", layered(false)),
                ],
            )
        }
        "s6" => (
            "S6 — a hot key: 30 % of requests throttled whatever the rate",
            "At 120 s, for 120 s, the service answers 30 % of the attempts (chosen at random) at once \
             with 429 and `Retry-After: 1`, whatever the rate it receives (one hot key): sending \
             slower does not relieve it, so a client that lowers its rate on every throttle only \
             starves itself. The capacity in the window is the 70 % the service accepts (700/s of \
             the healthy 1000/s); goodput is normalized by `min(offered, that)`. Metrics over \
             [120 s, 240 s).",
            vec![variant("hot key", {
                let mut c = base(300.0);
                c.faults = fault(
                    FaultKind::HotKey {
                        share: 0.3,
                        retry_after: SECOND,
                    },
                    120.0,
                );
                c
            })],
        ),
        other => {
            return Err(format!(
                "unknown scenario `{other}`: expected one of {}, `all`, {} or `fleet`, {} or \
                 `hedge`",
                IDS.join(", "),
                crate::fleet::scenarios::FLEET_IDS.join(", "),
                crate::hedge::scenarios::HEDGE_IDS.join(", ")
            ));
        }
    };
    let mut strategies = options.strategies.clone();
    if id == "s4" && options.scenario_extras {
        for extra in ["aws-2026-shared"] {
            if !strategies.iter().any(|s| s.name == extra) {
                strategies.push(StrategySpec::named(extra)?);
            }
        }
    }
    Ok(Scenario {
        id: id.to_owned(),
        title: title.to_owned(),
        description: description.to_owned(),
        variants,
        strategies,
        seeds: options.seeds.max(1),
    })
}
