//! Starting a fleet and attaching scopes with bad input: an unreachable store (a warning, local
//! limits until it answers), refused credentials and a user without scripting (errors), ACL
//! users in the URL, scope names and prefixes (encoded, or refused with what to write), two
//! processes attaching one scope with different settings (a conflict, warned of once), options
//! out of bounds.

use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use retry_core::fleet::{Fleet, FleetError, FleetStatus};
use retry_core::{RetryConfig, Scope};
use retry_tests::redis_server::Resp;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

use super::{
    COMMAND_TIMEOUT, ErrorKind, INTERVAL, add_acl_users, attached, call, fleet_stats, process,
    server, wait_for_status,
};

#[tokio::test]
async fn an_unreachable_store_at_start_up_leaves_scopes_local_until_it_answers() {
    let Some(mut server) = server(&[]) else {
        return;
    };
    // The store is down when the process starts.
    server.kill();
    let fleet = process(&server.url(), 1).await;
    let config = RetryConfig::default();
    let strategy = attached(&fleet, "inventory", &config);
    tokio::time::sleep(3 * INTERVAL).await;
    // The fleet started (with a warning), its scope on its local limits.
    assert_eq!(fleet_stats(&strategy).status, FleetStatus::Connecting);
    assert_eq!(
        strategy.scope().stats().quota_level,
        500,
        "the young scope's, locally"
    );
    assert!(call(&strategy, 1, ErrorKind::Transient), "calls go on");
    // The store comes up: the scope goes live by itself.
    server.restart_empty();
    wait_for_status(&strategy, FleetStatus::Live).await;
}

#[tokio::test]
async fn refused_credentials_and_a_user_without_scripting_are_errors_at_start_up() {
    let Some(server) = server(&[]) else { return };
    add_acl_users(&server);
    let start = |url: String| async move {
        Fleet::connect(&url)
            .expect("a Redis URL")
            .command_timeout(COMMAND_TIMEOUT)
            .sync_interval(INTERVAL)
            .start()
            .await
    };
    let wrong = start(server.url_as("app", "wrong"))
        .await
        .expect_err("refused");
    assert!(
        matches!(wrong, FleetError::Authentication { .. }),
        "{wrong}"
    );
    assert!(
        !wrong.to_string().contains("wrong@"),
        "the password shows: {wrong}"
    );
    let noscript = start(server.url_as("noscript", "pw"))
        .await
        .expect_err("refused");
    assert!(
        matches!(noscript, FleetError::NoScripting { .. }),
        "{noscript}"
    );
    // An ACL user with the rights it needs, given in the URL.
    let fleet = start(server.url_as("app", "right")).await.expect("starts");
    let strategy = attached(&fleet, "inventory", &RetryConfig::default());
    wait_for_status(&strategy, FleetStatus::Live).await;
}

#[tokio::test]
async fn any_scope_name_is_encoded_under_the_prefix_and_bad_ones_are_refused() {
    let Some(server) = server(&[]) else { return };
    let fleet = Fleet::connect(&server.url())
        .expect("a Redis URL")
        .prefix("app:fleet:")
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .start()
        .await
        .expect("starts");
    let strategy = attached(&fleet, "a b{c}/ü", &RetryConfig::default());
    wait_for_status(&strategy, FleetStatus::Live).await;
    let Resp::Array(keys) = server.command(&["KEYS", "*"]) else {
        panic!("KEYS")
    };
    let mut keys: Vec<String> = keys
        .into_iter()
        .map(|key| match key {
            Resp::Bulk(Some(key)) => key,
            other => panic!("{other:?}"),
        })
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "app:fleet:{a%20b%7Bc%7D%2F%C3%BC}:v1:procs",
            "app:fleet:{a%20b%7Bc%7D%2F%C3%BC}:v1:seen",
            "app:fleet:{a%20b%7Bc%7D%2F%C3%BC}:v1:state",
        ]
    );
    for name in ["", &"x".repeat(201)] {
        let error = fleet
            .attach_scope(&Scope::new(name, &RetryConfig::default()))
            .expect_err("no key for it");
        assert!(matches!(error, FleetError::InvalidKey { .. }), "{error}");
    }
    let error = Fleet::connect(&server.url())
        .expect("a Redis URL")
        .prefix("app{x}:")
        .start()
        .await
        .expect_err("a brace in the prefix");
    assert!(matches!(error, FleetError::InvalidKey { .. }), "{error}");
}

