//! Idempotency on every path: a failure that leaves it unknown whether the request reached the
//! server is sent again only for a call that is idempotent, and a refused connection (nothing
//! sent) is sent again for every call. Each cell of the matrix (path × method × declaration ×
//! failure) makes one call against a real server on loopback that counts what it received.
//!
//! The rules the expected figures follow (3 attempts at most, `MAX_ATTEMPTS`):
//!
//! * refused: nothing was sent, `RetrySafety::Yes`: 3 attempts, whatever the call;
//! * a reset (before the server read the request, or after it read it whole): the request may
//!   have been processed, `RetrySafety::Maybe` with no fault known: 3 attempts for an idempotent
//!   call, 1 for any other (a call declared not idempotent, or undeclared);
//! * a timeout after the write: `RetrySafety::Maybe`, the server's fault (it did not answer in
//!   time): 3 attempts unless the call is declared not idempotent (undeclared calls retry
//!   timeouts, as the AWS SDKs do);
//! * the idempotency is the declared one (`true`, `false`); undeclared (`-`) under `RetryLayer`
//!   over HTTP requests it is the method's (RFC 9110 §9.2.2: GET, PUT and DELETE idempotent,
//!   POST and PATCH not); elsewhere it stays undeclared (gRPC sends every call as a POST: under
//!   `RetryLayer` a gRPC call is undeclared too).
//!
//! Cells run concurrently where the server can tell them apart (each HTTP cell has its own
//! request path); the gRPC cells run one after the other (the server counts HTTP/2 requests it
//! resets unread under one key). Time is virtual: the 200 ms attempt timeouts and the backoffs
//! pass at once.

mod common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use common::fault_server::{Failure, FaultServer};
use examples::grpc_demo::{GetReply, GetRequest};
use examples::sdk_request::FetchError;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retry_core::classify::{ClassifierChain, DynErrorClassifier, TransientErrorClassifier};
use retry_core::http::{CheckStatus, HttpStatusClassifier};
use retry_core::tonic::GrpcStatusClassifier;
use retry_core::tower::{BoxError, BufferBodyLayer, BufferedRequest, RetryLayer};
use retry_core::{Retry, RetryInfo, StandardStrategy, retryable};
use retry_tests::quick_strategy;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::{JoinSet, LocalSet};
use tower::{ServiceBuilder, ServiceExt};

type HyperResponse = http::Response<hyper::body::Incoming>;
type HyperError = hyper_util::client::legacy::Error;

/// The most attempts of every call (`quick_strategy`'s).
const MAX_ATTEMPTS: u64 = 3;

/// The timeout of each attempt, on the paths that have one.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(200);

/// The attempts each HTTP cell makes, written down from the rules above. A row is a path and a
/// declaration; a column is a method, and its four figures the failures in order: refused, reset
/// before read, reset after request, timeout after write (`-`: the path cannot meet a timeout:
/// hyper-util's legacy client has none, and `TransientErrorClassifier` cannot take the
/// `BoxError` of tower's `TimeoutLayer`).
///
/// * `retryable-reqwest`: `#[retryable]` over reqwest (`FetchError`: reqwest's errors and
///   `check_status()`'s), reqwest's own timeout;
/// * `retry-io`: `Retry` with `io::Error`: a raw TCP client writing the request by hand, with
///   `attempt_timeout`;
/// * `layer-hyper-transient`: `RetryLayer` over hyper-util's legacy client, classified by
///   `HttpStatusClassifier` + `TransientErrorClassifier` (`examples/tower_hyper.rs`);
/// * `layer-hyper-dyn`: the same under tower's `TimeoutLayer`, classified by
///   `HttpStatusClassifier` + `DynErrorClassifier` (`RetryLayer`'s documentation);
/// * `layer-reqwest`: `RetryLayer` over `reqwest::Client` (its default `RetryInfoClassifier`),
///   reqwest's own timeout.
const HTTP_EXPECTED: &str = "
path                   declared  GET   PUT   DELETE  POST  PATCH
retryable-reqwest      -         3113  3113  3113    3113  3113
retryable-reqwest      true      3333  3333  3333    3333  3333
retryable-reqwest      false     3111  3111  3111    3111  3111
retry-io               -         3113  3113  3113    3113  3113
retry-io               true      3333  3333  3333    3333  3333
retry-io               false     3111  3111  3111    3111  3111
layer-hyper-transient  -         333-  333-  333-    311-  311-
layer-hyper-transient  true      333-  333-  333-    333-  333-
layer-hyper-transient  false     311-  311-  311-    311-  311-
layer-hyper-dyn        -         3333  3333  3333    3111  3111
layer-hyper-dyn        true      3333  3333  3333    3333  3333
layer-hyper-dyn        false     3111  3111  3111    3111  3111
layer-reqwest          -         3333  3333  3333    3111  3111
layer-reqwest          true      3333  3333  3333    3333  3333
layer-reqwest          false     3111  3111  3111    3111  3111
";

