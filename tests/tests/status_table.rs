//! The crate's one table of HTTP statuses, through both public HTTP paths against real servers on
//! loopback: the same scripted responses are fetched with reqwest + `check_status()` (an
//! `HttpStatusError`, classified by its `RetryInfo`) and with hyper-util's client under
//! `RetryLayer` + `HttpStatusClassifier`, and each gets the same verdict on both, the verdict
//! written out by hand below, but one difference: a 4xx other than 408 and 429 is left to other
//! classifiers on a response (an error-code classifier may read it) and never retried as an error
//! value (the server answered: nothing more can be learned from it, whatever the idempotency).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use examples::http_demo::{HttpServer, Reply, serve_paths};
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use retry_core::classify::{ClassifierPriority, RetryInfoClassifier};
use retry_core::http::{CheckStatus, HttpStatusClassifier, HttpStatusError};
use retry_core::tower::{BufferedRequest, RetryLayer};
use retry_core::{
    ClassifyRetry, ErrorKind, Retry, RetryAction, RetryConfig, RetryInfo, StandardStrategy,
};
use tower::{Layer, ServiceExt};

/// One scripted response: the path it is served on, its status and headers, and the verdict the
/// table gives it (by hand).
struct Case {
    path: &'static str,
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    verdict: RetryAction,
}

impl Case {
    /// The verdict on the case's response as an error value (`check_status()`): a status the
    /// table leaves to other classifiers is definite there, never retried.
    fn error_verdict(&self) -> RetryAction {
        match self.verdict {
            RetryAction::NoActionIndicated if self.status >= 400 => RetryAction::RetryForbidden,
            verdict => verdict,
        }
    }
}

const fn case(
    path: &'static str,
    status: u16,
    headers: &'static [(&'static str, &'static str)],
    verdict: RetryAction,
) -> Case {
    Case {
        path,
        status,
        headers,
        verdict,
    }
}

/// A day and a second: more than any client waits.
const TOO_LONG: &[(&str, &str)] = &[("retry-after", "86401")];
const ONE_SECOND: &[(&str, &str)] = &[("retry-after", "1")];

fn cases() -> Vec<Case> {
    let retry = RetryAction::retryable;
    let after = |kind, secs| RetryAction::retryable_after(kind, Duration::from_secs(secs));
    let none = RetryAction::NoActionIndicated;
    let never = RetryAction::RetryForbidden;
    vec![
        case("/200", 200, &[], none),
        case("/204", 204, ONE_SECOND, none),
        case("/304", 304, &[], none),
        case("/400", 400, &[], none),
        case("/404", 404, &[], none),
        case("/404-too-long", 404, TOO_LONG, none),
        case("/408", 408, &[], retry(ErrorKind::Transient)),
        case(
            "/408-after",
            408,
            ONE_SECOND,
            after(ErrorKind::Transient, 1),
        ),
        case("/409", 409, &[], none),
        case("/425", 425, &[], none),
        case("/429", 429, &[], retry(ErrorKind::Throttling)),
        case(
            "/429-after",
            429,
            ONE_SECOND,
            after(ErrorKind::Throttling, 1),
        ),
        case("/429-too-long", 429, TOO_LONG, never),
        case("/499", 499, &[], none),
        case("/500", 500, &[], retry(ErrorKind::Server)),
        case(
            "/500-amz",
            500,
            &[("x-amz-retry-after", "1500")],
            RetryAction::retryable_after(ErrorKind::Server, Duration::from_millis(1500)),
        ),
        case("/501", 501, &[], never),
        case("/502", 502, &[], retry(ErrorKind::Server)),
        case("/503", 503, &[], retry(ErrorKind::Server)),
        case("/503-after", 503, ONE_SECOND, after(ErrorKind::Server, 1)),
        case(
            "/503-unreadable",
            503,
            &[("retry-after", "soon")],
            retry(ErrorKind::Server),
        ),
        case("/503-too-long", 503, TOO_LONG, never),
        case(
            "/503-far-date",
            503,
            &[("retry-after", "Fri, 31 Dec 9999 23:59:59 GMT")],
            never,
        ),
        case("/504", 504, &[], retry(ErrorKind::Server)),
        case("/505", 505, &[], never),
        case("/506", 506, &[], never),
        case("/507", 507, &[], retry(ErrorKind::Server)),
        case("/508", 508, &[], never),
        case("/509", 509, &[], retry(ErrorKind::Server)),
        case("/510", 510, &[], never),
        case("/511", 511, ONE_SECOND, never),
        case("/520", 520, &[], retry(ErrorKind::Server)),
        case("/599", 599, &[], retry(ErrorKind::Server)),
    ]
}

