//! Runnable examples of `retry-core`: `cargo run -p examples --example quickstart`.
//!
//! The integrations' examples run against the demo servers of this library, on loopback; the
//! integration tests of the reqwest, tower and tonic features run against the same servers.

mod arrivals;
pub mod grpc_demo;
pub mod http_demo;
mod script;
pub mod sdk_request;
pub mod store_demo;

use std::io;
use std::net::SocketAddr;

use tokio::net::TcpListener;

/// A loopback address where nothing listens: connecting to it is refused (the port the system
/// gave a listener, which is closed again before this returns).
pub async fn refused_addr() -> io::Result<SocketAddr> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    listener.local_addr()
}
