//! The hedging scenarios: H1, the long tail with every hedging arm, over the paper's shape and
//! shapes drawn from its family; HS1 and HS3, S1's outage and S3's throttling with hedging on.

use super::HedgeSpec;
use super::grpc::GrpcHedgingSpec;
use super::ours::OursHedgeSpec;
use super::tower::TowerHedgeSpec;
use crate::latency::TailLatency;
use crate::rng::Rng;
use crate::scenario::{Options, Scenario, Variant, builtin as builtin_scenario};
use crate::server::ServiceTime;
use crate::sim::SimConfig;
use crate::strategy::StrategySpec;
use crate::time::{SECOND, secs};

/// The hedging scenarios' identifiers (run by `-s hedge`).
pub const HEDGE_IDS: [&str; 3] = ["h1", "hs1", "hs3"];

/// tower's `hedge` layer as modelled, by name: a hedge after the p95 (the paper's
/// percentile) of the last period's latencies. Any percentile: `tower-hedge-p<percentile>`.
pub const TOWER: &str = "tower-hedge-p95";

/// gRPC's hedging policy with the paper's 10 ms delay (A6's example is 0.5 s, for slower
/// calls): on H1's paper shape, 2 % of the answers are slower. Any delay:
/// `grpc-hedging-<delay>`.
pub const GRPC: &str = "grpc-hedging-10ms";

/// gRPC's hedging policy with S1's and S3's p95 as its delay, as the service's owner would
/// set it: their server's answers are exponential of mean 50 ms (p95 150 ms) and rarely queue.
pub const GRPC_S1: &str = "grpc-hedging-150ms";

/// tower's layer's settings besides the percentile: hedging from 10 recorded latencies on
/// (tower's own tests use 10), the histograms rotating every 10 s (tower has no default; its
/// tests use 60 s). The period decides how long tower keeps hedging with nothing succeeding:
/// one to two periods.
const TOWER_MIN_DATA_POINTS: u64 = 10;

/// tower's layer's rotation period (see [`TOWER_MIN_DATA_POINTS`]).
const TOWER_PERIOD: u64 = 10 * SECOND;

/// gRPC's policy besides its delay: 3 copies at most (the simulator's attempts per call),
/// throttled by A6's example `retryThrottling` (10 tokens, 0.1 per success).
const GRPC_MAX_ATTEMPTS: u32 = 3;

/// A6's example `retryThrottling.maxTokens`.
const GRPC_MAX_TOKENS: f64 = 10.0;

/// A6's example `retryThrottling.tokenRatio`.
const GRPC_TOKEN_RATIO: f64 = 0.1;

/// The hedging baseline `name` stands for, if it has the form `tower-hedge-p<percentile>`
/// or `grpc-hedging-<delay>`; an error when the form's number is not valid.
///
/// ```
/// use retry_sim::hedge::scenarios::baseline;
/// assert!(baseline("tower-hedge-p99").unwrap().is_ok());
/// assert!(baseline("grpc-hedging-50ms").unwrap().is_ok());
/// assert!(baseline("tower-hedge-p0").unwrap().is_err());
/// assert!(baseline("default").is_none());
/// ```
pub fn baseline(name: &str) -> Option<Result<HedgeSpec, String>> {
    if let Some(percentile) = name.strip_prefix("tower-hedge-p") {
        return Some(match percentile.parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Ok(HedgeSpec::Tower(TowerHedgeSpec {
                percentile: p / 100.0,
                min_data_points: TOWER_MIN_DATA_POINTS,
                period: TOWER_PERIOD,
            })),
            _ => Err(format!(
                "`{name}`: the percentile after `tower-hedge-p` must be a number above 0 and at \
                 most 100, e.g. `tower-hedge-p95`"
            )),
        });
    }
    let delay = name.strip_prefix("grpc-hedging-")?;
    Some(
        retry_core::config::parse_duration(delay)
            .map(|delay| {
                HedgeSpec::Grpc(GrpcHedgingSpec {
                    max_attempts: GRPC_MAX_ATTEMPTS,
                    delay: crate::time::from_duration(delay),
                    max_tokens: GRPC_MAX_TOKENS,
                    token_ratio: GRPC_TOKEN_RATIO,
                })
            })
            .map_err(|error| {
                format!("`{name}`: the delay after `grpc-hedging-` must be a duration: {error}")
            }),
    )
}

/// The strategy `retry-core`'s hedging arms run over when their name has no base: the default
/// (`RetryConfig::default()`).
pub const OURS_BASE: &str = "default";

