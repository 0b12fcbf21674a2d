//! Fixed N retries: no budget at all.

use super::Budget;

/// No limit on retries: what `backon` and `tokio-retry` do (their retry count aside).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Unlimited;

impl Budget for Unlimited {}
