//! The strategies compared side by side, by name, and how a client's [`Policy`] is built from
//! one.

use std::fmt;
use std::sync::Arc;

use retry_core::adaptive::CongestionSignals;
use retry_core::clock::SharedClock;
use retry_core::{AdaptiveStrategy, RetryConfig, RetryMode, Scope, StandardStrategy};

use crate::clock::{OffsetClock, SimClock};
use crate::fleet::arm::{Arm, FleetTuning};
use crate::hedge::{HedgeSpec, scenarios as hedging};

use crate::baseline::{
    BackoffSpec, BaselineClient, BudgetKind, FinagleBudget, GrpcThrottle, RetryAfterUse,
    SreThrottle, Unlimited,
};
use crate::policy::Policy;
use crate::rng::{Rng, strategy_random};
use crate::time::{MILLI, Nanos, SECOND, to_duration};

/// The budget of a baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BudgetSpec {
    /// No budget.
    Unlimited,
    /// gRPC retry throttling (`maxTokens`, `tokenRatio`).
    Grpc {
        /// `maxTokens`.
        max_tokens: f64,
        /// `tokenRatio`.
        token_ratio: f64,
    },
    /// The SRE book's client-side throttling (`K`, window in seconds).
    Sre {
        /// `K`.
        k: f64,
        /// Window length in seconds.
        window_secs: u32,
    },
    /// Finagle's retry budget.
    Finagle {
        /// `percentCanRetry`.
        percent_can_retry: f64,
        /// `minRetriesPerSec`.
        min_retries_per_sec: f64,
        /// `ttl` in seconds.
        ttl_secs: u32,
    },
}

/// Whose scope (retry quota and rate limiter) each client of an `ours` strategy uses.
///
/// A quota sized by traffic (`RetryConfig::default()`, or any configuration with a
/// `quota_window`) is `retry-core`'s own: each private scope measures its client's call rate
/// and resizes its quota; the simulator computes nothing for it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QuotaSizing {
    /// One private scope per client, sized by the configuration.
    PerClient,
    /// One scope (quota and limiter) shared by every client of the layer.
    Shared,
    /// One scope shared by every client of the layer that lives in the fleet's store: every
    /// decision on it is a round trip to the store ([`Arm::NaiveStore`]).
    NaiveStore,
    /// One private scope per client (a process of the fleet), attached to the fleet: its
    /// process's sync task drives it from the store's lease ([`Arm::Fleet`]).
    Fleet(FleetTuning),
    /// One private scope per client in standard mode, each behind the oracle's static share
    /// of the server's limit ([`Arm::StaticSplit`]).
    StaticSplit,
}

impl QuotaSizing {
    /// The fleet arm this sizing stands for.
    ///
    /// ```
    /// use retry_sim::{fleet::arm::Arm, strategy::QuotaSizing};
    /// assert_eq!(QuotaSizing::Shared.arm(), Arm::PerProcess);
    /// assert_eq!(QuotaSizing::NaiveStore.arm(), Arm::NaiveStore);
    /// ```
    pub fn arm(&self) -> Arm {
        match *self {
            Self::PerClient | Self::Shared => Arm::PerProcess,
            Self::NaiveStore => Arm::NaiveStore,
            Self::Fleet(tuning) => Arm::Fleet(tuning),
            Self::StaticSplit => Arm::StaticSplit,
        }
    }

    fn shares_one_scope(&self) -> bool {
        matches!(self, Self::Shared | Self::NaiveStore)
    }
}

/// What a strategy is.
#[derive(Debug, Clone, PartialEq)]
pub enum StrategyKind {
    /// A `retry-core` strategy from this configuration (mode standard or adaptive); the
    /// scenario supplies `max_attempts` and the deadline (`timeout`).
    Ours {
        /// The configuration.
        config: RetryConfig,
        /// How the quota is sized.
        quota: QuotaSizing,
        /// In adaptive mode, what lowers the send rate.
        congestion: CongestionSignals,
    },
    /// A baseline.
    Baseline {
        /// Retry budget.
        budget: BudgetSpec,
        /// Backoff between attempts.
        backoff: BackoffSpec,
        /// `Retry-After` handling.
        retry_after: RetryAfterUse,
    },
}

