use retry_core::classify::RetryDescription;
use retry_core::RetryInfo;
use std::time::Duration;

fn describe(_: &u16) -> RetryDescription {
    RetryDescription::TRANSIENT
}

#[derive(Debug, RetryInfo)]
enum StoreError {
    Http {
        #[retry(with = describe)]
        status: u16,
        #[retry(after)]
        retry_after: Duration,
    },
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
