//! Hedging against a real server with a slow tail, on loopback and on the real clock: an axum
//! server whose first request of every fifth call takes 2 s (the others 5 ms), hedged after
//! 200 ms through reqwest (`#[retryable(hedge_after = ...)]`) and through `RetryLayer::hedge` over
//! hyper-util's client. The first answer wins; the slow request's connection is closed by the
//! client and the server's handler dropped; the server counts the requests, the handlers that
//! answered and those dropped, and the connections closed.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, State};
use axum::routing::get;
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use retry_core::classify::{ClassifierChain, TransientErrorClassifier};
use retry_core::hedge::Hedging;
use retry_core::http::{CheckStatus, HttpStatusClassifier, HttpStatusError};
use retry_core::tower::{BufferedRequest, RetryLayer};
use retry_core::{RetryConfig, RetryInfo, retryable, strategy_for};
use tokio::net::TcpListener;
use tower::{Service, ServiceBuilder, ServiceExt};

/// Calls per client.
const CALLS: u32 = 20;
/// Every fifth call's first request is slow.
const SLOW_EVERY: u32 = 5;
const SLOW: Duration = Duration::from_secs(2);
const FAST: Duration = Duration::from_millis(5);
/// Far above `FAST`, so that a loaded machine does not hedge a fast call.
const HEDGE_AFTER: Duration = Duration::from_millis(200);

/// What the server saw.
#[derive(Default)]
struct Counts {
    requests: AtomicU32,
    answered: AtomicU32,
    dropped: AtomicU32,
    connections_closed: AtomicU32,
    /// Requests per call.
    per_call: Mutex<HashMap<u32, u32>>,
}

/// Counts a handler dropped before it answered.
struct Handling<'a> {
    counts: &'a Counts,
    answered: bool,
}

impl Drop for Handling<'_> {
    fn drop(&mut self) {
        let counter = if self.answered {
            &self.counts.answered
        } else {
            &self.counts.dropped
        };
        counter.fetch_add(1, Ordering::SeqCst);
    }
}

async fn item(State(counts): State<Arc<Counts>>, Path(call): Path<u32>) -> String {
    counts.requests.fetch_add(1, Ordering::SeqCst);
    let nth = {
        let mut per_call = counts.per_call.lock().expect("not poisoned");
        let seen = per_call.entry(call).or_default();
        *seen += 1;
        *seen
    };
    let mut handling = Handling {
        counts: &counts,
        answered: false,
    };
    let slow = call % SLOW_EVERY == 0 && nth == 1;
    tokio::time::sleep(if slow { SLOW } else { FAST }).await;
    handling.answered = true;
    format!("call {call}, request {nth}")
}

/// Starts the axum server on a free 127.0.0.1 port; it runs until the test's runtime ends.
async fn serve() -> (SocketAddr, Arc<Counts>) {
    let counts = Arc::new(Counts::default());
    let router = Router::new()
        .route("/item/{call}", get(item))
        .with_state(Arc::clone(&counts));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("loopback");
    let addr = listener.local_addr().expect("bound");
    let server_counts = Arc::clone(&counts);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let service = TowerToHyperService::new(router.clone());
            let counts = Arc::clone(&server_counts);
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                counts.connections_closed.fetch_add(1, Ordering::SeqCst);
            });
        }
    });
    (addr, counts)
}

/// What a client measured, with the server's counts.
#[derive(Debug)]
struct Figures {
    calls: u32,
    requests: u32,
    answered: u32,
    dropped: u32,
    connections_closed: u32,
    slowest: Duration,
}

/// Waits (real time, at most 2 s) until the server saw the `slow` requests' handlers dropped
/// and as many connections closed, then reads its counts. A connection is counted closed when
/// its task ends, after its handler was dropped: waiting for the drops alone read 3 of 4
/// closed once (CI, 2026-11-30).
async fn figures(counts: &Counts, slow: u32, slowest: Duration) -> Figures {
    let deadline = Instant::now() + Duration::from_secs(2);
    let seen = |count: &AtomicU32| count.load(Ordering::SeqCst) >= slow;
    while !(seen(&counts.dropped) && seen(&counts.connections_closed)) && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    Figures {
        calls: CALLS,
        requests: counts.requests.load(Ordering::SeqCst),
        answered: counts.answered.load(Ordering::SeqCst),
        dropped: counts.dropped.load(Ordering::SeqCst),
        connections_closed: counts.connections_closed.load(Ordering::SeqCst),
        slowest,
    }
}

