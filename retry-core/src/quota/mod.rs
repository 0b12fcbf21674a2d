//! The retry quota: a token bucket of retries shared by a scope, which stops retry storms.
//!
//! The AWS SDKs' retry quota (smithy-kotlin's retry design and the Smithy client guide call it a
//! token bucket): each retry takes a cost out of the bucket, a success after retries puts the last
//! retry's cost back, and a first-try success adds a small reward. When the bucket cannot pay for a
//! retry, the call stops retrying. Lock-free: the level is one atomic updated by compare-and-swap,
//! and the optional refill claims elapsed time by compare-and-swap on the last refill instant
//! (model-checked with loom in `tests/loom_quota.rs` and the `loom_model` tests of its files). A
//! scope whose quota follows its traffic (the default) bounds what a retry may find in it, and
//! lends what its calls in flight hold while its retried calls come back (the level may then go
//! below zero: a debt).

mod bucket;
mod lending;
mod request_rate;
mod traffic;

pub(crate) use bucket::RetryBounds;
pub use bucket::RetryQuota;
pub(crate) use lending::RetriedCall;
pub(crate) use traffic::TrafficQuota;
#[cfg(feature = "fleet")]
pub(crate) use traffic::young_quota;
