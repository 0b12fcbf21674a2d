use retry_core::{StandardStrategy, retryable};

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

struct Client {
    strategy: StandardStrategy,
}

impl Client {
    #[retryable(strategy = self.strategy, long_polling = true)]
    async fn get(&self) -> Result<u32, StoreError> {
        Ok(1)
    }
}

fn main() {
    let _ = Client::get;
}
