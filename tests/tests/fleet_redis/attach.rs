//! Attaching a scope by name (issue 25 item 4: one configuration) and forgetting it (issue 28
//! item 5), on a real Redis: the scope's settings are those of its declaration, whether the
//! fleet attached the name before or after it; two declarations that disagree are an error in
//! either order, naming both; a scope only the fleet holds for its window is forgotten and no
//! longer synced; the fleet's metrics in a Prometheus scrape.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use retry_core::fleet::FleetStatus;
use retry_core::{RetryConfig, RetryInfo, RetrySafety, Scope, retryable, strategy_for};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};

use super::{
    COMMAND_TIMEOUT, ErrorKind, PATIENCE, attached, call, process, server, wait_for_status,
    wait_until,
};
use retry_core::{RetryReason, RetryStrategy};
use retry_tests::fleet_process::start_process;
use retry_tests::redis_server::{RedisServer, Resp};

#[derive(Debug, thiserror::Error)]
#[error("unavailable")]
struct Unavailable;

impl RetryInfo for Unavailable {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

#[retryable(
    scope = "fleet-attach-before",
    max_attempts = 5,
    initial_backoff = "1ms"
)]
async fn declared_after_attach() -> Result<(), Unavailable> {
    Ok(())
}

/// Attached before its declaration, the scope is made from the attribute's arguments (not
/// from the defaults, nor from anything the attach said), and synced with them: a process
/// whose private scope of that name has the default's settings conflicts with the store.
#[tokio::test]
async fn a_scope_attached_before_its_declaration_is_synced_with_the_declarations_settings() {
    let Some(server) = server(&[]) else { return };
    let fleet = process(&server.url(), 1).await;
    fleet.attach("fleet-attach-before").expect("attaches");
    assert!(
        fleet.scopes().is_empty(),
        "not declared yet: nothing to sync"
    );
    declared_after_attach().await.expect("served");
    let scope = Scope::lookup("fleet-attach-before").expect("declared by the first call");
    assert_eq!(
        scope.config().max_attempts(),
        5,
        "the attribute's max_attempts"
    );
    wait_until("the declared scope live", || {
        scope.stats().fleet.map(|stats| stats.status) == Some(FleetStatus::Live)
    })
    .await;
    assert_eq!(fleet.scopes(), ["fleet-attach-before"]);

    let other = process(&server.url(), 2).await;
    let defaults = attached(&other, "fleet-attach-before", &RetryConfig::default());
    wait_until("the other settings in conflict", || {
        defaults.scope().stats().fleet.map(|stats| stats.status) == Some(FleetStatus::Conflict)
    })
    .await;
    assert_eq!(
        scope.stats().fleet.map(|stats| stats.status),
        Some(FleetStatus::Live)
    );
}

/// The scripts the store ran since its statistics were reset (`EVALSHA` and `EVAL` calls).
fn scripts_run(server: &RedisServer) -> u64 {
    let Resp::Bulk(Some(info)) = server.command(&["INFO", "commandstats"]) else {
        panic!("INFO commandstats answers a bulk string");
    };
    info.lines()
        .filter(|line| line.starts_with("cmdstat_evalsha:") || line.starts_with("cmdstat_eval:"))
        .filter_map(|line| line.split("calls=").nth(1))
        .filter_map(|rest| rest.split(',').next()?.parse::<u64>().ok())
        .sum()
}

/// A name attached, then its scope declared before the sync task first ran (an application
/// attaches at start-up, and its client declares the scope): one sync reports the scope, not
/// two a few milliseconds apart. The attach's wake-up was kept for the sync task while that
/// sync covered the attach, and woke it again at once: the store took the second report, of
/// no traffic, for a sync interval's, and a cold fleet's first estimate (the reports of its
/// first traffic counted per report) fell with it: on a real clock 1-9 % of the limit
/// (`docs/fleet-harness.md`, section Y).
#[tokio::test]
async fn an_attach_the_sync_task_covered_does_not_wake_it_again() {
    let Some(server) = server(&[]) else { return };
    let fleet = start_process(&server.url(), 1, Duration::from_secs(30), COMMAND_TIMEOUT).await;
    server.command(&["CONFIG", "RESETSTAT"]);
    fleet.attach("fleet-attach-once").expect("attaches");
    let strategy = strategy_for(RetryConfig::default(), "fleet-attach-once");
    wait_until("the scope live", || {
        strategy.scope().stats().fleet.map(|stats| stats.status) == Some(FleetStatus::Live)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        scripts_run(&server),
        1,
        "one sync reported the attached scope"
    );
}

/// A call that fails once, is retried and succeeds (decided by the strategy alone): whether
/// the retry was granted.
fn retried_once(strategy: &impl RetryStrategy) -> bool {
    let token = strategy.acquire_initial_token();
    match strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Transient)) {
        Ok(token) => {
            strategy.record_success(token);
            true
        }
        Err(_) => false,
    }
}

