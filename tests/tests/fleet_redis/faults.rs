//! The Redis backend under faults: the server killed mid-run and restarted empty on the same
//! port, paused (SIGSTOP) and resumed, flushed. Every call ends within its timeout with an
//! error saying what happened; the backend reconnects by itself; the store re-learns.

use std::time::Duration;

use retry_core::fleet::FleetError;
use retry_core::fleet::keys::ScopeKeys;
use retry_core::fleet::protocol::{Reply, Settings};
use retry_core::fleet::redis::RedisStore;
use retry_tests::redis_server::Resp;

use super::{Process, options, server};

/// The most sync attempts a test makes while waiting for the backend to reconnect (each
/// attempt is bounded by the connect and command timeouts; between attempts the test sleeps
/// a few milliseconds).
const RECONNECT_ATTEMPTS: usize = 400;

/// Syncs until a sync succeeds (the backend reconnecting after its backoff): the reply and
/// the errors seen before it.
async fn sync_until_ok(
    store: &RedisStore,
    keys: &ScopeKeys,
    process: &mut Process,
    now_ms: u64,
) -> (Reply, Vec<FleetError>) {
    let mut errors = Vec::new();
    for _ in 0..RECONNECT_ATTEMPTS {
        let report = process.report(now_ms, |report| report);
        match store.sync_once(keys, &Settings::example(), &report).await {
            Ok(reply) => {
                process.apply(&report, &reply);
                return (reply, errors);
            }
            Err(error) => errors.push(error),
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("no sync succeeded in {RECONNECT_ATTEMPTS} attempts: {errors:?}")
}

#[tokio::test]
async fn a_killed_server_gives_errors_then_a_new_one_on_the_port_is_used_and_relearned() {
    let Some(mut server) = server(&[]) else {
        return;
    };
    let store = RedisStore::connect(&server.url(), options())
        .await
        .expect("connects");
    let keys = ScopeKeys::new("retry:", "killed").expect("valid");
    let mut process = Process::new(1);
    let (first, _) = sync_until_ok(&store, &keys, &mut process, 1_000).await;
    assert!(matches!(first, Reply::Lease(_)));
    assert_eq!(process.held, 500);

    server.kill();
    let report = process.report(2_000, |report| report);
    let error = store
        .sync_once(&keys, &Settings::example(), &report)
        .await
        .expect_err("the server is gone");
    // The open connection breaks under the command (it may or may not have run), or a new
    // one is refused.
    assert!(
        matches!(
            error,
            FleetError::ConnectionLost { .. }
                | FleetError::Unreachable { .. }
                | FleetError::Reconnecting { .. }
        ),
        "{error}"
    );
    // While it is down, attempts back off (no connection storm) and say so.
    let again = store
        .sync_once(&keys, &Settings::example(), &report)
        .await
        .expect_err("still gone");
    assert!(
        matches!(
            again,
            FleetError::Unreachable { .. } | FleetError::Reconnecting { .. }
        ),
        "{again}"
    );

    server.restart_empty();
    let (reply, _) = sync_until_ok(&store, &keys, &mut process, 3_000).await;
    // The new server had neither the script (NOSCRIPT -> EVAL) nor the state: it re-learned
    // the fleet from the process (its birth kept, nothing granted beyond what it holds).
    let Reply::Lease(lease) = reply else {
        panic!("a lease")
    };
    assert_eq!((lease.born_ms, lease.grant), (1_000, 0));
    let state = store.read_state(&keys).await.expect("readable");
    let fleet = state.fleet().expect("re-learned");
    assert_eq!((fleet.pool, fleet.leased), (0, 500));
}

#[tokio::test]
async fn a_paused_server_times_out_and_is_used_again_once_resumed() {
    let Some(server) = server(&[]) else { return };
    let store = RedisStore::connect(&server.url(), options())
        .await
        .expect("connects");
    let keys = ScopeKeys::new("retry:", "paused").expect("valid");
    let mut process = Process::new(1);
    sync_until_ok(&store, &keys, &mut process, 1_000).await;

    server.pause();
    let report = process.report(2_000, |report| report);
    let error = store
        .sync_once(&keys, &Settings::example(), &report)
        .await
        .expect_err("paused");
    assert_eq!(
        error,
        FleetError::Timeout {
            operation: "EVALSHA",
            after: options().command_timeout
        }
    );
    // A new connection to the paused server times out too (its TCP handshake completes in the
    // kernel; the connection's setup is never answered).
    let connect = RedisStore::connect(&server.url(), options())
        .await
        .expect_err("paused");
    assert!(
        matches!(
            connect,
            FleetError::Unreachable { .. } | FleetError::Timeout { .. }
        ),
        "{connect}"
    );

    server.resume();
    let (reply, _) = sync_until_ok(&store, &keys, &mut process, 3_000).await;
    assert!(matches!(reply, Reply::Lease(_)));
}

#[tokio::test]
async fn a_flushed_server_gets_the_script_again_and_relearns_the_fleet() {
    let Some(server) = server(&[]) else { return };
    let store = RedisStore::connect(&server.url(), options())
        .await
        .expect("connects");
    let keys = ScopeKeys::new("retry:", "flushed").expect("valid");
    let mut a = Process::new(1);
    let mut b = Process::new(2);
    sync_until_ok(&store, &keys, &mut a, 1_000).await;
    sync_until_ok(&store, &keys, &mut b, 1_100).await;
    sync_until_ok(&store, &keys, &mut a, 2_000).await;
    sync_until_ok(&store, &keys, &mut b, 2_100).await;
    let held = a.held + b.held;

    assert_eq!(server.command(&["FLUSHALL"]), Resp::Status("OK".into()));
    assert_eq!(
        server.command(&["SCRIPT", "FLUSH"]),
        Resp::Status("OK".into())
    );
    let (first, errors) = sync_until_ok(&store, &keys, &mut a, 3_000).await;
    assert!(
        errors.is_empty(),
        "NOSCRIPT is handled in the call: {errors:?}"
    );
    sync_until_ok(&store, &keys, &mut b, 3_100).await;
    let Reply::Lease(first) = first else {
        panic!("a lease")
    };
    assert_eq!(first.born_ms, 1_000, "the fleet's birth is kept");
    let state = store.read_state(&keys).await.expect("readable");
    let fleet = state.fleet().expect("re-learned");
    assert_eq!(fleet.pool, 0);
    assert_eq!(
        u64::try_from(fleet.leased).expect("non-negative"),
        held,
        "re-learned from what the processes hold, no burst"
    );
    assert_eq!(a.held + b.held, held);
}
