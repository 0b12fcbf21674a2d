//! A flaky object store over HTTP/1.1 on loopback, the server of a newcomer's first program:
//! `GET /keys/{n}` answers 503 twice before it serves the key (a key given a 429 first answers
//! `429` with `Retry-After: 1`, then the two 503s); a missing key is 404 every time; `PUT
//! /keys/{n}` stores the body and then resets the connection without answering, so the client
//! cannot tell whether it was stored. The store counts every request per key.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use bytes::Bytes;
use http::header::{HeaderValue, RETRY_AFTER};
use http::{Method, Response, StatusCode};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Which keys the store has, and how each misbehaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLayout {
    /// Keys `0..keys`.
    pub keys: u32,
    /// A key `n` with `n % missing_every == 0` is missing (404).
    pub missing_every: u32,
    /// A key `n` (not missing) with `n % throttled_every == throttled_every - 1` answers its
    /// first request 429 with `Retry-After: 1`.
    pub throttled_every: u32,
}

impl StoreLayout {
    /// The newcomer's store: 200 keys, every 20th missing (190 served), every 10th throttled once.
    pub const NEWCOMER: StoreLayout = StoreLayout {
        keys: 200,
        missing_every: 20,
        throttled_every: 10,
    };

    /// Whether key `n` is missing.
    pub fn is_missing(&self, n: u32) -> bool {
        n.is_multiple_of(self.missing_every)
    }

    /// The keys the store serves.
    pub fn served_keys(&self) -> u32 {
        (0..self.keys).filter(|&n| !self.is_missing(n)).count() as u32
    }

    /// The answer to request number `request` (0 for the first) for key `n`.
    fn answer(&self, n: u32, request: u32) -> StoreAnswer {
        if self.is_missing(n) {
            return StoreAnswer::NotFound;
        }
        let throttled = n % self.throttled_every == self.throttled_every - 1;
        let failures = match (throttled, request) {
            (true, 0) => return StoreAnswer::Throttled,
            (true, _) => request - 1,
            (false, _) => request,
        };
        if failures < SERVER_ERRORS_PER_KEY {
            StoreAnswer::Unavailable
        } else {
            StoreAnswer::Served
        }
    }
}

/// The 503s every key answers before it serves.
const SERVER_ERRORS_PER_KEY: u32 = 2;

/// What a `GET` of a key is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreAnswer {
    NotFound,
    Throttled,
    Unavailable,
    Served,
}

/// A running store: its address and its counts.
#[derive(Clone)]
pub struct FlakyStore {
    addr: SocketAddr,
    state: Arc<StoreState>,
}

struct StoreState {
    layout: StoreLayout,
    /// `GET`s received, per key.
    gets: Vec<AtomicU32>,
    /// `PUT`s stored, per key.
    puts: Vec<AtomicU32>,
}

impl FlakyStore {
    /// Starts the store on 127.0.0.1, on a port the system picks; it serves until the runtime
    /// shuts down.
    pub async fn serve(layout: StoreLayout) -> io::Result<FlakyStore> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let counters = || (0..layout.keys).map(|_| AtomicU32::new(0)).collect();
        let store = FlakyStore {
            addr: listener.local_addr()?,
            state: Arc::new(StoreState {
                layout,
                gets: counters(),
                puts: counters(),
            }),
        };
        let state = Arc::clone(&store.state);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                // A connection the server drops is reset, not closed: the `PUT`'s client sees
                // its request cut off after sending it.
                if stream.set_zero_linger().is_err() {
                    continue;
                }
                let state = Arc::clone(&state);
                let service = service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
                    std::future::ready(state.respond(request.method(), request.uri().path()))
                });
                tokio::spawn(async move {
                    // The `PUT`'s error ends its connection: nothing to report.
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

    /// The `GET`s key `n` received (0 for a key out of range).
    pub fn gets(&self, n: u32) -> u32 {
        count(&self.state.gets, n)
    }

    /// The `PUT`s key `n` stored (0 for a key out of range).
    pub fn puts(&self, n: u32) -> u32 {
        count(&self.state.puts, n)
    }

    /// Every request received.
    pub fn requests(&self) -> u32 {
        let sum = |counters: &[AtomicU32]| -> u32 {
            counters
                .iter()
                .map(|counter| counter.load(Ordering::SeqCst))
                .sum()
        };
        sum(&self.state.gets) + sum(&self.state.puts)
    }
}

fn count(counters: &[AtomicU32], n: u32) -> u32 {
    counters
        .get(n as usize)
        .map_or(0, |counter| counter.load(Ordering::SeqCst))
}

impl StoreState {
    /// The response to `method path`; `Err` for a `PUT` once stored, which resets the
    /// connection instead of answering.
    fn respond(&self, method: &Method, path: &str) -> io::Result<Response<Full<Bytes>>> {
        let key = path
            .strip_prefix("/keys/")
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|&n| n < self.layout.keys);
        let Some(n) = key else {
            return Ok(reply(StatusCode::NOT_FOUND, "no such path"));
        };
        let slot = n as usize;
        if method == Method::PUT {
            self.puts[slot].fetch_add(1, Ordering::SeqCst);
            return Err(io::Error::new(
                io::ErrorKind::ConnectionReset,
                "stored, then the connection was reset",
            ));
        }
        let request = self.gets[slot].fetch_add(1, Ordering::SeqCst);
        Ok(match self.layout.answer(n, request) {
            StoreAnswer::NotFound => reply(StatusCode::NOT_FOUND, "no such key"),
            StoreAnswer::Throttled => {
                let mut response = reply(StatusCode::TOO_MANY_REQUESTS, "slow down");
                response
                    .headers_mut()
                    .insert(RETRY_AFTER, HeaderValue::from_static("1"));
                response
            }
            StoreAnswer::Unavailable => reply(StatusCode::SERVICE_UNAVAILABLE, "try again"),
            StoreAnswer::Served => reply(StatusCode::OK, "the value"),
        })
    }
}

fn reply(status: StatusCode, body: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newcomers_store_serves_190_keys_each_after_two_503s_some_after_a_429() {
        let layout = StoreLayout::NEWCOMER;
        assert_eq!(layout.served_keys(), 190);
        let answers = |n| (0..5).map(|r| layout.answer(n, r)).collect::<Vec<_>>();
        use StoreAnswer::*;
        assert_eq!(answers(0), [NotFound; 5]);
        assert_eq!(
            answers(1),
            [Unavailable, Unavailable, Served, Served, Served]
        );
        assert_eq!(
            answers(9),
            [Throttled, Unavailable, Unavailable, Served, Served]
        );
    }
}
