use retry_core::retryable;

#[derive(Debug)]
struct StoreError;

struct NotAClassifier;

#[retryable(classifier = NotAClassifier)]
async fn get() -> Result<u32, StoreError> {
    Ok(1)
}

fn main() {
    let _ = get();
}
