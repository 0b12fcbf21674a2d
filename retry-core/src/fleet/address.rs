//! Where a fleet's store is: one Redis node (`redis://`, `rediss://`), or a Redis Cluster given
//! by its seed nodes, as a list of node URLs or as one `redis-cluster://` (`rediss-cluster://`)
//! URL. The cluster URL is spelled as fred (the other async Redis client of the Rust ecosystem)
//! reads it: `redis-cluster://[user[:password]@]host:port[?node=host:port&node=host:port]`,
//! every `node` another seed; redis-rs' cluster client takes the seed nodes' URLs.

use super::error::FleetError;
use super::reconnect::redact_url;

/// The scheme of a single node's URL.
const NODE: &str = "redis://";
/// The scheme of a single node's URL over TLS.
const NODE_TLS: &str = "rediss://";
/// The scheme of a cluster's URL.
const CLUSTER: &str = "redis-cluster://";
/// The scheme of a cluster's URL over TLS.
const CLUSTER_TLS: &str = "rediss-cluster://";

/// A store's address, checked: its URLs as redis-rs reads them.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum StoreAddress {
    /// One node: `redis://...` or `rediss://...`.
    Node(String),
    /// A cluster's seed nodes, each `redis://...` or `rediss://...` (all alike but for the host
    /// and port); the cluster client finds the others.
    Cluster(Vec<String>),
}

impl std::fmt::Debug for StoreAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown())
    }
}

impl StoreAddress {
    /// Reads a store URL: a node's (`redis://`, `rediss://`) or a cluster's
    /// (`redis-cluster://`, `rediss-cluster://`).
    pub(crate) fn parse(url: &str) -> Result<Self, FleetError> {
        let scheme = scheme_of(url);
        match scheme {
            Some(NODE | NODE_TLS) => {
                check_tls_available(url)?;
                Ok(Self::Node(url.to_owned()))
            }
            Some(CLUSTER | CLUSTER_TLS) => {
                check_tls_available(url)?;
                cluster_seeds(url).map(Self::Cluster)
            }
            _ => Err(FleetError::InvalidUrl {
                reason: format!(
                    "{:?} is not a Redis URL: write redis://host:port/ or rediss://host:port/ for \
                     one node, redis-cluster://host:port?node=host:port for a Redis Cluster",
                    redact_url(url)
                ),
            }),
        }
    }

    /// A cluster given by seed node URLs (`redis://` or `rediss://`, all with the same scheme,
    /// user and password, database 0): at least one.
    pub(crate) fn cluster<S: AsRef<str>>(
        seeds: impl IntoIterator<Item = S>,
    ) -> Result<Self, FleetError> {
        let seeds: Vec<String> = seeds
            .into_iter()
            .map(|seed| seed.as_ref().to_owned())
            .collect();
        let Some(first) = seeds.first() else {
            return Err(FleetError::InvalidUrl {
                reason: "no seed node: give at least one node of the cluster, e.g. \
                         redis://host:port/"
                    .into(),
            });
        };
        let expected = scheme_of(first);
        for seed in &seeds {
            let scheme = scheme_of(seed);
            if !matches!(scheme, Some(NODE | NODE_TLS)) {
                return Err(FleetError::InvalidUrl {
                    reason: format!(
                        "seed node {:?} is not a node's URL: write redis://host:port/ (or \
                         rediss://host:port/) for each",
                        redact_url(seed)
                    ),
                });
            }
            if scheme != expected || user_info(seed) != user_info(first) {
                return Err(FleetError::InvalidUrl {
                    reason: format!(
                        "seed nodes {:?} and {:?} differ in their scheme, user or password: a \
                         cluster's nodes are reached alike",
                        redact_url(first),
                        redact_url(seed)
                    ),
                });
            }
            check_tls_available(seed)?;
            check_database_zero(seed)?;
        }
        Ok(Self::Cluster(seeds))
    }

    /// Whether its connections use TLS.
    pub(crate) fn uses_tls(&self) -> bool {
        self.first_node().starts_with(NODE_TLS)
    }

    /// The URL of its (first) node.
    pub(crate) fn first_node(&self) -> &str {
        match self {
            Self::Node(url) => url,
            Self::Cluster(seeds) => seeds.first().map_or("", String::as_str),
        }
    }