/// A subscriber keeping the message of every ERROR event.
#[derive(Clone, Default)]
struct Errors(Arc<Mutex<Vec<String>>>);

impl Errors {
    fn seen(&self) -> Vec<String> {
        self.0.lock().expect("not poisoned").clone()
    }
}

struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            self.0 = format!("{value:?}");
        }
    }
}

impl Subscriber for Errors {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() == Level::ERROR
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut message = Message(String::new());
        event.record(&mut message);
        self.0.lock().expect("not poisoned").push(message.0);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[retryable(scope = "fleet-conflict-attribute-first", max_attempts = 5)]
async fn attribute_first() -> Result<(), Unavailable> {
    Ok(())
}

#[retryable(scope = "fleet-conflict-attribute-second", max_attempts = 5)]
async fn attribute_second() -> Result<(), Unavailable> {
    Ok(())
}

/// Two declarations of one scope that disagree on its settings: whichever comes first, the
/// second is an ERROR event naming both (the attribute's place and `strategy_for`'s) and the
/// settings; the scope, and the fleet, keep the first one's.
#[tokio::test]
async fn two_declarations_that_disagree_are_an_error_in_either_order() {
    let Some(server) = server(&[]) else { return };
    let fleet = process(&server.url(), 1).await;
    let errors = Errors::default();
    let _guard = tracing::subscriber::set_default(errors.clone());

    // The attribute first, then `strategy_for` with the defaults (3 attempts).
    fleet
        .attach("fleet-conflict-attribute-first")
        .expect("attaches");
    attribute_first().await.expect("served");
    let strategy = strategy_for(RetryConfig::default(), "fleet-conflict-attribute-first");
    let seen = errors.seen();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].contains("\"fleet-conflict-attribute-first\""),
        "{}",
        seen[0]
    );
    assert!(seen[0].contains("(max_attempts)"), "{}", seen[0]);
    assert!(
        seen[0].contains("first by #[retryable] at tests/tests/fleet_redis/attach.rs:"),
        "{}",
        seen[0]
    );
    assert!(
        seen[0].contains("then by strategy_for at tests/tests/fleet_redis/attach.rs:"),
        "{}",
        seen[0]
    );
    assert_eq!(
        strategy.scope().config().max_attempts(),
        5,
        "the first declaration's"
    );
    // Declared again and again from one place (a strategy per request): logged once.
    for _ in 0..3 {
        drop(strategy_for(
            RetryConfig::default(),
            "fleet-conflict-attribute-first",
        ));
    }
    assert_eq!(errors.seen().len(), 2, "the loop's place, once");

    // `strategy_for` first, then the attribute's first call.
    let held = strategy_for(RetryConfig::default(), "fleet-conflict-attribute-second");
    fleet
        .attach("fleet-conflict-attribute-second")
        .expect("attaches");
    attribute_second().await.expect("served");
    let seen = errors.seen();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(
        seen[2].contains("first by strategy_for at tests/tests/fleet_redis/attach.rs:"),
        "{}",
        seen[2]
    );
    assert!(
        seen[2].contains("then by #[retryable] at tests/tests/fleet_redis/attach.rs:"),
        "{}",
        seen[2]
    );
    assert_eq!(
        held.scope().config().max_attempts(),
        3,
        "the first declaration's"
    );
    wait_until("both synced", || fleet.scopes().len() == 2).await;
}

