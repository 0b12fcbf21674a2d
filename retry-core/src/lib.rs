//! Retries done right for async Rust: exponential backoff with jitter, a retry quota that stops
//! retry storms, client-side adaptive rate limiting after throttling, and classification of
//! outcomes as retryable or not — the behavior the AWS SDKs converged on, for any async client.
//!
//! # One attribute, one derive
//!
//! `#[derive(RetryInfo)]` lets an error type say which of its values are worth retrying;
//! `#[retryable]` turns an `async fn` returning `Result` into a retry loop over one attempt — its
//! body:
//!
//! ```
//! use retry_core::{RetryInfo, retryable};
//! use std::time::Duration;
//!
//! #[derive(Debug, thiserror::Error, RetryInfo)]
//! enum StoreError {
//!     #[error("slow down")]
//!     #[retry(throttling)] // retried, never sooner than `retry_after`
//!     Throttled {
//!         #[retry(after)]
//!         retry_after: Option<Duration>,
//!     },
//!     #[error("unavailable")]
//!     #[retry(transient)] // retried
//!     Unavailable,
//!     #[error("not found")]
//!     #[retry(fault = "client")] // never retried
//!     NotFound,
//! }
//!
//! struct Store {
//!     fails: std::sync::atomic::AtomicU32,
//! }
//!
//! impl Store {
//!     #[retryable(max_attempts = 5, mode = "adaptive")]
//!     async fn get(&self, key: &str) -> Result<String, StoreError> {
//!         // One attempt: `?` and `return` end the attempt, not the call.
//!         if self.fails.fetch_sub(1, std::sync::atomic::Ordering::Relaxed) > 0 {
//!             return Err(StoreError::Unavailable);
//!         }
//!         Ok(format!("value of {key}"))
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let store = Store { fails: 2.into() };
//! assert_eq!(store.get("a").await.unwrap(), "value of a"); // on the third attempt
//! # }
//! ```
//!
//! The attribute's arguments (`max_attempts`, `preset`, `mode`, backoffs, `timeout`, `scope`,
//! `strategy`, `classifier`, `on_retry`, ...) are listed on [`retryable`]; the derive's keys on
//! [`RetryInfo`](macro@RetryInfo). Both are checked at compile time, with errors at the token to
//! fix.
//!
//! # Without macros
//!
//! [`retry`] and [`Retry`] run a closure the same way, under a strategy you build and keep:
//!
//! ```
//! use retry_core::{RetryConfig, StandardStrategy, retry};
//! use std::io;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)] async fn main() {
//! let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(4).build().unwrap());
//! let mut failures_left = 2;
//! let value = retry(&strategy, || {
//!     let fail = failures_left > 0;
//!     failures_left -= 1;
//!     async move {
//!         if fail {
//!             Err(io::Error::from(io::ErrorKind::ConnectionRefused))
//!         } else {
//!             Ok(42)
//!         }
//!     }
//! })
//! .await;
//! assert_eq!(value.unwrap(), 42);
//! # }
//! ```
//!
//! # The pieces
//!
//! The root holds the everyday names; the rest lives in one module per concept:
//! * [`RetryInfo`]: errors describe their own retryability (derive it with feature `macros`);
//! * [`classify`]: classifiers ([`ClassifyRetry`], [`classify::ClassifierChain`] and the
//!   built-ins) turn an outcome into a [`RetryAction`];
//! * [`strategy`]: a [`RetryStrategy`] ([`StandardStrategy`], [`AdaptiveStrategy`]) decides
//!   whether and when to retry, from a [`RetryConfig`] ([`config`]), with a [`backoff`], a
//!   retry [`quota`] and an [`adaptive`] rate limiter shared through a [`Scope`] ([`scope`]);
//! * [`driver`]: [`retry`], [`Retry`] and [`driver::RetryLoop`] drive an operation;
//!   `#[retryable]` expands to the same loop;
//! * the integrations, each behind its feature: [`http`], [`tower`], [`tonic`];
//! * [`attempt`]: the attempt inside the attempt, what a call did, and the spans and events of
//!   retries; with feature `metrics`, `metrics`: the same through the `metrics` facade.
//!
//! Time is read through a [`clock::Clock`] ([`clock::TokioClock`] by default), so tests and
//! simulations run the real strategies in virtual time. Every retry is a `tracing` event of
//! target `retry_core` (debug "retrying", whose `attempt` is the attempt that failed, as the
//! `on_retry` hook's; warn when a quota runs out or the limiter engages), and a scope counts
//! what its calls did ([`Scope::stats`]).
//!
//! # The guide
//!
//! Recipes and the longer explanations, each example a doc test, are the pages of [`guide`]:
//! * [`guide::defaults`]: the default configuration and why it departs from the AWS SDKs', the
//!   presets that keep theirs, sizing or switching off the retry quota, long polling;
//! * [`guide::adaptive`]: adaptive mode's rate limiter, and where it departs from the AWS SDKs';
//! * [`guide::load_shedding`]: refusing a call that could only be sent after its deadline;
//! * [`guide::blocking`]: `#[retryable]` on a plain `fn`;
//! * [`guide::layers`]: retrying at one layer only, and `#[tracing::instrument]` beside it;
//! * [`guide::dyn_errors`]: `anyhow::Error`, `Box<dyn Error>` and foreign error types;
//! * [`guide::testing`]: virtual time, reproducible jitter, the scopes tests share;
//! * the integrations: `guide::reqwest`, `guide::tower` and `guide::tonic`, with their features.
//!
//! # Features
//!
//! * `macros` (default): `#[retryable]` and `#[derive(RetryInfo)]`.
//! * `http`: the [`http`] module: `HttpStatusClassifier` and `parse_retry_after`, on the `http`
//!   crate's types; `HttpStatusError`, `RetryAfter` and `CheckStatus` (an error status as a
//!   retryable error).
//! * `reqwest`: `RetryInfo` for `reqwest::Error`, `CheckStatus` for `reqwest::Response`.
//! * `tower`: the [`tower`] module: `RetryLayer`, retries for any tower `Service`, and
//!   `BufferBodyLayer` for request bodies that must be buffered to be sent again; the
//!   classifiers know the errors of tower's `TimeoutLayer` and `LoadShedLayer`.
//! * `hyper`: the classifiers know hyper's errors: a request canceled before it was written (not
//!   sent), a connection closed before the response completed (it may have been processed).
//! * `hyper-util` (with `hyper`): the classifiers know the connect errors of hyper-util's legacy
//!   client (not sent).
//! * `tonic`: the [`tonic`] module: `RetryInfo` for `tonic::Status` (gRFC A6,
//!   `grpc-retry-pushback-ms`) and `GrpcStatusClassifier` for a `Channel` under `RetryLayer`.
//! * `rand`: `backoff::RngRandom`, any `rand` generator as the jitter's randomness.
//! * `attempt-context`: `attempt::current()` and `attempt::capture` (the attempt, and what calls
//!   did, read inside the code they run), off by default: it costs every call a few instructions.
//! * `metrics`: the `metrics` module: each scope's calls, attempts, retries, backoffs, limiter
//!   waits, quota and rate, through the `metrics` facade (Prometheus, OpenTelemetry, ...).

