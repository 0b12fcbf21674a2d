//! Attaching scopes to a fleet on Redis: [`Fleet::connect`] checks the store's URL,
//! [`FleetBuilder::start`] connects and starts the process's sync task, and [`Fleet::attach`]
//! turns a scope into a fleet scope.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::AbortHandle;

use super::address::StoreAddress;
use super::error::FleetError;
use super::events;
use super::keys::{DEFAULT_PREFIX, ScopeKeys, check_prefix};
use super::options::FleetOptions;
use super::protocol::ProcessId;
use super::redis::{RedisStore, StoreOptions};
use super::sync::Syncer;
use super::tls::StoreTls;
use crate::scope::Scope;

/// A process's membership of a fleet: a connection to the fleet's store (Redis or Valkey) and
/// the task that syncs the process's fleet scopes with it, once per sync interval.
///
/// Attach scopes at start-up, by name ([`attach`](Self::attach): the process-wide scope of that
/// name, which `#[retryable(scope = "...")]`, [`strategy_for`](crate::strategy_for) and
/// `RetryLayer` on it declare, before or after the declaration) or as a scope you made
/// ([`attach_scope`](Self::attach_scope)). Keep the `Fleet` (or a clone) for as long as the
/// process should sync: dropping the last one stops the task, and its scopes go back to local
/// limits (at the safe share of the last fleet figures).
///
/// ```no_run
/// use retry_core::fleet::Fleet;
/// use retry_core::retryable;
/// use std::time::Duration;
///
/// #[derive(Debug, thiserror::Error, retry_core::RetryInfo)]
/// #[error("unavailable")]
/// #[retry(transient)]
/// struct Unavailable;
///
/// #[retryable(scope = "inventory")]
/// async fn stock(item: u32) -> Result<u32, Unavailable> {
///     Ok(item)
/// }
///
/// # async fn start() -> Result<(), retry_core::fleet::FleetError> {
/// let fleet = Fleet::connect("redis://127.0.0.1:6379/")?
///     .prefix("shop:")
///     .sync_interval(Duration::from_millis(500))
///     .start()
///     .await?;
/// // The scope `#[retryable(scope = "inventory")]` declares, with the attribute's settings.
/// fleet.attach("inventory")?;
/// stock(7).await.unwrap(); // decided locally, as always; synced in the background
/// # Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct Fleet {
    inner: Arc<FleetInner>,
}

/// The shared part of a [`Fleet`]: dropped with the last clone, it stops the task.
#[derive(Debug)]
struct FleetInner {
    syncer: Arc<Syncer>,
    task: AbortHandle,
    prefix: String,
    options: FleetOptions,
    process: ProcessId,
}

impl FleetInner {
    /// Stops the sync task and detaches the scopes; the keys of those it synced.
    fn stop(&self) -> Vec<ScopeKeys> {
        self.task.abort();
        self.syncer.detach_all()
    }
}

impl Drop for FleetInner {
    /// Stops syncing, and leaves the fleets of the scopes it synced from a task on the current
    /// tokio runtime, if there is one (see [`Fleet::shutdown`]).
    fn drop(&mut self) {
        let left = self.stop();
        if left.is_empty() {
            return;
        }
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let syncer = Arc::clone(&self.syncer);
            runtime.spawn(async move { syncer.leave(&left).await });
        }
    }
}

/// A [`Fleet`] to start: the store's URL, checked, and the options.
#[derive(Debug, Clone)]
#[must_use = "a FleetBuilder does nothing until `start` is awaited"]
pub struct FleetBuilder {
    address: StoreAddress,
    prefix: String,
    options: FleetOptions,
    command_timeout: Option<Duration>,
    process: ProcessId,
    tls: StoreTls,
}

