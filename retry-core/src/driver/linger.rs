//! The wait after a call's last attempt, before its error is returned (a long-polling call
//! whose retry the quota refused): [`Linger`], the future of [`RetryLoop::linger`], and
//! [`Settled`], which sleeps it after a retry loop that returned it with its outcome.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;

use super::{NeverShed, RetryLoop};
use crate::strategy::RetryStrategy;

/// Sleeps the backoff a long-polling call computed for the retry the quota refused, then
/// completes; completes on its first poll for every other call. Returned by
/// [`RetryLoop::linger`].
///
/// Written by hand, like [`Ready`](super::Ready): it owns nothing, and the timer, when needed, is
/// the loop's.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::driver::{NoHook, RetryLoop};
/// use retry_core::{RetryConfig, StandardStrategy};
/// use retry_core::classify::RetryInfoClassifier;
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
/// let Ok(()) = retry.ready().await;
/// let outcome: Result<u32, std::io::Error> = Ok(1);
/// assert!(retry.finish(&outcome).is_break());
/// let linger: retry_core::driver::Linger<'_, '_, _, _, _> = retry.linger();
/// linger.await; // nothing to wait for: the call succeeded
/// # }
/// ```
#[must_use = "futures do nothing unless you `.await` or poll them"]
pub struct Linger<'r, 's, S: RetryStrategy + ?Sized, C, H, L = NeverShed> {
    retry: &'r mut RetryLoop<'s, S, C, H, L>,
    /// Whether the loop's timer runs for this wait.
    sleeping: bool,
}

impl<'s, S: RetryStrategy + ?Sized, C, H, L> RetryLoop<'s, S, C, H, L> {
    /// Waits, once `finish` ended the call, until its outcome may be returned: a long-polling call
    /// whose retry the quota refused sleeps the backoff it computed for that retry
    /// ([`RetryError::wait_before_returning`](crate::RetryError::wait_before_returning)), so that a
    /// consumer loop calling again at once does not spin against a failing queue; every other call
    /// completes at once.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
    /// use retry_core::backoff::FixedRandom;
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{Quota, RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// use std::{sync::Arc, time::Duration};
    /// let config = RetryConfig::builder().quota(Quota::Fixed(1)).long_polling(true).build().unwrap();
    /// let strategy = StandardStrategy::builder(config).random(Arc::new(FixedRandom(1.0))).build();
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// retry.ready().await;
    /// let refused: Result<(), std::io::Error> = Err(std::io::ErrorKind::ConnectionRefused.into());
    /// assert!(retry.finish(&refused).is_break()); // 1 token: a retry (14) is refused
    /// let started = tokio::time::Instant::now();
    /// retry.linger().await;
    /// assert_eq!(started.elapsed(), Duration::from_millis(50)); // the backoff it would have slept
    /// # }
    /// ```
    pub fn linger(&mut self) -> Linger<'_, 's, S, C, H, L> {
        Linger::new(self)
    }
}

impl<'r, 's, S: RetryStrategy + ?Sized, C, H, L> Linger<'r, 's, S, C, H, L> {
    #[inline(always)]
    fn new(retry: &'r mut RetryLoop<'s, S, C, H, L>) -> Self {
        Self {
            retry,
            sleeping: false,
        }
    }
}

impl<S: RetryStrategy + ?Sized, C, H, L> Future for Linger<'_, '_, S, C, H, L> {
    type Output = ();

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if !this.sleeping {
            // Counted in the call's stats when `finish` ended it.
            let Some(wait) = this.retry.take_linger() else {
                return Poll::Ready(());
            };
            this.retry.start_timer(wait);
            this.sleeping = true;
        }
        ready!(this.retry.poll_sleep(cx));
        this.sleeping = false;
        Poll::Ready(())
    }
}

impl<S: RetryStrategy + ?Sized, C, H, L> std::fmt::Debug for Linger<'_, '_, S, C, H, L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Linger")
            .field("sleeping", &self.sleeping)
            .finish_non_exhaustive()
    }
}

pin_project! {
    /// A retry loop's future that resolves to the call's outcome and what to sleep before
    /// returning it (`(outcome, RetryLoop::take_linger())`), resolving to the outcome once that
    /// is slept. `Retry::run` and the `#[retryable]` expansion of a function that may long-poll
    /// wrap their loop in it, rather than awaiting [`Linger`] after the last attempt: a
    /// suspension point after the attempt, even one never reached, made the success path of
    /// `retry_core::retry` cost 17.7 ns instead of 5.0 ns (criterion, `success_path`); with the
    /// loop wrapped in this, 5.4 ns.
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Settled<F, O> {
        // The loop, until it completes.
        #[pin]
        retry_loop: Option<F>,
        // Long polling: the backoff's timer, and the outcome until it is returned.
        lingering: Option<(Pin<Box<Sleep>>, O)>,
    }
}

impl<F, O> Settled<F, O> {
    /// The future of `retry_loop`.
    #[inline(always)]
    pub fn new(retry_loop: F) -> Self {
        Self {
            retry_loop: Some(retry_loop),
            lingering: None,
        }
    }
}

impl<F: Future<Output = (O, Option<Duration>)>, O> Future for Settled<F, O> {
    type Output = O;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<O> {
        let mut this = self.project();
        if let Some(retry_loop) = this.retry_loop.as_mut().as_pin_mut() {
            let (outcome, linger) = ready!(retry_loop.poll(cx));
            this.retry_loop.set(None);
            let Some(wait) = linger else {
                return Poll::Ready(outcome);
            };
            *this.lingering = Some(lingering(wait, outcome));
        }
        let Some((sleep, _)) = this.lingering.as_mut() else {
            panic!("retry_core::Settled polled after it completed")
        };
        ready!(sleep.as_mut().poll(cx));
        match this.lingering.take() {
            Some((_, outcome)) => Poll::Ready(outcome),
            None => panic!("retry_core::Settled polled after it completed"),
        }
    }
}

/// The lingering state, its timer boxed (out of line: only a long-polling refusal lingers).
#[cold]
#[inline(never)]
fn lingering<O>(wait: Duration, outcome: O) -> (Pin<Box<Sleep>>, O) {
    (Box::pin(tokio::time::sleep(wait)), outcome)
}
