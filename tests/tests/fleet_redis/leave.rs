//! A process that shuts down cleanly leaves its fleets at once: its `Fleet` dropped or shut
//! down tells the store, which removes its record and hands its share of the fleet's rate to
//! the others at their next sync, where a crashed process's share is handed on over about a
//! lease (the store cannot tell it from one whose writes fail and that still sends).

use retry_core::RetryConfig;
use retry_core::fleet::FleetStatus;
use retry_core::fleet::keys::ScopeKeys;
use retry_core::fleet::protocol::{Report, Settings};
use retry_core::fleet::redis::RedisStore;
use retry_core::fleet::store_model::{leave, step};
use retry_core::fleet::store_state::StoreState;
use retry_tests::redis_server::{RedisServer, Resp};

use super::{Process, attached, fleet_stats, lease_of, options, process, server, wait_until};

/// Whether the store holds a record of process `id` in the scope of `keys`.
fn recorded(server: &RedisServer, keys: &ScopeKeys, id: &str) -> bool {
    server.command(&["HEXISTS", keys.procs(), id]) == Resp::Int(1)
}

#[tokio::test]
async fn a_dropped_fleet_leaves_the_store_at_once() {
    let Some(server) = server(&[]) else { return };
    let keys = ScopeKeys::new("retry:", "dropped").expect("a valid scope");
    let fleet = process(&server.url(), 7).await;
    let strategy = attached(&fleet, "dropped", &RetryConfig::default());
    wait_until("live", || {
        fleet_stats(&strategy).status == FleetStatus::Live
    })
    .await;
    let id = "0000000000000007";
    assert!(recorded(&server, &keys, id));
    // Alone in its fleet, nobody's report would ever expire it: only its leave removes it.
    drop(fleet);
    wait_until("its record removed", || !recorded(&server, &keys, id)).await;
    assert!(
        fleet_stats(&strategy).status != FleetStatus::Live,
        "back to local limits"
    );
}

#[tokio::test]
async fn a_fleet_shut_down_has_left_when_shutdown_returns() {
    let Some(server) = server(&[]) else { return };
    let keys = ScopeKeys::new("retry:", "shut").expect("a valid scope");
    let (staying, leaving) = (
        process(&server.url(), 1).await,
        process(&server.url(), 2).await,
    );
    let config = RetryConfig::default();
    let kept = attached(&staying, "shut", &config);
    let gone = attached(&leaving, "shut", &config);
    wait_until("both live", || {
        fleet_stats(&kept).status == FleetStatus::Live
            && fleet_stats(&gone).status == FleetStatus::Live
    })
    .await;
    leaving.shutdown().await.expect("the store is told");
    assert!(!recorded(&server, &keys, "0000000000000002"));
    assert!(recorded(&server, &keys, "0000000000000001"));
    wait_until("one live process", || {
        fleet_stats(&kept).live_processes == 1
    })
    .await;
}

/// Two processes of equal demand, engaged; then process 2 leaves (`leaves`) or falls silent
/// (a crash). Process 1's shares of the fleet's rate at its next three syncs, each step on
/// Redis and in the model alike.
async fn shares_after_the_second(server: &RedisServer, scope: &str, leaves: bool) -> Vec<u64> {
    let store = RedisStore::connect(&server.url(), options())
        .await
        .expect("connects");
    let keys = ScopeKeys::new("retry:", scope).expect("a valid scope");
    let mut model = StoreState::default();
    let settings = Settings::example();
    let mut fleet = [Process::new(1), Process::new(2)];
    let mut shares = Vec::new();
    for second in 1..=7_u64 {
        for (i, process) in fleet.iter_mut().enumerate() {
            if i == 1 && second > 3 {
                continue;
            }
            let report = process.report(second * 1_000 + 100 * i as u64, |report| Report {
                sends: 60,
                throttles: if second == 2 { 10 } else { 0 },
                send_demand: 60_000,
                ..report
            });
            let reply = store
                .sync_once(&keys, &settings, &report)
                .await
                .expect("syncs");
            assert_eq!(reply, step(&mut model, &settings, &report).expect("valid"));
            process.apply(&report, &reply);
            if i == 0 && second > 3 {
                shares.push(lease_of(reply).share_ppm);
            }
        }
        if second == 3 && leaves {
            let left = store
                .leave(std::slice::from_ref(&keys), fleet[1].id)
                .await
                .expect("leaves");
            assert!(matches!(left[..], [Ok(true)]), "{left:?}");
            assert!(leave(&mut model, fleet[1].id));
        }
        assert_eq!(store.read_state(&keys).await.expect("readable"), model);
    }
    shares
}

#[tokio::test]
async fn a_process_that_leaves_hands_its_share_on_at_once_a_crashed_one_over_a_lease() {
    let Some(server) = server(&[]) else { return };
    let left = shares_after_the_second(&server, "left", true).await;
    assert_eq!(left, [1_000_000; 4], "all of the demand at its next sync");
    let crashed = shares_after_the_second(&server, "crashed", false).await;
    assert!(
        crashed[0] < 600_000,
        "its share held while it may still send: {crashed:?}"
    );
}
