//! The attempt, inside the attempt: which attempt of a call is running ([`Attempt`], and
//! `current` with feature `attempt-context`), what a call did ([`CallStats`], and `capture` with
//! the feature), and the tracing spans and events the drivers emit around attempts.
//!
//! # The attempt context (feature `attempt-context`)
//!
//! With feature `attempt-context`, every driver sets the attempt around each step of an attempt: the closure under
//! [`retry`](crate::retry) and [`Retry`](crate::Retry) when it is called and the future it returns
//! while it is polled, the body of a `#[retryable]` fn, a blocking attempt, and under
//! [`RetryLayer`](crate::tower::RetryLayer) the wrapped service's `call` and its response future.
//! There `current()` returns it: the attempt's number and the most attempts the call may make, for
//! an idempotency key per call, the attempt in the logs, or the AWS SDKs' `amz-sdk-request`
//! header ([`Attempt::amz_sdk_request`]). `RetryLayer` also puts the [`Attempt`] in the
//! extensions of each `http::Request` it sends, for a service that moves the request to another
//! task (a `Buffer`).
//!
//! The context is a thread-local word set before each poll and restored after: no allocation, no
//! task-local machinery, and it works on any executor (a future moved between threads carries it
//! because each poll sets it where it runs). It is a feature because it is not free: setting and
//! restoring the word around each poll and around the closure's call costs a call that succeeds
//! at once about 29 more instructions (199 against 170 per `retry` call,
//! `benches/examples/instructions.rs` under callgrind; about 1 ns in the `success_path`
//! benchmark), which a program that never reads it should not pay. Without the feature,
//! [`RetryLoop::attempt`](crate::driver::RetryLoop::attempt) still tells a caller that drives a
//! loop itself which attempt it sends.
//!
//! # Attempts on `Ok` and on `Err`
//!
//! [`Retry::run_with_stats`](crate::Retry::run_with_stats) returns the call's [`CallStats`] (the
//! attempts it sent and the time it waited) with its outcome, as
//! [`RetryLoop::stats`](crate::driver::RetryLoop::stats) tells a loop's own driver. With feature
//! `attempt-context`, `capture` gathers them around any code, so that a `#[retryable]` fn keeps
//! its signature: `let (outcome, stats) = attempt::capture(client.get(key)).await;` (the drivers
//! report each call that ends to the capture running on their thread, if any).
//!
//! # Spans and events, in OpenTelemetry's shape
//!
//! OpenTelemetry's HTTP semantic conventions (stable) give every re-sent request its own span,
//! with `http.request.resend_count`, under the span of the logical call. The drivers do the same
//! for any operation (target `retry_core`):
//!
//! * the first attempt gets no span of its own: it runs in the caller's span, and the success
//!   path pays nothing for spans;
//! * every later attempt runs in a span **`retry.attempt`** (level INFO), a child of the span the
//!   caller is in (the logical call's, when the caller instruments it), entered around each step of
//!   the attempt as above, with the fields
//!
//!   | field | value |
//!   |---|---|
//!   | `http.request.resend_count` | the attempt's number less one: 1 for the first retry |
//!   | `retry.attempt` | the attempt's number (2 for the first retry) |
//!   | `retry.reason` | why the previous attempt was retried: its [`ErrorKind`](crate::ErrorKind)'s name (`ErrorKind` has the table of reasons) |
//!   | `retry.delay` | the backoff slept before the attempt, in seconds |
//!   | `retry.scope` | the strategy's scope ([`RetryStrategy::scope_name`](crate::RetryStrategy::scope_name)), when it has one |
//!
//!   Through `tracing-opentelemetry`, each becomes an OpenTelemetry span with those attributes,
//!   a child of the caller's span, and an HTTP client's own span inside it is the re-sent request's;
//! * giving up is **one WARN event**, "giving up: ...": a retryable failure whose retry the
//!   strategy refused (attempts used up, quota exhausted, the deadline, a `Retry-After` too long,
//!   the rate limiter's `max_wait`), with `attempts`, `outcome`
//!   ([`RetryError::as_str`](crate::RetryError::as_str), as the `retry.calls` metric's `outcome`
//!   label names it), `scope`, and `error`, the last error's `Debug` (so the drivers ask
//!   `E: Debug`). Every other event of the crate is DEBUG, but the adaptive limiter's engagement
//!   (WARN): "retrying" for each retry granted (its `reason`, the same name), "not retrying" for
//!   a failure that is not retryable, "retry quota exhausted".

#[cfg(feature = "attempt-context")]
mod capture;
mod context;
mod number;
mod stats;

#[cfg(feature = "attempt-context")]
pub(crate) use capture::record;
#[cfg(feature = "attempt-context")]
pub use capture::{Captured, capture, capture_blocking};
pub use context::InAttempt;
#[cfg(feature = "attempt-context")]
pub use context::current;
pub(crate) use context::{Mark, in_context, mark};
pub use number::Attempt;
pub use stats::CallStats;

/// Without feature `attempt-context` no capture can run: a call that ends reports nothing.
#[cfg(not(feature = "attempt-context"))]
#[inline(always)]
pub(crate) fn record(stats: impl FnOnce() -> CallStats) {
    let _ = stats;
}
