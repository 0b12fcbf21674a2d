//! One simulated client's retry behavior: `retry-core`'s real strategies or a baseline, behind
//! one interface that the event loop drives exactly like `retry-core`'s `RetryLoop`.

use retry_core::adaptive::Reservation;
use retry_core::{ErrorKind, RetryError, RetryReason, RetryStrategy, RetryToken, SendPermit};

use crate::baseline::{BaseToken, BaselineClient, Outcome};
use crate::time::{Nanos, from_duration, to_duration};

/// A client's retry behavior.
#[derive(Debug)]
pub enum Policy {
    /// A `retry-core` strategy (standard or adaptive), with its own or a shared scope.
    Ours(Box<dyn RetryStrategy>),
    /// A baseline modelled in the simulator.
    Baseline(BaselineClient),
}

/// One call's retry state.
#[derive(Debug)]
pub enum Token {
    /// `retry-core`'s token, and the call's place in the rate limiter's line, as `RetryLoop`
    /// keeps them.
    Ours {
        /// The current attempt's token.
        token: RetryToken,
        /// The place among the limiter's waiters (adaptive mode), kept between permit requests
        /// for one attempt; dropped with the token when the call ends or is cancelled, which
        /// gives the place up.
        place: Option<Reservation>,
    },
    /// A baseline's token.
    Baseline(BaseToken),
}

impl Token {
    /// The backoff before this token's attempt.
    ///
    /// ```
    /// use retry_sim::{baseline::BaseToken, policy::Token};
    /// let token = Token::Baseline(BaseToken { attempt: 1, started: 0, delay: 7 });
    /// assert_eq!(token.delay(), 7);
    /// ```
    pub fn delay(&self) -> Nanos {
        match self {
            Token::Ours { token, .. } => from_duration(token.delay()),
            Token::Baseline(token) => token.delay,
        }
    }
}

/// Whether an attempt may be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Permit {
    /// Send now.
    Granted,
    /// Ask again after this long.
    Wait(Nanos),
    /// Not sent: the call ends (an attempt a baseline rejected locally). `retry-core`'s
    /// strategies never refuse here: they decide in `refresh_retry_token`.
    Refused,
}

/// Why a failed attempt is not retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Attempts, quota, deadline, `Retry-After`, a non-retryable failure, a baseline's budget.
    GaveUp,
    /// The client refused the retry to shed load: its send permit was expected later than
    /// `max_wait` (`RetryError::RateLimited`).
    RateLimited,
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

impl Policy {
    /// A call starts at `now`: `acquire_initial_token`.
    pub fn start(&mut self, now: Nanos) -> Token {
        match self {
            Policy::Ours(strategy) => Token::Ours {
                token: strategy.acquire_initial_token(),
                place: None,
            },
            Policy::Baseline(client) => Token::Baseline(client.start(now)),
        }
    }

    /// May the token's attempt be sent now: `acquire_send_permit`, with the place in line
    /// the previous request for this attempt handed out. Ours never refuse.
    pub fn permit(&mut self, token: &mut Token, now: Nanos) -> Permit {
        match (self, token) {
            (Policy::Ours(strategy), Token::Ours { token, place }) => {
                match strategy.acquire_send_permit(token, place) {
                    SendPermit::Granted => Permit::Granted,
                    SendPermit::Wait(wait) => Permit::Wait(from_duration(wait).max(1)),
                }
            }
            (Policy::Baseline(client), Token::Baseline(_)) => {
                if client.admit(now) {
                    Permit::Granted
                } else {
                    Permit::Refused
                }
            }
            _ => Permit::Refused,
        }
    }

    /// The call's attempt succeeded: `record_success`.
    pub fn succeeded(&mut self, token: Token, now: Nanos) {
        match (self, token) {
            (Policy::Ours(strategy), Token::Ours { token, .. }) => strategy.record_success(token),
            (Policy::Baseline(client), Token::Baseline(_)) => {
                client.on_response(Outcome::Success, now)
            }
            _ => {}
        }
    }

    /// The call's attempt failed: `refresh_retry_token`, which takes every decision to stop.
    /// `Ok` is the next attempt's token (its delay to be slept first); `Err` ends the call with
    /// this failure.
    pub fn failed(&mut self, token: Token, failure: &Failure, now: Nanos) -> Result<Token, Stop> {
        match (self, token) {
            (Policy::Ours(strategy), Token::Ours { token, .. }) => {
                match strategy.refresh_retry_token(token, &failure.reason()) {
                    Ok(token) => Ok(Token::Ours { token, place: None }),
                    Err(RetryError::RateLimited { .. }) => Err(Stop::RateLimited),
                    Err(_) => Err(Stop::GaveUp),
                }
            }
            (Policy::Baseline(client), Token::Baseline(token)) => {
                client.on_response(
                    Outcome::Failure {
                        accepted: failure.accepted,
                    },
                    now,
                );
                client
                    .retry(token, failure.retry_after, now)
                    .map(Token::Baseline)
                    .ok_or(Stop::GaveUp)
            }
            _ => Err(Stop::GaveUp),
        }
    }

