//! One call to the throttling server through the library: a `GET` retried by adaptive mode
//! under the scope's quota and limiter, shed before its first attempt when its send permit is
//! not expected within `max_wait`; in a `split` phase each attempt also waits for its turn at
//! the process's [`SplitGate`], and one whose turn is more than `max_wait` away is not sent.
//! With a deadline, the caller gives up on a call not over by then.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use reqwest::StatusCode;
use retry_core::http::{CheckStatus, HttpStatusError};
use retry_core::strategy::ConfiguredStrategy;
use retry_core::{LoadShed, Retry, RetryInfo};

use super::split_gate::SplitGate;
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
    /// Not sent: the static split's turn was more than `max_wait` away.
    #[error("the static split's next turn is more than the longest wait away")]
    #[retry(never)]
    Gated,
}

/// The static split's gate of a `split` phase, and how long an attempt may wait at it.
#[derive(Debug, Clone, Copy)]
pub struct Gate<'a> {
    /// The process's share of the limit.
    pub gate: &'a SplitGate,
    /// The longest wait for a turn.
    pub max_wait: Duration,
}

/// Makes one call and counts its attempts, its throttles and how it ended in `tally`; a call
/// not over by `deadline` (from its start) is given up, a failure.
pub async fn call(
    strategy: &ConfiguredStrategy,
    client: &reqwest::Client,
    url: &str,
    tally: &Tally,
    gate: Option<Gate<'_>>,
    deadline: Option<Duration>,
) {
    let started = Instant::now();
    let sent_one = AtomicBool::new(false);
    let sent_one = &sent_one;
    let outcome = match deadline {
        None => run(strategy, client, url, tally, gate, sent_one).await,
        Some(deadline) => {
            tokio::time::timeout(deadline, run(strategy, client, url, tally, gate, sent_one))
                .await
                .unwrap_or(Outcome::Failure)
        }
    };
    tally.ended(outcome, started.elapsed());
}

/// The call itself, and how it ended.
async fn run(
    strategy: &ConfiguredStrategy,
    client: &reqwest::Client,
    url: &str,
    tally: &Tally,
    gate: Option<Gate<'_>>,
    sent_one: &AtomicBool,
) -> Outcome {
    let result = Retry::new(strategy)
        .shed_load()
        .run(|| async move {
            if let Some(Gate { gate, max_wait }) = gate {
                let wait = gate
                    .turn(Instant::now(), max_wait)
                    .ok_or(CallError::Gated)?;
                tokio::time::sleep(wait).await;
            }
            sent_one.store(true, Ordering::Relaxed);
            attempt(client, url, tally).await
        })
        .await;
    match result {
        Ok(()) => Outcome::Success,
        Err(CallError::Shed(_)) => Outcome::Shed,
        // A first attempt not sent at the gate is a shed call; a retry not sent fails it.
        Err(CallError::Gated) if !sent_one.load(Ordering::Relaxed) => Outcome::Shed,
        Err(_) => Outcome::Failure,
    }
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
