//! Adaptive mode's client-side rate limiting, after the AWS SDKs' adaptive retry mode (botocore's
//! `retries/adaptive.py`, the smithy-rs RFC "Implementing Adaptive Retry Behavior"): the
//! [`ClientRateLimiter`] a scope shares, what it answers ([`Admission`], [`Reservation`]) and
//! reports ([`LimiterStats`]), which signals lower its rate ([`CongestionSignals`]), and why a
//! call is shed ([`ShedReason`]). Its tuning constants and the parts that move its rate (CUBIC,
//! the measured rate, the rule for rate-independent throttling, latency, timeouts, the response
//! time a shed call leaves before its deadline) are internal.

mod admission;
mod congestion;
mod counted_rate;
mod cubic;
mod feedback;
#[cfg(feature = "fleet")]
mod fleet_rate;
mod idle_sample;
mod latency;
mod limiter;
mod line;
mod measured_rate;
mod rate_dependence;
mod response_time;
mod state;
mod stats;
mod time;
mod timeout_evidence;

pub use admission::{Admission, Reservation};
pub use congestion::CongestionSignals;
pub(crate) use feedback::{AnswerTime, Response};
pub(crate) use idle_sample::idle_sample_due;
pub use idle_sample::reseed_idle_sampling;
pub use limiter::ClientRateLimiter;
pub(crate) use limiter::TicketAdmission;
pub(crate) use line::Ticket;
pub use stats::LimiterStats;

pub use crate::load_shed::ShedReason;

// What the adaptive mode's tests (`strategy/adaptive_tests.rs`) pin by value.
#[cfg(test)]
pub(crate) use cubic::{BETA, Cubic, REFERENCE_RATE, SCALE_CONSTANT};
#[cfg(test)]
pub(crate) use latency::{BASELINE_WINDOW, LATENCY_FACTOR};
#[cfg(test)]
pub(crate) use line::{MAX_SLEEP_BEFORE_RECHECK, WAITER_LEASE};
#[cfg(test)]
pub(crate) use measured_rate::{MeasuredRate, SMOOTH};
#[cfg(test)]
pub(crate) use state::{MIN_CAPACITY, MIN_FILL_RATE};
