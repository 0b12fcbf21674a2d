use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// A hedge sends the request again: not for a call declared not idempotent.
#[retryable(idempotent = false, hedge_after = "50ms")]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
