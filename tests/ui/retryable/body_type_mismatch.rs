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

/// With an `impl Trait` in the return type, the rest of it is still fixed.
#[retryable]
async fn bytes(key: &str) -> Result<impl Iterator<Item = u8>, StoreError> {
    if key.is_empty() {
        return Err(std::fmt::Error);
    }
    Ok(key.bytes())
}

fn main() {
    let _ = get("k");
    let _ = bytes("k");
}
