//! The names of the metrics and of their labels, as recorded (OpenTelemetry's style; see the
//! [module](super)'s table for the Prometheus spelling).

/// Counter: calls that ended, by `scope` and `outcome`.
pub const CALLS: &str = "retry.calls";
/// Counter: attempts sent by the calls that ended, by `scope`.
pub const ATTEMPTS: &str = "retry.attempts";
/// Counter: retries granted, by `scope` and `reason`.
pub const RETRIES: &str = "retry.retries";
/// Histogram: attempts per call that ended, by `scope`.
pub const ATTEMPTS_PER_CALL: &str = "retry.attempts_per_call";
/// Histogram: the backoff of each retry granted, in seconds, by `scope`.
pub const BACKOFF_DELAY: &str = "retry.backoff.delay";
/// Histogram: how long an attempt waited for its send permit (adaptive mode), in seconds, by
/// `scope`.
pub const LIMITER_WAIT: &str = "retry.limiter.wait";
/// Gauge: the tokens a retry would find in the scope's quota, by `scope`.
pub const QUOTA_LEVEL: &str = "retry.quota.level";
/// Gauge: the most a retry may find in the scope's quota (its capacity, or the cap its traffic
/// sets), by `scope`.
pub const QUOTA_CAPACITY: &str = "retry.quota.capacity";
/// Gauge: the adaptive rate limiter's send rate (tokens per second), by `scope`.
pub const LIMITER_RATE: &str = "retry.limiter.rate";

/// Counter: a fleet scope's syncs with the fleet's store, by `scope` and `result` (feature
/// `fleet` too).
pub const FLEET_SYNCS: &str = "retry.fleet.syncs";
/// Gauge: a fleet scope's status, by `scope` and `status`: 1 for the status in force, 0 for the
/// others.
pub const FLEET_STATUS: &str = "retry.fleet.status";
/// Gauge: the tokens a fleet scope's last lease left the process, by `scope`.
pub const FLEET_LEASE_TOKENS: &str = "retry.fleet.lease.tokens";
/// Gauge: the fleet's send rate at the last lease (requests per second; 0 while the fleet
/// limiter is not engaged), by `scope`.
pub const FLEET_RATE: &str = "retry.fleet.rate";
/// Gauge: this process's share of the fleet's send rate (requests per second; 0 while the
/// fleet limiter is not engaged), by `scope`.
pub const FLEET_SHARE: &str = "retry.fleet.share";
/// Gauge: the processes the store counted as live at the last lease, by `scope`.
pub const FLEET_PROCESSES: &str = "retry.fleet.processes";
/// Counter: a fleet scope's syncs whose store dropped garbage (a stored record or state no
/// process could have written), by `scope`.
pub const FLEET_GARBAGE: &str = "retry.fleet.garbage";

/// Label: the scope's name ([`Scope::name`](crate::Scope::name)).
pub const SCOPE: &str = "scope";
/// Label of [`CALLS`]: how the call ended (`success`, `not_retryable`, `max_attempts`,
/// `quota_exhausted`, `deadline`, `retry_after_too_long`, `rate_limited`, `shed`, `cancelled`).
pub const OUTCOME: &str = "outcome";
/// Label of [`RETRIES`]: why the attempt was retried, the [`ErrorKind`](crate::ErrorKind)'s name
/// (`transient`, `timeout`, `throttling`, `server`, `client`; `ErrorKind`'s table says which
/// failures carry each).
pub const REASON: &str = "reason";

/// Counter: hedges sent (copies of a request whose copy in flight had not answered within the
/// hedge delay), by `scope`.
pub const HEDGES_SENT: &str = "retry.hedges.sent";
/// Counter: hedged calls whose answer came from a hedge, by `scope`.
pub const HEDGES_WON: &str = "retry.hedges.won";
/// Counter: copies of hedged calls dropped unanswered, because another copy answered first or
/// the call was cancelled, by `scope`.
pub const HEDGES_CANCELLED: &str = "retry.hedges.cancelled";
/// Counter: hedges not sent, by `scope` and `refusal`.
pub const HEDGES_REFUSED: &str = "retry.hedges.refused";
/// Label of [`HEDGES_REFUSED`]: why the hedge was not sent
/// ([`HedgeRefusal::as_str`](crate::hedge::HedgeRefusal::as_str): `not_idempotent`,
/// `max_attempts`, `deadline`, `quota_exhausted`, `throttled`, `rate_limited`,
/// `budget_exhausted`).
pub const REFUSAL: &str = "refusal";

/// Label of [`FLEET_SYNCS`]: how the sync ended (`lease`, `conflict`: the store keeps other
/// settings, `refused`: a reply out of the protocol's bounds, `failed`: no reply).
pub const RESULT: &str = "result";
/// Label of [`FLEET_STATUS`]: the status (`connecting`, `live`, `fallback`, `conflict`,
/// `detached`).
pub const STATUS: &str = "status";
