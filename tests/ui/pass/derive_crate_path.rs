//! `#[retry(crate = "...")]`: the generated code names `retry_core` through another path.
#![deny(warnings, unused_qualifications)]

mod facade {
    pub use retry_core as retry;
}

use facade::retry::RetryInfo;

#[derive(Debug, RetryInfo)]
#[retry(crate = "facade::retry")]
enum StoreError {
    #[retry(throttling)]
    SlowDown,
    #[retry(fault = "client")]
    NotFound,
}

#[derive(Debug, RetryInfo)]
#[retry(crate = "::retry_core", transparent)]
struct Wrapper(std::io::Error);

fn main() {
    assert!(StoreError::SlowDown.is_throttling());
    assert!(!StoreError::NotFound.is_throttling());
    assert!(!Wrapper(std::io::ErrorKind::NotFound.into()).is_timeout());
}