/// A named strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategySpec {
    /// Its name in tables and on the command line.
    pub name: String,
    /// What it is.
    pub kind: StrategyKind,
    /// Attempts per call, when it fixes its own (no retries: 1); `None` takes the scenario's.
    pub max_attempts: Option<u32>,
    /// How it hedges, if it does.
    pub hedge: Option<HedgeSpec>,
}

/// What [`StrategySpec::build_layer`] needs to know about a layer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LayerBuild<'a> {
    /// The layer's index (0: the clients).
    pub index: u32,
    /// Its clients or instances.
    pub clients: u32,
    /// The scenario's attempts per call (a strategy may fix its own).
    pub attempts: u32,
    /// Per-call deadline.
    pub deadline: Nanos,
    /// When each client starts, if not all at the run's start (a fleet's processes joining
    /// late): each then reads its own clock, zero at its start ([`OffsetClock`]).
    pub starts: &'a [Nanos],
}

/// The built-in strategy names, in table order.
pub const BUILT_IN: [&str; 10] = [
    "none",
    "fixed",
    "fixed-backoff",
    "default",
    "aws-classic",
    "aws-2026",
    "adaptive",
    "grpc",
    "sre",
    "finagle",
];

/// More built-in strategies, not run by default.
pub const EXTRA: [&str; 11] = [
    "default-adaptive",
    "adaptive-2026",
    "aws-2026-shared",
    "adaptive-timeouts",
    "adaptive-latency",
    hedging::OURS_FIXED,
    hedging::OURS_P95,
    hedging::OURS_FIXED_S1,
    hedging::TOWER,
    hedging::GRPC,
    hedging::GRPC_S1,
];

/// What a traffic-sized scope younger than its window starts with and finds at least, as
/// `RetryConfig::quota_window` documents it: the AWS SDKs' initial retry quota
/// (`INITIAL_RETRY_TOKENS`), 500.
const YOUNG_SCOPE_QUOTA: u32 = 500;

/// The backoff of "fixed N retries with exponential backoff and full jitter": backon's
/// `ExponentialBuilder` defaults (1 s, factor 2, 60 s cap) with full jitter.
const BACKON_BACKOFF: BackoffSpec = BackoffSpec {
    initial: SECOND,
    max: 60 * SECOND,
    multiplier: 2.0,
    jitter: true,
};

/// gRPC retry policy backoff, as in gRFC A6's example (`initialBackoff 0.1s`, `maxBackoff 1s`,
/// `backoffMultiplier 2`, jittered).
const GRPC_BACKOFF: BackoffSpec = BackoffSpec {
    initial: 100 * MILLI,
    max: SECOND,
    multiplier: 2.0,
    jitter: true,
};

