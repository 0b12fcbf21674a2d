//! The store on Redis (or Valkey): one node, or a Redis Cluster through redis-rs' cluster
//! client; the store script run by `EVALSHA` (by `EVAL` where the server lost it), a
//! connection timeout and a command timeout on every call, and reconnection with jittered
//! backoff (the private `connection` module). A process's sync is one round trip per node:
//! one pipeline to a single node, one per master of a cluster
//! (the private `cluster` module).
//!
//! Hidden from the documentation: not part of the stable API. [`Fleet`](super::Fleet) uses it;
//! the repository's tests and tools reach it to drive the store directly.

use redis::{Cmd, ErrorKind, RedisError, ServerErrorKind, Value};

use super::address::StoreAddress;
use super::cluster::{ClusterConnections, Outcome, is_topology_change};
use super::connection::{Connection, StoreConnection, classify, classify_keyed};
use super::diagnose::{Listener, mismatch};
use super::error::FleetError;
use super::keys::{ScopeKeys, check_prefix};
use super::protocol::{
    PROTOCOL_VERSION, ProcessId, Reply, ReplyItem, Report, Settings, encode_args,
};
use super::slot_map::slot_of;
use super::state_codec::decode_state;
pub use super::store_options::StoreOptions;
use super::store_state::StoreState;
use super::tls::StoreTls;

/// The store's step (`store.lua`), the same step as [`store_model`](super::store_model).
pub const STORE_SCRIPT: &str = include_str!("store.lua");

/// The commands the store script runs on a scope's keys: with `EVALSHA`, `EVAL` and `SCRIPT
/// LOAD`, every command a store's ACL must allow fleet mode (Redis checks a script's commands
/// against its user too).
pub const SCRIPT_COMMANDS: [&str; 11] = [
    "HGET",
    "HGETALL",
    "HSET",
    "HDEL",
    "DEL",
    "ZADD",
    "ZCARD",
    "ZRANGEBYSCORE",
    "ZREM",
    "PEXPIRE",
    "TYPE",
];

/// The script [`RedisStore::check_keys`] runs: each of [`SCRIPT_COMMANDS`] on keys under the
/// prefix that no scope has, leaving nothing behind.
const ACCESS_CHECK_SCRIPT: &str = include_str!("access_check.lua");

/// The hash tag of the keys [`ACCESS_CHECK_SCRIPT`] runs on: `%` followed by no hex digits is
/// no scope name's encoding ([`encode_scope`](super::keys::encode_scope)).
const ACCESS_CHECK_TAG: &str = "%key-check";

/// A connection to the fleet's store, shared by every fleet scope of the process.
///
/// ```no_run
/// use retry_core::fleet::keys::ScopeKeys;
/// use retry_core::fleet::protocol::{ProcessId, Report, Settings};
/// use retry_core::fleet::redis::{RedisStore, StoreOptions};
/// use std::time::Duration;
///
/// # async fn demo() -> Result<(), retry_core::fleet::FleetError> {
/// let options = StoreOptions::for_interval(Duration::from_secs(1));
/// let store = RedisStore::connect("redis://127.0.0.1:6379/", options).await?;
/// let keys = ScopeKeys::new("retry:", "inventory")?;
/// let report = Report { process: ProcessId(7), now_ms: 1_700_000_000_000, ..Report::default() };
/// let reply = store.sync_once(&keys, &Settings::example(), &report).await?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct RedisStore {
    address: StoreAddress,
    connection: StoreConnection,
    script_sha: String,
}

impl RedisStore {
    /// Connects to the store at `url` (`redis://[user[:password]@]host[:port][/db]`,
    /// `redis-cluster://[user[:password]@]host:port[?node=host:port...]`, or `rediss://` and
    /// `rediss-cluster://` with the `fleet-tls` feature) and loads the store script, so that a
    /// wrong URL, an unreachable server, a refused password and a server or user without
    /// scripting are errors here, at start-up.
    pub async fn connect(url: &str, options: StoreOptions) -> Result<Self, FleetError> {
        let store = Self::open(url, options)?;
        store.load_script().await?;
        Ok(store)
    }

    /// The store at `url` (one node's URL or a cluster's), not connected yet: only the URL is
    /// checked (its scheme, its syntax, TLS available for `rediss://`). The first call
    /// connects.
    pub fn open(url: &str, options: StoreOptions) -> Result<Self, FleetError> {
        Self::open_address(StoreAddress::parse(url)?, options, &StoreTls::default())
    }

