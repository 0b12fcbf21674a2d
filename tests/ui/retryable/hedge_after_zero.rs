use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// A delay of zero would send every copy at once.
#[retryable(hedge_after = "0ms")]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
