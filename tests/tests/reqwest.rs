//! The `reqwest` integration against a real HTTP server on loopback: `RetryInfo` for
//! `reqwest::Error`, `CheckStatus` for `reqwest::Response`, and both wrapped in a derived error
//! enum with `#[retry(transparent)]`. The server runs in the test's runtime with tokio's clock
//! paused, so every wait (backoff, `Retry-After`, timeouts) passes in virtual time.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use examples::http_demo::{Reply, serve, status};
use examples::refused_addr;
use retry_core::http::{CheckStatus, HttpStatusError, RetryAfter};
use retry_core::{
    Retry, RetryConfig, RetryEvent, RetryInfo, RetrySafety, StandardStrategy, retryable,
};

/// What the client's calls fail with: reqwest's own errors and error statuses, each describing
/// its retryability through `#[retry(transparent)]`.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum ApiError {
    #[error(transparent)]
    #[retry(transparent)]
    Http(#[from] reqwest::Error),
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] HttpStatusError),
}

/// One attempt: the body of a successful response.
async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, ApiError> {
    Ok(client.get(url).send().await?.check_status()?.text().await?)
}

/// A client that opens a connection per request (no pooled connection outlives a test).
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client")
}

/// 3 attempts, 10 ms backoff without jitter for every error, throttling included (so a wait of a
/// second is the server's), in a scope of its own.
fn strategy() -> StandardStrategy {
    StandardStrategy::new(
        RetryConfig::builder()
            .max_attempts(3)
            .initial_backoff(Duration::from_millis(10))
            .throttling_backoff(Duration::from_millis(10))
            .jitter(retry_core::backoff::Jitter::None)
            .build()
            .expect("valid config"),
    )
}

/// Runs `fetch` under `strategy`, counting retries.
async fn fetch_retried(strategy: &StandardStrategy, url: &str) -> (Result<String, ApiError>, u32) {
    let client = client();
    let retries = AtomicU32::new(0);
    let outcome = Retry::new(strategy)
        .on_retry(|_: &RetryEvent<'_, ApiError>| {
            retries.fetch_add(1, Ordering::SeqCst);
        })
        .run(|| fetch(&client, url))
        .await;
    (outcome, retries.load(Ordering::SeqCst))
}

