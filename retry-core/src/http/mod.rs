//! HTTP (feature `http`): the crate's one table of statuses, read by [`HttpStatusClassifier`]
//! for responses and by [`HttpStatusError`] for errors ([`CheckStatus::check_status`] turns an
//! error status into one; feature `reqwest` adds `reqwest::Response` and `reqwest::Error`), and
//! the server's delay, [`RetryAfter`] (`x-amz-retry-after`, `Retry-After`) and
//! [`parse_retry_after`].

mod check_status;
mod classifier;
mod date;
#[cfg(feature = "reqwest")]
mod reqwest;
mod retry_after;
mod status_error;
mod status_table;

pub use check_status::CheckStatus;
pub use classifier::HttpStatusClassifier;
pub use retry_after::{RetryAfter, parse_retry_after};
pub use status_error::HttpStatusError;
