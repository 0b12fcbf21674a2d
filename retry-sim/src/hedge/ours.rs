//! Hedging as `retry-core` runs it (issue 27): a hedge is a copy of the attempt in flight, sent
//! after a fixed delay or a percentile of the scope's measured latency, and paid like a retry.
//!
//! The simulator does not model it: a hedged call of a `retry-core` client is driven by the
//! runtime's own [`HedgedLoop`](retry_core::driver::HedgedLoop), the loop `Retry::hedge`,
//! `#[retryable(hedge_after = ...)]` and the tower layer's `hedge` run
//! ([`policy`](crate::policy)), on the run's virtual clock. Every rule is therefore the
//! runtime's: the quota's payment (from what the quota holds, keeping half its cap, part of the
//! call's account and settled with it), `max_attempts` and the deadline shared by retries and
//! hedges, the backoff's exponent counting the hedges, the throttle's pause of the scope's
//! hedges, and the percentile, which the scope measures itself
//! ([`ScopeHedging`]) from its hedged calls' first attempts
//! as they end in the run; the simulator only delivers each copy's answer at its time.
//!
//! Where a simulated call differs from a user's: a copy is an event, not a future, so a
//! dropped copy's request still runs to its end on the simulated server (as an HTTP/1.1
//! request the client dropped does once it was read); a long-polling call's wait before
//! returning a refused retry ([`HedgedLoop::take_linger`](retry_core::driver::HedgedLoop::take_linger))
//! is not slept, as for the unhedged loop; and the hedging arms run over a strategy in standard
//! mode with a scope per client (see [`StrategySpec`](crate::strategy::StrategySpec)).
//!
//! This module holds what a hedging arm's name sets: the delay and `max_hedges`.

use std::fmt;

use retry_core::hedge::{HedgeDelay, Hedging, ScopeHedging};

/// A hedging policy of `retry-core`, as a hedging arm's name spells it: the runtime's
/// [`Hedging`], which every hedged call of the arm's clients runs under.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OursHedgeSpec {
    /// The runtime's policy.
    pub hedging: Hedging,
}

impl OursHedgeSpec {
    /// The policy written `p95`, `10ms`, optionally followed by `x` and `max_hedges`
    /// (`p95x2`), as the name of a hedging arm spells it after `hedge-`; checked by the
    /// runtime's own parser and constructors.
    ///
    /// ```
    /// use retry_core::hedge::HedgeDelay;
    /// use retry_sim::hedge::ours::OursHedgeSpec;
    /// use std::time::Duration;
    /// let spec = OursHedgeSpec::parse("p95x2").unwrap();
    /// assert_eq!(spec.hedging.delay(), HedgeDelay::Percentile(95.0));
    /// assert_eq!(spec.hedging.max_hedges(), 2);
    /// let fixed = OursHedgeSpec::parse("10ms").unwrap();
    /// assert_eq!(fixed.hedging.delay(), HedgeDelay::After(Duration::from_millis(10)));
    /// assert!(OursHedgeSpec::parse("p100").is_err());
    /// assert!(OursHedgeSpec::parse("10msx5").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Self, String> {
        let (delay, max_hedges) = match text.rsplit_once('x') {
            Some((delay, count))
                if !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()) =>
            {
                (
                    delay,
                    count.parse::<u32>().map_err(|e| format!("`{text}`: {e}"))?,
                )
            }
            _ => (text, 1),
        };
        let hedging = delay
            .parse::<HedgeDelay>()
            .and_then(Hedging::new)
            .and_then(|hedging| hedging.with_max_hedges(max_hedges))
            .map_err(|error| format!("`{text}`: {error}"))?;
        Ok(Self { hedging })
    }
}

impl fmt::Display for OursHedgeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.hedging.delay() {
            HedgeDelay::After(delay) => write!(f, "hedged {delay:?} after each copy")?,
            HedgeDelay::Percentile(p) => write!(
                f,
                "hedged after the p{p} of the scope's measured latency (known from {} samples)",
                ScopeHedging::min_samples(p)
            )?,
        }
        write!(
            f,
            ", at most {} per call, by retry-core's HedgedLoop: each hedge pays the retry cost \
             from what the quota holds while it keeps half its cap, settled with its call; a \
             429 stops the call's hedges and pauses the scope's",
            self.hedging.max_hedges()
        )
    }
}
