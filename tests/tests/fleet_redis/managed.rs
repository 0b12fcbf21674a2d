//! What a managed Redis allows: fleet mode runs as a user allowed only `EVALSHA`, `EVAL`,
//! `SCRIPT LOAD`, `PING`, `AUTH`, `HELLO`, the commands the store script runs and the prefix's
//! keys (no `CONFIG`, `DEBUG`, `KEYS`, other `SCRIPT` subcommands, `TIME`, `INFO`), and nothing
//! it needs is refused; a user allowed scripts but not the script's commands is told at
//! start-up which to grant.

use retry_core::RetryConfig;
use retry_core::fleet::{Fleet, FleetError, FleetStatus};
use retry_tests::fleet_acl::{assert_only_client_setinfo_refused, least_privileged_user};
use retry_tests::redis_server::Resp;

use super::{COMMAND_TIMEOUT, INTERVAL, attached, fleet_stats, server, wait_until};

#[tokio::test]
async fn a_fleet_runs_as_a_user_allowed_only_scripts_and_their_commands_on_its_keys() {
    let Some(server) = server(&[]) else { return };
    let user = least_privileged_user("fleet", "shop:", &[]);
    let user: Vec<&str> = user.iter().map(String::as_str).collect();
    assert_eq!(server.command(&user), Resp::Status("OK".into()));
    let fleet = Fleet::connect(&server.url_as("fleet", "pw"))
        .expect("a Redis URL")
        .prefix("shop:")
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .start()
        .await
        .expect("starts as the least-privileged user");
    let config = RetryConfig::default();
    let strategies: Vec<_> = ["orders", "stock", "search"]
        .iter()
        .map(|name| attached(&fleet, name, &config))
        .collect();
    wait_until("every scope live", || {
        strategies
            .iter()
            .all(|strategy| fleet_stats(strategy).status == FleetStatus::Live)
    })
    .await;
    // Several syncs, a flush (the script sent again by EVAL): nothing refused.
    assert_eq!(
        server.command(&["SCRIPT", "FLUSH"]),
        Resp::Status("OK".into())
    );
    tokio::time::sleep(5 * INTERVAL).await;
    assert!(
        strategies
            .iter()
            .all(|strategy| fleet_stats(strategy).status == FleetStatus::Live)
    );
    assert_eq!(fleet.last_error(), None);
    assert_only_client_setinfo_refused(&[server.command(&["ACL", "LOG"])]);
}

#[tokio::test]
async fn a_user_allowed_scripts_but_not_their_commands_is_told_which_to_grant() {
    let Some(server) = server(&[]) else { return };
    let user = least_privileged_user("fleet", "shop:", &["-hset"]);
    let user: Vec<&str> = user.iter().map(String::as_str).collect();
    assert_eq!(server.command(&user), Resp::Status("OK".into()));
    let error = Fleet::connect(&server.url_as("fleet", "pw"))
        .expect("a Redis URL")
        .prefix("shop:")
        .sync_interval(INTERVAL)
        .command_timeout(COMMAND_TIMEOUT)
        .start()
        .await
        .expect_err("the script's HSET is refused");
    assert!(matches!(error, FleetError::NoKeyAccess { .. }), "{error:?}");
    let message = error.to_string();
    assert!(message.contains("+hset"), "{message}");
    // The check left nothing behind.
    let Resp::Array(keys) = server.command(&["KEYS", "*"]) else {
        panic!("KEYS")
    };
    assert!(keys.is_empty(), "{keys:?}");
}
