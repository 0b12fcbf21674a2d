//! Start-up says what is wrong: a store asking for a password the URL does not give, a URL
//! whose scheme does not match the port (`rediss://` to plain text, `redis://` to TLS) and an
//! ACL user without the prefix's keys are errors from `start()`, each naming what to fix,
//! within the connect timeout (and one diagnosis as long); a scope's stats keep the last
//! error a sync met.

use std::time::{Duration, Instant};

use retry_core::RetryConfig;
use retry_core::fleet::{Fleet, FleetError, FleetErrorKind, FleetStatus};
use retry_tests::redis_server::{RedisServer, Resp, ServerTls};
use retry_tests::test_ca::TestCa;

use super::{
    COMMAND_TIMEOUT, INTERVAL, SUITE, attached, fleet_stats, server, wait_for_status, wait_until,
};

/// The most a failed start may take: connect, the script's `PING`, one diagnosis, each within
/// the timeout, and room for a loaded machine (a bound on a hang, not a measure of speed).
const START_BOUND: Duration = Duration::from_secs(5);

/// Starts a fleet on `url` with prefix `prefix` and the tests' timing; the error and how long
/// `start` took.
async fn start_error(url: &str, prefix: &str) -> (FleetError, Duration) {
    let began = Instant::now();
    let result = Fleet::connect(url)
        .expect("a Redis URL")
        .prefix(prefix)
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .start()
        .await;
    let took = began.elapsed();
    let error = result.expect_err("start() must fail, naming what to fix");
    assert!(took < START_BOUND, "start() took {took:?}: {error}");
    println!("{url}: {took:?}: {error}");
    (error, took)
}

#[tokio::test]
async fn a_store_asking_for_a_password_the_url_does_not_give_says_so_before_the_script() {
    let Some(server) = server(&[]) else { return };
    assert_eq!(
        server.command(&["CONFIG", "SET", "requirepass", "s3cret"]),
        Resp::Status("OK".into())
    );
    let (error, _) = start_error(&server.url(), "retry:").await;
    assert!(
        matches!(error, FleetError::Authentication { .. }),
        "{error:?}"
    );
    let message = error.to_string();
    assert!(message.contains("gives none"), "{message}");
    assert!(message.contains("redis://:<password>@"), "{message}");
    // With the password, the same server takes the fleet.
    let url = format!("redis://:s3cret@127.0.0.1:{}/", server.port());
    let fleet = Fleet::connect(&url)
        .expect("a Redis URL")
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .start()
        .await
        .expect("the password given");
    let strategy = attached(&fleet, "inventory", &RetryConfig::default());
    wait_for_status(&strategy, FleetStatus::Live).await;
}

#[tokio::test]
async fn a_user_without_the_prefixs_keys_is_told_which_keys_to_grant() {
    let Some(server) = server(&[]) else { return };
    let user = ["ACL", "SETUSER", "other", "on", ">pw", "~other:*", "+@all"];
    assert_eq!(server.command(&user), Resp::Status("OK".into()));
    let url = server.url_as("other", "pw");
    let (error, _) = start_error(&url, "shop:").await;
    let message = error.to_string();
    assert!(message.contains("~shop:*"), "{message}");
    assert!(!message.contains("pw@"), "the password shows: {message}");
    // Its own prefix is fine.
    Fleet::connect(&url)
        .expect("a Redis URL")
        .prefix("other:")
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .start()
        .await
        .expect("the user's own keys");
}

/// A TLS server presenting a certificate from a CA of the test's own, or `None` without a
/// TLS-capable `redis-server`.
fn tls_server() -> Option<RedisServer> {
    let ca = TestCa::new("fleet test CA");
    let issued = ca.server();
    let tls = ServerTls {
        certificate_pem: issued.certificate_pem,
        private_key_pem: issued.private_key_pem,
        client_ca_pem: ca.certificate_pem(),
        require_client_certificates: false,
    };
    RedisServer::start_tls(SUITE, tls, &[])
}

#[tokio::test]
async fn rediss_to_a_plain_text_port_is_a_tls_error_saying_to_write_redis() {
    let Some(server) = server(&[]) else { return };
    let url = format!("rediss://127.0.0.1:{}/", server.port());
    let (error, _) = start_error(&url, "retry:").await;
    assert!(matches!(error, FleetError::Tls { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("plain text"), "{message}");
    assert!(message.contains("write redis://"), "{message}");
}

#[tokio::test]
async fn redis_to_a_tls_port_is_a_tls_error_saying_to_write_rediss() {
    let Some(server) = tls_server() else { return };
    let url = format!("redis://127.0.0.1:{}/", server.tls_port());
    let (error, _) = start_error(&url, "retry:").await;
    assert!(matches!(error, FleetError::Tls { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("expects TLS"), "{message}");
    assert!(message.contains("write rediss://"), "{message}");
}

#[tokio::test]
async fn a_scopes_stats_keep_the_last_sync_error_after_it_is_live_again() {
    let Some(server) = server(&[]) else { return };
    let grant = |keys: &str| {
        let user = [
            "ACL",
            "SETUSER",
            "app",
            "on",
            ">pw",
            "resetkeys",
            keys,
            "+@all",
        ];
        assert_eq!(server.command(&user), Resp::Status("OK".into()));
    };
    grant("~retry:*");
    let fleet = Fleet::connect(&server.url_as("app", "pw"))
        .expect("a Redis URL")
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .start()
        .await
        .expect("starts");
    let strategy = attached(&fleet, "inventory", &RetryConfig::default());
    wait_for_status(&strategy, FleetStatus::Live).await;
    assert_eq!(fleet_stats(&strategy).last_error, None);
    assert_eq!(fleet.last_error(), None);
    // The operator takes the keys away: every sync fails, the scope falls back.
    grant("~elsewhere:*");
    wait_for_status(&strategy, FleetStatus::Fallback).await;
    let stats = fleet_stats(&strategy);
    assert_eq!(
        stats.last_error,
        Some(FleetErrorKind::NoKeyAccess),
        "{stats:?}"
    );
    let error = fleet.last_error().expect("the error kept");
    assert!(error.to_string().contains("~retry:*"), "{error}");
    // Given back: live again, the error still shown, older than the last sync.
    grant("~retry:*");
    wait_for_status(&strategy, FleetStatus::Live).await;
    wait_until("a sync after the error", || {
        let stats = fleet_stats(&strategy);
        stats.last_sync_age < stats.last_error_age
    })
    .await;
    let stats = fleet_stats(&strategy);
    assert_eq!(
        stats.last_error,
        Some(FleetErrorKind::NoKeyAccess),
        "{stats:?}"
    );
}
