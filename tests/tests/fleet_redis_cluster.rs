//! Fleet mode on a real Redis Cluster of the test's own (6 `redis-server` processes on free
//! ports of 127.0.0.1, 3 masters and 3 replicas, made by `redis-cli --cluster create`, killed by
//! their PIDs): a fleet goes live through a `redis-cluster://` URL and through seed nodes, its
//! scopes spread over the masters; a process syncs them in one pipeline per master; a master
//! killed mid-run (its replica promoted) and a slot migrated mid-run are survived as a flushed
//! or restarted store is: calls carry on, no burst, every lease live again; a least-privileged
//! ACL user runs the fleet. Without `redis-server` or `redis-cli` these tests pass after one line
//! saying they were skipped; with `RETRY_REQUIRE_REDIS=1` they fail instead.
//!
//! A test binary of its own, its tests one at a time: six servers each, and the cluster's own
//! timing (a failover takes 1.5-2 s), kept apart from the single-node tests'.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use retry_core::fleet::keys::ScopeKeys;
use retry_core::fleet::protocol::{ProcessId, Report, Settings};
use retry_core::fleet::redis::{RedisStore, StoreOptions};
use retry_core::fleet::{Fleet, FleetErrorKind, FleetStatus};
use retry_core::{ErrorKind, RetryConfig, RetryReason, RetryStrategy, StandardStrategy, retry};
use retry_tests::fleet_acl::{assert_only_client_setinfo_refused, least_privileged_user};
use retry_tests::fleet_process::{self, attached, attached_old, fleet_stats};
use retry_tests::redis_cluster::RedisCluster;
use retry_tests::redis_server::Resp;
use tokio::sync::{Mutex, MutexGuard};

/// The tests the skip line names.
const SUITE: &str = "tests/tests/fleet_redis_cluster.rs (fleet mode on a Redis Cluster)";

/// The sync interval: short, so that a test lasts a few intervals beside a failover's seconds.
const INTERVAL: Duration = Duration::from_millis(200);

/// The command (and connection) timeout: a cluster's connection reads the slots and connects
/// to every master.
const COMMAND_TIMEOUT: Duration = Duration::from_millis(100);

/// The longest a test waits for the fleet to get where it should.
const PATIENCE: Duration = Duration::from_secs(20);

/// Calls made (and timed) during a fault.
const CALLS: usize = 200;

/// One cluster at a time: six servers per test on a 2-core machine.
static ONE_AT_A_TIME: Mutex<()> = Mutex::const_new(());

/// A cluster of the test's own and the guard that runs the tests one at a time, or `None` when
/// Redis is not installed.
async fn cluster() -> Option<(RedisCluster, MutexGuard<'static, ()>)> {
    let guard = ONE_AT_A_TIME.lock().await;
    let cluster = tokio::task::spawn_blocking(|| RedisCluster::start(SUITE, &[]))
        .await
        .expect("the cluster starts")?;
    Some((cluster, guard))
}

/// A "process": a `Fleet` on `url` with the tests' timing, as process `id`.
async fn process(url: &str, id: u64) -> Fleet {
    fleet_process::start_process(url, id, INTERVAL, COMMAND_TIMEOUT).await
}

/// Waits until `done` holds, at most [`PATIENCE`]; returns how long it took.
async fn wait_until(what: &str, done: impl FnMut() -> bool) -> Duration {
    fleet_process::wait_until(what, PATIENCE, done).await
}

/// Makes [`CALLS`] calls on `strategy` while the store is in `fault`, half first-try successes
/// through `retry_core::retry`, half retry decisions: all complete; prints their latencies.
async fn calls_carry_on(strategy: &StandardStrategy, fault: &str) {
    let mut latencies = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let start = Instant::now();
        if i % 2 == 0 {
            let served = retry(strategy, || async { Ok::<u32, io::Error>(1) }).await;
            assert_eq!(served.expect("a first-try success"), 1);
        } else {
            let token = strategy.acquire_initial_token();
            let reason = RetryReason::error(ErrorKind::Transient);
            if let Ok(token) = strategy.refresh_retry_token(token, &reason) {
                strategy.record_success(token);
            }
        }
        latencies.push(start.elapsed());
    }
    latencies.sort();
    let at = |fraction: f64| latencies[((latencies.len() - 1) as f64 * fraction) as usize];
    println!(
        "call latency during {fault}: p50 {:?}, p99 {:?}, max {:?} ({CALLS} calls)",
        at(0.5),
        at(0.99),
        at(1.0)
    );
}

