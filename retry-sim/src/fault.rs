//! The fault schedule: what goes wrong at the server, and when.

use crate::time::{Nanos, SECOND};

/// One kind of fault.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FaultKind {
    /// Full outage: every attempt is answered at once with 503 (fast fail).
    Outage,
    /// Blackhole: attempts get no answer and time out at the client.
    Blackhole,
    /// Capacity brownout: only `capacity` (a fraction, 0 to 1) of the workers serve.
    Brownout {
        /// Fraction of the workers left.
        capacity: f64,
    },
    /// Throttling: the server admits `rate` attempts per second (a token bucket of `burst`) and
    /// answers the others at once with 429 and `Retry-After: retry_after`.
    Throttle {
        /// Admitted attempts per second.
        rate: f64,
        /// Bucket size, in attempts.
        burst: f64,
        /// The `Retry-After` the 429s carry.
        retry_after: Nanos,
    },
    /// Independent failures: each served attempt fails (500, after its service time) with
    /// probability `probability`.
    Failures {
        /// Failure probability of one attempt.
        probability: f64,
    },
    /// A hot key: the server answers a fixed `share` of the attempts (chosen at random) at once
    /// with 429 and `Retry-After: retry_after`, whatever the rate it receives: throttling that
    /// sending slower does not relieve.
    HotKey {
        /// Share of the attempts throttled, 0 to 1.
        share: f64,
        /// The `Retry-After` the 429s carry.
        retry_after: Nanos,
    },
    /// Load spike: the clients' arrival rate is multiplied by `factor`.
    LoadSpike {
        /// Arrival rate multiplier.
        factor: f64,
    },
}

impl FaultKind {
    /// A short name for tables.
    ///
    /// ```
    /// assert_eq!(retry_sim::fault::FaultKind::Outage.name(), "outage");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::Outage => "outage",
            FaultKind::Blackhole => "blackhole",
            FaultKind::Brownout { .. } => "brownout",
            FaultKind::Throttle { .. } => "throttle",
            FaultKind::Failures { .. } => "failures",
            FaultKind::HotKey { .. } => "hot key",
            FaultKind::LoadSpike { .. } => "spike",
        }
    }
}

/// A fault active during `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fault {
    /// What goes wrong.
    pub kind: FaultKind,
    /// When it starts.
    pub start: Nanos,
    /// When it ends.
    pub end: Nanos,
}

impl Fault {
    /// A fault of `kind` from `start_s` for `length_s` seconds.
    ///
    /// ```
    /// use retry_sim::fault::{Fault, FaultKind};
    /// let f = Fault::at(FaultKind::Outage, 120.0, 60.0);
    /// assert_eq!(f.end, 180 * retry_sim::time::SECOND);
    /// ```
    pub fn at(kind: FaultKind, start_s: f64, length_s: f64) -> Self {
        let start = crate::time::secs(start_s);
        Self {
            kind,
            start,
            end: start.saturating_add(crate::time::secs(length_s)),
        }
    }
}

/// The state of the server and the load during one phase, between two fault boundaries.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Phase {
    /// When the phase starts.
    pub start: Nanos,
    /// Every attempt answered 503 at once.
    pub outage: bool,
    /// Attempts vanish.
    pub blackhole: bool,
    /// Fraction of the workers that serve.
    pub capacity: f64,
    /// Throttling, if any: (rate, burst, retry-after).
    pub throttle: Option<(f64, f64, Nanos)>,
    /// A hot key, if any: (share of attempts throttled, retry-after).
    pub hot_key: Option<(f64, Nanos)>,
    /// Probability that a served attempt fails.
    pub fail_probability: f64,
    /// Arrival rate multiplier.
    pub load: f64,
}

impl Phase {
    fn normal(start: Nanos) -> Self {
        Self {
            start,
            outage: false,
            blackhole: false,
            capacity: 1.0,
            throttle: None,
            hot_key: None,
            fail_probability: 0.0,
            load: 1.0,
        }
    }
}

/// The faults of one run.
///
/// ```
/// use retry_sim::fault::{Fault, FaultKind, FaultSchedule};
/// let schedule = FaultSchedule::new(vec![Fault::at(FaultKind::Outage, 10.0, 5.0)]);
/// let phases = schedule.phases();
/// assert_eq!(phases.len(), 3);
/// assert!(phases[1].outage && !phases[2].outage);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultSchedule {
    faults: Vec<Fault>,
}

