//! Fleet scopes through the store's faults: Redis killed and restarted empty, paused (SIGSTOP),
//! slow, flushed, failed over to a replica. Calls carry on from local state (none waits on the
//! store), the lease holds until it expires, then the fallback (never unlimited, never
//! blocked); once the store answers again the scopes are live again, with no burst.
//!
//! The call latencies measured during each fault are printed (`--nocapture`), not asserted:
//! no call path touches the store, which the tests show by calls completing while it is down.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use retry_core::fleet::{Fleet, FleetStatus};
use retry_core::{RetryConfig, RetryMode, StandardStrategy, retry};
use retry_tests::redis_server::{RedisServer, Resp, command_at, free_port};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

use super::{
    ErrorKind, INTERVAL, attached, attached_old, call, fleet_stats, process, server,
    wait_for_status, wait_until,
};

/// Calls made (and timed) during a fault.
const CALLS: usize = 200;

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
            call(strategy, 1, ErrorKind::Transient);
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
/// what the store leases them (a young scope keeps the young scope's 500 whatever the lease),
/// and a store that grants more than they held shows in their levels.
async fn live_pair(
    url: &str,
    config: &RetryConfig,
) -> (Fleet, Fleet, StandardStrategy, StandardStrategy) {
    let (one, two) = (process(url, 1).await, process(url, 2).await);
    let first = attached_old(&one, "orders", config);
    let second = attached_old(&two, "orders", config);
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

/// Waits for the fallback, then checks its quota. These fleets are healthy, so a retry meets
/// the scope's local rules, never unlimited: the cap in force is the local one, at most the
/// quota's capacity. (A failing fleet's fallback caps the quota at the fleet's cap over its
/// live processes: the lease's unit tests.)
async fn falls_back(strategy: &StandardStrategy) {
    wait_for_status(strategy, FleetStatus::Fallback).await;
    let stats = strategy.scope().stats();
    let capacity = strategy.config().quota_capacity();
    assert!(
        stats.quota_capacity <= capacity,
        "a cap of {} over the quota's capacity {capacity}",
        stats.quota_capacity
    );
    assert!(
        stats.quota_level <= stats.quota_capacity,
        "a retry finds {} > the cap {}",
        stats.quota_level,
        stats.quota_capacity
    );
}

#[tokio::test]
async fn redis_killed_then_restarted_empty() {
    let Some(mut server) = server(&[]) else {
        return;
    };
    let config = RetryConfig::default();
    let (_one, _two, first, second) = live_pair(&server.url(), &config).await;
    let before = levels(&first, &second);

    server.kill();
    assert_eq!(
        fleet_stats(&first).status,
        FleetStatus::Live,
        "the lease holds"
    );
    calls_carry_on(&first, "Redis down").await;
    falls_back(&first).await;
    falls_back(&second).await;

    server.restart_empty();
    let took = wait_until("both live again", || {
        fleet_stats(&first).status == FleetStatus::Live
            && fleet_stats(&second).status == FleetStatus::Live
    })
    .await;
    println!("live again {took:?} after Redis restarted empty (interval {INTERVAL:?})");
    // The empty store re-learned from what the processes hold: it granted nothing more than
    // they held (plus the first-try successes' rewards of the calls made meanwhile).
    let rewards = u32::try_from(CALLS / 2).expect("small");
    assert!(
        levels(&first, &second) <= before + rewards,
        "{} > {before} + {rewards}",
        levels(&first, &second)
    );
}

#[tokio::test]
async fn redis_paused_then_resumed_with_the_fleet_limiter_engaged() {
    let Some(server) = server(&[]) else { return };
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid");
    let fleet = process(&server.url(), 1).await;
    let busy = attached(&fleet, "api", &config);
    wait_for_status(&busy, FleetStatus::Live).await;
    for i in 0..100 {
        call(&busy, u32::from(i % 10 == 0), ErrorKind::Throttling);
    }
    wait_until("the fleet limiter engaged", || {
        fleet_stats(&busy).send_rate.is_some()
    })
    .await;

    server.pause();
    calls_carry_on(&busy, "Redis paused").await;
    falls_back(&busy).await;
    // The limiter goes on from the process's last share: never unlimited, never blocked.
    let last_share = fleet_stats(&busy).send_rate.expect("it was engaged");
    let limiter = busy.scope().limiter().stats();
    assert!(limiter.enabled, "never unlimited");
    assert_eq!(limiter.fill_rate, last_share.max(0.5), "never blocked");

    server.resume();
    let took = wait_for_status(&busy, FleetStatus::Live).await;
    println!("live again {took:?} after Redis resumed (interval {INTERVAL:?})");
    assert!(busy.scope().limiter().stats().enabled);
}

#[tokio::test]
async fn a_slow_redis_keeps_the_lease_live() {
    let Some(server) = server(&["--enable-debug-command", "yes"]) else {
        return;
    };
    let config = RetryConfig::default();
    let (_one, _two, first, second) = live_pair(&server.url(), &config).await;
    // For a second, the server stalls 20 ms of every 40 (each command waits behind it).
    let port = server.port();
    let stalls = std::thread::spawn(move || {
        for _ in 0..25 {
            let stalled = command_at(port, &["DEBUG", "SLEEP", "0.02"]);
            assert_eq!(stalled, Resp::Status("OK".into()));
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(1) {
        assert_eq!(fleet_stats(&first).status, FleetStatus::Live);
        assert_eq!(fleet_stats(&second).status, FleetStatus::Live);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    calls_carry_on(&first, "a slow Redis").await;
    stalls.join().expect("the stalls ran");
    assert!(levels(&first, &second) <= 500 + u32::try_from(CALLS / 2).expect("small"));
}

#[tokio::test]
async fn a_flushed_redis_relearns_without_a_burst() {
    let Some(server) = server(&[]) else { return };
    let config = RetryConfig::default();
    let (_one, _two, first, second) = live_pair(&server.url(), &config).await;
    let before = levels(&first, &second);
    assert_eq!(server.command(&["FLUSHALL"]), Resp::Status("OK".into()));
    // The leases carry on; the next syncs re-learn the fleet (the script sent again by EVAL).
    let start = Instant::now();
    while start.elapsed() < 5 * INTERVAL {
        assert_eq!(fleet_stats(&first).status, FleetStatus::Live);
        assert!(levels(&first, &second) <= before, "a burst after the flush");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    let Resp::Array(keys) = server.command(&["KEYS", "retry:*"]) else {
        panic!("KEYS")
    };
    assert_eq!(keys.len(), 3, "the scope's state re-learned: {keys:?}");
}

/// A TCP proxy on loopback to a target port that can be switched (a failover's new primary):
/// switching drops every connection made through it, as a failover does.
struct Proxy {
    port: u16,
    target: Arc<Mutex<u16>>,
    connections: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    async fn to(target: u16) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.expect("a port");
        let port = listener.local_addr().expect("bound").port();
        let target = Arc::new(Mutex::new(target));
        let connections = Arc::new(Mutex::new(Vec::new()));
        let accept = tokio::spawn({
            let (target, connections) = (Arc::clone(&target), Arc::clone(&connections));
            async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    let port = *target.lock().await;
                    let relay = tokio::spawn(async move {
                        if let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", port)).await {
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                    connections.lock().await.push(relay);
                }
            }
        });
        Self {
            port,
            target,
            connections,
            accept,
        }
    }

    async fn switch_to(&self, target: u16) {
        *self.target.lock().await = target;
        for relay in self.connections.lock().await.drain(..) {
            relay.abort();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

#[tokio::test]
async fn a_failover_to_a_replica_relearns_without_a_burst() {
    let Some(mut primary) = server(&[]) else {
        return;
    };
    let replica_port = free_port();
    let primary_port = primary.port().to_string();
    let replica = RedisServer::start_on(replica_port, &["--replicaof", "127.0.0.1", &primary_port]);
    let proxy = Proxy::to(primary.port()).await;
    let url = format!("redis://127.0.0.1:{}/", proxy.port);
    let config = RetryConfig::default();
    let (_one, _two, first, second) = live_pair(&url, &config).await;
    wait_until("the replica in sync", || {
        matches!(
            replica.command(&["EXISTS", "retry:{orders}:v1:state"]),
            Resp::Int(1)
        )
    })
    .await;
    let before = levels(&first, &second);

    // The failover: the primary dies, the replica is promoted, the address moves to it.
    primary.kill();
    assert_eq!(
        replica.command(&["REPLICAOF", "NO", "ONE"]),
        Resp::Status("OK".into())
    );
    proxy.switch_to(replica_port).await;
    calls_carry_on(&first, "a failover").await;
    // The new primary has the replicated state but not the script (NOSCRIPT, then EVAL).
    let took = wait_until("both live on the new primary", || {
        let fresh = |strategy| {
            fleet_stats(strategy)
                .last_sync_age
                .is_some_and(|age| age < INTERVAL)
        };
        fresh(&first)
            && fresh(&second)
            && fleet_stats(&first).status == FleetStatus::Live
            && fleet_stats(&second).status == FleetStatus::Live
    })
    .await;
    println!("synced with the new primary {took:?} after the failover (interval {INTERVAL:?})");
    let rewards = u32::try_from(CALLS / 2).expect("small");
    assert!(levels(&first, &second) <= before + rewards);
}
