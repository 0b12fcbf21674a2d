use retry_core::retryable;

/// Named like a `Result`, but is not one.
type StoreResult = Option<u32>;

#[retryable]
fn get() -> StoreResult {
    Some(1)
}

fn main() {
    let _ = get();
}
