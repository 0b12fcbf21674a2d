//! Quick start: a flaky key-value service on loopback, an error enum that describes its own
//! retryability, and a client whose `get` retries with one attribute.
//!
//! Run it with `cargo run -p examples --example quickstart`. Each retry is printed once, by the
//! `on_retry` hook; the runtime's own `tracing` events show at `warn` (a quota running out, the
//! rate limiter engaging) unless `RUST_LOG` says otherwise (`RUST_LOG=retry_core=debug` adds one
//! event per retry and per decision not to retry).

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_core::{RetryEvent, RetryInfo, Scope, retryable};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// What the store can answer, as the client sees it.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    /// 429: the service asks us to slow down, and says for how long.
    #[error("slow down")]
    #[retry(throttling)]
    Throttled {
        #[retry(after)]
        retry_after: Option<Duration>,
    },
    /// 503: the service is briefly unavailable.
    #[error("service unavailable")]
    #[retry(transient)]
    Unavailable,
    /// 404: asking again will not help.
    #[error("no such key: {0}")]
    #[retry(fault = "client")]
    NotFound(String),
    /// The connection itself failed: io::Error knows which kinds are transient.
    #[error(transparent)]
    #[retry(transparent)]
    Io(#[from] std::io::Error),
}

/// A client of the line-protocol store: `GET key` answers `OK value`, `ERR 503`,
/// `ERR 429 <retry-after ms>` or `ERR 404`.
struct StoreClient {
    addr: std::net::SocketAddr,
}

impl StoreClient {
    /// One attempt; `#[retryable]` turns it into the retry loop.
    #[retryable(
        max_attempts = 5,
        initial_backoff = "50ms",
        max_backoff = "2s",
        scope = "quickstart-store",
        on_retry = log_retry
    )]
    async fn get(&self, key: &str) -> Result<String, StoreError> {
        let mut stream = TcpStream::connect(self.addr).await?;
        stream.write_all(format!("GET {key}\n").as_bytes()).await?;
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).await?;
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("OK"), Some(value), _) => Ok(value.to_owned()),
            (Some("ERR"), Some("429"), after) => Err(StoreError::Throttled {
                retry_after: after
                    .and_then(|ms| ms.parse().ok())
                    .map(Duration::from_millis),
            }),
            (Some("ERR"), Some("404"), _) => Err(StoreError::NotFound(key.to_owned())),
            _ => Err(StoreError::Unavailable),
        }
    }
}

/// Called before each retry's backoff.
fn log_retry(event: &RetryEvent<'_, StoreError>) {
    if let Some(error) = event.error() {
        println!(
            "  attempt {} failed: {error}; retrying in {:.0?}",
            event.attempt(),
            event.delay()
        );
    }
}

/// A store that fails the first requests for each key in turn: 503, 503, then 429 once, then
/// answers. `missing` is never found.
async fn serve(listener: TcpListener) {
    let requests = Arc::new(AtomicU32::new(0));
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            return;
        };
        let requests = Arc::clone(&requests);
        tokio::spawn(async move {
            let (read, mut write) = stream.into_split();
            let mut line = String::new();
            if BufReader::new(read).read_line(&mut line).await.is_err() {
                return;
            }
            let key = line
                .trim()
                .strip_prefix("GET ")
                .unwrap_or_default()
                .to_owned();
            let answer = match (key.as_str(), requests.fetch_add(1, Ordering::SeqCst) % 4) {
                ("missing", _) => "ERR 404".to_owned(),
                (_, 0 | 1) => "ERR 503".to_owned(),
                (_, 2) => "ERR 429 300".to_owned(),
                (key, _) => format!("OK value-of-{key}"),
            };
            // The client may have gone: nothing to do about a failed write.
            let _ = write.write_all(format!("{answer}\n").as_bytes()).await;
        });
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "retry_core=warn".into()),
        )
        .with_target(false)
        // Colors only on a terminal: piped or captured output stays plain text.
        .with_ansi(std::io::stdout().is_terminal())
        .init();

    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let client = StoreClient {
        addr: listener.local_addr()?,
    };
    tokio::spawn(serve(listener));

    for key in ["alpha", "missing"] {
        println!("get({key:?}):");
        match client.get(key).await {
            Ok(value) => println!("  => Ok({value:?})"),
            Err(error) => println!(
                "  => Err({error}) (not retryable: {:?})",
                error.retry_safety()
            ),
        }
    }

    let stats = Scope::lookup("quickstart-store")
        .ok_or("the scope is created on the first call")?
        .stats();
    println!(
        "scope quickstart-store: {}, {}, {}, {}, quota {}/{}",
        count(stats.attempts, "attempt", "attempts"),
        count(stats.retries, "retry", "retries"),
        count(stats.successes, "success", "successes"),
        count(stats.failures, "failure", "failures"),
        stats.quota_level,
        stats.quota_capacity
    );
    Ok(())
}

/// `n` and the noun, singular for 1, plural otherwise.
fn count(n: u64, singular: &str, plural: &str) -> String {
    format!("{n} {}", if n == 1 { singular } else { plural })
}
