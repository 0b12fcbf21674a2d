//! The tracing events of a retry mean what the `on_retry` hook means: the "retrying" event's
//! `attempt` is the attempt that failed, as `RetryEvent::attempt`, through the plain API and
//! through `#[retryable]`.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use retry_core::{
    Retry, RetryConfig, RetryEvent, RetryInfo, RetrySafety, StandardStrategy, retryable,
};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// A subscriber keeping the `attempt` field of every "retrying" event.
#[derive(Clone, Default)]
struct RetryingAttempts(Arc<Mutex<Vec<u64>>>);

impl RetryingAttempts {
    fn seen(&self) -> Vec<u64> {
        self.0.lock().expect("not poisoned").clone()
    }
}

/// An event's message and `attempt` field.
#[derive(Default)]
struct Fields {
    message: String,
    attempt: Option<u64>,
}

impl Visit for Fields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        if field.name() == "attempt" {
            self.attempt = Some(value);
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

impl Subscriber for RetryingAttempts {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if fields.message == "retrying" {
            let attempt = fields.attempt.expect("a retrying event names its attempt");
            self.0.lock().expect("not poisoned").push(attempt);
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[derive(Debug, PartialEq)]
struct Unavailable;

impl RetryInfo for Unavailable {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

/// Fails until its `failures` are used up.
async fn flaky(failures: &Mutex<u32>) -> Result<(), Unavailable> {
    let mut left = failures.lock().expect("not poisoned");
    if *left == 0 {
        return Ok(());
    }
    *left -= 1;
    Err(Unavailable)
}

#[tokio::test(start_paused = true)]
async fn the_retrying_event_names_the_attempt_that_failed_like_on_retry() {
    let events = RetryingAttempts::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let strategy = StandardStrategy::new(
        RetryConfig::builder()
            .max_attempts(4)
            .build()
            .expect("valid config"),
    );
    let hooked = Mutex::new(Vec::new());
    let failures = Mutex::new(3);
    Retry::new(&strategy)
        .on_retry(|event: &RetryEvent<'_, Unavailable>| {
            hooked
                .lock()
                .expect("not poisoned")
                .push(u64::from(event.attempt()));
        })
        .run(|| flaky(&failures))
        .await
        .expect("the fourth attempt succeeds");
    let hooked = hooked.into_inner().expect("not poisoned");
    assert_eq!(hooked, [1, 2, 3], "on_retry: the attempts that failed");
    assert_eq!(events.seen(), hooked, "the retrying events");
}

#[retryable(max_attempts = 3, scope = "tests-tracing-events")]
async fn flaky_retryable(failures: &Mutex<u32>) -> Result<(), Unavailable> {
    flaky(failures).await
}

#[tokio::test(start_paused = true)]
async fn a_retryable_fn_emits_the_same_attempts() {
    let events = RetryingAttempts::default();
    let _guard = tracing::subscriber::set_default(events.clone());
    let failures = Mutex::new(2);
    flaky_retryable(&failures)
        .await
        .expect("the third attempt succeeds");
    assert_eq!(events.seen(), [1, 2]);
}
