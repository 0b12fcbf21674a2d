use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(throttle)]
    SlowDown,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
