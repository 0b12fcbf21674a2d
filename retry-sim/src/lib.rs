//! `retry-sim`: a deterministic discrete-event simulation of retry storms.
//!
//! It drives `retry-core`'s *real* strategies (the default, `aws-classic`, `aws-2026`, adaptive)
//! through a [`ManualClock`](retry_core::clock::ManualClock) in virtual time, side by side with
//! baselines modelled here (no retries, fixed retries with and without backoff, gRPC retry
//! throttling, the SRE book's client-side throttling, Finagle's retry budget), against a server
//! with workers, a bounded queue and a fault schedule. See the crate's `README.md` for the scenarios and the
//! metrics.
//!
//! ```
//! use retry_sim::{sim::{SimConfig, run}, strategy::StrategySpec, time::SECOND};
//!
//! let mut config = SimConfig::default();
//! config.horizon = 5 * SECOND;
//! config.layers[0].instances = 10;
//! let output = run(&config, &StrategySpec::named("aws-2026").unwrap(), 42).unwrap();
//! assert!((output.metrics.amplification - 1.0).abs() < 0.01);
//! ```

pub mod baseline;
pub mod clock;
pub mod config;
pub mod fault;
pub mod fleet;
pub mod goals;
pub mod hedge;
pub mod latency;
pub mod log_histogram;
pub mod metrics;
pub mod plot;
pub mod policy;
pub mod report;
pub mod rng;
pub mod runner;
pub mod runs;
pub mod scenario;
pub mod server;
pub mod sim;
pub mod stats;
pub mod strategy;
pub mod time;