impl FaultSchedule {
    /// A schedule of `faults` (they may overlap).
    ///
    /// ```
    /// let none = retry_sim::fault::FaultSchedule::new(Vec::new());
    /// assert!(none.window().is_none());
    /// ```
    pub fn new(faults: Vec<Fault>) -> Self {
        Self { faults }
    }

    /// The faults.
    ///
    /// ```
    /// assert!(retry_sim::fault::FaultSchedule::default().faults().is_empty());
    /// ```
    pub fn faults(&self) -> &[Fault] {
        &self.faults
    }

    /// The phases: the state between consecutive fault boundaries, starting at time zero.
    ///
    /// ```
    /// let phases = retry_sim::fault::FaultSchedule::default().phases();
    /// assert_eq!(phases.len(), 1);
    /// ```
    pub fn phases(&self) -> Vec<Phase> {
        let mut bounds: Vec<Nanos> = vec![0];
        for fault in &self.faults {
            bounds.push(fault.start);
            bounds.push(fault.end);
        }
        bounds.sort_unstable();
        bounds.dedup();
        bounds
            .into_iter()
            .map(|start| {
                let mut phase = Phase::normal(start);
                for fault in self
                    .faults
                    .iter()
                    .filter(|f| f.start <= start && start < f.end)
                {
                    match fault.kind {
                        FaultKind::Outage => phase.outage = true,
                        FaultKind::Blackhole => phase.blackhole = true,
                        FaultKind::Brownout { capacity } => {
                            phase.capacity *= capacity.clamp(0.0, 1.0)
                        }
                        FaultKind::Throttle {
                            rate,
                            burst,
                            retry_after,
                        } => phase.throttle = Some((rate, burst, retry_after)),
                        FaultKind::Failures { probability } => {
                            // Independent failure sources compose.
                            phase.fail_probability = 1.0
                                - (1.0 - phase.fail_probability)
                                    * (1.0 - probability.clamp(0.0, 1.0));
                        }
                        FaultKind::HotKey { share, retry_after } => {
                            phase.hot_key = Some((share.clamp(0.0, 1.0), retry_after))
                        }
                        FaultKind::LoadSpike { factor } => phase.load *= factor.max(0.0),
                    }
                }
                phase
            })
            .collect()
    }

    /// The first fault's start and the last fault's end, ignoring faults that cover the whole
    /// run from time zero (a background failure rate is not "a fault with an end").
    ///
    /// ```
    /// use retry_sim::fault::{Fault, FaultKind, FaultSchedule};
    /// let s = FaultSchedule::new(vec![Fault::at(FaultKind::Blackhole, 120.0, 60.0)]);
    /// assert_eq!(s.window(), Some((120 * retry_sim::time::SECOND, 180 * retry_sim::time::SECOND)));
    /// ```
    pub fn window(&self) -> Option<(Nanos, Nanos)> {
        let timed = self.faults.iter().filter(|f| f.start > 0);
        let start = timed.clone().map(|f| f.start).min()?;
        let end = timed.map(|f| f.end).max()?;
        Some((start, end))
    }

    /// The capacity (attempts per second the service can answer usefully) during the fault
    /// window, given the healthy capacity: 0 in an outage or blackhole, the brownout's fraction,
    /// or the throttling rate.
    ///
    /// ```
    /// use retry_sim::fault::{Fault, FaultKind, FaultSchedule};
    /// let s = FaultSchedule::new(vec![Fault::at(FaultKind::Brownout { capacity: 0.5 }, 1.0, 1.0)]);
    /// assert_eq!(s.window_capacity(1000.0), 500.0);
    /// ```
    pub fn window_capacity(&self, healthy: f64) -> f64 {
        let Some((start, _)) = self.window() else {
            return healthy;
        };
        let phases = self.phases();
        let Some(phase) = phases.iter().find(|p| p.start == start) else {
            return healthy;
        };
        if phase.outage || phase.blackhole {
            return 0.0;
        }
        let mut capacity = healthy * phase.capacity * (1.0 - phase.fail_probability);
        if let Some((rate, _, _)) = phase.throttle {
            capacity = capacity.min(rate);
        }
        if let Some((share, _)) = phase.hot_key {
            capacity *= 1.0 - share;
        }
        capacity
    }
}

/// The default fault start of the scenarios: 120 s.
pub const DEFAULT_FAULT_START: Nanos = 120 * SECOND;
