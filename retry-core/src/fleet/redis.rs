//! The store on Redis (or Valkey): one connection per process, the store script run by
//! `EVALSHA` (by `EVAL` when the server lost it), a connection timeout and a command timeout on
//! every call, and reconnection with jittered backoff.
//!
//! Hidden from the documentation: not part of the stable API. [`Fleet`](super::Fleet) uses it;
//! the repository's tests and tools reach it to drive the store directly.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, Cmd, ErrorKind, RedisError, ServerErrorKind, Value};
use tokio::time::Instant;

use super::error::FleetError;
use super::keys::ScopeKeys;
use super::protocol::{Reply, ReplyItem, Report, Settings, encode_args};
use super::reconnect::{Backoff, redact_url};
use super::state_codec::decode_state;
use super::store_state::StoreState;
use super::tls::StoreTls;

/// The store's step (`store.lua`), the same step as [`store_model`](super::store_model).
pub const STORE_SCRIPT: &str = include_str!("store.lua");

/// How a [`RedisStore`] waits and backs off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreOptions {
    /// How long a connection (TCP, TLS, `AUTH`, `SELECT`) may take.
    pub connect_timeout: Duration,
    /// How long a command (a sync, a pipeline of syncs, a read) may take.
    pub command_timeout: Duration,
    /// The first reconnection delay; it doubles with each failure, jittered.
    pub reconnect_base: Duration,
    /// The longest reconnection delay: one sync interval.
    pub reconnect_max: Duration,
}

impl StoreOptions {
    /// The options for a sync interval: both timeouts a quarter of it (a sync that fails then
    /// leaves three quarters of the interval before the next), reconnection from a twentieth
    /// of it up to all of it.
    ///
    /// ```
    /// use retry_core::fleet::redis::StoreOptions;
    /// use std::time::Duration;
    /// let options = StoreOptions::for_interval(Duration::from_secs(1));
    /// assert_eq!(options.command_timeout, Duration::from_millis(250));
    /// assert_eq!(options.reconnect_max, Duration::from_secs(1));
    /// ```
    pub fn for_interval(interval: Duration) -> Self {
        Self {
            connect_timeout: interval / 4,
            command_timeout: interval / 4,
            reconnect_base: interval / 20,
            reconnect_max: interval,
        }
    }
}

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
    client: Client,
    url: String,
    options: StoreOptions,
    script_sha: String,
    link: Mutex<Link>,
}

/// The connection, or when the next attempt to make one is due.
#[derive(Debug)]
struct Link {
    connection: Option<MultiplexedConnection>,
    backoff: Backoff,
}

impl RedisStore {
    /// Connects to the store at `url` (`redis://[user[:password]@]host[:port][/db]`, or
    /// `rediss://` with the `fleet-tls` feature) and loads the store script, so that a wrong
    /// URL, an unreachable server, a refused password and a server or user without scripting
    /// are errors here, at start-up.
    pub async fn connect(url: &str, options: StoreOptions) -> Result<Self, FleetError> {
        let store = Self::open(url, options)?;
        store.load_script().await?;
        Ok(store)
    }

    /// The store at `url`, not connected yet: only the URL is checked (its scheme, its
    /// syntax, TLS available for `rediss://`). The first call connects.
    pub fn open(url: &str, options: StoreOptions) -> Result<Self, FleetError> {
        Self::open_with_tls(url, options, &StoreTls::default())
    }

    /// [`open`](Self::open), with the TLS material a `rediss://` connection trusts and
    /// presents (checked here: bad PEM is an error naming the setting).
    pub(crate) fn open_with_tls(
        url: &str,
        options: StoreOptions,
        tls: &StoreTls,
    ) -> Result<Self, FleetError> {
        let client = open_client(url, tls)?;
        let script_sha = redis::Script::new(STORE_SCRIPT).get_hash().to_owned();
        Ok(Self {
            client,
            url: redact_url(url),
            options,
            script_sha,
            link: Mutex::new(Link {
                connection: None,
                backoff: Backoff::new(options.reconnect_base, options.reconnect_max),
            }),
        })
    }

    /// Connects if needed and loads the store script (`SCRIPT LOAD`): a refused password and
    /// a server or user without scripting are errors here.
    pub async fn load_script(&self) -> Result<(), FleetError> {
        let mut load = redis::cmd("SCRIPT");
        load.arg("LOAD").arg(STORE_SCRIPT);
        self.query(&load, "SCRIPT LOAD").await.map(drop)
    }

