use retry_core::retryable;

#[retryable]
async fn get() -> u32 {
    1
}

fn main() {
    let _ = get();
}
