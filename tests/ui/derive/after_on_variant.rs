use retry_core::RetryInfo;
use std::time::Duration;

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(throttling, after)]
    SlowDown { retry_after: Duration },
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
