use retry_core::{LoadShed, retryable};

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}
impl From<LoadShed> for StoreError {
    fn from(_: LoadShed) -> Self {
        StoreError
    }
}

#[retryable(timeout = "2s", shed = true)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