#[tokio::test]
async fn options_and_configurations_a_fleet_cannot_use_are_errors_naming_the_setting() {
    let builder = || Fleet::connect("redis://127.0.0.1:1/").expect("a Redis URL");
    let setting = |error: FleetError| match error {
        FleetError::InvalidSetting { setting, .. } => setting,
        other => panic!("{other}"),
    };
    let cases = [
        (
            builder().sync_interval(std::time::Duration::ZERO),
            "sync_interval",
        ),
        (
            builder().lease_ttl(INTERVAL / 2).sync_interval(INTERVAL),
            "lease_ttl",
        ),
        (builder().beta(1.0), "beta"),
        (
            builder().command_timeout(std::time::Duration::from_secs(5)),
            "command_timeout",
        ),
    ];
    for (builder, name) in cases {
        assert_eq!(setting(builder.start().await.expect_err(name)), name);
    }
    // A fixed quota cannot be shared by a fleet: its scope is refused at attach.
    let fleet = process("redis://127.0.0.1:1/", 1).await;
    let classic = RetryConfig::aws_classic().build().expect("valid");
    let error = fleet
        .attach_scope(&Scope::new("classic", &classic))
        .expect_err("a fixed quota");
    assert_eq!(setting(error), "quota_window");
}

/// A subscriber counting the "fleet settings conflict" warnings and keeping what they name.
#[derive(Clone, Default)]
struct Conflicts(Arc<Mutex<Vec<String>>>);

impl Conflicts {
    fn seen(&self) -> Vec<String> {
        self.0.lock().expect("not poisoned").clone()
    }
}

#[derive(Default)]
struct ConflictFields {
    message: String,
    differences: String,
}

impl Visit for ConflictFields {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        match field.name() {
            "message" => self.message = format!("{value:?}"),
            "differences" => self.differences = format!("{value:?}"),
            _ => {}
        }
    }
}

impl Subscriber for Conflicts {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut fields = ConflictFields::default();
        event.record(&mut fields);
        if fields.message.starts_with("fleet settings conflict") {
            self.0
                .lock()
                .expect("not poisoned")
                .push(fields.differences);
        }
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[tokio::test]
async fn a_process_with_other_settings_is_told_once_and_stays_local() {
    let Some(server) = server(&[]) else { return };
    let conflicts = Conflicts::default();
    // The test's runtime runs the sync tasks on this thread: the subscriber sees their events.
    let _guard = tracing::subscriber::set_default(conflicts.clone());
    let (one, two) = (
        process(&server.url(), 1).await,
        process(&server.url(), 2).await,
    );
    let first = attached(&one, "inventory", &RetryConfig::default());
    wait_for_status(&first, FleetStatus::Live).await;
    let bigger = RetryConfig::builder()
        .quota_capacity(8_000)
        .build()
        .expect("valid");
    let second = attached(&two, "inventory", &bigger);
    wait_for_status(&second, FleetStatus::Conflict).await;
    assert_eq!(fleet_stats(&second).conflict, Some("most"));
    // Several syncs later: still one warning, naming the setting; the first process is live.
    tokio::time::sleep(5 * INTERVAL).await;
    assert_eq!(conflicts.seen(), ["most"]);
    assert_eq!(fleet_stats(&second).status, FleetStatus::Conflict);
    assert_eq!(fleet_stats(&first).status, FleetStatus::Live);
    assert_eq!(
        second.scope().stats().quota_level,
        500,
        "its local young quota"
    );
}
