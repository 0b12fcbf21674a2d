use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// gRPC's hedging policy sends at most 5 copies.
#[retryable(hedge_after = "p95", max_hedges = 9)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
