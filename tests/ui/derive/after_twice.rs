use retry_core::RetryInfo;
use std::time::Duration;

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(throttling)]
    SlowDown {
        #[retry(after)]
        retry_after: Duration,
        #[retry(after)]
        backoff_hint: Option<Duration>,
    },
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