    /// A permit was refused (only a baseline refuses): a retry granted but never sent gives
    /// its quota back (`abandon`).
    pub fn refused(&mut self, token: Token) {
        if let (Policy::Ours(strategy), Token::Ours { token, .. }) = (self, token) {
            strategy.abandon(token);
        }
    }

    /// The caller's deadline cancelled the call: like dropping `RetryLoop`, an attempt in flight
    /// is a failure (`record_failure`), an attempt not yet sent (a retry in its backoff, or any
    /// attempt waiting for its permit) is abandoned, and a place in the limiter's line is given
    /// up (the reservation dropped with the token).
    pub fn cancelled(&mut self, token: Token, in_flight: bool) {
        if let (Policy::Ours(strategy), Token::Ours { token, .. }) = (self, token) {
            if in_flight {
                strategy.record_failure(token);
            } else {
                strategy.abandon(token);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use retry_core::{
        AdaptiveStrategy, FixedRandom, ManualClock, RetryConfig, RetryConfigBuilder,
        StandardStrategy,
    };

    use super::*;
    use crate::time::{MILLI, SECOND};

    fn adaptive(config: RetryConfigBuilder) -> (Policy, Arc<ManualClock>) {
        let clock = Arc::new(ManualClock::new());
        let builder = StandardStrategy::builder(config.build().expect("valid"))
            .clock(clock.clone())
            .random(Arc::new(FixedRandom(1.0)));
        let policy = Policy::Ours(Box::new(AdaptiveStrategy::from_builder(builder)));
        (policy, clock)
    }

    fn throttled() -> Failure {
        Failure {
            kind: ErrorKind::Throttling,
            retry_after: None,
            accepted: false,
        }
    }

    fn waiting(policy: &Policy) -> u32 {
        match policy {
            Policy::Ours(strategy) => strategy.scope().limiter().stats().waiting,
            Policy::Baseline(_) => 0,
        }
    }

    #[test]
    fn a_waiting_call_keeps_its_place_until_granted_or_cancelled() {
        let (mut policy, clock) = adaptive(RetryConfig::aws_classic());
        let mut call = policy.start(0);
        assert_eq!(policy.permit(&mut call, 0), Permit::Granted);
        // The throttle turns the bucket on (empty, 0.5/s); after the 1 s backoff the retry's
        // permit is 1 s away, asked for every 500 ms with the same place.
        let mut call = policy.failed(call, &throttled(), 0).expect("retried");
        assert_eq!(call.delay(), SECOND);
        clock.advance(Duration::from_secs(1));
        for at in [SECOND, 1500 * MILLI] {
            assert_eq!(policy.permit(&mut call, at), Permit::Wait(500 * MILLI));
            assert!(matches!(call, Token::Ours { place: Some(_), .. }));
            assert_eq!(waiting(&policy), 1, "one place, kept");
            clock.advance(Duration::from_millis(500));
        }
        assert_eq!(policy.permit(&mut call, 2 * SECOND), Permit::Granted);
        assert!(matches!(call, Token::Ours { place: None, .. }));
        assert_eq!(waiting(&policy), 0);
        policy.succeeded(call, 2 * SECOND);
        // A call cancelled while it waits gives its place up.
        let mut other = policy.start(2 * SECOND);
        assert!(matches!(
            policy.permit(&mut other, 2 * SECOND),
            Permit::Wait(_)
        ));
        assert_eq!(waiting(&policy), 1);
        policy.cancelled(other, false);
        assert_eq!(waiting(&policy), 0);
    }

    #[test]
    fn max_wait_refuses_the_retry_when_the_attempt_fails() {
        let (mut policy, _clock) =
            adaptive(RetryConfig::aws_classic().max_wait(Duration::from_millis(300)));
        let mut call = policy.start(0);
        assert_eq!(policy.permit(&mut call, 0), Permit::Granted);
        // The retry's permit would come 1 s after its backoff: refused now, nothing queued.
        assert_eq!(
            policy.failed(call, &throttled(), 0).map(|_| ()),
            Err(Stop::RateLimited)
        );
        assert_eq!(waiting(&policy), 0);
        let Policy::Ours(strategy) = &policy else {
            unreachable!()
        };
        let stats = strategy.scope().stats();
        assert_eq!((stats.rate_limited, stats.quota_level), (1, 500));
    }
}
