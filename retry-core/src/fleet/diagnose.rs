//! What listens on a store's port, asked only when the first connection at start-up failed in a
//! way a scheme that does not match the port gives: `rediss://` to a port that speaks plain
//! text (the TLS handshake is never answered, or answered with Redis text), `redis://` to one
//! that expects TLS (the server closes the connection at the first command). One more
//! connection tells which: a plain-text Redis answers an inline `PING` with `+` or `-`; a TLS
//! server answers a TLS ClientHello with a handshake or alert record (RFC 8446, section 5.1:
//! content types 22 and 21, legacy version 3.x). The answer turns "unreachable" into an error
//! naming the scheme to write.

use std::time::Duration;

use redis::{ConnectionAddr, IntoConnectionInfo};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// What a port speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listener {
    /// Redis in plain text: it answered an inline `PING`.
    PlainText,
    /// TLS: it answered a ClientHello with a TLS record.
    Tls,
}

/// TLS record content types (RFC 8446, section 5.1).
const ALERT: u8 = 21;
const HANDSHAKE: u8 = 22;

/// Whether the node at `url` (a `redis://` or `rediss://` URL) speaks what its scheme does
/// not: `Some(PlainText)` for a `rediss://` URL whose port answers plain text, `Some(Tls)` for
/// a `redis://` URL whose port answers TLS; `None` when it does not say, or within `within`.
pub(crate) async fn mismatch(url: &str, within: Duration) -> Option<Listener> {
    let info = url.into_connection_info().ok()?;
    let (host, port, expects_tls) = match info.addr() {
        ConnectionAddr::Tcp(host, port) => (host.clone(), *port, false),
        ConnectionAddr::TcpTls { host, port, .. } => (host.clone(), *port, true),
        _ => return None,
    };
    let probe = async {
        let mut stream = TcpStream::connect((host.as_str(), port)).await.ok()?;
        let hello = if expects_tls {
            b"PING\r\n".to_vec()
        } else {
            client_hello()
        };
        stream.write_all(&hello).await.ok()?;
        let mut head = [0_u8; 2];
        stream.read_exact(&mut head).await.ok()?;
        Some(head)
    };
    let head = tokio::time::timeout(within, probe).await.ok().flatten()?;
    match (expects_tls, head) {
        (true, [b'+' | b'-', _]) => Some(Listener::PlainText),
        (false, [ALERT | HANDSHAKE, 3]) => Some(Listener::Tls),
        _ => None,
    }
}

/// A TLS 1.2 ClientHello (RFC 5246, section 7.4.1.2) offering ECDHE with AES-GCM for ECDSA
/// and RSA certificates and TLS 1.3's AES-128-GCM: any TLS server answers it with a
/// ServerHello or an alert.
fn client_hello() -> Vec<u8> {
    let mut body = vec![3, 3]; // client_version: TLS 1.2
    body.extend([0_u8; 32]); // random
    body.push(0); // session_id: empty
    body.extend([0, 6, 0xc0, 0x2b, 0xc0, 0x2f, 0x13, 0x01]); // cipher_suites
    body.extend([1, 0]); // compression_methods: null
    let extensions: [&[u8]; 3] = [
        &[0x00, 0x0a, 0, 4, 0, 2, 0x00, 0x17], // supported_groups: secp256r1
        &[0x00, 0x0b, 0, 2, 1, 0],             // ec_point_formats: uncompressed
        &[0x00, 0x0d, 0, 6, 0, 4, 0x04, 0x03, 0x08, 0x04], // signature_algorithms
    ];
    let extensions: Vec<u8> = extensions.concat();
    body.extend(u16_be(extensions.len()));
    body.extend(extensions);
    let mut handshake = vec![1]; // client_hello
    let length = u32::try_from(body.len()).unwrap_or(u32::MAX).to_be_bytes();
    handshake.extend(&length[1..]); // 24 bits
    handshake.extend(body);
    let mut record = vec![HANDSHAKE, 3, 1];
    record.extend(u16_be(handshake.len()));
    record.extend(handshake);
    record
}

fn u16_be(length: usize) -> [u8; 2] {
    u16::try_from(length).unwrap_or(u16::MAX).to_be_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_hello_is_one_well_formed_record() {
        let hello = client_hello();
        assert_eq!(&hello[..3], &[HANDSHAKE, 3, 1]);
        let record_length = usize::from(u16::from_be_bytes([hello[3], hello[4]]));
        assert_eq!(record_length, hello.len() - 5);
        // The handshake's 24-bit length covers the rest.
        let handshake_length =
            (usize::from(hello[6]) << 16) | (usize::from(hello[7]) << 8) | usize::from(hello[8]);
        assert_eq!(hello[5], 1, "client_hello");
        assert_eq!(handshake_length, record_length - 4);
    }
}
