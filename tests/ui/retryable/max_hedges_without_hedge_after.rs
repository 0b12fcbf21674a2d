use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// Without a delay no hedge is sent: the value would be accepted and ignored.
#[retryable(max_hedges = 2)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
