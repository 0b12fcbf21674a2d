//! Drivers: run an operation under a strategy, no macro needed. [`retry`](crate::retry) and
//! [`Retry`] for an async operation, [`retry_blocking`](crate::retry_blocking)
//! for a blocking one, and [`RetryLoop`], the loop they and
//! `#[retryable]` run, for a caller that makes each attempt itself.

// `Settled` and `cut_after` are the generated code's, reached by `__private` through the modules.
pub(crate) mod attempt_timeout;
pub(crate) mod blocking;
pub(crate) mod hedged;
#[cfg(test)]
mod hedged_lending_tests;
mod hedged_loop;
pub(crate) mod hedged_retry;
#[cfg(test)]
mod hedged_tests;
pub(crate) mod hook;
pub(crate) mod linger;
mod ready;
pub(crate) mod retry;
mod retry_loop;
mod retry_step;
mod shed;
mod sleeper;

pub use attempt_timeout::{AttemptLimit, AttemptTimeout, NoAttemptTimeout, with_attempt_timeout};
pub use hedged_loop::{HedgedLoop, Next};
pub use hedged_retry::HedgedRetry;
pub(crate) use hook::RetryEvent;
pub use hook::{NoHook, OnRetry};
pub use linger::Linger;
pub use ready::Ready;
pub(crate) use retry::Retry;
pub use retry_loop::RetryLoop;
pub use shed::{NeverShed, ShedInto, ShedLoad, ShedPolicy};
pub use sleeper::{Sleeper, ThreadSleeper, with_sleeper};