    /// The store at `address`, with the TLS material a `rediss://` connection trusts and
    /// presents (checked here: bad PEM is an error naming the setting).
    pub(crate) fn open_address(
        address: StoreAddress,
        options: StoreOptions,
        tls: &StoreTls,
    ) -> Result<Self, FleetError> {
        let connection = StoreConnection::open(&address, options, tls)?;
        let script_sha = redis::Script::new(STORE_SCRIPT).get_hash().to_owned();
        Ok(Self {
            address,
            connection,
            script_sha,
        })
    }

    /// Connects if needed, then sends `PING` (a store that asks for a password the URL does
    /// not give says so here, before the 31 KB script meets Redis's limit on what an
    /// unauthenticated client may send) and loads the store script (`SCRIPT LOAD`; on every
    /// master of a cluster): a missing or refused password and a server or user without
    /// scripting are errors here.
    pub async fn load_script(&self) -> Result<(), FleetError> {
        match self.connection.request(&redis::cmd("PING"), "PING").await? {
            Ok(_) => {}
            Err(error) => {
                return Err(self
                    .connection
                    .credentials_refused(&error)
                    .unwrap_or_else(|| classify(error)));
            }
        }
        let mut load = redis::cmd("SCRIPT");
        load.arg("LOAD").arg(STORE_SCRIPT);
        self.connection.query(&load, "SCRIPT LOAD").await.map(drop)
    }

    /// Whether the URL's user may run the store script's commands ([`SCRIPT_COMMANDS`]) on
    /// the keys under `prefix`: a script runs each on keys under it that no scope has, leaving
    /// nothing behind (the ACL checks the keys before the script runs, and each command as it
    /// runs). A refusal is a [`FleetError::NoKeyAccess`] saying what to grant.
    pub async fn check_keys(&self, prefix: &str) -> Result<(), FleetError> {
        check_prefix(prefix)?;
        let base = format!("{prefix}{{{ACCESS_CHECK_TAG}}}:v{PROTOCOL_VERSION}:");
        let mut check = redis::cmd("EVAL");
        check
            .arg(ACCESS_CHECK_SCRIPT)
            .arg(3)
            .arg(format!("{base}state"))
            .arg(format!("{base}procs"))
            .arg(format!("{base}seen"));
        match self.connection.request(&check, "EVAL").await? {
            Ok(_) => Ok(()),
            Err(error) => Err(classify_keyed(error, prefix)),
        }
    }

    /// The checks of a fleet's start: the script loaded, the prefix's keys usable. A
    /// connection that failed is told apart from a scheme that does not match the port
    /// (`rediss://` to plain text, `redis://` to TLS: a [`FleetError::Tls`] naming the scheme
    /// to write) by one more connection, within the connect timeout.
    pub(crate) async fn check_at_start(&self, prefix: &str) -> Result<(), FleetError> {
        let checked = match self.load_script().await {
            Ok(()) => self.check_keys(prefix).await,
            Err(error) => Err(error),
        };
        let Err(error) = checked else {
            return Ok(());
        };
        let may_be_the_scheme = matches!(
            error,
            FleetError::Unreachable { .. }
                | FleetError::ConnectionLost { .. }
                | FleetError::Timeout { .. }
                | FleetError::Tls { .. }
                | FleetError::Server { .. }
        );
        if !may_be_the_scheme {
            return Err(error);
        }
        let node = self.address.first_node();
        let url = self.url().to_owned();
        match mismatch(node, self.connection.options().connect_timeout).await {
            Some(Listener::PlainText) => Err(FleetError::Tls {
                url,
                reason: "the server on this port speaks plain text (it answered a plain-text \
                         PING), not TLS: write redis:// for this port, or give the server's \
                         TLS port"
                    .into(),
            }),
            Some(Listener::Tls) => Err(FleetError::Tls {
                url,
                reason: "the server on this port expects TLS (it answered a TLS hello) and \
                         closed the plain-text connection: write rediss:// (retry-core's \
                         `fleet-tls` feature), or give the server's plain-text port"
                    .into(),
            }),
            None => Err(error),
        }
    }

    /// The store's address, without its password (a cluster as one `redis-cluster://` URL).
    pub fn url(&self) -> &str {
        self.connection.shown()
    }

    /// One sync of one scope: runs the store's step for `report` under `settings` and decodes
    /// the reply (checked against its bounds). The unit the sync task calls once per interval.
    pub async fn sync_once(
        &self,
        keys: &ScopeKeys,
        settings: &Settings,
        report: &Report,
    ) -> Result<Reply, FleetError> {
        let args = encode_args(settings, report)?;
        let value = self.run_script(keys, &args).await?;
        decode_reply(value, settings, report)
    }