impl Fleet {
    /// A fleet whose store is at `url`: one node, `redis://[user[:password]@]host[:port][/db]`
    /// (`rediss://` for TLS, with the `fleet-tls` feature), or a Redis Cluster,
    /// `redis-cluster://[user[:password]@]host:port[?node=host:port&node=host:port]`
    /// (`rediss-cluster://` for TLS): the URL's host and each `node` are seed nodes, the
    /// cluster client finds the others (the spelling fred, the other async Redis client of the
    /// Rust ecosystem, reads). AUTH and ACL users are given in the URL. Only the URL is
    /// checked here (an error says what to write instead); nothing is connected until
    /// [`start`](FleetBuilder::start).
    ///
    /// Over `rediss://` the server's certificate must chain to the system's root certificates,
    /// or to those given with
    /// [`tls_root_certificates`](FleetBuilder::tls_root_certificates) (a private CA, as
    /// in-VPC and managed Redis often use); a server that asks for client certificates gets
    /// the one given with [`tls_client_certificate`](FleetBuilder::tls_client_certificate).
    ///
    /// ```
    /// use retry_core::fleet::{Fleet, FleetError};
    /// assert!(Fleet::connect("redis://app:secret@127.0.0.1:6379/0").is_ok());
    /// let cluster = "redis-cluster://app:secret@10.0.0.1:7000?node=10.0.0.2:7000";
    /// assert!(Fleet::connect(cluster).is_ok());
    /// let error = Fleet::connect("http://127.0.0.1:6379/").unwrap_err();
    /// assert!(matches!(error, FleetError::InvalidUrl { .. }));
    /// ```
    pub fn connect(url: &str) -> Result<FleetBuilder, FleetError> {
        Self::builder(StoreAddress::parse(url)?)
    }

    /// A fleet whose store is the Redis Cluster of the nodes at `seeds`: `redis://host:port/`
    /// (`rediss://` for TLS) each, with the same user and password; one is enough, the cluster
    /// client finds the others. As [`connect`](Self::connect) with a `redis-cluster://` URL.
    ///
    /// ```
    /// use retry_core::fleet::Fleet;
    /// let builder = Fleet::connect_cluster(["redis://10.0.0.1:7000/", "redis://10.0.0.2:7000/"]);
    /// assert!(builder.is_ok());
    /// assert!(Fleet::connect_cluster(Vec::<String>::new()).is_err());
    /// ```
    pub fn connect_cluster<S: AsRef<str>>(
        seeds: impl IntoIterator<Item = S>,
    ) -> Result<FleetBuilder, FleetError> {
        Self::builder(StoreAddress::cluster(seeds)?)
    }

    fn builder(address: StoreAddress) -> Result<FleetBuilder, FleetError> {
        // Opening the clients checks the addresses and connects nothing.
        RedisStore::open_address(
            address.clone(),
            StoreOptions::for_interval(Duration::from_secs(1)),
            &StoreTls::default(),
        )?;
        Ok(FleetBuilder {
            address,
            prefix: DEFAULT_PREFIX.to_owned(),
            options: FleetOptions::default(),
            command_timeout: None,
            process: ProcessId(fastrand::u64(..)),
            tls: StoreTls::default(),
        })
    }

