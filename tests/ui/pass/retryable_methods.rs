//! `#[retryable]` on inherent methods: `&self`, `&mut self`, `self: &Self`, explicit lifetimes,
//! `strategy` from a field.
#![deny(warnings, unused_qualifications)]

use retry_core::{RetryConfig, RetryInfo, RetrySafety, RetryStrategy, StandardStrategy, retryable};
use std::sync::Arc;

#[derive(Debug)]
struct StoreError;

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

struct Client {
    strategy: StandardStrategy,
    shared: Arc<dyn RetryStrategy>,
    boxed: Box<dyn RetryStrategy>,
    calls: u32,
    name: String,
}

impl Client {
    #[retryable(scope = "pass-methods")]
    pub async fn get(&self, key: &str) -> Result<String, StoreError> {
        Ok(format!("{}/{key}", self.name))
    }

    #[retryable(scope = "pass-methods")]
    async fn bump(&mut self, by: u32) -> Result<u32, StoreError> {
        self.calls += by;
        Ok(self.calls)
    }

    #[retryable(scope = "pass-methods")]
    async fn typed_receiver(self: &Self) -> Result<u32, StoreError> {
        Ok(self.calls)
    }

    #[retryable(scope = "pass-methods")]
    async fn with_lifetimes<'a, 'b>(&'a self, key: &'b str) -> Result<&'a str, StoreError>
    where
        'a: 'b,
    {
        let _ = key;
        Ok(&self.name)
    }

    #[retryable(strategy = self.strategy)]
    async fn from_field(&self) -> Result<u32, StoreError> {
        Ok(self.calls)
    }

    #[retryable(strategy = self.shared, attempt_timeout = "1s", retry_if = always)]
    async fn from_arc(&self) -> Result<u32, StoreError> {
        Ok(self.calls)
    }

    #[retryable(strategy = self.boxed)]
    async fn from_box(&self) -> Result<u32, StoreError> {
        Ok(self.calls)
    }

    /// `&mut self` with a strategy field: the handle is cloned for the call.
    #[retryable(strategy = self.strategy)]
    async fn bump_from_field(&mut self) -> Result<u32, StoreError> {
        self.calls += 1;
        Ok(self.calls)
    }

    /// `&mut self` with a temporary strategy.
    #[retryable(strategy = Arc::clone(&self.shared))]
    async fn bump_from_arc(&mut self) -> Result<u32, StoreError> {
        self.calls += 1;
        Ok(self.calls)
    }
}

impl From<tokio::time::error::Elapsed> for StoreError {
    fn from(_: tokio::time::error::Elapsed) -> Self {
        StoreError
    }
}

fn always(_: &StoreError) -> bool {
    true
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let strategy = StandardStrategy::new(RetryConfig::default());
    let mut client = Client {
        shared: Arc::new(strategy.clone()),
        boxed: Box::new(strategy.clone()),
        strategy,
        calls: 0,
        name: "client".to_owned(),
    };
    runtime.block_on(async {
        assert_eq!(client.get("k").await.ok().as_deref(), Some("client/k"));
        assert_eq!(client.bump(2).await.ok(), Some(2));
        assert_eq!(client.typed_receiver().await.ok(), Some(2));
        assert_eq!(client.with_lifetimes("k").await.ok(), Some("client"));
        assert_eq!(client.from_field().await.ok(), Some(2));
        assert_eq!(client.from_arc().await.ok(), Some(2));
        assert_eq!(client.from_box().await.ok(), Some(2));
        assert_eq!(client.bump_from_field().await.ok(), Some(3));
        assert_eq!(client.bump_from_arc().await.ok(), Some(4));
    });
}