#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod adaptive;
pub mod attempt;
pub mod backoff;
pub mod classify;
pub mod clock;
mod cold_drop;
pub mod config;
pub mod driver;
#[cfg(feature = "fleet")]
#[cfg_attr(docsrs, doc(cfg(feature = "fleet")))]
pub mod fleet;
pub mod guide;
pub mod hedge;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
mod info;
mod load_shed;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics;
mod name;
mod observe;
pub mod quota;
pub mod scope;
pub mod strategy;
mod sync;
#[cfg(feature = "tonic")]
#[cfg_attr(docsrs, doc(cfg(feature = "tonic")))]
pub mod tonic;
#[cfg(feature = "tower")]
#[cfg_attr(docsrs, doc(cfg(feature = "tower")))]
pub mod tower;

/// Support for the code the macros generate. Named after the crate's version: `retry-macros`
/// names it after its own, so macros of another version than this runtime do not compile.
#[doc(hidden)]
#[path = "private.rs"]
pub mod __private_0_1_0;

// The everyday names. Each is defined in its module and public here only (the modules list the
// rest): `tests/surface.rs` lists them, so that growing the root is a decision.
pub use classify::action::{ErrorKind, RetryAction, RetryReason};
pub use classify::classifier::ClassifyRetry;
pub use config::error::ConfigError;
pub use config::mode::RetryMode;
pub use config::preset::RetryPreset;
pub use config::quota::Quota;
pub use config::retry_config::RetryConfig;
pub use driver::blocking::retry_blocking;
pub use driver::hook::RetryEvent;
pub use driver::retry::{Retry, retry};
pub use info::{Fault, RetryInfo, RetrySafety};
pub use load_shed::LoadShed;
pub use scope::state::Scope;
pub use strategy::adaptive::AdaptiveStrategy;
pub use strategy::configured::strategy_for;
pub use strategy::error::RetryError;
pub use strategy::retry_strategy::RetryStrategy;
pub use strategy::standard::StandardStrategy;

/// `#[retryable(...)]`: retries an `async fn` (or a blocking `fn`) returning a `Result` under a
/// strategy.
#[cfg(feature = "macros")]
pub use retry_macros::retryable;

/// `#[derive(RetryInfo)]`: an error type describes its retryability with `#[retry(...)]`.
#[cfg(feature = "macros")]
pub use retry_macros::RetryInfo;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
