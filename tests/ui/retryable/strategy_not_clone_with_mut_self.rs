use retry_core::{RetryStrategy, retryable};

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

struct Client {
    strategy: Box<dyn RetryStrategy>,
    calls: u32,
}

impl Client {
    #[retryable(strategy = self.strategy)]
    async fn get(&mut self) -> Result<u32, StoreError> {
        self.calls += 1;
        Ok(self.calls)
    }
}

fn main() {
    let _ = Client::get;
}
