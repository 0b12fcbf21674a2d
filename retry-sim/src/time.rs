//! Virtual time: integer nanoseconds since the start of a run.

use std::time::Duration;

/// A point in virtual time or a length of virtual time, in nanoseconds.
pub type Nanos = u64;

/// One millisecond.
pub const MILLI: Nanos = 1_000_000;

/// One microsecond.
pub const MICRO: Nanos = 1_000;

/// One second.
pub const SECOND: Nanos = 1_000_000_000;

/// Nanoseconds in `duration`, saturating.
///
/// ```
/// use retry_sim::time::{SECOND, from_duration};
/// assert_eq!(from_duration(std::time::Duration::from_secs(2)), 2 * SECOND);
/// ```
pub fn from_duration(duration: Duration) -> Nanos {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// The duration of `nanos`.
///
/// ```
/// use retry_sim::time::{MILLI, to_duration};
/// assert_eq!(to_duration(5 * MILLI), std::time::Duration::from_millis(5));
/// ```
pub fn to_duration(nanos: Nanos) -> Duration {
    Duration::from_nanos(nanos)
}

/// `seconds` as nanoseconds (negative and NaN give zero, saturating).
///
/// ```
/// use retry_sim::time::{MILLI, secs};
/// assert_eq!(secs(0.25), 250 * MILLI);
/// ```
pub fn secs(seconds: f64) -> Nanos {
    if seconds.is_nan() || seconds <= 0.0 {
        0
    } else {
        (seconds * SECOND as f64).min(u64::MAX as f64) as Nanos
    }
}

/// `nanos` in seconds.
///
/// ```
/// use retry_sim::time::{SECOND, as_secs};
/// assert_eq!(as_secs(3 * SECOND / 2), 1.5);
/// ```
pub fn as_secs(nanos: Nanos) -> f64 {
    nanos as f64 / SECOND as f64
}
