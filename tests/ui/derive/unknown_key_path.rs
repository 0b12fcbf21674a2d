use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(retry_core::transient)]
    Unavailable,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
