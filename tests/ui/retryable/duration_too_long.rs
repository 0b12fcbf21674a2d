use retry_core::retryable;

#[derive(Debug)]
struct StoreError;
impl retry_core::RetryInfo for StoreError {}

// Each digit count past the limit, and a fraction that used to overflow the whole part
// (issue 9.1: a panic of the macro, or a tiny wrong timeout in the user's binary).
#[retryable(
    timeout = "340282366920938463463374607431.9s",
    initial_backoff = "99999999999999999999999999999999999999999ms",
    max_backoff = "8761h"
)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
