//! tonic: a `#[retryable]` method over a tonic client. `tonic::Status` describes its
//! retryability after gRFC A6 (UNAVAILABLE retried, RESOURCE_EXHAUSTED as throttling,
//! NOT_FOUND never), and the server's `grpc-retry-pushback-ms` is the least delay before the
//! retry. The service is the hand-written `Kv` of `examples::grpc_demo` (no `protoc` needed).
//!
//! Run it with `cargo run -p examples --example tonic_client` (under a second).

use std::time::Instant;

use examples::grpc_demo::{self, GetRequest, Reply};
use tonic::Code;

use examples::grpc_demo::KvClient;
use retry_core::{RetryInfo, retryable};
use tonic::transport::Channel;

/// What a read from the store fails with.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    /// The call's gRPC status: UNAVAILABLE, RESOURCE_EXHAUSTED and DEADLINE_EXCEEDED are retried.
    #[error(transparent)]
    #[retry(transparent)]
    Rpc(#[from] tonic::Status),
}

struct Store {
    kv: KvClient<Channel>,
}

impl Store {
    /// One attempt; each retry clones the client (a `Channel` clone is cheap).
    #[retryable(max_attempts = 4, initial_backoff = "50ms", scope = "store")]
    async fn get(&self, key: &str) -> Result<String, StoreError> {
        let request = GetRequest {
            key: key.to_owned(),
        };
        Ok(self.kv.clone().get(request).await?.into_inner().value)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = grpc_demo::serve(vec![
        Reply::Fail(Code::Unavailable, None),
        Reply::Fail(Code::ResourceExhausted, Some("300")),
        Reply::Value("42"),
        Reply::Fail(Code::NotFound, None),
    ])
    .await?;
    let channel = Channel::from_shared(server.uri())?.connect_lazy();
    let store = Store {
        kv: KvClient::new(channel),
    };
    for key in ["answer", "missing"] {
        let started = Instant::now();
        match store.get(key).await {
            Ok(value) => println!("get({key:?}) = {value:?} after {:.1?}", started.elapsed()),
            Err(error) => println!(
                "get({key:?}) failed: {error} (retry safety {:?}) after {:.1?}",
                error.retry_safety(),
                started.elapsed()
            ),
        }
    }
    let stats = retry_core::Scope::lookup("store")
        .ok_or("the scope is created on the first call")?
        .stats();
    println!(
        "scope store: {} attempts, {} retries, {} throttled",
        stats.attempts, stats.retries, stats.throttles
    );
    Ok(())
}
