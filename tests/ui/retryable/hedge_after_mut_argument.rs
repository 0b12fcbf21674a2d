use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// Two copies in flight cannot both borrow `buffer` mutably.
#[retryable(hedge_after = "50ms")]
async fn get(buffer: &mut Vec<u8>) -> Result<u32, StoreError> {
    buffer.push(1);
    Ok(1)
}

fn main() {
    let mut buffer = Vec::new();
    let _ = get(&mut buffer);
}