/// `retry-core`'s hedging, fixed delay: the paper's 10 ms (H1).
pub const OURS_FIXED: &str = "hedge-10ms";

/// `retry-core`'s hedging at the client's measured p95 (the goal's arm).
pub const OURS_P95: &str = "hedge-p95";

/// `retry-core`'s hedging at the client's measured p95, up to two hedges per call (the goal's
/// arm in H1): where a hedge may land on the same slow replica as the copy it backs (one time
/// in 20 in H1's shapes with slow replicas), a second hedge saves the call; the scope's hedge
/// budget holds both to the 5 % the p95 stands for.
pub const OURS_P95X2: &str = "hedge-p95x2";

/// `retry-core`'s hedging, fixed delay at S1's and S3's p95 (150 ms, as for gRPC).
pub const OURS_FIXED_S1: &str = "hedge-150ms";

/// The `retry-core` strategy and hedging `name` stands for, if it has the form
/// `hedge-<delay>` (over [`OURS_BASE`]) or `<strategy>+hedge-<delay>`; the delay is a
/// duration or `p` and a percentile, optionally followed by `x<max_hedges>`
/// ([`OursHedgeSpec::parse`]). An error when the delay is not valid.
///
/// ```
/// use retry_sim::hedge::scenarios::ours;
/// let (base, _) = ours("hedge-p95").unwrap().unwrap();
/// assert_eq!(base, "default");
/// let (base, _) = ours("aws-2026+hedge-20msx2").unwrap().unwrap();
/// assert_eq!(base, "aws-2026");
/// assert!(ours("hedge-p0").unwrap().is_err());
/// assert!(ours("tower-hedge-p95").is_none());
/// ```
pub fn ours(name: &str) -> Option<Result<(&str, HedgeSpec), String>> {
    let (base, delay) = match name.split_once("+hedge-") {
        Some((base, delay)) => (base, delay),
        None => (OURS_BASE, name.strip_prefix("hedge-")?),
    };
    Some(
        OursHedgeSpec::parse(delay)
            .map(|spec| (base, HedgeSpec::Ours(spec)))
            .map_err(|error| format!("strategy `{name}`: {error}")),
    )
}

/// The latency shapes drawn for H1 besides the paper's.
pub const DRAWN_SHAPES: u64 = 8;

/// The seed the drawn shapes come from (shape `i` from stream `i` of it): the issue's number.
/// `--hedge-shape-seed` draws the shapes from another ([`Options::hedge_shape_seed`]).
pub const SHAPE_SEED: u64 = 27;

/// H1's attempt timeout and deadline: 30 s, past every p99.9 of the family (the slowest
/// shape's slow median is 5 s), so that no timeout cuts the tail being measured.
pub const H1_DEADLINE: u64 = 30 * SECOND;

/// H1's seconds of arrivals measured: 120 (84,000 calls a run at 700/s; p99.9 from the
/// slowest 84), after [`H1_WARMUP`].
pub const H1_SECONDS: f64 = 120.0;

/// H1's warm-up before its window opens: 60 s. A client's p95 needs 200 samples of its own
/// (10 above the percentile), 29 s of its 7 calls/s; tower's first read histogram is full
/// after its first 10 s period. The window then measures every arm hedging.
pub const H1_WARMUP: u64 = 60 * SECOND;

/// The strategies H1 compares by default.
pub const H1_ARMS: [&str; 7] = [
    "none", "default", OURS_FIXED, OURS_P95, OURS_P95X2, TOWER, GRPC,
];

/// The strategies HS1 and HS3 compare by default: the fixed delays set for their server.
pub const HS_ARMS: [&str; 7] = [
    "none",
    "default",
    OURS_FIXED_S1,
    OURS_P95,
    OURS_P95X2,
    TOWER,
    GRPC_S1,
];

/// The strategy a hedging arm is compared with: the same retries without hedging (`none`
/// for the baselines, which do not retry; the base strategy for `retry-core`'s).
///
/// ```
/// use retry_sim::hedge::scenarios::reference;
/// assert_eq!(reference("tower-hedge-p95"), "none");
/// assert_eq!(reference("hedge-p95"), "default");
/// assert_eq!(reference("aws-2026+hedge-10ms"), "aws-2026");
/// assert_eq!(reference("default"), "default");
/// ```
pub fn reference(name: &str) -> &str {
    if baseline(name).is_some() {
        return "none";
    }
    match ours(name) {
        Some(Ok((base, _))) => base,
        _ => name,
    }
}

