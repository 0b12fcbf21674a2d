use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// Standard mode never waits for a send permit: the bound would be accepted and ignored.
#[retryable(max_attempts = 5, max_wait = "500ms")]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
