use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

struct Request {
    body: Vec<u8>,
}

#[retryable]
async fn send(key: &str, request: Request) -> Result<usize, StoreError> {
    Ok(key.len() + request.body.len())
}

fn main() {
    let _ = send("k", Request { body: Vec::new() });
}
