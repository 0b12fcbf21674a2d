//! The attempt inside the attempt, seen by a real server on loopback: the AWS SDKs'
//! `amz-sdk-request` header set from the attempt context in a `#[retryable]` reqwest call, and
//! from the `Attempt` that `RetryLayer` puts in each request's extensions; and the attempts a call
//! made, on `Ok` and on `Err`, through the plain API and around a `#[retryable]` fn.

use std::time::Duration;

use bytes::Bytes;
use examples::http_demo::{Reply, serve, status};
use examples::sdk_request::{AMZ_SDK_REQUEST, fetch};
use http::HeaderValue;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use retry_core::attempt::{self, Attempt};
use retry_core::http::HttpStatusClassifier;
use retry_core::tower::{BufferedRequest, RetryLayer};
use retry_core::{Retry, RetryConfig, StandardStrategy, retry, retryable};
use retry_tests::quick_strategy;
use tower::{ServiceBuilder, ServiceExt};

/// What the server saw: one 503, then the answer.
fn first_and_second() -> Vec<Option<String>> {
    vec![
        Some("attempt=1; max=3".to_owned()),
        Some("attempt=2; max=3".to_owned()),
    ]
}

#[tokio::test(start_paused = true)]
async fn a_retryable_reqwest_call_sends_each_attempt_in_its_header() {
    let server = serve(vec![status(503, None), Reply::Ok("a teapot")])
        .await
        .expect("serve");
    let item = fetch(&reqwest::Client::new(), &server.url("/items/7"))
        .await
        .expect("the second attempt answers");
    assert_eq!(item, "a teapot");
    assert_eq!(server.attempt_headers(), first_and_second());
}

#[tokio::test(start_paused = true)]
async fn under_retry_layer_each_request_carries_its_attempt() {
    let server = serve(vec![status(503, None), Reply::Ok("a teapot")])
        .await
        .expect("serve");
    let client = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build(HttpConnector::new());
    let strategy = StandardStrategy::new(
        RetryConfig::builder()
            .max_attempts(3)
            .initial_backoff(Duration::from_millis(10))
            .build()
            .expect("valid config"),
    );
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(strategy).classifier(HttpStatusClassifier::new()))
        .map_request(|mut request: BufferedRequest| {
            let attempt = *request.extensions().get::<Attempt>().expect("marked");
            assert_eq!(attempt::current(), Some(attempt), "and in context");
            let header = HeaderValue::try_from(attempt.amz_sdk_request()).expect("ascii");
            request.headers_mut().insert(AMZ_SDK_REQUEST, header);
            request
        })
        .service(client);
    let request = http::Request::get(server.url("/items/7"))
        .body(Full::new(Bytes::new()))
        .expect("valid request");
    let response = service.oneshot(request).await.expect("answered");
    assert_eq!(response.status(), 200);
    assert_eq!(server.attempt_headers(), first_and_second());
}

/// One attempt against `url`: its status or reqwest's error.
async fn get(client: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {
    client.get(url).send().await?.error_for_status()?;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_plain_api_returns_the_attempts_with_ok_and_with_err() {
    let client = reqwest::Client::new();
    let strategy = quick_strategy();
    let server = serve(vec![status(503, None), Reply::Ok("a teapot")])
        .await
        .expect("serve");
    let url = server.url("/items/7");
    let (outcome, stats) = Retry::new(&strategy)
        .run_with_stats(|| get(&client, &url))
        .await;
    outcome.expect("the second attempt answers");
    assert_eq!((stats.attempts(), stats.retries()), (2, 1));
    assert_eq!(stats.waited(), Duration::from_millis(10));

    let server = serve(vec![status(503, None)]).await.expect("serve");
    let url = server.url("/items/7");
    let (outcome, stats) = Retry::new(&strategy)
        .run_with_stats(|| get(&client, &url))
        .await;
    assert_eq!(
        outcome.expect_err("always 503").status(),
        Some(503.try_into().expect("a status"))
    );
    assert_eq!(stats.attempts(), 3);
    assert_eq!(stats.waited(), Duration::from_millis(10 + 20));
    assert_eq!(server.hits(), 3);
}

#[retryable(max_attempts = 3, initial_backoff = "10ms", jitter = "none")]
async fn get_item(client: &reqwest::Client, url: &str) -> Result<(), reqwest::Error> {
    get(client, url).await
}

#[tokio::test(start_paused = true)]
async fn capture_gives_the_attempts_of_a_retryable_call_whose_signature_is_kept() {
    let client = reqwest::Client::new();
    let server = serve(vec![status(503, None), status(503, None), Reply::Ok("ok")])
        .await
        .expect("serve");
    let (outcome, stats) = attempt::capture(get_item(&client, &server.url("/items/7"))).await;
    outcome.expect("the third attempt answers");
    let stats = stats.expect("one call ended inside");
    assert_eq!(stats.attempts(), 3);
    assert_eq!(stats.waited(), Duration::from_millis(10 + 20));

    let (outcome, stats) = attempt::capture(async { 7 }).await;
    assert_eq!((outcome, stats), (7, None), "no call ended inside");
}

/// Many calls on a multi-thread runtime, their attempts yielding between polls (so tasks
/// interleave on each worker and move between workers): each attempt always reads its own
/// number, never another task's, and a task polled between two attempts' polls sees none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_task_reads_its_own_attempt_across_threads_and_cancellation() {
    let strategy = std::sync::Arc::new(StandardStrategy::new(
        RetryConfig::builder()
            .max_attempts(4)
            .initial_backoff(Duration::from_micros(1))
            .quota(retry_core::Quota::Off) // 64 calls' retries would drain a young scope's 500
            .build()
            .expect("valid config"),
    ));
    let mut tasks = tokio::task::JoinSet::new();
    for task in 0..64_u32 {
        let strategy = std::sync::Arc::clone(&strategy);
        tasks.spawn(async move {
            let mut made = 0;
            let outcome = retry(&*strategy, || {
                made += 1;
                let expected = made;
                async move {
                    for _ in 0..3 {
                        let seen = attempt::current().map(Attempt::number);
                        assert_eq!(seen, Some(expected), "task {task}");
                        tokio::task::yield_now().await;
                    }
                    if expected < 3 {
                        Err(std::io::Error::from(std::io::ErrorKind::ConnectionRefused))
                    } else {
                        Ok(expected)
                    }
                }
            });
            // Every fourth call is cancelled mid-attempt.
            if task % 4 == 0 {
                let cut = tokio::time::timeout(Duration::from_nanos(1), outcome).await;
                assert!(attempt::current().is_none());
                return cut.ok().map(|outcome| outcome.expect("succeeds"));
            }
            let value = outcome.await.expect("the third attempt succeeds");
            assert!(
                attempt::current().is_none(),
                "task {task}: outside the call"
            );
            Some(value)
        });
    }
    // Meanwhile, this task is outside every attempt.
    for _ in 0..100 {
        assert!(attempt::current().is_none());
        tokio::task::yield_now().await;
    }
    let mut finished = 0;
    while let Some(joined) = tasks.join_next().await {
        if let Some(value) = joined.expect("no task panicked") {
            assert_eq!(value, 3);
            finished += 1;
        }
    }
    assert!(
        finished >= 48,
        "the calls not cancelled all finished: {finished}"
    );
}
