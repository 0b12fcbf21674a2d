use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

#[retryable(
    initial_backoff = "2",
    max_backoff = "5 minutes",
    attempt_timeout = "-1s"
)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
