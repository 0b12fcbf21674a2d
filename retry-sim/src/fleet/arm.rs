//! The ways a fleet of processes can hold its retry budget and its send rate, compared side by
//! side: each process alone, a shared store asked on every request, fleet mode, and an oracle's
//! static split of the server's limit.

use std::fmt;

use crate::time::{MILLI, Nanos, SECOND};

/// How the processes of a fleet share (or not) their retry budget and their send rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arm {
    /// Each process alone: today's strategies, one private scope per process.
    PerProcess,
    /// A naive shared store: one scope (one retry quota, one rate limiter) lives in the store,
    /// and every decision that touches it is a round trip to the store on the call's path:
    /// every send asks for its send permit, every failed attempt reports its outcome and asks
    /// for its retry's tokens (as Envoy's global rate limiting asks its rate-limit service on
    /// every request). Successes report theirs off the path.
    NaiveStore,
    /// Fleet mode: each process decides locally from its own scope, which a background sync
    /// task per process drives from the store's lease (retry-core's process side and store
    /// step).
    Fleet(FleetTuning),
    /// The oracle's static split, the reference of the shape sweep: each process in standard
    /// mode (no adaptive limiter) behind a token bucket of its own at the server's limit times
    /// its share of the fleet's demand among the processes alive (as a per-process `governor`
    /// sized by hand with what only an oracle knows: the limit and every process's mean rate).
    /// A call whose turn in its bucket would come after its deadline fails at once.
    StaticSplit,
}

impl Arm {
    /// The suffix of a strategy's name that selects the arm (`adaptive+fleet`).
    ///
    /// ```
    /// use retry_sim::fleet::arm::{Arm, FleetTuning};
    /// assert_eq!(Arm::NaiveStore.suffix(), "+naive");
    /// assert_eq!(Arm::Fleet(FleetTuning::default()).suffix(), "+fleet");
    /// ```
    pub fn suffix(&self) -> &'static str {
        match self {
            Self::PerProcess => "",
            Self::NaiveStore => "+naive",
            Self::Fleet(_) => "+fleet",
            Self::StaticSplit => "+split",
        }
    }

    /// Whether the arm talks to the store.
    pub fn uses_store(&self) -> bool {
        matches!(self, Self::NaiveStore | Self::Fleet(_))
    }
}

/// The fleet-mode settings the simulation chooses: the store's limiter's multiplicative
/// decrease, the sync interval and the lease's length.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FleetTuning {
    /// A cut sets the fleet's rate to `beta` times the rate the server admitted, in parts per
    /// million.
    pub beta_ppm: u64,
    /// How often each process syncs (jittered ±10 % by its sync task).
    pub sync_interval: Nanos,
    /// How long a process keeps its lease without a successful sync, in sync intervals.
    pub lease_intervals: u64,
}

/// The sync interval's default: 1 s.
pub const DEFAULT_SYNC_INTERVAL: Nanos = SECOND;

/// The fleet limiter's beta by default, in parts per million: retry-core's
/// `fleet::DEFAULT_BETA` (0.8, chosen by the sweep).
pub const DEFAULT_BETA_PPM: u64 = 800_000;

/// A lease lasts this many sync intervals by default.
pub const DEFAULT_LEASE_INTERVALS: u64 = 3;

impl Default for FleetTuning {
    fn default() -> Self {
        Self {
            beta_ppm: DEFAULT_BETA_PPM,
            sync_interval: DEFAULT_SYNC_INTERVAL,
            lease_intervals: DEFAULT_LEASE_INTERVALS,
        }
    }
}

impl FleetTuning {
    /// The lease's length.
    ///
    /// ```
    /// use retry_sim::fleet::arm::FleetTuning;
    /// assert_eq!(FleetTuning::default().lease_ttl(), 3 * retry_sim::time::SECOND);
    /// ```
    pub fn lease_ttl(&self) -> Nanos {
        self.sync_interval.saturating_mul(self.lease_intervals)
    }

    /// Checks the numbers.
    ///
    /// ```
    /// use retry_sim::fleet::arm::FleetTuning;
    /// let bad = FleetTuning { beta_ppm: 1_000_000, ..FleetTuning::default() };
    /// assert!(bad.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), String> {
        if !(1..1_000_000).contains(&self.beta_ppm) {
            return Err(format!(
                "the fleet's beta must be within (0, 1), not {}",
                self.beta_ppm as f64 / 1e6
            ));
        }
        if self.sync_interval < MILLI {
            return Err("the sync interval must be at least 1 ms".into());
        }
        if self.lease_intervals == 0 {
            return Err("a lease must last at least one sync interval".into());
        }
        Ok(())
    }
}

impl fmt::Display for FleetTuning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "beta {}, sync every {} ms ±10 %, lease {} intervals",
            self.beta_ppm as f64 / 1e6,
            self.sync_interval / MILLI,
            self.lease_intervals
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_librarys() {
        let beta = retry_core::fleet::DEFAULT_BETA;
        assert_eq!(DEFAULT_BETA_PPM, (beta * 1e6).round() as u64);
        let interval = retry_core::fleet::DEFAULT_SYNC_INTERVAL;
        assert_eq!(DEFAULT_SYNC_INTERVAL, interval.as_nanos() as Nanos);
        assert_eq!(
            DEFAULT_LEASE_INTERVALS,
            u64::from(retry_core::fleet::DEFAULT_LEASE_INTERVALS)
        );
    }
}