/// Two processes with a live scope `orders` each, their tokens settled (the young fleet's 500
/// in two fair shares). The scopes are older than their window, so that what they hold is
/// what the store leases them (a young scope keeps the young scope's 500 whatever the lease).
async fn live_pair(url: &str) -> (Fleet, Fleet, StandardStrategy, StandardStrategy) {
    let config = RetryConfig::default();
    let (one, two) = (process(url, 1).await, process(url, 2).await);
    let first = attached_old(&one, "orders", &config);
    let second = attached_old(&two, "orders", &config);
    wait_until("a fair share each", || {
        fleet_stats(&first).status == FleetStatus::Live
            && fleet_stats(&second).status == FleetStatus::Live
            && first.scope().quota().level() == 250
            && second.scope().quota().level() == 250
    })
    .await;
    (one, two, first, second)
}

/// Both scopes' quota levels.
fn levels(first: &StandardStrategy, second: &StandardStrategy) -> u32 {
    first.scope().quota().level() + second.scope().quota().level()
}

/// The store's timeouts for the tests that drive it directly.
fn options() -> StoreOptions {
    StoreOptions {
        connect_timeout: Duration::from_secs(1),
        command_timeout: Duration::from_millis(500),
        reconnect_base: Duration::from_millis(10),
        reconnect_max: Duration::from_millis(100),
    }
}

/// The index of `key`'s master.
fn master_of_key(cluster: &RedisCluster, key: &str) -> usize {
    cluster.master_of(cluster.slot_of(key))
}

/// `count` scope names whose keys live on master `index` (`orders` among them if it does).
fn names_on(cluster: &RedisCluster, index: usize, count: usize) -> Vec<String> {
    (0..)
        .map(|n| format!("scope-{n}"))
        .filter(|name| master_of_key(cluster, &state_key(name)) == index)
        .take(count)
        .collect()
}

fn state_key(scope: &str) -> String {
    ScopeKeys::new("retry:", scope)
        .expect("valid")
        .state()
        .to_owned()
}

/// Whether the scope is live and its last sync began within the last interval (jittered by up
/// to 10 %) and the sync's own time.
fn fresh(strategy: &StandardStrategy) -> bool {
    let stats = fleet_stats(strategy);
    stats.status == FleetStatus::Live
        && stats
            .last_sync_age
            .is_some_and(|age| age < INTERVAL.mul_f64(1.1) + COMMAND_TIMEOUT)
}

/// Runs blocking cluster work (a failover's wait, a migration) off the test's runtime, so that
/// the fleets' sync tasks run meanwhile.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(work)
        .await
        .expect("the cluster work finished")
}

#[tokio::test]
async fn a_fleet_goes_live_on_a_cluster_by_url_and_by_seed_nodes() {
    let Some((cluster, _guard)) = cluster().await else {
        return;
    };
    let config = RetryConfig::default();
    let by_url = process(&cluster.url(), 1).await;
    let by_seeds = Fleet::connect_cluster(cluster.seed_urls())
        .expect("seed nodes")
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .process_id(ProcessId(2))
        .start()
        .await
        .expect("starts");
    assert!(
        by_url.url().starts_with("redis-cluster://127.0.0.1:"),
        "{}",
        by_url.url()
    );
    // Scopes on every master, attached by both processes.
    let names: Vec<String> = cluster
        .masters()
        .into_iter()
        .flat_map(|master| names_on(&cluster, master, 2))
        .collect();
    assert_eq!(names.len(), 6, "two scopes on each of 3 masters");
    let strategies: Vec<StandardStrategy> = names
        .iter()
        .flat_map(|name| {
            [
                attached(&by_url, name, &config),
                attached(&by_seeds, name, &config),
            ]
        })
        .collect();
    wait_until("every scope live, counting both", || {
        strategies.iter().all(|strategy| {
            let stats = fleet_stats(strategy);
            stats.status == FleetStatus::Live && stats.live_processes == 2
        })
    })
    .await;
    // Each scope's keys are on the master of its slot.
    for name in &names {
        let key = state_key(name);
        let master = master_of_key(&cluster, &key);
        assert_eq!(
            cluster.command(master, &["EXISTS", &key]),
            Resp::Int(1),
            "{name}"
        );
    }
}