/// A server answering each case's path with its response, then 200.
async fn serve_cases(cases: &[Case]) -> HttpServer {
    let scripts = cases
        .iter()
        .map(|case| {
            let headers = case
                .headers
                .iter()
                .map(|(name, value)| (*name, (*value).to_owned()))
                .collect();
            (
                case.path,
                vec![Reply::Status(case.status, headers), Reply::Ok("done")],
            )
        })
        .collect();
    serve_paths(scripts).await.expect("serve")
}

/// A classifier that notes every verdict of the one it wraps.
#[derive(Clone)]
struct Recorded<C> {
    inner: C,
    verdicts: Arc<Mutex<Vec<RetryAction>>>,
}

impl<C> Recorded<C> {
    fn new(inner: C) -> Self {
        Self {
            inner,
            verdicts: Arc::default(),
        }
    }

    /// The verdict on the first attempt (an `Ok` outcome that was not classified: no action).
    fn first(&self) -> RetryAction {
        let verdicts = self.verdicts.lock().unwrap_or_else(PoisonError::into_inner);
        verdicts
            .first()
            .copied()
            .unwrap_or(RetryAction::NoActionIndicated)
    }
}

impl<T, E, C: ClassifyRetry<T, E>> ClassifyRetry<T, E> for Recorded<C> {
    fn classify(&self, outcome: &Result<T, E>) -> RetryAction {
        let verdict = self.inner.classify(outcome);
        self.verdicts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(verdict);
        verdict
    }

    fn name(&self) -> &'static str {
        "recorded"
    }

    fn priority(&self) -> ClassifierPriority {
        self.inner.priority()
    }
}

/// Two attempts, 10 ms backoff for every kind, no jitter.
fn strategy() -> StandardStrategy {
    StandardStrategy::new(
        RetryConfig::builder()
            .max_attempts(2)
            .initial_backoff(Duration::from_millis(10))
            .throttling_backoff(Duration::from_millis(10))
            .jitter(retry_core::backoff::Jitter::None)
            .build()
            .expect("valid config"),
    )
}

/// What an attempt with reqwest fails with.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum ApiError {
    #[error(transparent)]
    #[retry(transparent)]
    Http(#[from] reqwest::Error),
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] HttpStatusError),
}

/// The first attempt's verdict with reqwest + `check_status()`, classified by `RetryInfo`.
async fn verdict_by_reqwest(client: &reqwest::Client, url: &str) -> RetryAction {
    let classifier = Recorded::new(RetryInfoClassifier);
    let strategy = strategy();
    let _ = Retry::new(&strategy)
        .classifier(classifier.clone())
        .run(|| async {
            let response = client.get(url).send().await?.check_status()?;
            Ok::<_, ApiError>(response.text().await?)
        })
        .await;
    classifier.first()
}

/// The first attempt's verdict with hyper-util under `RetryLayer` + `HttpStatusClassifier`.
async fn verdict_by_tower(url: &str) -> RetryAction {
    let classifier = Recorded::new(HttpStatusClassifier::new());
    let client: Client<HttpConnector, Full<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(0)
        .build_http();
    let service = RetryLayer::new(strategy())
        .classifier(classifier.clone())
        .layer(client);
    let request: BufferedRequest = http::Request::get(url)
        .body(Full::new(Bytes::new()))
        .expect("valid request");
    let _ = service.oneshot(request).await;
    classifier.first()
}

#[tokio::test(start_paused = true)]
async fn the_same_response_gets_the_same_verdict_on_every_http_path() {
    let cases = cases();
    let by_reqwest = serve_cases(&cases).await;
    let by_tower = serve_cases(&cases).await;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let mut differences = Vec::new();
    for case in &cases {
        let reqwest_verdict = verdict_by_reqwest(&client, &by_reqwest.url(case.path)).await;
        let tower_verdict = verdict_by_tower(&by_tower.url(case.path)).await;
        if (reqwest_verdict, tower_verdict) != (case.error_verdict(), case.verdict) {
            differences.push(format!(
                "{} {:?}: expected {:?}, reqwest + check_status {:?}, RetryLayer + HttpStatusClassifier {:?}",
                case.status, case.headers, case.verdict, reqwest_verdict, tower_verdict
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
    assert_eq!(
        by_reqwest.hits(),
        by_tower.hits(),
        "as many requests each way"
    );
}
