use retry_core::RetryInfo;

/// Returns a `bool`, which says nothing of retryability.
fn describe(status: &u16) -> bool {
    *status == 503
}

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(with = describe)]
    Http(u16),
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
