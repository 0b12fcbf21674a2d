//! A strategy's answer to a hedge: granted ([`HedgeGrant`], what it cost) or refused
//! ([`HedgeRefusal`], why).

use std::fmt;

use crate::clock::Nanos;

/// A hedge the strategy granted
/// ([`RetryStrategy::acquire_hedge`](crate::RetryStrategy::acquire_hedge)): what it took from the
/// scope's retry quota, part of the call's account from then on: settled with the call's retries
/// when it ends (see [the module's rules](crate::hedge)).
///
/// ```
/// use retry_core::hedge::HedgeGrant;
/// assert_eq!(HedgeGrant::free().cost(), 0);
/// assert_eq!(HedgeGrant::charged(14).cost(), 14);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HedgeGrant {
    pub(crate) cost: u32,
    /// When the hedge got its send permit (adaptive mode; zero when the limiter is off).
    pub(crate) sent_at: Nanos,
}

impl HedgeGrant {
    /// A hedge that took nothing: a strategy without a budget.
    pub fn free() -> Self {
        Self::charged(0)
    }

    /// A hedge that took `cost` from the strategy's budget.
    pub fn charged(cost: u32) -> Self {
        Self {
            cost,
            sent_at: Nanos::ZERO,
        }
    }

    /// What the hedge took from the budget.
    pub fn cost(&self) -> u32 {
        self.cost
    }
}

/// Why a hedge was not sent. The call goes on with the copies in flight; it sends no more
/// hedges. Each refusal but [`NoHedgeDue`](Self::NoHedgeDue) is counted in the
/// `retry.hedges.refused` metric with its [`as_str`](Self::as_str) name as the `refusal` label.
///
/// ```
/// use retry_core::hedge::HedgeRefusal;
/// assert_eq!(HedgeRefusal::QuotaExhausted.as_str(), "quota_exhausted");
/// assert_eq!(
///     HedgeRefusal::Throttled.to_string(),
///     "not hedged: the call or its scope was throttled (a throttling error, a Retry-After, gRPC pushback)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum HedgeRefusal {
    /// The call was declared not idempotent ([`HedgedLoop::idempotent`](crate::driver::HedgedLoop::idempotent)):
    /// no copy of it is sent while another is in flight. (`Retry::hedge` and `#[retryable]`
    /// refuse such a call outright; the tower layer retries a request that is not idempotent
    /// without hedging it.)
    NotIdempotent,
    /// No hedge is due: the call sent its `max_hedges`, has no copy in flight, stopped hedging
    /// (a refusal or a throttle before), or its percentile delay is not known yet. Not counted:
    /// a driver that asks only when [`hedge_wait`](crate::driver::HedgedLoop::hedge_wait) says
    /// so never meets it.
    NoHedgeDue,
    /// The call has made `max_attempts` attempts: hedges and retries share them.
    MaxAttempts,
    /// The call's deadline (`timeout`) has passed.
    Deadline,
    /// The scope's retry quota cannot pay for the hedge and keep half its capacity for retries.
    QuotaExhausted,
    /// A throttling error, a `Retry-After` or gRPC pushback stopped hedging: for the call that
    /// met it, and for its whole scope for a while
    /// ([`THROTTLE_PAUSE`](super::THROTTLE_PAUSE) or the `Retry-After`).
    Throttled,
    /// Adaptive mode: the scope's rate limiter has no spare send permit (someone waits for one,
    /// or its bucket is less than half full). A hedge never waits for a permit.
    RateLimited,
    /// A percentile hedge beyond the scope's hedge budget
    /// ([`ScopeHedging::budget`](super::ScopeHedging::budget)): the scope's percentile hedges
    /// already sent the share of its calls the percentile stands for (5 % at p95), its burst
    /// and its debt ([`HEDGE_BURST`](super::HEDGE_BURST), [`HEDGE_DEBT`](super::HEDGE_DEBT)),
    /// as when a long slow spell makes more calls outlast the percentile than it was measured
    /// for.
    BudgetExhausted,
}

impl HedgeRefusal {
    /// The refusals the metrics count, in the order of their handles.
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) const METERED: [HedgeRefusal; 7] = [
        HedgeRefusal::NotIdempotent,
        HedgeRefusal::MaxAttempts,
        HedgeRefusal::Deadline,
        HedgeRefusal::QuotaExhausted,
        HedgeRefusal::Throttled,
        HedgeRefusal::RateLimited,
        HedgeRefusal::BudgetExhausted,
    ];

    /// The position of a counted refusal in [`METERED`](Self::METERED).
    #[cfg_attr(not(feature = "metrics"), allow(dead_code))]
    pub(crate) fn metered_index(self) -> Option<usize> {
        Self::METERED.iter().position(|&refusal| refusal == self)
    }

    /// A short name for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            HedgeRefusal::NotIdempotent => "not_idempotent",
            HedgeRefusal::NoHedgeDue => "no_hedge_due",
            HedgeRefusal::MaxAttempts => "max_attempts",
            HedgeRefusal::Deadline => "deadline",
            HedgeRefusal::QuotaExhausted => "quota_exhausted",
            HedgeRefusal::Throttled => "throttled",
            HedgeRefusal::RateLimited => "rate_limited",
            HedgeRefusal::BudgetExhausted => "budget_exhausted",
        }
    }
}

impl fmt::Display for HedgeRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = match self {
            HedgeRefusal::NotIdempotent => "the call is not idempotent",
            HedgeRefusal::NoHedgeDue => "no hedge is due",
            HedgeRefusal::MaxAttempts => "the call made max_attempts attempts",
            HedgeRefusal::Deadline => "the call's deadline passed",
            HedgeRefusal::QuotaExhausted => {
                "the retry quota cannot pay for it and keep half its capacity"
            }
            HedgeRefusal::Throttled => {
                "the call or its scope was throttled (a throttling error, a Retry-After, gRPC \
                 pushback)"
            }
            HedgeRefusal::RateLimited => "the rate limiter has no spare send permit",
            HedgeRefusal::BudgetExhausted => {
                "the scope's percentile hedges sent the share of its calls the percentile allows"
            }
        };
        write!(f, "not hedged: {why}")
    }
}

impl std::error::Error for HedgeRefusal {}

#[cfg(test)]
mod tests {
    use super::HedgeRefusal;

    #[test]
    fn every_counted_refusal_has_its_place() {
        for (index, refusal) in HedgeRefusal::METERED.into_iter().enumerate() {
            assert_eq!(refusal.metered_index(), Some(index), "{refusal:?}");
        }
        assert_eq!(HedgeRefusal::NoHedgeDue.metered_index(), None);
    }
}
