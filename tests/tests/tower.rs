//! `RetryLayer`: the tower form of the retry loop. Against hyper-util's client and a real HTTP
//! server on loopback (responses classified by status and `Retry-After`), and against
//! `service_fn`s for the strategy's protocol: scopes shared with `#[retryable]`, adaptive
//! readiness, calls made without `poll_ready`, request-copy hooks, cancellation, many tasks.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use bytes::Bytes;
use examples::http_demo::{Reply, serve, status};
use examples::refused_addr;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use retry_core::classify::{ClassifierChain, TransientErrorClassifier};
use retry_core::http::HttpStatusClassifier;
use retry_core::tower::{BufferBodyLayer, BufferedRequest, RetryLayer};
use retry_core::{
    AdaptiveStrategy, RetryConfig, RetryInfo, RetryMode, RetrySafety, Scope, StandardStrategy,
    retryable, strategy_for,
};
use tower::{Layer, Service, ServiceBuilder, ServiceExt};

type HyperError = hyper_util::client::legacy::Error;
type HyperResponse = http::Response<hyper::body::Incoming>;

/// Responses by status and `Retry-After`, connection failures by their `io::Error`.
fn http_classifier() -> ClassifierChain<HyperResponse, HyperError> {
    ClassifierChain::new()
        .with(HttpStatusClassifier::new())
        .with(TransientErrorClassifier)
}

fn config(max_attempts: u32) -> RetryConfig {
    RetryConfig::builder()
        .max_attempts(max_attempts)
        .initial_backoff(Duration::from_millis(10))
        .jitter(retry_core::backoff::Jitter::None)
        .build()
        .expect("valid config")
}

/// hyper-util's client under `RetryLayer`, counting the attempts that reach the client.
fn hyper_client(
    strategy: StandardStrategy,
    attempts: Arc<AtomicU32>,
) -> impl Service<BufferedRequest, Response = HyperResponse, Error = HyperError> + Clone {
    let client: Client<HttpConnector, Full<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build_http();
    ServiceBuilder::new()
        .layer(RetryLayer::new(strategy).classifier(http_classifier()))
        .map_request(move |request: BufferedRequest| {
            attempts.fetch_add(1, Ordering::SeqCst);
            request
        })
        .service(client)
}

fn get(url: &str) -> BufferedRequest {
    http::Request::get(url)
        .body(Full::new(Bytes::new()))
        .expect("valid request")
}

#[tokio::test(start_paused = true)]
async fn hyper_util_503_with_retry_after_then_success() {
    let server = serve(vec![
        status(503, Some(("retry-after", "1"))),
        Reply::Ok("fresh"),
    ])
    .await
    .expect("serve");
    let attempts = Arc::new(AtomicU32::new(0));
    let client = hyper_client(StandardStrategy::new(config(3)), attempts.clone());
    let response = client
        .oneshot(get(&server.url("/item")))
        .await
        .expect("response");
    assert_eq!(response.status(), 200);
    assert_eq!((server.hits(), attempts.load(Ordering::SeqCst)), (2, 2));
    let gap = server.gaps()[0];
    assert!(
        gap >= Duration::from_secs(1) && gap < Duration::from_millis(1100),
        "{gap:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn hyper_util_429_with_an_http_date() {
    let strategy = StandardStrategy::new(config(3));
    let scope = strategy.scope().clone();
    let server = serve(vec![Reply::StatusRetryAt(429, 2), Reply::Ok("fresh")])
        .await
        .expect("serve");
    let client = hyper_client(strategy, Arc::default());
    let response = client
        .oneshot(get(&server.url("/item")))
        .await
        .expect("response");
    assert_eq!(response.status(), 200);
    let gap = server.gaps()[0];
    assert!(
        gap >= Duration::from_secs(1) && gap <= Duration::from_secs(2),
        "{gap:?}"
    );
    assert_eq!(scope.stats().throttles, 1);
}

#[tokio::test(start_paused = true)]
async fn hyper_util_404_is_returned_unchanged_at_once() {
    let server = serve(vec![status(404, Some(("x-reason", "gone")))])
        .await
        .expect("serve");
    let client = hyper_client(StandardStrategy::new(config(3)), Arc::default());
    let response = client
        .oneshot(get(&server.url("/missing")))
        .await
        .expect("response");
    assert_eq!(response.status(), 404);
    assert_eq!(response.headers()["x-reason"], "gone");
    assert_eq!(server.hits(), 1);
}

#[tokio::test(start_paused = true)]
async fn hyper_util_returns_the_last_response_when_attempts_run_out() {
    let server = serve(vec![status(503, Some(("retry-after", "1")))])
        .await
        .expect("serve");
    let client = hyper_client(StandardStrategy::new(config(3)), Arc::default());
    let response = client
        .oneshot(get(&server.url("/item")))
        .await
        .expect("response");
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "1");
    assert_eq!(server.hits(), 3);
    assert!(
        server
            .gaps()
            .iter()
            .all(|gap| *gap >= Duration::from_secs(1))
    );
}

