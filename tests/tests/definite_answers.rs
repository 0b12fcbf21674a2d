//! A status the server answered is definite: a 4xx other than 408 and 429 (gRPC: a code that
//! says the request is wrong) is sent once, whatever the call's declared idempotency, on every
//! path; `idempotent = true` sends again only what may have been lost on the way. Each call
//! runs against a real server on loopback that answers the status first, then 200, and counts
//! the requests; 503, 408 and 429 show that the same paths do retry what the table retries.

use std::time::Duration;

use bytes::Bytes;
use examples::grpc_demo::{self, GetRequest, KvClient};
use examples::http_demo::{self, Reply, status};
use examples::sdk_request::FetchError;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retry_core::classify::{ClassifierChain, DynErrorClassifier, TransientErrorClassifier};
use retry_core::http::{CheckStatus, HttpStatusClassifier};
use retry_core::tower::{BoxError, BufferedRequest, RetryLayer};
use retry_core::{Retry, RetryInfo, RetryStrategy, StandardStrategy, retryable};
use retry_tests::quick_strategy;
use tokio::task::{JoinSet, LocalSet};
use tonic::Code;
use tower::{ServiceBuilder, ServiceExt};

/// The requests each HTTP status gets (the first attempt included), on every path and for every
/// declaration (undeclared, `true`, `false`): 1 for a status the table does not retry, 2 for one
/// it retries (the second answer is 200). Neither depends on the declaration: the server
/// answered, so nothing was lost on the way.
///
/// * `retryable-check-status`: `#[retryable]` over reqwest with `check_status()` (an
///   `HttpStatusError`);
/// * `retry-error-for-status`: `Retry` over reqwest with `error_for_status()` (a
///   `reqwest::Error`);
/// * `dyn-box`: `Retry` with `DynErrorClassifier` over a `Box<dyn Error>` holding the
///   `HttpStatusError`;
/// * `layer-hyper`: `RetryLayer` over hyper-util, `HttpStatusClassifier` +
///   `TransientErrorClassifier` (the status is a response there, not an error).
const HTTP_EXPECTED: &str = "
status  undeclared  true  false
400     1           1     1
401     1           1     1
403     1           1     1
404     1           1     1
409     1           1     1
410     1           1     1
422     1           1     1
408     2           2     2
429     2           2     2
503     2           2     2
";

/// The HTTP paths of [`HTTP_EXPECTED`].
const HTTP_PATHS: [&str; 4] = [
    "retryable-check-status",
    "retry-error-for-status",
    "dyn-box",
    "layer-hyper",
];

/// The calls `Retry` makes over a tonic client for each gRPC code the server answers: the codes
/// that say the request is wrong are sent once, whatever the declaration; `UNAVAILABLE` and
/// `RESOURCE_EXHAUSTED` are retried for every call.
const GRPC_EXPECTED: &str = "
code                 undeclared  true  false
InvalidArgument      1           1     1
NotFound             1           1     1
AlreadyExists        1           1     1
PermissionDenied     1           1     1
FailedPrecondition   1           1     1
OutOfRange           1           1     1
Unimplemented        1           1     1
Unauthenticated      1           1     1
Unavailable          2           2     2
ResourceExhausted    2           2     2
";

/// A table's cells: (row name, declaration, expected requests).
fn cells(table: &str) -> Vec<(String, Option<bool>, usize)> {
    let mut lines = table.lines().filter(|line| !line.trim().is_empty());
    let header: Vec<&str> = lines.next().expect("a header").split_whitespace().collect();
    let mut cells = Vec::new();
    for line in lines {
        let words: Vec<&str> = line.split_whitespace().collect();
        for (declared, figure) in header[1..].iter().zip(&words[1..]) {
            let declared = match *declared {
                "undeclared" => None,
                "true" => Some(true),
                "false" => Some(false),
                other => panic!("no declaration {other:?}"),
            };
            let expected = figure.parse().expect("a count");
            cells.push((words[0].to_owned(), declared, expected));
        }
    }
    cells
}

