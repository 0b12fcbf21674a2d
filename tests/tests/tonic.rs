//! The tonic integration against a real gRPC server on loopback: `RetryInfo` for
//! `tonic::Status` (gRFC A6 codes, `grpc-retry-pushback-ms`) through a derived error enum with
//! `#[retry(transparent)]`, and `RetryLayer` under a tonic client over a `Channel`. The server
//! runs in the test's runtime with tokio's clock paused: every wait passes in virtual time.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use examples::grpc_demo::{GetRequest, GrpcServer, KvClient, Reply, serve};
use examples::refused_addr;
use retry_core::{Retry, RetryEvent, RetryInfo, StandardStrategy};
use retry_tests::quick_strategy;
use tonic::Code;
use tonic::transport::Endpoint;

/// The client's error: gRPC statuses describe their retryability through `#[retry(transparent)]`.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum KvError {
    #[error(transparent)]
    #[retry(transparent)]
    Rpc(#[from] tonic::Status),
    #[error("empty value for {0}")]
    #[retry(never)]
    Empty(String),
}

fn channel(server: &GrpcServer) -> Channel {
    Endpoint::from_shared(server.uri())
        .expect("valid uri")
        .connect_lazy()
}

/// The `Get` request for `key`.
fn request(key: &str) -> GetRequest {
    GetRequest {
        key: key.to_owned(),
    }
}

/// One attempt of the client's `get`.
async fn get_value(channel: Channel, key: &str) -> Result<String, KvError> {
    let value = KvClient::new(channel)
        .get(request(key))
        .await?
        .into_inner()
        .value;
    if value.is_empty() {
        return Err(KvError::Empty(key.to_owned()));
    }
    Ok(value)
}

/// `get_value` retried under `strategy`: the outcome and the number of retries.
async fn get_retried(
    strategy: &StandardStrategy,
    server: &GrpcServer,
) -> (Result<String, KvError>, u32) {
    let channel = channel(server);
    let retries = AtomicU32::new(0);
    let outcome = Retry::new(strategy)
        .on_retry(|_: &RetryEvent<'_, KvError>| {
            retries.fetch_add(1, Ordering::SeqCst);
        })
        .run(|| get_value(channel.clone(), "k"))
        .await;
    (outcome, retries.load(Ordering::SeqCst))
}

