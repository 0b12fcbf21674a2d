use retry_core::RetryInfo;

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(transparent)]
    Parse(std::num::ParseIntError),
}

fn main() {}
