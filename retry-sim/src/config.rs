//! A TOML file describing a user's own service, load, faults and retry settings.
//!
//! See `examples/my-service.toml` for every key. Durations are strings (`"250ms"`, `"2s"`,
//! `"1m"`), parsed by `retry-core`'s own `parse_duration`; unknown keys are errors.

use std::path::Path;
use std::time::Duration;

use retry_core::adaptive::CongestionSignals;
use retry_core::backoff::Jitter;
use retry_core::config::parse_duration;
use retry_core::{RetryConfig, RetryMode, RetryPreset};
use serde::Deserialize;

use crate::fault::{Fault, FaultKind, FaultSchedule};
use crate::latency::{SlowPeriods, TailLatency};
use crate::scenario::{Scenario, Variant};
use crate::server::{ServerConfig, ServiceTime};
use crate::sim::{Arrivals, LayerConfig, SimConfig};
use crate::strategy::{BUILT_IN, LayerBuild, QuotaSizing, StrategyKind, StrategySpec};
use crate::time::{Nanos, from_duration};

/// The file's top level.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// Name of the scenario in the report.
    pub name: Option<String>,
    /// How long clients send requests (default `"600s"`).
    pub duration: Option<String>,
    /// Without a timed fault, how long before the metrics' window opens (default: 10 s, or a
    /// tenth of `duration` if shorter): a hedging arm at a percentile needs its samples first.
    pub warmup: Option<String>,
    /// Seeds (default 20).
    pub seeds: Option<u32>,
    /// The service.
    #[serde(default)]
    pub service: ServiceSection,
    /// The clients.
    #[serde(default)]
    pub clients: ClientsSection,
    /// Tiers between the clients and the service, in call order.
    #[serde(default)]
    pub tiers: Vec<TierSection>,
    /// The faults.
    #[serde(default)]
    pub faults: Vec<FaultSection>,
    /// The strategies to compare (default: every built-in).
    #[serde(default)]
    pub strategies: Vec<StrategySection>,
}

/// `[service]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSection {
    /// Workers (default 50).
    pub workers: Option<u32>,
    /// Queue length (default 500).
    pub queue: Option<u32>,
    /// Mean (exponential), value (constant) or median (lognormal; tail: of the fast answers)
    /// service time (default `"50ms"`).
    pub service_time: Option<String>,
    /// `exponential` (default), `constant`, `lognormal` or `tail`.
    pub distribution: Option<String>,
    /// Shape of the lognormal distribution (tail: of the fast answers; default 0.5).
    pub sigma: Option<f64>,
    /// Tail: probability that an answer is slow, independently for every attempt.
    pub slow_share: Option<f64>,
    /// Tail: median of the slow answers.
    pub slow_time: Option<String>,
    /// Tail: shape of the slow answers' lognormal (default 0.8).
    pub slow_sigma: Option<f64>,
    /// Tail: replicas with slow periods (without it, none).
    pub slow_replicas: Option<u32>,
    /// Tail: share of the time each replica is slow.
    pub slow_period_share: Option<f64>,
    /// Tail: mean length of a replica's slow period.
    pub slow_period_length: Option<String>,
    /// Tail: factor on the time of an answer a slow replica serves.
    pub slow_period_factor: Option<f64>,
}

impl ServiceSection {
    /// Whether a key of the tail distribution is set.
    fn has_tail_keys(&self) -> bool {
        self.slow_share.is_some()
            || self.slow_time.is_some()
            || self.slow_sigma.is_some()
            || self.slow_replicas.is_some()
            || self.slow_period_share.is_some()
            || self.slow_period_length.is_some()
            || self.slow_period_factor.is_some()
    }