/// `total_reads_processed` of node `index` (`INFO stats`): every read of a client's socket.
fn reads(cluster: &RedisCluster, index: usize) -> u64 {
    let Resp::Bulk(Some(info)) = cluster.command(index, &["INFO", "stats"]) else {
        panic!("INFO stats");
    };
    info.lines()
        .find_map(|line| line.strip_prefix("total_reads_processed:"))
        .and_then(|value| value.trim().parse().ok())
        .expect("total_reads_processed")
}

#[tokio::test]
async fn a_process_syncs_its_scopes_in_one_pipeline_per_master() {
    let Some((cluster, _guard)) = cluster().await else {
        return;
    };
    let store = RedisStore::open(&cluster.url(), options()).expect("a cluster URL");
    store.load_script().await.expect("loads");
    // 30 scopes, about 10 on each master.
    let keys: Vec<ScopeKeys> = (0..30)
        .map(|n| ScopeKeys::new("retry:", &format!("many-{n}")).expect("valid"))
        .collect();
    let settings = Settings::example();
    let syncs = 20;
    let masters = cluster.masters();
    // A first sync reads the slot map; the counts start after it.
    let mut now_ms = 1_700_000_000_000;
    let sync = |now_ms: u64| {
        let reports: Vec<Report> = (0..keys.len())
            .map(|_| Report {
                process: ProcessId(7),
                now_ms,
                ..Report::default()
            })
            .collect();
        let store = &store;
        let keys = &keys;
        async move {
            let batch: Vec<(&ScopeKeys, &Settings, &Report)> = keys
                .iter()
                .zip(&reports)
                .map(|(keys, report)| (keys, &settings, report))
                .collect();
            let results = store.sync_many(&batch).await.expect("connected");
            for result in results {
                result.expect("a lease");
            }
        }
    };
    sync(now_ms).await;
    let before: Vec<u64> = masters
        .iter()
        .map(|&index| reads(&cluster, index))
        .collect();
    for _ in 0..syncs {
        now_ms += 1_000;
        sync(now_ms).await;
    }
    for (&index, before) in masters.iter().zip(before) {
        // Less the INFO that read it.
        let per_sync = (reads(&cluster, index) - before - 1) as f64 / f64::from(syncs);
        let scopes = keys
            .iter()
            .filter(|keys| master_of_key(&cluster, keys.state()) == index)
            .count();
        println!("master {index}: {scopes} scopes, {per_sync:.2} reads per sync");
        assert!(scopes >= 3, "the scopes spread over the masters");
        assert!(
            per_sync <= 1.5,
            "{per_sync} reads per sync for {scopes} scopes"
        );
    }
}

/// Scopes of `one` and `two` whose keys are on master `index` (`count` names each).
async fn neighbours(
    cluster: &RedisCluster,
    index: usize,
    count: usize,
    one: &Fleet,
    two: &Fleet,
) -> Vec<StandardStrategy> {
    let config = RetryConfig::default();
    let neighbours: Vec<StandardStrategy> = names_on(cluster, index, count)
        .iter()
        .flat_map(|name| [attached(one, name, &config), attached(two, name, &config)])
        .collect();
    wait_until("the neighbours live", || {
        neighbours
            .iter()
            .all(|strategy| fleet_stats(strategy).status == FleetStatus::Live)
    })
    .await;
    neighbours
}

/// Waits `intervals` sync intervals, then checks that no pipeline of `strategies` was refused
/// in them (the scopes share pipelines again, and those work) and that they are live.
async fn no_refused_pipeline_for(intervals: u32, strategies: &[&StandardStrategy]) {
    tokio::time::sleep(INTERVAL * intervals).await;
    for strategy in strategies {
        let stats = fleet_stats(strategy);
        assert!(fresh(strategy), "{stats:?}");
        let refused_lately = stats.last_error == Some(FleetErrorKind::Server)
            && stats
                .last_error_age
                .is_some_and(|age| age < INTERVAL * (intervals - 1));
        assert!(!refused_lately, "a pipeline was refused lately: {stats:?}");
    }
}

