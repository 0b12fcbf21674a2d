//! Fleet mode over TLS (`rediss://`) against a TLS `redis-server` of the test's own, whose CA
//! and certificates are made at test time: a fleet trusting the private CA goes live; an
//! untrusted server certificate, a refused password and a missing or foreign client
//! certificate fail the start with a clear error; passwords and ACL users work through the
//! URL; bad PEM is an error naming the setting, before anything is connected.

use std::time::Duration;

use retry_core::RetryConfig;
use retry_core::fleet::{Fleet, FleetBuilder, FleetError, FleetStatus};
use retry_tests::redis_server::{RedisServer, Resp, ServerTls};
use retry_tests::test_ca::TestCa;

use super::{SUITE, add_acl_users, attached, fleet_stats, wait_for_status};

/// The TLS tests' sync interval and command (and connection) timeout. A handshake that outlasts
/// the connect timeout reads as an unreachable store, which `start` accepts (it logs a warning
/// and the fleet starts): so the timeout must be far above any handshake, or a refused one is
/// taken for a slow one and the test fails by the machine's load. In a debug build on 2 cores
/// beside the other TLS tests, with the machine's load average at 8-10, a refused handshake took
/// 73-148 ms alone and up to 404 ms in company, so 250 ms failed 8 runs in 20: 5 s is 12 times
/// the worst seen. It costs a passing test nothing: a refusal answers at once, and an attach
/// syncs at once rather than after an interval.
const TLS_INTERVAL: Duration = Duration::from_secs(5);

/// A TLS server presenting a certificate from `ca`, checking client certificates against it
/// (required or not), or `None` without a TLS-capable `redis-server`.
fn tls_server(ca: &TestCa, require_client_certificates: bool) -> Option<RedisServer> {
    let issued = ca.server();
    let tls = ServerTls {
        certificate_pem: issued.certificate_pem,
        private_key_pem: issued.private_key_pem,
        client_ca_pem: ca.certificate_pem(),
        require_client_certificates,
    };
    RedisServer::start_tls(SUITE, tls, &[])
}

/// A fleet on `url` with the TLS tests' timing.
fn builder(url: &str) -> FleetBuilder {
    Fleet::connect(url)
        .expect("a Redis URL")
        .sync_interval(TLS_INTERVAL)
        .command_timeout(TLS_INTERVAL)
}

/// Starts `builder`, attaches a scope and waits until its lease is live: the fleet synced over
/// TLS.
async fn goes_live(builder: FleetBuilder) {
    let fleet = builder.start().await.expect("starts over TLS");
    let strategy = attached(&fleet, "inventory", &RetryConfig::default());
    wait_for_status(&strategy, FleetStatus::Live).await;
    let stats = fleet_stats(&strategy);
    // This process (and earlier ones of the test, until their entries expire).
    assert!(stats.live_processes >= 1, "{stats:?}");
    assert!(stats.fleet_cap > 0, "{stats:?}");
}

/// The name of an [`FleetError::InvalidSetting`].
fn setting(error: FleetError) -> &'static str {
    match error {
        FleetError::InvalidSetting { setting, .. } => setting,
        other => panic!("not an invalid setting: {other}"),
    }
}

#[tokio::test]
async fn a_rediss_fleet_trusting_its_private_ca_syncs_and_gets_a_live_lease() {
    let ca = TestCa::new("fleet test CA");
    let Some(server) = tls_server(&ca, false) else {
        return;
    };
    goes_live(builder(&server.tls_url()).tls_root_certificates(ca.certificate_pem())).await;
    // The syncs reached this server: the scope's state is there (read on the plain port).
    assert_eq!(
        server.command(&["EXISTS", "retry:{inventory}:v1:state"]),
        Resp::Int(1)
    );
}

#[tokio::test]
async fn an_untrusted_server_certificate_fails_the_start_with_a_tls_error() {
    let ca = TestCa::new("fleet test CA");
    let Some(server) = tls_server(&ca, false) else {
        return;
    };
    let other = TestCa::new("another CA");
    let cases = [
        (
            "another CA",
            builder(&server.tls_url()).tls_root_certificates(other.certificate_pem()),
        ),
        ("the system's roots", builder(&server.tls_url())),
    ];
    for (trusting, builder) in cases {
        let error = builder.start().await.expect_err(trusting);
        assert!(
            matches!(error, FleetError::Tls { .. }),
            "{trusting}: {error}"
        );
        let message = error.to_string();
        assert!(
            message.contains("certificate") && message.contains("tls_root_certificates"),
            "{trusting}: {message}"
        );
    }
}