    /// Syncs several scopes in one round trip per node: a pipeline of `EVALSHA`s to a single
    /// node; to a cluster, one pipeline per master of the scopes' slots, all at once (those
    /// the server lost the script for are sent again by `EVAL`). One result per scope, in
    /// order; the outer error is the connection's (nothing was synced).
    pub async fn sync_many(
        &self,
        batch: &[(&ScopeKeys, &Settings, &Report)],
    ) -> Result<Vec<Result<Reply, FleetError>>, FleetError> {
        let args: Vec<Result<Vec<String>, FleetError>> = batch
            .iter()
            .map(|(_, settings, report)| encode_args(settings, report).map_err(FleetError::from))
            .collect();
        let sent: Vec<usize> = (0..batch.len()).filter(|&at| args[at].is_ok()).collect();
        let mut answers: Vec<Option<Result<Value, FleetError>>> =
            batch.iter().map(|_| None).collect();
        let scripts: Vec<(&ScopeKeys, &[String])> = sent
            .iter()
            .map(|&at| (batch[at].0, args[at].as_deref().unwrap_or(&[])))
            .collect();
        for (&at, answer) in sent.iter().zip(self.run_scripts(&scripts).await?) {
            answers[at] = Some(answer);
        }
        Ok(batch
            .iter()
            .zip(args)
            .zip(answers)
            .map(|(((_, settings, report), args), answer)| {
                args?;
                let value = answer.unwrap_or_else(|| Err(missing_reply()))?;
                decode_reply(value, settings, report)
            })
            .collect())
    }

    /// Process `process` leaves the fleet of each scope of `keys`, as it shuts down cleanly:
    /// the store script's `leave` form (see [`store_model::leave`](super::store_model::leave))
    /// in one round trip per node. Its records go and its send demand is handed to the others
    /// at once (a process that stops syncing without it keeps its share for about a lease).
    /// One result per scope: whether the store had a record of the process.
    pub async fn leave(
        &self,
        keys: &[ScopeKeys],
        process: ProcessId,
    ) -> Result<Vec<Result<bool, FleetError>>, FleetError> {
        let args = [
            PROTOCOL_VERSION.to_string(),
            process.to_string(),
            LEAVE.to_owned(),
        ];
        let scripts: Vec<(&ScopeKeys, &[String])> =
            keys.iter().map(|keys| (keys, &args[..])).collect();
        Ok(self
            .run_scripts(&scripts)
            .await?
            .into_iter()
            .map(|answer| decode_leave(answer?))
            .collect())
    }

