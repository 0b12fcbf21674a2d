//! `#[retryable(crate = "...")]`: the generated code names `retry_core` through another path.
#![deny(warnings, unused_qualifications)]

mod facade {
    pub use retry_core as retry;
}

use facade::retry::{RetryInfo, retryable};

#[derive(Debug)]
struct StoreError;

impl RetryInfo for StoreError {}

#[retryable(crate = "facade::retry", max_attempts = 2)]
async fn through_facade() -> Result<u32, StoreError> {
    Ok(1)
}

#[retryable(crate = "crate::facade::retry", mode = "adaptive")]
async fn through_crate_path() -> Result<u32, StoreError> {
    Ok(2)
}

#[retryable(crate = "::retry_core", jitter = "none")]
async fn absolute() -> Result<u32, StoreError> {
    Ok(3)
}

mod nested {
    use super::StoreError;

    #[super::retryable(crate = "super::facade::retry")]
    pub async fn relative() -> Result<u32, StoreError> {
        Ok(4)
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        assert_eq!(through_facade().await.ok(), Some(1));
        assert_eq!(through_crate_path().await.ok(), Some(2));
        assert_eq!(absolute().await.ok(), Some(3));
        assert_eq!(nested::relative().await.ok(), Some(4));
    });
}
