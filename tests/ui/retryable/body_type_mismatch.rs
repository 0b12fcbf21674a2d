use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

#[retryable]
async fn get(key: &str) -> Result<u32, StoreError> {
    if key.is_empty() {
        return Ok("empty");
    }
    Ok(key.len())
}

fn main() {
    let _ = get("k");
}
