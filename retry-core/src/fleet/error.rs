//! What can go wrong in fleet mode: a value outside the protocol's bounds, a bad URL or key, and
//! the store's failures.

use std::fmt;
use std::time::Duration;

/// A value outside the fleet protocol's bounds: in a report or settings about to be sent, or in
/// what the store answered (a corrupt or hostile store). Names the field, its value and what
/// it must be.
///
/// ```
/// use retry_core::fleet::protocol::Settings;
/// let settings = Settings { window_ms: 0, ..Settings::example() };
/// let error = settings.check().unwrap_err();
/// assert_eq!(error.field(), "window_ms");
/// assert_eq!(error.to_string(), "fleet protocol: window_ms is 0, must be 1..=3600000");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError {
    field: &'static str,
    value: String,
    expected: String,
}

impl ProtocolError {
    pub(crate) fn new(field: &'static str, value: impl fmt::Display, expected: &str) -> Self {
        Self {
            field,
            value: value.to_string(),
            expected: expected.to_owned(),
        }
    }

    /// The field that is out of bounds.
    pub fn field(&self) -> &'static str {
        self.field
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fleet protocol: {} is {}, must be {}",
            self.field, self.value, self.expected
        )
    }
}

impl std::error::Error for ProtocolError {}

/// Why a fleet operation failed. Every message says what to check; none holds a password.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum FleetError {
    /// The store's address cannot be used (not a `redis://`, `rediss://`, `redis-cluster://`
    /// or `rediss-cluster://` URL, TLS without the `fleet-tls` feature, or cluster seed nodes
    /// that disagree).
    InvalidUrl {
        /// What is wrong, and what to write instead.
        reason: String,
    },
    /// A scope name or key prefix that the store's keys cannot hold.
    InvalidKey {
        /// What is wrong, and what to write instead.
        reason: String,
    },
    /// No connection to the store within the connection timeout, or the connection refused.
    Unreachable {
        /// The store's URL, without its password.
        url: String,
        /// The cause.
        reason: String,
    },
    /// The connection broke while a command was under way (the server closed it, was killed
    /// or restarted): the command may or may not have run; the connection is made anew at the
    /// next call.
    ConnectionLost {
        /// The store's URL, without its password.
        url: String,
        /// The cause.
        reason: String,
    },
    /// The store did not answer within the command timeout (a paused or overloaded server);
    /// the connection is dropped and made anew at the next call.
    Timeout {
        /// What was waited for.
        operation: &'static str,
        /// The timeout that fired.
        after: Duration,
    },
    /// The store refused the URL's user or password, or asks for a password the URL does not
    /// give.
    Authentication {
        /// The store's URL, without its password.
        url: String,
        /// The store's message, and what to write.
        reason: String,
    },
    /// The TLS handshake with the store failed: its certificate does not chain to the roots
    /// the client trusts (the system's, or those given with
    /// [`FleetBuilder::tls_root_certificates`](super::FleetBuilder::tls_root_certificates)),
    /// does not name the URL's host, or expired; or the store refused the client certificate.
    /// Or the URL's scheme does not match the port: `rediss://` to a port that speaks plain
    /// text, `redis://` to one that expects TLS.
    Tls {
        /// The store's URL, without its password.
        url: String,
        /// The TLS error.
        reason: String,
    },
    /// The store does not run scripts for this user (`EVAL`/`EVALSHA` refused by its ACL,
    /// renamed or disabled): fleet mode needs `+@scripting`.
    NoScripting {
        /// The store's message.
        reason: String,
    },
    /// The store's ACL does not let the URL's user use the keys under the fleet's prefix, or
    /// run on them the commands the store script runs
    /// ([`SCRIPT_COMMANDS`](super::redis::SCRIPT_COMMANDS): Redis checks a script's commands
    /// against its user too): fleet mode needs `~<prefix>*` and those commands.
    NoKeyAccess {
        /// The key prefix.
        prefix: String,
        /// The store's message.
        reason: String,
    },
    /// A fleet setting out of its bounds (a sync interval, a lease, a beta), or a scope whose
    /// retry configuration a fleet cannot share.
    InvalidSetting {
        /// The setting.
        setting: &'static str,
        /// What is wrong, and what to write instead.
        reason: String,
    },
    /// The scope is already attached to a fleet that still syncs it.
    AlreadyAttached {
        /// The scope's name.
        scope: String,
    },
    /// Any other error the store returned.
    Server {
        /// The store's message.
        reason: String,
    },
    /// The store answered outside the protocol's bounds, or a report or settings are outside
    /// them.
    Protocol(ProtocolError),
    /// The last connection attempt failed and the next is not due yet (reconnects back off,
    /// with jitter, up to one sync interval).
    Reconnecting {
        /// How long until the next attempt is due.
        retry_in: Duration,
    },
}

