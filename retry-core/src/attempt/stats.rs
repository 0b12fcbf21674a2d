//! What a call did ([`CallStats`]: its attempts and its waits), handed back with the call's value
//! by [`Retry::run_with_stats`](crate::Retry::run_with_stats), or gathered around any code with
//! [`capture`] (a `#[retryable]` fn keeps its signature).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use pin_project_lite::pin_project;

/// What one call did: the attempts it sent and the time it spent waiting between them (the
/// backoffs, the send permits' waits in adaptive mode, and a long-polling call's wait before it
/// returned its error), as scheduled by its retry loop. botocore's `RetryAttempts`, for any call.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{Retry, RetryConfig, StandardStrategy};
/// use retry_core::backoff::FixedRandom;
/// use std::{sync::Arc, time::Duration};
///
/// let strategy = StandardStrategy::builder(RetryConfig::default())
///     .random(Arc::new(FixedRandom(1.0)))
///     .build();
/// let mut calls = 0;
/// let (outcome, stats) = Retry::new(&strategy)
///     .run_with_stats(|| {
///         calls += 1;
///         let fail = calls < 3;
///         async move { if fail { Err(std::io::ErrorKind::ConnectionReset.into()) } else { Ok(calls) } }
///     })
///     .await;
/// let _: Result<_, std::io::Error> = outcome;
/// assert_eq!((stats.attempts(), stats.retries()), (3, 2));
/// assert_eq!(stats.waited(), Duration::from_millis(50 + 100)); // the two backoffs
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CallStats {
    attempts: u32,
    waited: Duration,
}

impl CallStats {
    /// A call that sent `attempts` attempts and waited `waited` between them.
    #[inline(always)]
    pub(crate) fn new(attempts: u32, waited: Duration) -> Self {
        Self { attempts, waited }
    }

    /// The attempts the call sent, the first included (0 for a call refused before its first
    /// attempt, or cancelled while it waited for it).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The retries the call sent: its attempts after the first.
    pub fn retries(&self) -> u32 {
        self.attempts.saturating_sub(1)
    }

    /// The time the call waited, as its retry loop scheduled it: each backoff, each wait for a
    /// send permit, and a long-polling call's wait before it returned.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// These stats with `wait` more waited.
    pub(crate) fn and_waited(self, wait: Duration) -> Self {
        Self {
            waited: self.waited.saturating_add(wait),
            ..self
        }
    }
}

/// Whether the code running on this thread is inside a [`capture`], and the stats of the last
/// call that ended in it during the current poll.
#[derive(Debug, Clone, Copy)]
enum Capture {
    Off,
    On(Option<CallStats>),
}

std::thread_local! {
    static CAPTURE: Cell<Capture> = const { Cell::new(Capture::Off) };
}

/// A retry loop ended with the stats `stats` gives: the innermost [`capture`] polling it keeps
/// them. Outside every capture, one thread-local read (`stats` is not called).
#[inline(always)]
pub(crate) fn record(stats: impl FnOnce() -> CallStats) {
    CAPTURE.with(|capture| {
        if let Capture::On(_) = capture.get() {
            capture.set(Capture::On(Some(stats())));
        }
    });
}

/// Runs `future` and returns its output with the stats of the last retry loop that ended while it
/// ran (`None` if none did): the attempts of a `#[retryable]` fn's call, with the fn's signature
/// unchanged. Every driver reports to it: [`retry`](crate::retry), [`Retry`](crate::Retry),
/// `#[retryable]`, [`RetryLoop`](crate::driver::RetryLoop) and
/// [`RetryLayer`](crate::tower::RetryLayer)'s response futures. A call nested in another ends
/// first, so around one call it is that call's stats; captures nest (an outer one sees the calls
/// an inner one saw).
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{attempt, retryable};
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// static FAILURES: AtomicU32 = AtomicU32::new(1);
///
/// #[retryable(max_attempts = 3)]
/// async fn fetch() -> Result<&'static str, std::io::Error> {
///     if FAILURES.fetch_sub(1, Ordering::Relaxed) > 0 {
///         return Err(std::io::ErrorKind::ConnectionReset.into());
///     }
///     Ok("value")
/// }
///
/// let (value, stats) = attempt::capture(fetch()).await;
/// assert_eq!(value.unwrap(), "value");
/// assert_eq!(stats.expect("one call ended").attempts(), 2);
/// # }
/// ```
pub fn capture<F: Future>(future: F) -> Captured<F> {
    Captured {
        future,
        stats: None,
    }
}

/// [`capture`] for blocking code: runs `f` and returns its value with the stats of the last retry
/// loop that ended while it ran (a blocking `#[retryable]` fn, [`retry_blocking`](crate::retry_blocking)).
///
/// ```
/// use retry_core::{RetryConfig, StandardStrategy, attempt, retry_blocking};
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let (value, stats) = attempt::capture_blocking(|| retry_blocking(&strategy, || Ok::<_, std::io::Error>(1)));
/// assert_eq!(value.unwrap(), 1);
/// assert_eq!(stats.map(|stats| stats.attempts()), Some(1));
/// ```
pub fn capture_blocking<R>(f: impl FnOnce() -> R) -> (R, Option<CallStats>) {
    let mut stats = None;
    let value = capturing(&mut stats, f);
    (value, stats)
}

/// Runs `f` inside a capture: `stats` becomes the last call's that ended in it, which the
/// enclosing capture (if any) sees too. A panic in `f` restores the enclosing capture.
#[inline]
fn capturing<R>(stats: &mut Option<CallStats>, f: impl FnOnce() -> R) -> R {
    /// Puts the enclosing capture back when dropped, and tells it of the calls seen.
    struct Restore<'a> {
        outer: Capture,
        stats: &'a mut Option<CallStats>,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let seen = CAPTURE.with(|capture| capture.replace(self.outer));
            let Capture::On(Some(last)) = seen else {
                return;
            };
            *self.stats = Some(last);
            if let Capture::On(_) = self.outer {
                CAPTURE.with(|capture| capture.set(Capture::On(Some(last))));
            }
        }
    }
    let outer = CAPTURE.with(|capture| capture.replace(Capture::On(None)));
    let _restore = Restore { outer, stats };
    f()
}

pin_project! {
    /// The future of [`capture`]: `future`'s output with the stats of the last retry loop that
    /// ended while it ran.
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct Captured<F> {
        #[pin]
        future: F,
        stats: Option<CallStats>,
    }
}

impl<F: Future> Future for Captured<F> {
    type Output = (F::Output, Option<CallStats>);

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let future = this.future;
        let output = ready!(capturing(this.stats, || future.poll(cx)));
        Poll::Ready((output, *this.stats))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::{CallStats, capture_blocking, record};

    #[test]
    fn the_last_call_to_end_is_kept_and_outer_captures_see_it() {
        let first = CallStats::new(1, Duration::ZERO);
        let second = CallStats::new(3, Duration::from_millis(150));
        let (inner, outer) = capture_blocking(|| {
            record(|| first);
            let ((), inner) = capture_blocking(|| record(|| second));
            inner
        });
        assert_eq!(inner, Some(second));
        assert_eq!(outer, Some(second), "the inner capture's call ended last");
        let ((), nothing) = capture_blocking(|| ());
        assert_eq!(nothing, None);
        record(|| first); // outside every capture: kept by none
        let ((), still_nothing) = capture_blocking(|| ());
        assert_eq!(still_nothing, None);
    }
}