    /// Runs the store script once per `(keys, args)`: a pipeline of `EVALSHA`s to a single
    /// node, or one pipeline per master of a cluster's slots, each sent again by `EVAL` where
    /// the server lost the script. One answer per script, in order; the outer error is the
    /// connection's (nothing ran).
    async fn run_scripts(
        &self,
        scripts: &[(&ScopeKeys, &[String])],
    ) -> Result<Vec<Result<Value, FleetError>>, FleetError> {
        if scripts.is_empty() {
            return Ok(Vec::new());
        }
        let commands: Vec<Cmd> = scripts
            .iter()
            .map(|(keys, args)| self.evalsha(keys, args))
            .collect();
        let answered: Vec<Result<Result<Value, RedisError>, FleetError>> =
            match self.connection.connection().await? {
                Connection::Node(_) => self
                    .run_on_node(&commands)
                    .await?
                    .into_iter()
                    .map(Ok)
                    .collect(),
                Connection::Cluster(cluster) => {
                    let keys: Vec<&ScopeKeys> = scripts.iter().map(|(keys, _)| *keys).collect();
                    self.run_on_cluster(cluster, &commands, &keys).await
                }
            };
        let mut answers = Vec::with_capacity(scripts.len());
        for ((keys, args), answer) in scripts.iter().zip(answered) {
            answers.push(match answer {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(error)) if is_noscript(&error) => {
                    self.connection.query(&eval(keys, args), "EVAL").await
                }
                Ok(Err(error)) => Err(classify_keyed(error, keys.prefix())),
                Err(error) => Err(error),
            });
        }
        Ok(answers)
    }

    /// Runs `commands` as one pipeline on the store's single node: one result per command (a
    /// server error inner); the outer error is the connection's.
    async fn run_on_node(
        &self,
        commands: &[Cmd],
    ) -> Result<Vec<Result<Value, RedisError>>, FleetError> {
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for command in commands {
            pipe.add_command(command.clone());
        }
        let mut answers = self.connection.pipeline(&pipe).await?.into_iter();
        Ok(commands
            .iter()
            .map(|_| {
                answers.next().unwrap_or_else(|| {
                    Err(RedisError::from((
                        ErrorKind::Parse,
                        "the pipeline returned fewer replies than commands",
                    )))
                })
            })
            .collect())
    }

    /// Runs `commands` (one per scope of `keys`) on a cluster: one pipeline per master of the
    /// scopes' slots (the slot map read first if a pipeline failed since), a scope alone where
    /// its pipeline was refused lately. One result per command: the server's answer (its error
    /// inner), or the error of the scope's connection or pipeline.
    async fn run_on_cluster(
        &self,
        mut cluster: ClusterConnections,
        commands: &[Cmd],
        keys: &[&ScopeKeys],
    ) -> Vec<Result<Result<Value, RedisError>, FleetError>> {
        let timeout = self.connection.options().command_timeout;
        let needs_map = self.connection.lock().grouping.needs_map();
        if needs_map && let Ok(Ok(map)) = tokio::time::timeout(timeout, cluster.slot_map()).await {
            self.connection.lock().grouping.set_map(map);
        }
        let slots: Vec<u16> = keys.iter().map(|keys| slot_of(keys.state())).collect();
        let groups = self.connection.lock().grouping.plan(&slots);
        let outcomes = cluster.run(commands, &slots, &groups, timeout).await;
        self.connection
            .lock()
            .grouping
            .note(&slots, &groups, &outcomes);
        outcomes
            .into_iter()
            .map(|outcome| match outcome {
                Outcome::Answered(answer) | Outcome::Redirected(answer) => {
                    self.connection.settle(Ok(answer), "EVALSHA")
                }
                Outcome::Refused(error) if is_topology_change(&error) => Err(FleetError::Server {
                    reason: format!(
                        "the cluster refused the pipeline this scope shared ({error}): its \
                         scripts may have run in part; the scope is synced alone next"
                    ),
                }),
                Outcome::Refused(error) => match self.connection.settle(Ok(Err(error)), "pipeline")
                {
                    Ok(answer) => Ok(answer),
                    Err(error) => Err(error),
                },
                Outcome::TimedOut => Err(self.connection.timeout("pipeline")),
            })
            .collect()
    }

    /// Reads a scope's state back (its `state` hash, `procs` hash and `seen` sorted set), every
    /// value checked: to inspect a fleet, and to compare the store with the model.
    pub async fn read_state(&self, keys: &ScopeKeys) -> Result<StoreState, FleetError> {
        let mut pipe = redis::pipe();
        pipe.cmd("HGETALL").arg(keys.state());
        pipe.cmd("HGETALL").arg(keys.procs());
        pipe.cmd("ZRANGE")
            .arg(keys.seen())
            .arg(0)
            .arg(-1)
            .arg("WITHSCORES");
        let answers = self.connection.pipeline(&pipe).await?;
        let mut pairs = Vec::with_capacity(3);
        for answer in answers {
            pairs.push(string_pairs(answer.map_err(classify)?)?);
        }
        let [state, procs, seen] = &pairs[..] else {
            return Err(FleetError::Server {
                reason: format!("{} replies to 3 reads", pairs.len()),
            });
        };
        Ok(decode_state(state, procs, seen)?)
    }

    fn evalsha(&self, keys: &ScopeKeys, args: &[String]) -> Cmd {
        let mut cmd = redis::cmd("EVALSHA");
        cmd.arg(&self.script_sha)
            .arg(3)
            .arg(&keys.all()[..])
            .arg(args);
        cmd
    }

    /// Runs the store script: `EVALSHA`, and `EVAL` (which caches the script again) if the
    /// server lost it.
    async fn run_script(&self, keys: &ScopeKeys, args: &[String]) -> Result<Value, FleetError> {
        match self
            .connection
            .request(&self.evalsha(keys, args), "EVALSHA")
            .await?
        {
            Ok(value) => Ok(value),
            Err(error) if is_noscript(&error) => {
                self.connection.query(&eval(keys, args), "EVAL").await
            }
            Err(error) => Err(classify_keyed(error, keys.prefix())),
        }
    }
}

/// The store script's last argument that makes a report a process's leave.
const LEAVE: &str = "leave";

/// The store script's answer to a leave: `{1, 2, removed}`.
fn decode_leave(value: Value) -> Result<bool, FleetError> {
    match value {
        Value::Array(items) => match items[..] {
            [Value::Int(1), Value::Int(2), Value::Int(removed @ (0 | 1))] => Ok(removed == 1),
            _ => Err(FleetError::Server {
                reason: format!("the store script answered a leave with {items:?}"),
            }),
        },
        other => Err(FleetError::Server {
            reason: format!("the store script answered a leave with {other:?}, not an array"),
        }),
    }
}