#[tokio::test]
async fn a_master_killed_mid_run_fails_over_without_a_burst_and_the_leases_come_back() {
    let Some((cluster, _guard)) = cluster().await else {
        return;
    };
    let (one, two, first, second) = live_pair(&cluster.url()).await;
    let slot = cluster.slot_of(&state_key("orders"));
    let master = cluster.master_of(slot);
    // More scopes on the same master, so that `orders` shares its pipeline.
    let neighbours = neighbours(&cluster, master, 4, &one, &two).await;
    cluster.wait_replicated(master);
    let before = levels(&first, &second);
    let first = Arc::new(first);

    // The master dies; the cluster promotes its replica. Calls go on meanwhile.
    let failover = blocking(move || {
        let mut cluster = cluster;
        let promoted = cluster.fail_over(slot);
        (cluster, promoted, Instant::now())
    });
    let calls = {
        let first = Arc::clone(&first);
        async move { calls_carry_on(&first, "a cluster failover").await }
    };
    let ((cluster, promoted, settled), ()) = tokio::join!(failover, calls);
    assert_ne!(promoted, master);
    let took = wait_until("every scope live on the promoted master", || {
        fresh(&first) && fresh(&second) && neighbours.iter().all(fresh)
    })
    .await;
    println!(
        "every lease live {took:?} after the cluster settled on the promoted master (interval \
         {INTERVAL:?}; {:?} since)",
        settled.elapsed()
    );
    let rewards = u32::try_from(CALLS / 2).expect("small");
    assert!(
        levels(&first, &second) <= before + rewards,
        "a burst after the failover"
    );
    // The scope's state is on the promoted master (replicated, or re-learned).
    assert_eq!(
        cluster.command(promoted, &["EXISTS", &state_key("orders")]),
        Resp::Int(1)
    );
    let mut all: Vec<&StandardStrategy> = neighbours.iter().collect();
    all.extend([&*first, &second]);
    no_refused_pipeline_for(10, &all).await;
}

#[tokio::test]
async fn a_slot_migrated_mid_run_keeps_its_scopes_syncing_without_a_burst() {
    let Some((cluster, _guard)) = cluster().await else {
        return;
    };
    let (one, two, first, second) = live_pair(&cluster.url()).await;
    // More scopes on the same master, so that `orders` shares its pipeline.
    let slot = cluster.slot_of(&state_key("orders"));
    let source = cluster.master_of(slot);
    let neighbours = neighbours(&cluster, source, 4, &one, &two).await;
    let before = levels(&first, &second);
    let target = cluster
        .masters()
        .into_iter()
        .find(|&index| index != source)
        .expect("another master");

    // The slot migrates: IMPORTING/MIGRATING for a few intervals with its keys on the source,
    // then with its keys on the target (the source answers ASK), then moved (MOVED).
    let cluster = blocking(move || {
        cluster.migrate_slot(slot, target, || std::thread::sleep(5 * INTERVAL));
        cluster
    })
    .await;
    let first = Arc::new(first);
    calls_carry_on(&first, "a slot migration").await;
    let took = wait_until("every scope live and syncing", || {
        fresh(&first) && fresh(&second) && neighbours.iter().all(fresh)
    })
    .await;
    println!("every scope fresh {took:?} after the migration ended (interval {INTERVAL:?})");
    let rewards = u32::try_from(CALLS / 2).expect("small");
    assert!(
        levels(&first, &second) <= before + rewards,
        "a burst after the migration"
    );
    let key = state_key("orders");
    assert_eq!(cluster.command(target, &["EXISTS", &key]), Resp::Int(1));
    assert_eq!(cluster.master_of(slot), target);
    let mut all: Vec<&StandardStrategy> = neighbours.iter().collect();
    all.extend([&*first, &second]);
    no_refused_pipeline_for(10, &all).await;
}

#[tokio::test]
async fn a_fleet_runs_as_a_user_allowed_only_scripts_on_its_keys_on_every_node() {
    let Some((cluster, _guard)) = cluster().await else {
        return;
    };
    // The cluster client reads the slots with CLUSTER SLOTS: the one command it adds.
    let user = least_privileged_user("fleet", "shop:", &["+cluster|slots"]);
    let user: Vec<&str> = user.iter().map(String::as_str).collect();
    for reply in cluster.on_every_node(&user) {
        assert_eq!(reply, Resp::Status("OK".into()));
    }
    let url = cluster
        .url()
        .replacen("redis-cluster://", "redis-cluster://fleet:pw@", 1);
    let fleet = Fleet::connect(&url)
        .expect("a cluster URL")
        .prefix("shop:")
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .start()
        .await
        .expect("starts as the least-privileged user");
    let config = RetryConfig::default();
    let strategies: Vec<StandardStrategy> = (0..9)
        .map(|n| attached(&fleet, &format!("shop-{n}"), &config))
        .collect();
    wait_until("every scope live", || strategies.iter().all(fresh)).await;
    assert_eq!(fleet.last_error(), None);
    assert_only_client_setinfo_refused(&cluster.on_every_node(&["ACL", "LOG"]));
}
