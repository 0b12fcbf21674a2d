use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

#[retryable]
async fn send(name: impl AsRef<str>) -> Result<usize, StoreError> {
    Ok(name.as_ref().len())
}

fn main() {
    let _ = send("k");
}
