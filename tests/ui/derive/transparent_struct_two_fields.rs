use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
#[retry(transparent)]
struct Wrapper {
    source: std::io::Error,
    context: String,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<Wrapper>();
}
