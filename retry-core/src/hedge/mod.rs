//! Hedged requests: when an idempotent call's copy in flight has not answered within a delay, send
//! another copy, take the first answer, drop the rest (Dean and Barroso, "The Tail at Scale",
//! CACM 2013). The [guide page](crate::guide::hedging) says when to hedge and what it costs; this
//! module holds the pieces:
//!
//! * [`Hedging`]: a call's policy, a [`HedgeDelay`] (fixed, or a percentile of the scope's
//!   measured latency) and `max_hedges` (1 to [`MAX_HEDGES`]);
//! * [`ScopeHedging`]: a scope's hedging state, made on its first hedged call: the latency
//!   histogram the percentile is read from, the pause a throttle puts on its hedges, and (feature
//!   `metrics`) the hedge counters;
//! * [`HedgeGrant`] and [`HedgeRefusal`]: a strategy's answer to a hedge
//!   ([`RetryStrategy::acquire_hedge`](crate::RetryStrategy::acquire_hedge)).
//!
//! The drivers: [`Retry::hedge`](crate::Retry::hedge),
//! [`HedgedLoop`](crate::driver::HedgedLoop) (for a driver that makes each attempt and keeps its
//! own time), `#[retryable(hedge_after = "p95", idempotent = true)]` and the tower layer's
//! `hedge`.
//!
//! # The rules
//!
//! * **Only idempotent calls are hedged**: a hedge is the same request sent twice on purpose.
//!   Hedging declares a call idempotent; a call declared not idempotent cannot be hedged:
//!   `#[retryable(idempotent = false, hedge_after = ...)]` does not compile, and `Retry::hedge`
//!   on a `Retry` declared `idempotent(false)` is refused with
//!   [`HedgeConfigError::NotIdempotent`]. Under the tower layer, a request is hedged when its
//!   HTTP method is idempotent (RFC 9110 §9.2.2), or when the layer is declared idempotent; the
//!   others are sent once, as without hedging. [`HedgedLoop`](crate::driver::HedgedLoop)
//!   declared not idempotent sends no hedge (each one due is refused,
//!   [`HedgeRefusal::NotIdempotent`]).
//! * **First answer wins**: the first success, or the first answer that is not retried, ends the
//!   call; the other copies are dropped (their futures cancelled: an HTTP client closes their
//!   connections) and settled as cancelled attempts. A copy that fails with a retryable error
//!   while another copy is in flight does not end the call: it waits for the others. When the
//!   last copy in flight fails, the call retries as any call does (its backoff, the quota, the
//!   limiter), and the retry may be hedged in turn. Retries and hedges share `max_attempts` and
//!   the deadline (`timeout`); the backoff's exponent counts the attempts sent, hedges included
//!   (a call that sent two copies backs off as one that retried once).
//! * **Charged like retries**: a hedge takes the retry cost from the scope's quota, from what
//!   the quota holds (never borrowed against the calls in flight, as the default quota lets a
//!   retry do), and only while the quota keeps at least half its cap after paying (gRPC's retry
//!   throttling stops hedges at half its token bucket, gRFC A6; a traffic-sized scope younger
//!   than its window counts as full at the tokens it started with): hedges never take the tokens
//!   retries need in an outage. Its cost is then part of its call's account, as a retry's, and
//!   settled the same way when the call ends: with the default quota (a `quota_window`) a call
//!   that succeeds gets back every retry and hedge it paid, and one that fails keeps them spent;
//!   with a fixed quota (the AWS SDKs' rule) a success gives back its last attempt's cost, the
//!   winner's, so a hedge that lost stays charged there. In adaptive mode a hedge takes a
//!   send permit from the scope's rate limiter, never waits for one, and takes one only while
//!   nobody waits and the bucket stays at least half full: a scope held to its rate (throttled)
//!   does not hedge. A hedge counts as an attempt sent in the scope's stats and in fleet mode's
//!   reports (the store's measure of what each process sends). Under a live fleet lease the
//!   half-cap rule reads the fleet's budget, not the process's share of it: a process hedges
//!   from the tokens it holds while the last lease found the fleet holding at least half its
//!   cap, and not at all while it did not.
//! * **Throttling stops it**: a throttling error, a `Retry-After` or gRPC pushback ends hedging
//!   for the call that met it, and pauses it for the whole scope for [`THROTTLE_PAUSE`] (1 s) or
//!   the `Retry-After`, whichever is longer.
//! * **Percentile hedges keep to their share**: a scope's hedges at a percentile `p` are at most
//!   `(100 − p) %` of its calls (5 % at p95), plus [`HEDGE_BURST`] and [`HEDGE_DEBT`], however
//!   many calls outlast a percentile that lags behind a slow spell; while the scope's budget is
//!   short, a call's delay is [`DELAY_STRETCH`] times the percentile
//!   ([`ScopeHedging::budget`]; [`HedgeRefusal::BudgetExhausted`] beyond the debt).
//! * **A refused hedge is not sent**; the call goes on with its copies in flight and sends no
//!   more hedges.
//!
//! # The percentile
//!
//! `HedgeDelay::Percentile(95.0)` sends a hedge once the copy in flight has taken longer than the
//! scope's measured p95. The scope measures only its hedged calls (a call that does not hedge
//! pays nothing for it): one sample per call, its first attempt's latency, or, when another copy
//! ended the call before that attempt answered, the time it had been in flight then, which is
//! above the percentile it was hedged at, so the percentile is not pulled down by the slow
//! attempts hedging cuts short. A call cancelled by its caller records nothing. Only answers that are not retryable
//! failures are measured: a service failing fast would otherwise make every call hedge at once.
//! The samples of the last one to two minutes are read; until they hold 10 above the percentile
//! (200 for p95, 1,000 for p99: [`ScopeHedging::min_samples`]) the percentile is unknown and the
//! scope's calls are not hedged, as tower's `hedge` does before its histogram has its minimum
//! data points. A fixed delay needs no samples.

mod budget;
mod error;
mod histogram;
mod limits;
mod meter;
mod policy;
mod refusal;
mod scope_hedging;

pub use budget::{DELAY_STRETCH, HEDGE_BURST, HEDGE_DEBT};
pub use error::HedgeConfigError;
pub use limits::MAX_HEDGES;
pub use policy::{HedgeDelay, Hedging};
pub use refusal::{HedgeGrant, HedgeRefusal};
pub(crate) use scope_hedging::HedgeCell;
pub use scope_hedging::{ScopeHedging, THROTTLE_PAUSE};