#[tokio::test(start_paused = true)]
async fn hyper_util_refused_connections_are_retried() {
    let url = format!("http://{}/item", refused_addr().await.expect("loopback"));
    let attempts = Arc::new(AtomicU32::new(0));
    let client = hyper_client(StandardStrategy::new(config(3)), attempts.clone());
    let error = client
        .oneshot(get(&url))
        .await
        .expect_err("nothing listens");
    assert!(error.is_connect());
    assert_eq!(attempts.load(Ordering::SeqCst), 3);
}

/// A service error that describes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, retry_core::RetryInfo)]
enum Flaky {
    #[error("unavailable")]
    #[retry(transient)]
    Unavailable,
    #[error("throttled")]
    #[retry(throttling)]
    Throttled,
    #[error("bad request")]
    #[retry(never)]
    Bad,
}

/// A service that answers `script[n]` to its n-th call (the last one repeats), counting calls.
fn scripted(
    script: Vec<Result<u32, Flaky>>,
) -> (
    impl Service<u32, Response = u32, Error = Flaky, Future: Send> + Clone + Send,
    Arc<AtomicU32>,
) {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let script = Arc::new(script);
    let service = tower::service_fn(move |request: u32| {
        let n = counted.fetch_add(1, Ordering::SeqCst) as usize;
        let reply = script.get(n).or(script.last()).copied().unwrap_or(Ok(0));
        async move { reply.map(|x| x + request) }
    });
    (service, calls)
}

#[tokio::test(start_paused = true)]
async fn the_layer_shares_a_named_scope_with_retryable_fns() {
    const SCOPE: &str = "tests-tower-shared-scope";
    // The layer's strategy creates the scope: a fixed quota of 10 (the classic preset's, where a
    // retry costs 5) pays for two retries.
    let config = RetryConfig::aws_classic()
        .max_attempts(5)
        .initial_backoff(Duration::from_millis(10))
        .quota_capacity(10)
        .build()
        .expect("valid config");
    let layer = RetryLayer::new(strategy_for(config, SCOPE));
    let (service, calls) = scripted(vec![Err(Flaky::Unavailable)]);
    let outcome = layer.layer(service).oneshot(1).await;
    assert_eq!(outcome, Err(Flaky::Unavailable));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        3,
        "two retries, then the quota is empty"
    );

    #[retryable(
        max_attempts = 5,
        initial_backoff = "10ms",
        scope = "tests-tower-shared-scope"
    )]
    async fn shares_the_quota(calls: &AtomicU32) -> Result<(), Flaky> {
        calls.fetch_add(1, Ordering::SeqCst);
        Err(Flaky::Unavailable)
    }
    let fn_calls = AtomicU32::new(0);
    assert_eq!(shares_the_quota(&fn_calls).await, Err(Flaky::Unavailable));
    assert_eq!(
        fn_calls.load(Ordering::SeqCst),
        1,
        "the layer spent the scope's quota"
    );
    let stats = Scope::lookup(SCOPE).expect("created").stats();
    assert_eq!((stats.retries, stats.quota_exhausted), (2, 2));
}

