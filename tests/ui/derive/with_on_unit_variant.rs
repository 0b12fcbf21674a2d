use retry_core::{RetryDescription, RetryInfo};

fn describe(_: &u16) -> RetryDescription {
    RetryDescription::TRANSIENT
}

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(with = describe)]
    Unavailable,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
