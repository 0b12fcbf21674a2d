//! The store connection's timeouts and reconnection backoff, derived from the sync interval.

use std::time::Duration;

/// How a [`RedisStore`](super::redis::RedisStore) waits and backs off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreOptions {
    /// How long a connection (TCP, TLS, `AUTH`, `SELECT`; a cluster's slots and masters) may
    /// take.
    pub connect_timeout: Duration,
    /// How long a command (a sync, a pipeline of syncs, a read) may take.
    pub command_timeout: Duration,
    /// The first reconnection delay; it doubles with each failure, jittered.
    pub reconnect_base: Duration,
    /// The longest reconnection delay: one sync interval.
    pub reconnect_max: Duration,
}

impl StoreOptions {
    /// The options for a sync interval: both timeouts a quarter of it (a sync that fails then
    /// leaves three quarters of the interval before the next), reconnection from a twentieth
    /// of it up to all of it.
    ///
    /// ```
    /// use retry_core::fleet::redis::StoreOptions;
    /// use std::time::Duration;
    /// let options = StoreOptions::for_interval(Duration::from_secs(1));
    /// assert_eq!(options.command_timeout, Duration::from_millis(250));
    /// assert_eq!(options.reconnect_max, Duration::from_secs(1));
    /// ```
    pub fn for_interval(interval: Duration) -> Self {
        Self {
            connect_timeout: interval / 4,
            command_timeout: interval / 4,
            reconnect_base: interval / 20,
            reconnect_max: interval,
        }
    }
}
