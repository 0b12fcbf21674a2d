//! Hedging seen from outside: the `retry.attempt` span of a hedge (`retry.hedge = true`,
//! `http.request.resend_count`) apart from a retry's, and the hedge metrics (`retry.hedges.sent`,
//! `won`, `cancelled`, `refused`) under Prometheus's recorder, process-wide (one metrics test in
//! this binary). Virtual time.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use retry_core::backoff::Jitter;
use retry_core::hedge::Hedging;
use retry_core::{Retry, RetryConfig, RetryInfo, RetrySafety, strategy_for};
use tokio::time::sleep;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

const MS: Duration = Duration::from_millis(1);

/// The tests of this file one at a time: tracing caches whether a callsite is enabled for every
/// thread at once, and a span callsite first reached by the metrics test (no subscriber on its
/// thread) while the span test's subscriber was being set was cached as disabled once in CI (the
/// hedge's span missing). Tokio's mutex: the guard is held across the calls' awaits.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[derive(Debug, PartialEq)]
struct Unavailable;

impl RetryInfo for Unavailable {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

/// 3 attempts, a 10 ms backoff, no jitter, in the scope `scope`.
fn strategy(scope: &str) -> retry_core::strategy::ConfiguredStrategy {
    let config = RetryConfig::builder()
        .max_attempts(3)
        .initial_backoff(10 * MS)
        .jitter(Jitter::None)
        .build()
        .expect("a valid config");
    strategy_for(config, scope)
}

/// The `retry.attempt` spans opened, each as its fields `name=value`, sorted.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Vec<String>>>>);

struct Fields(Vec<String>);

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.push(format!("{}={value:?}", field.name()));
    }
}

impl<S: tracing::Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        if attrs.metadata().name() != "retry.attempt" {
            return;
        }
        let mut fields = Fields(Vec::new());
        attrs.record(&mut fields);
        let mut fields = fields.0;
        fields
            .retain(|field| !field.starts_with("retry.scope") && !field.starts_with("retry.delay"));
        fields.sort();
        self.0.lock().expect("not poisoned").push(fields);
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_hedges_span_is_marked_and_a_retrys_is_not() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let spans = Spans::default();
    let _guard = tracing::subscriber::set_default(Registry::default().with(spans.clone()));
    tracing::callsite::rebuild_interest_cache();
    let strategy = strategy("hedging-observed-spans");
    let mut made = 0;
    let (answer, stats) = Retry::new(&strategy)
        .hedge(Hedging::after(10 * MS).expect("a delay"))
        .expect("an idempotent call")
        .run_with_stats(|| {
            made += 1;
            let copy = made;
            async move {
                match copy {
                    // The first copy fails at 15 ms, after the hedge (sent at 10 ms) failed at 12.
                    1 => sleep(15 * MS).await,
                    2 => sleep(2 * MS).await,
                    _ => return Ok(copy),
                }
                Err(Unavailable)
            }
        })
        .await;
    assert_eq!(answer, Ok(3));
    assert_eq!(
        (stats.attempts(), stats.hedges(), stats.retries()),
        (3, 1, 1)
    );
    let seen = spans.0.lock().expect("not poisoned").clone();
    assert_eq!(
        seen,
        vec![
            vec![
                "http.request.resend_count=1".to_owned(),
                "retry.attempt=2".to_owned(),
                "retry.hedge=true".to_owned(),
            ],
            vec![
                "http.request.resend_count=2".to_owned(),
                "retry.attempt=3".to_owned(),
                "retry.reason=\"transient\"".to_owned(),
            ],
        ],
        "the first attempt has no span; the hedge's is marked; the retry's has its reason"
    );
}

/// The value of the sample `name{labels}` in a scrape.
fn sample(scrape: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{name}{{{labels}}} ");
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(|value| value.parse().expect("a number"))
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn the_hedge_metrics_count_sent_won_cancelled_and_refused() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let handle = PrometheusBuilder::new()
        .with_recommended_naming(true)
        .install_recorder()
        .expect("the only recorder of this binary");
    let strategy = strategy("hedging-observed-metrics");
    let two_hedges = Hedging::after(10 * MS)
        .and_then(|hedging| hedging.with_max_hedges(2))
        .expect("valid hedging");
    // A hedge sent at 10 ms wins (answers at 11 ms); the first copy is dropped.
    let mut made = 0;
    let answer = Retry::new(&strategy)
        .hedge(two_hedges)
        .expect("an idempotent call")
        .run(|| {
            made += 1;
            let took = if made == 1 { 1_000 * MS } else { MS };
            async move {
                sleep(took).await;
                Ok::<_, Unavailable>(took)
            }
        })
        .await;
    assert_eq!(answer, Ok(MS));
    // Every copy takes 100 ms: hedges at 10 and 20 ms (the third attempt of max_attempts = 3);
    // the first copy answers at 100 ms and both hedges are dropped.
    let answer = Retry::new(&strategy)
        .hedge(two_hedges)
        .expect("an idempotent call")
        .run(|| async {
            sleep(100 * MS).await;
            Ok::<_, Unavailable>(0)
        })
        .await;
    assert_eq!(answer, Ok(0));
    // The same with max_hedges = 3: the third hedge would be a fourth attempt, refused.
    let three = Hedging::after(10 * MS)
        .and_then(|hedging| hedging.with_max_hedges(3))
        .expect("valid hedging");
    let answer = Retry::new(&strategy)
        .hedge(three)
        .expect("an idempotent call")
        .run(|| async {
            sleep(100 * MS).await;
            Ok::<_, Unavailable>(0)
        })
        .await;
    assert_eq!(answer, Ok(0));

    let scrape = handle.render();
    let scope = "scope=\"hedging-observed-metrics\"";
    // Sent: 1 + 2 + 2. Won: the first call's hedge. Cancelled: the first call's first copy, then
    // 2 hedges in each of the others. Refused: the third call's third hedge (max_attempts).
    assert_eq!(
        sample(&scrape, "retry_hedges_sent_total", scope),
        Some(5.0),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, "retry_hedges_won_total", scope),
        Some(1.0),
        "{scrape}"
    );
    assert_eq!(
        sample(&scrape, "retry_hedges_cancelled_total", scope),
        Some(5.0),
        "{scrape}"
    );
    assert_eq!(
        sample(
            &scrape,
            "retry_hedges_refused_total",
            &format!("{scope},refusal=\"max_attempts\"")
        ),
        Some(1.0),
        "{scrape}"
    );
}
