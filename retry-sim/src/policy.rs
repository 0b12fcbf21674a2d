//! One simulated client's retry behavior: `retry-core`'s real strategies, driven by the real
//! `RetryLoop` (the loop `retry`, `Retry` and `#[retryable]` run) or, when the strategy hedges,
//! the real `HedgedLoop` (the loop `Retry::hedge` and `#[retryable(hedge_after = ...)]` run), or
//! a baseline modelled here.
//!
//! The simulator keeps the time: it asks the loop for its next wait
//! ([`RetryLoop::next_wait`]), sleeps it in virtual time, and hands each attempt's outcome to
//! [`RetryLoop::finish`], which takes every decision (attempts, quota, deadline, `max_wait`,
//! `Retry-After`). A call starts with [`RetryLoop::try_shed`] (adaptive mode may shed it); a
//! call cancelled at its deadline drops its loop, which settles its token as a dropped
//! `retry(..)` future does. A hedged call is driven the same way through
//! [`HedgedLoop`]'s synchronous API: the simulator arms a timer for
//! [`HedgedLoop::hedge_wait`] after each copy it sends, asks [`HedgedLoop::try_hedge`] when it
//! fires, and hands each copy's outcome to [`HedgedLoop::finish`] with the copy's attempt. What
//! the simulator measures is therefore what users run.

use retry_core::classify::ClassifierPriority;
use retry_core::driver::{HedgedLoop, NoHook, RetryLoop};
use retry_core::{ClassifyRetry, ErrorKind, RetryAction, RetryReason, RetryStrategy, Scope};

use crate::baseline::{BaseToken, BaselineClient};
use crate::time::{Nanos, to_duration};

/// A client's retry behavior, as [`StrategySpec::build_layer`](crate::strategy::StrategySpec::build_layer)
/// builds it.
#[derive(Debug)]
pub enum Policy {
    /// A `retry-core` strategy (standard or adaptive), and its scope (its own or a shared one,
    /// whose counters the run reads at its end).
    Ours(Box<dyn RetryStrategy>, Scope),
    /// A baseline modelled in the simulator.
    Baseline(BaselineClient),
}

/// A failed attempt, as the client sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failure {
    /// The kind of failure (what a classifier would say).
    pub kind: ErrorKind,
    /// The server's `Retry-After`, if any.
    pub retry_after: Option<Nanos>,
    /// Whether the backend accepted the request (for the SRE throttle).
    pub accepted: bool,
}

impl Failure {
    fn reason(&self) -> RetryReason {
        match self.retry_after {
            Some(after) => RetryReason::error_after(self.kind, to_duration(after)),
            None => RetryReason::error(self.kind),
        }
    }
}

/// The simulator's classifier: every failure is retryable, of its kind, with the server's
/// `Retry-After` (the strategy then decides whether to retry).
///
/// ```
/// use retry_core::{ClassifyRetry, ErrorKind};
/// use retry_sim::policy::{Failure, SimClassifier};
/// let failure = Failure { kind: ErrorKind::Throttling, retry_after: Some(1), accepted: false };
/// assert!(SimClassifier.classify(&Err::<(), _>(failure)).should_retry());
/// assert!(!SimClassifier.classify(&Ok::<(), Failure>(())).should_retry());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SimClassifier;

impl ClassifyRetry<(), Failure> for SimClassifier {
    fn classify(&self, outcome: &Result<(), Failure>) -> RetryAction {
        match outcome {
            Ok(()) => RetryAction::NoActionIndicated,
            Err(failure) => RetryAction::RetryIndicated(failure.reason()),
        }
    }

    fn name(&self) -> &'static str {
        "simulator"
    }

    fn priority(&self) -> ClassifierPriority {
        ClassifierPriority::default()
    }
}

/// The loop of one call of a `retry-core` client.
pub type OursLoop<'a> = RetryLoop<'a, dyn RetryStrategy, SimClassifier, NoHook>;

/// The loop of one hedged call of a `retry-core` client.
pub type HedgedOursLoop<'a> = HedgedLoop<&'a (dyn RetryStrategy + 'static), SimClassifier, NoHook>;

/// One call's retry state.
pub enum Token<'a> {
    /// `retry-core`'s loop (which holds the token and the place in the limiter's line).
    Ours(OursLoop<'a>),
    /// `retry-core`'s hedged loop (the token, its copies in flight and their payments).
    Hedged(Box<HedgedOursLoop<'a>>),
    /// A baseline's token.
    Baseline(BaseToken),
}

impl std::fmt::Debug for Token<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Token::Ours(_) => f.write_str("Token::Ours"),
            Token::Hedged(_) => f.write_str("Token::Hedged"),
            Token::Baseline(token) => f.debug_tuple("Token::Baseline").field(token).finish(),
        }
    }
}
