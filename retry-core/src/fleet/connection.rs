//! The connection to the store: one node's multiplexed connection, or a cluster's (redis-rs'
//! cluster client), made on demand and again after a failure with jittered backoff; every
//! command within the command timeout; redis-rs' errors told as fleet errors that say what to
//! check.

use std::sync::{Mutex, MutexGuard, PoisonError};

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Client, Cmd, ErrorKind, RedisError, ServerErrorKind, Value};
use tokio::time::Instant;

use super::address::StoreAddress;
use super::cluster::{ClusterClients, ClusterConnections, Grouping};
use super::error::FleetError;
use super::reconnect::Backoff;
use super::store_options::StoreOptions;
use super::tls::StoreTls;

/// The clients of a store, one node's or a cluster's (boxed: they differ in size by a few
/// hundred bytes, and are made once).
#[derive(Debug, Clone)]
enum Clients {
    Node(Box<Client>),
    Cluster(Box<ClusterClients>),
}

/// A live connection.
#[derive(Debug, Clone)]
pub(crate) enum Connection {
    /// To one node.
    Node(MultiplexedConnection),
    /// To a cluster's masters.
    Cluster(ClusterConnections),
}

/// The connection to a store: see the module's documentation.
#[derive(Debug)]
pub(crate) struct StoreConnection {
    clients: Clients,
    shown: String,
    options: StoreOptions,
    link: Mutex<Link>,
}

/// The connection, or when the next attempt to make one is due; a cluster's grouping.
#[derive(Debug)]
pub(crate) struct Link {
    connection: Option<Connection>,
    backoff: Backoff,
    /// How a cluster's syncs group their scopes (unused for one node).
    pub(crate) grouping: Grouping,
}

impl StoreConnection {
    /// The connection to the store at `address`, with the TLS material `tls`; connects
    /// nothing. Bad TLS material or an address redis-rs refuses is an error here.
    pub(crate) fn open(
        address: &StoreAddress,
        options: StoreOptions,
        tls: &StoreTls,
    ) -> Result<Self, FleetError> {
        let shown = address.shown();
        let invalid = |error: RedisError| FleetError::InvalidUrl {
            reason: format!("{shown:?}: {error}"),
        };
        if tls.is_set() && !address.uses_tls() {
            return Err(tls.without_tls_error(&shown));
        }
        tls.check()?;
        let clients = match address {
            StoreAddress::Node(url) => Clients::Node(Box::new(tls.client(url).map_err(invalid)?)),
            StoreAddress::Cluster(seeds) => {
                let clients = ClusterClients::open(seeds, tls, &options).map_err(invalid)?;
                Clients::Cluster(Box::new(clients))
            }
        };
        Ok(Self {
            clients,
            shown,
            options,
            link: Mutex::new(Link {
                connection: None,
                backoff: Backoff::new(options.reconnect_base, options.reconnect_max),
                grouping: Grouping::default(),
            }),
        })
    }

    /// The store's address, without its password.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// The timeouts and backoff.
    pub(crate) fn options(&self) -> &StoreOptions {
        &self.options
    }

    /// Runs one command within the command timeout, connecting first if needed (a cluster
    /// routes it to its slot's master, following redirections): the outer error is the
    /// connection's, the inner one the server's answer.
    pub(crate) async fn request(
        &self,
        cmd: &Cmd,
        operation: &'static str,
    ) -> Result<Result<Value, RedisError>, FleetError> {
        let connection = self.connection().await?;
        let answer = tokio::time::timeout(self.options.command_timeout, async move {
            match connection {
                Connection::Node(mut node) => cmd.query_async::<Value>(&mut node).await,
                Connection::Cluster(mut cluster) => cluster.query(cmd).await,
            }
        })
        .await;
        self.settle(answer, operation)
    }

    /// Runs one command within the command timeout: the server's error too is an error.
    pub(crate) async fn query(
        &self,
        cmd: &Cmd,
        operation: &'static str,
    ) -> Result<Value, FleetError> {
        self.request(cmd, operation).await?.map_err(classify)
    }

