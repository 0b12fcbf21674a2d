//! `RetryLayer::hedge` on virtual time, over `service_fn`s: an idempotent request is hedged and
//! the first answer wins; a `POST` is retried but never hedged, unless the layer declares its
//! calls idempotent; a request the copy hook cannot copy is sent once; a hook that copies once
//! has the kept request sent as the last copy; a call dropped at any moment leaves its scope's
//! books exact.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_core::Scope;
use retry_core::hedge::Hedging;
use retry_core::tower::RetryLayer;
use retry_tests::hedging_strategy;
use tokio::time::{Instant, sleep};
use tower::{Service, ServiceBuilder, ServiceExt};

const MS: Duration = Duration::from_millis(1);

type Request = http::Request<()>;

fn hedging(max_hedges: u32) -> Hedging {
    Hedging::after(10 * MS)
        .and_then(|hedging| hedging.with_max_hedges(max_hedges))
        .expect("valid hedging")
}

/// A service whose first copy takes 1 s and the others 5 ms, answering with the copy's number;
/// it counts the copies it was called with.
fn slow_first(
    copies: &Arc<AtomicU32>,
) -> impl Service<Request, Response = http::Response<u32>, Error = io::Error, Future: Send> + Clone
{
    let copies = Arc::clone(copies);
    tower::service_fn(move |_: Request| {
        let copy = copies.fetch_add(1, Ordering::SeqCst) + 1;
        async move {
            sleep(if copy == 1 { 1_000 * MS } else { 5 * MS }).await;
            Ok(http::Response::new(copy))
        }
    })
}

/// A hedged call can be spawned: its future is `Send` when the service's is.
fn assert_send<T: Send>(_: &T) {}

fn get() -> Request {
    http::Request::get("/item").body(()).expect("a request")
}