fn the_status_error(outcome: Result<String, ApiError>) -> HttpStatusError {
    match outcome {
        Err(ApiError::Status(error)) => error,
        other => panic!("expected a status error, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_503_with_retry_after_seconds_is_retried_after_at_least_that_long() {
    let server = serve(vec![
        status(503, Some(("retry-after", "1"))),
        Reply::Ok("fresh"),
    ])
    .await
    .expect("serve");
    let (outcome, retries) = fetch_retried(&strategy(), &server.url("/item")).await;
    assert_eq!(outcome.expect("second attempt succeeds"), "fresh");
    assert_eq!((server.hits(), retries), (2, 1));
    let gap = server.gaps()[0];
    assert!(gap >= Duration::from_secs(1), "waited {gap:?}");
    assert!(gap < Duration::from_millis(1100), "waited {gap:?}");
}

#[tokio::test(start_paused = true)]
async fn a_429_with_an_http_date_is_throttling_and_waits_for_the_date() {
    let strategy = strategy();
    let server = serve(vec![Reply::StatusRetryAt(429, 2), Reply::Ok("fresh")])
        .await
        .expect("serve");
    let (outcome, _) = fetch_retried(&strategy, &server.url("/item")).await;
    assert_eq!(outcome.expect("second attempt succeeds"), "fresh");
    assert_eq!(server.hits(), 2);
    // The date is whole seconds: 2 s from the server's clock, truncated, is more than 1 s away.
    let gap = server.gaps()[0];
    assert!(gap >= Duration::from_secs(1), "waited {gap:?}");
    assert!(gap <= Duration::from_secs(2), "waited {gap:?}");
    assert_eq!(
        strategy.scope().stats().throttles,
        1,
        "counted as throttling"
    );
}

#[tokio::test(start_paused = true)]
async fn x_amz_retry_after_milliseconds_are_honoured() {
    let server = serve(vec![
        status(500, Some(("x-amz-retry-after", "1500"))),
        Reply::Ok("fresh"),
    ])
    .await
    .expect("serve");
    let (outcome, _) = fetch_retried(&strategy(), &server.url("/item")).await;
    assert_eq!(outcome.expect("second attempt succeeds"), "fresh");
    assert!(server.gaps()[0] >= Duration::from_millis(1500));
}

#[tokio::test(start_paused = true)]
async fn a_404_is_returned_at_once_unchanged() {
    let server = serve(vec![status(404, None)]).await.expect("serve");
    let (outcome, retries) = fetch_retried(&strategy(), &server.url("/missing")).await;
    let error = the_status_error(outcome);
    assert_eq!(error.status(), 404);
    assert_eq!((server.hits(), retries), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn when_attempts_run_out_the_last_error_is_returned_unchanged() {
    let server = serve(vec![status(503, Some(("retry-after", "1")))])
        .await
        .expect("serve");
    let (outcome, retries) = fetch_retried(&strategy(), &server.url("/item")).await;
    let error = the_status_error(outcome);
    assert_eq!(error.status(), 503);
    assert_eq!(
        error.retry_after_header(),
        RetryAfter::After(Duration::from_secs(1))
    );
    assert_eq!((server.hits(), retries), (3, 2));
    assert!(
        server
            .gaps()
            .iter()
            .all(|gap| *gap >= Duration::from_secs(1))
    );
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_too_long_stops_at_once_and_garbage_is_ignored() {
    for huge in ["86401", "99999999999999999999999999999999"] {
        let server = serve(vec![status(503, Some(("retry-after", huge)))])
            .await
            .expect("serve");
        let (outcome, _) = fetch_retried(&strategy(), &server.url("/item")).await;
        let error = the_status_error(outcome);
        assert_eq!(error.retry_after_header(), RetryAfter::TooLong, "{huge}");
        assert_eq!(error.retry_safety(), RetrySafety::No);
        assert_eq!(server.hits(), 1, "{huge}: not retried");
    }
    let server = serve(vec![Reply::Status(
        503,
        vec![("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT".into())],
    )])
    .await
    .expect("serve");
    let (outcome, _) = fetch_retried(&strategy(), &server.url("/item")).await;
    assert_eq!(
        the_status_error(outcome).retry_after_header(),
        RetryAfter::TooLong
    );
    assert_eq!(server.hits(), 1, "a date far in the future: not retried");

    let server = serve(vec![
        status(503, Some(("retry-after", "soon"))),
        Reply::Ok("ok"),
    ])
    .await
    .expect("serve");
    let (outcome, _) = fetch_retried(&strategy(), &server.url("/item")).await;
    assert_eq!(outcome.expect("retried with the client's backoff"), "ok");
    assert_eq!(
        server.gaps()[0],
        Duration::from_millis(10),
        "the backoff, no more"
    );

    let server = serve(vec![
        Reply::Status(
            503,
            vec![("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT".into())],
        ),
        Reply::Ok("ok"),
    ])
    .await
    .expect("serve");
    let (outcome, _) = fetch_retried(&strategy(), &server.url("/item")).await;
    assert_eq!(outcome.expect("a date in the past: retry now"), "ok");
    assert_eq!(server.gaps()[0], Duration::from_millis(10));
}

#[tokio::test(start_paused = true)]
async fn a_slow_server_times_out_and_timeouts_are_retried_at_their_cost() {
    // The classic preset, whose fixed quota of 500 charges a timeout retry 10 and any other 5.
    let strategy = StandardStrategy::new(
        RetryConfig::aws_classic()
            .initial_backoff(Duration::from_millis(10))
            .build()
            .expect("valid config"),
    );
    let server = serve(vec![Reply::Hang]).await.expect("serve");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_millis(200))
        .build()
        .expect("client");
    let url = server.url("/slow");
    let outcome = Retry::new(&strategy).run(|| fetch(&client, &url)).await;
    let Err(ApiError::Http(error)) = outcome else {
        panic!("expected reqwest's timeout, got {outcome:?}");
    };
    assert!(reqwest::Error::is_timeout(&error));
    assert!(RetryInfo::is_timeout(&error));
    assert_eq!(server.hits(), 3);
    assert_eq!(
        strategy.scope().quota().level(),
        500 - 2 * 10,
        "a timeout retry costs 10"
    );
}

#[tokio::test(start_paused = true)]
async fn a_refused_connection_is_retried() {
    let url = format!("http://{}/item", refused_addr().await.expect("loopback"));
    let (outcome, retries) = fetch_retried(&strategy(), &url).await;
    let Err(ApiError::Http(error)) = outcome else {
        panic!("expected a connect error, got {outcome:?}");
    };
    assert!(error.is_connect());
    assert_eq!(error.retry_safety(), RetrySafety::Yes);
    assert_eq!(retries, 2);
}

/// A server that announces a 100-byte body, sends 5 bytes and closes the connection: the
/// request reached it, and the response broke off.
async fn truncating_server() -> (std::net::SocketAddr, std::sync::Arc<AtomicU32>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("address");
    let hits = std::sync::Arc::new(AtomicU32::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            let mut request = [0u8; 1024];
            let _ = stream.read(&mut request).await;
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort")
                .await;
        }
    });
    (addr, hits)
}

#[tokio::test(start_paused = true)]
async fn errors_after_the_request_was_sent_are_not_retried_blindly() {
    let (addr, hits) = truncating_server().await;
    let client = client();
    let url = format!("http://{addr}/item");
    let (outcome, retries) = fetch_retried(&strategy(), &url).await;
    drop(client);
    let Err(ApiError::Http(error)) = outcome else {
        panic!("expected a body error, got {outcome:?}");
    };
    assert!(error.is_body() || error.is_decode(), "{error:?}");
    assert!(!error.is_connect() && !reqwest::Error::is_timeout(&error));
    assert_eq!(error.retry_safety(), RetrySafety::Maybe);
    assert_eq!(error.fault(), retry_core::Fault::Unknown);
    assert_eq!((hits.load(Ordering::SeqCst), retries), (1, 0));
}

#[tokio::test(start_paused = true)]
async fn status_errors_from_error_for_status_follow_the_status() {
    let server = serve(vec![
        status(502, None),
        status(429, None),
        status(409, None),
    ])
    .await
    .expect("serve");
    let client = client();
    let mut errors = Vec::new();
    for _ in 0..3 {
        let response = client.get(server.url("/")).send().await.expect("response");
        errors.push(response.error_for_status().expect_err("an error status"));
    }
    assert_eq!(errors[0].retry_safety(), RetrySafety::Yes);
    assert!(errors[1].is_throttling());
    // A status the server answered is definite: never a `Maybe` that idempotency could retry.
    assert_eq!(errors[2].retry_safety(), RetrySafety::No);
    assert_eq!(errors[2].fault(), retry_core::Fault::Client);
}

/// The guide's shape: a `#[retryable]` method over reqwest.
struct Api {
    client: reqwest::Client,
    base: String,
}

impl Api {
    #[retryable(
        max_attempts = 4,
        initial_backoff = "10ms",
        scope = "tests-reqwest-api"
    )]
    async fn item(&self, id: u32) -> Result<String, ApiError> {
        let url = format!("{}/items/{id}", self.base);
        Ok(self
            .client
            .get(url)
            .send()
            .await?
            .check_status()?
            .text()
            .await?)
    }
}

