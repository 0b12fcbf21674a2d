use retry_core::retryable;

#[retryable(retry_if = |error: &std::io::Error| error.kind() == std::io::ErrorKind::Other)]
async fn get() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {
    let _ = get();
}
