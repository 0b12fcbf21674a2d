//! The blocking driver: the same retry loop for a synchronous operation, waiting with thread
//! sleeps (through the thread's [`Sleeper`](super::Sleeper)) instead of tokio's timer.

use std::fmt::Debug;

use super::sleeper::sleep_blocking;
use super::{NoAttemptTimeout, OnRetry, Retry, RetryLoop, ShedInto, ShedPolicy};
use crate::classify::ClassifyRetry;
use crate::info::RetryInfo;
use crate::strategy::RetryStrategy;

/// [`retry`](crate::retry) for a blocking operation: runs `operation` under `strategy` on the
/// calling thread, classifying errors by their [`RetryInfo`], and returns the first success or
/// the last attempt's own error, unchanged.
///
/// The strategy decides exactly as for an async call (attempts, backoff, quota, deadline, and in
/// adaptive mode the send permit, shared with async calls of the same scope); only the waits
/// differ: the thread sleeps through its [`Sleeper`](crate::driver::Sleeper)
/// ([`std::thread::sleep`] unless [`with_sleeper`](crate::driver::with_sleeper) replaced it). Do
/// not call it on an async runtime's worker thread: it blocks that thread for the whole backoff
/// (use [`retry`](crate::retry) there, or `tokio::task::spawn_blocking`).
///
/// ```
/// use retry_core::{RetryConfig, StandardStrategy, retry_blocking};
/// use std::{io, time::Duration};
///
/// let config = RetryConfig::builder()
///     .max_attempts(3)
///     .initial_backoff(Duration::from_millis(1))
///     .max_backoff(Duration::from_millis(1))
///     .build()
///     .unwrap();
/// let strategy = StandardStrategy::new(config);
/// let mut calls = 0;
/// let value = retry_blocking(&strategy, || {
///     calls += 1;
///     if calls < 3 { Err(io::Error::from(io::ErrorKind::ConnectionRefused)) } else { Ok(calls) }
/// });
/// assert_eq!(value.unwrap(), 3);
/// ```
pub fn retry_blocking<S, F, T, E>(strategy: &S, operation: F) -> Result<T, E>
where
    S: RetryStrategy + ?Sized,
    F: FnMut() -> Result<T, E>,
    E: RetryInfo + Debug,
{
    Retry::new(strategy).run_blocking(operation)
}

impl<S: RetryStrategy + ?Sized, C, H, L> Retry<'_, S, C, H, NoAttemptTimeout, L> {
    /// [`run`](Self::run) for a blocking operation: runs it on the calling thread until it
    /// succeeds or the strategy stops retrying, sleeping through the thread's
    /// [`Sleeper`](crate::driver::Sleeper); returns the last outcome unchanged (or, with
    /// [`shed_load`](Self::shed_load), `E::from(LoadShed)` for a call shed before its first
    /// attempt). A blocking attempt cannot be cut, so there is no attempt timeout.
    ///
    /// ```
    /// use retry_core::{Retry, RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryIf;
    /// use retry_core::driver::with_sleeper;
    /// use retry_core::clock::ManualClock;
    ///
    /// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(4).build().unwrap());
    /// let mut calls = 0;
    /// // Virtual time for the example: the backoffs move a manual clock instead of sleeping.
    /// let outcome = with_sleeper(ManualClock::new(), || {
    ///     Retry::new(&strategy)
    ///         .classifier(RetryIf::new(|status: &u16| *status == 503))
    ///         .run_blocking(|| {
    ///             calls += 1;
    ///             if calls < 4 { Err(503) } else { Ok("done") }
    ///         })
    /// });
    /// assert_eq!(outcome, Ok("done"));
    /// ```
    ///
    /// Shedding load, for an error type that can hold a [`LoadShed`](crate::LoadShed):
    ///
    /// ```
    /// use retry_core::{AdaptiveStrategy, LoadShed, Retry, RetryConfig, RetryInfo};
    ///
    /// #[derive(Debug)]
    /// enum E {
    ///     Shed(LoadShed),
    /// }
    /// impl RetryInfo for E {}
    /// impl From<LoadShed> for E {
    ///     fn from(shed: LoadShed) -> Self {
    ///         E::Shed(shed)
    ///     }
    /// }
    ///
    /// let strategy = AdaptiveStrategy::new(RetryConfig::default());
    /// let out = Retry::new(&strategy).shed_load().run_blocking(|| Ok::<_, E>(7));
    /// assert_eq!(out.unwrap(), 7); // no throttle yet: nothing to shed
    /// # let _ = E::Shed;
    /// ```
    pub fn run_blocking<F, T, E>(self, mut operation: F) -> Result<T, E>
    where
        F: FnMut() -> Result<T, E>,
        E: Debug,
        C: ClassifyRetry<T, E>,
        H: OnRetry<E>,
        L: ShedInto<E>,
    {
        let mut attempts = RetryLoop::new(self.strategy, self.classifier, self.on_retry)
            .with_options(self.shedding, self.idempotency);
        loop {
            if let Err(refusal) = attempts.wait_blocking() {
                return Err(L::into_error(refusal));
            }
            let outcome = attempts.in_attempt_blocking(&mut operation);
            if attempts.finish(&outcome).is_break() {
                attempts.linger_blocking();
                return outcome;
            }
        }
    }
}

