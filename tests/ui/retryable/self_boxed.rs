use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

struct Client;

impl Client {
    #[retryable]
    async fn get(self: Box<Self>) -> Result<u32, StoreError> {
        Ok(1)
    }
}

fn main() {
    let _ = Box::new(Client).get();
}