    /// Attaches the process-wide scope called `name` to the fleet, before or after its
    /// declaration: its settings are those of the declaration that made it
    /// (`#[retryable(scope = "...")]`, [`strategy_for`](crate::strategy_for), `RetryLayer` on
    /// such a strategy, [`Scope::named`]); the fleet never asks for them again. A scope
    /// already declared is linked now (calls already using it are upgraded in place); one
    /// declared later is linked at the first sync after its declaration (until then, and until
    /// the first lease, it runs on its local limits). From then on its calls share the fleet's
    /// retry budget and limiter.
    ///
    /// A scope the fleet alone holds (no strategy, layer or handle of the program's) for its
    /// `quota_window` is forgotten, and the fleet stops syncing it; the name stays attached, and
    /// a scope declared under it again is linked again. [`scopes`](Self::scopes) lists the
    /// scopes synced.
    ///
    /// Errors: a name the store's keys cannot hold (empty, or over 200 bytes: any other name is
    /// encoded), a name attached already; for a scope already declared, a configuration a
    /// fleet cannot share (a fixed quota) or a scope another `Fleet` syncs. The same problems
    /// met when a scope is declared after its name was attached are logged as an ERROR event,
    /// and the scope runs on its local limits.
    ///
    /// ```no_run
    /// # async fn demo(fleet: retry_core::fleet::Fleet) -> Result<(), retry_core::fleet::FleetError> {
    /// use retry_core::{RetryConfig, strategy_for};
    /// fleet.attach("search")?; // before the declaration...
    /// let search = strategy_for(RetryConfig::default(), "search"); // ...which sets it up
    /// # Ok(()) }
    /// ```
    pub fn attach(&self, name: &str) -> Result<(), FleetError> {
        let keys = ScopeKeys::new(&self.inner.prefix, name)?;
        self.inner.syncer.attach_name(keys)
    }

    /// Attaches `scope` (made with [`Scope::new`] or [`Scope::with_clock`], or a named one) to
    /// the fleet under its name, with the configuration it was made from. Dropped by the
    /// program (the fleet alone holding it) for its `quota_window`, it is detached.
    ///
    /// ```no_run
    /// # async fn demo(fleet: retry_core::fleet::Fleet) -> Result<(), retry_core::fleet::FleetError> {
    /// use retry_core::{RetryConfig, Scope, StandardStrategy};
    /// let config = RetryConfig::default();
    /// let scope = Scope::new("search", &config);
    /// fleet.attach_scope(&scope)?;
    /// let strategy = StandardStrategy::builder(config).scope(scope).build();
    /// # Ok(()) }
    /// ```
    pub fn attach_scope(&self, scope: &Scope) -> Result<(), FleetError> {
        let keys = ScopeKeys::new(&self.inner.prefix, scope.name())?;
        self.inner.syncer.attach_scope(scope, keys)
    }

    /// The names of the scopes the fleet syncs now, sorted: attached and declared, not
    /// forgotten.
    pub fn scopes(&self) -> Vec<String> {
        self.inner.syncer.synced_names()
    }

    /// This process's identity in the fleet (random unless set with
    /// [`FleetBuilder::process_id`]).
    pub fn process_id(&self) -> ProcessId {
        self.inner.process
    }

    /// The options the fleet's scopes are synced with.
    pub fn options(&self) -> &FleetOptions {
        &self.inner.options
    }

    /// The store's URL, without its password (a cluster as one `redis-cluster://` URL).
    pub fn url(&self) -> &str {
        self.inner.syncer.store().url()
    }

    /// Shuts this process's fleet down cleanly: stops syncing, returns every scope to its
    /// local limits, and tells the store the process leaves each scope's fleet, so that its
    /// share of the fleet's rate goes to the others at their next sync (within one sync
    /// interval). A process that stops syncing without it (it crashed, or its store was
    /// unreachable) keeps its share for its lease, then hands it on over about another (the
    /// store cannot tell it from a process whose writes fail and that still sends).
    ///
    /// Dropping the last clone of a `Fleet` does the same from a task on the current tokio
    /// runtime; await this where the runtime may end first (at the end of `main`). Other
    /// clones stop syncing too. The error is the store's, if it could not be told (within the
    /// command timeout): the scopes are detached all the same.
    ///
    /// ```no_run
    /// # async fn demo(fleet: retry_core::fleet::Fleet) -> Result<(), retry_core::fleet::FleetError> {
    /// // ... serve; then, on SIGTERM:
    /// fleet.shutdown().await?;
    /// # Ok(()) }
    /// ```
    pub async fn shutdown(self) -> Result<(), FleetError> {
        let left = self.inner.stop();
        self.inner.syncer.leave(&left).await
    }

