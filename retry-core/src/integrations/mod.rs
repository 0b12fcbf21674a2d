//! Integrations with the crates where retried calls live, each behind its own feature:
//! `http` (an HTTP error status as a retryable error), `reqwest`, `tower`, `hyper-util` and
//! `tonic`.

#[cfg(feature = "http")]
mod check_status;
#[cfg(feature = "hyper-util")]
pub(crate) mod connect_failure;
#[cfg(feature = "tonic")]
mod grpc_deadline;
#[cfg(feature = "tonic")]
mod grpc_http_status;
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
#[cfg(feature = "tonic")]
pub(crate) use self::grpc_deadline::deadline_expired;
#[cfg(feature = "http")]
pub use self::http_status_error::HttpStatusError;
#[cfg(feature = "http")]
pub use self::retry_after::RetryAfter;
#[cfg(all(test, feature = "http"))]
pub(crate) use self::retry_after::X_AMZ_RETRY_AFTER;
#[cfg(feature = "tonic")]
pub use self::tonic::GrpcStatusClassifier;
