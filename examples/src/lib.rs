//! Runnable examples of `retry-core`: `cargo run -p examples --example quickstart`.
//!
//! The integrations' examples run against the demo servers of this library, on loopback.

pub mod grpc_demo;
pub mod http_demo;
