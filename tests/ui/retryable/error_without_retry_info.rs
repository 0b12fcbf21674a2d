use retry_core::retryable;

#[derive(Debug)]
struct StoreError;

#[retryable(max_attempts = 3)]
async fn get() -> Result<u32, StoreError> {
    Err(StoreError)
}

fn main() {
    let _ = get();
}
