use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
#[retry(crate = "retry core")]
enum StoreError {
    #[retry(transient)]
    Unavailable,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
