//! What a `rediss://` connection trusts and presents beyond redis-rs' defaults: the roots the
//! store's certificate must chain to (a private CA instead of the system's roots) and a client
//! certificate (mutual TLS). Set on [`FleetBuilder`](super::FleetBuilder) with the `fleet-tls`
//! feature; checked by [`FleetBuilder::start`](super::FleetBuilder::start).

use std::fmt;

use redis::Client;
use redis::cluster::ClusterClientBuilder;

use super::error::FleetError;

/// The TLS material of a fleet's store connection; empty (the system's roots, no client
/// certificate) unless the builder was given some. Never prints a byte of it.
#[derive(Clone, Default, PartialEq, Eq)]
pub(crate) struct StoreTls {
    /// PEM certificates the server's certificate must chain to, instead of the system's roots.
    pub(crate) root_certificates: Option<Vec<u8>>,
    /// PEM certificate chain and private key presented to the server.
    pub(crate) client_identity: Option<ClientIdentity>,
}

/// A client certificate chain and its private key, both PEM.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ClientIdentity {
    pub(crate) certificate_chain: Vec<u8>,
    pub(crate) private_key: Vec<u8>,
}

impl fmt::Debug for StoreTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreTls")
            .field(
                "root_certificates",
                &self.root_certificates.as_ref().map(|pem| pem.len()),
            )
            .field(
                "client_identity",
                &self.client_identity.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

impl StoreTls {
    /// Whether anything was given (else redis-rs' defaults apply).
    pub(crate) fn is_set(&self) -> bool {
        self.root_certificates.is_some() || self.client_identity.is_some()
    }

    /// The error for material given for a store that does not use TLS (it would be ignored):
    /// names the setting and what to write.
    pub(crate) fn without_tls_error(&self, shown: &str) -> FleetError {
        let setting = if self.root_certificates.is_some() {
            "tls_root_certificates"
        } else {
            "tls_client_certificate"
        };
        FleetError::InvalidSetting {
            setting,
            reason: format!(
                "TLS certificates were given for {shown:?}, which does not use TLS: write \
                 rediss:// (rediss-cluster:// for a cluster) to connect over TLS"
            ),
        }
    }

    /// Checks the material the way rustls will use it: bad PEM, or a key that is not the
    /// client certificate's, is an error naming the setting.
    pub(crate) fn check(&self) -> Result<(), FleetError> {
        #[cfg(feature = "fleet-tls")]
        if self.is_set() {
            check::material(self)?;
        }
        Ok(())
    }

    /// The client for one node's `url`, with this material if any.
    pub(crate) fn client(&self, url: &str) -> redis::RedisResult<Client> {
        #[cfg(feature = "fleet-tls")]
        if self.is_set() {
            return Client::build_with_tls(url, self.certificates());
        }
        Client::open(url)
    }

    /// A cluster client's builder with this material if any.
    pub(crate) fn apply_to_cluster(&self, builder: ClusterClientBuilder) -> ClusterClientBuilder {
        #[cfg(feature = "fleet-tls")]
        if self.is_set() {
            return builder.certs(self.certificates());
        }
        builder
    }

    /// The material as redis-rs takes it.
    #[cfg(feature = "fleet-tls")]
    fn certificates(&self) -> redis::TlsCertificates {
        redis::TlsCertificates {
            client_tls: self
                .client_identity
                .as_ref()
                .map(|identity| redis::ClientTlsConfig {
                    client_cert: identity.certificate_chain.clone(),
                    client_key: identity.private_key.clone(),
                }),
            root_cert: self.root_certificates.clone(),
        }
    }
}

/// A TLS failure inside a redis-rs error (the server's certificate not trusted, a client
/// certificate refused, a handshake alert), as its message: a connection that can never
/// succeed until the certificates are fixed, unlike a server that is down.
#[cfg(feature = "fleet-tls")]
pub(crate) fn failure(error: &redis::RedisError) -> Option<String> {
    use std::error::Error;
    use std::sync::Arc;
    // redis-rs keeps an I/O error as an `Arc<dyn Error + Send + Sync>` (its `source`), and
    // tokio-rustls puts rustls' error inside the I/O error: both are unwrapped here, as
    // `io::Error::source` skips the error it wraps. A change of either representation makes
    // this `None` (the failure then reads as an unreachable store), which the TLS integration
    // tests would show.
    let mut current: Option<&(dyn Error + 'static)> = Some(error);
    while let Some(layer) = current {
        let inner = layer
            .downcast_ref::<Arc<dyn Error + Send + Sync>>()
            .map(|shared| &**shared as &(dyn Error + 'static))
            .unwrap_or(layer);
        let wrapped = inner
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .map(|wrapped| wrapped as &(dyn Error + 'static))
            .unwrap_or(inner);
        if let Some(tls) = wrapped.downcast_ref::<rustls::Error>() {
            return Some(explained(tls));
        }
        current = layer.source();
    }
    None
}

/// A rustls error and what to check for it.
#[cfg(feature = "fleet-tls")]
fn explained(error: &rustls::Error) -> String {
    use rustls::AlertDescription as Alert;
    match error {
        rustls::Error::InvalidCertificate(_) => format!(
            "{error}: the store's certificate is not trusted (if a private CA signed it, give \
             that CA with `tls_root_certificates`; its names must include the URL's host)"
        ),
        rustls::Error::AlertReceived(
            Alert::CertificateRequired
            | Alert::UnknownCA
            | Alert::BadCertificate
            | Alert::CertificateUnknown
            | Alert::CertificateExpired
            | Alert::CertificateRevoked
            | Alert::UnsupportedCertificate
            | Alert::AccessDenied,
        ) => format!(
            "{error}: the store refused the client certificate (give one its CA trusts with \
             `tls_client_certificate`)"
        ),
        other => other.to_string(),
    }
}

#[cfg(feature = "fleet-tls")]
mod check {
    //! The material checked the way rustls will use it, so that a bad PEM or a key that does
    //! not match its certificate is an error at start-up, not at every connection.

    use std::sync::Arc;

    use rustls::RootCertStore;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};

    use super::{ClientIdentity, StoreTls};
    use crate::fleet::error::FleetError;

    pub(super) fn material(tls: &StoreTls) -> Result<(), FleetError> {
        let roots = match &tls.root_certificates {
            Some(pem) => root_store(pem)?,
            None => RootCertStore::empty(),
        };
        if let Some(identity) = &tls.client_identity {
            identity_matches(identity, roots)?;
        }
        Ok(())
    }

    /// Every certificate of `pem` as a trust anchor; at least one.
    fn root_store(pem: &[u8]) -> Result<RootCertStore, FleetError> {
        let invalid = |reason: String| FleetError::InvalidSetting {
            setting: "tls_root_certificates",
            reason,
        };
        let certificates = certificates(pem).map_err(invalid)?;
        let mut store = RootCertStore::empty();
        for (index, certificate) in certificates.into_iter().enumerate() {
            store.add(certificate).map_err(|error| {
                invalid(format!(
                    "certificate {} of the PEM is not a certificate a TLS client can trust \
                     ({error})",
                    index + 1
                ))
            })?;
        }
        Ok(store)
    }

    /// The certificate chain parses, the key parses and is the key of the chain's first
    /// certificate.
    fn identity_matches(identity: &ClientIdentity, roots: RootCertStore) -> Result<(), FleetError> {
        let invalid = |reason: String| FleetError::InvalidSetting {
            setting: "tls_client_certificate",
            reason,
        };
        let chain = certificates(&identity.certificate_chain)
            .map_err(|reason| invalid(format!("the certificate chain: {reason}")))?;
        let key = PrivateKeyDer::from_pem_slice(&identity.private_key).map_err(|error| {
            invalid(format!(
                "the private key: no PEM private key (-----BEGIN PRIVATE KEY-----, RSA or EC) \
                 in it ({error})"
            ))
        })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| invalid(error.to_string()))?
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .map_err(|error| {
                invalid(format!(
                    "the private key cannot sign for the chain's first certificate ({error})"
                ))
            })?;
        Ok(())
    }

    /// The certificates of a PEM text: at least one, all well-formed.
    fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
        let certificates = CertificateDer::pem_slice_iter(pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| format!("not valid PEM ({error})"))?;
        if certificates.is_empty() {
            return Err(
                "no PEM certificate (-----BEGIN CERTIFICATE-----) in it: give the certificates \
                 as PEM text, not DER or a file name"
                    .to_owned(),
            );
        }
        Ok(certificates)
    }
}

#[cfg(all(test, feature = "fleet-tls"))]
mod tests {
    use std::io;

    use redis::RedisError;
    use rustls::{AlertDescription, CertificateError};

    use super::*;

    /// A TLS error as it reaches the store: inside an I/O error (tokio-rustls), inside a
    /// redis-rs error.
    fn as_redis_error(error: rustls::Error) -> RedisError {
        RedisError::from(io::Error::new(io::ErrorKind::InvalidData, error))
    }

    #[test]
    fn an_untrusted_server_certificate_is_found_and_names_the_root_setting() {
        let error = rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer);
        let reason = failure(&as_redis_error(error)).expect("a TLS failure");
        assert!(reason.contains("UnknownIssuer"), "{reason}");
        assert!(reason.contains("tls_root_certificates"), "{reason}");
    }

    #[test]
    fn a_refused_client_certificate_is_found_and_names_the_client_setting() {
        let error = rustls::Error::AlertReceived(AlertDescription::CertificateRequired);
        let reason = failure(&as_redis_error(error)).expect("a TLS failure");
        assert!(reason.contains("tls_client_certificate"), "{reason}");
    }

    #[test]
    fn other_io_errors_are_not_tls_failures() {
        let refused = RedisError::from(io::Error::from(io::ErrorKind::ConnectionRefused));
        assert_eq!(failure(&refused), None);
    }

    #[test]
    fn debug_shows_neither_certificates_nor_the_key() {
        let tls = StoreTls {
            root_certificates: Some(b"ROOT".to_vec()),
            client_identity: Some(ClientIdentity {
                certificate_chain: b"CHAIN".to_vec(),
                private_key: b"KEY".to_vec(),
            }),
        };
        let shown = format!("{tls:?}");
        for secret in ["ROOT", "CHAIN", "KEY"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}
