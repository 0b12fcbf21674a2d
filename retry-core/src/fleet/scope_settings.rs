//! A fleet scope's [`Settings`] from its retry configuration and the fleet's options, and the
//! fingerprint of every other setting that changes how the scope spends its budget or paces
//! its sends.

use std::time::Duration;

use super::error::FleetError;
use super::options::FleetOptions;
use super::protocol::{MAX_WINDOW_MS, Settings};
use crate::config::{RetryConfig, RetryMode};
use crate::quota::young_quota;

/// The settings outside [`Settings`]' numbers that change how a scope spends the fleet's
/// budget or paces its sends, hashed into [`Settings::config_hash`]: two processes that differ
/// in one of them are told of a conflict (which names `config_hash` and lists these).
pub const FINGERPRINTED: [&str; 7] = [
    "mode",
    "max_attempts",
    "retry_cost",
    "timeout_retry_cost",
    "throttling_retry_cost",
    "quota_refill_per_second",
    "max_wait",
];

impl Settings {
    /// The settings of a scope made from `config`, synced with `options`: the quota's window,
    /// young quota, capacity, dearest retry cost and success reward, the sync interval, the
    /// lease and beta, and a fingerprint of the settings listed in [`FINGERPRINTED`].
    ///
    /// A fleet's budget follows the fleet's traffic, so `config` needs a `quota_window` (the
    /// default has one: 60 s); a fixed quota (`RetryConfig::aws_classic`) is an error.
    ///
    /// ```
    /// use retry_core::RetryConfig;
    /// use retry_core::fleet::FleetOptions;
    /// use retry_core::fleet::protocol::Settings;
    ///
    /// let settings = Settings::from_config(&RetryConfig::default(), &FleetOptions::default())?;
    /// assert_eq!((settings.window_ms, settings.young_quota, settings.most), (60_000, 500, 5_000));
    /// assert_eq!((settings.sync_interval_ms, settings.lease_ttl_ms), (1_000, 3_000));
    /// let classic = RetryConfig::aws_classic().build()?;
    /// assert!(Settings::from_config(&classic, &FleetOptions::default()).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_config(config: &RetryConfig, options: &FleetOptions) -> Result<Self, FleetError> {
        let window = config
            .quota_window()
            .ok_or_else(|| FleetError::InvalidSetting {
                setting: "quota_window",
                reason:
                    "the scope's quota is fixed: a fleet's budget follows the fleet's traffic, \
                     so fleet mode needs a quota_window (the default, 60 s)"
                        .into(),
            })?;
        let window_ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        if !(1..=MAX_WINDOW_MS).contains(&window_ms) {
            return Err(FleetError::InvalidSetting {
                setting: "quota_window",
                reason: format!("{window:?} is not from 1 ms to 1 h, as fleet mode needs"),
            });
        }
        let dearest = config
            .retry_cost()
            .max(config.timeout_retry_cost())
            .max(config.throttling_retry_cost());
        let settings = Self {
            window_ms,
            young_quota: u64::from(young_quota(config)),
            most: u64::from(config.quota_capacity()),
            retry_cost: u64::from(dearest),
            success_reward: u64::from(config.success_reward()),
            sync_interval_ms: options.sync_interval_ms()?,
            lease_ttl_ms: options.lease_ttl_ms()?,
            beta_ppm: options.beta_ppm()?,
            config_hash: fingerprint(config),
        };
        settings.check()?;
        Ok(settings)
    }
}

/// The FNV-1a hash (64 bits) of the settings in [`FINGERPRINTED`], each written as fixed-width
/// little-endian integers in that order: the same in every process and every build, unlike
/// std's `DefaultHasher`, whose algorithm may change between Rust releases.
fn fingerprint(config: &RetryConfig) -> u64 {
    let mode: u64 = match config.mode() {
        RetryMode::Standard => 1,
        RetryMode::Adaptive => 2,
    };
    let refill = config.quota_refill_per_second().map_or(0, f64::to_bits);
    let max_wait = config
        .max_wait()
        .map_or(u128::MAX, |wait: Duration| wait.as_nanos());
    let mut hash = Fnv1a::default();
    hash.write(&mode.to_le_bytes());
    hash.write(&config.max_attempts().to_le_bytes());
    hash.write(&config.retry_cost().to_le_bytes());
    hash.write(&config.timeout_retry_cost().to_le_bytes());
    hash.write(&config.throttling_retry_cost().to_le_bytes());
    hash.write(&refill.to_le_bytes());
    hash.write(&max_wait.to_le_bytes());
    hash.0
}

/// FNV-1a, 64 bits (Fowler, Noll and Vo; the offset basis and prime of the FNV specification,
/// draft-eastlake-fnv).
struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    const PRIME: u64 = 0x0000_0100_0000_01b3;

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(Self::PRIME);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(config: crate::config::RetryConfigBuilder) -> Settings {
        Settings::from_config(&config.build().expect("valid"), &FleetOptions::default())
            .expect("a fleet's settings")
    }

    #[test]
    fn fnv1a_matches_its_published_vectors() {
        // draft-eastlake-fnv, test vectors: "" and "a" under FNV-1a 64.
        assert_eq!(Fnv1a::default().0, 0xcbf2_9ce4_8422_2325);
        let mut a = Fnv1a::default();
        a.write(b"a");
        assert_eq!(a.0, 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn every_fingerprinted_setting_changes_the_fingerprint() {
        let base = settings(RetryConfig::builder()).config_hash;
        let adaptive = || RetryConfig::builder().mode(RetryMode::Adaptive);
        let settings_of_adaptive = settings(adaptive()).config_hash;
        let changed = [
            settings(adaptive()),
            settings(RetryConfig::builder().max_attempts(4)),
            settings(RetryConfig::builder().retry_cost(13)),
            settings(RetryConfig::builder().timeout_retry_cost(9)),
            settings(RetryConfig::builder().throttling_retry_cost(4)),
            settings(RetryConfig::builder().quota_refill_per_second(1.0)),
            settings(adaptive().max_wait(Duration::from_secs(1))),
        ];
        assert_eq!(changed.len(), FINGERPRINTED.len());
        for (name, settings) in FINGERPRINTED.iter().zip(changed) {
            // An adaptive mode setting is compared with adaptive mode's fingerprint.
            let base = match *name {
                "max_wait" => settings_of_adaptive,
                _ => base,
            };
            assert_ne!(settings.config_hash, base, "{name}");
        }
        // The same config: the same fingerprint, in every process.
        assert_eq!(settings(RetryConfig::builder()).config_hash, base);
    }

    #[test]
    fn the_numbers_come_from_the_config_and_the_options() {
        let s = settings(
            RetryConfig::builder()
                .quota_capacity(800)
                .quota_window(Duration::from_secs(30))
                .timeout_retry_cost(20)
                .success_reward(2),
        );
        assert_eq!(
            (
                s.window_ms,
                s.young_quota,
                s.most,
                s.retry_cost,
                s.success_reward
            ),
            (30_000, 500, 800, 20, 2)
        );
        assert_eq!(
            (s.beta_ppm, s.sync_interval_ms, s.lease_ttl_ms),
            (800_000, 1_000, 3_000)
        );
    }
}
