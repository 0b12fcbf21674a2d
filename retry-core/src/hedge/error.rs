//! What is wrong with a hedging policy.

use std::fmt;

use super::limits::MAX_HEDGES;
use crate::config::DurationParseError;

/// An invalid [`Hedging`](super::Hedging) or [`HedgeDelay`](super::HedgeDelay). Every message
/// names the setting and the fix.
///
/// ```
/// use retry_core::hedge::Hedging;
/// assert_eq!(
///     Hedging::at_percentile(100.0).unwrap_err().to_string(),
///     "a hedge percentile is strictly between 0 and 100 (95.0 for p95), got 100"
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum HedgeConfigError {
    /// A fixed delay of zero: every copy would be sent at once, doubling the load of every call
    /// rather than cutting its tail.
    ZeroDelay,
    /// A percentile outside (0, 100), or not a number.
    Percentile {
        /// The value given.
        percentile: f64,
    },
    /// `max_hedges` outside `1..=`[`MAX_HEDGES`].
    MaxHedges {
        /// The value given.
        max_hedges: u32,
    },
    /// A delay string that is no duration (and does not start with `p`).
    Duration(DurationParseError),
    /// Hedging asked for a call declared not idempotent (`idempotent(false)`): a hedge sends
    /// the request again while the first copy may still be processed.
    NotIdempotent,
    /// A percentile string (`p...`) that does not read, or is out of range.
    Parse {
        /// The string, trimmed.
        input: String,
        /// What is wrong with it.
        problem: String,
    },
}

impl fmt::Display for HedgeConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HedgeConfigError::ZeroDelay => f.write_str(
                "a hedge delay must be longer than zero (a delay of zero sends every copy at \
                 once): write e.g. 50ms, or a percentile such as p95",
            ),
            HedgeConfigError::Percentile { percentile } => write!(
                f,
                "a hedge percentile is strictly between 0 and 100 (95.0 for p95), got {percentile}"
            ),
            HedgeConfigError::MaxHedges { max_hedges } => write!(
                f,
                "max_hedges must be between 1 and {MAX_HEDGES} (gRPC's hedging policy sends at \
                 most {} copies), got {max_hedges}",
                MAX_HEDGES + 1
            ),
            HedgeConfigError::Duration(error) => write!(
                f,
                "invalid hedge delay: {error}; or a percentile of the scope's latency, e.g. \"p95\""
            ),
            HedgeConfigError::NotIdempotent => f.write_str(
                "a hedge sends the request again while the first copy may still be processed: a \
                 call declared idempotent(false) cannot be hedged; remove .hedge(...) or declare \
                 the call idempotent",
            ),
            HedgeConfigError::Parse { input, problem } => write!(
                f,
                "invalid hedge delay `{input}`: {problem}; write e.g. \"p95\" or \"p99.9\""
            ),
        }
    }
}

impl std::error::Error for HedgeConfigError {}
