use retry_core::classify::RetryDescription;
use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(with = |_: &u16| RetryDescription::TRANSIENT)]
    Http(u16),
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
    let _ = RetryDescription::TRANSIENT;
}
