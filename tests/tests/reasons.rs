//! One vocabulary of retry reasons, `ErrorKind::as_str` (its documentation has the table): on
//! every classifier path, a 503, a `#[retry(transient)]` error, a reset on an idempotent call, a
//! timeout, a 429 and a 4xx carry the reason the table gives, in all four places a retry is
//! reported: the `retry.attempt` span's `retry.reason`, the "retrying" event's `reason`, the
//! `on_retry` hook's `RetryEvent::reason`, and the `retry.retries` metric's `reason` label.
//!
//! Each call makes 3 attempts against a real server on loopback that fails every one the same
//! way, so each retried failure is reported twice in each place; a failure that is not retried
//! is reported nowhere. The calls run one after the other, each in a scope of its own (the
//! spans, events and metrics name it); time is virtual.

mod common;

use std::collections::BTreeMap;
use std::fmt::{Debug, Write as _};
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use common::fault_server::{Failure, FaultServer};
use examples::grpc_demo::{self, GetRequest, KvClient};
use examples::http_demo::{self, status};
use examples::sdk_request::FetchError;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use metrics::{Counter, CounterFn, Gauge, Histogram, Key, KeyName, Metadata, SharedString, Unit};
use retry_core::backoff::Jitter;
use retry_core::classify::{ClassifierChain, DynErrorClassifier, TransientErrorClassifier};
use retry_core::http::{CheckStatus, HttpStatusClassifier, HttpStatusError};
use retry_core::strategy::ConfiguredStrategy;
use retry_core::tower::{BoxError, BufferedRequest, RetryLayer};
use retry_core::{Retry, RetryConfig, RetryEvent, RetryInfo, retryable, strategy_for};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::error::Elapsed;
use tower::{ServiceBuilder, ServiceExt};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// The reason each failure's retries carry, path by path, written down from `ErrorKind`'s table
/// (`-`: not retried, so reported nowhere; `n/a`: the path cannot meet that failure).
///
/// * `derive`: `#[retryable]` over an error enum deriving `RetryInfo` (the Quick start's shape:
///   an `HttpStatusError` from `check_status()`, a `#[retry(transient)]` variant, an `io::Error`,
///   the attempt timeout's `Elapsed`);
/// * `reqwest`: `#[retryable]` over reqwest (`FetchError`: `reqwest::Error`, `HttpStatusError`);
/// * `layer-hyper-transient`, `layer-hyper-dyn`: `RetryLayer` over hyper-util with
///   `HttpStatusClassifier` + `TransientErrorClassifier`, and under `TimeoutLayer` with
///   `HttpStatusClassifier` + `DynErrorClassifier`;
/// * `tonic`: `Retry` over a tonic client (`UNAVAILABLE` for the 503, `RESOURCE_EXHAUSTED` for the
///   429, `NOT_FOUND` for the 4xx);
/// * `io`: `Retry` with `io::Error`, a raw TCP client;
/// * `dyn`: `Retry` with `DynErrorClassifier` over `Box<dyn Error>`.
///
/// Every call is declared idempotent (under `RetryLayer`: a GET), so that a reset is retried.
const EXPECTED: &str = "
path                   503     transient  reset      timeout  429         4xx
derive                 server  transient  transient  timeout  throttling  -
reqwest                server  n/a        transient  timeout  throttling  -
layer-hyper-transient  server  n/a        transient  n/a      throttling  -
layer-hyper-dyn        server  n/a        transient  timeout  throttling  -
tonic                  server  n/a        transient  timeout  throttling  -
io                     n/a     n/a        transient  timeout  n/a         n/a
dyn                    server  n/a        transient  timeout  throttling  -
";

/// The attempt timeout, on the paths that cut attempts.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(200);

/// 3 attempts, 10 ms backoffs (throttling too), no jitter.
fn config() -> RetryConfig {
    RetryConfig::builder()
        .max_attempts(3)
        .initial_backoff(Duration::from_millis(10))
        .throttling_backoff(Duration::from_millis(10))
        .jitter(Jitter::None)
        .build()
        .expect("a valid config")
}

/// What the four places reported about one call's retries.
#[derive(Debug, Default, PartialEq, Eq)]
struct Reported {
    spans: Vec<String>,
    events: Vec<String>,
    /// `None`: the path has no hook (`RetryLayer`).
    hooks: Option<Vec<String>>,
    /// The `retry.retries` counter, by its `reason` label (zeros left out).
    metric: BTreeMap<String, u64>,
}

