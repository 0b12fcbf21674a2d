//! The future of [`RetryLoop::ready`]: the wait before an attempt.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use super::{NeverShed, RetryLoop, ShedPolicy};
use crate::strategy::RetryStrategy;

/// Waits until the loop's next attempt may be sent: its backoff, then each wait the strategy
/// asks for before granting the send permit. Returned by [`RetryLoop::ready`]. A loop that
/// sheds load ([`RetryLoop::shed_load`]) may refuse the call instead, before its first attempt
/// waits for its send permit and after each of its waits: the future then completes with the
/// [`LoadShed`](crate::LoadShed). A loop that does not shed never fails (`Infallible`).
///
/// Written by hand rather than as an `async fn`: when there is nothing to wait for (every
/// first attempt in standard mode) it completes on its first poll, and it owns nothing, so the
/// success path pays neither a timer's footprint in the caller's future nor a drop. The timer,
/// when needed, is the loop's: boxed on the call's first wait, reused for the waits after it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::driver::{NoHook, RetryLoop};
/// use retry_core::{RetryConfig, StandardStrategy};
/// use retry_core::classify::RetryInfoClassifier;
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
/// let ready: retry_core::driver::Ready<'_, '_, _, _, _> = retry.ready();
/// let Ok(()) = ready.await;
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Ready<'r, 's, S: RetryStrategy + ?Sized, C, H, L = NeverShed> {
    retry: &'r mut RetryLoop<'s, S, C, H, L>,
    /// Whether the backoff was already considered (it comes before the first permit request).
    backoff_considered: bool,
    /// Whether the loop's timer is running for this wait.
    sleeping: bool,
}

impl<'s, S: RetryStrategy + ?Sized, C, H, L> RetryLoop<'s, S, C, H, L> {
    /// Waits until the next attempt may be sent: sleeps its backoff, then waits for its send
    /// permit. Only waits: whether to make the attempt was decided by `finish`. Never fails
    /// (`Result<(), Infallible>`), unless the loop sheds load ([`shed_load`](Self::shed_load)).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// let Ok(()) = retry.ready().await; // the first attempt: nothing to wait for
    /// # }
    /// ```
    pub fn ready(&mut self) -> Ready<'_, 's, S, C, H, L> {
        Ready::new(self)
    }
}

impl<'r, 's, S: RetryStrategy + ?Sized, C, H, L> Ready<'r, 's, S, C, H, L> {
    #[inline(always)]
    fn new(retry: &'r mut RetryLoop<'s, S, C, H, L>) -> Self {
        Self {
            retry,
            backoff_considered: false,
            sleeping: false,
        }
    }
}

impl<S: RetryStrategy + ?Sized, C, H, L: ShedPolicy> Future for Ready<'_, '_, S, C, H, L> {
    type Output = Result<(), L::Refusal>;

    /// Ready once the next attempt may be sent; a shedding loop's strategy may refuse the call
    /// before each permit request instead (without shedding that arm is compiled out).
    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            if this.sleeping {
                ready!(this.retry.poll_sleep(cx));
                this.sleeping = false;
            }
            if let Some(refusal) = this.retry.refuse() {
                return Poll::Ready(Err(refusal));
            }
            let backoff = !std::mem::replace(&mut this.backoff_considered, true);
            let Some(wait) = this.retry.next_wait(backoff) else {
                return Poll::Ready(Ok(()));
            };
            this.retry.start_sleep(wait);
            this.sleeping = true;
        }
    }
}

impl<S: RetryStrategy + ?Sized, C, H, L> std::fmt::Debug for Ready<'_, '_, S, C, H, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ready")
            .field("backoff_considered", &self.backoff_considered)
            .field("sleeping", &self.sleeping)
            .finish_non_exhaustive()
    }
}
