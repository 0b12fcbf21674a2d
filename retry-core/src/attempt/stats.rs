//! What a call did ([`CallStats`]: its attempts and its waits), handed back with the call's value
//! by [`Retry::run_with_stats`](crate::Retry::run_with_stats) and
//! [`RetryLoop::stats`](crate::driver::RetryLoop::stats), or gathered around any code with
//! `attempt::capture` (feature `attempt-context`; a `#[retryable]` fn keeps its signature).

use std::time::Duration;

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
///         async move { if fail { Err(std::io::ErrorKind::ConnectionRefused.into()) } else { Ok(calls) } }
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
    hedges: u32,
}

impl CallStats {
    /// A call that sent `attempts` attempts and waited `waited` between them.
    #[inline(always)]
    pub(crate) fn new(attempts: u32, waited: Duration) -> Self {
        Self {
            attempts,
            waited,
            hedges: 0,
        }
    }

    /// A hedged call that sent `attempts` attempts, `hedges` of them hedges, and waited
    /// `waited` between them.
    pub(crate) fn hedged(attempts: u32, waited: Duration, hedges: u32) -> Self {
        Self {
            attempts,
            waited,
            hedges,
        }
    }

    /// The attempts the call sent, the first included, its hedges included (0 for a call refused
    /// before its first attempt, or cancelled while it waited for it).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The retries the call sent: its attempts after the first that were not hedges (each sent
    /// after the copies in flight before it failed).
    pub fn retries(&self) -> u32 {
        self.attempts.saturating_sub(1).saturating_sub(self.hedges)
    }

    /// The hedges the call sent ([`hedge`](crate::hedge)): copies of its request sent while
    /// another copy was in flight. Always 0 for a call that does not hedge.
    ///
    /// ```
    /// use retry_core::driver::{HedgedLoop, Next, NoHook};
    /// use retry_core::hedge::Hedging;
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    ///
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let hedging = Hedging::after(std::time::Duration::from_millis(50)).unwrap();
    /// let mut call = HedgedLoop::new(&strategy, RetryInfoClassifier, NoHook, hedging);
    /// assert_eq!(call.next_wait(true), None);
    /// let hedge = call.try_hedge().unwrap(); // the first attempt is slow
    /// assert_eq!(call.finish(hedge, &Ok::<_, std::io::Error>(())), Next::Return);
    /// let stats = call.stats();
    /// assert_eq!((stats.attempts(), stats.hedges(), stats.retries()), (2, 1, 0));
    /// ```
    pub fn hedges(&self) -> u32 {
        self.hedges
    }

    /// The time the call waited, as its retry loop scheduled it: each backoff, each wait for a
    /// send permit, and a long-polling call's wait before it returned.
    pub fn waited(&self) -> Duration {
        self.waited
    }
}
