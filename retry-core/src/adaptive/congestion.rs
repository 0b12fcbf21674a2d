//! Which failures tell adaptive mode that the service is congested.

use crate::classify::ErrorKind;

/// The failures that lower adaptive mode's send rate.
///
/// TCP lowers its window on loss as well as on explicit congestion notification; an attempt
/// that timed out is the client-side counterpart of a loss. The AWS SDKs' adaptive mode reacts
/// to throttling responses only, so a service that slows down instead of answering 429 (a
/// brownout: half the workers lost, the queue filling) never engages it, and every attempt
/// queues until it times out.
///
/// A timeout counts only while the service answers other calls (a queue, not an outage: successful
/// calls ended while the attempt waited). In the simulator's S2 brownout, counting
/// timeouts raises adaptive mode's goodput from 0.29 to 0.44 of capacity, and judging latency
/// too to 0.82. The default stays the AWS SDKs' (throttling only): the latency rule learns its
/// baseline from calls that have a deadline (`timeout`), and a scope without one would learn it
/// during the congestion it should detect; and it is what users of the AWS SDKs expect. See
/// `docs/sim/adaptive.md`.
///
/// ```
/// use retry_core::ErrorKind;
/// use retry_core::adaptive::CongestionSignals;
/// assert!(!CongestionSignals::default().is_congestion(ErrorKind::Timeout));
/// assert!(CongestionSignals::ThrottlingAndTimeouts.is_congestion(ErrorKind::Timeout));
/// assert!(CongestionSignals::Throttling.is_congestion(ErrorKind::Throttling));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CongestionSignals {
    /// Throttling responses only: the AWS SDKs' adaptive mode (the default).
    #[default]
    Throttling,
    /// Throttling responses and attempt timeouts.
    ThrottlingAndTimeouts,
    /// Throttling responses, attempt timeouts, and successes to attempts sent while the limiter
    /// is on whose smoothed latency is far above the scope's recent baseline (4 times the least
    /// smoothed latency of the last 30 to 60 s): a service's queue is read as it fills,
    /// before its attempts time out.
    ThrottlingTimeoutsAndLatency,
}

impl CongestionSignals {
    /// Whether a failure of `kind` lowers the send rate.
    ///
    /// ```
    /// use retry_core::ErrorKind;
    /// use retry_core::adaptive::CongestionSignals;
    /// assert!(!CongestionSignals::ThrottlingAndTimeouts.is_congestion(ErrorKind::Server));
    /// ```
    pub fn is_congestion(self, kind: ErrorKind) -> bool {
        match self {
            CongestionSignals::ThrottlingAndTimeouts
            | CongestionSignals::ThrottlingTimeoutsAndLatency => {
                kind.is_throttling() || kind == ErrorKind::Timeout
            }
            CongestionSignals::Throttling => kind.is_throttling(),
        }
    }

    /// Whether latency far above the baseline lowers the send rate.
    ///
    /// ```
    /// use retry_core::adaptive::CongestionSignals;
    /// assert!(CongestionSignals::ThrottlingTimeoutsAndLatency.judges_latency());
    /// assert!(!CongestionSignals::ThrottlingAndTimeouts.judges_latency());
    /// ```
    pub fn judges_latency(self) -> bool {
        self == CongestionSignals::ThrottlingTimeoutsAndLatency
    }
}