    /// The address as messages and logs show it, without its password: the node's URL, or
    /// the cluster as one `redis-cluster://` URL.
    pub(crate) fn shown(&self) -> String {
        match self {
            Self::Node(url) => redact_url(url),
            Self::Cluster(seeds) => {
                let scheme = if self.uses_tls() {
                    CLUSTER_TLS
                } else {
                    CLUSTER
                };
                let authorities: Vec<&str> = seeds.iter().map(|seed| authority(seed)).collect();
                let first = redact_url(&format!("{scheme}{}", authorities[0]));
                let others: Vec<String> = authorities[1..]
                    .iter()
                    .map(|authority| format!("node={}", host_port(authority)))
                    .collect();
                if others.is_empty() {
                    first
                } else {
                    format!("{first}?{}", others.join("&"))
                }
            }
        }
    }
}

/// The scheme of `url`, `scheme://` included, lower case as the constants.
fn scheme_of(url: &str) -> Option<&'static str> {
    [CLUSTER_TLS, CLUSTER, NODE_TLS, NODE]
        .into_iter()
        .find(|scheme| {
            url.get(..scheme.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(scheme))
        })
}

/// `rediss` without the `fleet-tls` feature is an error saying which feature to enable.
fn check_tls_available(url: &str) -> Result<(), FleetError> {
    let tls = matches!(scheme_of(url), Some(NODE_TLS | CLUSTER_TLS));
    if tls && !cfg!(feature = "fleet-tls") {
        return Err(FleetError::InvalidUrl {
            reason: format!(
                "{:?} asks for TLS: enable retry-core's `fleet-tls` feature for rediss:// and \
                 rediss-cluster:// URLs",
                redact_url(url)
            ),
        });
    }
    Ok(())
}

/// A cluster has one database, 0: a seed URL naming another is an error.
fn check_database_zero(url: &str) -> Result<(), FleetError> {
    let rest = &url[authority_start(url)..];
    let path = rest
        .find('/')
        .map_or("", |at| &rest[at + 1..])
        .split(['?', '#'])
        .next()
        .unwrap_or("");
    if path.is_empty() || path == "0" {
        Ok(())
    } else {
        Err(FleetError::InvalidUrl {
            reason: format!(
                "{:?} names database {path:?}: a Redis Cluster has database 0 only",
                redact_url(url)
            ),
        })
    }
}

/// The seed node URLs of a `redis-cluster://` URL: its host and each `node=host:port`, with
/// its user and password.
fn cluster_seeds(url: &str) -> Result<Vec<String>, FleetError> {
    let shown = redact_url(url);
    let invalid = |what: String| FleetError::InvalidUrl {
        reason: format!("{shown:?}: {what}"),
    };
    let tls = scheme_of(url) == Some(CLUSTER_TLS);
    let node_scheme = if tls { NODE_TLS } else { NODE };
    let rest = &url[authority_start(url)..];
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    let (path, query) = match tail.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (tail, None),
    };
    if tail.contains('#') {
        return Err(invalid("a fragment (#...) has no meaning here".into()));
    }
    if !matches!(path, "" | "/" | "/0") {
        return Err(invalid(format!(
            "the path {path:?} names a database: a Redis Cluster has database 0 only"
        )));
    }
    let (user_info, first) = match authority.rsplit_once('@') {
        Some((user_info, host)) => (format!("{user_info}@"), host),
        None => (String::new(), authority),
    };
    let mut hosts = vec![first.to_owned()];
    for pair in query
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty())
    {
        match pair.split_once('=') {
            Some(("node", host)) if !host.is_empty() => hosts.push(host.to_owned()),
            _ => {
                return Err(invalid(format!(
                    "unknown query parameter {pair:?}: only node=host:port (another seed node) \
                     is read"
                )));
            }
        }
    }
    hosts
        .iter()
        .map(|host| {
            if host.is_empty() || !has_port(host) {
                return Err(invalid(format!(
                    "seed node {host:?} has no port: write host:port"
                )));
            }
            Ok(format!("{node_scheme}{user_info}{host}/"))
        })
        .collect()
}

/// Where the authority of `url` starts (after `scheme://`).
fn authority_start(url: &str) -> usize {
    url.find("://").map_or(0, |at| at + 3)
}

