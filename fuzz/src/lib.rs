//! Property checks for the fuzz targets in `fuzz_targets/`, and the reference models they
//! compare retry-core's parsers with.
//!
//! Every `check` function panics (a crash, for libFuzzer) when a property fails, with a message
//! naming the property and the input. The reference models are written apart from retry-core's
//! parsers, from the grammar each parser documents (RFC 9110 for `Retry-After`), so that a
//! mistake has to be made twice to go unnoticed.

pub mod classifier;
pub mod decimal;
pub mod duration;
pub mod env_config;
pub mod http_date;
pub mod lines;
pub mod names;
pub mod retry_after;

/// The seed corpora run through the checks (`cargo test`, no nightly needed).
#[cfg(test)]
mod seeds;
