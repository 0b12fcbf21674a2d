//! The least-privileged ACL user fleet mode runs as (what a managed Redis's user may be given)
//! and the check that it was refused nothing fleet mode needs.

use retry_core::fleet::redis::SCRIPT_COMMANDS;

use crate::redis_server::Resp;

/// `ACL SETUSER <user> ...` for a user with password `pw` allowed only the keys under
/// `prefix`, the scripting commands fleet mode sends (`EVALSHA`, `EVAL`, `SCRIPT LOAD`), the
/// commands its script runs ([`SCRIPT_COMMANDS`]: Redis checks a script's commands against its
/// user too), `PING`, `AUTH` and `HELLO`; `extra` rules after those.
pub fn least_privileged_user(user: &str, prefix: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["ACL", "SETUSER", user, "reset", "on", ">pw"]
        .iter()
        .map(|arg| (*arg).to_owned())
        .collect();
    args.push(format!("~{prefix}*"));
    args.extend(
        [
            "resetchannels",
            "-@all",
            "+evalsha",
            "+eval",
            "+script|load",
            "+ping",
            "+auth",
            "+hello",
        ]
        .iter()
        .map(|arg| (*arg).to_owned()),
    );
    args.extend(
        SCRIPT_COMMANDS
            .iter()
            .map(|command| format!("+{}", command.to_ascii_lowercase())),
    );
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    args
}

/// Checks replies to `ACL LOG`: nothing refused but redis-rs' `CLIENT SETINFO` at each
/// connection, whose refusal redis-rs ignores (as Redis's docs for the command tell clients
/// to).
pub fn assert_only_client_setinfo_refused(logs: &[Resp]) {
    for log in logs {
        let Resp::Array(entries) = log else {
            panic!("ACL LOG answered {log:?}");
        };
        for entry in entries {
            let text = format!("{entry:?}");
            assert!(text.contains("client|setinfo"), "refused: {text}");
        }
    }
}
