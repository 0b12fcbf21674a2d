//! Integrations with the crates where retried calls live, each behind its own feature:
//! `http` (an HTTP error status as a retryable error), `reqwest`, `tower` and `tonic`.

#[cfg(feature = "http")]
mod check_status;
#[cfg(feature = "http")]
mod http_status_error;
#[cfg(feature = "reqwest")]
mod reqwest;
#[cfg(feature = "http")]
mod retry_after;
#[cfg(feature = "tonic")]
mod tonic;
#[cfg(feature = "tower")]
pub mod tower;

#[cfg(feature = "http")]
pub use self::check_status::CheckStatus;
#[cfg(feature = "http")]
pub use self::http_status_error::HttpStatusError;
#[cfg(feature = "http")]
pub use self::retry_after::RetryAfter;
#[cfg(feature = "tonic")]
pub use self::tonic::GrpcStatusClassifier;