    /// The store's URL, without its password.
    pub fn url(&self) -> &str {
        &self.url
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

    /// Syncs several scopes in one round trip (a pipeline of `EVALSHA`s; those the server
    /// lost the script for are sent again by `EVAL`). One result per scope, in order; the
    /// outer error is the connection's (nothing was synced).
    pub async fn sync_many(
        &self,
        batch: &[(&ScopeKeys, &Settings, &Report)],
    ) -> Result<Vec<Result<Reply, FleetError>>, FleetError> {
        let mut args = Vec::with_capacity(batch.len());
        for (_, settings, report) in batch {
            args.push(encode_args(settings, report));
        }
        let mut pipe = redis::pipe();
        pipe.ignore_errors();
        for ((keys, _, _), args) in batch.iter().zip(&args) {
            if let Ok(args) = args {
                pipe.add_command(self.evalsha(keys, args));
            }
        }
        let sent = args.iter().filter(|args| args.is_ok()).count();
        let mut answers = if sent == 0 {
            Vec::new().into_iter()
        } else {
            self.pipeline(&pipe).await?.into_iter()
        };
        let mut results = Vec::with_capacity(batch.len());
        for ((keys, settings, report), args) in batch.iter().zip(args) {
            let args = match args {
                Ok(args) => args,
                Err(error) => {
                    results.push(Err(error.into()));
                    continue;
                }
            };
            let answer = answers.next().unwrap_or_else(|| {
                Err(RedisError::from((
                    ErrorKind::Parse,
                    "the pipeline returned fewer replies than commands",
                )))
            });
            let value = match answer {
                Err(error) if is_noscript(&error) => self.query(&eval(keys, &args), "EVAL").await,
                other => other.map_err(classify),
            };
            results.push(value.and_then(|value| decode_reply(value, settings, report)));
        }
        Ok(results)
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
        let answers = self.pipeline(&pipe).await?;
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
        match self.request(&self.evalsha(keys, args), "EVALSHA").await? {
            Ok(value) => Ok(value),
            Err(error) if is_noscript(&error) => self.query(&eval(keys, args), "EVAL").await,
            Err(error) => Err(classify(error)),
        }
    }

    /// Runs one command within the command timeout, connecting first if needed.
    async fn query(&self, cmd: &Cmd, operation: &'static str) -> Result<Value, FleetError> {
        self.request(cmd, operation).await?.map_err(classify)
    }

    /// Runs one command within the command timeout, connecting first if needed: the outer
    /// error is the connection's, the inner one the server's answer.
    async fn request(
        &self,
        cmd: &Cmd,
        operation: &'static str,
    ) -> Result<Result<Value, RedisError>, FleetError> {
        let mut connection = self.connection().await?;
        let answer = tokio::time::timeout(
            self.options.command_timeout,
            cmd.query_async::<Value>(&mut connection),
        )
        .await;
        self.settle(answer, operation)
    }

    /// Runs a pipeline within the command timeout, connecting first if needed; one result per
    /// command.
    async fn pipeline(
        &self,
        pipe: &redis::Pipeline,
    ) -> Result<Vec<Result<Value, RedisError>>, FleetError> {
        let mut connection = self.connection().await?;
        let answer = tokio::time::timeout(
            self.options.command_timeout,
            pipe.query_async::<Vec<Result<Value, RedisError>>>(&mut connection),
        )
        .await;
        self.settle(answer, "pipeline")?.map_err(classify)
    }

    /// The result of a command: a timeout or a broken connection drops the connection (the
    /// next call makes a new one) and is the outer error; the server's errors are inner.
    fn settle<T>(
        &self,
        answer: Result<Result<T, RedisError>, tokio::time::error::Elapsed>,
        operation: &'static str,
    ) -> Result<Result<T, RedisError>, FleetError> {
        match answer {
            Ok(Err(error)) if tls_failure(&error).is_some() => {
                self.drop_connection();
                Err(self.tls_error(&error))
            }
            Ok(Err(error))
                if error.is_io_error()
                    || error.is_connection_dropped()
                    || error.is_unrecoverable_error() =>
            {
                self.drop_connection();
                Err(FleetError::ConnectionLost {
                    url: self.url.clone(),
                    reason: error.to_string(),
                })
            }
            Ok(answer) => Ok(answer),
            Err(_) => {
                self.drop_connection();
                Err(FleetError::Timeout {
                    operation,
                    after: self.options.command_timeout,
                })
            }
        }
    }

    /// The live connection, or a new one if the last attempt's backoff is over.
    async fn connection(&self) -> Result<MultiplexedConnection, FleetError> {
        {
            let link = self.lock();
            if let Some(connection) = &link.connection {
                return Ok(connection.clone());
            }
            if let Some(retry_in) = link.backoff.wait_left(Instant::now()) {
                return Err(FleetError::Reconnecting { retry_in });
            }
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(None)
            .set_response_timeout(None);
        let attempt = tokio::time::timeout(
            self.options.connect_timeout,
            self.client
                .get_multiplexed_async_connection_with_config(&config),
        )
        .await;
        let mut link = self.lock();
        match attempt {
            Ok(Ok(connection)) => {
                link.backoff.succeeded();
                link.connection = Some(connection.clone());
                Ok(connection)
            }
            Ok(Err(error)) => {
                link.backoff.failed(Instant::now());
                Err(self.connect_error(error))
            }
            Err(_) => {
                link.backoff.failed(Instant::now());
                Err(FleetError::Unreachable {
                    url: self.url.clone(),
                    reason: format!(
                        "no connection within the connect timeout ({:?})",
                        self.options.connect_timeout
                    ),
                })
            }
        }
    }

    fn connect_error(&self, error: RedisError) -> FleetError {
        if tls_failure(&error).is_some() {
            return self.tls_error(&error);
        }
        let refused_credentials = error.kind() == ErrorKind::AuthenticationFailed
            || matches!(error.code(), Some("WRONGPASS" | "NOAUTH"));
        if refused_credentials {
            return FleetError::Authentication {
                url: self.url.clone(),
                reason: error.to_string(),
            };
        }
        match classify(error) {
            FleetError::Server { reason } => FleetError::Unreachable {
                url: self.url.clone(),
                reason,
            },
            other => other,
        }
    }

    fn tls_error(&self, error: &RedisError) -> FleetError {
        FleetError::Tls {
            url: self.url.clone(),
            reason: tls_failure(error).unwrap_or_else(|| error.to_string()),
        }
    }

    fn drop_connection(&self) {
        self.lock().connection = None;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn eval(keys: &ScopeKeys, args: &[String]) -> Cmd {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(STORE_SCRIPT).arg(3).arg(&keys.all()[..]).arg(args);
    cmd
}

/// A TLS failure inside `error` (the certificates need fixing), as its message.
fn tls_failure(error: &RedisError) -> Option<String> {
    #[cfg(feature = "fleet-tls")]
    return super::tls::failure(error);
    #[cfg(not(feature = "fleet-tls"))]
    {
        let _ = error;
        None
    }
}

/// The client for `url`, which must be `redis://` or (with `fleet-tls`) `rediss://`, with the
/// TLS material `tls` if any was given.
fn open_client(url: &str, material: &StoreTls) -> Result<Client, FleetError> {
    let shown = redact_url(url);
    let tls = url.starts_with("rediss://");
    if !(tls || url.starts_with("redis://")) {
        return Err(FleetError::InvalidUrl {
            reason: format!(
                "{shown:?} is not a Redis URL: write redis://host:port/ or rediss://host:port/"
            ),
        });
    }
    if tls && !cfg!(feature = "fleet-tls") {
        return Err(FleetError::InvalidUrl {
            reason: format!(
                "{shown:?} asks for TLS: enable retry-core's `fleet-tls` feature for rediss:// URLs"
            ),
        });
    }
    if material.is_set() {
        return material.client(url, &shown);
    }
    Client::open(url).map_err(|error| FleetError::InvalidUrl {
        reason: format!("{shown:?}: {error}"),
    })
}

/// A server error as a fleet error: refused scripting, refused credentials, or another.
fn classify(error: RedisError) -> FleetError {
    let reason = error.to_string();
    let detail = error.detail().unwrap_or_default().to_ascii_lowercase();
    let scripting_refused = matches!(error.kind(), ErrorKind::Server(ServerErrorKind::NoPerm))
        || (detail.contains("unknown command")
            && ["eval", "script"].iter().any(|name| detail.contains(name)));
    if scripting_refused {
        return FleetError::NoScripting { reason };
    }
    FleetError::Server { reason }
}

/// Whether the server lost the script (flushed, restarted empty, failed over).
fn is_noscript(error: &RedisError) -> bool {
    matches!(error.kind(), ErrorKind::Server(ServerErrorKind::NoScript))
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
    use super::*;

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

    #[test]
    fn a_script_error_names_what_is_missing() {
        let renamed = RedisError::from((
            ErrorKind::Server(ServerErrorKind::ResponseError),
            "An error was signalled by the server",
            "unknown command 'EVALSHA', with args beginning with: ".to_owned(),
        ));
        assert!(matches!(classify(renamed), FleetError::NoScripting { .. }));
        let other = RedisError::from((
            ErrorKind::Server(ServerErrorKind::ResponseError),
            "An error was signalled by the server",
            "unknown command 'FOO'".to_owned(),
        ));
        assert!(matches!(classify(other), FleetError::Server { .. }));
    }
}
