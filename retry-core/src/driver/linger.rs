//! The future of [`RetryLoop::linger`]: the wait after a call's last attempt, before its
//! error is returned (a long-polling call whose retry the quota refused).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use super::RetryLoop;
use crate::RetryStrategy;

/// Sleeps the backoff a long-polling call computed for the retry the quota refused, then
/// completes; completes on its first poll for every other call. Returned by
/// [`RetryLoop::linger`].
///
/// Written by hand, like [`Ready`](super::Ready): it owns nothing, and the timer, when needed, is
/// the loop's.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{NoHook, RetryConfig, RetryInfoClassifier, RetryLoop, StandardStrategy};
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
/// retry.ready().await;
/// let outcome: Result<u32, std::io::Error> = Ok(1);
/// assert!(retry.finish(&outcome).is_break());
/// let linger: retry_core::Linger<'_, '_, _, _, _> = retry.linger();
/// linger.await; // nothing to wait for: the call succeeded
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Linger<'r, 's, S: RetryStrategy + ?Sized, C, H> {
    retry: &'r mut RetryLoop<'s, S, C, H>,
    /// Whether the loop's timer runs for this wait.
    sleeping: bool,
}

impl<'r, 's, S: RetryStrategy + ?Sized, C, H> Linger<'r, 's, S, C, H> {
    #[inline(always)]
    pub(super) fn new(retry: &'r mut RetryLoop<'s, S, C, H>) -> Self {
        Self {
            retry,
            sleeping: false,
        }
    }
}

impl<S: RetryStrategy + ?Sized, C, H> Future for Linger<'_, '_, S, C, H> {
    type Output = ();

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if !this.sleeping {
            let Some(wait) = this.retry.take_linger() else {
                return Poll::Ready(());
            };
            this.retry.start_sleep(wait);
            this.sleeping = true;
        }
        ready!(this.retry.poll_sleep(cx));
        this.sleeping = false;
        Poll::Ready(())
    }
}

impl<S: RetryStrategy + ?Sized, C, H> std::fmt::Debug for Linger<'_, '_, S, C, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Linger")
            .field("sleeping", &self.sleeping)
            .finish_non_exhaustive()
    }
}