impl Reported {
    /// What a call whose two retries carry `reason` reports (`None`: a call not retried).
    fn expected(reason: Option<&str>, has_hook: bool) -> Self {
        let twice = reason.map_or_else(Vec::new, |reason| vec![reason.to_owned(); 2]);
        Reported {
            spans: twice.clone(),
            events: twice.clone(),
            hooks: has_hook.then(|| twice.clone()),
            metric: reason
                .map(|reason| BTreeMap::from([(reason.to_owned(), 2)]))
                .unwrap_or_default(),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn every_path_reports_the_documented_reason_everywhere() {
    let capture = Capture::default();
    let _subscriber =
        tracing::subscriber::set_default(tracing_subscriber::registry().with(capture.clone()));
    let recorder = CountingRecorder::default();
    let mut lines = EXPECTED.lines().filter(|line| !line.trim().is_empty());
    let failures: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    let mut report = String::new();
    let mut wrong = 0;
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        let path = words[0];
        for (failure, reason) in failures[1..].iter().zip(&words[1..]) {
            if *reason == "n/a" {
                continue;
            }
            let scope = format!("reasons-{path}-{failure}");
            let strategy =
                metrics::with_local_recorder(&recorder, || strategy_for(config(), &scope));
            let hooks = run(path, failure, &strategy).await;
            let reported = Reported {
                spans: capture.take("span", &scope),
                events: capture.take("event", &scope),
                hooks,
                metric: recorder.retries(&scope),
            };
            let expected = (*reason != "-").then_some(*reason);
            let fits = reported == Reported::expected(expected, reported.hooks.is_some());
            wrong += usize::from(!fits);
            let _ = writeln!(
                report,
                "{path:<22} {failure:<10} expected {reason:<11} {}{reported:?}",
                if fits { "" } else { "WRONG " }
            );
        }
    }
    println!("{report}");
    assert_eq!(
        wrong, 0,
        "{wrong} calls reported the wrong reasons:\n{report}"
    );
}

/// Makes the call of `path` meeting `failure` under `strategy`: what its hook heard, if it has
/// one.
async fn run(path: &str, failure: &str, strategy: &ConfiguredStrategy) -> Option<Vec<String>> {
    let hooked = Hooked::default();
    match path {
        "derive" => {
            let action = match failure {
                "transient" => Action::Unavailable,
                "reset" => Action::Raw(server(Failure::ResetAfterRequest).await.addr()),
                "timeout" => Action::Raw(server(Failure::TimeoutAfterWrite).await.addr()),
                status => Action::Get(status_server(status).await),
            };
            DERIVE_HOOK
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
            let _ = store_get(strategy, &reqwest_client(), &action).await;
            let heard = DERIVE_HOOK.lock().unwrap_or_else(PoisonError::into_inner);
            return Some(heard.clone());
        }
        "reqwest" => {
            let url = http_url(failure).await;
            DERIVE_HOOK
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clear();
            let _ = fetch(strategy, &reqwest_client(), &url).await;
            let heard = DERIVE_HOOK.lock().unwrap_or_else(PoisonError::into_inner);
            return Some(heard.clone());
        }
        "layer-hyper-transient" => {
            let classifier = ClassifierChain::<HyperResponse, HyperError>::new()
                .with(HttpStatusClassifier::new())
                .with(TransientErrorClassifier);
            let service = ServiceBuilder::new()
                .layer(RetryLayer::new(strategy.clone()).classifier(classifier))
                .service(hyper_client());
            let _ = service.oneshot(get(&http_url(failure).await)).await;
            return None;
        }
        "layer-hyper-dyn" => {
            let classifier = ClassifierChain::<HyperResponse, BoxError>::new()
                .with(HttpStatusClassifier::new())
                .with(DynErrorClassifier);
            let service = ServiceBuilder::new()
                .layer(RetryLayer::new(strategy.clone()).classifier(classifier))
                .timeout(ATTEMPT_TIMEOUT)
                .service(hyper_client());
            let _ = service.oneshot(get(&http_url(failure).await)).await;
            return None;
        }
        "tonic" => {
            let uri = grpc_uri(failure).await;
            let channel = tonic::transport::Endpoint::from_shared(uri)
                .expect("a uri")
                .connect_lazy();
            let _ = Retry::new(strategy)
                .idempotent(true)
                .attempt_timeout(ATTEMPT_TIMEOUT)
                .on_retry(|event: &RetryEvent<'_, RpcError>| hooked.hear(event))
                .run(|| async {
                    let request = GetRequest { key: "k".into() };
                    Ok::<_, RpcError>(KvClient::new(channel.clone()).get(request).await?)
                })
                .await;
        }
        "io" => {
            let failure = match failure {
                "reset" => Failure::ResetAfterRequest,
                _ => Failure::TimeoutAfterWrite,
            };
            let addr = server(failure).await.addr();
            let _ = Retry::new(strategy)
                .idempotent(true)
                .attempt_timeout(ATTEMPT_TIMEOUT)
                .on_retry(|event: &RetryEvent<'_, io::Error>| hooked.hear(event))
                .run(|| raw_get(addr))
                .await;
        }
        "dyn" => {
            let url = http_url(failure).await;
            let client = reqwest_client();
            let _ = Retry::new(strategy)
                .idempotent(true)
                .classifier(DynErrorClassifier)
                .on_retry(|event: &RetryEvent<'_, BoxError>| hooked.hear(event))
                .run(|| async {
                    let response = client.get(&url).send().await?;
                    Ok::<_, BoxError>(response.check_status()?.text().await?)
                })
                .await;
        }
        other => panic!("no path {other:?}"),
    }
    Some(hooked.heard())
}

/// What an `on_retry` closure heard: each retry's reason.
#[derive(Default)]
struct Hooked(Mutex<Vec<String>>);

impl Hooked {
    fn hear<E>(&self, event: &RetryEvent<'_, E>) {
        let reason = event.reason().kind().as_str().to_owned();
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(reason);
    }

    fn heard(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// What the `#[retryable]` paths' hook heard (the calls run one at a time).
static DERIVE_HOOK: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The `#[retryable]` paths' hook.
fn hear<E>(event: &RetryEvent<'_, E>) {
    let reason = event.reason().kind().as_str().to_owned();
    DERIVE_HOOK
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(reason);
}

/// A server failing every request as `failure` says.
async fn server(failure: Failure) -> FaultServer {
    FaultServer::start(failure)
        .await
        .expect("a server on loopback")
}

/// A server answering `code` to every request.
async fn status_server(code: &str) -> String {
    let code = match code {
        "4xx" => 404,
        other => other.parse().expect("a status"),
    };
    let server = http_demo::serve(vec![status(code, None)])
        .await
        .expect("a server on loopback");
    server.url("/item")
}

/// The URL of a server failing every request with `failure` (a status, a reset, a timeout).
async fn http_url(failure: &str) -> String {
    match failure {
        "reset" => server(Failure::ResetAfterRequest).await.url("/item"),
        "timeout" => server(Failure::TimeoutAfterWrite).await.url("/item"),
        status => status_server(status).await,
    }
}

/// The URI of a gRPC server failing every call with `failure`.
async fn grpc_uri(failure: &str) -> String {
    let code = match failure {
        "reset" => return server(Failure::ResetAfterRequest).await.url(""),
        "timeout" => return server(Failure::TimeoutAfterWrite).await.url(""),
        "503" => tonic::Code::Unavailable,
        "429" => tonic::Code::ResourceExhausted,
        "4xx" => tonic::Code::NotFound,
        other => panic!("no gRPC failure {other:?}"),
    };
    let server = grpc_demo::serve(vec![grpc_demo::Reply::Fail(code, None)])
        .await
        .expect("a server on loopback");
    server.uri()
}

type HyperResponse = http::Response<hyper::body::Incoming>;
type HyperError = hyper_util::client::legacy::Error;

/// hyper-util's legacy client, a connection per request.
fn hyper_client() -> Client<hyper_util::client::legacy::connect::HttpConnector, Full<Bytes>> {
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build_http()
}

/// A GET of `url`.
fn get(url: &str) -> BufferedRequest {
    http::Request::get(url)
        .body(Full::new(Bytes::new()))
        .expect("a request")
}

/// reqwest's client: a connection per request, reqwest's own timeout.
fn reqwest_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(ATTEMPT_TIMEOUT)
        .build()
        .expect("a client")
}

/// A GET written by hand on a connection of its own: the socket's `io::Error`s.
async fn raw_get(addr: SocketAddr) -> io::Result<String> {
    let mut stream = TcpStream::connect(addr).await?;
    let request = format!("GET /item HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await?;
    Ok(response)
}

/// The Quick start's shape of error: each variant says whether a retry can help.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    #[error(transparent)]
    Status(#[from] HttpStatusError),
    #[error(transparent)]
    Http(#[from] reqwest::Error),
    #[error("unavailable")]
    #[retry(transient)]
    Unavailable,
    #[error(transparent)]
    #[retry(transparent)]
    Io(#[from] io::Error),
    #[error(transparent)]
    #[retry(transparent)]
    Timeout(#[from] Elapsed),
}

/// What an attempt of the `derive` path does.
enum Action {
    /// A GET of this URL with reqwest, its status checked.
    Get(String),
    /// Fails with `StoreError::Unavailable`.
    Unavailable,
    /// A GET written by hand to this address.
    Raw(SocketAddr),
}

#[retryable(strategy = strategy, idempotent = true, attempt_timeout = "200ms", on_retry = hear)]
async fn store_get(
    strategy: &ConfiguredStrategy,
    client: &reqwest::Client,
    action: &Action,
) -> Result<String, StoreError> {
    match action {
        Action::Get(url) => Ok(client.get(url).send().await?.check_status()?.text().await?),
        Action::Unavailable => Err(StoreError::Unavailable),
        Action::Raw(addr) => Ok(raw_get(*addr).await?),
    }
}

#[retryable(strategy = strategy, idempotent = true, on_retry = hear)]
async fn fetch(
    strategy: &ConfiguredStrategy,
    client: &reqwest::Client,
    url: &str,
) -> Result<String, FetchError> {
    Ok(client.get(url).send().await?.check_status()?.text().await?)
}

/// The tonic path's error: the call's status, or the attempt's timeout.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum RpcError {
    #[error(transparent)]
    Status(#[from] tonic::Status),
    #[error(transparent)]
    #[retry(transparent)]
    Timeout(#[from] Elapsed),
}

/// A tracing layer keeping the reason of every `retry.attempt` span and "retrying" event, with
/// its scope.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<Seen>>>);

/// One reason reported: by a "span" or an "event", for a scope.
struct Seen {
    sink: &'static str,
    scope: String,
    reason: String,
}

impl Capture {
    /// The reasons `sink` ("span" or "event") reported for `scope`, taken out.
    fn take(&self, sink: &str, scope: &str) -> Vec<String> {
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let (taken, kept): (Vec<Seen>, Vec<Seen>) = seen
            .drain(..)
            .partition(|seen| seen.sink == sink && seen.scope == scope);
        *seen = kept;
        taken.into_iter().map(|seen| seen.reason).collect()
    }

    fn keep(&self, sink: &'static str, fields: &Fields, scope: &str, reason: &str) {
        let scope = fields.0.get(scope).cloned().unwrap_or_default();
        let reason = fields.0.get(reason).cloned().unwrap_or_default();
        let mut seen = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        seen.push(Seen {
            sink,
            scope,
            reason,
        });
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attributes: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        if attributes.metadata().name() == "retry.attempt" {
            let mut fields = Fields::default();
            attributes.record(&mut fields);
            self.keep("span", &fields, "retry.scope", "retry.reason");
        }
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut fields = Fields::default();
        event.record(&mut fields);
        if fields.0.get("message").map(String::as_str) == Some("retrying") {
            self.keep("event", &fields, "scope", "reason");
        }
    }
}

/// A span's or event's fields, as text.
#[derive(Default)]
struct Fields(BTreeMap<String, String>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

/// A `metrics` recorder counting the increments of every counter, by its name and labels.
#[derive(Clone, Default)]
struct CountingRecorder(Arc<Mutex<BTreeMap<String, u64>>>);

impl CountingRecorder {
    /// The `retry.retries` counts of `scope`, by reason (zeros left out).
    fn retries(&self, scope: &str) -> BTreeMap<String, u64> {
        let prefix = format!("{}{{scope={scope},reason=", retry_core::metrics::RETRIES);
        let counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        counts
            .iter()
            .filter(|(_, count)| **count > 0)
            .filter_map(|(key, count)| {
                let reason = key.strip_prefix(&prefix)?.strip_suffix('}')?;
                Some((reason.to_owned(), *count))
            })
            .collect()
    }
}

/// One counter of a [`CountingRecorder`].
struct CountedCounter {
    key: String,
    counts: Arc<Mutex<BTreeMap<String, u64>>>,
}

impl CounterFn for CountedCounter {
    fn increment(&self, value: u64) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        *counts.entry(self.key.clone()).or_default() += value;
    }

    fn absolute(&self, value: u64) {
        let mut counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(self.key.clone()).or_default();
        *count = (*count).max(value);
    }
}

impl metrics::Recorder for CountingRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}
    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let labels: Vec<String> = key
            .labels()
            .map(|label| format!("{}={}", label.key(), label.value()))
            .collect();
        let key = format!("{}{{{}}}", key.name(), labels.join(","));
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), 0);
        Counter::from_arc(Arc::new(CountedCounter {
            key,
            counts: Arc::clone(&self.0),
        }))
    }

    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::noop()
    }

    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::noop()
    }
}