    /// Runs a pipeline within the command timeout, connecting first if needed (on a cluster,
    /// its commands must share a slot); one result per command.
    pub(crate) async fn pipeline(
        &self,
        pipe: &redis::Pipeline,
    ) -> Result<Vec<Result<Value, RedisError>>, FleetError> {
        let connection = self.connection().await?;
        let answer = tokio::time::timeout(self.options.command_timeout, async move {
            match connection {
                Connection::Node(mut node) => {
                    pipe.query_async::<Vec<Result<Value, RedisError>>>(&mut node)
                        .await
                }
                Connection::Cluster(mut cluster) => cluster.query_pipeline(pipe).await,
            }
        })
        .await;
        self.settle(answer, "pipeline")?.map_err(classify)
    }

    /// The result of a command: a timeout or a broken connection is the outer error, and drops
    /// a node's connection (the next call makes a new one; a cluster's client reconnects by
    /// itself); the server's errors are inner.
    pub(crate) fn settle<T>(
        &self,
        answer: Result<Result<T, RedisError>, tokio::time::error::Elapsed>,
        operation: &'static str,
    ) -> Result<Result<T, RedisError>, FleetError> {
        match answer {
            Ok(Err(error)) if tls_failure(&error).is_some() => {
                self.drop_node_connection();
                Err(self.tls_error(&error))
            }
            Ok(Err(error)) if error.kind() == ErrorKind::ClusterConnectionNotFound => {
                Err(FleetError::Unreachable {
                    url: self.shown.clone(),
                    reason: error.to_string(),
                })
            }
            Ok(Err(error))
                if error.is_io_error()
                    || error.is_connection_dropped()
                    || error.is_unrecoverable_error() =>
            {
                self.drop_node_connection();
                Err(FleetError::ConnectionLost {
                    url: self.shown.clone(),
                    reason: error.to_string(),
                })
            }
            Ok(answer) => Ok(answer),
            Err(_) => {
                self.drop_node_connection();
                Err(self.timeout(operation))
            }
        }
    }

    /// The error of `operation` not answered within the command timeout.
    pub(crate) fn timeout(&self, operation: &'static str) -> FleetError {
        FleetError::Timeout {
            operation,
            after: self.options.command_timeout,
        }
    }

    /// The live connection, or a new one if the last attempt's backoff is over.
    pub(crate) async fn connection(&self) -> Result<Connection, FleetError> {
        {
            let link = self.lock();
            if let Some(connection) = &link.connection {
                return Ok(connection.clone());
            }
            if let Some(retry_in) = link.backoff.wait_left(Instant::now()) {
                return Err(FleetError::Reconnecting { retry_in });
            }
        }
        let attempt = tokio::time::timeout(self.options.connect_timeout, self.connect()).await;
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
                    url: self.shown.clone(),
                    reason: format!(
                        "no connection within the connect timeout ({:?})",
                        self.options.connect_timeout
                    ),
                })
            }
        }
    }

    async fn connect(&self) -> Result<Connection, RedisError> {
        match &self.clients {
            Clients::Node(client) => {
                let config = AsyncConnectionConfig::new()
                    .set_connection_timeout(None)
                    .set_response_timeout(None);
                client
                    .get_multiplexed_async_connection_with_config(&config)
                    .await
                    .map(Connection::Node)
            }
            Clients::Cluster(clients) => clients.connect().await.map(Connection::Cluster),
        }
    }

    /// A connection that could not be made, as the fleet error saying what to check.
    fn connect_error(&self, error: RedisError) -> FleetError {
        if tls_failure(&error).is_some() {
            return self.tls_error(&error);
        }
        if let Some(refused) = self.credentials_refused(&error) {
            return refused;
        }
        match classify(error) {
            FleetError::Server { reason } => FleetError::Unreachable {
                url: self.shown.clone(),
                reason,
            },
            other => other,
        }
    }

    /// `error` as an authentication error, if the store refused the URL's credentials or asks
    /// for some the URL does not give: what to write.
    pub(crate) fn credentials_refused(&self, error: &RedisError) -> Option<FleetError> {
        let code = error.code();
        let reason = if code == Some("NOAUTH") {
            format!(
                "{error}: the store asks for a password and the URL gives none (write \
                 redis://:<password>@host:port/ for the default user, or \
                 redis://<user>:<password>@host:port/ for an ACL user)"
            )
        } else if error.kind() == ErrorKind::AuthenticationFailed || code == Some("WRONGPASS") {
            format!("{error}: check the URL's user and password")
        } else {
            return None;
        };
        Some(FleetError::Authentication {
            url: self.shown.clone(),
            reason,
        })
    }

    fn tls_error(&self, error: &RedisError) -> FleetError {
        FleetError::Tls {
            url: self.shown.clone(),
            reason: tls_failure(error).unwrap_or_else(|| error.to_string()),
        }
    }

    /// Drops one node's connection (the next command makes a new one); a cluster's client
    /// reconnects to its masters by itself.
    fn drop_node_connection(&self) {
        let mut link = self.lock();
        if matches!(link.connection, Some(Connection::Node(_))) {
            link.connection = None;
        }
    }

    /// The link, for a cluster's grouping.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(PoisonError::into_inner)
    }
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

