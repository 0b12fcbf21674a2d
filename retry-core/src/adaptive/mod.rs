//! Adaptive mode's client-side rate limiting, after the AWS SDKs' adaptive retry mode (botocore's
//! `retries/adaptive.py`, the smithy-rs RFC "Implementing Adaptive Retry Behavior").

mod congestion;
mod counted_rate;
mod cubic;
mod idle_sample;
mod latency;
mod line;
mod measured_rate;
mod rate_dependence;
mod rate_limiter;
mod shed;
mod timeout_evidence;

pub use congestion::CongestionSignals;
pub use cubic::{BETA, Cubic, REFERENCE_RATE, SCALE_CONSTANT};
pub(crate) use idle_sample::idle_sample_due;
pub use idle_sample::reseed_idle_sampling;
pub use latency::{BASELINE_GAIN, BASELINE_WINDOW, LATENCY_FACTOR, LATENCY_GAIN, LatencyBaseline};
pub use line::WAITER_LEASE;
pub use measured_rate::{BUCKET_SECONDS, MeasuredRate, SMOOTH};
pub use rate_dependence::{
    EVIDENCE_BOUND, QUIET, RATE_INDEPENDENT_AFTER, RATE_LIMITED_FALL, RISE_BOUND, RateDependence,
    SMALL_SHARE, WORSE_SHARE,
};
pub use rate_limiter::{
    Admission, ClientRateLimiter, IDLE_SAMPLE, LimiterStats, MAX_SLEEP_BEFORE_RECHECK,
    MIN_CAPACITY, MIN_FILL_RATE, Reservation,
};
pub(crate) use rate_limiter::{Response, Ticket, TicketAdmission};
pub use shed::{LoadShed, ShedReason};
pub use timeout_evidence::TimeoutEvidence;
