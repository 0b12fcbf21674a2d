use retry_core::RetryInfo;

#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    #[error("{input} is not a number")]
    Parse {
        input: String,
        #[source]
        cause: std::num::ParseIntError,
    },
}

fn main() {}
