//! `#[retryable]` on free functions, with every argument (one function per combination).
#![deny(warnings, unused_qualifications)]

use retry_core::{RetryEvent, RetryInfo, RetrySafety, retryable};
use retry_core::classify::TransientErrorClassifier;
use std::io;
use std::time::Duration;

#[derive(Debug)]
pub struct StoreError;

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

impl From<tokio::time::error::Elapsed> for StoreError {
    fn from(_: tokio::time::error::Elapsed) -> Self {
        StoreError
    }
}

fn log_retry(event: &RetryEvent<'_, StoreError>) {
    let _ = (event.attempt(), event.error(), event.delay());
}

fn is_transient(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::ConnectionReset
}

/// Documented, public, with every tuning argument.
#[retryable(
    max_attempts = 5,
    mode = " Adaptive ",
    initial_backoff = "100ms",
    max_backoff = "1.5s",
    jitter = "decorrelated",
    timeout = "1m",
    attempt_timeout = "2s",
    scope = "pass-free-fn",
    on_retry = log_retry,
    crate = "::retry_core"
)]
#[inline]
pub async fn get(key: &str) -> Result<usize, StoreError> {
    #![allow(clippy::needless_return)]
    if key.is_empty() {
        return Err(StoreError);
    }
    Ok(key.len())
}

/// No arguments at all: the defaults, the function's own scope.
#[retryable]
async fn defaults() -> Result<(), StoreError> {
    Ok(())
}

/// A preset, and a `max_backoff` below its throttling backoff base (1 s).
#[retryable(preset = "aws-2026", max_backoff = "200ms", initial_backoff = "10ms")]
async fn short_backoff() -> Result<(), StoreError> {
    Ok(())
}

/// Inner attributes apply to the body (`deny(warnings)` above would reject the unused variable
/// otherwise).
#[retryable]
async fn inner_attributes() -> Result<(), StoreError> {
    #![allow(unused_variables)]
    let unused = 1;
    Ok(())
}

/// `?` converts into the declared error type although the success type is an `impl Trait`.
#[retryable]
async fn opaque(text: &str) -> Result<impl std::fmt::Display, StoreError> {
    let value = text.parse::<u32>()?;
    Ok(value)
}

impl From<std::num::ParseIntError> for StoreError {
    fn from(_: std::num::ParseIntError) -> Self {
        StoreError
    }
}

/// `retry_if` with an error type that is not `RetryInfo`-specific.
#[retryable(retry_if = is_transient, max_attempts = 2)]
async fn read(buf: &mut Vec<u8>) -> io::Result<usize> {
    buf.push(1);
    Ok(buf.len())
}

/// `classifier = expr`.
#[retryable(classifier = TransientErrorClassifier)]
async fn write(data: &[u8]) -> Result<usize, io::Error> {
    Ok(data.len())
}

/// `?` inside the body.
#[retryable]
async fn parse(text: &str) -> Result<u32, StoreError> {
    let value = text.parse::<u32>().map_err(|_| StoreError)?;
    Ok(value)
}

/// A raw identifier as the function's name.
#[retryable]
async fn r#match() -> Result<(), StoreError> {
    Ok(())
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        assert_eq!(get("key").await.ok(), Some(3));
        assert!(defaults().await.is_ok());
        assert!(short_backoff().await.is_ok());
        let mut buf = Vec::new();
        assert_eq!(read(&mut buf).await.ok(), Some(1));
        assert_eq!(write(b"abc").await.ok(), Some(3));
        assert_eq!(parse("42").await.ok(), Some(42));
        assert!(inner_attributes().await.is_ok());
        assert_eq!(opaque("7").await.ok().map(|n| n.to_string()), Some("7".to_owned()));
        assert!(r#match().await.is_ok());
    });
    let _ = Duration::ZERO;
}