    /// The last error a sync met (of any scope), kept after later syncs succeed; `None` if
    /// none failed yet. [`FleetStats::last_error`](super::FleetStats::last_error) has its kind
    /// per scope.
    pub fn last_error(&self) -> Option<FleetError> {
        self.inner.syncer.last_error()
    }
}

impl FleetBuilder {
    /// The prefix of every key of the fleet's scopes (default `retry:`): 1 to 200 bytes of
    /// letters, digits and `. _ : -` (checked by [`start`](Self::start)).
    pub fn prefix(mut self, prefix: &str) -> Self {
        self.prefix = prefix.to_owned();
        self
    }

    /// How often the process syncs (default 1 s; from 1 ms to 1 h, whole milliseconds). Every
    /// process of a fleet must use the same.
    ///
    /// The interval is the fleet's round trip: a longer one lowers the store's load (one
    /// command per process per interval), and the store hears of throttles, and the processes
    /// of a new rate, that much later. Past a limit the fleet measured, once its probe is
    /// over, its rate grows by as much per interval as at the default 1 s: at a 5 s sync,
    /// five times slower.
    pub fn sync_interval(mut self, interval: Duration) -> Self {
        self.options.sync_interval = interval;
        self
    }

    /// How long a lease lasts after the sync that granted it (default 3 sync intervals; at
    /// least one, at most a day). Every process of a fleet must use the same.
    pub fn lease_ttl(mut self, lease: Duration) -> Self {
        self.options.lease_ttl = Some(lease);
        self
    }

    /// The fleet limiter's multiplicative decrease on a throttle (default
    /// [`DEFAULT_BETA`](super::DEFAULT_BETA); strictly between 0 and 1). Every process of a
    /// fleet must use the same.
    pub fn beta(mut self, beta: f64) -> Self {
        self.options.beta = beta;
        self
    }

    /// How long a connection or a sync may take before it counts as failed (default a quarter
    /// of the sync interval; at most one interval).
    pub fn command_timeout(mut self, timeout: Duration) -> Self {
        self.command_timeout = Some(timeout);
        self
    }

    /// The process's identity in the fleet (default: random). Two processes must never share
    /// one.
    pub fn process_id(mut self, process: ProcessId) -> Self {
        self.process = process;
        self
    }

    /// Trusts the certificates of `pem` (one or more PEM `CERTIFICATE` blocks: a private CA,
    /// or a bundle) for the store's certificate, instead of the system's root certificates.
    /// For `rediss://` URLs; checked by [`start`](Self::start): text without a PEM
    /// certificate, a certificate that does not parse, or a `redis://` URL (which would ignore
    /// it) is an [`InvalidSetting`](FleetError::InvalidSetting) naming
    /// `tls_root_certificates`. A server whose certificate does not chain to them (or does not
    /// name the URL's host) fails the start with [`FleetError::Tls`].
    ///
    /// ```no_run
    /// use retry_core::fleet::Fleet;
    ///
    /// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
    /// // The CA that signed the store's certificate (for ElastiCache or a VPC's Redis with a
    /// // private CA: the CA's certificate, PEM).
    /// let ca = std::fs::read("/etc/redis/ca.pem")?;
    /// let fleet = Fleet::connect("rediss://app:secret@redis.internal:6380/")?
    ///     .tls_root_certificates(ca)
    ///     .start()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "fleet-tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "fleet-tls")))]
    pub fn tls_root_certificates(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.tls.root_certificates = Some(pem.into());
        self
    }

