use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

trait Store {
    #[retryable]
    async fn get(&self) -> Result<u32, StoreError>;
}

fn main() {}
