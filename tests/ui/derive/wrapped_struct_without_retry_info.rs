use retry_core::RetryInfo;

#[derive(Debug, thiserror::Error, RetryInfo)]
#[error("the request failed")]
struct RequestFailed {
    #[source]
    cause: std::num::ParseIntError,
}

fn main() {}