/// The authority of `url` (user information, host and port).
fn authority(url: &str) -> &str {
    let rest = &url[authority_start(url)..];
    &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())]
}

/// The user information of `url` (`user:password`), if any.
fn user_info(url: &str) -> Option<&str> {
    authority(url)
        .rsplit_once('@')
        .map(|(user_info, _)| user_info)
}

/// The host and port of an authority.
fn host_port(authority: &str) -> &str {
    authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host)
}

/// Whether `host` ends in `:port` (an IPv6 address in brackets: after the bracket).
fn has_port(host: &str) -> bool {
    let after_address = host.rfind(']').map_or(host, |at| &host[at + 1..]);
    after_address
        .rsplit_once(':')
        .is_some_and(|(_, port)| !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(error: FleetError) -> String {
        match error {
            FleetError::InvalidUrl { reason } => reason,
            other => panic!("not an invalid URL: {other}"),
        }
    }

    #[test]
    fn a_cluster_url_gives_every_seed_with_the_user_and_password() {
        let address =
            StoreAddress::parse("redis-cluster://app:s3cret@10.0.0.1:7000?node=10.0.0.2:7001")
                .expect("valid");
        assert_eq!(
            address,
            StoreAddress::Cluster(vec![
                "redis://app:s3cret@10.0.0.1:7000/".into(),
                "redis://app:s3cret@10.0.0.2:7001/".into(),
            ])
        );
        assert!(!address.uses_tls());
        assert_eq!(
            address.shown(),
            "redis-cluster://app:***@10.0.0.1:7000?node=10.0.0.2:7001"
        );
        let one = StoreAddress::parse("REDIS-CLUSTER://[::1]:7000/").expect("valid");
        assert_eq!(
            one,
            StoreAddress::Cluster(vec!["redis://[::1]:7000/".into()])
        );
    }

    #[test]
    fn node_urls_are_kept_as_they_are() {
        let url = "redis://app:pw@db:6379/2";
        assert_eq!(
            StoreAddress::parse(url).expect("valid"),
            StoreAddress::Node(url.into())
        );
    }

    #[test]
    fn bad_cluster_urls_say_what_to_write() {
        let cases = [
            ("redis-cluster://h:7000/3", "database 0 only"),
            (
                "redis-cluster://h:7000?nodes=h:7001",
                "unknown query parameter",
            ),
            ("redis-cluster://h?node=h:7001", "has no port"),
            ("redis-cluster://h:7000?node=", "unknown query parameter"),
            ("redis-cluster://:pw@h:7000#x", "fragment"),
            ("http://h:7000", "redis-cluster://"),
        ];
        for (url, expected) in cases {
            let reason = reason(StoreAddress::parse(url).expect_err(url));
            assert!(reason.contains(expected), "{url}: {reason}");
            assert!(!reason.contains(":pw@"), "the password shows: {reason}");
        }
    }

    #[test]
    fn seed_lists_must_agree_and_name_nodes() {
        assert!(StoreAddress::cluster(Vec::<String>::new()).is_err());
        let mixed = StoreAddress::cluster(["redis://a:1/", "redis://u:p@b:2/"]);
        assert!(reason(mixed.expect_err("users differ")).contains("differ"));
        let cluster_url = StoreAddress::cluster(["redis-cluster://a:1"]);
        assert!(reason(cluster_url.expect_err("not a node")).contains("not a node's URL"));
        let database = StoreAddress::cluster(["redis://a:1/4"]);
        assert!(reason(database.expect_err("db 4")).contains("database 0 only"));
        let seeds = StoreAddress::cluster(["redis://a:1/", "redis://b:2/0"]).expect("valid");
        assert_eq!(seeds.shown(), "redis-cluster://a:1?node=b:2");
        assert_eq!(seeds.first_node(), "redis://a:1/");
    }

    #[test]
    fn tls_urls_need_the_tls_feature() {
        let result = StoreAddress::parse("rediss-cluster://h:7000");
        if cfg!(feature = "fleet-tls") {
            let address = result.expect("valid");
            assert!(address.uses_tls());
            assert_eq!(address.first_node(), "rediss://h:7000/");
        } else {
            assert!(reason(result.expect_err("no TLS")).contains("fleet-tls"));
        }
    }
}
