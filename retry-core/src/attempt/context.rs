//! The attempt context: which attempt the code running on this thread belongs to, set by the
//! drivers around each step of an attempt ([`InAttempt`]) and read with `current` (feature
//! `attempt-context`; without it the drivers set nothing, and a retry's span is all an
//! [`InAttempt`] enters).
//!
//! A thread-local word, set before the attempt's future is polled and restored after: it follows
//! the attempt across executors and threads (each poll sets it where it runs), costs no
//! allocation, and is never seen by other tasks polled on the same thread between two polls of
//! the attempt.

#[cfg(feature = "attempt-context")]
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use pin_project_lite::pin_project;

use super::number::Attempt;

#[cfg(feature = "attempt-context")]
std::thread_local! {
    /// The attempt running on this thread, packed ([`Attempt::pack`]); 0 outside every attempt.
    static CURRENT: Cell<u128> = const { Cell::new(0) };
}

/// The attempt the calling code runs in: inside the closure (or the future it returns) under
/// [`retry`](crate::retry) and [`Retry`](crate::Retry), the body of a `#[retryable]` fn, and the
/// wrapped service's `call` and response future under
/// [`RetryLayer`](crate::tower::RetryLayer). `None` outside any retry loop.
///
/// The innermost loop wins: a `#[retryable]` fn called from inside another's body sees its own
/// attempts. A task spawned from inside an attempt does not inherit it (it is polled elsewhere).
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::{attempt, retryable};
///
/// #[retryable(max_attempts = 4)]
/// async fn fetch() -> Result<u32, std::io::Error> {
///     let attempt = attempt::current().expect("in the body of a #[retryable] fn");
///     if attempt.number() < 3 {
///         return Err(std::io::ErrorKind::ConnectionRefused.into());
///     }
///     Ok(attempt.number())
/// }
///
/// assert_eq!(fetch().await.unwrap(), 3);
/// assert!(attempt::current().is_none());
/// # }
/// ```
#[cfg(feature = "attempt-context")]
#[cfg_attr(docsrs, doc(cfg(feature = "attempt-context")))]
#[inline]
pub fn current() -> Option<Attempt> {
    Attempt::unpack(CURRENT.with(Cell::get))
}

/// What an attempt keeps to enter its context: the attempt with feature `attempt-context`,
/// nothing without (the success path then pays nothing for the context).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mark {
    #[cfg(feature = "attempt-context")]
    attempt: Attempt,
}

/// The mark of `attempt` (without the feature, `attempt` is not used: a caller that computes it
/// only for this pays nothing for it).
#[inline(always)]
pub(crate) fn mark(attempt: Attempt) -> Mark {
    #[cfg(not(feature = "attempt-context"))]
    let _ = attempt;
    Mark {
        #[cfg(feature = "attempt-context")]
        attempt,
    }
}

/// The thread's attempt set until this is dropped, when the previous one comes back (a panic
/// unwinding through the attempt restores it too).
#[cfg(feature = "attempt-context")]
struct Entered {
    previous: u128,
}

#[cfg(feature = "attempt-context")]
impl Entered {
    #[inline(always)]
    fn enter(mark: &Mark) -> Self {
        Self {
            previous: CURRENT.with(|current| current.replace(mark.attempt.pack())),
        }
    }
}

#[cfg(feature = "attempt-context")]
impl Drop for Entered {
    #[inline(always)]
    fn drop(&mut self) {
        CURRENT.with(|current| current.set(self.previous));
    }
}

/// Without feature `attempt-context`: nothing to set.
#[cfg(not(feature = "attempt-context"))]
struct Entered;

#[cfg(not(feature = "attempt-context"))]
impl Entered {
    #[inline(always)]
    fn enter(_: &Mark) -> Self {
        Entered
    }
}

pin_project! {
    /// A future that runs in an attempt's context: while it is polled,
    /// [`current`] is that attempt, and a retry's `retry.attempt` span (see the
    /// [module](super)'s documentation) is entered. Made by [`Attempt::scope`] and by the drivers
    /// ([`RetryLoop::in_attempt`](crate::driver::RetryLoop::in_attempt), whose span it borrows).
    #[derive(Debug)]
    #[must_use = "futures do nothing unless you `.await` or poll them"]
    pub struct InAttempt<'a, F> {
        #[pin]
        future: F,
        attempt: Mark,
        // A retry's span, kept by the loop; `None` for a first attempt, which gets none.
        span: Option<&'a tracing::Span>,
    }
}

