use retry_core::retryable;

#[derive(Debug)]
struct StoreError;

fn is_retryable(status: u16) -> bool {
    status >= 500
}

#[retryable(retry_if = is_retryable)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
