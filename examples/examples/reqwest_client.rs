//! reqwest: a `#[retryable]` client whose error enum derives `RetryInfo` and wraps
//! `reqwest::Error` and `HttpStatusError` with `#[retry(transparent)]`. A demo server on
//! loopback answers 503 with `Retry-After: 1`, then 429, then the item; `/items/0` is 404.
//!
//! Run it with `cargo run -p examples --example reqwest_client` (about a second: the server's
//! `Retry-After` is honoured).

use std::time::Instant;

use examples::http_demo::{self, Reply, status};

// ANCHOR: guide
use retry_core::http::{CheckStatus, HttpStatusError};
use retry_core::{RetryInfo, retryable};

/// What a call to the catalog fails with; each variant knows whether a retry can help.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum CatalogError {
    /// reqwest's own errors: a refused connection or a timeout is retried; an error after the
    /// request may have reached the server only for an idempotent call.
    #[error(transparent)]
    #[retry(transparent)]
    Http(#[from] reqwest::Error),
    /// An error status: 5xx, 408 and 429 are retried, after the server's `Retry-After`.
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] HttpStatusError),
}

struct Catalog {
    client: reqwest::Client,
    base: String,
}

impl Catalog {
    /// One attempt: `check_status()?` turns a 4xx / 5xx into a `HttpStatusError`. A GET:
    /// idempotent, so a reset after the request was sent is retried too.
    #[retryable(
        max_attempts = 4,
        initial_backoff = "100ms",
        scope = "catalog",
        idempotent = true
    )]
    async fn item(&self, id: u32) -> Result<String, CatalogError> {
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
// ANCHOR_END: guide

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = http_demo::serve_paths(vec![
        (
            "/items/7",
            vec![
                status(503, Some(("retry-after", "1"))),
                status(429, None),
                Reply::Ok("a teapot"),
            ],
        ),
        ("/items/0", vec![status(404, None)]),
    ])
    .await?;
    let catalog = Catalog {
        client: reqwest::Client::new(),
        base: server.url(""),
    };

    for id in [7, 0] {
        let started = Instant::now();
        match catalog.item(id).await {
            Ok(item) => println!("item {id}: {item:?} after {:.1?}", started.elapsed()),
            Err(error) => println!(
                "item {id}: {error} (retry safety {:?}) after {:.1?}",
                error.retry_safety(),
                started.elapsed()
            ),
        }
    }
    let stats = retry_core::Scope::lookup("catalog")
        .ok_or("the scope is created on the first call")?
        .stats();
    println!(
        "scope catalog: {} attempts, {} retries, {} throttled",
        stats.attempts, stats.retries, stats.throttles
    );
    Ok(())
}
