//! Fleet scopes on a real Redis: several processes (a `Fleet` each, with private scopes) share
//! the young fleet's tokens, spend them and give them back; an engaged fleet paces each process
//! at its share; a scope calls already use is upgraded in place.

use std::sync::atomic::{AtomicU32, Ordering};

use retry_core::fleet::{FleetError, FleetStatus};
use retry_core::{RetryConfig, RetryInfo, RetryMode, RetrySafety, Scope, retryable, strategy_for};

use super::{
    ErrorKind, attached, attached_old, call, failed_call, fleet_stats, process, scraped, server,
    wait_for_status, wait_until,
};

/// Scopes older than their window (a young one keeps the young scope's 500 whatever the
/// lease: see `young_processes_each_keep_the_young_scopes_quota`), so that what each holds is
/// what the store leases it.
#[tokio::test]
async fn processes_share_the_fleets_tokens_spend_them_and_give_them_back() {
    let Some(server) = server(&[]) else { return };
    let config = RetryConfig::default();
    let (one, two) = (
        process(&server.url(), 1).await,
        process(&server.url(), 2).await,
    );
    let first = attached_old(&one, "inventory", &config);
    wait_for_status(&first, FleetStatus::Live).await;
    let second = attached_old(&two, "inventory", &config);
    wait_for_status(&second, FleetStatus::Live).await;
    let level = |strategy: &retry_core::StandardStrategy| strategy.scope().quota().level();
    // The young fleet's 500 tokens, shared fairly; never more than the fleet's cap in all.
    wait_until("a fair share each", || {
        (level(&first), level(&second)) == (250, 250)
    })
    .await;
    assert_eq!(fleet_stats(&first).live_processes, 2);
    assert!(level(&first) + level(&second) <= 500);

    // The second process's calls fail and retry: it spends its tokens and asks for more; the
    // fleet moves tokens to it from the first, which has no demand.
    for _ in 0..10 {
        failed_call(&second);
    }
    let spent = level(&second);
    assert_eq!(spent, 250 - 10 * 14, "10 failed calls paid one retry each");
    wait_until("the first gives back and the second gets more", || {
        level(&first) < 250 && level(&second) > spent
    })
    .await;
    assert!(level(&first) + level(&second) <= fleet_stats(&first).fleet_cap as u32);
}

/// Issue 25 item 3: a process starting cold has at least local mode's young-scope quota. The
/// second process joins a fleet whose pool the first holds: the store asks it for its young
/// scope's 500 (it cannot account for them), and it keeps them while younger than its window.
#[tokio::test]
async fn young_processes_each_keep_the_young_scopes_quota() {
    let Some(server) = server(&[]) else { return };
    let config = RetryConfig::default();
    let (one, two) = (
        process(&server.url(), 1).await,
        process(&server.url(), 2).await,
    );
    let first = attached(&one, "inventory", &config);
    wait_for_status(&first, FleetStatus::Live).await;
    let second = attached(&two, "inventory", &config);
    wait_for_status(&second, FleetStatus::Live).await;
    wait_until("both leases counting two processes", || {
        fleet_stats(&first).live_processes == 2 && fleet_stats(&second).live_processes == 2
    })
    .await;
    let level = |strategy: &retry_core::StandardStrategy| strategy.scope().quota().level();
    assert_eq!((level(&first), level(&second)), (500, 500));
    // Every retry local mode grants a young scope: 35 calls failing once, 14 tokens each.
    for _ in 0..35 {
        failed_call(&second);
    }
    assert_eq!(level(&second), 500 - 35 * 14);
}

