//! gRPC retry throttling (gRFC A6): a token count per channel.

use super::{Budget, Outcome};
use crate::time::Nanos;

/// gRPC retry throttling: the count starts at `max_tokens`; a failed attempt takes 1, a
/// success adds `token_ratio`; retries are allowed only while the count is above
/// `max_tokens / 2`.
///
/// ```
/// use retry_sim::baseline::{Budget, GrpcThrottle, Outcome};
/// let mut grpc = GrpcThrottle::new(10.0, 0.1);
/// for _ in 0..5 {
///     grpc.on_response(Outcome::Failure { accepted: false }, 0);
/// }
/// assert!(!grpc.allow_retry(0)); // 5 is not above 10 / 2
/// grpc.on_response(Outcome::Success, 0);
/// assert!(grpc.allow_retry(0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrpcThrottle {
    tokens: f64,
    max_tokens: f64,
    token_ratio: f64,
}

impl GrpcThrottle {
    /// gRPC's `retryThrottling { maxTokens, tokenRatio }`.
    pub fn new(max_tokens: f64, token_ratio: f64) -> Self {
        Self {
            tokens: max_tokens,
            max_tokens,
            token_ratio,
        }
    }
}

impl Budget for GrpcThrottle {
    fn on_response(&mut self, outcome: Outcome, _now: Nanos) {
        self.tokens = match outcome {
            Outcome::Success => (self.tokens + self.token_ratio).min(self.max_tokens),
            Outcome::Failure { .. } => (self.tokens - 1.0).max(0.0),
        };
    }

    fn allow_retry(&mut self, _now: Nanos) -> bool {
        self.tokens > self.max_tokens / 2.0
    }
}
