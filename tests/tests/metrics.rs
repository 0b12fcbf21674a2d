//! The `metrics` feature under a real recorder: Prometheus's exporter, its HTTP listener on
//! loopback, scraped over HTTP after a scripted sequence of calls; the names, labels and values
//! are the ones the `retry_core::metrics` table gives (Prometheus's spelling, with
//! `with_recommended_naming`). One test: the recorder is process-wide.

use std::net::SocketAddr;
use std::time::Duration;

use metrics_exporter_prometheus::PrometheusBuilder;
use retry_core::backoff::Jitter;
use retry_core::{Quota, Retry, RetryConfig, RetryInfo, RetryMode, RetrySafety, strategy_for};

/// An operation's failure: retried or not.
#[derive(Debug)]
enum Failure {
    Transient,
    Throttled,
    Fatal,
}

impl RetryInfo for Failure {
    fn retry_safety(&self) -> RetrySafety {
        match self {
            Failure::Transient | Failure::Throttled => RetrySafety::Yes,
            Failure::Fatal => RetrySafety::No,
        }
    }

    fn is_throttling(&self) -> bool {
        matches!(self, Failure::Throttled)
    }
}

/// 3 attempts, backoffs of 1 ms then 2 ms (no jitter): real sleeps of a few milliseconds.
fn config() -> RetryConfig {
    RetryConfig::builder()
        .max_attempts(3)
        .initial_backoff(Duration::from_millis(1))
        .jitter(Jitter::None)
        .build()
        .expect("valid config")
}

/// A free port on loopback for the exporter's listener.
async fn free_addr() -> SocketAddr {
    examples::refused_addr().await.expect("loopback")
}

/// The value of the sample `name{labels}`; `labels` in the exporter's order.
fn sample(scrape: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{name}{{{labels}}} ");
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .map(|value| value.parse().expect("a number"))
}

/// Runs one call whose attempts fail with `failures` in turn, then succeed.
async fn call(strategy: &retry_core::strategy::ConfiguredStrategy, failures: Vec<Failure>) {
    let mut failures = failures.into_iter();
    let _ = Retry::new(strategy)
        .run(|| {
            let outcome = failures.next().map_or(Ok(()), Err);
            async move { outcome }
        })
        .await;
}

