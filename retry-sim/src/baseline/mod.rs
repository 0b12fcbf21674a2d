//! Retry behaviors modelled inside the simulator as baselines: fixed N retries (what users of
//! `backon` or `tokio-retry` get), gRPC retry throttling, the SRE book's client-side adaptive
//! throttling and Finagle's retry budget.
//!
//! They share one retry loop ([`BaselineClient`]): at most `max_attempts` attempts, a backoff
//! policy, a deadline, and a [`Budget`] that may refuse retries or reject attempts locally.

mod finagle;
mod fixed;
mod grpc;
mod sre;

pub use finagle::FinagleBudget;
pub use fixed::Unlimited;
pub use grpc::GrpcThrottle;
pub use sre::SreThrottle;

use crate::rng::Rng;
use crate::time::Nanos;

/// What a response means to a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The attempt succeeded.
    Success,
    /// The attempt failed; `accepted` when the backend took the request (a 500 after service),
    /// not when it refused it (503, 429) or never answered (timeout).
    Failure {
        /// Whether the backend accepted the request.
        accepted: bool,
    },
}

/// A client-side limit on retries or attempts.
pub trait Budget {
    /// A new logical request starts at `now`.
    fn on_request(&mut self, now: Nanos) {
        let _ = now;
    }

    /// Whether an attempt may be sent at `now`; `false` rejects it locally.
    fn admit(&mut self, now: Nanos, rng: &mut Rng) -> bool {
        let _ = (now, rng);
        true
    }

    /// An attempt's response arrived at `now`.
    fn on_response(&mut self, outcome: Outcome, now: Nanos) {
        let _ = (outcome, now);
    }

    /// Whether a failed call may retry at `now`; a `true` answer spends the budget.
    fn allow_retry(&mut self, now: Nanos) -> bool {
        let _ = now;
        true
    }
}

/// The budgets, as one type (static dispatch).
#[derive(Debug, Clone)]
pub enum BudgetKind {
    /// No limit: plain fixed retries.
    Unlimited(Unlimited),
    /// gRPC retry throttling.
    Grpc(GrpcThrottle),
    /// The SRE book's client-side adaptive throttling.
    Sre(SreThrottle),
    /// Finagle's retry budget.
    Finagle(FinagleBudget),
}

impl Budget for BudgetKind {
    fn on_request(&mut self, now: Nanos) {
        match self {
            BudgetKind::Unlimited(b) => b.on_request(now),
            BudgetKind::Grpc(b) => b.on_request(now),
            BudgetKind::Sre(b) => b.on_request(now),
            BudgetKind::Finagle(b) => b.on_request(now),
        }
    }

    fn admit(&mut self, now: Nanos, rng: &mut Rng) -> bool {
        match self {
            BudgetKind::Unlimited(b) => b.admit(now, rng),
            BudgetKind::Grpc(b) => b.admit(now, rng),
            BudgetKind::Sre(b) => b.admit(now, rng),
            BudgetKind::Finagle(b) => b.admit(now, rng),
        }
    }

    fn on_response(&mut self, outcome: Outcome, now: Nanos) {
        match self {
            BudgetKind::Unlimited(b) => b.on_response(outcome, now),
            BudgetKind::Grpc(b) => b.on_response(outcome, now),
            BudgetKind::Sre(b) => b.on_response(outcome, now),
            BudgetKind::Finagle(b) => b.on_response(outcome, now),
        }
    }

    fn allow_retry(&mut self, now: Nanos) -> bool {
        match self {
            BudgetKind::Unlimited(b) => b.allow_retry(now),
            BudgetKind::Grpc(b) => b.allow_retry(now),
            BudgetKind::Sre(b) => b.allow_retry(now),
            BudgetKind::Finagle(b) => b.allow_retry(now),
        }
    }
}

/// Exponential backoff `min(initial * multiplier^(i-1), max)` before retry `i`, optionally with
/// full jitter (`U[0,1)` times that). `initial = 0` retries at once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffSpec {
    /// Delay before the first retry (before jitter).
    pub initial: Nanos,
    /// Cap on the delay.
    pub max: Nanos,
    /// Growth factor per retry.
    pub multiplier: f64,
    /// Full jitter.
    pub jitter: bool,
}

