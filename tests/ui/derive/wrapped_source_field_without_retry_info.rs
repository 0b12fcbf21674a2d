use retry_core::RetryInfo;

#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    #[error("not a number")]
    Parse { source: std::num::ParseIntError },
}

fn main() {}