/// The figures every client must show: one hedge per slow call, and only there; each hedge
/// won, each slow request's handler dropped and its connection closed before it answered; no
/// call near the 2 s tail.
fn check(figures: &Figures) {
    let slow_calls = CALLS / SLOW_EVERY;
    eprintln!(
        "{} calls: {} requests (+{:.0} %), {} answered, {} handlers dropped, {} connections \
         closed, slowest call {:?}",
        figures.calls,
        figures.requests,
        f64::from(figures.requests - figures.calls) * 100.0 / f64::from(figures.calls),
        figures.answered,
        figures.dropped,
        figures.connections_closed,
        figures.slowest
    );
    assert_eq!(figures.requests, figures.calls + slow_calls, "{figures:?}");
    assert_eq!(figures.answered, CALLS, "{figures:?}");
    assert_eq!(figures.dropped, slow_calls, "{figures:?}");
    assert!(figures.connections_closed >= slow_calls, "{figures:?}");
    assert!(figures.slowest < SLOW / 4, "{figures:?}");
}

#[derive(Debug, thiserror::Error, RetryInfo)]
enum FetchError {
    #[error(transparent)]
    #[retry(transparent)]
    Http(#[from] reqwest::Error),
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] HttpStatusError),
}

struct Items {
    client: reqwest::Client,
    base: String,
}

impl Items {
    #[retryable(hedge_after = "200ms", scope = "hedging-loopback-reqwest")]
    async fn get(&self, call: u32) -> Result<String, FetchError> {
        let url = format!("{}/item/{call}", self.base);
        let response = self.client.get(url).send().await?.check_status()?;
        Ok(response.text().await?)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reqwest_hedged_by_the_attribute_cuts_the_tail() {
    let (addr, counts) = serve().await;
    let items = Items {
        client: reqwest::Client::new(),
        base: format!("http://{addr}"),
    };
    let mut slowest = Duration::ZERO;
    for call in 1..=CALLS {
        let started = Instant::now();
        let body = items.get(call).await.expect("an answer");
        slowest = slowest.max(started.elapsed());
        let winner = if call % SLOW_EVERY == 0 { 2 } else { 1 };
        assert_eq!(body, format!("call {call}, request {winner}"));
    }
    check(&figures(&counts, CALLS / SLOW_EVERY, slowest).await);
}

type HyperError = hyper_util::client::legacy::Error;
type HyperResponse = http::Response<hyper::body::Incoming>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_layer_over_hyper_util_hedged_cuts_the_tail() {
    let (addr, counts) = serve().await;
    let client: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let classifier = ClassifierChain::<HyperResponse, HyperError>::new()
        .with(HttpStatusClassifier::new())
        .with(TransientErrorClassifier);
    let layer = RetryLayer::new(strategy_for(
        RetryConfig::default(),
        "hedging-loopback-hyper-util",
    ))
    .classifier(classifier)
    .hedge(Hedging::after(HEDGE_AFTER).expect("a delay"));
    let mut service = ServiceBuilder::new().layer(layer).service(client);
    let mut slowest = Duration::ZERO;
    for call in 1..=CALLS {
        let request: BufferedRequest = http::Request::get(format!("http://{addr}/item/{call}"))
            .body(Full::new(Bytes::new()))
            .expect("a request");
        let started = Instant::now();
        let response = service
            .ready()
            .await
            .expect("ready")
            .call(request)
            .await
            .expect("an answer");
        slowest = slowest.max(started.elapsed());
        assert!(response.status().is_success());
    }
    check(&figures(&counts, CALLS / SLOW_EVERY, slowest).await);
}