/// A scope the fleet alone holds is forgotten once idle for its window (here 300 ms): the fleet
/// stops syncing it and the registry forgets it; declared again, it is a new young scope, and
/// synced again.
#[tokio::test]
async fn a_scope_only_the_fleet_holds_is_forgotten_and_no_longer_synced() {
    let Some(server) = server(&[]) else { return };
    let fleet = process(&server.url(), 1).await;
    let config = RetryConfig::builder()
        .quota_window(Duration::from_millis(300))
        .build()
        .expect("valid");
    let kept = strategy_for(config.clone(), "fleet-forget-kept");
    let strategy = strategy_for(config.clone(), "fleet-forget-dropped");
    fleet.attach("fleet-forget-kept").expect("attaches");
    fleet.attach("fleet-forget-dropped").expect("attaches");
    for held in [&kept, &strategy] {
        wait_until("live", || {
            held.scope().stats().fleet.map(|stats| stats.status) == Some(FleetStatus::Live)
        })
        .await;
        assert!(retried_once(held), "a retry paid");
    }
    let old = strategy.scope().stats();
    assert_eq!(old.retries, 1);
    drop(strategy);
    assert!(
        Scope::lookup("fleet-forget-dropped").is_some(),
        "held by the fleet"
    );
    wait_until("the dropped scope forgotten", || {
        fleet.scopes() == ["fleet-forget-kept"] && Scope::lookup("fleet-forget-dropped").is_none()
    })
    .await;
    assert_eq!(
        kept.scope().stats().fleet.map(|stats| stats.status),
        Some(FleetStatus::Live)
    );

    let again = strategy_for(config, "fleet-forget-dropped");
    assert_eq!(again.scope().stats().retries, 0, "a new young scope");
    wait_until("declared again, synced again", || fleet.scopes().len() == 2).await;
}

/// The value of the Prometheus sample `name{labels}` in `scrape`.
fn sample(scrape: &str, name: &str, labels: &str) -> Option<f64> {
    let prefix = format!("{name}{{{labels}}} ");
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|value| value.parse().ok())
}

