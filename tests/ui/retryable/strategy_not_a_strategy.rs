use retry_core::{RetryConfig, retryable};

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

struct Client {
    config: RetryConfig,
}

impl Client {
    #[retryable(strategy = self.config)]
    async fn get(&self) -> Result<u32, StoreError> {
        Ok(1)
    }
}

fn main() {
    let _ = Client::get;
}