    /// The tail distribution these keys describe, its fast answers' median `body_median`.
    fn tail(&self, body_median: Nanos) -> Result<TailLatency, String> {
        let slow_share = self
            .slow_share
            .ok_or("`service.slow_share` is required with distribution = \"tail\"")?;
        let slow_median = match &self.slow_time {
            Some(_) => nanos("service.slow_time", &self.slow_time, Duration::ZERO)?,
            None => {
                return Err("`service.slow_time` is required with distribution = \"tail\"".into());
            }
        };
        let slow_periods = match self.slow_replicas {
            None if self.slow_period_share.is_some()
                || self.slow_period_length.is_some()
                || self.slow_period_factor.is_some() =>
            {
                return Err(
                    "`service.slow_period_*` need `service.slow_replicas` (the replicas that go \
                     through slow periods)"
                        .into(),
                );
            }
            None => None,
            Some(replicas) => Some(SlowPeriods {
                replicas,
                share: self
                    .slow_period_share
                    .ok_or("`service.slow_period_share` is required with `slow_replicas`")?,
                mean_length: nanos(
                    "service.slow_period_length",
                    &self.slow_period_length,
                    Duration::from_secs(5),
                )?,
                factor: self
                    .slow_period_factor
                    .ok_or("`service.slow_period_factor` is required with `slow_replicas`")?,
            }),
        };
        let shape = TailLatency {
            body_median,
            body_sigma: self.sigma.unwrap_or(0.5),
            slow_share,
            slow_median,
            slow_sigma: self.slow_sigma.unwrap_or(0.8),
            slow_periods,
        };
        shape
            .validate()
            .map_err(|error| format!("`service`: {error}"))?;
        Ok(shape)
    }
}

/// `[clients]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientsSection {
    /// Clients (default 100).
    pub count: Option<u32>,
    /// Requests per second per client (default 7).
    pub rate: Option<f64>,
    /// `open` (Poisson, default) or `closed`.
    pub arrivals: Option<String>,
    /// Per-attempt timeout (default `"1s"`).
    pub attempt_timeout: Option<String>,
    /// Per-request deadline (default `"5s"`).
    pub deadline: Option<String>,
    /// Attempts per request, the first included (default 3).
    pub max_attempts: Option<u32>,
    /// Whether callers cancel a call at its deadline (default true).
    pub cancel_at_deadline: Option<bool>,
}

/// `[[tiers]]`: a tier of service instances between the clients and the service.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TierSection {
    /// Instances (each with its own strategy and scope).
    pub instances: u32,
    /// Per-attempt timeout (default `"1s"`).
    pub attempt_timeout: Option<String>,
    /// Per-call deadline (default: the attempt timeout of the layer above).
    pub deadline: Option<String>,
    /// Whether the tier retries with the strategy (default true) or makes one attempt.
    pub retries: Option<bool>,
}

/// `[[faults]]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSection {
    /// `outage`, `blackhole`, `brownout`, `throttle`, `failures` or `spike`.
    pub kind: String,
    /// When it starts (default `"0s"`).
    pub start: Option<String>,
    /// How long it lasts (default: to the end).
    pub duration: Option<String>,
    /// Brownout: fraction of the workers left.
    pub capacity: Option<f64>,
    /// Throttle: admitted attempts per second.
    pub rate: Option<f64>,
    /// Throttle: bucket size (default a tenth of `rate`).
    pub burst: Option<f64>,
    /// Throttle: the `Retry-After` of the 429s (default `"1s"`).
    pub retry_after: Option<String>,
    /// Failures: probability that a served attempt fails.
    pub probability: Option<f64>,
    /// Spike: arrival rate multiplier.
    pub factor: Option<f64>,
}

/// `[[strategies]]`: a built-in strategy by name, or `retry-core` settings starting from a
/// preset.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategySection {
    /// A built-in name, or the name of this custom strategy.
    pub name: String,
    /// Start from a preset (`default`, `aws-classic` or `aws-2026`, `retry-core`'s
    /// `RetryPreset` names) and override below; without it, `name` must be a built-in strategy.
    pub base: Option<String>,
    /// `standard` or `adaptive`.
    pub mode: Option<String>,
    /// Attempts per request (default: the clients').
    pub max_attempts: Option<u32>,
    /// Backoff base for non-throttling errors.
    pub initial_backoff: Option<String>,
    /// Backoff base for throttling errors.
    pub throttling_backoff: Option<String>,
    /// Cap on every backoff.
    pub max_backoff: Option<String>,
    /// `none`, `full`, `equal` or `decorrelated`.
    pub jitter: Option<String>,
    /// Retry quota capacity (with a `quota_window`, the most the quota holds).
    pub quota_capacity: Option<u32>,
    /// Size the quota by traffic: one token per call of the last `quota_window` (a duration).
    pub quota_window: Option<String>,
    /// Quota cost of a retry of a server or transient error.
    pub retry_cost: Option<u32>,
    /// Quota cost of a retry after a timeout.
    pub timeout_retry_cost: Option<u32>,
    /// Quota cost of a retry of a throttling error.
    pub throttling_retry_cost: Option<u32>,
    /// Quota returned by a first-try success.
    pub success_reward: Option<u32>,
    /// Quota refill per second.
    pub quota_refill_per_second: Option<f64>,
    /// Clamp a `Retry-After` to `[t_i, t_i + slack]`.
    pub retry_after_slack: Option<String>,
    /// Adaptive: longest wait for a send permit.
    pub max_wait: Option<String>,
    /// `per-client` (default) or `shared` (one scope for all clients).
    pub quota_sizing: Option<String>,
    /// Adaptive: what lowers the send rate, `throttling` (default), `throttling-and-timeouts`
    /// or `throttling-timeouts-and-latency`.
    pub congestion: Option<String>,
}