/// The attempts each gRPC cell makes, as [`HTTP_EXPECTED`] writes them. The methods: `Get`, an
/// idempotent method (`option idempotency_level = NO_SIDE_EFFECTS` in its `.proto`), and
/// `Charge`, one that is not (`IDEMPOTENCY_UNKNOWN`, the default). gRPC's generated clients do not
/// carry the option: the caller declares it, and undeclared calls follow the rules for
/// undeclared calls.
///
/// * `tonic-retry`: `Retry` over a tonic client (a `#[retry(transparent)]` `tonic::Status`), with
///   `attempt_timeout`;
/// * `tonic-layer`: `RetryLayer` over a `Channel`, classified by `GrpcStatusClassifier` +
///   `TransientErrorClassifier` (the tonic guide's); no timeout (`-`).
const GRPC_EXPECTED: &str = "
path                   declared  Get   Charge
tonic-retry            -         3113  3113
tonic-retry            true      3333  3333
tonic-retry            false     3111  3111
tonic-layer            -         311-  311-
tonic-layer            true      333-  333-
tonic-layer            false     311-  311-
";

/// How a call declares its idempotency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Declared {
    Undeclared,
    Idempotent,
    NotIdempotent,
}

impl Declared {
    fn parse(text: &str) -> Self {
        match text {
            "-" => Declared::Undeclared,
            "true" => Declared::Idempotent,
            "false" => Declared::NotIdempotent,
            other => panic!("no declaration {other:?} in the table"),
        }
    }

    fn flag(self) -> Option<bool> {
        match self {
            Declared::Undeclared => None,
            Declared::Idempotent => Some(true),
            Declared::NotIdempotent => Some(false),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Declared::Undeclared => "-",
            Declared::Idempotent => "true",
            Declared::NotIdempotent => "false",
        }
    }
}

/// One cell: a path, a declaration, a method and a failure.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Cell {
    path: String,
    declared: Declared,
    method: String,
    failure: usize,
}

impl Cell {
    fn failure(&self) -> Failure {
        Failure::ALL[self.failure]
    }

    /// The request path that tells the cell's requests apart on the server.
    fn request_path(&self) -> String {
        format!(
            "/cells/{}/{}/{}",
            self.path,
            self.declared.name().replace('-', "undeclared"),
            self.method
        )
    }
}

/// The cells of a table and their expected attempts (`None`: not applicable).
fn cells(table: &str) -> Vec<(Cell, Option<u64>)> {
    let mut lines = table.lines().filter(|line| !line.trim().is_empty());
    let header: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    let methods = &header[2..];
    let mut cells = Vec::new();
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.len(), 2 + methods.len(), "{line}");
        let declared = Declared::parse(words[1]);
        for (method, figures) in methods.iter().zip(&words[2..]) {
            assert_eq!(figures.len(), Failure::ALL.len(), "{line}");
            for (failure, figure) in figures.chars().enumerate() {
                let expected = figure.to_digit(10).map(u64::from);
                assert!(
                    expected.is_none_or(|n| n == 1 || n == MAX_ATTEMPTS),
                    "a call makes 1 attempt or all {MAX_ATTEMPTS}: {line}"
                );
                let cell = Cell {
                    path: words[0].to_owned(),
                    declared,
                    method: (*method).to_owned(),
                    failure,
                };
                cells.push((cell, expected));
            }
        }
    }
    cells
}

/// What a cell did: the attempts its call made, and the requests the server received from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Observed {
    attempts: u64,
    received: u64,
}

impl Observed {
    /// Whether the cell made the `expected` attempts, and the server received each of them (a
    /// refused connection receives nothing).
    fn fits(self, cell: &Cell, expected: u64) -> bool {
        let received = match cell.failure() {
            Failure::Refused => 0,
            _ => self.attempts,
        };
        self.attempts == expected && self.received == received
    }
}

