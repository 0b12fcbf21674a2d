//! The rate limiter's state, behind its lock: the bucket of permits, its fill rate and what
//! moves it (the measured rate, CUBIC, the rule for rate-independent throttling, latency and
//! timeouts), the line of waiters.

use std::time::Duration;

use super::counted_rate::CountedRate;
use super::cubic::Cubic;
use super::latency::LatencyBaseline;
use super::line::Line;
use super::measured_rate::MeasuredRate;
use super::rate_dependence::RateDependence;
use super::response_time::ResponseTime;
use super::time::MonotonicTime;
use super::timeout_evidence::TimeoutEvidence;

/// The lowest fill rate, in permits per second. Source: the AWS SDKs (`MIN_FILL_RATE = 0.5`).
pub(crate) const MIN_FILL_RATE: f64 = 0.5;

/// The lowest bucket capacity, in permits. Source: the AWS SDKs (`MIN_CAPACITY = 1`).
pub(crate) const MIN_CAPACITY: f64 = 1.0;

#[derive(Debug, Clone)]
pub(super) struct LimiterState {
    pub(super) enabled: bool,
    pub(super) fill_rate: f64,
    pub(super) max_capacity: f64,
    pub(super) capacity: f64,
    pub(super) last_refill: f64,
    /// The callers waiting for a permit, oldest first, each owed one permit.
    pub(super) line: Line,
    /// The limiter's own time: the clock's, made monotonic (see [`LimiterState::time`]).
    pub(super) time: MonotonicTime,
    pub(super) measured: MeasuredRate,
    pub(super) cubic: Cubic,
    /// Whether the throttling depends on the rate: whether a throttle lowers it.
    pub(super) dependence: RateDependence,
    /// Whether a caller has been told to wait since the last cut: the client sends at the
    /// fill rate, not at the rate it sent at before the cut (from permits banked then).
    pub(super) slowed: bool,
    /// The limiter was switched on in its scope's first burst, before a rate was counted: it
    /// starts over from the rate counted once there is one.
    pub(super) provisional: bool,
    /// The smoothed latency of responses and its baseline (fed only by
    /// [`ClientRateLimiter::record_response_judging_latency`]).
    pub(super) latency: LatencyBaseline,
    /// How long answers take, whatever the congestion signals: the time a call waiting for its
    /// permit must leave before its deadline.
    pub(super) response_time: ResponseTime,
    /// When the queue standing at the service at the last reduction is expected to have
    /// drained: the reduction's time plus the smoothed latency then (seconds).
    pub(super) queue_drained_at: f64,
    /// Whether the idle responses are sampled (adaptive mode) rather than each fed: the first
    /// congestion then starts from `counted`, not `measured`.
    pub(super) sampled: bool,
    /// The responses counted from the scope's running counts, while the responses are sampled.
    pub(super) counted: CountedRate,
    /// Whether the service answered while attempts timed out (a queue, not an outage).
    pub(super) timeouts: TimeoutEvidence,
    /// Whether a fleet's lease sets the fill rate ([`ClientRateLimiter::pin_rate`]): responses
    /// then feed the measurements and move no rate but for one step down per lease.
    ///
    /// [`ClientRateLimiter::pin_rate`]: super::ClientRateLimiter::pin_rate
    pub(super) pinned: bool,
    /// While pinned, from when a throttle steps the pinned rate down (the lease's time: an
    /// attempt sent earlier met the rate the lease replaced); `None` once one did, until the
    /// next lease (`fleet_rate`'s `step_pinned_rate_down`). Read only while `pinned`.
    #[cfg(feature = "fleet")]
    pub(super) pinned_step_from: Option<f64>,
}

/// How long the bucket takes to gain `missing` (> 0) permits at `fill_rate`, rounded up to the
/// next nanosecond: a wait rounded down would bring the caller back a rounding error short, and
/// a wait of zero would have a caller on a paused or manual clock ask again at the same instant
/// forever.
pub(super) fn time_to_fill(missing: f64, fill_rate: f64) -> Duration {
    let seconds = missing / fill_rate;
    match Duration::try_from_secs_f64(seconds) {
        Ok(wait) if wait.as_secs_f64() < seconds => wait.saturating_add(Duration::from_nanos(1)),
        Ok(wait) => wait,
        Err(_) => Duration::MAX,
    }
}

impl LimiterState {
    /// Lowers the rate from `rate_to_use` at `now`; returns the new rate.
    pub(super) fn lower_rate(&mut self, rate_to_use: f64, now: f64) -> f64 {
        self.queue_drained_at = now + self.latency.smoothed().unwrap_or(0.0);
        self.slowed = false;
        self.dependence.cut(now, rate_to_use);
        self.cubic.on_throttle(rate_to_use, now)
    }

    /// A limiter switched on in its scope's first burst, before a rate was counted, starts
    /// over once the burst is over, from the rate counted then (as if the congestion came
    /// then, at that rate); without one (a lone response), it goes on as it started.
    pub(super) fn restart_if_provisional(&mut self, now: f64) {
        if !self.provisional || now < self.counted.first_burst_ends() {
            return;
        }
        self.provisional = false;
        let Some(counted) = self.counted.rate(now) else {
            return;
        };
        self.measured.restart(counted, now);
        self.dependence = RateDependence::default();
        let new_rate = self.lower_rate(counted, now);
        self.set_rate(new_rate.min(2.0 * counted), now);
    }

    /// The rate the client sends at: the measured rate, or the fill rate when lower once the
    /// limiter holds callers back (the measured rate follows it half a second late). Before
    /// that, the client sends what it wants, from permits banked at the old rate.
    pub(super) fn sending_rate(&self) -> f64 {
        if self.slowed {
            self.fill_rate.min(self.measured.rate())
        } else {
            self.measured.rate()
        }
    }

    /// Empties the bucket at `now`, at a cut of the rate it filled at: the permits banked at
    /// that rate would send at it after the cut, and each throttle they met would cut again.
    pub(super) fn empty_bucket(&mut self, now: f64) {
        self.refill(now);
        self.capacity = 0.0;
    }

    pub(super) fn refill(&mut self, now: f64) {
        if now > self.last_refill {
            let added = (now - self.last_refill) * self.fill_rate;
            self.capacity = (self.capacity + added).min(self.max_capacity);
            self.last_refill = now;
        }
    }

    /// Sets the fill rate (at least [`MIN_FILL_RATE`]) and, as the AWS SDKs do, a bucket of one
    /// second of it.
    pub(super) fn set_rate(&mut self, new_rate: f64, now: f64) {
        self.refill(now);
        self.fill_rate = new_rate.max(MIN_FILL_RATE);
        self.hold_burst_to(Duration::from_secs(1));
    }

    /// Holds the bucket to `span` of the fill rate, at least [`MIN_CAPACITY`] (a second in
    /// [`set_rate`](Self::set_rate); a fleet's pinned share, `fleet_rate::PINNED_BURST`).
    pub(super) fn hold_burst_to(&mut self, span: Duration) {
        self.max_capacity = (self.fill_rate * span.as_secs_f64()).max(MIN_CAPACITY);
        self.capacity = self.capacity.min(self.max_capacity);
    }
}