#[tokio::test]
async fn a_prometheus_scrape_shows_each_scopes_calls_attempts_retries_backoffs_and_limiter() {
    // A scope made before the recorder is installed records nothing, for good.
    let early = strategy_for(config(), "metrics-before-the-recorder");
    let addr = free_addr().await;
    PrometheusBuilder::new()
        .with_recommended_naming(true)
        .with_http_listener(addr)
        .install()
        .expect("the exporter starts");
    call(&early, vec![]).await;

    let strategy = strategy_for(config(), "metrics-loopback");
    call(&strategy, vec![]).await; // success at once
    call(&strategy, vec![]).await; // success at once
    call(&strategy, vec![Failure::Transient]).await; // success after one retry
    call(&strategy, vec![Failure::Fatal]).await; // not retryable
    let always = (0..3).map(|_| Failure::Transient).collect();
    call(&strategy, always).await; // three attempts: max_attempts

    // Adaptive mode: a throttle engages the limiter at the rate the scope was sending (a tight
    // loop: thousands a second), and the calls after it wait (well under a millisecond each)
    // for their send permits (5 calls: a few milliseconds).
    let adaptive_config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .initial_backoff(Duration::from_millis(1))
        .throttling_backoff(Duration::from_millis(1))
        .jitter(Jitter::None)
        .build()
        .expect("valid config");
    let adaptive = strategy_for(adaptive_config, "metrics-adaptive");
    for _ in 0..200 {
        call(&adaptive, vec![]).await;
    }
    call(&adaptive, vec![Failure::Throttled]).await;
    for _ in 0..5 {
        call(&adaptive, vec![]).await;
    }

    // Scopes that never retried: their gauges are true from the scope's creation. A standard
    // scope and an adaptive one whose limiter never engaged have no send rate; a scope without
    // a quota has no quota level: those gauges are absent, not 0.
    let fresh = strategy_for(RetryConfig::default(), "metrics-fresh");
    call(&fresh, vec![]).await;
    let classic = strategy_for(
        RetryConfig::aws_classic().build().expect("a preset"),
        "metrics-fresh-classic",
    );
    let idle_config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid config");
    let idle = strategy_for(idle_config, "metrics-adaptive-idle");
    for _ in 0..50 {
        call(&idle, vec![]).await;
    }
    let off_config = RetryConfig::builder()
        .quota(Quota::Off)
        .build()
        .expect("valid config");
    let off = strategy_for(off_config, "metrics-quota-off");
    call(&off, vec![Failure::Transient]).await;

    let scrape = reqwest::get(format!("http://{addr}/metrics"))
        .await
        .expect("the exporter answers")
        .text()
        .await
        .expect("a body");
    let scope = r#"scope="metrics-loopback""#;
    let calls = |outcome: &str| {
        sample(
            &scrape,
            "retry_calls_total",
            &format!(r#"{scope},outcome="{outcome}""#),
        )
    };
    assert_eq!(calls("success"), Some(3.0), "{scrape}");
    assert_eq!(calls("not_retryable"), Some(1.0), "{scrape}");
    assert_eq!(calls("max_attempts"), Some(1.0), "{scrape}");
    assert_eq!(calls("quota_exhausted"), Some(0.0), "{scrape}");
    assert_eq!(sample(&scrape, "retry_attempts_total", scope), Some(8.0));
    let retries = sample(
        &scrape,
        "retry_retries_total",
        &format!(r#"{scope},reason="transient""#),
    );
    assert_eq!(retries, Some(3.0), "{scrape}");
    assert_eq!(
        sample(&scrape, "retry_attempts_per_call_count", scope),
        Some(5.0)
    );
    assert_eq!(
        sample(&scrape, "retry_attempts_per_call_sum", scope),
        Some(8.0)
    );
    assert_eq!(
        sample(&scrape, "retry_backoff_delay_seconds_count", scope),
        Some(3.0),
        "{scrape}"
    );
    let backoffs = sample(&scrape, "retry_backoff_delay_seconds_sum", scope).expect("recorded");
    assert!((backoffs - 0.004).abs() < 1e-9, "1 + 1 + 2 ms: {backoffs}");
    // The default quota is sized by the scope's traffic; the gauges show it as the retries
    // found it.
    assert_eq!(
        sample(&scrape, "retry_limiter_rate", scope),
        None,
        "standard mode has no send rate: {scrape}"
    );
    assert_eq!(
        sample(&scrape, "retry_limiter_wait_seconds_count", scope),
        None,
        "standard mode never waits for a send permit: {scrape}"
    );
    let level = sample(&scrape, "retry_quota_level", scope).expect("set on the retry path");
    let capacity = sample(&scrape, "retry_quota_capacity", scope).expect("set with the level");
    assert!(0.0 < capacity && level <= capacity, "{level} of {capacity}");
    let adaptive = r#"scope="metrics-adaptive""#;
    let rate = sample(&scrape, "retry_limiter_rate", adaptive).expect("set by the throttle");
    assert!(rate > 0.0, "{scrape}");
    let waits = sample(&scrape, "retry_limiter_wait_seconds_count", adaptive);
    assert!(waits.is_some_and(|waits| waits > 0.0), "{scrape}");
    for (name, strategy) in [
        ("metrics-fresh", &fresh),
        ("metrics-fresh-classic", &classic),
        ("metrics-adaptive-idle", &idle),
    ] {
        let scope = format!(r#"scope="{name}""#);
        let stats = strategy.scope().stats();
        assert_eq!(
            sample(&scrape, "retry_quota_level", &scope),
            Some(f64::from(stats.quota_level)),
            "{name}: {scrape}"
        );
        assert_eq!(
            sample(&scrape, "retry_quota_capacity", &scope),
            Some(f64::from(stats.quota_capacity)),
            "{name}: {scrape}"
        );
        // A young scope's quota is full (500 / 500 as this is written), not empty.
        assert!(
            stats.quota_level > 0 && stats.quota_level == stats.quota_capacity,
            "{name}: {stats:?}"
        );
        assert!(!stats.limiter.enabled, "{name}");
        assert_eq!(
            sample(&scrape, "retry_limiter_rate", &scope),
            None,
            "{name}: no send rate before the limiter engages: {scrape}"
        );
        assert_eq!(
            sample(&scrape, "retry_limiter_wait_seconds_count", &scope),
            None,
            "{name}: no permit waited for: {scrape}"
        );
    }
    let off = r#"scope="metrics-quota-off""#;
    assert_eq!(
        sample(&scrape, "retry_attempts_total", off),
        Some(2.0),
        "retried: {scrape}"
    );
    for gauge in ["retry_quota_level", "retry_quota_capacity"] {
        assert_eq!(
            sample(&scrape, gauge, off),
            None,
            "no quota, no quota gauges: {scrape}"
        );
    }
    assert!(
        scrape.contains("# HELP retry_calls_total"),
        "described: {scrape}"
    );
    assert!(
        !scrape.contains("metrics-before-the-recorder"),
        "no handles before the recorder: {scrape}"
    );
}
