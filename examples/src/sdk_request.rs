//! The AWS SDKs' `amz-sdk-request` header on a reqwest request: each attempt of a `#[retryable]`
//! call tells the server which attempt it is and the most the call may make (`attempt=2; max=3`),
//! read from the attempt context ([`retry_core::attempt::current`]).

use retry_core::http::{CheckStatus, HttpStatusError};
use retry_core::{RetryInfo, attempt, retryable};

/// The header the AWS SDKs send with every attempt.
pub const AMZ_SDK_REQUEST: &str = "amz-sdk-request";

/// What a fetch fails with: reqwest's errors and error statuses, each knowing whether a retry
/// can help.
#[derive(Debug, thiserror::Error, RetryInfo)]
pub enum FetchError {
    /// reqwest's own errors (a refused connection, a timeout, ...).
    #[error(transparent)]
    #[retry(transparent)]
    Http(#[from] reqwest::Error),
    /// An error status: 5xx, 408 and 429 are retried.
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] HttpStatusError),
}

/// GETs `url`, at most 3 attempts, each sent with its `amz-sdk-request` header.
///
/// ```no_run
/// # async fn demo() -> Result<(), examples::sdk_request::FetchError> {
/// let body = examples::sdk_request::fetch(&reqwest::Client::new(), "http://127.0.0.1:8080/").await?;
/// # let _ = body; Ok(())
/// # }
/// ```
#[retryable(max_attempts = 3, initial_backoff = "50ms", scope = "sdk-request-demo")]
pub async fn fetch(client: &reqwest::Client, url: &str) -> Result<String, FetchError> {
    let mut request = client.get(url);
    // Inside the body of a `#[retryable]` fn, the attempt is always known.
    if let Some(attempt) = attempt::current() {
        request = request.header(AMZ_SDK_REQUEST, attempt.amz_sdk_request());
    }
    Ok(request.send().await?.check_status()?.text().await?)
}
