use retry_core::classify::RetryDescription;
use retry_core::RetryInfo;

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
