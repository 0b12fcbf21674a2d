//! Runnable examples of `retry-core`: `cargo run -p examples --example quickstart`.