fn duration(field: &str, value: &Option<String>, default: Duration) -> Result<Duration, String> {
    match value {
        None => Ok(default),
        Some(text) => parse_duration(text).map_err(|error| format!("`{field}`: {error}")),
    }
}

fn nanos(field: &str, value: &Option<String>, default: Duration) -> Result<Nanos, String> {
    duration(field, value, default).map(from_duration)
}

/// Reads and checks the TOML file at `path`.
pub fn load(path: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|error| format!("cannot read {}: {error}", path.display()))?;
    let name = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_else(|| "custom".to_owned());
    parse(&text, &name).map_err(|error| format!("{}: {error}", path.display()))
}

/// Parses and checks a TOML description; `default_name` names the scenario when the file
/// does not.
///
/// ```
/// let scenario = retry_sim::config::parse("duration = \"30s\"\nseeds = 2", "mine").unwrap();
/// assert_eq!(scenario.seeds, 2);
/// assert!(retry_sim::config::parse("nope = 1", "mine").is_err());
/// ```
pub fn parse(text: &str, default_name: &str) -> Result<Scenario, String> {
    let file: FileConfig = toml::from_str(text).map_err(|error| error.to_string())?;
    let mut config = SimConfig::new();
    config.horizon = nanos("duration", &file.duration, Duration::from_secs(600))?;
    if file.warmup.is_some() {
        config.warmup = Some(nanos("warmup", &file.warmup, Duration::ZERO)?);
    }

    let service = &file.service;
    let distribution = service.distribution.as_deref().unwrap_or("exponential");
    if distribution != "tail" && service.has_tail_keys() {
        return Err(format!(
            "`service.slow_*` keys describe distribution = \"tail\", not `{distribution}`"
        ));
    }
    let time = nanos(
        "service.service_time",
        &service.service_time,
        Duration::from_millis(50),
    )?;
    config.server = ServerConfig {
        workers: service.workers.unwrap_or(50),
        queue: service.queue.unwrap_or(500),
        service: match distribution {
            "exponential" => ServiceTime::Exponential { mean: time },
            "constant" => ServiceTime::Constant { value: time },
            "lognormal" => ServiceTime::LogNormal {
                median: time,
                sigma: service.sigma.unwrap_or(0.5),
            },
            "tail" => ServiceTime::Tail(service.tail(time)?),
            other => {
                return Err(format!(
                    "`service.distribution`: unknown `{other}`, expected exponential, constant, lognormal or tail"
                ));
            }
        },
    };

    let clients = &file.clients;
    let attempt_timeout = nanos(
        "clients.attempt_timeout",
        &clients.attempt_timeout,
        Duration::from_secs(1),
    )?;
    config.layers = vec![LayerConfig {
        instances: clients.count.unwrap_or(100),
        attempt_timeout,
        deadline: nanos(
            "clients.deadline",
            &clients.deadline,
            Duration::from_secs(5),
        )?,
        retries: true,
    }];
    config.rate = clients.rate.unwrap_or(7.0);
    config.max_attempts = clients.max_attempts.unwrap_or(3);
    config.cancel_at_deadline = clients.cancel_at_deadline.unwrap_or(true);
    config.arrivals = match clients.arrivals.as_deref().unwrap_or("open") {
        "open" => Arrivals::Open,
        "closed" => Arrivals::Closed,
        other => {
            return Err(format!(
                "`clients.arrivals`: unknown `{other}`, expected open or closed"
            ));
        }
    };
    let mut above = attempt_timeout;
    for (i, tier) in file.tiers.iter().enumerate() {
        let timeout = nanos(
            &format!("tiers[{i}].attempt_timeout"),
            &tier.attempt_timeout,
            Duration::from_secs(1),
        )?;
        let deadline = nanos(
            &format!("tiers[{i}].deadline"),
            &tier.deadline,
            Duration::from_nanos(above),
        )?;
        config.layers.push(LayerConfig {
            instances: tier.instances,
            attempt_timeout: timeout,
            deadline,
            retries: tier.retries.unwrap_or(true),
        });
        above = timeout;
    }

    let mut faults = Vec::new();
    for (i, fault) in file.faults.iter().enumerate() {
        faults.push(parse_fault(i, fault)?);
    }
    config.faults = FaultSchedule::new(faults);
    config.validate()?;

    let strategies = if file.strategies.is_empty() {
        BUILT_IN
            .iter()
            .map(|name| StrategySpec::named(name))
            .collect::<Result<Vec<_>, _>>()?
    } else {
        file.strategies
            .iter()
            .enumerate()
            .map(|(i, section)| parse_strategy(i, section))
            .collect::<Result<Vec<_>, _>>()?
    };
    // Build every strategy once, so that bad settings are reported before the run.
    let clock = std::sync::Arc::new(crate::clock::SimClock::new());
    for strategy in &strategies {
        let build = LayerBuild {
            index: 0,
            clients: 1,
            attempts: config.max_attempts,
            deadline: config.layers[0].deadline,
            starts: &[],
        };
        strategy.build_layer(&build, &clock, 0)?;
    }
    let name = file.name.clone().unwrap_or_else(|| default_name.to_owned());
    Ok(Scenario {
        id: name.clone(),
        title: name.clone(),
        description: format!(
            "A user-described service: {} workers, {} queue, {:.0} attempts/s capacity; {} clients × {} req/s; {} fault(s).",
            config.server.workers,
            config.server.queue,
            config.server.capacity(),
            config.layers[0].instances,
            config.rate,
            config.faults.faults().len()
        ),
        variants: vec![Variant {
            name: "as configured".to_owned(),
            config,
        }],
        strategies,
        seeds: file.seeds.unwrap_or(20).max(1),
    })
}