fn the_status(outcome: Result<String, KvError>) -> tonic::Status {
    match outcome {
        Err(KvError::Rpc(status)) => status,
        other => panic!("expected a status, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn unavailable_is_retried() {
    let server = serve(vec![
        Reply::Fail(Code::Unavailable, None),
        Reply::Value("v"),
    ])
    .await
    .expect("serve");
    let (outcome, retries) = get_retried(&quick_strategy(), &server).await;
    assert_eq!(outcome.expect("second attempt succeeds"), "v");
    assert_eq!((server.hits(), retries), (2, 1));
}

#[tokio::test(start_paused = true)]
async fn resource_exhausted_waits_for_the_pushback_as_throttling() {
    let strategy = quick_strategy();
    let server = serve(vec![
        Reply::Fail(Code::ResourceExhausted, Some("1500")),
        Reply::Value("v"),
    ])
    .await
    .expect("serve");
    let (outcome, _) = get_retried(&strategy, &server).await;
    assert_eq!(outcome.expect("second attempt succeeds"), "v");
    let gap = server.gaps()[0];
    assert!(
        gap >= Duration::from_millis(1500) && gap < Duration::from_millis(1600),
        "{gap:?}"
    );
    assert_eq!(strategy.scope().stats().throttles, 1);
}

#[tokio::test(start_paused = true)]
async fn not_found_is_returned_unchanged_at_once() {
    let server = serve(vec![Reply::Fail(Code::NotFound, None), Reply::Value("v")])
        .await
        .expect("serve");
    let (outcome, retries) = get_retried(&quick_strategy(), &server).await;
    let status = the_status(outcome);
    assert_eq!(
        (status.code(), status.message()),
        (Code::NotFound, "scripted")
    );
    assert_eq!((server.hits(), retries), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_negative_or_malformed_pushback_means_do_not_retry() {
    for pushback in ["-1", "soon", "99999999999999999999999"] {
        let server = serve(vec![
            Reply::Fail(Code::Unavailable, Some(pushback)),
            Reply::Value("v"),
        ])
        .await
        .expect("serve");
        let (outcome, _) = get_retried(&quick_strategy(), &server).await;
        let status = the_status(outcome);
        assert_eq!(status.code(), Code::Unavailable);
        assert_eq!(server.hits(), 1, "{pushback}");
    }
}

#[tokio::test(start_paused = true)]
async fn when_attempts_run_out_the_last_status_is_returned() {
    let server = serve(vec![Reply::Fail(Code::Unavailable, Some("200"))])
        .await
        .expect("serve");
    let (outcome, retries) = get_retried(&quick_strategy(), &server).await;
    let status = the_status(outcome);
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(status.retry_after(), Some(Duration::from_millis(200)));
    assert_eq!((server.hits(), retries), (3, 2));
    assert!(
        server
            .gaps()
            .iter()
            .all(|gap| *gap >= Duration::from_millis(200))
    );
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_server_is_unavailable_and_retried() {
    let uri = format!("http://{}", refused_addr().await.expect("loopback"));
    let channel = Endpoint::from_shared(uri).expect("uri").connect_lazy();
    let strategy = quick_strategy();
    let outcome = Retry::new(&strategy)
        .run(|| get_value(channel.clone(), "k"))
        .await;
    let status = the_status(outcome);
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(strategy.scope().stats().retries, 2);
}

// ANCHOR: guide-channel
use retry_core::RetryStrategy;
use retry_core::classify::{ClassifierChain, TransientErrorClassifier};
use retry_core::tonic::GrpcStatusClassifier;
use retry_core::tower::{BoxError, BufferBodyLayer, BufferedRequest, RetryLayer};
use tonic::body::Body;
use tonic::client::GrpcService;
use tonic::transport::Channel;
use tower::ServiceBuilder;

/// A `Channel` whose calls are retried under `strategy`: each request body is buffered once (up
/// to 64 KiB) and sent again for every attempt; trailers-only failures are classified by their
/// gRPC status and pushback, connection failures by their `io::Error`.
fn retrying<S>(
    channel: Channel,
    strategy: S,
) -> impl GrpcService<Body, ResponseBody = Body, Error = BoxError> + Clone
where
    S: RetryStrategy + Clone + 'static,
{
    let classifier = ClassifierChain::<http::Response<Body>, tonic::transport::Error>::new()
        .with(GrpcStatusClassifier)
        .with(TransientErrorClassifier);
    ServiceBuilder::new()
        .layer(BufferBodyLayer::new(64 * 1024))
        .layer(RetryLayer::new(strategy).classifier(classifier))
        .map_request(|request: BufferedRequest| request.map(Body::new))
        .service(channel)
}
// ANCHOR_END: guide-channel

#[tokio::test(start_paused = true)]
async fn retry_layer_over_a_channel_retries_trailers_only_failures() {
    let server = serve(vec![
        Reply::Fail(Code::ResourceExhausted, Some("1000")),
        Reply::Fail(Code::Unavailable, None),
        Reply::Value("v"),
    ])
    .await
    .expect("serve");
    let transport = retrying(channel(&server), quick_strategy());
    let reply = KvClient::new(transport).get(request("k")).await;
    assert_eq!(
        reply.expect("third attempt succeeds").into_inner().value,
        "v"
    );
    assert_eq!(server.hits(), 3);
    let gaps = server.gaps();
    assert!(gaps[0] >= Duration::from_secs(1), "the pushback: {gaps:?}");
    assert!(
        gaps[1] >= Duration::from_millis(20),
        "the backoff: {gaps:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn retry_layer_over_a_channel_returns_not_found_unchanged() {
    let server = serve(vec![Reply::Fail(Code::NotFound, None), Reply::Value("v")])
        .await
        .expect("serve");
    let transport = retrying(channel(&server), quick_strategy());
    let status = KvClient::new(transport)
        .get(request("k"))
        .await
        .expect_err("not found");
    assert_eq!(
        (status.code(), status.message()),
        (Code::NotFound, "scripted")
    );
    assert_eq!(server.hits(), 1);
}

#[tokio::test(start_paused = true)]
async fn retry_layer_over_a_channel_stops_on_a_negative_pushback() {
    let server = serve(vec![
        Reply::Fail(Code::Unavailable, Some("-1")),
        Reply::Value("v"),
    ])
    .await
    .expect("serve");
    let transport = retrying(channel(&server), quick_strategy());
    let status = KvClient::new(transport)
        .get(request("k"))
        .await
        .expect_err("do not retry");
    assert_eq!(status.code(), Code::Unavailable);
    assert_eq!(server.hits(), 1);
}

#[test]
fn the_derived_enum_delegates_to_the_wrapped_status() {
    let mut exhausted = tonic::Status::resource_exhausted("slow down");
    exhausted
        .metadata_mut()
        .insert("grpc-retry-pushback-ms", "750".parse().expect("ASCII"));
    let statuses = [
        exhausted,
        tonic::Status::unavailable("x"),
        tonic::Status::deadline_exceeded("x"),
        tonic::Status::internal("x"),
        tonic::Status::not_found("x"),
    ];
    for status in statuses {
        let (safety, throttling, timeout, after, fault) = (
            status.retry_safety(),
            status.is_throttling(),
            status.is_timeout(),
            status.retry_after(),
            status.fault(),
        );
        let outer = KvError::from(status);
        assert_eq!(
            (
                outer.retry_safety(),
                outer.is_throttling(),
                outer.is_timeout(),
                outer.retry_after(),
                outer.fault()
            ),
            (safety, throttling, timeout, after, fault)
        );
    }
    assert_eq!(
        KvError::Empty("k".into()).retry_safety(),
        retry_core::RetrySafety::No
    );
}

/// What a tonic client makes of an HTTP response with `status` and no `grpc-status` (something in
/// front of the server answered), and the verdict `GrpcStatusClassifier` gives the same
/// response under a `RetryLayer`.
async fn proxy_answer(status: u16) -> (tonic::Status, retry_core::RetryAction) {
    use retry_core::ClassifyRetry;
    let response = move || {
        let mut response = http::Response::new(Body::empty());
        *response.status_mut() = http::StatusCode::from_u16(status).expect("a status");
        response
    };
    let proxy = tower::service_fn(move |_: http::Request<Body>| async move {
        Ok::<_, std::convert::Infallible>(response())
    });
    let status = KvClient::new(proxy)
        .get(request("k"))
        .await
        .expect_err("no gRPC answer");
    let outcome: Result<_, BoxError> = Ok(response());
    (status, GrpcStatusClassifier.classify(&outcome))
}

#[tokio::test]
async fn a_proxys_http_error_gets_the_verdict_of_the_status_tonic_makes_of_it() {
    for http_status in [
        400, 401, 403, 404, 408, 409, 429, 500, 501, 502, 503, 504, 507, 520,
    ] {
        let (status, verdict) = proxy_answer(http_status).await;
        assert_eq!(
            verdict,
            retry_core::classify::RetryInfoClassifier::classify_error(&status),
            "HTTP {http_status}: tonic says {status:?}"
        );
    }
    let (status, verdict) = proxy_answer(503).await;
    assert_eq!(status.code(), Code::Unavailable);
    assert!(verdict.should_retry());
}
