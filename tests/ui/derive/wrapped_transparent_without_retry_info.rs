use retry_core::RetryInfo;

#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    #[error(transparent)]
    Parse(std::num::ParseIntError),
}

fn main() {}
