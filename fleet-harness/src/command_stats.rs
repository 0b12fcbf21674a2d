//! Redis's own count of the commands it ran (`INFO commandstats`), read once a second: the
//! store's load in fleet mode, which must follow the number of processes and the sync
//! interval, never the request rate.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// Commands counted since the server started (or since `CONFIG RESETSTAT`), by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandStats {
    by_command: BTreeMap<String, u64>,
}

/// Commands left out of the totals: the harness's own (`INFO`, and `CLUSTER NODES` on a
/// cluster: no fleet process sends them) and a cluster's replication (`REPLCONF`: each
/// replica acknowledges its master's stream once a second).
const NOT_THE_FLEETS: [&str; 3] = ["info", "cluster|nodes", "replconf"];

impl CommandStats {
    /// Reads the `cmdstat_<name>:calls=..,usec=..,rejected_calls=..,failed_calls=..` lines of
    /// `INFO commandstats`. A command counts whether it ran (`calls`, which include the
    /// `failed_calls`) or was refused before running (`rejected_calls`: a `NOSCRIPT`
    /// `EVALSHA` among them): both reached the store.
    pub fn parse(info: &str) -> Self {
        let by_command = info
            .lines()
            .filter_map(|line| line.trim().strip_prefix("cmdstat_"))
            .filter_map(|line| {
                let (name, fields) = line.split_once(':')?;
                let count = |key: &str| {
                    fields
                        .split(',')
                        .filter_map(|field| field.split_once('='))
                        .find(|(field, _)| *field == key)
                        .and_then(|(_, value)| value.parse::<u64>().ok())
                        .unwrap_or(0)
                };
                Some((name.to_owned(), count("calls") + count("rejected_calls")))
            })
            .collect();
        Self { by_command }
    }

    /// Calls of the command `name` (lower case, as `INFO commandstats` names it), those refused
    /// before running among them.
    pub fn calls_of(&self, name: &str) -> u64 {
        self.by_command.get(name).copied().unwrap_or(0)
    }

    /// The commands run between `earlier` and `self`, command by command: a server
    /// restarted empty counts from zero again, so a count below the earlier one is all new.
    /// `script_commands` are those the store script runs (counted in `total`, not `sent`).
    pub fn since(
        &self,
        earlier: &CommandStats,
        script_commands: &BTreeSet<String>,
    ) -> CommandCounts {
        let delta = |name: &str| {
            let now = self.by_command.get(name).copied().unwrap_or(0);
            let then = earlier.by_command.get(name).copied().unwrap_or(0);
            now.checked_sub(then).unwrap_or(now)
        };
        let counted = self
            .by_command
            .keys()
            .filter(|name| !NOT_THE_FLEETS.contains(&name.as_str()));
        CommandCounts {
            evalsha: delta("evalsha"),
            eval: delta("eval"),
            sent: counted
                .clone()
                .filter(|name| !script_commands.contains(*name))
                .map(|name| delta(name))
                .sum(),
            total: counted.map(|name| delta(name)).sum(),
        }
    }
}

/// Commands the store ran in an interval, the harness's own `INFO` left out.
///
/// Redis counts the commands a script runs (`redis.call`) in `INFO commandstats` as if they
/// had been sent: `total` is the store's whole work, `sent` what came over the network (every
/// command but those the store script runs: no process sends those itself).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CommandCounts {
    /// `EVALSHA`: the syncs.
    pub evalsha: u64,
    /// `EVAL`: the syncs that found the script gone (a store restarted empty).
    pub eval: u64,
    /// Commands the processes sent: the syncs, and the `SCRIPT LOAD`, `HELLO`, `CLIENT
    /// SETINFO`, `SELECT` of (re)connections.
    pub sent: u64,
    /// Every command the store ran, the scripts' own included.
    pub total: u64,
}

/// The commands the store script runs (`redis.call('HGET', ...)`), lower case as `INFO
/// commandstats` names them: read from the script itself, so that they follow it.
pub fn script_commands(script: &str) -> BTreeSet<String> {
    script
        .split("redis.")
        .skip(1)
        .filter_map(|rest| {
            let rest = rest
                .strip_prefix("call(")
                .or_else(|| rest.strip_prefix("pcall("))?;
            let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
            let name = rest[1..].split(quote).next()?;
            Some(name.to_ascii_lowercase())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "# Commandstats\r\n\
        cmdstat_evalsha:calls=40,usec=900,usec_per_call=22.5,rejected_calls=2,failed_calls=0\r\n\
        cmdstat_eval:calls=2,usec=100,usec_per_call=50.0,rejected_calls=0,failed_calls=0\r\n\
        cmdstat_info:calls=7,usec=70,usec_per_call=10.0,rejected_calls=0,failed_calls=0\r\n\
        cmdstat_client|setinfo:calls=4,usec=4,usec_per_call=1.0,rejected_calls=0,failed_calls=0\r\n\
        cmdstat_hget:calls=9,usec=9,usec_per_call=1.0,rejected_calls=0,failed_calls=0\r\n";

    fn script() -> BTreeSet<String> {
        script_commands("local x = redis.call('HGET', k) redis.pcall(\"ZADD\", k) redis.log(x)")
    }

    #[test]
    fn the_script_commands_are_read_from_the_script() {
        assert_eq!(
            script(),
            BTreeSet::from(["hget".to_owned(), "zadd".to_owned()])
        );
        let store = script_commands(retry_core::fleet::redis::STORE_SCRIPT);
        assert!(
            store.contains("hgetall") && store.contains("pexpire"),
            "{store:?}"
        );
        assert!(!store.contains("evalsha"), "{store:?}");
    }

    #[test]
    fn counts_are_read_by_command_with_rejected_calls_and_without_info() {
        let stats = CommandStats::parse(INFO);
        let counts = stats.since(&CommandStats::default(), &script());
        assert_eq!(
            counts,
            CommandCounts {
                evalsha: 42,
                eval: 2,
                sent: 48,
                total: 48 + 9
            }
        );
    }

    #[test]
    fn a_restarted_server_counts_from_zero() {
        let before = CommandStats::parse(INFO);
        let after = CommandStats::parse(
            "cmdstat_evalsha:calls=3,rejected_calls=1\r\ncmdstat_eval:calls=1\r\n",
        );
        assert_eq!(
            after.since(&before, &script()),
            CommandCounts {
                evalsha: 4,
                eval: 1,
                sent: 5,
                total: 5
            }
        );
        let later = CommandStats::parse("cmdstat_evalsha:calls=9,rejected_calls=1\r\n");
        assert_eq!(later.since(&after, &script()).evalsha, 6);
    }
}
