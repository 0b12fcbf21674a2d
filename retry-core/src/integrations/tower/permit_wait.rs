//! The waits before an attempt is sent: its backoff, then its send permit.

use std::future::Future;
use std::mem;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::time::{Instant, Sleep};

use crate::adaptive::Reservation;
use crate::{RetryStrategy, RetryToken, SendPermit};

/// Waits until a token's attempt may be sent, without a task of its own: polled from
/// `poll_ready` (a call's first attempt) or from the response future (a retry).
///
/// Owns nothing until it has to wait: the timer is boxed on the first wait and reused for the
/// later ones, so a call that never waits allocates nothing.
#[derive(Debug, Default)]
pub(super) struct PermitWait {
    /// The place in the rate limiter's line (adaptive mode); dropping it gives the place up.
    place: Option<Reservation>,
    sleep: Option<Pin<Box<Sleep>>>,
    sleeping: bool,
    /// Whether the token's backoff is still to be slept (a retry's, before its permit).
    backoff_pending: bool,
}

impl PermitWait {
    /// The next wait starts with the token's backoff.
    pub(super) fn backoff_first(&mut self) {
        self.backoff_pending = true;
    }

    /// Ready once `token`'s attempt may be sent: the backoff slept, the permit granted.
    #[inline]
    pub(super) fn poll<S: RetryStrategy + ?Sized>(
        &mut self,
        strategy: &S,
        token: &mut RetryToken,
        cx: &mut Context<'_>,
    ) -> Poll<()> {
        loop {
            if self.sleeping {
                ready!(self.poll_sleep(cx));
                self.sleeping = false;
            }
            if mem::take(&mut self.backoff_pending) && !token.delay().is_zero() {
                self.start_sleep(token.delay());
                continue;
            }
            match strategy.acquire_send_permit(token, &mut self.place) {
                SendPermit::Granted => return Poll::Ready(()),
                SendPermit::Wait(wait) => self.start_sleep(wait),
            }
        }
    }

    #[inline(never)]
    fn start_sleep(&mut self, wait: Duration) {
        let deadline = Instant::now() + wait;
        match self.sleep.as_mut() {
            Some(sleep) => sleep.as_mut().reset(deadline),
            None => self.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
        }
        self.sleeping = true;
    }

    #[inline(never)]
    fn poll_sleep(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        match self.sleep.as_mut() {
            Some(sleep) => sleep.as_mut().poll(cx),
            None => Poll::Ready(()),
        }
    }
}
