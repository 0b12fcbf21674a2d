//! Retrying at one layer: where `#[tracing::instrument]` goes beside `#[retryable]` (one span
//! per attempt or one per call), and nested retries multiplying. The guide's page
//! `retry_core::guide::layers` states what these tests check.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use retry_core::{RetryInfo, RetrySafety, retryable};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Debug, PartialEq)]
struct Unavailable(u32);

impl RetryInfo for Unavailable {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

/// Fails the first `fails` attempts.
fn attempt(attempts: &AtomicU32, fails: u32) -> Result<u32, Unavailable> {
    let n = attempts.fetch_add(1, Ordering::Relaxed) + 1;
    if n <= fails {
        Err(Unavailable(n))
    } else {
        Ok(n)
    }
}

/// Records the name of every span created.
#[derive(Default)]
struct SpanNames {
    names: Mutex<Vec<&'static str>>,
    next: AtomicU64,
}

impl Subscriber for SpanNames {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        self.names
            .lock()
            .expect("not poisoned")
            .push(span.metadata().name());
        Id::from_u64(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, _: &Event<'_>) {}
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

// Above `#[retryable]`, `#[instrument]` expands first: the span is made in the body, which
// `#[retryable]` then runs once per attempt. Below it, `#[instrument]` expands second and wraps
// the whole retry loop.
// ANCHOR: guide-instrument-order
#[tracing::instrument(skip_all)] // above: one span per attempt
#[retryable(max_attempts = 3, initial_backoff = "10ms", scope = "layers-above")]
async fn span_per_attempt(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    attempt(attempts, 2)
}

#[retryable(max_attempts = 3, initial_backoff = "10ms", scope = "layers-below")]
#[tracing::instrument(skip_all)] // below: one span per call, around every attempt
async fn span_per_call(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    attempt(attempts, 2)
}
// ANCHOR_END: guide-instrument-order

/// The spans a future made, by name.
async fn spans_of<F: Future>(future: F) -> (F::Output, Vec<&'static str>) {
    let subscriber = std::sync::Arc::new(SpanNames::default());
    let guard = tracing::subscriber::set_default(std::sync::Arc::clone(&subscriber));
    let output = future.await;
    drop(guard);
    let names = subscriber.names.lock().expect("not poisoned").clone();
    (output, names)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn instrument_above_retryable_makes_a_span_per_attempt() {
    let attempts = AtomicU32::new(0);
    let (value, spans) = spans_of(span_per_attempt(&attempts)).await;
    assert_eq!(value, Ok(3));
    // Each retry runs in the library's `retry.attempt` span, the attempt's own span inside it.
    assert_eq!(
        spans,
        [
            "span_per_attempt",
            "retry.attempt",
            "span_per_attempt",
            "retry.attempt",
            "span_per_attempt"
        ]
    );
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn instrument_below_retryable_makes_a_span_per_call() {
    let attempts = AtomicU32::new(0);
    let (value, spans) = spans_of(span_per_call(&attempts)).await;
    assert_eq!(value, Ok(3));
    // The call's span around every attempt; each retry in a `retry.attempt` span within it.
    assert_eq!(spans, ["span_per_call", "retry.attempt", "retry.attempt"]);
}

// Retries at two layers multiply: the outer function's 3 attempts each make the inner one's 3
// (the classic preset: a fixed quota of 500, so that only the layers count).
#[retryable(
    preset = "aws-classic",
    max_attempts = 3,
    initial_backoff = "10ms",
    scope = "layers-inner"
)]
async fn inner(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    attempt(attempts, u32::MAX)
}

#[retryable(
    preset = "aws-classic",
    max_attempts = 3,
    initial_backoff = "10ms",
    scope = "layers-outer"
)]
async fn outer(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    inner(attempts).await
}

#[tokio::test(start_paused = true)]
async fn nested_retries_multiply() {
    let attempts = AtomicU32::new(0);
    assert_eq!(outer(&attempts).await, Err(Unavailable(9)));
}

// Under the default, a young scope grants what a fixed quota of 500 would, so nested retries
// multiply at first; once the inner scope is a window (60 s) old, its traffic-sized quota holds
// one whole call's retries: its first call retries twice, and the outer layer's retries find
// it empty.
#[retryable(
    max_attempts = 3,
    initial_backoff = "10ms",
    scope = "layers-default-inner"
)]
async fn default_inner(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    attempt(attempts, u32::MAX)
}

#[retryable(
    max_attempts = 3,
    initial_backoff = "10ms",
    scope = "layers-default-outer"
)]
async fn default_outer(attempts: &AtomicU32) -> Result<u32, Unavailable> {
    default_inner(attempts).await
}

#[tokio::test(start_paused = true)]
async fn the_default_quota_bounds_nested_retries_once_the_scope_is_a_window_old() {
    let attempts = AtomicU32::new(0);
    assert_eq!(default_outer(&attempts).await, Err(Unavailable(9)));
    tokio::time::advance(std::time::Duration::from_secs(61)).await;
    let attempts = AtomicU32::new(0);
    assert_eq!(default_outer(&attempts).await, Err(Unavailable(5)));
}
