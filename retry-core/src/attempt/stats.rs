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
}
