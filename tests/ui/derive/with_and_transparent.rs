use retry_core::classify::RetryDescription;
use retry_core::RetryInfo;

fn describe(_: &std::io::Error) -> RetryDescription {
    RetryDescription::TRANSIENT
}

#[derive(Debug, RetryInfo)]
enum StoreError {
    #[retry(transparent, with = describe)]
    Io(std::io::Error),
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<StoreError>();
}