#[tokio::test(start_paused = true)]
async fn adaptive_mode_waits_for_the_send_permit_in_poll_ready() {
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .max_attempts(2)
        .initial_backoff(Duration::ZERO)
        .throttling_backoff(Duration::ZERO)
        .build()
        .expect("valid config");
    let strategy = AdaptiveStrategy::from_builder(
        StandardStrategy::builder(config.clone()).scope(Scope::new("tower-adaptive", &config)),
    );
    let scope = strategy.scope().clone();
    let (service, calls) = scripted(vec![Err(Flaky::Throttled), Ok(0)]);
    let mut service = RetryLayer::new(strategy).layer(service);

    // A throttled first call switches the limiter on; its retry waits for a permit, then succeeds.
    assert_eq!(service.ready().await.expect("ready").call(1).await, Ok(1));
    assert!(scope.limiter().is_enabled());
    assert_eq!(calls.load(Ordering::SeqCst), 2);

    // The next call's permit is not there yet: the service is not ready, and waits in line.
    let mut waiting = service.clone();
    let not_ready = tokio::time::timeout(Duration::from_millis(1), waiting.ready()).await;
    assert!(not_ready.is_err(), "poll_ready waits for the permit");
    assert_eq!(scope.limiter().stats().waiting, 1);
    // Once the bucket refills the service is ready, and the call is sent with its permit.
    let ready = tokio::time::timeout(Duration::from_secs(10), waiting.ready()).await;
    assert!(ready.is_ok(), "the permit came");
    assert_eq!(waiting.call(2).await, Ok(2));
    assert_eq!(scope.limiter().stats().waiting, 0);
    assert_eq!(calls.load(Ordering::SeqCst), 3);

    // A service made ready and dropped gives its place and token back.
    let mut dropped = service.clone();
    let _ = tokio::time::timeout(Duration::from_millis(1), dropped.ready()).await;
    assert_eq!(scope.limiter().stats().waiting, 1);
    let failures = scope.stats().failures;
    drop(dropped);
    assert_eq!(scope.limiter().stats().waiting, 0);
    assert_eq!(
        scope.stats().failures,
        failures + 1,
        "counted as an abandoned call"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_without_poll_ready_still_waits_and_retries() {
    let (service, calls) = scripted(vec![Err(Flaky::Unavailable), Ok(10)]);
    let mut service = RetryLayer::new(StandardStrategy::new(config(3))).layer(service);
    // Against tower's contract, but it must not panic nor skip the service's readiness.
    assert_eq!(service.call(5).await, Ok(15));
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_request_that_cannot_be_copied_is_not_retried() {
    // The classic preset's fixed quota of 500: any retry granted would show in it.
    let strategy = StandardStrategy::new(
        RetryConfig::aws_classic()
            .initial_backoff(Duration::from_millis(10))
            .build()
            .expect("valid config"),
    );
    let scope = strategy.scope().clone();
    let (service, calls) = scripted(vec![Err(Flaky::Unavailable), Ok(0)]);
    let mut service = RetryLayer::new(strategy)
        .copy_requests_with(|request: &u32| (*request != 13).then_some(*request))
        .layer(service);
    assert_eq!(
        service.ready().await.expect("ready").call(13).await,
        Err(Flaky::Unavailable)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        scope.quota().level(),
        500,
        "no quota spent on a retry that cannot happen"
    );
    assert_eq!(service.ready().await.expect("ready").call(7).await, Ok(7));
    assert_eq!(
        calls.load(Ordering::SeqCst),
        2,
        "a copyable request is sent at once"
    );
}

#[tokio::test(start_paused = true)]
async fn errors_that_forbid_a_retry_are_returned_unchanged() {
    let (service, calls) = scripted(vec![Err(Flaky::Bad), Ok(0)]);
    let service = RetryLayer::new(StandardStrategy::new(config(3))).layer(service);
    assert_eq!(service.oneshot(1).await, Err(Flaky::Bad));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(Flaky::Bad.retry_safety(), RetrySafety::No);
}

#[tokio::test(start_paused = true)]
async fn a_call_cancelled_during_its_backoff_gives_the_retry_back() {
    // The classic preset: a fixed quota of 500, a 1 s backoff base.
    let strategy = StandardStrategy::new(
        RetryConfig::aws_classic()
            .jitter(retry_core::backoff::Jitter::None)
            .build()
            .expect("valid config"),
    );
    let scope = strategy.scope().clone();
    let (service, calls) = scripted(vec![Err(Flaky::Unavailable)]);
    let call = RetryLayer::new(strategy).layer(service).oneshot(1);
    let cancelled = tokio::time::timeout(Duration::from_millis(500), call).await;
    assert!(cancelled.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        scope.quota().level(),
        500,
        "the unsent retry's cost is back"
    );
    let stats = scope.stats();
    assert_eq!((stats.retries, stats.failures, stats.successes), (1, 1, 0));
}

#[tokio::test(start_paused = true)]
async fn a_call_cancelled_in_flight_feeds_nothing_to_the_limiter() {
    let config = RetryConfig::builder()
        .mode(RetryMode::Adaptive)
        .build()
        .expect("valid config");
    let strategy = AdaptiveStrategy::new(config);
    let scope = strategy.scope().clone();
    let limiter = scope.limiter();
    // 20 responses/s for 5 s, then a throttle: the limiter is on at 0.7 x the measured rate.
    for _ in 0..100 {
        let now = scope.clock().now();
        limiter.record_response(false, now, now);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let now = scope.clock().now();
    limiter.record_response(true, now, now);
    tokio::time::sleep(Duration::from_secs(10)).await;
    let before = limiter.stats();
    // An attempt that never answers, its caller gone after 100 ms: no answer to feed.
    let hangs = tower::service_fn(|_: u32| std::future::pending::<Result<u32, Flaky>>());
    let call = RetryLayer::new(strategy).layer(hangs).oneshot(1);
    assert!(
        tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err()
    );
    let after = limiter.stats();
    assert_eq!(after.fill_rate, before.fill_rate, "{before:?} -> {after:?}");
    assert_eq!(
        scope.stats().failures,
        1,
        "still a failed call of the scope"
    );
}

/// Runs `future` for at most `polls` polls: `None` if it was dropped (cancelled) before it
/// completed. Cancels a call at a chosen await point: in flight, in its backoff, in a retry.
async fn cancel_after_polls<F: Future>(polls: u32, future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut left = polls;
    std::future::poll_fn(|cx| {
        if left == 0 {
            return std::task::Poll::Ready(None);
        }
        left -= 1;
        future.as_mut().poll(cx).map(Some)
    })
    .await
}

#[test]
fn many_tasks_on_many_threads_with_cancellation_settle_every_call() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_time()
        .build()
        .expect("runtime");
    // A fixed quota (the classic preset's, where every retry costs 5) too large to run out.
    let config = RetryConfig::aws_classic()
        .max_attempts(4)
        .initial_backoff(Duration::from_millis(1))
        .quota_capacity(100_000)
        .build()
        .expect("valid config");
    let scope = Scope::new("tower-many-tasks", &config);
    let strategy = StandardStrategy::builder(config)
        .scope(scope.clone())
        .build();
    const TASKS: u64 = 32;
    const CALLS: u64 = 50;
    let calls_made = Arc::new(AtomicU32::new(0));
    let completed = Arc::new(AtomicU32::new(0));
    runtime.block_on(async {
        // Every third attempt fails, one in 25 is throttled, each after a yield.
        let attempts = Arc::new(AtomicU32::new(0));
        let service = tower::service_fn(move |x: u64| {
            let n = attempts.fetch_add(1, Ordering::Relaxed);
            async move {
                tokio::task::yield_now().await;
                match n % 25 {
                    0 => Err(Flaky::Throttled),
                    n if n % 3 == 0 => Err(Flaky::Unavailable),
                    _ => Ok(x),
                }
            }
        });
        let service = RetryLayer::new(strategy).layer(service);
        let tasks: Vec<_> = (0..TASKS)
            .map(|task| {
                let mut service = service.clone();
                let calls_made = calls_made.clone();
                let completed = completed.clone();
                tokio::spawn(async move {
                    for call in 0..CALLS {
                        let ready = service.ready().await.expect("always ready");
                        calls_made.fetch_add(1, Ordering::Relaxed);
                        let response = ready.call(call);
                        // Cancel one call in three, after 1 to 4 polls.
                        let polls = match (task + call) % 3 {
                            0 => 1 + ((task * 7 + call) % 4) as u32,
                            _ => u32::MAX,
                        };
                        if cancel_after_polls(polls, response).await.is_some() {
                            completed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.expect("task");
        }
    });
    let stats = scope.stats();
    let calls = u64::from(calls_made.load(Ordering::Relaxed));
    assert_eq!(calls, TASKS * CALLS);
    // Every call's token went back to the strategy exactly once, cancelled or not.
    assert_eq!(stats.successes + stats.failures, calls, "{stats:?}");
    let completed = u64::from(completed.load(Ordering::Relaxed));
    assert!(
        completed < calls && completed > calls / 2,
        "some calls were cancelled"
    );
    assert!(stats.retries > 0 && stats.throttles > 0, "{stats:?}");
    // Retries that were granted and never sent gave their cost back; sent ones kept it.
    assert!(stats.quota_level <= 100_000 && stats.quota_level > 100_000 - 5 * stats.retries as u32);
}

#[tokio::test]
async fn buffered_bodies_over_the_limit_fail_before_anything_is_sent() {
    let sent = Arc::new(AtomicU32::new(0));
    let counted = sent.clone();
    let service = ServiceBuilder::new()
        .layer(BufferBodyLayer::new(4))
        .service_fn(move |request: BufferedRequest| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, std::convert::Infallible>(request.into_body()) }
        });
    let too_long = http::Request::new(Full::new(Bytes::from_static(b"hello")));
    let error = service
        .clone()
        .oneshot(too_long)
        .await
        .expect_err("over the limit");
    assert!(error.is::<http_body_util::LengthLimitError>(), "{error}");
    assert_eq!(sent.load(Ordering::SeqCst), 0);
    let fits = http::Request::new(Full::new(Bytes::from_static(b"hey")));
    assert!(service.oneshot(fits).await.is_ok());
    assert_eq!(sent.load(Ordering::SeqCst), 1);
}

/// Answers its first call with `Unavailable`, then is never ready again (its `poll_ready` fails).
#[derive(Clone)]
struct BreaksAfterOneCall(Arc<AtomicU32>);

impl Service<u32> for BreaksAfterOneCall {
    type Response = u32;
    type Error = Flaky;
    type Future = std::future::Ready<Result<u32, Flaky>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Flaky>> {
        let ready = if self.0.load(Ordering::SeqCst) == 0 {
            Ok(())
        } else {
            Err(Flaky::Bad)
        };
        std::task::Poll::Ready(ready)
    }

    fn call(&mut self, _: u32) -> Self::Future {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Err(Flaky::Unavailable))
    }
}

#[tokio::test(start_paused = true)]
async fn a_retry_the_service_refuses_before_it_is_sent_gives_its_cost_back() {
    // The classic preset: a fixed quota of 500, a retry costs 5.
    let strategy = StandardStrategy::new(RetryConfig::aws_classic().build().expect("valid"));
    let scope = strategy.scope().clone();
    let calls = Arc::new(AtomicU32::new(0));
    let outcome = RetryLayer::new(strategy)
        .layer(BreaksAfterOneCall(calls.clone()))
        .oneshot(1)
        .await;
    // The retry was granted, then the service failed in `poll_ready`: nothing was sent.
    assert_eq!(outcome, Err(Flaky::Bad));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        scope.quota().level(),
        500,
        "the unsent retry's cost is back"
    );
    let stats = scope.stats();
    assert_eq!((stats.attempts, stats.failures), (1, 1), "one attempt sent");
}

/// Answers its first call with `Unavailable`, then is never ready again (`poll_ready` pends).
#[derive(Clone)]
struct StallsAfterOneCall(Arc<AtomicU32>);

impl Service<u32> for StallsAfterOneCall {
    type Response = u32;
    type Error = Flaky;
    type Future = std::future::Ready<Result<u32, Flaky>>;

    fn poll_ready(&mut self, _: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Flaky>> {
        if self.0.load(Ordering::SeqCst) == 0 {
            std::task::Poll::Ready(Ok(()))
        } else {
            std::task::Poll::Pending
        }
    }

    fn call(&mut self, _: u32) -> Self::Future {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::future::ready(Err(Flaky::Unavailable))
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_cancelled_while_its_retry_waits_for_the_service_gives_the_cost_back() {
    // The classic preset: a fixed quota of 500, a retry costs 5.
    let strategy = StandardStrategy::new(RetryConfig::aws_classic().build().expect("valid"));
    let scope = strategy.scope().clone();
    let calls = Arc::new(AtomicU32::new(0));
    let call = RetryLayer::new(strategy)
        .layer(StallsAfterOneCall(calls.clone()))
        .oneshot(1);
    // The retry's backoff (at most 1 s) passes, its permit is granted, then it waits for the
    // service's readiness until the caller gives up: it was never sent.
    let cancelled = tokio::time::timeout(Duration::from_secs(5), call).await;
    assert!(cancelled.is_err());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(
        scope.quota().level(),
        500,
        "the unsent retry's cost is back"
    );
    let stats = scope.stats();
    assert_eq!((stats.attempts, stats.failures), (1, 1), "one attempt sent");
}