fn eval(keys: &ScopeKeys, args: &[String]) -> Cmd {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(STORE_SCRIPT).arg(3).arg(&keys.all()[..]).arg(args);
    cmd
}

/// Whether the server lost the script (flushed, restarted empty, failed over).
fn is_noscript(error: &RedisError) -> bool {
    matches!(error.kind(), ErrorKind::Server(ServerErrorKind::NoScript))
}

/// The error of a pipeline that returned fewer results than scopes.
fn missing_reply() -> FleetError {
    FleetError::Server {
        reason: "the pipeline returned fewer results than scopes".into(),
    }
}

fn decode_reply(value: Value, settings: &Settings, report: &Report) -> Result<Reply, FleetError> {
    let Value::Array(values) = value else {
        return Err(FleetError::Server {
            reason: format!("the store script returned {value:?}, not an array"),
        });
    };
    let items = values
        .into_iter()
        .map(reply_item)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Reply::decode(&items, settings, report)?)
}

fn reply_item(value: Value) -> Result<ReplyItem, FleetError> {
    match value {
        Value::Int(value) => Ok(ReplyItem::Int(value)),
        Value::BulkString(bytes) => {
            String::from_utf8(bytes)
                .map(ReplyItem::Text)
                .map_err(|_| FleetError::Server {
                    reason: "the store script returned bytes that are not UTF-8".into(),
                })
        }
        Value::SimpleString(text) => Ok(ReplyItem::Text(text)),
        other => Err(FleetError::Server {
            reason: format!("the store script returned {other:?} in its array"),
        }),
    }
}

/// A reply of field/value (or member/score) pairs as strings.
fn string_pairs(value: Value) -> Result<Vec<(String, String)>, FleetError> {
    let flat = match value {
        Value::Array(values) => values,
        Value::Map(pairs) => pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
        other => {
            return Err(FleetError::Server {
                reason: format!("a read returned {other:?}"),
            });
        }
    };
    let texts = flat
        .into_iter()
        .map(|value| match reply_item(value)? {
            ReplyItem::Text(text) => Ok(text),
            ReplyItem::Int(value) => Ok(value.to_string()),
        })
        .collect::<Result<Vec<_>, FleetError>>()?;
    Ok(texts
        .chunks_exact(2)
        .map(|pair| (pair[0].clone(), pair[1].clone()))
        .collect())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::time::Duration;

    use super::*;

    /// The commands a script runs (`redis.call('NAME'`), upper case.
    fn commands_of(script: &str) -> BTreeSet<String> {
        script
            .split("redis.call('")
            .skip(1)
            .filter_map(|rest| rest.split('\'').next())
            .map(str::to_ascii_uppercase)
            .collect()
    }

    #[test]
    fn the_access_check_runs_every_command_the_store_script_runs() {
        let store = commands_of(STORE_SCRIPT);
        assert!(
            !STORE_SCRIPT.contains("redis.pcall"),
            "commands_of reads redis.call only"
        );
        let listed: BTreeSet<String> = SCRIPT_COMMANDS.iter().map(|c| (*c).to_owned()).collect();
        assert_eq!(store, listed, "SCRIPT_COMMANDS lists what store.lua runs");
        assert_eq!(commands_of(ACCESS_CHECK_SCRIPT), listed);
        assert!(
            crate::fleet::keys::encode_scope(ACCESS_CHECK_TAG).expect("valid") != ACCESS_CHECK_TAG
        );
    }

    fn unused_port() -> u16 {
        std::net::TcpListener::bind(("127.0.0.1", 0))
            .and_then(|listener| listener.local_addr())
            .map(|address| address.port())
            .expect("a free port")
    }

    #[tokio::test]
    async fn rediss_urls_need_the_tls_feature() {
        let url = format!("rediss://127.0.0.1:{}/", unused_port());
        let options = StoreOptions::for_interval(Duration::from_secs(1));
        let error = RedisStore::connect(&url, options)
            .await
            .expect_err("nothing listens");
        if cfg!(feature = "fleet-tls") {
            assert!(matches!(error, FleetError::Unreachable { .. }), "{error}");
        } else {
            assert!(matches!(error, FleetError::InvalidUrl { .. }), "{error}");
            assert!(error.to_string().contains("fleet-tls"), "{error}");
        }
    }
}
