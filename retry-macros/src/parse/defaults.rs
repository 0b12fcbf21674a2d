//! The runtime's default backoff numbers, which `#[retryable]` checks `initial_backoff <=
//! max_backoff` against when only one of them is given.
//!
//! Copy of the numbers of `retry-core/src/config/defaults.rs` (see [`super`]).

use std::time::Duration;

/// Base of the exponential backoff. Source: the AWS SDKs' standard mode (`t_i = 1 s * 2^i`).
pub(crate) const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Cap of the exponential backoff. Source: the AWS SDKs' standard mode (`MAX_BACKOFF = 20 s`).
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(20);
