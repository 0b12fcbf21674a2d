use retry_core::retryable;
use std::future::Future;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

#[retryable]
fn get() -> impl Future<Output = Result<u32, StoreError>> {
    async { Ok(1) }
}

fn main() {
    let _ = get();
}