#[tokio::test(start_paused = true)]
async fn every_path_sends_again_only_what_may_be_sent_again() {
    let mut servers = Vec::new();
    for failure in Failure::ALL {
        servers.push(
            FaultServer::start(failure)
                .await
                .expect("a server on loopback"),
        );
    }
    let mut observed = BTreeMap::new();

    // Local tasks: rustc cannot prove the future of a `BoxError` classifier's `RetryLayer`
    // `Send` (rust-lang/rust#102211), though it is.
    let local = LocalSet::new();
    let mut http = JoinSet::new();
    for (cell, expected) in cells(HTTP_EXPECTED) {
        let Some(expected) = expected else { continue };
        let server = servers[cell.failure].clone();
        http.spawn_local_on(
            async move {
                let attempts = run_http_cell(&cell, &server).await;
                let received = server.received(&cell.request_path());
                (cell, expected, attempts, u64::from(received))
            },
            &local,
        );
    }
    local
        .run_until(async {
            while let Some(result) = http.join_next().await {
                let (cell, expected, attempts, received) = result.expect("the cell ran");
                observed.insert(cell, (expected, Observed { attempts, received }));
            }
        })
        .await;

    for (cell, expected) in cells(GRPC_EXPECTED) {
        let Some(expected) = expected else { continue };
        let server = &servers[cell.failure];
        let before = server.received_total();
        let attempts = run_grpc_cell(&cell, server).await;
        let received = u64::from(server.received_total() - before);
        observed.insert(cell, (expected, Observed { attempts, received }));
    }

    let mut report = String::new();
    let mut wrong = 0;
    for (cell, (expected, seen)) in &observed {
        let fits = seen.fits(cell, *expected);
        wrong += usize::from(!fits);
        let _ = writeln!(
            report,
            "{:<22} {:<6} {:<7} {:<20} expected {} attempts {} received {}{}",
            cell.path,
            cell.declared.name(),
            cell.method,
            cell.failure().name(),
            expected,
            seen.attempts,
            seen.received,
            if fits { "" } else { "   <-- WRONG" }
        );
    }
    println!("{report}");
    assert_eq!(
        wrong,
        0,
        "{wrong} of {} cells wrong:\n{report}",
        observed.len()
    );
}

/// The method of an HTTP cell.
fn http_method(cell: &Cell) -> http::Method {
    http::Method::from_bytes(cell.method.as_bytes()).expect("a method")
}

/// Runs one HTTP cell's call: the attempts it made.
async fn run_http_cell(cell: &Cell, server: &FaultServer) -> u64 {
    let strategy = quick_strategy();
    let url = server.url(&cell.request_path());
    let method = http_method(cell);
    match cell.path.as_str() {
        "retryable-reqwest" => {
            let client = reqwest_client();
            let _ = match cell.declared {
                Declared::Undeclared => fetch(&strategy, &client, method, &url).await,
                Declared::Idempotent => fetch_idempotent(&strategy, &client, method, &url).await,
                Declared::NotIdempotent => {
                    fetch_not_idempotent(&strategy, &client, method, &url).await
                }
            };
        }
        "retry-io" => {
            let retry = Retry::new(&strategy).attempt_timeout(ATTEMPT_TIMEOUT);
            let retry = match cell.declared.flag() {
                Some(idempotent) => retry.idempotent(idempotent),
                None => retry,
            };
            let path = cell.request_path();
            let _ = retry
                .run(|| raw_request(server.addr(), &method, &path))
                .await;
        }
        "layer-hyper-transient" => {
            let classifier = ClassifierChain::<HyperResponse, HyperError>::new()
                .with(HttpStatusClassifier::new())
                .with(TransientErrorClassifier);
            let layer = declare(
                RetryLayer::new(strategy.clone()).classifier(classifier),
                cell,
            );
            let service = ServiceBuilder::new().layer(layer).service(hyper_client());
            let _ = service.oneshot(hyper_request(method, &url)).await;
        }
        "layer-hyper-dyn" => hyper_dyn_call(&strategy, cell, hyper_request(method, &url)).await,
        "layer-reqwest" => {
            let client = reqwest_client();
            let request = client.request(method, &url).build().expect("a request");
            let layer = RetryLayer::new(strategy.clone())
                .copy_requests_with(|request: &reqwest::Request| request.try_clone());
            let service = ServiceBuilder::new()
                .layer(declare(layer, cell))
                .service(client);
            let _ = service.oneshot(request).await;
        }
        other => panic!("no HTTP path {other:?}"),
    }
    strategy.scope().stats().attempts
}

/// The `layer-hyper-dyn` call.
async fn hyper_dyn_call(strategy: &StandardStrategy, cell: &Cell, request: BufferedRequest) {
    let classifier = ClassifierChain::<HyperResponse, BoxError>::new()
        .with(HttpStatusClassifier::new())
        .with(DynErrorClassifier);
    let layer = declare(
        RetryLayer::new(strategy.clone()).classifier(classifier),
        cell,
    );
    let service = ServiceBuilder::new()
        .layer(layer)
        .timeout(ATTEMPT_TIMEOUT)
        .service(hyper_client());
    let _ = service.oneshot(request).await;
}

/// `layer` with the cell's declaration (undeclared: each request says its own).
fn declare<S, C, P, L>(layer: RetryLayer<S, C, P, L>, cell: &Cell) -> RetryLayer<S, C, P, L> {
    match cell.declared.flag() {
        Some(idempotent) => layer.idempotent(idempotent),
        None => layer,
    }
}

