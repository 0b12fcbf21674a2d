//! A tonic client's deadlines against a real gRPC server on loopback, as gRFC A6 defines them:
//! the call's own deadline (`Request::set_timeout`) bounds all its attempts, so once it expired
//! (tonic: `CANCELLED` "Timeout expired") nothing is retried; a timeout per attempt (tower's
//! `TimeoutLayer` under `RetryLayer`, or `Retry::attempt_timeout`) cuts one attempt, which is
//! retried as a timeout. The server's first answer never comes; its second would succeed.

use std::time::Duration;

use examples::grpc_demo::{GetRequest, GrpcServer, KvClient, Reply, serve};
use retry_core::classify::{ClassifierChain, DynErrorClassifier, TransientErrorClassifier};
use retry_core::tonic::GrpcStatusClassifier;
use retry_core::tower::{BoxError, BufferBodyLayer, BufferedRequest, RetryLayer};
use retry_core::{Retry, RetryInfo};
use retry_tests::quick_strategy;
use tonic::Code;
use tonic::body::Body;
use tonic::client::GrpcService;
use tonic::transport::{Channel, Endpoint};
use tower::ServiceBuilder;

/// The call's deadline, and the per-attempt timeout, in the tests that set one.
const DEADLINE: Duration = Duration::from_millis(300);

fn channel(server: &GrpcServer) -> Channel {
    Endpoint::from_shared(server.uri())
        .expect("valid uri")
        .connect_lazy()
}

/// A `Get` request for `key` whose call must end within `DEADLINE`.
fn with_deadline(key: &str) -> tonic::Request<GetRequest> {
    let mut request = tonic::Request::new(GetRequest {
        key: key.to_owned(),
    });
    request.set_timeout(DEADLINE);
    request
}

/// A server that never answers the first call and answers "v" to the next.
async fn slow_then_fine() -> GrpcServer {
    serve(vec![Reply::Hang, Reply::Value("v")])
        .await
        .expect("serve")
}

/// The guide's retried channel: trailers-only failures by their gRPC status, the channel's
/// errors by their `io::Error`.
fn retried_channel(
    channel: Channel,
) -> impl GrpcService<Body, ResponseBody = Body, Error = BoxError> + Clone {
    let classifier = ClassifierChain::<http::Response<Body>, tonic::transport::Error>::new()
        .with(GrpcStatusClassifier)
        .with(TransientErrorClassifier);
    ServiceBuilder::new()
        .layer(BufferBodyLayer::new(64 * 1024))
        .layer(RetryLayer::new(quick_strategy()).classifier(classifier))
        .map_request(|request: BufferedRequest| request.map(Body::new))
        .service(channel)
}

/// A retried channel whose every attempt is cut after `DEADLINE` by tower's `TimeoutLayer`: the
/// errors are `BoxError`s, classified by their source chain.
fn retried_channel_with_attempt_timeout(
    channel: Channel,
) -> impl GrpcService<Body, ResponseBody = Body, Error = BoxError> + Clone {
    let classifier = ClassifierChain::<http::Response<Body>, BoxError>::new()
        .with(GrpcStatusClassifier)
        .with(DynErrorClassifier);
    ServiceBuilder::new()
        .layer(BufferBodyLayer::new(64 * 1024))
        .layer(RetryLayer::new(quick_strategy()).classifier(classifier))
        .timeout(DEADLINE)
        .map_request(|request: BufferedRequest| request.map(Body::new))
        .service(channel)
}

#[tokio::test(start_paused = true)]
async fn a_per_attempt_timeout_under_the_retry_layer_is_retried() {
    let server = slow_then_fine().await;
    let transport = retried_channel_with_attempt_timeout(channel(&server));
    let reply = KvClient::new(transport)
        .get(GetRequest { key: "k".into() })
        .await
        .expect("the second attempt answers");
    assert_eq!(reply.into_inner().value, "v");
    assert_eq!(server.hits(), 2);
}

#[tokio::test(start_paused = true)]
async fn the_calls_own_deadline_is_not_retried_under_the_retry_layer() {
    let server = slow_then_fine().await;
    let status = KvClient::new(retried_channel(channel(&server)))
        .get(with_deadline("k"))
        .await
        .expect_err("the deadline passes");
    assert_eq!(
        (status.code(), status.message()),
        (Code::Cancelled, "Timeout expired")
    );
    assert!(status.is_timeout(), "{status:?}");
    assert_eq!(server.hits(), 1, "no attempt after the call's deadline");

    // The same with the classifier of type-erased errors, which knows tonic's `TimeoutExpired`.
    let server = slow_then_fine().await;
    let transport = retried_channel_with_attempt_timeout(channel(&server));
    let mut request = with_deadline("k");
    request.set_timeout(DEADLINE / 2);
    let status = KvClient::new(transport)
        .get(request)
        .await
        .expect_err("the deadline passes");
    assert_eq!(status.code(), Code::Cancelled, "{status:?}");
    assert_eq!(server.hits(), 1, "no attempt after the call's deadline");
}

#[tokio::test(start_paused = true)]
async fn the_calls_own_deadline_is_not_retried_by_retry() {
    let server = slow_then_fine().await;
    let channel = channel(&server);
    let outcome = Retry::new(&quick_strategy())
        .run(|| {
            let mut client = KvClient::new(channel.clone());
            async move { client.get(with_deadline("k")).await }
        })
        .await;
    let status = outcome.expect_err("the deadline passes");
    assert_eq!(status.code(), Code::Cancelled);
    assert!(status.is_timeout(), "{status:?}");
    assert_eq!(server.hits(), 1);
}

/// What an attempt of `Retry` fails with when `attempt_timeout` cuts it.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum KvError {
    #[error(transparent)]
    #[retry(transparent)]
    Rpc(#[from] tonic::Status),
    #[error("the attempt timed out")]
    #[retry(timeout)]
    TimedOut,
}

impl From<tokio::time::error::Elapsed> for KvError {
    fn from(_: tokio::time::error::Elapsed) -> Self {
        KvError::TimedOut
    }
}

#[tokio::test(start_paused = true)]
async fn a_per_attempt_timeout_of_retry_is_retried() {
    let server = slow_then_fine().await;
    let channel = channel(&server);
    let value = Retry::new(&quick_strategy())
        .attempt_timeout(DEADLINE)
        .run(|| {
            let mut client = KvClient::new(channel.clone());
            async move {
                let reply = client.get(GetRequest { key: "k".into() }).await?;
                Ok::<_, KvError>(reply.into_inner().value)
            }
        })
        .await
        .expect("the second attempt answers");
    assert_eq!(value, "v");
    assert_eq!(server.hits(), 2);
}
