use retry_core::classify::RetryDescription;
use retry_core::RetryInfo;

/// Takes the field by value: not a `fn(&u16) -> _`.
fn describe(_: u16) -> RetryDescription {
    RetryDescription::TRANSIENT
}

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(with = describe)]
    Http(u16),
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
