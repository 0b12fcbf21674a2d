//! tower: `RetryLayer` over hyper-util's client. Responses are classified by status and
//! `Retry-After` (`HttpStatusClassifier`), connection failures by their `io::Error`
//! (`TransientErrorClassifier`); the strategy is the process-wide scope "inventory", which
//! `#[retryable(scope = "inventory")]` fns would share.
//!
//! Run it with `cargo run -p examples --example tower_hyper` (about a second: the server's
//! `Retry-After` is honoured).

use std::time::Instant;

use examples::http_demo::{self, Reply, status};

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use retry_core::classify::{ClassifierChain, TransientErrorClassifier};
use retry_core::http::HttpStatusClassifier;
use retry_core::tower::RetryLayer;
use retry_core::{ConfigError, RetryConfig, strategy_for};
use tower::{Service, ServiceBuilder};

type Request = http::Request<Full<Bytes>>;
type Response = http::Response<hyper::body::Incoming>;
type Error = hyper_util::client::legacy::Error;

/// hyper-util's client, retried: 503 / 429 / 5xx responses and refused connections.
fn inventory_client()
-> Result<impl Service<Request, Response = Response, Error = Error> + Clone, ConfigError> {
    let config = RetryConfig::builder()
        .max_attempts(4)
        .initial_backoff(Duration::from_millis(100))
        .build()?;
    let classifier = ClassifierChain::new()
        .with(HttpStatusClassifier::new())
        .with(TransientErrorClassifier);
    Ok(ServiceBuilder::new()
        .layer(RetryLayer::new(strategy_for(config, "inventory")).classifier(classifier))
        .service(Client::builder(TokioExecutor::new()).build_http()))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    use tower::ServiceExt;

    let server = http_demo::serve_paths(vec![(
        "/stock/42",
        vec![
            status(503, Some(("retry-after", "1"))),
            status(502, None),
            Reply::Ok("17 in stock"),
        ],
    )])
    .await?;
    let client = inventory_client()?;
    for path in ["/stock/42", "/stock/0"] {
        let started = Instant::now();
        let request = http::Request::get(server.url(path)).body(Full::default())?;
        let response = client.clone().oneshot(request).await?;
        println!(
            "GET {path}: {} after {:.1?}",
            response.status(),
            started.elapsed()
        );
    }
    let stats = retry_core::Scope::lookup("inventory")
        .ok_or("the scope is created with the layer")?
        .stats();
    println!(
        "scope inventory: {} attempts, {} retries",
        stats.attempts, stats.retries
    );
    Ok(())
}
