use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

#[retryable(idempotent = "PUT")]
async fn put() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = put();
}
