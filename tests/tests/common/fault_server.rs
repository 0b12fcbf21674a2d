//! A server on loopback that fails every request in one way and counts what it received: the
//! fixture of the idempotency matrix (`tests/tests/idempotency_matrix.rs`) and of the reason
//! tests (`tests/tests/reasons.rs`). HTTP/1.1 and HTTP/2 (h2c, as a tonic `Channel` speaks it)
//! on the same port, told apart by the connection's first bytes.
//!
//! What it received is counted per request path: a request whose whole head (HTTP/1) or whose
//! `HEADERS` frame (HTTP/2) arrived. HTTP/2 requests that the server never parses (a reset before
//! it reads them) are counted under [`H2`].

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// The key under which HTTP/2 requests the server did not parse are counted.
pub const H2: &str = "h2";

/// The client connection preface of HTTP/2 (RFC 9113 §3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// How the server fails every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Failure {
    /// Nothing listens: the connection is refused, nothing is sent.
    Refused,
    /// The request arrives whole but the server resets the connection without reading a byte of
    /// it (a crash, a load balancer's reset): the client cannot tell this from a reset after.
    ResetBeforeRead,
    /// The server reads the whole request (its body too), then resets the connection.
    ResetAfterRequest,
    /// The server reads the whole request and never answers: the client's timeout cuts the
    /// attempt after the write.
    TimeoutAfterWrite,
}

impl Failure {
    /// Every failure, in the matrix's order.
    pub const ALL: [Failure; 4] = [
        Failure::Refused,
        Failure::ResetBeforeRead,
        Failure::ResetAfterRequest,
        Failure::TimeoutAfterWrite,
    ];

    /// The matrix's column name.
    pub fn name(self) -> &'static str {
        match self {
            Failure::Refused => "refused",
            Failure::ResetBeforeRead => "reset before read",
            Failure::ResetAfterRequest => "reset after request",
            Failure::TimeoutAfterWrite => "timeout after write",
        }
    }
}

/// A running server (or, for [`Failure::Refused`], an address where nothing listens).
#[derive(Clone)]
pub struct FaultServer {
    addr: SocketAddr,
    received: Arc<Received>,
}

/// The requests received, by path.
#[derive(Default)]
struct Received(Mutex<HashMap<String, u32>>);

impl Received {
    fn note(&self, path: &str) {
        *self.counts().entry(path.to_owned()).or_default() += 1;
    }

    fn counts(&self) -> MutexGuard<'_, HashMap<String, u32>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl FaultServer {
    /// Starts a server on 127.0.0.1 (a port the system picks) failing every request with
    /// `failure`; it serves until the runtime shuts down.
    pub async fn start(failure: Failure) -> io::Result<Self> {
        let received = Arc::new(Received::default());
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        if failure == Failure::Refused {
            drop(listener); // the port is closed again: connecting is refused
            return Ok(Self { addr, received });
        }
        let counts = Arc::clone(&received);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(fail(stream, failure, Arc::clone(&counts)));
            }
        });
        Ok(Self { addr, received })
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:port` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests received for `path` ([`H2`]: HTTP/2 requests reset unread).
    pub fn received(&self, path: &str) -> u32 {
        self.received.counts().get(path).copied().unwrap_or(0)
    }

    /// Every request received, whatever its path.
    pub fn received_total(&self) -> u32 {
        self.received.counts().values().sum()
    }
}

/// Fails the connection `stream` as `failure` says. A reset is a close with `SO_LINGER` 0: the
/// kernel sends RST instead of FIN.
async fn fail(stream: TcpStream, failure: Failure, received: Arc<Received>) {
    if stream.set_zero_linger().is_err() {
        return;
    }
    let Ok(head) = peek_request(&stream).await else {
        return;
    };
    match failure {
        Failure::Refused => {} // nothing listens: no connection comes
        Failure::ResetBeforeRead => {
            received.note(&head.path);
            drop(stream);
        }
        Failure::ResetAfterRequest | Failure::TimeoutAfterWrite => {
            serve(stream, head.http2, failure, received).await;
        }
    }
}

/// What the connection's first bytes say, read without taking them from the socket.
struct PeekedHead {
    http2: bool,
    /// The HTTP/1 request target, or [`H2`].
    path: String,
}

/// Peeks at the connection until a whole request has arrived: an HTTP/1 head (`\r\n\r\n`), or an
/// HTTP/2 stream's `HEADERS` and its last frame (`END_STREAM`). Loopback delivers a request in
/// a few writes; this waits 1 ms between looks (virtual under a paused clock).
async fn peek_request(stream: &TcpStream) -> io::Result<PeekedHead> {
    let mut buffer = vec![0; 16 * 1024];
    for _ in 0..1000 {
        let len = stream.peek(&mut buffer).await?;
        if len == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let bytes = &buffer[..len];
        if bytes.starts_with(H2_PREFACE) {
            if h2_request_complete(&bytes[H2_PREFACE.len()..]) {
                return Ok(PeekedHead {
                    http2: true,
                    path: H2.to_owned(),
                });
            }
        } else if let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&bytes[..end]);
            let path = head.split(' ').nth(1).unwrap_or("").to_owned();
            return Ok(PeekedHead { http2: false, path });
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Err(io::ErrorKind::TimedOut.into())
}

/// Whether `frames` (HTTP/2 frames after the preface) hold a request stream's frame with
/// `END_STREAM` (RFC 9113 §4.1: a 9-byte header of length, type, flags and stream id).
fn h2_request_complete(mut frames: &[u8]) -> bool {
    const END_STREAM: u8 = 0x1;
    const DATA: u8 = 0x0;
    const HEADERS: u8 = 0x1;
    while frames.len() >= 9 {
        let length =
            usize::from(frames[0]) << 16 | usize::from(frames[1]) << 8 | usize::from(frames[2]);
        let (kind, flags) = (frames[3], frames[4]);
        let stream = u32::from_be_bytes([frames[5], frames[6], frames[7], frames[8]]) & 0x7fff_ffff;
        if frames.len() < 9 + length {
            return false;
        }
        if stream != 0 && (kind == DATA || kind == HEADERS) && flags & END_STREAM != 0 {
            return true;
        }
        frames = &frames[9 + length..];
    }
    false
}

/// Serves the connection with hyper: each request is read whole and counted by its path, then
/// never answered; with [`Failure::ResetAfterRequest`] the connection is reset at once.
async fn serve(stream: TcpStream, http2: bool, failure: Failure, received: Arc<Received>) {
    let (reset, on_reset) = oneshot::channel::<()>();
    let reset = Arc::new(Mutex::new(Some(reset)));
    let service = service_fn(move |request: hyper::Request<Incoming>| {
        let received = Arc::clone(&received);
        let reset = Arc::clone(&reset);
        async move {
            let path = request.uri().path().to_owned();
            let _ = request.into_body().collect().await;
            received.note(&path);
            if failure == Failure::ResetAfterRequest {
                let sender = reset.lock().unwrap_or_else(PoisonError::into_inner).take();
                if let Some(sender) = sender {
                    let _ = sender.send(());
                }
            }
            std::future::pending::<Result<hyper::Response<String>, io::Error>>().await
        }
    });
    let io = TokioIo::new(stream);
    if http2 {
        let connection = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .serve_connection(io, service);
        tokio::select! {
            _ = connection => {}
            _ = on_reset => {}
        }
    } else {
        let connection = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
        tokio::select! {
            _ = connection => {}
            _ = on_reset => {}
        }
    }
}
