//! Idempotency as an input: an attempt that timed out after its request was sent (it may have
//! reached the server) is sent again for an idempotent call and not for one that is not, against
//! a real server on loopback that never answers the first request. Under `RetryLayer` the
//! idempotency of an `http` request is its method's (RFC 9110 §9.2.2: PUT is idempotent, POST is
//! not) unless the layer declares it; the plain API and `#[retryable]` declare it.

use std::time::Duration;

use bytes::Bytes;
use examples::http_demo::{HttpServer, Reply, serve};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use retry_core::classify::{ClassifierChain, DynErrorClassifier};
use retry_core::http::HttpStatusClassifier;
use retry_core::tower::{BoxError, BufferedRequest, RetryLayer};
use retry_core::{Retry, StandardStrategy, retryable};
use retry_tests::quick_strategy;
use tower::{ServiceBuilder, ServiceExt};

type HyperResponse = http::Response<hyper::body::Incoming>;

/// The per-attempt timeout: the first request hangs until it cuts the attempt.
const ATTEMPT_TIMEOUT: Duration = Duration::from_millis(200);

/// A server whose first request never gets an answer and whose second gets 200.
async fn hangs_once() -> HttpServer {
    serve(vec![Reply::Hang, Reply::Ok("done")])
        .await
        .expect("serve")
}

/// A request with `method` to `url`, for hyper-util's client.
fn request(method: http::Method, url: &str) -> BufferedRequest {
    http::Request::builder()
        .method(method)
        .uri(url)
        .body(Full::new(Bytes::new()))
        .expect("valid request")
}

/// Sends `request` through `layer` over tower's `TimeoutLayer` over hyper-util's client: the
/// status, or the error.
async fn send_through(
    layer: RetryLayer<StandardStrategy, ClassifierChain<HyperResponse, BoxError>>,
    request: BufferedRequest,
) -> Result<http::StatusCode, BoxError> {
    let client = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build(HttpConnector::new());
    let service = ServiceBuilder::new()
        .layer(layer)
        .timeout(ATTEMPT_TIMEOUT)
        .service(client);
    Ok(service.oneshot(request).await?.status())
}

/// `RetryLayer` classifying by status and by the error's source chain (the timeout's cut).
fn layer() -> RetryLayer<StandardStrategy, ClassifierChain<HyperResponse, BoxError>> {
    RetryLayer::new(quick_strategy()).classifier(
        ClassifierChain::new()
            .with(HttpStatusClassifier::new())
            .with(DynErrorClassifier),
    )
}

#[tokio::test(start_paused = true)]
async fn under_retry_layer_a_post_that_timed_out_is_not_sent_again() {
    let server = hangs_once().await;
    let outcome = send_through(layer(), request(http::Method::POST, &server.url("/orders"))).await;
    let error = outcome.expect_err("the only attempt was cut");
    assert!(error.is::<tower::timeout::error::Elapsed>(), "{error:?}");
    assert_eq!(
        server.hits(),
        1,
        "a POST may have been processed: sent once"
    );
}

