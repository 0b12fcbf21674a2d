//! `tonic`: gRPC statuses describe their retryability (gRFC A6), with the server's pushback.
//! [`GrpcStatusClassifier`] classifies the responses of a `Channel` under
//! [`RetryLayer`](crate::tower::RetryLayer) (feature `tower`).

mod deadline;
mod http_status;
mod status;

pub use status::GrpcStatusClassifier;