/// A server error as a fleet error: refused scripting, or another.
pub(crate) fn classify(error: RedisError) -> FleetError {
    let reason = error.to_string();
    let detail = error.detail().unwrap_or_default().to_ascii_lowercase();
    let refused = matches!(error.kind(), ErrorKind::Server(ServerErrorKind::NoPerm));
    let scripting_refused = (refused && !refuses_keys(&error))
        || (detail.contains("unknown command")
            && ["eval", "script"].iter().any(|name| detail.contains(name)));
    if scripting_refused {
        return FleetError::NoScripting { reason };
    }
    FleetError::Server { reason }
}

/// A server error of a script on the keys under `prefix`: refused keys or commands on them,
/// refused scripting, or another.
pub(crate) fn classify_keyed(error: RedisError, prefix: &str) -> FleetError {
    if refuses_keys(&error) || refuses_script_commands(&error) {
        return FleetError::NoKeyAccess {
            prefix: prefix.to_owned(),
            reason: error.to_string(),
        };
    }
    classify(error)
}

/// Whether the ACL refused the command's keys (`NOPERM ... access one of the keys ...`), not
/// the command.
fn refuses_keys(error: &RedisError) -> bool {
    matches!(error.kind(), ErrorKind::Server(ServerErrorKind::NoPerm))
        && error
            .detail()
            .is_some_and(|detail| detail.to_ascii_lowercase().contains("key"))
}

/// Whether the ACL refused a command the script ran (Redis 7.0: "The user executing the script
/// can't run this command"; later: `NOPERM` naming a command other than the scripting ones).
fn refuses_script_commands(error: &RedisError) -> bool {
    let text = error.to_string().to_ascii_lowercase();
    let in_script = text.contains("user executing the script");
    let other_command = matches!(error.kind(), ErrorKind::Server(ServerErrorKind::NoPerm))
        && text.contains("command")
        && !["'eval", "'evalsha", "'script"]
            .iter()
            .any(|name| text.contains(name));
    in_script || other_command
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_refused_key_is_told_from_a_refused_command() {
        let keys = RedisError::from((
            ErrorKind::Server(ServerErrorKind::NoPerm),
            "An error was signalled by the server",
            "this user has no permissions to access one of the keys used as arguments".to_owned(),
        ));
        let error = classify_keyed(keys, "shop:");
        assert!(matches!(&error, FleetError::NoKeyAccess { prefix, .. } if prefix == "shop:"));
        assert!(error.to_string().contains("~shop:*"), "{error}");
        let command = RedisError::from((
            ErrorKind::Server(ServerErrorKind::NoPerm),
            "An error was signalled by the server",
            "this user has no permissions to run the 'evalsha' command".to_owned(),
        ));
        assert!(matches!(
            classify_keyed(command, "shop:"),
            FleetError::NoScripting { .. }
        ));
        let in_script = RedisError::from((
            ErrorKind::Server(ServerErrorKind::ResponseError),
            "An error was signalled by the server",
            "The user executing the script can't run this command or subcommand script: \
             d9ee, on @user_script:115."
                .to_owned(),
        ));
        let error = classify_keyed(in_script, "shop:");
        assert!(matches!(error, FleetError::NoKeyAccess { .. }), "{error}");
        assert!(error.to_string().contains("+hgetall"), "{error}");
    }
}
