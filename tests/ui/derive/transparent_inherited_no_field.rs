use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
#[retry(transparent)]
enum StoreError {
    Io(std::io::Error),
    Closed,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
