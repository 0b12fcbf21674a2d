use retry_core::{RetryEvent, retryable};

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

fn log(_: &RetryEvent<'_, StoreError>) {}
fn count(_: &RetryEvent<'_, StoreError>) {}

#[retryable(on_retry = log, on_retry = count)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
