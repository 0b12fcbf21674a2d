//! A flaky object store over HTTP/1.1 on loopback, the server of a newcomer's first program
//! (issue 24's): `GET /keys/{n}` answers 404 for an unknown key and 503 to the first 2 requests
//! of a known one, then serves it, except that every 8th request that would be served is
//! answered 429 with `Retry-After: 1`; `PUT /objects/{w}` stores the body, except that every
//! 3rd `PUT` is stored and then its connection reset without an answer, and every 7th reset
//! before it is stored (the client cannot tell which). [`StoreLayout`] sets those numbers, and
//! [`StoreBook`] counts every request and decides each answer (without the network too).

mod answers;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::header::{HeaderValue, RETRY_AFTER};
use http::{Method, Response, StatusCode};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

pub use answers::{GetAnswer, PutAnswer, StoreBook, StoreLayout};

/// A running store: its address and its book.
#[derive(Clone)]
pub struct FlakyStore {
    addr: SocketAddr,
    book: Arc<StoreBook>,
}

impl FlakyStore {
    /// Starts the store on 127.0.0.1, on a port the system picks; it serves until the runtime
    /// shuts down.
    pub async fn serve(layout: StoreLayout) -> io::Result<FlakyStore> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let store = FlakyStore {
            addr: listener.local_addr()?,
            book: Arc::new(StoreBook::new(layout)),
        };
        let book = Arc::clone(&store.book);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                // A connection the server drops is reset, not closed: a `PUT`'s client sees its
                // request cut off after sending it.
                if stream.set_zero_linger().is_err() {
                    continue;
                }
                let book = Arc::clone(&book);
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    std::future::ready(respond(&book, request.method(), request.uri().path()))
                });
                tokio::spawn(async move {
                    // A reset `PUT` ends its connection with an error: nothing to report.
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(store)
    }

    /// `http://127.0.0.1:port/keys/{n}`.
    pub fn key_url(&self, n: u32) -> String {
        format!("http://{}/keys/{n}", self.addr)
    }

    /// `http://127.0.0.1:port/objects/{w}`.
    pub fn object_url(&self, w: u32) -> String {
        format!("http://{}/objects/{w}", self.addr)
    }

    /// What the store received.
    pub fn book(&self) -> &StoreBook {
        &self.book
    }
}

/// The response to `method path`; `Err` for a `PUT` whose connection is reset instead of
/// answered.
fn respond(book: &StoreBook, method: &Method, path: &str) -> io::Result<Response<Full<Bytes>>> {
    let index = |prefix: &str| path.strip_prefix(prefix)?.parse::<u32>().ok();
    if method == Method::PUT {
        let answer = index("/objects/").and_then(|w| book.put(w));
        return match answer {
            None => Ok(reply(StatusCode::NOT_FOUND, "no such object")),
            Some(PutAnswer::Stored) => Ok(reply(StatusCode::OK, "stored")),
            Some(PutAnswer::StoredThenReset) => Err(reset("stored, then the connection was reset")),
            Some(PutAnswer::ResetBeforeStoring) => Err(reset("reset before storing")),
        };
    }
    let answer = index("/keys/").and_then(|n| book.get(n));
    Ok(match answer {
        None | Some(GetAnswer::NotFound) => reply(StatusCode::NOT_FOUND, "no such key"),
        Some(GetAnswer::Throttled) => {
            let mut response = reply(StatusCode::TOO_MANY_REQUESTS, "slow down");
            let seconds = book.layout().retry_after_secs;
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(seconds));
            response
        }
        Some(GetAnswer::Unavailable) => reply(StatusCode::SERVICE_UNAVAILABLE, "try again"),
        Some(GetAnswer::Served) => reply(StatusCode::OK, "the value"),
    })
}

fn reset(why: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::ConnectionReset, why)
}

fn reply(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
}