fn post() -> Request {
    http::Request::post("/item").body(()).expect("a request")
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_get_is_hedged_and_the_first_answer_wins() {
    let copies = Arc::new(AtomicU32::new(0));
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(hedging_strategy(3)).hedge(hedging(1)))
        .service(slow_first(&copies));
    let started = Instant::now();
    let call = service.oneshot(get());
    assert_send(&call);
    let response = call.await.expect("an answer");
    assert_eq!(*response.body(), 2);
    assert_eq!(started.elapsed(), 15 * MS);
    assert_eq!(copies.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_post_is_never_hedged_unless_the_layer_declares_it_idempotent() {
    let copies = Arc::new(AtomicU32::new(0));
    let service = ServiceBuilder::new()
        .layer(RetryLayer::new(hedging_strategy(3)).hedge(hedging(1)))
        .service(slow_first(&copies));
    let started = Instant::now();
    let response = service.oneshot(post()).await.expect("an answer");
    assert_eq!(
        *response.body(),
        1,
        "the slow first copy: no hedge for a POST"
    );
    assert_eq!(started.elapsed(), 1_000 * MS);
    assert_eq!(copies.load(Ordering::SeqCst), 1);

    let copies = Arc::new(AtomicU32::new(0));
    let service = ServiceBuilder::new()
        .layer(
            RetryLayer::new(hedging_strategy(3))
                .idempotent(true)
                .hedge(hedging(1)),
        )
        .service(slow_first(&copies));
    let response = service.oneshot(post()).await.expect("an answer");
    assert_eq!(*response.body(), 2, "declared idempotent: hedged");
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_request_the_hook_cannot_copy_is_sent_once() {
    let copies = Arc::new(AtomicU32::new(0));
    let layer = RetryLayer::new(hedging_strategy(3))
        .copy_requests_with(|_: &Request| None)
        .hedge(hedging(2));
    let service = ServiceBuilder::new()
        .layer(layer)
        .service(slow_first(&copies));
    let response = service.oneshot(get()).await.expect("an answer");
    assert_eq!(*response.body(), 1);
    assert_eq!(copies.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_hook_that_copies_once_has_the_kept_request_sent_last() {
    let copies = Arc::new(AtomicU32::new(0));
    let made = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&made);
    let layer = RetryLayer::new(hedging_strategy(3))
        .copy_requests_with(move |request: &Request| {
            (counted.fetch_add(1, Ordering::SeqCst) == 0).then(|| {
                let mut copy = http::Request::new(());
                *copy.method_mut() = request.method().clone();
                copy
            })
        })
        .hedge(hedging(2));
    let service = ServiceBuilder::new()
        .layer(layer)
        .service(tower::service_fn({
            let copies = Arc::clone(&copies);
            move |_: Request| {
                copies.fetch_add(1, Ordering::SeqCst);
                async {
                    sleep(1_000 * MS).await;
                    Ok::<_, io::Error>(http::Response::new(()))
                }
            }
        }));
    let started = Instant::now();
    service.oneshot(get()).await.expect("an answer");
    assert_eq!(started.elapsed(), 1_000 * MS);
    assert_eq!(
        copies.load(Ordering::SeqCst),
        2,
        "the hook's copy, then the kept request as the first hedge; no second hedge"
    );
}

/// The scope's attempts, successes, failures and quota level.
fn books(scope: &Scope) -> (u64, u64, u64, u32) {
    let stats = scope.stats();
    (
        stats.attempts,
        stats.successes,
        stats.failures,
        scope.quota().level(),
    )
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_call_dropped_at_any_moment_leaves_the_books_exact() {
    // Hedges at 10 and 20 ms; the second (copy 3) answers at 25 ms.
    for dropped_at in (0..=30).step_by(5) {
        let strategy = hedging_strategy(3);
        let copies = Arc::new(AtomicU32::new(0));
        let service = ServiceBuilder::new()
            .layer(RetryLayer::new(strategy.clone()).hedge(hedging(2)))
            .service(tower::service_fn({
                let copies = Arc::clone(&copies);
                move |_: Request| {
                    let copy = copies.fetch_add(1, Ordering::SeqCst) + 1;
                    async move {
                        sleep(if copy == 3 { 5 * MS } else { 1_000 * MS }).await;
                        Ok::<_, io::Error>(http::Response::new(copy))
                    }
                }
            }));
        let call = service.oneshot(get());
        let ended = tokio::time::timeout(Duration::from_millis(dropped_at), call).await;
        let made = copies.load(Ordering::SeqCst);
        let (attempts, successes, failures, level) = books(strategy.scope());
        assert_eq!(u64::from(made), attempts, "at {dropped_at} ms");
        assert_eq!(
            successes + failures,
            1,
            "at {dropped_at} ms: the call ended once"
        );
        assert_eq!(ended.is_ok(), successes == 1, "at {dropped_at} ms");
        // A winning hedge's cost comes back; a hedge that lost, or a call cancelled, stays
        // charged (14 per hedge, the default cost).
        let hedges = made.saturating_sub(1);
        let kept = if ended.is_ok() { hedges - 1 } else { hedges };
        assert_eq!(level, 500 - 14 * kept, "at {dropped_at} ms: {made} copies");
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn a_retry_with_no_copy_left_ends_the_call_with_the_last_answer() {
    let strategy = hedging_strategy(3);
    let made = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&made);
    let copies = Arc::new(AtomicU32::new(0));
    let layer = RetryLayer::new(strategy.clone())
        .copy_requests_with(move |request: &Request| {
            (counted.fetch_add(1, Ordering::SeqCst) == 0).then(|| {
                let mut copy = http::Request::new(());
                *copy.method_mut() = request.method().clone();
                copy
            })
        })
        .hedge(hedging(1));
    let service = ServiceBuilder::new()
        .layer(layer)
        .service(tower::service_fn({
            let copies = Arc::clone(&copies);
            move |_: Request| {
                let copy = copies.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    // Each copy is refused at once: retried, before any hedge is due.
                    Err::<http::Response<()>, _>(io::Error::new(
                        io::ErrorKind::ConnectionRefused,
                        format!("copy {copy}"),
                    ))
                }
            }
        }));
    let error = service
        .oneshot(get())
        .await
        .expect_err("every copy refused");
    assert_eq!(
        error.to_string(),
        "copy 2",
        "the kept request was the last copy"
    );
    assert_eq!(
        copies.load(Ordering::SeqCst),
        2,
        "max_attempts = 3, no third copy"
    );
    let (attempts, successes, failures, level) = books(strategy.scope());
    assert_eq!((attempts, successes, failures), (2, 0, 1));
    assert_eq!(
        level,
        500 - 14,
        "the sent retry paid (14, the default cost); the one not sent was given back"
    );
}