impl BackoffSpec {
    /// No backoff: retry at once.
    pub const NONE: BackoffSpec = BackoffSpec {
        initial: 0,
        max: 0,
        multiplier: 1.0,
        jitter: false,
    };

    /// The delay before retry `retry` (1-based).
    ///
    /// ```
    /// use retry_sim::{baseline::BackoffSpec, rng::Rng, time::SECOND};
    /// let b = BackoffSpec { initial: SECOND, max: 3 * SECOND, multiplier: 2.0, jitter: false };
    /// let mut rng = Rng::new(1);
    /// assert_eq!(b.delay(3, &mut rng), 3 * SECOND);
    /// ```
    pub fn delay(&self, retry: u32, rng: &mut Rng) -> Nanos {
        if self.initial == 0 {
            return 0;
        }
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        let ceiling = (self.initial as f64 * self.multiplier.powi(exponent)).min(self.max as f64);
        let factor = if self.jitter { rng.next_f64() } else { 1.0 };
        (ceiling * factor) as Nanos
    }
}

/// How a baseline treats a server's `Retry-After`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryAfterUse {
    /// Ignore it (`backon`, `tokio-retry` without a custom hook).
    Ignore,
    /// Wait at least that long: `max(backoff, retry_after)`.
    AtLeast,
    /// Use it instead of the backoff (gRPC server pushback).
    Replace,
}

/// One call's state in a baseline's retry loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaseToken {
    /// The attempt this token allows (1 for the first).
    pub attempt: u32,
    /// When the call started.
    pub started: Nanos,
    /// The delay before this token's attempt.
    pub delay: Nanos,
}

/// A baseline retry loop for one simulated client.
#[derive(Debug, Clone)]
pub struct BaselineClient {
    budget: BudgetKind,
    backoff: BackoffSpec,
    retry_after: RetryAfterUse,
    max_attempts: u32,
    deadline: Nanos,
    rng: Rng,
}

impl BaselineClient {
    /// A client with this budget, backoff and `Retry-After` handling, making at most
    /// `max_attempts` attempts and no attempt after `deadline` from the call's start.
    ///
    /// ```
    /// use retry_sim::baseline::*;
    /// use retry_sim::rng::Rng;
    /// let client = BaselineClient::new(
    ///     BudgetKind::Unlimited(Unlimited), BackoffSpec::NONE, RetryAfterUse::Ignore, 3, u64::MAX, Rng::new(1));
    /// # let _ = client;
    /// ```
    pub fn new(
        budget: BudgetKind,
        backoff: BackoffSpec,
        retry_after: RetryAfterUse,
        max_attempts: u32,
        deadline: Nanos,
        rng: Rng,
    ) -> Self {
        Self {
            budget,
            backoff,
            retry_after,
            max_attempts: max_attempts.max(1),
            deadline,
            rng,
        }
    }

    /// A call starts at `now`.
    pub fn start(&mut self, now: Nanos) -> BaseToken {
        self.budget.on_request(now);
        BaseToken {
            attempt: 1,
            started: now,
            delay: 0,
        }
    }

    /// Whether the token's attempt may be sent at `now` (`false`: rejected locally).
    pub fn admit(&mut self, now: Nanos) -> bool {
        self.budget.admit(now, &mut self.rng)
    }

    /// An attempt's response.
    pub fn on_response(&mut self, outcome: Outcome, now: Nanos) {
        self.budget.on_response(outcome, now);
    }

    /// The token for a retry after a failure at `now`, or `None` when the call stops.
    pub fn retry(
        &mut self,
        token: BaseToken,
        retry_after: Option<Nanos>,
        now: Nanos,
    ) -> Option<BaseToken> {
        if token.attempt >= self.max_attempts {
            return None;
        }
        let backoff = self.backoff.delay(token.attempt, &mut self.rng);
        let delay = match (self.retry_after, retry_after) {
            (RetryAfterUse::AtLeast, Some(after)) => backoff.max(after),
            (RetryAfterUse::Replace, Some(after)) => after,
            _ => backoff,
        };
        if now.saturating_add(delay).saturating_sub(token.started) > self.deadline {
            return None;
        }
        if !self.budget.allow_retry(now) {
            return None;
        }
        Some(BaseToken {
            attempt: token.attempt + 1,
            delay,
            ..token
        })
    }
}

/// How many whole seconds `now` is.
fn second_of(now: Nanos) -> u64 {
    now / crate::time::SECOND
}
