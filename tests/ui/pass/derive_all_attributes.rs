//! Every attribute of `#[derive(RetryInfo)]`, side by side with `thiserror::Error`.
#![deny(warnings, unused_qualifications)]

use retry_core::{Fault, RetryInfo, RetrySafety};
use std::time::Duration;

#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    #[error("slow down")]
    #[retry(throttling)]
    Throttled {
        #[retry(after)]
        retry_after: Option<Duration>,
    },
    #[error("busy, retry in {0:?}")]
    #[retry(throttling, fault = "client")]
    Busy(#[retry(after)] Duration),
    #[error("unavailable")]
    #[retry(transient)]
    Unavailable,
    #[error("timed out")]
    #[retry(timeout)]
    TimedOut,
    #[error("conflict")]
    #[retry(retryable)]
    Conflict,
    #[error("corrupt")]
    #[retry(never)]
    Corrupt,
    #[error("not found")]
    #[retry(fault = "client")]
    NotFound,
    #[error("internal")]
    #[retry(fault = "server")]
    Internal,
    #[error("unknown")]
    Unknown,
    #[error(transparent)]
    #[retry(transparent)]
    Io(#[from] std::io::Error),
}

fn main() {
    let errors = [
        StoreError::Throttled { retry_after: None },
        StoreError::Busy(Duration::from_secs(1)),
        StoreError::Unavailable,
        StoreError::TimedOut,
        StoreError::Conflict,
        StoreError::Corrupt,
        StoreError::NotFound,
        StoreError::Internal,
        StoreError::Unknown,
        StoreError::Io(std::io::ErrorKind::ConnectionReset.into()),
    ];
    for error in &errors {
        let _: RetrySafety = error.retry_safety();
        let _: bool = error.is_throttling();
        let _: bool = error.is_timeout();
        let _: Option<Duration> = error.retry_after();
        let _: Fault = error.fault();
        let _ = error.to_string();
    }
}
