use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(throttling)]
    SlowDown {
        #[retry(after)]
        retry_after_secs: u64,
    },
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
