//! Retry strategies: when to retry and how long to wait (the `RetryStrategy` / `RetryToken`
//! interface of the Smithy client guide "Retries").

mod adaptive;
mod builder;
mod configured;
mod error;
mod retry_strategy;
mod standard;
mod token;

pub use adaptive::AdaptiveStrategy;
pub use builder::StrategyBuilder;
pub use configured::{ConfiguredStrategy, strategy_for};
pub use error::RetryError;
pub use retry_strategy::{RetryStrategy, SendPermit};
pub use standard::StandardStrategy;
pub use token::RetryToken;
