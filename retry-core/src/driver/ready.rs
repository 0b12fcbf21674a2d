//! The future of [`RetryLoop::ready`]: the wait before an attempt.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use super::RetryLoop;
use crate::{LoadShed, RetryStrategy};

/// Waits until the loop's next attempt may be sent: its backoff, then each wait the strategy
/// asks for before granting the send permit. Returned by [`RetryLoop::ready`].
///
/// Written by hand rather than as an `async fn`: when there is nothing to wait for (every
/// first attempt in standard mode) it completes on its first poll, and it owns nothing, so the
/// success path pays neither a timer's footprint in the caller's future nor a drop. The timer,
/// when needed, is the loop's: boxed on the call's first wait, reused for the waits after it.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{NoHook, RetryConfig, RetryInfoClassifier, RetryLoop, StandardStrategy};
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
/// let ready: retry_core::Ready<'_, '_, _, _, _> = retry.ready();
/// ready.await;
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Ready<'r, 's, S: RetryStrategy + ?Sized, C, H> {
    wait: Wait<'r, 's, S, C, H>,
}

impl<'r, 's, S: RetryStrategy + ?Sized, C, H> Ready<'r, 's, S, C, H> {
    #[inline(always)]
    pub(super) fn new(retry: &'r mut RetryLoop<'s, S, C, H>) -> Self {
        Self {
            wait: Wait::new(retry),
        }
    }
}

impl<S: RetryStrategy + ?Sized, C, H> Future for Ready<'_, '_, S, C, H> {
    type Output = ();

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // Without shedding the wait never fails: the `Err` arm is compiled out.
        self.get_mut().wait.poll::<false>(cx).map(|_| ())
    }
}

impl<S: RetryStrategy + ?Sized, C, H> std::fmt::Debug for Ready<'_, '_, S, C, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.wait.fmt_fields(f.debug_struct("Ready"))
    }
}

/// [`Ready`] for a caller that can return a refusal, returned by [`RetryLoop::try_ready`]:
/// before the first attempt waits for its send permit, and after each of its waits, the
/// strategy may shed the call; the future then completes with the [`LoadShed`].
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{NoHook, RetryConfig, RetryInfoClassifier, RetryLoop, StandardStrategy};
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
/// let ready: retry_core::TryReady<'_, '_, _, _, _> = retry.try_ready();
/// assert!(ready.await.is_ok());
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct TryReady<'r, 's, S: RetryStrategy + ?Sized, C, H> {
    wait: Wait<'r, 's, S, C, H>,
}

impl<'r, 's, S: RetryStrategy + ?Sized, C, H> TryReady<'r, 's, S, C, H> {
    pub(super) fn new(retry: &'r mut RetryLoop<'s, S, C, H>) -> Self {
        Self {
            wait: Wait::new(retry),
        }
    }
}

impl<S: RetryStrategy + ?Sized, C, H> Future for TryReady<'_, '_, S, C, H> {
    type Output = Result<(), LoadShed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.get_mut().wait.poll::<true>(cx)
    }
}

impl<S: RetryStrategy + ?Sized, C, H> std::fmt::Debug for TryReady<'_, '_, S, C, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.wait.fmt_fields(f.debug_struct("TryReady"))
    }
}

/// The wait both futures run: the loop, and where this wait stands.
struct Wait<'r, 's, S: RetryStrategy + ?Sized, C, H> {
    retry: &'r mut RetryLoop<'s, S, C, H>,
    /// Whether the backoff was already considered (it comes before the first permit request).
    backoff_considered: bool,
    /// Whether the loop's timer is running for this wait.
    sleeping: bool,
}

impl<'r, 's, S: RetryStrategy + ?Sized, C, H> Wait<'r, 's, S, C, H> {
    #[inline(always)]
    fn new(retry: &'r mut RetryLoop<'s, S, C, H>) -> Self {
        Self {
            retry,
            backoff_considered: false,
            sleeping: false,
        }
    }

    /// Ready once the next attempt may be sent; with `SHED`, the strategy may refuse the call
    /// before each permit request instead.
    #[inline(always)]
    fn poll<const SHED: bool>(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), LoadShed>> {
        loop {
            if self.sleeping {
                ready!(self.retry.poll_sleep(cx));
                self.sleeping = false;
            }
            if SHED && let Some(shed) = self.retry.try_shed() {
                return Poll::Ready(Err(shed));
            }
            let backoff = !std::mem::replace(&mut self.backoff_considered, true);
            let Some(wait) = self.retry.next_wait(backoff) else {
                return Poll::Ready(Ok(()));
            };
            self.retry.start_sleep(wait);
            self.sleeping = true;
        }
    }

    fn fmt_fields(&self, mut debug: std::fmt::DebugStruct<'_, '_>) -> std::fmt::Result {
        debug
            .field("backoff_considered", &self.backoff_considered)
            .field("sleeping", &self.sleeping)
            .finish_non_exhaustive()
    }
}
