//! Classification: deciding from an attempt's outcome whether to retry it (after the smithy-rs RFC
//! "User-configurable retry classification").

pub(crate) mod action;
mod chain;
pub(crate) mod classifier;
mod description;
mod dyn_error;
mod error_code;
mod idempotency;
mod priority;
mod retry_if;
mod retry_info;
#[cfg(any(feature = "http", feature = "tonic"))]
pub(crate) mod server_delay;
mod transient;
pub(crate) mod transport;

pub(crate) use action::{ErrorKind, RetryAction, RetryReason};
pub use chain::ClassifierChain;
pub(crate) use classifier::ClassifyRetry;
pub use classifier::FnClassifier;
pub use description::RetryDescription;
pub use dyn_error::DynErrorClassifier;
pub use error_code::{ErrorCodeClassifier, ProvideErrorCode};
pub use idempotency::Idempotency;
pub use priority::ClassifierPriority;
pub use retry_if::RetryIf;
pub use retry_info::RetryInfoClassifier;
pub use transient::TransientErrorClassifier;
