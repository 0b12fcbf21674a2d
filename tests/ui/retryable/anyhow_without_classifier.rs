use retry_core::retryable;

#[retryable(max_attempts = 3)]
async fn get() -> anyhow::Result<u32> {
    Ok(1)
}

fn main() {
    let _ = get();
}