/// reqwest's client: a connection per request, reqwest's own timeout.
fn reqwest_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(ATTEMPT_TIMEOUT)
        .build()
        .expect("a client")
}

/// hyper-util's legacy client, a connection per request.
fn hyper_client() -> Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build_http()
}

/// A request with `method` to `url` and an empty body.
fn hyper_request(method: http::Method, url: &str) -> BufferedRequest {
    http::Request::builder()
        .method(method)
        .uri(url)
        .body(Full::new(Bytes::new()))
        .expect("a request")
}

/// One attempt of the `#[retryable]` cells: the request, its status checked.
async fn send_once(
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
) -> Result<(), FetchError> {
    client.request(method, url).send().await?.check_status()?;
    Ok(())
}

#[retryable(strategy = strategy)]
async fn fetch(
    strategy: &StandardStrategy,
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
) -> Result<(), FetchError> {
    send_once(client, method, url).await
}

#[retryable(strategy = strategy, idempotent = true)]
async fn fetch_idempotent(
    strategy: &StandardStrategy,
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
) -> Result<(), FetchError> {
    send_once(client, method, url).await
}

#[retryable(strategy = strategy, idempotent = false)]
async fn fetch_not_idempotent(
    strategy: &StandardStrategy,
    client: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
) -> Result<(), FetchError> {
    send_once(client, method, url).await
}

/// An HTTP/1.1 request written by hand on a connection of its own: its errors are the socket's
/// `io::Error`s (an answer that is no response is `InvalidData`).
async fn raw_request(addr: SocketAddr, method: &http::Method, path: &str) -> io::Result<()> {
    let mut stream = TcpStream::connect(addr).await?;
    let request = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await?;
    if response.starts_with(b"HTTP/1.1 2") {
        Ok(())
    } else if response.is_empty() {
        Err(io::ErrorKind::UnexpectedEof.into())
    } else {
        Err(io::ErrorKind::InvalidData.into())
    }
}

/// The gRPC cells' error: the call's status, or the attempt's timeout.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum RpcError {
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] tonic::Status),
    #[error(transparent)]
    #[retry(transparent)]
    Timeout(#[from] tokio::time::error::Elapsed),
}

/// The `.proto` path of a gRPC cell's method.
fn grpc_path(cell: &Cell) -> &'static str {
    match cell.method.as_str() {
        "Get" => "/kv.Kv/Get",
        "Charge" => "/kv.Kv/Charge",
        other => panic!("no gRPC method {other:?}"),
    }
}

/// One unary call of `path` over `transport`, as a generated client makes it.
async fn unary<T>(transport: T, path: &'static str) -> Result<GetReply, tonic::Status>
where
    T: tonic::client::GrpcService<tonic::body::Body>,
    T::Error: Into<BoxError>,
    T::ResponseBody: http_body::Body<Data = Bytes> + Send + 'static,
    <T::ResponseBody as http_body::Body>::Error: Into<BoxError>,
{
    let mut grpc = tonic::client::Grpc::new(transport);
    grpc.ready()
        .await
        .map_err(|error| tonic::Status::from_error(error.into()))?;
    let request = tonic::Request::new(GetRequest { key: "k".into() });
    let path = http::uri::PathAndQuery::from_static(path);
    let codec = tonic_prost::ProstCodec::default();
    Ok(grpc.unary(request, path, codec).await?.into_inner())
}

/// Runs one gRPC cell's call: the attempts it made.
async fn run_grpc_cell(cell: &Cell, server: &FaultServer) -> u64 {
    let strategy = quick_strategy();
    let channel = tonic::transport::Endpoint::from_shared(server.url(""))
        .expect("a uri")
        .connect_lazy();
    let path = grpc_path(cell);
    match cell.path.as_str() {
        "tonic-retry" => {
            let retry = Retry::new(&strategy).attempt_timeout(ATTEMPT_TIMEOUT);
            let retry = match cell.declared.flag() {
                Some(idempotent) => retry.idempotent(idempotent),
                None => retry,
            };
            let _ = retry
                .run(|| async { Ok::<_, RpcError>(unary(channel.clone(), path).await?) })
                .await;
        }
        "tonic-layer" => {
            let classifier =
                ClassifierChain::<http::Response<tonic::body::Body>, tonic::transport::Error>::new(
                )
                .with(GrpcStatusClassifier)
                .with(TransientErrorClassifier);
            let layer = declare(
                RetryLayer::new(strategy.clone()).classifier(classifier),
                cell,
            );
            let transport = ServiceBuilder::new()
                .layer(BufferBodyLayer::new(64 * 1024))
                .layer(layer)
                .map_request(|request: BufferedRequest| request.map(tonic::body::Body::new))
                .service(channel);
            let _ = unary(transport, path).await;
        }
        other => panic!("no gRPC path {other:?}"),
    }
    strategy.scope().stats().attempts
}
