//! How a process syncs its fleet scopes: the sync interval, the lease's length and the fleet
//! limiter's multiplicative decrease ([`FleetOptions`]).

use std::time::Duration;

use super::error::FleetError;
use super::protocol::{MAX_LEASE_TTL_MS, MAX_WINDOW_MS, PPM};

/// The default sync interval: each process reports and renews its leases once a second, so a
/// fleet reacts to a throttle within about a second (the store's load is one command per
/// process per interval, whatever the request rate). The simulator's sweep (`docs/sim/fleet.md`:
/// S3's throttling over 1000 processes, 250 ms to 2 s) finds the 429 share and the admitted
/// rate no better at 250 or 500 ms (at 2 or 4 times the store's load) and a little better at
/// 2 s (at twice the time to react and to come back after a fault).
pub const DEFAULT_SYNC_INTERVAL: Duration = Duration::from_secs(1);

/// The default lease, in sync intervals: a process keeps its lease through two failed syncs and
/// falls back to local limits at the third.
pub const DEFAULT_LEASE_INTERVALS: u32 = 3;

/// The default multiplicative decrease of the fleet's rate on a throttle. The AWS SDKs use 0.7
/// per client (`BETA = 0.7`, botocore's `retries/adaptive.py`); the fleet cuts once per round
/// trip from the rate the server admitted, measured across the fleet, so a smaller cut suffices.
/// Chosen by the simulator's sweep (`docs/sim/fleet.md`; S3's throttling over 1000 processes
/// at a 1 s interval, 10 seeds): 0.8 keeps the 429 share at 0.8 % and the admitted rate within
/// 1.006x the limit over 10 s at 0.986 of the limit's goodput; 0.9 lets 1.05 % through
/// (1.023x), 0.7 gives up goodput (0.975) for little.
pub const DEFAULT_BETA: f64 = 0.8;

/// How a process syncs its fleet scopes. Every process attaching a scope must use the same
/// options: they are part of the settings the store compares (a process with others is told of
/// a conflict).
///
/// ```
/// use retry_core::fleet::FleetOptions;
/// use std::time::Duration;
/// let options = FleetOptions::default();
/// assert_eq!(options.sync_interval, Duration::from_secs(1));
/// assert_eq!(options.lease(), Duration::from_secs(3)); // 3 intervals unless set
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct FleetOptions {
    /// How often a process syncs each fleet scope (1 ms to 1 h). Each sync is one command to
    /// the store per scope (pipelined), jittered by ±10 % so that a fleet spreads its syncs
    /// (±50 % for the sync after one that took in an attach: processes started together
    /// then stop syncing in step).
    pub sync_interval: Duration,
    /// How long a lease lasts after the sync that granted it (at least one interval, at most a
    /// day); `None`: [`DEFAULT_LEASE_INTERVALS`] intervals.
    pub lease_ttl: Option<Duration>,
    /// The fleet limiter's multiplicative decrease on a throttle, strictly between 0 and 1.
    pub beta: f64,
}

impl Default for FleetOptions {
    fn default() -> Self {
        Self {
            sync_interval: DEFAULT_SYNC_INTERVAL,
            lease_ttl: None,
            beta: DEFAULT_BETA,
        }
    }
}

impl FleetOptions {
    /// The lease's length: [`lease_ttl`](Self::lease_ttl) if set, or
    /// [`DEFAULT_LEASE_INTERVALS`] sync intervals.
    pub fn lease(&self) -> Duration {
        self.lease_ttl
            .unwrap_or(self.sync_interval.saturating_mul(DEFAULT_LEASE_INTERVALS))
    }

    /// The sync interval in milliseconds, checked.
    pub(crate) fn sync_interval_ms(&self) -> Result<u64, FleetError> {
        let ms = whole_ms(self.sync_interval);
        if ms == 0
            || ms > MAX_WINDOW_MS
            || !self.sync_interval.subsec_nanos().is_multiple_of(1_000_000)
        {
            return Err(FleetError::InvalidSetting {
                setting: "sync_interval",
                reason: format!(
                    "{:?} is not a whole number of milliseconds from 1 ms to 1 h",
                    self.sync_interval
                ),
            });
        }
        Ok(ms)
    }

    /// The lease in milliseconds, checked (at least the sync interval).
    pub(crate) fn lease_ttl_ms(&self) -> Result<u64, FleetError> {
        let interval = self.sync_interval_ms()?;
        let lease = self.lease();
        let ms = whole_ms(lease);
        if ms < interval || ms > MAX_LEASE_TTL_MS || !lease.subsec_nanos().is_multiple_of(1_000_000)
        {
            return Err(FleetError::InvalidSetting {
                setting: "lease_ttl",
                reason: format!(
                    "{lease:?} is not a whole number of milliseconds from the sync interval \
                     ({interval} ms) to a day"
                ),
            });
        }
        Ok(ms)
    }

    /// The beta in parts per million, checked.
    pub(crate) fn beta_ppm(&self) -> Result<u64, FleetError> {
        let ppm = (self.beta * PPM as f64).round();
        if !(self.beta > 0.0 && self.beta < 1.0 && (1.0..PPM as f64).contains(&ppm)) {
            return Err(FleetError::InvalidSetting {
                setting: "beta",
                reason: format!("{} is not strictly between 0 and 1", self.beta),
            });
        }
        // A whole number of parts per million below PPM: exact in u64.
        Ok(ppm as u64)
    }
}

fn whole_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(sync_interval: Duration, lease: Option<Duration>, beta: f64) -> FleetOptions {
        FleetOptions {
            sync_interval,
            lease_ttl: lease,
            beta,
        }
    }

    #[test]
    fn every_option_out_of_bounds_is_an_error_naming_it() {
        let ms = Duration::from_millis;
        let setting = |result: Result<u64, FleetError>| match result {
            Err(FleetError::InvalidSetting { setting, .. }) => setting,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            setting(with(ms(0), None, 0.9).sync_interval_ms()),
            "sync_interval"
        );
        assert_eq!(
            setting(with(Duration::from_micros(1_500), None, 0.9).sync_interval_ms()),
            "sync_interval"
        );
        assert_eq!(
            setting(with(ms(3_600_001), None, 0.9).sync_interval_ms()),
            "sync_interval"
        );
        assert_eq!(
            setting(with(ms(100), Some(ms(99)), 0.9).lease_ttl_ms()),
            "lease_ttl"
        );
        assert_eq!(setting(with(ms(100), None, 1.0).beta_ppm()), "beta");
        assert_eq!(setting(with(ms(100), None, 0.0).beta_ppm()), "beta");
        assert_eq!(setting(with(ms(100), None, f64::NAN).beta_ppm()), "beta");
        assert_eq!(setting(with(ms(100), None, 0.999_999_9).beta_ppm()), "beta");
    }

    #[test]
    fn the_lease_defaults_to_three_intervals() {
        let options = with(Duration::from_millis(250), None, 0.9);
        assert_eq!(options.lease_ttl_ms().expect("valid"), 750);
        assert_eq!(options.beta_ppm().expect("valid"), 900_000);
    }
}
