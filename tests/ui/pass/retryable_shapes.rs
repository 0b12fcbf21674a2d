//! The shapes `#[retryable]` accepts besides `async fn(&self)`, without a warning: methods of
//! `#[async_trait]` impls, smart-pointer receivers, `Result` aliases, blocking functions, and
//! type-erased errors with `DynErrorClassifier`.
#![deny(warnings, unused_qualifications)]

use async_trait::async_trait;
use retry_core::classify::DynErrorClassifier;
use retry_core::{RetryInfo, RetrySafety, retryable};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Debug)]
pub struct StoreError;

impl RetryInfo for StoreError {
    fn retry_safety(&self) -> RetrySafety {
        RetrySafety::Yes
    }
}

pub type Fallible<T> = Result<T, StoreError>;

#[async_trait]
pub trait Store {
    async fn get(&self, key: &str, copies: usize) -> Fallible<String>;
    async fn put(&mut self, key: &str, value: String) -> Fallible<()>;
    async fn shared(self: Arc<Self>, key: String) -> Fallible<String>;
    async fn pinned(self: Pin<&mut Self>) -> Fallible<u32>;
}

pub struct Memory {
    value: String,
    count: u32,
}

#[async_trait]
impl Store for Memory {
    #[retryable(scope = "pass-shapes-get")]
    async fn get(&self, key: &str, copies: usize) -> Fallible<String> {
        Ok(format!("{key}{}", self.value.repeat(copies)))
    }

    #[retryable(scope = "pass-shapes-put", max_attempts = 2)]
    async fn put(&mut self, key: &str, value: String) -> Fallible<()> {
        self.value = format!("{key}{value}");
        Ok(())
    }

    #[retryable(scope = "pass-shapes-shared")]
    async fn shared(self: Arc<Self>, key: String) -> Fallible<String> {
        Ok(format!("{key}{}", self.value))
    }

    #[retryable(scope = "pass-shapes-pinned")]
    async fn pinned(self: Pin<&mut Self>) -> Fallible<u32> {
        let this = self.get_mut();
        this.count += 1;
        Ok(this.count)
    }
}

impl Memory {
    #[retryable(scope = "pass-shapes-rc")]
    pub async fn by_rc(self: Rc<Self>) -> Fallible<u32> {
        Ok(self.count)
    }

    #[retryable(scope = "pass-shapes-pin")]
    pub async fn by_pin(self: Pin<&mut Self>) -> Fallible<u32> {
        Ok(self.count)
    }

    #[retryable(scope = "pass-shapes-blocking")]
    pub fn blocking(&mut self, by: u32) -> Fallible<u32> {
        self.count += by;
        Ok(self.count)
    }

    #[retryable(scope = "pass-shapes-blocking-arc")]
    pub fn blocking_arc(self: Arc<Self>) -> Fallible<usize> {
        Ok(self.value.len())
    }
}

#[retryable(scope = "pass-shapes-anyhow", classifier = DynErrorClassifier)]
pub async fn with_anyhow() -> anyhow::Result<u32> {
    Ok(1)
}

#[retryable(scope = "pass-shapes-box", classifier = DynErrorClassifier)]
pub fn with_box() -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    Ok(1)
}

fn main() {
    let mut memory = Memory {
        value: String::new(),
        count: 0,
    };
    let _ = memory.blocking(1);
    let _ = with_box();
    let _ = with_anyhow();
    let _ = Rc::new(Memory {
        value: String::new(),
        count: 0,
    })
    .by_rc();
    let _ = Pin::new(&mut memory).by_pin();
    let _ = Arc::new(memory).blocking_arc();
}
