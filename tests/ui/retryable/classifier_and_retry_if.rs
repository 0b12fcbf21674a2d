use retry_core::retryable;

fn is_retryable(_: &std::io::Error) -> bool {
    true
}

#[retryable(classifier = retry_core::classify::TransientErrorClassifier, retry_if = is_retryable)]
async fn get() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {
    let _ = get();
}
