//! The waits before an attempt is sent: its backoff, then its send permit (unless the layer's
//! shedding policy refuses a first attempt).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::{Instant, Sleep};

use crate::driver::ShedPolicy;
use crate::strategy::{RetryStrategy, RetryToken, SendPermit};

/// Waits until a token's attempt may be sent, without a task of its own: polled from
/// `poll_ready` (a call's first attempt) or from the response future (a retry).
///
/// Owns nothing until it has to wait: the timer is boxed on the first wait and reused for the later ones, so a call that never waits allocates nothing and
/// its drop is one null check.
#[derive(Debug, Default)]
pub(super) struct PermitWait {
    waiting: Option<Pin<Box<Waiting>>>,
    /// Whether the token's backoff is still to be slept (a retry's, before its permit).
    backoff_pending: bool,
}

pin_project! {
    // What a wait holds.
    #[derive(Debug)]
    struct Waiting {
        // The timer, and whether it runs for the current wait.
        #[pin]
        sleep: Sleep,
        sleeping: bool,
        // The waits started so far, summed.
        waited: Duration,
    }
}

impl PermitWait {
    /// A wait that has already lasted `waited` (a first attempt's permit wait, in `poll_ready`).
    #[inline(always)]
    pub(super) fn after(waited: Duration) -> Self {
        let mut wait = Self::default();
        if !waited.is_zero() {
            *wait.waiting_mut().project().waited = waited;
        }
        wait
    }

    /// The waits started so far, summed.
    pub(super) fn waited(&self) -> Duration {
        self.waiting
            .as_ref()
            .map_or(Duration::ZERO, |waiting| waiting.waited)
    }

    /// [`waited`](Self::waited), and zero from now on (the service's wait, for each call).
    pub(super) fn take_waited(&mut self) -> Duration {
        match self.waiting.as_mut() {
            Some(waiting) => std::mem::take(waiting.as_mut().project().waited),
            None => Duration::ZERO,
        }
    }

    /// The next wait starts with the token's backoff.
    pub(super) fn backoff_first(&mut self) {
        self.backoff_pending = true;
    }

    /// Ready once `token`'s attempt may be sent (the backoff slept, the permit granted), or
    /// with the refusal if `shedding` sheds the call: asked before each permit request, so
    /// before a first attempt waits and after each of its waits. The caller then abandons the
    /// token.
    #[inline]
    pub(super) fn poll<S: RetryStrategy + ?Sized, L: ShedPolicy>(
        &mut self,
        strategy: &S,
        shedding: &L,
        token: &mut RetryToken,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(), L::Refusal>> {
        loop {
            if let Some(waiting) = self.waiting.as_mut() {
                let waiting = waiting.as_mut().project();
                if *waiting.sleeping {
                    ready!(waiting.sleep.poll(cx));
                    *waiting.sleeping = false;
                }
            }
            if std::mem::take(&mut self.backoff_pending) && !token.delay().is_zero() {
                self.start_sleep(token.delay());
                continue;
            }
            if let Some(refusal) = shedding.shed(strategy, token) {
                return Poll::Ready(Err(refusal));
            }
            // The token keeps its place in the rate limiter's line.
            match strategy.acquire_send_permit(token) {
                SendPermit::Granted => return Poll::Ready(Ok(())),
                SendPermit::Wait(wait) => self.start_sleep(wait),
            }
        }
    }

    /// Long polling: starts the sleep of the backoff a refused retry computed, to be slept
    /// before the call returns ([`poll_linger`](Self::poll_linger)).
    #[cold]
    #[inline(never)]
    pub(super) fn start_linger(&mut self, wait: Duration) {
        self.start_sleep(wait);
    }

    /// Ready once the sleep [`start_linger`](Self::start_linger) started is over.
    pub(super) fn poll_linger(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if let Some(waiting) = self.waiting.as_mut() {
            let waiting = waiting.as_mut().project();
            if *waiting.sleeping {
                ready!(waiting.sleep.poll(cx));
                *waiting.sleeping = false;
            }
        }
        Poll::Ready(())
    }

    /// The boxed state, made on the first wait.
    #[cold]
    #[inline(never)]
    fn waiting_mut(&mut self) -> Pin<&mut Waiting> {
        self.waiting
            .get_or_insert_with(|| {
                Box::pin(Waiting {
                    sleep: tokio::time::sleep_until(Instant::now()),
                    sleeping: false,
                    waited: Duration::ZERO,
                })
            })
            .as_mut()
    }

    #[inline(never)]
    fn start_sleep(&mut self, wait: Duration) {
        let waiting = self.waiting_mut().project();
        waiting.sleep.reset(Instant::now() + wait);
        *waiting.sleeping = true;
        *waiting.waited = waiting.waited.saturating_add(wait);
    }
}
