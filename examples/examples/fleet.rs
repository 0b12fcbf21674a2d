//! Fleet mode: three processes share one retry budget through Redis. Each "process" here is a
//! `Fleet` of its own (in one OS process, for the example): the first attaches the scope
//! `inventory` that its `#[retryable(scope = "inventory")]` function uses, the two others a
//! private scope of the same name. Every call decides locally; each process syncs in the
//! background every 250 ms. The example prints each process's fleet status and lease, then
//! kills Redis (the leases hold, then the processes fall back to local limits at a safe share)
//! and starts it again empty (they are live again within a couple of intervals, with no burst).
//!
//! Run it with `cargo run -p examples --example fleet` (about 5 seconds). It starts its own
//! `redis-server` on a free port of 127.0.0.1 when one is on PATH (`apt-get install
//! redis-server`), or uses `REDIS_URL` (e.g. `REDIS_URL=redis://127.0.0.1:6379/`). With
//! `RUST_LOG=retry_core=warn` it also shows the library's warnings as each fault happens.

use std::io::IsTerminal;
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use retry_core::fleet::{Fleet, FleetError, FleetStats};
use retry_core::{
    ErrorKind, RetryConfig, RetryInfo, RetryReason, RetryStrategy, Scope, StandardStrategy,
    retryable,
};

/// The store's answer for an item it cannot serve right now.
#[derive(Debug, thiserror::Error, RetryInfo)]
#[error("unavailable")]
#[retry(transient)]
struct Unavailable;

/// Every fifth call's first attempt fails.
static CALLS: AtomicU32 = AtomicU32::new(0);

/// How often each process syncs with the fleet's store.
const INTERVAL: Duration = Duration::from_millis(250);

/// One item's stock, from a store whose every fifth first attempt fails.
#[retryable(scope = "inventory", initial_backoff = "1ms")]
async fn stock(item: u32) -> Result<u32, Unavailable> {
    if CALLS.fetch_add(1, Ordering::Relaxed).is_multiple_of(5) {
        return Err(Unavailable);
    }
    Ok(item * 10)
}

/// The configuration of processes B and C's private scopes: what `stock`'s attribute makes
/// process A's with.
fn config() -> RetryConfig {
    RetryConfig::builder()
        .initial_backoff(Duration::from_millis(1))
        .build()
        .expect("a valid configuration")
}

// ANCHOR: readme
/// Joins the fleet: attaches the scope `#[retryable(scope = "inventory")]` declares, with the
/// attribute's settings (before or after its first call).
async fn join_fleet(url: &str) -> Result<Fleet, FleetError> {
    let fleet = Fleet::connect(url)?.sync_interval(INTERVAL).start().await?;
    fleet.attach("inventory")?;
    Ok(fleet) // keep `fleet`: dropping it stops the syncs
}
// ANCHOR_END: readme

/// A `redis-server` of the example's own, killed by its PID when dropped.
struct RedisServer {
    child: Child,
    port: u16,
}

impl RedisServer {
    /// Starts one on `port` (a free one if `None`); `None` if `redis-server` cannot run.
    fn start(port: Option<u16>) -> Option<Self> {
        let port = match port {
            Some(port) => port,
            None => TcpListener::bind("127.0.0.1:0")
                .ok()?
                .local_addr()
                .ok()?
                .port(),
        };
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .ok()?;
        let server = Self { child, port };
        // Ready when it accepts connections (within 5 s).
        for _ in 0..500 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Some(server);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One line per process: its status, its lease's tokens and the fleet's figures.
fn show(when: &str, processes: &[(&str, &Scope)]) {
    println!("{when}");
    for (name, scope) in processes {
        let stats = scope.stats();
        let fleet: FleetStats = stats.fleet.expect("attached");
        println!(
            "  {name}: {:?}, a retry finds {} tokens (lease {}, fleet cap {}, {} live), last sync {}",
            fleet.status,
            stats.quota_level,
            fleet.lease_tokens,
            fleet.fleet_cap,
            fleet.live_processes,
            fleet
                .last_sync_age
                .map_or("never".to_owned(), |age| format!(
                    "{} ms ago",
                    age.as_millis()
                )),
        );
    }
}

/// A private scope's calls: `count` calls, every fifth retried once.
fn calls_on(strategy: &StandardStrategy, count: u32) {
    for i in 0..count {
        let mut token = strategy.acquire_initial_token();
        if i % 5 == 0 {
            match strategy.refresh_retry_token(token, &RetryReason::error(ErrorKind::Transient)) {
                Ok(next) => token = next,
                Err(_) => continue,
            }
        }
        strategy.record_success(token);
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "retry_core=error".into()),
        )
        .with_target(false)
        .with_ansi(std::io::stdout().is_terminal())
        .init();

    let mut own = None;
    let url = match std::env::var("REDIS_URL") {
        Ok(url) => url,
        Err(_) => match RedisServer::start(None) {
            Some(server) => {
                let url = server.url();
                own = Some(server);
                url
            }
            None => {
                println!(
                    "fleet example: no redis-server on PATH: install it (apt-get install \
                     redis-server) or set REDIS_URL=redis://host:port/"
                );
                return Ok(());
            }
        },
    };

    // Process A: the scope its `#[retryable]` function uses, attached at start-up; its first
    // call declares it (the fleet links it at its next sync).
    let _a = join_fleet(&url).await?;
    stock(1).await?;
    let inventory = Scope::lookup("inventory").expect("declared by `stock`'s first call");
    // Processes B and C: a private scope of the same name each, and a strategy on it.
    let start =
        |url: String| async move { Fleet::connect(&url)?.sync_interval(INTERVAL).start().await };
    let (b, c) = (start(url.clone()).await?, start(url.clone()).await?);
    let b_scope = Scope::new("inventory", &config());
    let c_scope = Scope::new("inventory", &config());
    b.attach_scope(&b_scope)?;
    c.attach_scope(&c_scope)?;
    let b_calls = StandardStrategy::builder(config())
        .scope(b_scope.clone())
        .build();
    let c_calls = StandardStrategy::builder(config())
        .scope(c_scope.clone())
        .build();
    let processes = [("A", &inventory), ("B", &b_scope), ("C", &c_scope)];
    // The first process to sync took the young fleet's 500 tokens; it gives the others their
    // fair share back over its next two syncs.
    tokio::time::sleep(4 * INTERVAL).await;
    show(
        "joined: the young fleet's 500 tokens in fair shares",
        &processes,
    );

    let mut failed = 0;
    for _ in 0..8 {
        for item in 0..20 {
            // A call whose retry the fleet's budget cannot pay fails: count it.
            failed += u32::from(stock(item).await.is_err());
        }
        calls_on(&b_calls, 20);
        calls_on(&c_calls, 20);
        tokio::time::sleep(INTERVAL / 2).await;
    }
    show("after 1 s of calls, one in five retried once", &processes);
    println!("  ({failed} of A's 160 calls failed: their retry found no token)");

    let Some(server) = own.as_mut() else {
        return Ok(());
    };
    let port = server.port;
    drop(own.take());
    tokio::time::sleep(INTERVAL).await;
    show(
        "Redis killed 250 ms ago: the leases hold (calls never wait)",
        &processes,
    );
    tokio::time::sleep(3 * INTERVAL).await;
    show(
        "a lease later: local limits at a share of the last figures",
        &processes,
    );

    own = RedisServer::start(Some(port));
    tokio::time::sleep(3 * INTERVAL).await;
    show("Redis restarted empty: live again, no burst", &processes);
    drop(own);
    Ok(())
}