impl fmt::Display for FleetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::InvalidUrl { reason } => write!(f, "fleet store URL: {reason}"),
            Self::InvalidKey { reason } => write!(f, "fleet key: {reason}"),
            Self::Unreachable { url, reason } => {
                write!(f, "fleet store {url} is unreachable: {reason}")
            }
            Self::Timeout { operation, after } => write!(
                f,
                "fleet store did not answer {operation} within {after:?} (paused, overloaded or \
                 cut off); the connection will be made anew"
            ),
            Self::Authentication { url, reason } => write!(
                f,
                "fleet store {url} did not accept the URL's credentials: {reason}"
            ),
            Self::Tls { url, reason } => {
                write!(f, "fleet store {url}: TLS handshake failed: {reason}")
            }
            Self::NoScripting { reason } => write!(
                f,
                "fleet store does not run scripts for this user ({reason}): fleet mode needs \
                 EVAL and EVALSHA (ACL category +@scripting)"
            ),
            Self::NoKeyAccess { prefix, reason } => {
                write!(
                    f,
                    "fleet store does not let this user use the keys under {prefix:?} \
                     ({reason}): grant the keys and the commands the store script runs on \
                     them with `ACL SETUSER <user> ~{prefix}*"
                )?;
                for command in super::redis::SCRIPT_COMMANDS {
                    write!(f, " +{}", command.to_ascii_lowercase())?;
                }
                write!(f, "`, or set the fleet's prefix to one the user may use")
            }
            Self::ConnectionLost { url, reason } => write!(
                f,
                "fleet store {url} closed the connection during a command ({reason}); it will be \
                 made anew"
            ),
            Self::InvalidSetting { setting, reason } => {
                write!(f, "fleet setting `{setting}`: {reason}")
            }
            Self::AlreadyAttached { scope } => write!(
                f,
                "scope {scope:?} is already attached to a fleet: attach it once per process (drop \
                 that `Fleet` first to attach it to another)"
            ),
            Self::Server { reason } => write!(f, "fleet store error: {reason}"),
            Self::Protocol(error) => error.fmt(f),
            Self::Reconnecting { retry_in } => write!(
                f,
                "fleet store unreachable at the last attempt; next attempt in {retry_in:?}"
            ),
        }
    }
}

impl FleetError {
    /// What kind of failure this is, without its details (what
    /// [`FleetStats::last_error`](super::FleetStats::last_error) keeps).
    ///
    /// ```
    /// use retry_core::fleet::{FleetError, FleetErrorKind};
    /// let error = FleetError::NoScripting { reason: "NOPERM".into() };
    /// assert_eq!(error.kind(), FleetErrorKind::NoScripting);
    /// ```
    pub fn kind(&self) -> FleetErrorKind {
        match self {
            Self::InvalidUrl { .. } => FleetErrorKind::InvalidUrl,
            Self::InvalidKey { .. } => FleetErrorKind::InvalidKey,
            Self::Unreachable { .. } => FleetErrorKind::Unreachable,
            Self::ConnectionLost { .. } => FleetErrorKind::ConnectionLost,
            Self::Timeout { .. } => FleetErrorKind::Timeout,
            Self::Authentication { .. } => FleetErrorKind::Authentication,
            Self::Tls { .. } => FleetErrorKind::Tls,
            Self::NoScripting { .. } => FleetErrorKind::NoScripting,
            Self::NoKeyAccess { .. } => FleetErrorKind::NoKeyAccess,
            Self::InvalidSetting { .. } => FleetErrorKind::InvalidSetting,
            Self::AlreadyAttached { .. } => FleetErrorKind::AlreadyAttached,
            Self::Server { .. } => FleetErrorKind::Server,
            Self::Protocol(_) => FleetErrorKind::Protocol,
            Self::Reconnecting { .. } => FleetErrorKind::Reconnecting,
        }
    }
}

/// The kind of a [`FleetError`], one per variant, without its details: small enough for
/// [`FleetStats`](super::FleetStats) to keep the last sync error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FleetErrorKind {
    /// [`FleetError::InvalidUrl`].
    InvalidUrl,
    /// [`FleetError::InvalidKey`].
    InvalidKey,
    /// [`FleetError::Unreachable`].
    Unreachable,
    /// [`FleetError::ConnectionLost`].
    ConnectionLost,
    /// [`FleetError::Timeout`].
    Timeout,
    /// [`FleetError::Authentication`].
    Authentication,
    /// [`FleetError::Tls`].
    Tls,
    /// [`FleetError::NoScripting`].
    NoScripting,
    /// [`FleetError::NoKeyAccess`].
    NoKeyAccess,
    /// [`FleetError::InvalidSetting`].
    InvalidSetting,
    /// [`FleetError::AlreadyAttached`].
    AlreadyAttached,
    /// [`FleetError::Server`].
    Server,
    /// [`FleetError::Protocol`].
    Protocol,
    /// [`FleetError::Reconnecting`].
    Reconnecting,
}

impl std::error::Error for FleetError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Protocol(error) => Some(error),
            _ => None,
        }
    }
}

impl From<ProtocolError> for FleetError {
    fn from(error: ProtocolError) -> Self {
        Self::Protocol(error)
    }
}