impl StrategySpec {
    /// The built-in strategy called `name` (see [`BUILT_IN`] and [`EXTRA`]).
    ///
    /// ```
    /// let spec = retry_sim::strategy::StrategySpec::named("aws-2026").unwrap();
    /// assert_eq!(spec.name, "aws-2026");
    /// assert!(retry_sim::strategy::StrategySpec::named("nope").is_err());
    /// ```
    pub fn named(name: &str) -> Result<Self, String> {
        if let Some(base) = name.strip_suffix(Arm::NaiveStore.suffix()) {
            return Self::named(base)?.on_arm(Arm::NaiveStore);
        }
        if let Some(base) = name.strip_suffix(Arm::Fleet(FleetTuning::default()).suffix()) {
            return Self::named(base)?.on_arm(Arm::Fleet(FleetTuning::default()));
        }
        if let Some(base) = name.strip_suffix(Arm::StaticSplit.suffix()) {
            return Self::named(base)?.on_arm(Arm::StaticSplit);
        }
        let baseline = |budget, backoff, retry_after| StrategyKind::Baseline {
            budget,
            backoff,
            retry_after,
        };
        let with_signals =
            |config: Result<RetryConfig, retry_core::ConfigError>, quota, congestion| {
                config
                    .map(|config| StrategyKind::Ours {
                        config,
                        quota,
                        congestion,
                    })
                    .map_err(|error| error.to_string())
            };
        let ours = |config, quota| with_signals(config, quota, CongestionSignals::default());
        if let Some(parsed) = hedging::ours(name) {
            let (base, hedge) = parsed?;
            return Self::named(base)?.hedged(name, hedge);
        }
        if let Some(hedge) = hedging::baseline(name) {
            // tower's and gRPC's hedging do not retry: one attempt and its copies.
            return Ok(Self {
                name: name.to_owned(),
                kind: baseline(
                    BudgetSpec::Unlimited,
                    BackoffSpec::NONE,
                    RetryAfterUse::Ignore,
                ),
                max_attempts: Some(1),
                hedge: Some(hedge?),
            });
        }
        let mut max_attempts = None;
        let kind = match name {
            "none" => {
                max_attempts = Some(1);
                baseline(
                    BudgetSpec::Unlimited,
                    BackoffSpec::NONE,
                    RetryAfterUse::Ignore,
                )
            }
            "fixed" => baseline(
                BudgetSpec::Unlimited,
                BackoffSpec::NONE,
                RetryAfterUse::Ignore,
            ),
            "fixed-backoff" => {
                baseline(BudgetSpec::Unlimited, BACKON_BACKOFF, RetryAfterUse::Ignore)
            }
            "default" => ours(Ok(RetryConfig::default()), QuotaSizing::PerClient)?,
            "aws-classic" => ours(RetryConfig::aws_classic().build(), QuotaSizing::PerClient)?,
            "aws-2026" => ours(RetryConfig::aws_2026().build(), QuotaSizing::PerClient)?,
            "adaptive" => ours(
                RetryConfig::aws_classic().mode(RetryMode::Adaptive).build(),
                QuotaSizing::PerClient,
            )?,
            "default-adaptive" => ours(
                RetryConfig::builder().mode(RetryMode::Adaptive).build(),
                QuotaSizing::PerClient,
            )?,
            "adaptive-timeouts" => with_signals(
                RetryConfig::builder().mode(RetryMode::Adaptive).build(),
                QuotaSizing::PerClient,
                CongestionSignals::ThrottlingAndTimeouts,
            )?,
            "adaptive-latency" => with_signals(
                RetryConfig::builder().mode(RetryMode::Adaptive).build(),
                QuotaSizing::PerClient,
                CongestionSignals::ThrottlingTimeoutsAndLatency,
            )?,
            "adaptive-2026" => ours(
                RetryConfig::aws_2026().mode(RetryMode::Adaptive).build(),
                QuotaSizing::PerClient,
            )?,
            "aws-2026-shared" => ours(RetryConfig::aws_2026().build(), QuotaSizing::Shared)?,
            "grpc" => baseline(
                BudgetSpec::Grpc {
                    max_tokens: 10.0,
                    token_ratio: 0.1,
                },
                GRPC_BACKOFF,
                RetryAfterUse::Replace,
            ),
            "sre" => baseline(
                BudgetSpec::Sre {
                    k: 2.0,
                    window_secs: 120,
                },
                BACKON_BACKOFF,
                RetryAfterUse::AtLeast,
            ),
            "finagle" => baseline(
                BudgetSpec::Finagle {
                    percent_can_retry: 0.2,
                    min_retries_per_sec: 10.0,
                    ttl_secs: 10,
                },
                BACKON_BACKOFF,
                RetryAfterUse::AtLeast,
            ),
            other => {
                return Err(format!(
                    "unknown strategy `{other}`: expected one of {}",
                    BUILT_IN
                        .iter()
                        .chain(EXTRA.iter())
                        .copied()
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        };
        Ok(Self {
            name: name.to_owned(),
            kind,
            max_attempts,
            hedge: None,
        })
    }

    /// This `retry-core` strategy run on `arm` (per process, a naive shared store, fleet
    /// mode), named `<name><arm suffix>`. Baselines run per process only.
    ///
    /// ```
    /// use retry_sim::fleet::arm::Arm;
    /// use retry_sim::strategy::StrategySpec;
    /// let naive = StrategySpec::named("adaptive").unwrap().on_arm(Arm::NaiveStore).unwrap();
    /// assert_eq!(naive.name, "adaptive+naive");
    /// assert_eq!(StrategySpec::named("adaptive+naive").unwrap(), naive);
    /// assert!(StrategySpec::named("grpc+fleet").is_err());
    /// ```
    pub fn on_arm(self, arm: Arm) -> Result<Self, String> {
        let StrategyKind::Ours {
            config,
            quota: QuotaSizing::PerClient,
            congestion,
        } = self.kind
        else {
            return Err(format!(
                "`{}{}`: only retry-core's per-client strategies run on a fleet arm",
                self.name,
                arm.suffix()
            ));
        };
        let quota = match arm {
            Arm::PerProcess => QuotaSizing::PerClient,
            Arm::NaiveStore => QuotaSizing::NaiveStore,
            Arm::Fleet(tuning) => QuotaSizing::Fleet(tuning),
            Arm::StaticSplit => QuotaSizing::StaticSplit,
        };
        // The split's bucket is its send rate: no adaptive limiter besides.
        let config = if arm == Arm::StaticSplit {
            config
                .to_builder()
                .mode(RetryMode::Standard)
                .build()
                .map_err(|error| error.to_string())?
        } else {
            config
        };
        Ok(Self {
            name: format!("{}{}", self.name, arm.suffix()),
            kind: StrategyKind::Ours {
                config,
                quota,
                congestion,
            },
            max_attempts: self.max_attempts,
            hedge: self.hedge,
        })
    }

    /// The arm this strategy runs on ([`Arm::PerProcess`] for baselines).
    pub fn arm(&self) -> Arm {
        match &self.kind {
            StrategyKind::Ours { quota, .. } => quota.arm(),
            StrategyKind::Baseline { .. } => Arm::PerProcess,
        }
    }

    /// A spec that never retries, named `none` (inner layers that do not retry use it).
    ///
    /// ```
    /// assert_eq!(retry_sim::strategy::StrategySpec::no_retries().max_attempts, Some(1));
    /// ```
    pub fn no_retries() -> Self {
        Self {
            name: "none".to_owned(),
            kind: StrategyKind::Baseline {
                budget: BudgetSpec::Unlimited,
                backoff: BackoffSpec::NONE,
                retry_after: RetryAfterUse::Ignore,
            },
            max_attempts: Some(1),
            hedge: None,
        }
    }

    /// The attempts per call this strategy makes in a scenario whose default is `default`.
    ///
    /// ```
    /// let none = retry_sim::strategy::StrategySpec::named("none").unwrap();
    /// assert_eq!(none.attempts(3), 1);
    /// ```
    pub fn attempts(&self, default: u32) -> u32 {
        self.max_attempts.unwrap_or(default).max(1)
    }

    /// Builds the policies of one layer's clients, all on `clock`. Randomness comes from
    /// streams derived from `seed` and the layer's index.
    pub fn build_layer(
        &self,
        layer: &LayerBuild,
        clock: &Arc<SimClock>,
        seed: u64,
    ) -> Result<Vec<Policy>, String> {
        let LayerBuild {
            index,
            clients,
            attempts,
            deadline,
            starts,
        } = *layer;
        let clock_of = |client: u32| -> SharedClock {
            match starts.get(client as usize) {
                Some(&start) if start > 0 => Arc::new(OffsetClock::new(clock.clone(), start)),
                _ => clock.clone(),
            }
        };
        let (layer, count) = (index, clients);
        let attempts = self.attempts(attempts);
        match &self.kind {
            StrategyKind::Ours {
                quota, congestion, ..
            } => {
                let config = self.layer_config(attempts, deadline)?;
                let shared = quota
                    .shares_one_scope()
                    .then(|| Scope::with_clock(&self.name, &config, clock.clone()));
                Ok((0..count)
                    .map(|client| {
                        let mut builder = StandardStrategy::builder(config.clone())
                            .clock(clock_of(client))
                            .random(strategy_random(seed, u64::from(layer), u64::from(client)));
                        if let Some(scope) = &shared {
                            builder = builder.scope(scope.clone());
                        }
                        match config.mode() {
                            RetryMode::Adaptive => {
                                let strategy =
                                    AdaptiveStrategy::from_builder(builder).congestion(*congestion);
                                let scope = strategy.scope().clone();
                                Policy::Ours(Box::new(strategy), scope)
                            }
                            _ => {
                                let strategy = builder.build();
                                let scope = strategy.scope().clone();
                                Policy::Ours(Box::new(strategy), scope)
                            }
                        }
                    })
                    .collect())
            }
            StrategyKind::Baseline {
                budget,
                backoff,
                retry_after,
            } => Ok((0..count)
                .map(|client| {
                    let budget = match *budget {
                        BudgetSpec::Unlimited => BudgetKind::Unlimited(Unlimited),
                        BudgetSpec::Grpc {
                            max_tokens,
                            token_ratio,
                        } => BudgetKind::Grpc(GrpcThrottle::new(max_tokens, token_ratio)),
                        BudgetSpec::Sre { k, window_secs } => {
                            BudgetKind::Sre(SreThrottle::new(k, window_secs))
                        }
                        BudgetSpec::Finagle {
                            percent_can_retry,
                            min_retries_per_sec,
                            ttl_secs,
                        } => BudgetKind::Finagle(FinagleBudget::new(
                            percent_can_retry,
                            min_retries_per_sec,
                            ttl_secs,
                        )),
                    };
                    let rng = Rng::stream(
                        seed,
                        2_000_000 + u64::from(layer) * 10_000_000 + u64::from(client),
                    );
                    Policy::Baseline(BaselineClient::new(
                        budget,
                        *backoff,
                        *retry_after,
                        attempts,
                        deadline,
                        rng,
                    ))
                })
                .collect()),
        }
    }

    /// The configuration of a `retry-core` strategy in a layer whose calls make `attempts`
    /// attempts (unless the strategy fixes its own) within `deadline`.
    ///
    /// ```
    /// use retry_sim::{strategy::StrategySpec, time::SECOND};
    /// let config = StrategySpec::named("default").unwrap().layer_config(4, 5 * SECOND).unwrap();
    /// assert_eq!(config.max_attempts(), 4);
    /// assert!(StrategySpec::named("grpc").unwrap().layer_config(3, SECOND).is_err());
    /// ```
    pub fn layer_config(&self, attempts: u32, deadline: Nanos) -> Result<RetryConfig, String> {
        let StrategyKind::Ours { config, .. } = &self.kind else {
            return Err(format!("strategy `{}` is not retry-core's", self.name));
        };
        config
            .to_builder()
            .max_attempts(self.attempts(attempts))
            .timeout(to_duration(deadline.max(1)))
            .build()
            .map_err(|error| format!("strategy `{}`: {error}", self.name))
    }

    /// This strategy with `retry-core`'s hedging `hedge`, named `name`: a strategy of
    /// `retry-core` in standard mode with a private scope per client. The runtime's
    /// `HedgedLoop`, which runs the arm's calls, hedges in adaptive mode and in a shared scope
    /// too; no hedging arm is measured there yet, so those are refused rather than reported
    /// without a test of their figures.
    fn hedged(mut self, name: &str, hedge: HedgeSpec) -> Result<Self, String> {
        match &self.kind {
            StrategyKind::Ours {
                config,
                quota: QuotaSizing::PerClient,
                ..
            } if config.mode() != RetryMode::Adaptive => {}
            _ => {
                return Err(format!(
                    "strategy `{name}`: retry-core's hedging is simulated over a strategy of \
                     retry-core in standard mode with a scope per client, which `{}` is not",
                    self.name
                ));
            }
        }
        name.clone_into(&mut self.name);
        self.hedge = Some(hedge);
        Ok(self)
    }

    /// A one-line description for reports.
    ///
    /// ```
    /// let spec = retry_sim::strategy::StrategySpec::named("grpc").unwrap();
    /// assert!(spec.describe().contains("maxTokens 10"));
    /// ```
    pub fn describe(&self) -> String {
        match &self.hedge {
            Some(hedge) => format!("{self}; {hedge}"),
            None => self.to_string(),
        }
    }
}

impl fmt::Display for StrategySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let attempts = match self.max_attempts {
            Some(n) => format!("{n} attempt(s)"),
            None => "scenario's attempts".to_owned(),
        };
        let ms = |n: Nanos| n as f64 / MILLI as f64;
        match &self.kind {
            StrategyKind::Ours {
                config,
                quota,
                congestion,
            } => {
                write!(
                    f,
                    "retry-core {} mode, {attempts}, backoff {:?} (throttling {:?}) to {:?}, {} jitter, quota {} (cost {}/{}/{} for error/timeout/throttling, reward {})",
                    config.mode(),
                    config.initial_backoff(),
                    config.throttling_backoff(),
                    config.max_backoff(),
                    config.jitter(),
                    config.quota_capacity(),
                    config.retry_cost(),
                    config.timeout_retry_cost(),
                    config.throttling_retry_cost(),
                    config.success_reward(),
                )?;
                if let Some(slack) = config.retry_after_slack() {
                    write!(f, ", Retry-After clamped to [t_i, t_i + {slack:?}]")?;
                }
                if let Some(wait) = config.max_wait() {
                    write!(f, ", max_wait {wait:?}")?;
                }
                if config.mode() == RetryMode::Adaptive {
                    match congestion {
                        CongestionSignals::ThrottlingAndTimeouts => {
                            write!(f, ", rate lowered by throttling and attempt timeouts")?
                        }
                        CongestionSignals::ThrottlingTimeoutsAndLatency => write!(
                            f,
                            ", rate lowered by throttling, attempt timeouts and latency far above its baseline"
                        )?,
                        _ => write!(f, ", rate lowered by throttling (as the AWS SDKs)")?,
                    }
                }
                if let Some(window) = config.quota_window() {
                    write!(
                        f,
                        ", quota sized by traffic (one token per call of the last {window:?}, at least one whole call's retries, at most {}; at least {} while the scope is younger than {window:?}; a success gives back every retry it paid for; what calls in flight hold lent while retried calls come back; one whole call's retries after {window:?} without a retry asked)",
                        config.quota_capacity(),
                        YOUNG_SCOPE_QUOTA.min(config.quota_capacity())
                    )?;
                }
                match quota {
                    QuotaSizing::PerClient => write!(f, ", one private scope per client"),
                    QuotaSizing::Shared => write!(f, ", one scope shared by every client"),
                    QuotaSizing::NaiveStore => write!(
                        f,
                        ", one scope shared by every client in the store, a round trip on every send and every failed attempt"
                    ),
                    QuotaSizing::Fleet(tuning) => write!(
                        f,
                        ", fleet mode: one private scope per process driven by the store's lease ({tuning})"
                    ),
                    QuotaSizing::StaticSplit => write!(
                        f,
                        ", one private scope per process behind its static share of the server's limit"
                    ),
                }
            }
            StrategyKind::Baseline {
                budget,
                backoff,
                retry_after,
            } => {
                if backoff.initial == 0 {
                    write!(f, "{attempts}, no backoff")?;
                } else {
                    write!(
                        f,
                        "{attempts}, backoff {:.0} ms x{} to {:.0} ms{}",
                        ms(backoff.initial),
                        backoff.multiplier,
                        ms(backoff.max),
                        if backoff.jitter { ", full jitter" } else { "" }
                    )?;
                }
                match budget {
                    BudgetSpec::Unlimited => {}
                    BudgetSpec::Grpc {
                        max_tokens,
                        token_ratio,
                    } => write!(
                        f,
                        ", gRPC retry throttling (maxTokens {max_tokens}, tokenRatio {token_ratio})"
                    )?,
                    BudgetSpec::Sre { k, window_secs } => write!(
                        f,
                        ", SRE client-side throttling (K = {k}, window {window_secs} s)"
                    )?,
                    BudgetSpec::Finagle {
                        percent_can_retry,
                        min_retries_per_sec,
                        ttl_secs,
                    } => write!(
                        f,
                        ", Finagle RetryBudget ({:.0} %, {min_retries_per_sec}/s, ttl {ttl_secs} s)",
                        percent_can_retry * 100.0
                    )?,
                }
                match retry_after {
                    RetryAfterUse::Ignore => write!(f, ", ignores Retry-After"),
                    RetryAfterUse::AtLeast => write!(f, ", waits at least Retry-After"),
                    RetryAfterUse::Replace => write!(f, ", Retry-After as server pushback"),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The description's young-scope quota is what a new traffic-sized scope starts with.
    #[test]
    fn the_young_scope_quota_is_the_runtimes() {
        let scope = Scope::new("young", &RetryConfig::default());
        assert_eq!(scope.quota().level(), YOUNG_SCOPE_QUOTA);
    }
}
