//! The errors users meet under `RetryLayer` besides responses, against hyper-util's client and a
//! real HTTP server on loopback: tower's `TimeoutLayer` (its `Elapsed`, inside a `BoxError`),
//! hyper-util's connect errors and connect timeout, tower's `LoadShedLayer` (its `Overloaded`),
//! and a `BoxError` that wraps an `io::Error`. Each is classified as `DynErrorClassifier`'s
//! rustdoc table says.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use examples::http_demo::{Reply, serve};
use examples::refused_addr;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;
use retry_core::classify::{ClassifierChain, DynErrorClassifier, TransientErrorClassifier};
use retry_core::http::HttpStatusClassifier;
use retry_core::tower::{BoxError, BufferedRequest, RetryLayer};
use retry_core::{RetryConfig, StandardStrategy};
use retry_tests::quick_strategy;
use tower::{Service, ServiceBuilder, ServiceExt};

type HyperError = hyper_util::client::legacy::Error;
type HyperResponse = http::Response<hyper::body::Incoming>;

/// The per-attempt timeout of the `TimeoutLayer` under the retry layer.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(200);

/// The classic preset (a fixed quota of 500; a timeout's retry costs 10, any other 5).
fn classic_strategy() -> StandardStrategy {
    StandardStrategy::new(
        RetryConfig::aws_classic()
            .initial_backoff(Duration::from_millis(10))
            .build()
            .expect("valid config"),
    )
}

/// Responses by status, errors (type-erased by `TimeoutLayer`) by their source chain.
fn boxed_classifier() -> ClassifierChain<HyperResponse, BoxError> {
    ClassifierChain::new()
        .with(HttpStatusClassifier::new())
        .with(DynErrorClassifier)
}

/// The tower_hyper example's classifier for hyper-util's own errors.
fn hyper_classifier() -> ClassifierChain<HyperResponse, HyperError> {
    ClassifierChain::new()
        .with(HttpStatusClassifier::new())
        .with(TransientErrorClassifier)
}

/// hyper-util's client over `connector`, opening a connection per request.
fn client<C>(connector: C) -> Client<C, Full<Bytes>>
where
    C: hyper_util::client::legacy::connect::Connect + Clone,
{
    Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build(connector)
}

/// `RetryLayer` over tower's `TimeoutLayer` over `client`, counting the attempts the retry layer
/// makes.
fn timed<C>(
    strategy: StandardStrategy,
    client: Client<C, Full<Bytes>>,
    attempts: Arc<AtomicU32>,
) -> impl Service<BufferedRequest, Response = HyperResponse, Error = BoxError> + Clone
where
    C: hyper_util::client::legacy::connect::Connect + Clone + Send + Sync + 'static,
{
    ServiceBuilder::new()
        .layer(RetryLayer::new(strategy).classifier(boxed_classifier()))
        .map_request(move |request: BufferedRequest| {
            attempts.fetch_add(1, Ordering::SeqCst);
            request
        })
        .timeout(ATTEMPT_TIMEOUT)
        .service(client)
}

fn get(url: &str) -> BufferedRequest {
    http::Request::get(url)
        .body(Full::new(Bytes::new()))
        .expect("valid request")
}

#[tokio::test(start_paused = true)]
async fn an_attempt_cut_by_a_timeout_layer_is_retried() {
    // The first answer never comes: the timeout cuts the attempt; the second would succeed.
    let server = serve(vec![Reply::Hang, Reply::Ok("fresh")])
        .await
        .expect("serve");
    let attempts = Arc::new(AtomicU32::new(0));
    let service = timed(
        quick_strategy(),
        client(HttpConnector::new()),
        attempts.clone(),
    );
    let response = service
        .oneshot(get(&server.url("/slow")))
        .await
        .expect("the second attempt answers");
    assert_eq!(response.status(), 200);
    assert_eq!((server.hits(), attempts.load(Ordering::SeqCst)), (2, 2));
}

#[tokio::test(start_paused = true)]
async fn when_every_attempt_is_cut_the_last_elapsed_is_returned() {
    let server = serve(vec![Reply::Hang]).await.expect("serve");
    let attempts = Arc::new(AtomicU32::new(0));
    let strategy = classic_strategy();
    let scope = strategy.scope().clone();
    let service = timed(strategy, client(HttpConnector::new()), attempts.clone());
    let error = service
        .oneshot(get(&server.url("/slow")))
        .await
        .expect_err("never answers");
    assert!(error.is::<tower::timeout::error::Elapsed>(), "{error:?}");
    assert_eq!((server.hits(), attempts.load(Ordering::SeqCst)), (3, 3));
    assert_eq!(
        scope.quota().level(),
        500 - 2 * 10,
        "retried as timeouts, at a timeout's cost"
    );
}

