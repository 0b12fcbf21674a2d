//! One call to the throttling server through the library: a `GET` retried by adaptive mode
//! under the scope's quota and limiter, shed before its first attempt when its send permit is
//! not expected within `max_wait`.

use tokio::time::Instant;

use reqwest::StatusCode;
use retry_core::http::{CheckStatus, HttpStatusError};
use retry_core::strategy::ConfiguredStrategy;
use retry_core::{LoadShed, Retry, RetryInfo};

use super::tally::{Outcome, Tally};

/// What a call fails with.
#[derive(Debug, thiserror::Error, RetryInfo)]
pub enum CallError {
    /// reqwest's own errors (a refused connection is retried).
    #[error(transparent)]
    #[retry(transparent)]
    Http(#[from] reqwest::Error),
    /// An error status: the server's 429 with its `Retry-After` (throttling, retried).
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] HttpStatusError),
    /// Shed locally: the limiter's permit was not expected within `max_wait`.
    #[error(transparent)]
    #[retry(never)]
    Shed(#[from] LoadShed),
}

/// Makes one call and counts its attempts, its throttles and how it ended in `tally`.
pub async fn call(
    strategy: &ConfiguredStrategy,
    client: &reqwest::Client,
    url: &str,
    tally: &Tally,
) {
    let started = Instant::now();
    let result = Retry::new(strategy)
        .shed_load()
        .run(|| attempt(client, url, tally))
        .await;
    let outcome = match result {
        Ok(()) => Outcome::Success,
        Err(CallError::Shed(_)) => Outcome::Shed,
        Err(_) => Outcome::Failure,
    };
    tally.ended(outcome, started.elapsed());
}

/// One attempt: the status checked, the body read.
async fn attempt(client: &reqwest::Client, url: &str, tally: &Tally) -> Result<(), CallError> {
    tally.attempt();
    let response = client.get(url).send().await?;
    if response.status() == StatusCode::TOO_MANY_REQUESTS {
        tally.throttled();
    }
    response.check_status()?.bytes().await?;
    Ok(())
}
