//! The retry spans in OpenTelemetry's shape, through `tracing-opentelemetry` into the
//! OpenTelemetry SDK's in-memory exporter: each attempt after the first is a `retry.attempt` span
//! with `http.request.resend_count`, the retry's reason and delay, a child of the caller's span;
//! the first attempt has none; giving up is one WARN event, on the caller's span, with the
//! attempts and the last error.

use std::time::Duration;

use opentelemetry::Value;
use opentelemetry::trace::TracerProvider;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use retry_core::backoff::Jitter;
use retry_core::{RetryConfig, RetryInfo, RetrySafety, retry, retryable, strategy_for};
use tracing::Instrument;
use tracing_subscriber::layer::SubscriberExt;

/// A failure that is always retried.
#[derive(Debug)]
struct Unavailable;

impl RetryInfo for Unavailable {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

/// The spans the future `run` makes finishes under a subscriber exporting to OpenTelemetry's
/// in-memory exporter (made under it: a span made before is disabled).
async fn exported<F: Future>(run: impl FnOnce() -> F) -> (F::Output, Vec<SpanData>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let layer = tracing_opentelemetry::layer().with_tracer(provider.tracer("retry-tests"));
    let subscriber = tracing_subscriber::registry().with(layer);
    let output = {
        let _default = tracing::subscriber::set_default(subscriber);
        run().await
    };
    let spans = exporter.get_finished_spans().expect("the exporter's spans");
    (output, spans)
}

/// The attribute `key` of `span`.
fn attribute<'s>(span: &'s SpanData, key: &str) -> Option<&'s Value> {
    span.attributes
        .iter()
        .find(|kv| kv.key.as_str() == key)
        .map(|kv| &kv.value)
}

/// The spans named `name`.
fn named<'s>(spans: &'s [SpanData], name: &str) -> Vec<&'s SpanData> {
    spans.iter().filter(|span| span.name == name).collect()
}

/// 3 attempts, 10 ms then 20 ms backoff (no jitter), in the scope `scope`.
fn config() -> RetryConfig {
    RetryConfig::builder()
        .max_attempts(3)
        .initial_backoff(Duration::from_millis(10))
        .jitter(Jitter::None)
        .build()
        .expect("valid config")
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn each_retry_is_a_child_span_of_the_call_with_its_resend_count() {
    let strategy = strategy_for(config(), "otel-spans");
    let strategy = &strategy;
    let mut failures = 2;
    let call = move || {
        retry(strategy, move || {
            let fail = failures > 0;
            failures -= 1;
            async move { if fail { Err(Unavailable) } else { Ok(7) } }
        })
        .instrument(tracing::info_span!("get_item"))
    };
    let (value, spans) = exported(call).await;
    assert_eq!(value.expect("the third attempt succeeds"), 7);

    let [call] = named(&spans, "get_item")[..] else {
        panic!("one call span: {spans:?}");
    };
    let retries = named(&spans, "retry.attempt");
    assert_eq!(retries.len(), 2, "the first attempt has no span: {spans:?}");
    for (retry, (resend_count, delay)) in retries.iter().zip([(1, 0.01), (2, 0.02)]) {
        assert_eq!(retry.parent_span_id, call.span_context.span_id());
        assert_eq!(retry.span_context.trace_id(), call.span_context.trace_id());
        assert_eq!(
            attribute(retry, "http.request.resend_count"),
            Some(&Value::I64(resend_count))
        );
        assert_eq!(
            attribute(retry, "retry.attempt"),
            Some(&Value::I64(resend_count + 1))
        );
        assert_eq!(
            attribute(retry, "retry.reason"),
            Some(&Value::from("transient"))
        );
        assert_eq!(attribute(retry, "retry.delay"), Some(&Value::F64(delay)));
        assert_eq!(
            attribute(retry, "retry.scope"),
            Some(&Value::from("otel-spans"))
        );
    }
    assert!(
        call.events.iter().all(|event| event.name != "giving up"),
        "a call that succeeds does not warn"
    );
}

#[retryable(
    max_attempts = 3,
    initial_backoff = "10ms",
    jitter = "none",
    scope = "otel-gives-up"
)]
async fn always_unavailable() -> Result<u32, Unavailable> {
    Err(Unavailable)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn giving_up_is_one_warning_on_the_call_with_the_attempts_and_the_last_error() {
    let call = || always_unavailable().instrument(tracing::info_span!("get_item"));
    let (outcome, spans) = exported(call).await;
    assert!(outcome.is_err());
    let [call] = named(&spans, "get_item")[..] else {
        panic!("one call span: {spans:?}");
    };
    assert_eq!(named(&spans, "retry.attempt").len(), 2);
    let warnings: Vec<_> = call
        .events
        .iter()
        .filter(|event| {
            event
                .attributes
                .iter()
                .any(|kv| kv.key.as_str() == "level" && kv.value.as_str() == "WARN")
        })
        .collect();
    let [warning] = warnings[..] else {
        panic!("one warning: {:?}", call.events);
    };
    assert!(warning.name.starts_with("giving up"), "{warning:?}");
    let field = |key: &str| {
        warning
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == key)
            .map(|kv| kv.value.clone())
    };
    assert_eq!(field("attempts"), Some(Value::I64(3)));
    assert_eq!(field("outcome"), Some(Value::from("max_attempts")));
    assert_eq!(field("error"), Some(Value::from("Unavailable")));
    assert_eq!(field("scope"), Some(Value::from("otel-gives-up")));
}
