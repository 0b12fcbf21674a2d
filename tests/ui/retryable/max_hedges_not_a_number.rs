use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// A count, unquoted.
#[retryable(hedge_after = "p95", max_hedges = "2")]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
