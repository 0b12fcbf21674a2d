use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(timeout(5))]
    TimedOut,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