fn parse_fault(i: usize, fault: &FaultSection) -> Result<Fault, String> {
    let field = |name: &str| format!("faults[{i}].{name}");
    let require = |value: Option<f64>, name: &str| {
        value.ok_or_else(|| format!("`{}` is required for a {} fault", field(name), fault.kind))
    };
    // A number in `[low, high]` (finite), or a clear error naming the key.
    let within = |value: f64, name: &str, low: f64, high: f64| {
        if value.is_finite() && (low..=high).contains(&value) {
            Ok(value)
        } else {
            Err(format!(
                "`{}` must be between {low} and {high}, not {value}",
                field(name)
            ))
        }
    };
    let kind = match fault.kind.as_str() {
        "outage" => FaultKind::Outage,
        "blackhole" => FaultKind::Blackhole,
        "brownout" => FaultKind::Brownout {
            capacity: within(require(fault.capacity, "capacity")?, "capacity", 0.0, 1.0)?,
        },
        "throttle" => {
            let rate = within(require(fault.rate, "rate")?, "rate", 0.0, 1e9)?;
            if let Some(burst) = fault.burst {
                within(burst, "burst", 1.0, 1e9)?;
            }
            FaultKind::Throttle {
                rate,
                burst: fault.burst.unwrap_or(rate / 10.0).max(1.0),
                retry_after: nanos(
                    &field("retry_after"),
                    &fault.retry_after,
                    Duration::from_secs(1),
                )?,
            }
        }
        "failures" => FaultKind::Failures {
            probability: within(
                require(fault.probability, "probability")?,
                "probability",
                0.0,
                1.0,
            )?,
        },
        "spike" => FaultKind::LoadSpike {
            factor: within(require(fault.factor, "factor")?, "factor", 0.0, 1e6)?,
        },
        other => {
            return Err(format!(
                "`{}`: unknown `{other}`, expected outage, blackhole, brownout, throttle, failures or spike",
                field("kind")
            ));
        }
    };
    let start = nanos(&field("start"), &fault.start, Duration::ZERO)?;
    let end = match &fault.duration {
        Some(_) => {
            start.saturating_add(nanos(&field("duration"), &fault.duration, Duration::ZERO)?)
        }
        None => u64::MAX,
    };
    Ok(Fault { kind, start, end })
}

