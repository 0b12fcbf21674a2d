//! [`HedgedRetry`]: the plain API with hedging, made by [`Retry::hedge`].

use std::fmt::Debug;
use std::future::Future;

use super::attempt_timeout::AttemptLimit;
use super::hedged::Hedged;
use super::hedged_loop::HedgedLoop;
use super::hook::OnRetry;
use super::linger::Settled;
use super::retry::Retry;
use super::shed::ShedInto;
use crate::attempt::CallStats;
use crate::classify::{ClassifyRetry, Idempotency};
use crate::hedge::{HedgeConfigError, Hedging};
use crate::strategy::RetryStrategy;

/// [`Retry`] with hedging ([`hedge`](crate::hedge)): made by [`Retry::hedge`], with the options
/// set on the `Retry` before it (the classifier, the hook, the attempt timeout, load shedding). A separate type: a `Retry` that does not hedge runs the plain loop.
///
/// Each copy is the operation's future, called once per copy (the closure must be able to make
/// several requests in flight at once) and cut by the attempt timeout, if one is set. The call
/// returns the first outcome that ends it ([`HedgedLoop`]'s rules); the other copies are dropped.
///
/// ```
/// # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
/// use retry_core::hedge::Hedging;
/// use retry_core::{Retry, RetryConfig, StandardStrategy};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
///
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let copies = AtomicU32::new(0);
/// let started = tokio::time::Instant::now();
/// let answer = Retry::new(&strategy)
///     .hedge(Hedging::after(Duration::from_millis(50)).unwrap())
///     .unwrap()
///     .run(|| {
///         let copy = copies.fetch_add(1, Ordering::SeqCst) + 1;
///         async move {
///             // The first copy lands on a slow server; the hedge, 50 ms later, on a fast one.
///             let took = if copy == 1 { 2_000 } else { 20 };
///             tokio::time::sleep(Duration::from_millis(took)).await;
///             Ok::<_, std::io::Error>(copy)
///         }
///     })
///     .await;
/// assert_eq!(answer.unwrap(), 2);
/// assert_eq!(started.elapsed(), Duration::from_millis(70));
/// # }
/// ```
#[derive(Debug)]
#[must_use = "call .run(operation) to run it"]
pub struct HedgedRetry<'s, S: ?Sized, C, H, A, L> {
    retry: Retry<'s, S, C, H, A, L>,
    hedging: Hedging,
}

impl<'s, S: RetryStrategy + ?Sized, C, H, A, L> Retry<'s, S, C, H, A, L> {
    /// Hedges the call ([`hedge`](crate::hedge)): when no copy in flight has answered within
    /// `hedging`'s delay, another copy is sent (at most `max_hedges`), charged to the scope as a
    /// retry; the first answer that ends the call wins and the other copies are dropped. Set the
    /// other options first: they are kept.
    ///
    /// A hedge is the request sent twice on purpose: hedging declares the call idempotent, and
    /// a call declared [`idempotent(false)`](Self::idempotent) is refused with
    /// [`HedgeConfigError::NotIdempotent`].
    ///
    /// ```
    /// use retry_core::hedge::{HedgeConfigError, Hedging};
    /// use retry_core::{Retry, RetryConfig, StandardStrategy};
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let p95 = Hedging::at_percentile(95.0)?;
    /// let hedged = Retry::new(&strategy).hedge(p95)?;
    /// # let _ = hedged;
    /// let refused = Retry::new(&strategy).idempotent(false).hedge(p95);
    /// assert_eq!(refused.unwrap_err(), HedgeConfigError::NotIdempotent);
    /// # Ok::<(), HedgeConfigError>(())
    /// ```
    pub fn hedge(
        self,
        hedging: Hedging,
    ) -> Result<HedgedRetry<'s, S, C, H, A, L>, HedgeConfigError> {
        if self.idempotency == Idempotency::NotIdempotent {
            return Err(HedgeConfigError::NotIdempotent);
        }
        Ok(HedgedRetry {
            retry: Retry {
                idempotency: Idempotency::Idempotent,
                ..self
            },
            hedging,
        })
    }
}

impl<'s, S: RetryStrategy + ?Sized, C, H, A, L> HedgedRetry<'s, S, C, H, A, L> {
    /// Runs `operation`, hedged, until an outcome ends the call; returns that outcome unchanged
    /// (or, with [`shed_load`](Retry::shed_load), `E::from(LoadShed)` for a call shed before its
    /// first attempt).
    pub fn run<F, Fut, T, E>(self, operation: F) -> impl Future<Output = Result<T, E>>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Debug,
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
        A: AttemptLimit<T, E>,
        L: ShedInto<E>,
    {
        let run = self.run_with_stats(operation);
        async move { run.await.0 }
    }

    /// [`run`](Self::run), returning the call's [`CallStats`] (its attempts, its hedges among
    /// them, its waits) with its outcome.
    pub fn run_with_stats<F, Fut, T, E>(
        self,
        mut operation: F,
    ) -> impl Future<Output = (Result<T, E>, CallStats)>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, E>>,
        E: Debug,
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
        A: AttemptLimit<T, E>,
        L: ShedInto<E>,
    {
        let Retry {
            strategy,
            classifier,
            on_retry,
            attempt_timeout,
            shedding,
            idempotency,
        } = self.retry;
        let call = HedgedLoop::new(strategy, classifier, on_retry, self.hedging)
            .with_shedding(shedding)
            .idempotency(idempotency);
        Settled::new(async move {
            let limit = attempt_timeout;
            let copies = Hedged::new(call, || limit.limit(operation()));
            let (outcome, stats, linger) = copies.await;
            ((outcome, stats), linger)
        })
    }
}
