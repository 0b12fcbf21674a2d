//! Enum-level keys are defaults for the variants; a variant's keys replace them per category.
#![deny(warnings, unused_qualifications)]

use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
#[retry(transient, fault = "server")]
enum BackendError {
    Reset,
    Refused,
    #[retry(never)]
    Corrupt,
    #[retry(fault = "client")]
    Rejected,
    #[retry(transparent)]
    Io(std::io::Error),
}

#[derive(Debug, RetryInfo)]
#[retry(transparent)]
enum Wrapper {
    Io(std::io::Error),
    Other(Box<BackendError>),
    #[retry(never)]
    Closed,
}

#[derive(Debug, RetryInfo)]
#[retry(never)]
enum Empty {}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<BackendError>();
    assert_retry_info::<Wrapper>();
    assert_retry_info::<Empty>();
}
