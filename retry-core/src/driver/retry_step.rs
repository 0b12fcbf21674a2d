//! The steps both attempt loops take alike, [`RetryLoop`](super::RetryLoop) and
//! [`HedgedLoop`](super::HedgedLoop): retrying a call after its last attempt failed, and settling
//! the token of a call dropped before it ended. One place, so that a fix to either reaches both.

use std::fmt::Debug;
use std::ops::ControlFlow;
use std::time::Duration;

use super::{OnRetry, RetryEvent};
use crate::classify::{ErrorKind, RetryReason};
use crate::observe;
use crate::strategy::{RetryStrategy, RetryToken};

/// A call whose retry the strategy refused: it ended after `attempts`.
#[derive(Debug, Clone, Copy)]
pub(super) struct GaveUp {
    /// The attempts the call made.
    pub(super) attempts: u32,
    /// How long to sleep before returning the outcome (a long-polling call's wait), to count
    /// with the call's other waits.
    pub(super) linger: Option<Duration>,
}

/// The call's token and whether its attempt was sent, as a loop keeps them.
pub(super) struct TokenSlot<'a> {
    pub(super) token: &'a mut Option<RetryToken>,
    pub(super) sent: &'a mut bool,
}

/// Asks `strategy` to retry the call whose last attempt (`token`'s) failed for `reason` with
/// `error`. Granted: the retry's token goes back in `slot`, not sent yet, `on_retry` is told,
/// and the kind of the failure is returned (the next attempt's reason). Refused: one WARN event
/// naming the last error, and what the call ends with.
pub(super) fn retry_or_give_up<S, E, H>(
    strategy: &S,
    on_retry: &H,
    slot: TokenSlot<'_>,
    token: RetryToken,
    reason: RetryReason,
    error: Option<&E>,
) -> ControlFlow<GaveUp, ErrorKind>
where
    S: RetryStrategy + ?Sized,
    E: Debug,
    H: OnRetry<E>,
{
    let attempt = token.attempt();
    let token = match strategy.refresh_retry_token(token, &reason) {
        Ok(token) => token,
        Err(refused) => {
            observe::gave_up(strategy.scope_name(), attempt, &refused, error);
            return ControlFlow::Break(GaveUp {
                attempts: attempt,
                linger: refused.wait_before_returning(),
            });
        }
    };
    // Keep the granted retry before the hook runs: should the hook panic, the drop gives the
    // unsent retry's cost back.
    let delay = token.delay();
    *slot.token = Some(token);
    *slot.sent = false;
    let kind = reason.kind();
    on_retry.on_retry(&RetryEvent {
        attempt,
        error,
        delay,
        reason,
    });
    ControlFlow::Continue(kind)
}

/// Settles the token of a call dropped before it ended: an attempt in flight (`in_flight`) was
/// made and its end is unknown, a cancelled attempt; a retry granted and not sent is abandoned,
/// its cost given back.
pub(super) fn settle_dropped<S: RetryStrategy + ?Sized>(
    strategy: &S,
    token: RetryToken,
    in_flight: bool,
) {
    if in_flight {
        strategy.record_cancelled(token);
    } else {
        strategy.abandon(token);
    }
}
