//! Retry strategies: when to retry and how long to wait (the `RetryStrategy` / `RetryToken`
//! interface of the Smithy client guide "Retries").

pub(crate) mod adaptive;
#[cfg(test)]
mod adaptive_tests;
mod builder;
pub(crate) mod configured;
pub(crate) mod error;
#[cfg(test)]
mod lending_tests;
pub(crate) mod retry_strategy;
pub(crate) mod standard;
mod token;

pub(crate) use adaptive::AdaptiveStrategy;
pub use builder::StrategyBuilder;
pub use configured::ConfiguredStrategy;
pub(crate) use error::RetryError;
pub(crate) use retry_strategy::RetryStrategy;
pub use retry_strategy::SendPermit;
pub(crate) use standard::StandardStrategy;
pub use token::RetryToken;
