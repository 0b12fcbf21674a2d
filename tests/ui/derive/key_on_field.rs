use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
enum StoreError {
    SlowDown {
        #[retry(throttling)]
        code: u16,
    },
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
