//! One-expression bodies on one line, under `#![deny(warnings)]`: the expansion raises no lint
//! in the user's code (`unused_braces` once advised `async {  Ok(1) }`-like rewrites that are
//! not valid Rust).
#![deny(warnings)]

use retry_core::{RetryInfo, RetrySafety, retryable};

#[derive(Debug)]
pub struct StoreError;

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

#[retryable]
async fn async_literal() -> Result<u32, StoreError> { Ok(1) }

#[retryable]
async fn async_argument(value: u32) -> Result<u32, StoreError> { Ok(value) }

#[retryable]
fn blocking_literal() -> Result<u32, StoreError> { Ok(2) }

#[retryable(max_attempts = 2)]
fn blocking_argument(value: &u32) -> Result<u32, StoreError> { Ok(*value) }

struct Store {
    value: u32,
}

impl Store {
    #[retryable]
    async fn get(&self) -> Result<u32, StoreError> { Ok(self.value) }

    #[retryable]
    async fn bump(&mut self) -> Result<u32, StoreError> { Ok({ self.value += 1; self.value }) }

    #[retryable]
    fn get_blocking(&self) -> Result<u32, StoreError> { Ok(self.value) }
}

#[async_trait::async_trait]
trait Fetch {
    async fn fetch(&self) -> Result<u32, StoreError>;
}

#[async_trait::async_trait]
impl Fetch for Store {
    #[retryable]
    async fn fetch(&self) -> Result<u32, StoreError> { Ok(self.value) }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let mut store = Store { value: 3 };
    runtime.block_on(async {
        assert_eq!(async_literal().await.ok(), Some(1));
        assert_eq!(async_argument(5).await.ok(), Some(5));
        assert_eq!(store.get().await.ok(), Some(3));
        assert_eq!(store.bump().await.ok(), Some(4));
        assert_eq!(store.fetch().await.ok(), Some(4));
    });
    assert_eq!(blocking_literal().ok(), Some(2));
    assert_eq!(blocking_argument(&6).ok(), Some(6));
    assert_eq!(store.get_blocking().ok(), Some(4));
}