impl<S: RetryStrategy + ?Sized, C, H, L: ShedPolicy> RetryLoop<'_, S, C, H, L> {
    /// [`ready`](Self::ready) for a blocking caller: blocks the thread until the next attempt may
    /// be sent (its backoff, then each wait for its send permit), sleeping through the thread's
    /// [`Sleeper`](crate::driver::Sleeper). Returns at once when there is nothing to wait for
    /// (every first attempt in standard mode). A loop that sheds load
    /// ([`shed_load`](Self::shed_load)) may refuse the call instead, before the first attempt waits
    /// for its send permit and after each of its waits: then nothing is sent and the
    /// [`LoadShed`](crate::LoadShed) is returned, for the caller to return as its own error.
    /// `#[retryable]` on a plain `fn` expands to a loop of `wait_blocking`, the attempt and
    /// [`finish`](Self::finish) (then, when the function may long-poll,
    /// [`linger_blocking`](Self::linger_blocking)).
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// let result = loop {
    ///     let Ok(()) = retry.wait_blocking();
    ///     let outcome: Result<u32, std::io::Error> = Ok(1);
    ///     if retry.finish(&outcome).is_break() {
    ///         break outcome;
    ///     }
    /// };
    /// assert_eq!(result.unwrap(), 1);
    /// ```
    #[inline(always)]
    pub fn wait_blocking(&mut self) -> Result<(), L::Refusal> {
        if let Some(refusal) = self.refuse() {
            return Err(refusal);
        }
        match self.next_wait(true) {
            Some(wait) => self.wait_blocking_from(wait),
            None => Ok(()),
        }
    }

    /// [`linger`](Self::linger) for a blocking caller: once `finish` ended the call, sleeps
    /// (through the thread's [`Sleeper`](crate::driver::Sleeper)) the backoff of a long-polling
    /// call whose retry the quota refused; returns at once for every other call.
    ///
    /// ```
    /// use retry_core::driver::{NoHook, RetryLoop};
    /// use retry_core::{RetryConfig, StandardStrategy};
    /// use retry_core::classify::RetryInfoClassifier;
    /// let strategy = StandardStrategy::new(RetryConfig::default());
    /// let mut retry = RetryLoop::new(&strategy, RetryInfoClassifier, NoHook);
    /// let result = loop {
    ///     let Ok(()) = retry.wait_blocking();
    ///     let outcome: Result<u32, std::io::Error> = Ok(1);
    ///     if retry.finish(&outcome).is_break() {
    ///         retry.linger_blocking();
    ///         break outcome;
    ///     }
    /// };
    /// assert_eq!(result.unwrap(), 1);
    /// ```
    #[inline(always)]
    pub fn linger_blocking(&mut self) {
        // Counted in the call's stats when `finish` ended it.
        if let Some(wait) = self.take_linger() {
            sleep_blocking(wait);
        }
    }

    /// The waits of [`wait_blocking`](Self::wait_blocking) after the first, out of line (the
    /// success path never waits).
    #[inline(never)]
    fn wait_blocking_from(&mut self, first: std::time::Duration) -> Result<(), L::Refusal> {
        let mut wait = first;
        loop {
            self.count_wait(wait);
            sleep_blocking(wait);
            if let Some(refusal) = self.refuse() {
                return Err(refusal);
            }
            match self.next_wait(false) {
                Some(next) => wait = next,
                None => return Ok(()),
            }
        }
    }
}
