//! The wait after a call's last attempt, before its error is returned (a long-polling call
//! whose retry the quota refused): [`Linger`], the future of [`RetryLoop::linger`], and
//! [`Settled`], which sleeps it after a retry loop that returned it with its outcome.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;
use tokio::time::Sleep;

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

pin_project! {
    /// A retry loop's future that resolves to the call's outcome and what to sleep before
    /// returning it (`(outcome, RetryLoop::take_linger())`), resolving to the outcome once that
    /// is slept. `Retry::run` and the `#[retryable]` expansion of a function that may long-poll
    /// wrap their loop in it, rather than awaiting [`Linger`] after the last attempt: a
    /// suspension point after the attempt, even one never reached, made the success path of
    /// `retry_core::retry` cost 17.7 ns instead of 5.0 ns (criterion, `success_path`); around
    /// the loop it costs no more than the loop alone.
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Settled<F, O> {
        #[pin]
        state: State<F, O>,
    }
}

pin_project! {
    #[derive(Debug)]
    #[project = StateProj]
    enum State<F, O> {
        // The loop runs.
        Running { #[pin] retry_loop: F },
        // Long polling: the outcome waits for the backoff to be slept.
        Lingering { sleep: Pin<Box<Sleep>>, outcome: Option<O> },
        // The outcome was returned.
        Done,
    }
}

impl<F, O> Settled<F, O> {
    /// The future of `retry_loop`.
    #[inline(always)]
    pub fn new(retry_loop: F) -> Self {
        Self {
            state: State::Running { retry_loop },
        }
    }
}

impl<F: Future<Output = (O, Option<Duration>)>, O> Future for Settled<F, O> {
    type Output = O;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<O> {
        let mut state = self.project().state;
        loop {
            match state.as_mut().project() {
                StateProj::Running { retry_loop } => {
                    let (outcome, linger) = ready!(retry_loop.poll(cx));
                    let Some(wait) = linger else {
                        state.set(State::Done);
                        return Poll::Ready(outcome);
                    };
                    state.set(lingering(wait, outcome));
                }
                StateProj::Lingering { sleep, outcome } => {
                    ready!(sleep.as_mut().poll(cx));
                    let outcome = outcome.take();
                    state.set(State::Done);
                    if let Some(outcome) = outcome {
                        return Poll::Ready(outcome);
                    }
                }
                StateProj::Done => panic!("retry_core::Settled polled after it completed"),
            }
        }
    }
}

/// The lingering state, its timer boxed (out of line: only a long-polling refusal lingers).
#[cold]
#[inline(never)]
fn lingering<F, O>(wait: Duration, outcome: O) -> State<F, O> {
    State::Lingering {
        sleep: Box::pin(tokio::time::sleep(wait)),
        outcome: Some(outcome),
    }
}
