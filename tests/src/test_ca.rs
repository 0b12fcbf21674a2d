//! A certificate authority of a test's own, made at test time (rcgen, ECDSA P-256): it issues
//! a server certificate for 127.0.0.1 (a TLS `redis-server`'s) and client certificates (mutual
//! TLS). Nothing is read from or written to the machine's trust store.

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa, KeyPair,
    KeyUsagePurpose,
};

/// A CA: its self-signed certificate and the key it signs with.
#[derive(Debug)]
pub struct TestCa {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate the CA issued and its private key, both PEM.
#[derive(Debug, Clone)]
pub struct Issued {
    /// The certificate (`-----BEGIN CERTIFICATE-----`).
    pub certificate_pem: String,
    /// Its private key (PKCS #8, `-----BEGIN PRIVATE KEY-----`).
    pub private_key_pem: String,
}

impl TestCa {
    /// A new CA whose certificate's common name is `name` (two CAs of a test differ in name
    /// and key).
    pub fn new(name: &str) -> Self {
        let mut params = CertificateParams::default();
        params.distinguished_name = named(name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("a CA key");
        let issuer = CertifiedIssuer::self_signed(params, key).expect("a CA certificate");
        Self { issuer }
    }

    /// The CA's certificate, PEM: what a client or server trusts.
    pub fn certificate_pem(&self) -> String {
        self.issuer.pem()
    }

    /// A server certificate for 127.0.0.1 (an IP address subject alternative name).
    pub fn server(&self) -> Issued {
        self.issue(
            CertificateParams::new(vec!["127.0.0.1".to_owned()]).expect("an IP address name"),
            "redis-server",
        )
    }

    /// A client certificate for `name`.
    pub fn client(&self, name: &str) -> Issued {
        self.issue(CertificateParams::default(), name)
    }

    fn issue(&self, mut params: CertificateParams, name: &str) -> Issued {
        params.distinguished_name = named(name);
        let key = KeyPair::generate().expect("a key");
        let certificate = params.signed_by(&key, &self.issuer).expect("a certificate");
        Issued {
            certificate_pem: certificate.pem(),
            private_key_pem: key.serialize_pem(),
        }
    }
}

fn named(name: &str) -> DistinguishedName {
    let mut distinguished = DistinguishedName::new();
    distinguished.push(DnType::CommonName, name);
    distinguished
}
