use retry_core::retryable;

// No `Debug`: a call that gives up logs its last error with it.
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

#[retryable(max_attempts = 3)]
async fn get() -> Result<u32, StoreError> {
    Err(StoreError)
}

fn main() {
    let _ = get();
}
