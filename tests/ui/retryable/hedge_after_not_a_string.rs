use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// A number without a unit: milliseconds or a percentile?
#[retryable(hedge_after = 50)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
