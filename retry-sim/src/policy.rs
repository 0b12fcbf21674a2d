//! One simulated client's retry behavior: `retry-core`'s real strategies or a baseline, behind
//! one interface that the event loop drives exactly like `retry-core`'s `RetryLoop`.

use retry_core::{ErrorKind, RetryReason, RetryStrategy, RetryToken, SendPermit};

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
    /// `retry-core`'s token.
    Ours(RetryToken),
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
            Token::Ours(token) => from_duration(token.delay()),
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
    /// Not sent: the call ends (a refused retry, or an attempt rejected locally).
    Refused,
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
            Policy::Ours(strategy) => Token::Ours(strategy.acquire_initial_token()),
            Policy::Baseline(client) => Token::Baseline(client.start(now)),
        }
    }

    /// May the token's attempt be sent now: `acquire_send_permit`.
    pub fn permit(&mut self, token: &mut Token, now: Nanos) -> Permit {
        match (self, token) {
            (Policy::Ours(strategy), Token::Ours(token)) => {
                match strategy.acquire_send_permit(token) {
                    Ok(SendPermit::Granted) => Permit::Granted,
                    Ok(SendPermit::Wait(wait)) => Permit::Wait(from_duration(wait).max(1)),
                    // Like `RetryLoop::ready`: the first attempt is always made.
                    Err(_) if token.attempt() == 1 => Permit::Granted,
                    Err(_) => Permit::Refused,
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
            (Policy::Ours(strategy), Token::Ours(token)) => strategy.record_success(token),
            (Policy::Baseline(client), Token::Baseline(_)) => {
                client.on_response(Outcome::Success, now)
            }
            _ => {}
        }
    }

    /// The call's attempt failed: `refresh_retry_token`. `Some` is the next attempt's token
    /// (its delay to be slept first); `None` ends the call with this failure.
    pub fn failed(&mut self, token: Token, failure: &Failure, now: Nanos) -> Option<Token> {
        match (self, token) {
            (Policy::Ours(strategy), Token::Ours(token)) => strategy
                .refresh_retry_token(token, &failure.reason())
                .ok()
                .map(Token::Ours),
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
            }
            _ => None,
        }
    }

    /// A permit was refused: a retry granted but never sent gives its quota back (`abandon`).
    pub fn refused(&mut self, token: Token) {
        if let (Policy::Ours(strategy), Token::Ours(token)) = (self, token) {
            strategy.abandon(token);
        }
    }

    /// The caller's deadline cancelled the call: like dropping `RetryLoop`, an attempt in flight
    /// is a failure (`record_failure`), an attempt not yet sent (a retry in its backoff, or any
    /// attempt waiting for its permit) is abandoned.
    pub fn cancelled(&mut self, token: Token, in_flight: bool) {
        if let (Policy::Ours(strategy), Token::Ours(token)) = (self, token) {
            if in_flight {
                strategy.record_failure(token);
            } else {
                strategy.abandon(token);
            }
        }
    }
}
