//! The future of a `#[retryable]` function is `Send` when its body's is, for every argument
//! kind, and a function returning a `Result` alias works.
#![deny(warnings, unused_qualifications)]

use retry_core::{RetryEvent, RetryInfo, RetrySafety, retryable};
use std::future::Future;
use std::sync::Arc;

#[derive(Debug)]
struct StoreError;

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

type StoreResult<T> = Result<T, StoreError>;

fn hook(_: &RetryEvent<'_, StoreError>) {}

struct Client {
    shared: Arc<retry_core::StandardStrategy>,
}

impl Client {
    #[retryable(strategy = self.shared, on_retry = hook)]
    async fn get(&self, key: &str, body: Vec<u8>) -> StoreResult<usize> {
        tokio::task::yield_now().await;
        Ok(key.len() + body.len())
    }
}

#[retryable(mode = "adaptive", attempt_timeout = "1s", on_retry = hook)]
async fn put(key: String, data: &mut Vec<u8>) -> StoreResult<usize> {
    tokio::task::yield_now().await;
    data.extend(key.bytes());
    Ok(data.len())
}

impl From<tokio::time::error::Elapsed> for StoreError {
    fn from(_: tokio::time::error::Elapsed) -> Self {
        StoreError
    }
}

fn assert_send<F: Future + Send>(future: F) -> F {
    future
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let client = Client {
        shared: Arc::new(retry_core::StandardStrategy::new(
            retry_core::RetryConfig::default(),
        )),
    };
    runtime.block_on(async {
        assert_eq!(assert_send(client.get("k", vec![1])).await.ok(), Some(2));
        let mut data = Vec::new();
        assert_eq!(
            assert_send(put("ab".to_owned(), &mut data)).await.ok(),
            Some(2)
        );
        let task = tokio::spawn(async move { client.get("key", Vec::new()).await });
        assert_eq!(task.await.ok().and_then(Result::ok), Some(3));
    });
}