#[tokio::test(start_paused = true)]
async fn an_answered_client_error_is_sent_once_whatever_the_idempotency() {
    // Local tasks: rustc cannot prove the future of a `BoxError` classifier's `RetryLayer`
    // `Send` (rust-lang/rust#102211), though it is.
    let local = LocalSet::new();
    let mut calls = JoinSet::new();
    for (code, declared, expected) in cells(HTTP_EXPECTED) {
        for path in HTTP_PATHS {
            let code: u16 = code.parse().expect("a status");
            calls.spawn_local_on(
                async move {
                    let server = http_demo::serve(vec![status(code, None), Reply::Ok("done")])
                        .await
                        .expect("a server on loopback");
                    http_call(path, declared, &server.url("/item")).await;
                    (
                        format!("{path} {code} {declared:?}"),
                        expected,
                        server.hits(),
                    )
                },
                &local,
            );
        }
    }
    for (code, declared, expected) in cells(GRPC_EXPECTED) {
        let code = grpc_code(&code);
        calls.spawn_local_on(
            async move {
                let server = grpc_demo::serve(vec![
                    grpc_demo::Reply::Fail(code, None),
                    grpc_demo::Reply::Value("v"),
                ])
                .await
                .expect("a server on loopback");
                grpc_call(declared, &server.uri()).await;
                (
                    format!("tonic {code:?} {declared:?}"),
                    expected,
                    server.hits(),
                )
            },
            &local,
        );
    }
    let mut wrong = Vec::new();
    let mut cells = 0;
    local
        .run_until(async {
            while let Some(result) = calls.join_next().await {
                let (cell, expected, hits) = result.expect("the call ran");
                cells += 1;
                if hits != expected {
                    wrong.push(format!("{cell}: expected {expected} requests, sent {hits}"));
                }
            }
        })
        .await;
    wrong.sort();
    assert!(
        wrong.is_empty(),
        "{} of {cells} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The gRPC code named in [`GRPC_EXPECTED`].
fn grpc_code(name: &str) -> Code {
    match name {
        "InvalidArgument" => Code::InvalidArgument,
        "NotFound" => Code::NotFound,
        "AlreadyExists" => Code::AlreadyExists,
        "PermissionDenied" => Code::PermissionDenied,
        "FailedPrecondition" => Code::FailedPrecondition,
        "OutOfRange" => Code::OutOfRange,
        "Unimplemented" => Code::Unimplemented,
        "Unauthenticated" => Code::Unauthenticated,
        "Unavailable" => Code::Unavailable,
        "ResourceExhausted" => Code::ResourceExhausted,
        other => panic!("no code {other:?}"),
    }
}

/// reqwest's client, a connection per request.
fn reqwest_client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("a client")
}

/// `retry` declared as `declared` says.
fn declare<'s, S: RetryStrategy + ?Sized, C, H, A, L>(
    retry: Retry<'s, S, C, H, A, L>,
    declared: Option<bool>,
) -> Retry<'s, S, C, H, A, L> {
    match declared {
        Some(idempotent) => retry.idempotent(idempotent),
        None => retry,
    }
}

/// One GET of `url` along `path`, declared as `declared` says.
async fn http_call(path: &str, declared: Option<bool>, url: &str) {
    let strategy = quick_strategy();
    let client = reqwest_client();
    match path {
        "retryable-check-status" => {
            let _ = match declared {
                None => get(&strategy, &client, url).await,
                Some(true) => get_idempotent(&strategy, &client, url).await,
                Some(false) => get_not_idempotent(&strategy, &client, url).await,
            };
        }
        "retry-error-for-status" => {
            let _ = declare(Retry::new(&strategy), declared)
                .run(|| async { client.get(url).send().await?.error_for_status() })
                .await;
        }
        "dyn-box" => {
            let _ = declare(Retry::new(&strategy), declared)
                .classifier(DynErrorClassifier)
                .run(|| async {
                    let response = client.get(url).send().await?;
                    Ok::<_, BoxError>(response.check_status()?)
                })
                .await;
        }
        "layer-hyper" => {
            let classifier = ClassifierChain::new()
                .with(HttpStatusClassifier::new())
                .with(TransientErrorClassifier);
            let layer = RetryLayer::new(strategy.clone()).classifier(classifier);
            let layer = match declared {
                Some(idempotent) => layer.idempotent(idempotent),
                None => layer,
            };
            let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
                .pool_max_idle_per_host(0)
                .build_http();
            let request: BufferedRequest = http::Request::get(url)
                .body(Full::new(Bytes::new()))
                .expect("a request");
            let _ = ServiceBuilder::new()
                .layer(layer)
                .service(client)
                .oneshot(request)
                .await;
        }
        other => panic!("no path {other:?}"),
    }
}

/// One attempt of the `#[retryable]` path.
async fn get_once(client: &reqwest::Client, url: &str) -> Result<(), FetchError> {
    client.get(url).send().await?.check_status()?;
    Ok(())
}

#[retryable(strategy = strategy)]
async fn get(
    strategy: &StandardStrategy,
    client: &reqwest::Client,
    url: &str,
) -> Result<(), FetchError> {
    get_once(client, url).await
}

#[retryable(strategy = strategy, idempotent = true)]
async fn get_idempotent(
    strategy: &StandardStrategy,
    client: &reqwest::Client,
    url: &str,
) -> Result<(), FetchError> {
    get_once(client, url).await
}

#[retryable(strategy = strategy, idempotent = false)]
async fn get_not_idempotent(
    strategy: &StandardStrategy,
    client: &reqwest::Client,
    url: &str,
) -> Result<(), FetchError> {
    get_once(client, url).await
}

/// The gRPC call's error.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum RpcError {
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] tonic::Status),
}

/// One `Get` over a tonic client, declared as `declared` says.
async fn grpc_call(declared: Option<bool>, uri: &str) {
    let strategy = quick_strategy();
    let channel = tonic::transport::Endpoint::from_shared(uri.to_owned())
        .expect("a uri")
        .timeout(Duration::from_secs(5))
        .connect_lazy();
    let _ = declare(Retry::new(&strategy), declared)
        .run(|| async {
            let request = GetRequest { key: "k".into() };
            Ok::<_, RpcError>(KvClient::new(channel.clone()).get(request).await?)
        })
        .await;
}
