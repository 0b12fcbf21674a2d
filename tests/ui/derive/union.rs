use retry_core::RetryInfo;

#[derive(RetryInfo)]
union Bits {
    int: u32,
    float: f32,
}

fn assert_retry_info<T: RetryInfo>() {}

fn main() {
    assert_retry_info::<Bits>();
}