#[tokio::test]
async fn passwords_and_acl_users_work_through_a_rediss_url_and_a_wrong_one_is_refused() {
    let ca = TestCa::new("fleet test CA");
    let Some(server) = tls_server(&ca, false) else {
        return;
    };
    add_acl_users(&server);
    // The default user's password last: the test's plain commands use the default user.
    let password = ["CONFIG", "SET", "requirepass", "secret"];
    assert_eq!(server.command(&password), Resp::Status("OK".into()));
    let trusting = |url: String| builder(&url).tls_root_certificates(ca.certificate_pem());
    goes_live(trusting(server.tls_url_as("app", "right"))).await;
    goes_live(trusting(server.tls_url_as("", "secret"))).await;
    for (user, password) in [("app", "wrong"), ("", "wrong"), ("nobody", "right")] {
        let error = trusting(server.tls_url_as(user, password))
            .start()
            .await
            .expect_err("refused");
        assert!(
            matches!(error, FleetError::Authentication { .. }),
            "{user}:{password}: {error}"
        );
        assert!(
            !error.to_string().contains(&format!(":{password}@")),
            "the password shows: {error}"
        );
    }
}

#[tokio::test]
async fn mutual_tls_presents_the_client_certificate_and_a_missing_or_foreign_one_is_refused() {
    let ca = TestCa::new("fleet test CA");
    let Some(server) = tls_server(&ca, true) else {
        return;
    };
    let trusting = || builder(&server.tls_url()).tls_root_certificates(ca.certificate_pem());
    let client = ca.client("fleet client");
    goes_live(trusting().tls_client_certificate(client.certificate_pem, client.private_key_pem))
        .await;
    let foreign = TestCa::new("another CA").client("fleet client");
    let cases = [
        ("no client certificate", trusting()),
        (
            "a client certificate from another CA",
            trusting().tls_client_certificate(foreign.certificate_pem, foreign.private_key_pem),
        ),
    ];
    for (presenting, builder) in cases {
        let error = builder.start().await.expect_err(presenting);
        assert!(
            matches!(error, FleetError::Tls { .. }),
            "{presenting}: {error}"
        );
        assert!(
            error.to_string().contains("tls_client_certificate"),
            "{presenting}: {error}"
        );
    }
}

#[tokio::test]
async fn bad_pem_and_certificates_for_a_plain_url_are_errors_naming_the_setting() {
    // Nothing listens on port 1: every case must fail before connecting.
    let tls = || builder("rediss://127.0.0.1:1/");
    let ca = TestCa::new("fleet test CA");
    let client = ca.client("fleet client");
    let other = ca.client("another client");
    let broken_base64 = "-----BEGIN CERTIFICATE-----\n@@@@\n-----END CERTIFICATE-----\n";
    let not_a_certificate = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    let cases = [
        (
            tls().tls_root_certificates("not PEM at all"),
            "tls_root_certificates",
        ),
        (
            tls().tls_root_certificates(client.private_key_pem.clone()),
            "tls_root_certificates",
        ),
        (
            tls().tls_root_certificates(broken_base64),
            "tls_root_certificates",
        ),
        (
            tls().tls_root_certificates(not_a_certificate),
            "tls_root_certificates",
        ),
        (
            tls().tls_client_certificate(client.certificate_pem.clone(), "no key"),
            "tls_client_certificate",
        ),
        (
            tls().tls_client_certificate("no chain", client.private_key_pem.clone()),
            "tls_client_certificate",
        ),
        (
            // Another certificate's key.
            tls().tls_client_certificate(
                client.certificate_pem.clone(),
                other.private_key_pem.clone(),
            ),
            "tls_client_certificate",
        ),
        (
            // Certificates a plain URL would ignore.
            builder("redis://127.0.0.1:1/").tls_root_certificates(ca.certificate_pem()),
            "tls_root_certificates",
        ),
        (
            builder("redis://127.0.0.1:1/").tls_client_certificate(
                client.certificate_pem.clone(),
                client.private_key_pem.clone(),
            ),
            "tls_client_certificate",
        ),
    ];
    for (index, (builder, expected)) in cases.into_iter().enumerate() {
        let shown = format!("{builder:?}");
        assert!(!shown.contains("PRIVATE KEY"), "the key shows: {shown}");
        let error = builder.start().await.expect_err(expected);
        let message = error.to_string();
        assert_eq!(setting(error), expected, "case {index}: {message}");
    }
}