/// H1's latency shapes: the paper's, then [`DRAWN_SHAPES`] drawn from `seed` (shape `i` from
/// its stream `i`; [`SHAPE_SEED`] by default).
///
/// ```
/// use retry_sim::hedge::scenarios::{SHAPE_SEED, shapes};
/// let shapes27 = shapes(SHAPE_SEED);
/// assert_eq!(shapes27.len(), 9);
/// assert_eq!(shapes27[0].0, "paper");
/// assert_eq!(shapes27[1].0, "shape 1");
/// // Another seed: the same paper shape, other drawn shapes, named after their seed.
/// let shapes28 = shapes(28);
/// assert_eq!(shapes28[0].1, shapes27[0].1);
/// assert_eq!(shapes28[1].0, "shape 28.1");
/// assert_ne!(shapes28[1].1, shapes27[1].1);
/// ```
pub fn shapes(seed: u64) -> Vec<(String, TailLatency)> {
    let mut shapes = vec![("paper".to_owned(), TailLatency::paper())];
    for i in 1..=DRAWN_SHAPES {
        let shape = TailLatency::draw(&mut Rng::stream(seed, i));
        let name = if seed == SHAPE_SEED {
            format!("shape {i}")
        } else {
            format!("shape {seed}.{i}")
        };
        shapes.push((name, shape));
    }
    shapes
}

/// The hedging scenario `id` ([`HEDGE_IDS`]).
///
/// ```
/// let options = retry_sim::scenario::Options::default();
/// let h1 = retry_sim::hedge::scenarios::builtin("h1", &options).unwrap();
/// assert_eq!(h1.variants.len(), 9);
/// assert_eq!(h1.strategies.len(), 7);
/// ```
pub fn builtin(id: &str, options: &Options) -> Result<Scenario, String> {
    let strategies = arms(options, if id == "h1" { &H1_ARMS } else { &HS_ARMS })?;
    let (title, description, variants) = match id {
        "h1" => (
            "H1 — hedging over a long tail".to_owned(),
            "No fault: 100 clients × 7 req/s, a 60 s warm-up then 120 s measured, each attempt's time from a long-tail \
             shape (most answers fast, a few slow: the paper's shape, then shapes drawn from its \
             family with fixed seeds); enough workers that nothing queues, so latency is the \
             shape's and hedging's alone; attempt timeout and deadline 30 s. Percentiles of the \
             successful calls' latency after the warm-up (a client's p95 is known from 200 \
             samples, 29 s of its calls)."
                .to_owned(),
            shapes(options.hedge_shape_seed.unwrap_or(SHAPE_SEED))
                .into_iter()
                .map(|(name, shape)| Variant {
                    name,
                    config: tail(options, shape),
                })
                .collect(),
        ),
        "hs1" | "hs3" => {
            let base = builtin_scenario(&id[1..], options)?;
            (
                format!("H{} with hedging on", base.title),
                base.description,
                base.variants,
            )
        }
        other => {
            return Err(format!(
                "unknown hedging scenario `{other}`: expected one of {} or `hedge`",
                HEDGE_IDS.join(", ")
            ));
        }
    };
    Ok(Scenario {
        id: id.to_owned(),
        title,
        description,
        variants,
        strategies,
        seeds: options.seeds.max(1),
    })
}

/// The arms: the scenario's `defaults`, or the user's strategies.
fn arms(options: &Options, defaults: &[&str]) -> Result<Vec<StrategySpec>, String> {
    if options.scenario_extras {
        defaults
            .iter()
            .map(|name| StrategySpec::named(name))
            .collect()
    } else {
        Ok(options.strategies.clone())
    }
}

/// H1's configuration for one shape.
fn tail(options: &Options, shape: TailLatency) -> SimConfig {
    let mut config = SimConfig::new();
    config.horizon = H1_WARMUP + secs(options.duration.unwrap_or(H1_SECONDS));
    config.warmup = Some(H1_WARMUP);
    if let Some(clients) = options.clients {
        config.layers[0].instances = clients;
    }
    if let Some(load) = options.load {
        config.rate = load;
    }
    config.layers[0].attempt_timeout = H1_DEADLINE;
    config.layers[0].deadline = H1_DEADLINE;
    config.cancel_at_deadline = options.cancel_at_deadline;
    config.server.service = ServiceTime::Tail(shape);
    // Four times the workers the load keeps busy on average, and 50 more: nothing queues
    // (a hedge doubles at most the few percent of calls it copies).
    let busy = config.rate * f64::from(config.layers[0].instances) * shape.mean_secs();
    config.server.workers = (4.0 * busy).ceil() as u32 + 50;
    config
}