#[tokio::test(start_paused = true)]
async fn a_refused_connection_under_a_timeout_layer_is_retried() {
    // A `BoxError` holding hyper-util's connect error, which holds the `io::Error`.
    let url = format!("http://{}/item", refused_addr().await.expect("loopback"));
    let attempts = Arc::new(AtomicU32::new(0));
    let service = timed(
        quick_strategy(),
        client(HttpConnector::new()),
        attempts.clone(),
    );
    let error = service
        .oneshot(get(&url))
        .await
        .expect_err("nothing listens");
    let connect = error
        .downcast_ref::<HyperError>()
        .expect("hyper-util's error");
    assert!(connect.is_connect(), "{connect:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

/// A resolver that fails every lookup with an `io::Error` of kind `Other`, as a failed name
/// lookup does: a connect error whose cause is no transient I/O kind. Nothing leaves the machine.
fn failing_resolver() -> HttpConnector<
    impl Service<
        Name,
        Response = std::vec::IntoIter<std::net::SocketAddr>,
        Error = std::io::Error,
        Future: Send,
    > + Clone
    + Send
    + Sync
    + 'static,
> {
    HttpConnector::new_with_resolver(tower::service_fn(|name: Name| async move {
        Err(std::io::Error::other(format!("no address for {name}")))
    }))
}

#[tokio::test(start_paused = true)]
async fn a_connect_error_is_retried_whatever_its_cause() {
    // hyper-util's `is_connect`: the request never reached the server, so it is safe to send.
    let attempts = Arc::new(AtomicU32::new(0));
    let service = timed(
        quick_strategy(),
        client(failing_resolver()),
        attempts.clone(),
    );
    let error = service
        .oneshot(get("http://unresolvable.invalid/item"))
        .await
        .expect_err("no address");
    let connect = error
        .downcast_ref::<HyperError>()
        .expect("hyper-util's error");
    assert!(connect.is_connect(), "{connect:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 3, "boxed: retried");

    // The same error unboxed, with the tower_hyper example's classifier chain.
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(quick_strategy()).classifier(hyper_classifier()))
        .map_request(move |request: BufferedRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            request
        })
        .service(client(failing_resolver()));
    let error = service
        .oneshot(get("http://unresolvable.invalid/item"))
        .await
        .expect_err("no address");
    assert!(error.is_connect(), "{error:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 3, "unboxed: retried");
}

/// A listener on loopback whose accept queue is full: it never accepts, and one connection
/// already waits in its queue of one, so the kernel drops every further SYN and a connect hangs
/// until the client's connect timeout (nothing leaves the machine).
fn full_listener() -> (tokio::net::TcpListener, std::net::TcpStream) {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind("127.0.0.1:0".parse().expect("address"))
        .expect("bind");
    let listener = socket.listen(0).expect("listen");
    let addr = listener.local_addr().expect("address");
    let queued = std::net::TcpStream::connect(addr).expect("fills the queue");
    (listener, queued)
}

#[tokio::test(start_paused = true)]
async fn a_connect_timeout_is_retried_as_a_timeout() {
    let (listener, _queued) = full_listener();
    let url = format!("http://{}/item", listener.local_addr().expect("address"));
    let mut connector = HttpConnector::new();
    connector.set_connect_timeout(Some(Duration::from_millis(100)));
    let strategy = classic_strategy();
    let scope = strategy.scope().clone();
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(strategy).classifier(hyper_classifier()))
        .map_request(move |request: BufferedRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            request
        })
        .service(client(connector));
    let error = service
        .oneshot(get(&url))
        .await
        .expect_err("never connects");
    assert!(error.is_connect(), "{error:?}");
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
    assert_eq!(
        scope.quota().level(),
        500 - 2 * 10,
        "two retries at a timeout's cost"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_shed_by_a_load_shed_layer_is_not_retried() {
    // One request in flight holds the only permit of the concurrency limit; the next is shed.
    let server = serve(vec![Reply::Hang]).await.expect("serve");
    let attempts = Arc::new(AtomicU32::new(0));
    let counted = attempts.clone();
    let strategy = quick_strategy();
    let scope = strategy.scope().clone();
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(strategy).classifier(boxed_classifier()))
        .map_request(move |request: BufferedRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            request
        })
        .load_shed()
        .concurrency_limit(1)
        .service(client(HttpConnector::new()));
    let in_flight = tokio::spawn(service.clone().oneshot(get(&server.url("/slow"))));
    while server.hits() == 0 {
        tokio::task::yield_now().await;
    }
    let error = service
        .oneshot(get(&server.url("/other")))
        .await
        .expect_err("shed");
    assert!(
        error.is::<tower::load_shed::error::Overloaded>(),
        "{error:?}"
    );
    assert_eq!(attempts.load(Ordering::SeqCst), 2, "one attempt each");
    assert_eq!(scope.stats().retries, 0);
    in_flight.abort();
}
