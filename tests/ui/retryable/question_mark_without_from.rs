use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

#[retryable]
async fn get(text: &str) -> Result<u32, StoreError> {
    let value = text.parse::<u32>()?;
    Ok(value)
}

fn main() {
    let _ = get("1");
}