#[tokio::test]
async fn an_engaged_fleet_paces_each_process_at_its_share() {
    let Some(server) = server(&[]) else { return };
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid");
    let (one, two) = (
        process(&server.url(), 1).await,
        process(&server.url(), 2).await,
    );
    let busy = attached(&one, "api", &config);
    let idle = attached(&two, "api", &config);
    wait_for_status(&busy, FleetStatus::Live).await;
    wait_for_status(&idle, FleetStatus::Live).await;
    // The busy process sends 200 attempts, one in ten throttled.
    for i in 0..200 {
        if i % 10 == 0 {
            call(&busy, 1, ErrorKind::Throttling);
        } else {
            call(&busy, 0, ErrorKind::Transient);
        }
    }
    wait_until("the fleet limiter engaged for both", || {
        fleet_stats(&busy).send_rate.is_some() && fleet_stats(&idle).send_rate.is_some()
    })
    .await;
    // Each limiter sends at its share of the fleet's rate: the idle one has none, the floor
    // (0.5/s, or the fleet's rate over its processes if less: once the busy process stops,
    // the fleet's rate falls to its own floor of 0.5/s, and the two floors stay within it).
    wait_until("the idle process at the floor", || {
        let stats = fleet_stats(&idle);
        let (Some(rate), Some(fleet_rate)) = (stats.send_rate, stats.fleet_rate) else {
            return false;
        };
        let floor = (fleet_rate / stats.live_processes.max(1) as f64).min(0.5);
        rate == floor && idle.scope().limiter().stats().fill_rate == rate
    })
    .await;
    let stats = fleet_stats(&busy);
    let fleet_rate = stats.fleet_rate.expect("engaged");
    let share = stats.send_rate.expect("engaged");
    assert!(share <= fleet_rate, "{stats:?}");
    assert!(busy.scope().limiter().stats().enabled);
}

#[derive(Debug)]
struct Unavailable;

impl RetryInfo for Unavailable {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

static FAILURES: AtomicU32 = AtomicU32::new(0);

#[retryable(scope = "fleet-tests-upgrade", initial_backoff = "1ms")]
async fn stock() -> Result<u32, Unavailable> {
    if FAILURES.load(Ordering::Relaxed) > 0 {
        FAILURES.fetch_sub(1, Ordering::Relaxed);
        return Err(Unavailable);
    }
    Ok(7)
}

/// The configuration `stock`'s attribute makes its scope from.
fn stock_config() -> RetryConfig {
    RetryConfig::builder()
        .initial_backoff(std::time::Duration::from_millis(1))
        .build()
        .expect("valid")
}

#[tokio::test]
async fn a_scope_calls_already_use_is_upgraded_in_place() {
    let Some(server) = server(&[]) else { return };
    // Calls use the scope before the fleet is there.
    assert_eq!(stock().await.expect("served"), 7);
    let before = Scope::lookup("fleet-tests-upgrade").expect("made by the first call");
    assert!(before.stats().fleet.is_none());

    let fleet = process(&server.url(), 1).await;
    fleet.attach("fleet-tests-upgrade").expect("attaches");
    assert_eq!(fleet.scopes(), ["fleet-tests-upgrade"], "linked at once");
    let again = fleet
        .attach("fleet-tests-upgrade")
        .expect_err("attached once");
    assert!(
        matches!(again, FleetError::AlreadyAttached { .. }),
        "{again}"
    );
    let strategy = strategy_for(stock_config(), "fleet-tests-upgrade");
    assert!(strategy.scope().same_as(&before));
    wait_until("the upgraded scope live", || {
        before.stats().fleet.map(|stats| stats.status) == Some(FleetStatus::Live)
    })
    .await;
    // The attribute's calls now go through the fleet scope: a retry is paid from the lease.
    FAILURES.store(1, Ordering::Relaxed);
    let retries = before.stats().retries;
    assert_eq!(stock().await.expect("served on the retry"), 7);
    assert_eq!(before.stats().retries, retries + 1);
}

/// The `metrics` feature's quota gauges of a fleet scope say what its retries find, as its
/// stats do: the lease, not the local traffic rules the lease lifts.
#[tokio::test]
async fn a_fleet_scopes_quota_gauges_show_its_lease() {
    let Some(server) = server(&[]) else { return };
    let config = RetryConfig::default();
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let scrape = recorder.handle();
    let fleet = process(&server.url(), 1).await;
    // The scope's metric handles are made with it, under this test's recorder.
    let strategy =
        metrics::with_local_recorder(&recorder, || attached(&fleet, "fleet-gauges", &config));
    wait_for_status(&strategy, FleetStatus::Live).await;
    failed_call(&strategy); // a retry granted: the gauges are set
    let stats = strategy.scope().stats();
    let gauge = |name: &str| {
        scraped(&scrape, name, &["scope=\"fleet-gauges\""])
            .unwrap_or_else(|| panic!("{name} in {}", scrape.render()))
    };
    assert_eq!(
        gauge("retry_quota_capacity"),
        f64::from(stats.quota_capacity)
    );
    assert_eq!(gauge("retry_quota_level"), f64::from(stats.quota_level));
}
