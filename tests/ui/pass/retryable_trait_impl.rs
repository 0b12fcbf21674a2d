//! `#[retryable]` on methods of trait impls (native `async fn` in traits), including a trait
//! that requires `Send` futures, and on a trait's default method.
#![deny(warnings, unused_qualifications)]

use retry_core::{RetryInfo, RetrySafety, retryable};
use std::future::Future;
use std::sync::Arc;

#[derive(Debug)]
pub struct StoreError;

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

#[allow(async_fn_in_trait)]
pub trait Store {
    async fn get(&self, key: &str) -> Result<String, StoreError>;

    async fn put(&mut self, key: &str, value: String) -> Result<(), StoreError>;

    #[retryable(scope = "pass-trait-default")]
    async fn get_twice(&self, key: &str) -> Result<String, StoreError> {
        Ok(format!("{}{}", self.get(key).await?, self.get(key).await?))
    }
}

/// A trait whose futures must be `Send`, implemented with `async fn`.
pub trait SendStore: Send + Sync + 'static {
    fn fetch(&self, key: String) -> impl Future<Output = Result<String, StoreError>> + Send;
}

struct Memory {
    value: String,
}

impl Store for Memory {
    #[retryable(scope = "pass-trait")]
    async fn get(&self, key: &str) -> Result<String, StoreError> {
        Ok(format!("{key}={}", self.value))
    }

    #[retryable(scope = "pass-trait")]
    async fn put(&mut self, key: &str, value: String) -> Result<(), StoreError> {
        self.value = format!("{key}:{value}");
        Ok(())
    }
}

impl SendStore for Memory {
    #[retryable(scope = "pass-trait-send")]
    async fn fetch(&self, key: String) -> Result<String, StoreError> {
        tokio::task::yield_now().await;
        Ok(key + &self.value)
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut memory = Memory {
            value: "v".to_owned(),
        };
        memory.put("k", "w".to_owned()).await.ok();
        assert_eq!(memory.get("k").await.ok().as_deref(), Some("k=k:w"));
        assert_eq!(
            memory.get_twice("a").await.ok().as_deref(),
            Some("a=k:wa=k:w")
        );

        let memory = Arc::new(memory);
        let task = tokio::spawn(async move { memory.fetch("x".to_owned()).await });
        assert_eq!(
            task.await.ok().and_then(Result::ok).as_deref(),
            Some("xk:w")
        );
    });
}