fn parse_strategy(i: usize, section: &StrategySection) -> Result<StrategySpec, String> {
    let field = |name: &str| format!("strategies[{i}].{name}");
    let Some(base) = &section.base else {
        let customized = section.mode.is_some()
            || section.initial_backoff.is_some()
            || section.throttling_backoff.is_some()
            || section.max_backoff.is_some()
            || section.jitter.is_some()
            || section.quota_capacity.is_some()
            || section.quota_window.is_some()
            || section.retry_cost.is_some()
            || section.timeout_retry_cost.is_some()
            || section.throttling_retry_cost.is_some()
            || section.success_reward.is_some()
            || section.quota_refill_per_second.is_some()
            || section.retry_after_slack.is_some()
            || section.max_wait.is_some()
            || section.quota_sizing.is_some()
            || section.congestion.is_some();
        if customized {
            return Err(format!(
                "`{}`: settings need a `base` preset (\"default\", \"aws-classic\" or \"aws-2026\")",
                field("name")
            ));
        }
        let mut spec = StrategySpec::named(&section.name)
            .map_err(|error| format!("`{}`: {error}", field("name")))?;
        if section.max_attempts.is_some() {
            spec.max_attempts = section.max_attempts;
        }
        return Ok(spec);
    };
    let preset: RetryPreset = base
        .parse()
        .map_err(|error| format!("`{}`: {error}", field("base")))?;
    let mut builder = RetryConfig::from_preset(preset);
    if let Some(mode) = &section.mode {
        let mode: RetryMode = mode
            .parse()
            .map_err(|error| format!("`{}`: {error}", field("mode")))?;
        builder = builder.mode(mode);
    }
    let set_duration = |value: &Option<String>, name: &str| -> Result<Option<Duration>, String> {
        value
            .as_ref()
            .map(|text| parse_duration(text).map_err(|error| format!("`{}`: {error}", field(name))))
            .transpose()
    };
    if let Some(d) = set_duration(&section.initial_backoff, "initial_backoff")? {
        builder = builder.initial_backoff(d);
    }
    if let Some(d) = set_duration(&section.throttling_backoff, "throttling_backoff")? {
        builder = builder.throttling_backoff(d);
    }
    if let Some(d) = set_duration(&section.max_backoff, "max_backoff")? {
        builder = builder.max_backoff(d);
    }
    if let Some(d) = set_duration(&section.retry_after_slack, "retry_after_slack")? {
        builder = builder.retry_after_slack(d);
    }
    if let Some(d) = set_duration(&section.max_wait, "max_wait")? {
        builder = builder.max_wait(d);
    }
    if let Some(d) = set_duration(&section.quota_window, "quota_window")? {
        builder = builder.quota_window(d);
    }
    if let Some(jitter) = &section.jitter {
        let jitter: Jitter = jitter
            .parse()
            .map_err(|error| format!("`{}`: {error}", field("jitter")))?;
        builder = builder.jitter(jitter);
    }
    if let Some(v) = section.quota_capacity {
        builder = builder.quota_capacity(v);
    }
    if let Some(v) = section.retry_cost {
        builder = builder.retry_cost(v);
    }
    if let Some(v) = section.timeout_retry_cost {
        builder = builder.timeout_retry_cost(v);
    }
    if let Some(v) = section.throttling_retry_cost {
        builder = builder.throttling_retry_cost(v);
    }
    if let Some(v) = section.success_reward {
        builder = builder.success_reward(v);
    }
    if let Some(v) = section.quota_refill_per_second {
        builder = builder.quota_refill_per_second(v);
    }
    let config = builder
        .build()
        .map_err(|error| format!("strategy `{}`: {error}", section.name))?;
    let quota = match section.quota_sizing.as_deref().unwrap_or("per-client") {
        "per-client" => QuotaSizing::PerClient,
        "shared" => QuotaSizing::Shared,
        other => {
            return Err(format!(
                "`{}`: unknown `{other}`, expected per-client or shared",
                field("quota_sizing")
            ));
        }
    };
    let congestion = match section.congestion.as_deref().unwrap_or("throttling") {
        "throttling" => CongestionSignals::Throttling,
        "throttling-and-timeouts" => CongestionSignals::ThrottlingAndTimeouts,
        "throttling-timeouts-and-latency" => CongestionSignals::ThrottlingTimeoutsAndLatency,
        other => {
            return Err(format!(
                "`{}`: unknown `{other}`, expected throttling, throttling-and-timeouts or \
                 throttling-timeouts-and-latency",
                field("congestion")
            ));
        }
    };
    Ok(StrategySpec {
        name: section.name.clone(),
        kind: StrategyKind::Ours {
            config,
            quota,
            congestion,
        },
        max_attempts: section.max_attempts,
        hedge: None,
    })
}