#[tokio::test(start_paused = true)]
async fn a_retryable_method_over_reqwest() {
    let server = serve(vec![
        status(503, None),
        status(429, Some(("retry-after", "1"))),
        Reply::Ok("item 7"),
    ])
    .await
    .expect("serve");
    let api = Api {
        client: client(),
        base: server.url(""),
    };
    assert_eq!(api.item(7).await.expect("third attempt succeeds"), "item 7");
    assert_eq!(server.hits(), 3);
    assert!(server.gaps()[1] >= Duration::from_secs(1));
}

#[test]
fn the_derived_enum_delegates_to_the_wrapped_error() {
    use retry_core::Fault;
    for (status, retry_after) in [
        (429, RetryAfter::After(Duration::from_secs(3))),
        (503, RetryAfter::After(Duration::from_secs(1))),
        (503, RetryAfter::TooLong),
        (408, RetryAfter::Absent),
        (404, RetryAfter::Invalid),
    ] {
        let inner = HttpStatusError::new(
            http::StatusCode::from_u16(status).expect("valid status"),
            retry_after,
        );
        let outer = ApiError::from(inner);
        assert_eq!(outer.retry_safety(), inner.retry_safety(), "{inner}");
        assert_eq!(outer.is_throttling(), inner.is_throttling(), "{inner}");
        assert_eq!(outer.is_timeout(), inner.is_timeout(), "{inner}");
        assert_eq!(outer.retry_after(), inner.retry_after(), "{inner}");
        assert_eq!(outer.fault(), inner.fault(), "{inner}");
    }
    let throttled = ApiError::from(HttpStatusError::new(
        http::StatusCode::TOO_MANY_REQUESTS,
        RetryAfter::After(Duration::from_secs(3)),
    ));
    assert!(throttled.is_throttling());
    assert_eq!(throttled.retry_after(), Some(Duration::from_secs(3)));
    assert_eq!(throttled.fault(), Fault::Unknown);
}
