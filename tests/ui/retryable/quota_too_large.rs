use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// One past `u32::MAX`.
#[retryable(quota = 4294967296)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

// Forty digits: too large whatever integer type would hold it.
#[retryable(quota = 1000000000000000000000000000000000000000)]
async fn put() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = (get(), put());
}