/// Scrapes the exporter at `addr` over HTTP until `done` holds for the scrape; panics naming
/// `what` after the suite's patience. The last scrape.
async fn scrape_until(addr: SocketAddr, what: &str, done: impl Fn(&str) -> bool) -> String {
    let start = std::time::Instant::now();
    loop {
        let text = reqwest::get(format!("http://{addr}/metrics"))
            .await
            .expect("the exporter answers")
            .text()
            .await
            .expect("a scrape");
        if done(&text) {
            return text;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "not {what} within {PATIENCE:?}: {text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Fleet mode's metrics in a real Prometheus scrape (the exporter's HTTP listener on loopback):
/// a live scope's status, lease tokens, processes and syncs; once throttles engaged the fleet
/// limiter, the fleet's rate and this process's share; with the store gone, failed syncs and
/// the fallback.
#[tokio::test]
async fn a_prometheus_scrape_shows_each_fleet_scopes_status_lease_rate_share_and_syncs() {
    let Some(mut server) = server(&[]) else {
        return;
    };
    let addr = examples::refused_addr()
        .await
        .expect("a free loopback port");
    let (recorder, exporter) = metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_recommended_naming(true)
        .with_http_listener(addr)
        .build()
        .expect("the exporter builds");
    tokio::spawn(exporter);
    let fleet = process(&server.url(), 1).await;
    let config = RetryConfig::builder()
        .mode(retry_core::RetryMode::Adaptive)
        .build()
        .expect("valid");
    // The fleet scope's handles are made when the fleet links it, under this test's recorder
    // (the binary's other tests record into none).
    let strategy =
        metrics::with_local_recorder(&recorder, || attached(&fleet, "fleet-metrics", &config));
    wait_for_status(&strategy, FleetStatus::Live).await;
    // The exporter's order: the scope, then the metric's own label.
    let labels = |extra: &str| format!("scope=\"fleet-metrics\"{extra}");
    let text = scrape_until(addr, "a lease in the scrape", |text| {
        sample(
            text,
            "retry_fleet_syncs_total",
            &labels(",result=\"lease\""),
        )
        .is_some_and(|syncs| syncs >= 1.0)
            && sample(text, "retry_fleet_status", &labels(",status=\"live\"")) == Some(1.0)
    })
    .await;
    assert_eq!(
        sample(
            &text,
            "retry_fleet_status",
            &labels(",status=\"connecting\"")
        ),
        Some(0.0)
    );
    assert_eq!(
        sample(&text, "retry_fleet_processes", &labels("")),
        Some(1.0)
    );
    let tokens = sample(&text, "retry_fleet_lease_tokens", &labels("")).expect("a gauge");
    assert!(tokens > 0.0, "the young fleet's tokens: {tokens}");
    assert_eq!(
        sample(&text, "retry_fleet_rate", &labels("")),
        Some(0.0),
        "not engaged"
    );
    assert!(
        text.contains("# HELP retry_fleet_syncs_total"),
        "described: {text}"
    );

    // Throttles engage the fleet limiter: the fleet's rate and this process's share.
    for i in 0..200 {
        let kind = if i % 10 == 0 {
            ErrorKind::Throttling
        } else {
            ErrorKind::Transient
        };
        call(&strategy, u32::from(i % 10 == 0), kind);
    }
    scrape_until(addr, "the fleet's rate and share in the scrape", |text| {
        let rate = sample(text, "retry_fleet_rate", &labels("")).unwrap_or(0.0);
        let share = sample(text, "retry_fleet_share", &labels("")).unwrap_or(0.0);
        rate > 0.0 && share > 0.0 && share <= rate
    })
    .await;

    // The store gone: failed syncs, then the fallback.
    server.kill();
    scrape_until(
        addr,
        "failed syncs and the fallback in the scrape",
        |text| {
            sample(
                text,
                "retry_fleet_syncs_total",
                &labels(",result=\"failed\""),
            )
            .is_some_and(|failed| failed >= 1.0)
                && sample(text, "retry_fleet_status", &labels(",status=\"fallback\"")) == Some(1.0)
                && sample(text, "retry_fleet_status", &labels(",status=\"live\"")) == Some(0.0)
        },
    )
    .await;
}

/// Processes that attach together (a deploy) sync in step at their attach; the sync after it
/// comes at a random point of half an interval to one and a half, not ±10 % of one, so that
/// their next syncs spread over an interval at once instead of drifting apart for dozens of
/// intervals. Sixteen processes syncing every second: their second syncs' spread is over
/// 0.4 s (at ±10 % it is at most 0.2 s; drawn from [0.5, 1.5] s it is under 0.4 s about once
/// in 100,000 runs).
#[tokio::test]
async fn processes_attached_together_spread_their_second_syncs_over_an_interval() {
    const PROCESSES: u64 = 16;
    let Some(server) = server(&[]) else { return };
    let mut fleets = Vec::new();
    for id in 1..=PROCESSES {
        fleets
            .push(start_process(&server.url(), id, Duration::from_secs(1), COMMAND_TIMEOUT).await);
    }
    let strategies: Vec<_> = (1..=PROCESSES)
        .zip(&fleets)
        .map(|(id, fleet)| {
            let name = format!("fleet-attach-spread-{id}");
            fleet.attach(&name).expect("attaches");
            strategy_for(RetryConfig::default(), &name)
        })
        .collect();
    let mut syncs = vec![Vec::<std::time::Instant>::new(); strategies.len()];
    let until = std::time::Instant::now() + Duration::from_millis(1_800);
    while std::time::Instant::now() < until {
        for (strategy, starts) in strategies.iter().zip(&mut syncs) {
            let age = strategy
                .scope()
                .stats()
                .fleet
                .and_then(|stats| stats.last_sync_age);
            let Some(start) = age.and_then(|age| std::time::Instant::now().checked_sub(age)) else {
                continue;
            };
            if starts
                .last()
                .is_none_or(|last| start > *last + Duration::from_millis(100))
            {
                starts.push(start);
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let second: Vec<std::time::Instant> = syncs
        .iter()
        .map(|starts| *starts.get(1).expect("each process synced twice"))
        .collect();
    let (Some(first), Some(last)) = (second.iter().min(), second.iter().max()) else {
        panic!("no processes");
    };
    assert!(
        *last - *first > Duration::from_millis(400),
        "the second syncs within {:?} of each other",
        *last - *first
    );
}
