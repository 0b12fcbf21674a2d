use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

#[retryable(max_attempts = 3)]
const fn answer() -> Result<u32, StoreError> {
    Ok(42)
}

fn main() {
    let _ = answer();
}
