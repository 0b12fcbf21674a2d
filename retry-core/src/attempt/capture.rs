//! [`capture`]: the stats of the calls that end inside a piece of code, without changing its
//! signature (feature `attempt-context`): a thread-local that the drivers report each call's
//! [`CallStats`] to while a capture runs.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};

use pin_project_lite::pin_project;

use super::stats::CallStats;

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

/// How many captures are running now, on any thread: while there are none, a call that ends
/// reads one shared word instead of its thread's capture.
static CAPTURING: AtomicUsize = AtomicUsize::new(0);

/// A retry loop ended with the stats `stats` gives: the innermost [`capture`] polling it keeps
/// them. While no capture runs anywhere, one relaxed load (`stats` is not called).
#[inline(always)]
pub(crate) fn record(stats: impl FnOnce() -> CallStats) {
    // A capture running on this thread was counted before it ran (same thread: in order).
    if CAPTURING.load(Ordering::Relaxed) == 0 {
        return;
    }
    record_in_capture(stats);
}

/// [`record`] when a capture may be running on this thread.
#[inline(never)]
fn record_in_capture(stats: impl FnOnce() -> CallStats) {
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
///         return Err(std::io::ErrorKind::ConnectionRefused.into());
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
            CAPTURING.fetch_sub(1, Ordering::Relaxed);
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
    CAPTURING.fetch_add(1, Ordering::Relaxed);
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