#[tokio::test(start_paused = true)]
async fn under_retry_layer_a_put_that_timed_out_is_sent_again() {
    let server = hangs_once().await;
    let outcome = send_through(layer(), request(http::Method::PUT, &server.url("/items/7"))).await;
    assert_eq!(outcome.expect("the second attempt answers"), 200);
    assert_eq!(server.hits(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_layer_declared_idempotent_sends_a_post_again() {
    let server = hangs_once().await;
    let layer = layer().idempotent(true);
    let outcome = send_through(layer, request(http::Method::POST, &server.url("/items"))).await;
    assert_eq!(outcome.expect("the second attempt answers"), 200);
    assert_eq!(server.hits(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_layer_declared_not_idempotent_does_not_send_a_put_again() {
    let server = hangs_once().await;
    let layer = layer().idempotent(false);
    let outcome = send_through(layer, request(http::Method::PUT, &server.url("/items/7"))).await;
    assert!(outcome.is_err());
    assert_eq!(server.hits(), 1);
}

/// reqwest's client with reqwest's own timeout, a connection per request.
fn reqwest_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(ATTEMPT_TIMEOUT)
        .build()
        .expect("client")
}

/// Sends `method` to `url` with `reqwest::Client` as the service under `RetryLayer`: the request
/// says its own idempotency.
async fn reqwest_through_layer(
    method: reqwest::Method,
    url: &str,
) -> Result<reqwest::StatusCode, reqwest::Error> {
    let client = reqwest_client();
    let request = client.request(method, url).build()?;
    let service = ServiceBuilder::new()
        .layer(
            RetryLayer::new(quick_strategy())
                .copy_requests_with(|request: &reqwest::Request| request.try_clone()),
        )
        .service(client);
    Ok(service.oneshot(request).await?.status())
}

#[tokio::test(start_paused = true)]
async fn reqwest_under_retry_layer_sends_a_timed_out_put_again_but_not_a_post() {
    let server = hangs_once().await;
    let error = reqwest_through_layer(reqwest::Method::POST, &server.url("/orders"))
        .await
        .expect_err("the only attempt timed out");
    assert!(error.is_timeout(), "{error:?}");
    assert_eq!(server.hits(), 1);

    let server = hangs_once().await;
    let status = reqwest_through_layer(reqwest::Method::PUT, &server.url("/items/7")).await;
    assert_eq!(status.expect("the second attempt answers"), 200);
    assert_eq!(server.hits(), 2);
}

/// One POST with reqwest under the plain API, declared `idempotent` or not (`None`: undeclared).
async fn post_with_retry(url: &str, idempotent: Option<bool>) -> Result<(), reqwest::Error> {
    let client = reqwest_client();
    let strategy = quick_strategy();
    let send = || async {
        client.post(url).send().await?.error_for_status()?;
        Ok(())
    };
    match idempotent {
        Some(idempotent) => Retry::new(&strategy).idempotent(idempotent).run(send).await,
        None => Retry::new(&strategy).run(send).await,
    }
}

#[tokio::test(start_paused = true)]
async fn the_plain_api_retries_a_timeout_as_declared_and_undeclared_as_before() {
    let server = hangs_once().await;
    let outcome = post_with_retry(&server.url("/orders"), Some(false)).await;
    assert!(outcome.expect_err("not sent again").is_timeout());
    assert_eq!(server.hits(), 1, "declared not idempotent");

    let server = hangs_once().await;
    post_with_retry(&server.url("/orders"), Some(true))
        .await
        .expect("declared idempotent: sent again");
    assert_eq!(server.hits(), 2);

    // Undeclared: reqwest's timeout is the server's fault, retried as before.
    let server = hangs_once().await;
    post_with_retry(&server.url("/orders"), None)
        .await
        .expect("undeclared: sent again");
    assert_eq!(server.hits(), 2);
}

/// A payment: never sent twice.
#[retryable(max_attempts = 3, initial_backoff = "10ms", idempotent = false)]
async fn charge(client: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {
    client.post(url).send().await?.error_for_status()?;
    Ok(())
}

/// Setting a value: as good twice as once.
#[retryable(max_attempts = 3, initial_backoff = "10ms", idempotent = true)]
async fn set(client: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {
    client.post(url).send().await?.error_for_status()?;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn retryable_declares_idempotency_with_an_argument() {
    let client = reqwest_client();
    let server = hangs_once().await;
    let error = charge(&client, &server.url("/charges"))
        .await
        .expect_err("not sent again");
    assert!(error.is_timeout());
    assert_eq!(server.hits(), 1);

    let server = hangs_once().await;
    set(&client, &server.url("/settings"))
        .await
        .expect("sent again");
    assert_eq!(server.hits(), 2);
}