    /// Presents a client certificate to the store (mutual TLS: Redis's `tls-auth-clients
    /// yes`): `certificate_chain` is PEM, the client's certificate first (then any
    /// intermediates), `private_key` its PEM key (PKCS #8, PKCS #1 or SEC1). For `rediss://`
    /// URLs; checked by [`start`](Self::start): a chain or key that does not parse, or a key
    /// that is not the certificate's, is an [`InvalidSetting`](FleetError::InvalidSetting)
    /// naming `tls_client_certificate`.
    ///
    /// ```no_run
    /// use retry_core::fleet::Fleet;
    ///
    /// # async fn start() -> Result<(), Box<dyn std::error::Error>> {
    /// let fleet = Fleet::connect("rediss://redis.internal:6380/")?
    ///     .tls_root_certificates(std::fs::read("/etc/redis/ca.pem")?)
    ///     .tls_client_certificate(
    ///         std::fs::read("/etc/app/client.pem")?,
    ///         std::fs::read("/etc/app/client.key")?,
    ///     )
    ///     .start()
    ///     .await?;
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "fleet-tls")]
    #[cfg_attr(docsrs, doc(cfg(feature = "fleet-tls")))]
    pub fn tls_client_certificate(
        mut self,
        certificate_chain: impl Into<Vec<u8>>,
        private_key: impl Into<Vec<u8>>,
    ) -> Self {
        self.tls.client_identity = Some(super::tls::ClientIdentity {
            certificate_chain: certificate_chain.into(),
            private_key: private_key.into(),
        });
        self
    }

    /// Checks the options, connects to the store (within the connect timeout; `AUTH` first),
    /// sends `PING`, loads the store script, checks that the user may run the script's commands
    /// on the prefix's keys, and starts the sync task on the current tokio runtime.
    ///
    /// What needs fixing is an error naming the fix, since a fleet scope must never stay local
    /// silently: a refused user or password, or a store asking for a password the URL does not
    /// give ([`Authentication`](FleetError::Authentication)); a failed TLS handshake (an
    /// untrusted server certificate, a refused client certificate), or a scheme that does not
    /// match the port, `rediss://` to plain text or `redis://` to TLS
    /// ([`Tls`](FleetError::Tls): told from an unreachable store by one more connection, within
    /// the connect timeout again); a user or store that does not run scripts
    /// ([`NoScripting`](FleetError::NoScripting)); a user the ACL refuses the prefix's keys or
    /// the script's commands on them ([`NoKeyAccess`](FleetError::NoKeyAccess)). A store that
    /// cannot be reached now is not: a warning is logged, the fleet starts, and its scopes run
    /// on their local limits ([`FleetStatus::Connecting`](super::FleetStatus::Connecting))
    /// until the store answers (the task reconnects with jittered backoff).
    pub async fn start(self) -> Result<Fleet, FleetError> {
        check_prefix(&self.prefix)?;
        let interval_ms = self.options.sync_interval_ms()?;
        self.options.lease_ttl_ms()?;
        self.options.beta_ppm()?;
        let interval = Duration::from_millis(interval_ms);
        let mut store_options = StoreOptions::for_interval(interval);
        if let Some(timeout) = self.command_timeout {
            if timeout.is_zero() || timeout > interval {
                return Err(FleetError::InvalidSetting {
                    setting: "command_timeout",
                    reason: format!(
                        "{timeout:?} is not above zero and at most the sync interval \
                         ({interval:?})"
                    ),
                });
            }
            store_options.command_timeout = timeout;
            store_options.connect_timeout = timeout;
        }
        let store = RedisStore::open_address(self.address, store_options, &self.tls)?;
        match store.check_at_start(&self.prefix).await {
            Ok(()) => {}
            Err(
                error @ (FleetError::Unreachable { .. }
                | FleetError::Timeout { .. }
                | FleetError::ConnectionLost { .. }
                | FleetError::Reconnecting { .. }),
            ) => events::unreachable_at_start(store.url(), &error),
            Err(error) => return Err(error),
        }
        let syncer = Arc::new(Syncer::new(store, interval, self.options, self.process));
        let task = tokio::spawn(Arc::clone(&syncer).run()).abort_handle();
        Ok(Fleet {
            inner: Arc::new(FleetInner {
                syncer,
                task,
                prefix: self.prefix,
                options: self.options,
                process: self.process,
            }),
        })
    }
}