impl<'a, F> InAttempt<'a, F> {
    /// `future` in `attempt`'s context, within `span` when it has one.
    #[inline(always)]
    pub(crate) fn new(future: F, attempt: Mark, span: Option<&'a tracing::Span>) -> Self {
        Self {
            future,
            attempt,
            span,
        }
    }
}

impl<F: Future> Future for InAttempt<'_, F> {
    type Output = F::Output;

    #[inline(always)]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let future = this.future;
        // A first attempt, without a span, takes no span guard.
        let Some(span) = this.span else {
            let _entered = Entered::enter(this.attempt);
            return future.poll(cx);
        };
        let _span = span.enter();
        let _entered = Entered::enter(this.attempt);
        future.poll(cx)
    }
}

impl Attempt {
    /// Runs `future` in this attempt's context: [`current`] returns this attempt while it is
    /// polled. For a caller that drives a [`RetryLoop`](crate::driver::RetryLoop) itself
    /// ([`RetryLoop::in_attempt`](crate::driver::RetryLoop::in_attempt) does this and adds the
    /// retry's span).
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy, attempt};
    /// use retry_core::classify::RetryInfoClassifier;
    ///
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// retry.ready().await;
    /// let attempt = retry.attempt().expect("a call in progress");
    /// let seen = attempt.scope(async { attempt::current() }).await;
    /// assert_eq!(seen, Some(attempt));
    /// # let outcome: Result<(), std::io::Error> = Ok(());
    /// # assert!(retry.finish(&outcome).is_break());
    /// # }
    /// ```
    #[cfg(feature = "attempt-context")]
    #[cfg_attr(docsrs, doc(cfg(feature = "attempt-context")))]
    pub fn scope<F: Future>(self, future: F) -> InAttempt<'static, F> {
        InAttempt::new(future, mark(self), None)
    }

    /// Runs `f` in this attempt's context, on the calling thread: [`current`] returns this
    /// attempt until it returns.
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy, attempt};
    /// use retry_core::classify::RetryInfoClassifier;
    ///
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// let Ok(()) = retry.wait_blocking();
    /// let attempt = retry.attempt().expect("a call in progress");
    /// assert_eq!(attempt.scope_blocking(attempt::current), Some(attempt));
    /// # let outcome: Result<(), std::io::Error> = Ok(());
    /// # assert!(retry.finish(&outcome).is_break());
    /// ```
    #[cfg(feature = "attempt-context")]
    #[cfg_attr(docsrs, doc(cfg(feature = "attempt-context")))]
    pub fn scope_blocking<R>(self, f: impl FnOnce() -> R) -> R {
        in_context(mark(self), None, f)
    }
}

/// Runs `f` in `attempt`'s context, within `span` when it has one: the synchronous part of an
/// attempt (the closure that makes its future, a blocking attempt, a service's `call`).
#[inline(always)]
pub(crate) fn in_context<R>(mark: Mark, span: Option<&tracing::Span>, f: impl FnOnce() -> R) -> R {
    // A first attempt, without a span, takes no span guard.
    let Some(span) = span else {
        let _entered = Entered::enter(&mark);
        return f();
    };
    let _span = span.enter();
    let _entered = Entered::enter(&mark);
    f()
}

#[cfg(all(test, feature = "attempt-context"))]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    use super::{Attempt, current};

    #[test]
    fn the_context_is_set_while_polled_and_restored_between_polls() {
        let outer = Attempt::new(1, Some(3));
        let inner = Attempt::new(2, Some(3));
        let mut polls = 0;
        let seen = outer.scope_blocking(|| {
            let mut future = pin!(inner.scope(std::future::poll_fn(|cx| {
                polls += 1;
                assert_eq!(current(), Some(inner));
                if polls < 2 {
                    cx.waker().wake_by_ref();
                    Poll::Pending
                } else {
                    Poll::Ready(current())
                }
            })));
            let mut cx = Context::from_waker(Waker::noop());
            assert!(future.as_mut().poll(&mut cx).is_pending());
            assert_eq!(current(), Some(outer), "restored between polls");
            match future.as_mut().poll(&mut cx) {
                Poll::Ready(seen) => seen,
                Poll::Pending => panic!("ready on the second poll"),
            }
        });
        assert_eq!(seen, Some(inner));
        assert_eq!(current(), None);
    }

    #[test]
    fn a_panic_in_the_attempt_restores_the_context() {
        let attempt = Attempt::new(1, None);
        let caught = std::panic::catch_unwind(|| attempt.scope_blocking(|| panic!("attempt")));
        assert!(caught.is_err());
        assert_eq!(current(), None);
    }
}
