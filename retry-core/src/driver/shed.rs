//! Whether a call may be refused before its first attempt: the load-shedding policy of every
//! driver ([`Retry`](super::Retry), [`RetryLoop`](super::RetryLoop), `#[retryable(shed = true)]`
//! and the tower layer), chosen by type so that a driver that never sheds pays nothing for it and
//! asks nothing of the caller's error type.

use std::convert::Infallible;

use crate::load_shed::LoadShed;
use crate::strategy::{RetryStrategy, RetryToken};

mod sealed {
    /// Only this module's policies exist: the service relies on what they do.
    pub trait Sealed {}
}

/// What a driver does when the strategy would [`shed`](RetryStrategy::shed) a call: [`NeverShed`]
/// (the default: the first attempt is always made) or [`ShedLoad`] (set with
/// [`Retry::shed_load`](super::Retry::shed_load),
/// [`RetryLoop::shed_load`](super::RetryLoop::shed_load) or the tower layer's `shed_load`: the call
/// fails at once). Sealed: the drivers' methods choose it.
pub trait ShedPolicy: sealed::Sealed {
    /// What a refused call fails with, before it becomes the service's error: a [`LoadShed`],
    /// or [`Infallible`] for a policy that never refuses.
    type Refusal;

    /// Asked before a call's first attempt waits for its send permit and after each of its
    /// waits: the refusal if the call is shed. The caller abandons the token.
    fn shed<S: RetryStrategy + ?Sized>(
        &self,
        strategy: &S,
        token: &RetryToken,
    ) -> Option<Self::Refusal>;
}

/// How a [`ShedPolicy`]'s refusal becomes the caller's error `E`: what a driver requires of
/// `E` (nothing for [`NeverShed`], `E: From<LoadShed>` for [`ShedLoad`]).
#[diagnostic::on_unimplemented(
    message = "`{E}` cannot hold a `LoadShed`: a call shed before its first attempt fails with the caller's own error type",
    label = "`shed_load()` needs `{E}: From<LoadShed>`",
    note = "implement `From<LoadShed>` for `{E}`, e.g. with a variant `Shed(#[from] LoadShed)` marked `#[retry(never)]`, or drop `shed_load()`"
)]
pub trait ShedInto<E>: ShedPolicy {
    /// The error a refused call fails with.
    fn into_error(refusal: Self::Refusal) -> E;
}

/// The default policy: never refuse a call; a throttled first attempt waits for its permit (up
/// to `max_wait`) and is always made.
///
/// ```
/// use retry_core::driver::{NeverShed, ShedPolicy};
/// use retry_core::{RetryConfig, RetryStrategy, StandardStrategy};
/// let strategy = StandardStrategy::new(RetryConfig::default());
/// let token = strategy.acquire_initial_token();
/// assert!(NeverShed.shed(&strategy, &token).is_none());
/// # strategy.abandon(token);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NeverShed;

impl sealed::Sealed for NeverShed {}

impl ShedPolicy for NeverShed {
    type Refusal = Infallible;

    #[inline(always)]
    fn shed<S: RetryStrategy + ?Sized>(&self, _: &S, _: &RetryToken) -> Option<Infallible> {
        None
    }
}

impl<E> ShedInto<E> for NeverShed {
    #[inline(always)]
    fn into_error(refusal: Infallible) -> E {
        match refusal {}
    }
}

/// Refuse a call whose first attempt the strategy sheds (adaptive mode: its send permit
/// expected too late for an answer before the call's deadline, or later than `max_wait`): the
/// call fails at once with
/// `E::from(LoadShed)`, nothing sent. Set with [`Retry::shed_load`](super::Retry::shed_load),
/// [`RetryLoop::shed_load`](super::RetryLoop::shed_load) or the tower layer's `shed_load`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ShedLoad;

impl sealed::Sealed for ShedLoad {}

impl ShedPolicy for ShedLoad {
    type Refusal = LoadShed;

    #[inline]
    fn shed<S: RetryStrategy + ?Sized>(
        &self,
        strategy: &S,
        token: &RetryToken,
    ) -> Option<LoadShed> {
        // Only a first attempt: a retry's wait is the strategy's to bound.
        if token.attempt() != 1 {
            return None;
        }
        let shed = strategy.shed(token)?;
        tracing::debug!(target: "retry_core", reason = shed.reason().as_str(), "{shed}");
        Some(shed)
    }
}

impl<E: From<LoadShed>> ShedInto<E> for ShedLoad {
    #[inline]
    fn into_error(refusal: LoadShed) -> E {
        E::from(refusal)
    }
}
