//! Metrics through the [`metrics`](https://docs.rs/metrics) facade (feature `metrics`): what every
//! scope's calls did, for Prometheus, OpenTelemetry or any other recorder the program installs.
//!
//! # The metrics
//!
//! | name (as recorded) | Prometheus (`with_recommended_naming`) | kind | unit | labels | recorded |
//! |---|---|---|---|---|---|
//! | `retry.calls` | `retry_calls_total` | counter | calls | `scope`, `outcome` | when a call ends |
//! | `retry.attempts` | `retry_attempts_total` | counter | attempts | `scope` | when a call ends: the attempts it sent |
//! | `retry.retries` | `retry_retries_total` | counter | retries | `scope`, `reason` | when a retry is granted |
//! | `retry.attempts_per_call` | `retry_attempts_per_call` | histogram | attempts | `scope` | when a call ends |
//! | `retry.backoff.delay` | `retry_backoff_delay_seconds` | histogram | s | `scope` | when a retry is granted: its backoff |
//! | `retry.limiter.wait` | `retry_limiter_wait_seconds` | histogram | s | `scope` | when an attempt that waited for its send permit gets it (adaptive mode; absent until the first wait) |
//! | `retry.quota.level` | `retry_quota_level` | gauge | tokens | `scope` | when the scope is made, then on the retry path: a retry granted or refused, a call that retried ending, an unsent retry given back; never in a scope without a quota (`Quota::Off`) |
//! | `retry.quota.capacity` | `retry_quota_capacity` | gauge | tokens | `scope` | with `retry.quota.level` |
//! | `retry.limiter.rate` | `retry_limiter_rate` | gauge | sends/s | `scope` | once the adaptive limiter is engaged: when it learns of a throttle or a timeout, and when an attempt waits for a permit; never in standard mode, nor in adaptive mode before the limiter engages (no rate is applied then) |
//! | `retry.hedges.sent` | `retry_hedges_sent_total` | counter | hedges | `scope` | when a hedge is sent ([`hedge`](crate::hedge)); registered on the scope's first hedged call, never in a scope that does not hedge |
//! | `retry.hedges.won` | `retry_hedges_won_total` | counter | calls | `scope` | when a hedge's answer ends its call |
//! | `retry.hedges.cancelled` | `retry_hedges_cancelled_total` | counter | copies | `scope` | when a copy of a hedged call (its first attempt or a hedge) is dropped unanswered: another copy answered first, or the call was cancelled |
//! | `retry.hedges.refused` | `retry_hedges_refused_total` | counter | hedges | `scope`, `refusal` | when a hedge due is not sent |
//! | `retry.fleet.syncs` | `retry_fleet_syncs_total` | counter | syncs | `scope`, `result` | fleet mode: after each sync of a fleet scope |
//! | `retry.fleet.status` | `retry_fleet_status` | gauge | 1 / 0 | `scope`, `status` | fleet mode: after each sync; 1 for the status in force, 0 for the others |
//! | `retry.fleet.lease.tokens` | `retry_fleet_lease_tokens` | gauge | tokens | `scope` | fleet mode: after each sync; the tokens the last lease left the process |
//! | `retry.fleet.rate` | `retry_fleet_rate` | gauge | sends/s | `scope` | fleet mode: after each sync; the fleet's send rate, 0 while the fleet limiter is not engaged |
//! | `retry.fleet.share` | `retry_fleet_share` | gauge | sends/s | `scope` | fleet mode: after each sync; this process's share of the fleet's rate, 0 while not engaged |
//! | `retry.fleet.processes` | `retry_fleet_processes` | gauge | processes | `scope` | fleet mode: after each sync; the live processes the store counted |
//! | `retry.fleet.garbage` | `retry_fleet_garbage_total` | counter | syncs | `scope` | fleet mode: after each sync; the syncs whose store dropped garbage (a stored record or state no process could have written; the `fleet store dropped garbage` warning names it) |
//!
//! Labels:
//! * `scope`: the scope's [name](crate::Scope::name) (`#[retryable]`'s default is the function's
//!   path; a strategy built without a scope is in one called `private`);
//! * `outcome`: `success`; `not_retryable` (the last outcome was not retryable); the strategy's
//!   refusals of a retry, named as [`RetryError::as_str`](crate::RetryError::as_str) names them
//!   in the logs: `max_attempts`, `quota_exhausted`, `deadline`, `retry_after_too_long`,
//!   `rate_limited`; `shed` (refused before the first attempt: load shedding); `cancelled`
//!   (dropped before the call's outcome was known);
//! * `refusal`: why a hedge was not sent, [`HedgeRefusal::as_str`](crate::hedge::HedgeRefusal::as_str):
//!   `not_idempotent`, `max_attempts`, `deadline`, `quota_exhausted`, `throttled`, `rate_limited`,
//!   `budget_exhausted`;
//! * `reason`: the retried failure's [`ErrorKind`](crate::ErrorKind) name: `transient`, `timeout`,
//!   `throttling`, `server`, `client` (what each means, and which failures carry it: `ErrorKind`'s
//!   table; the same name as the `retry.attempt` span's `retry.reason`);
//! * `result` (fleet mode): how a sync ended: `lease` (a lease granted), `conflict` (the store
//!   keeps other settings for the scope), `refused` (a reply out of the protocol's bounds, the
//!   lease left as it was), `failed` (no reply: the store unreachable, a timeout);
//! * `status` (fleet mode): [`FleetStatus`](crate::fleet::FleetStatus)'s, in lower case:
//!   `connecting`, `live`, `fallback`, `conflict`, `detached`.
//!
//! Fleet mode's metrics (features `fleet` and `metrics`) are recorded by the sync task once per
//! sync interval, never by a call: a scope's handles are made when a fleet links it.
//!
//! # Series of forgotten scopes
//!
//! A named scope no one holds is forgotten once it has nothing to remember
//! ([How long a named scope lives](crate::Scope#how-long-a-named-scope-lives)): its handles
//! are dropped and its series are no longer recorded. The recorder keeps what it has: with
//! `metrics-exporter-prometheus`, a series is rendered with its last value until the
//! exporter's idle timeout removes it (`PrometheusBuilder::idle_timeout(MetricKindMask::ALL,
//! Some(timeout))`: series not updated for that long are dropped from the scrape and from the
//! exporter's memory); without one, the exporter keeps every series it ever saw. A program that
//! names scopes at run time (per tenant, per host) should set one, a few scrape intervals long.
//! A scope that comes back under the same name records into the same series (the recorder
//! hands out the same counter; Prometheus's counters stay monotonic while the exporter keeps
//! the series, and restart from 0 after it dropped it, which `rate()` reads as a reset).
//!
//! The names follow OpenTelemetry's naming guidelines: lower case, a `retry.` namespace and
//! dot-separated levels, units as metadata (each metric is described to the recorder with its
//! unit) rather than in the name. One name then reads right in OpenTelemetry (an exporter from
//! `metrics` to OTLP keeps it), and Prometheus's exporter turns it into Prometheus's own
//! convention: `metrics-exporter-prometheus` replaces the dots, and with
//! `with_recommended_naming(true)` adds `_total` to counters and the unit to the seconds
//! histograms, as in the second column. Histograms are summaries there unless buckets are set
//! (`set_buckets_for_metric`).
//!
//! # Costs and their rules
//!
//! * Handles are made once per scope, when the scope is made (its first call, for a
//!   `#[retryable]` fn's scope; `Scope::new` / `Scope::named` otherwise), with the recorder
//!   installed then: **install the recorder before the first call** (or before building the
//!   strategies). A handle made before any recorder is installed records nothing, for good (the
//!   facade's rule). No call looks a metric up.
//! * A call whose first attempt succeeds records three things: one `retry.calls{outcome="success"}`,
//!   its one attempt in `retry.attempts` and in `retry.attempts_per_call`. Nothing else is on the
//!   success path: the gauges are set when the scope is made (the quota's level and capacity
//!   then, as [`Scope::stats`](crate::Scope::stats) gives them) and change on the retry path
//!   only, so a first-try success's reward to the quota shows at the next retry (read
//!   `Scope::stats` for exact levels at any time).
//! * A gauge with no meaning for a scope is absent, never 0: the quota's in a scope without a
//!   quota, the send rate in standard mode and in adaptive mode until the limiter engages (it is
//!   registered then, with the recorder installed at that moment).
//! * Measured on a call whose first attempt succeeds (`benches/benches/metrics.rs`,
//!   `benches/examples/instructions.rs`): without a recorder the feature costs about 19
//!   instructions (189 against 170 per `retry` call) and 1 ns; with metrics-exporter-prometheus's
//!   recorder, about 50 ns more (its own counters and histogram). No allocation either way
//!   (`benches/tests/alloc.rs --features metrics`).
//! * The library's strategies ([`StandardStrategy`](crate::StandardStrategy),
//!   [`AdaptiveStrategy`](crate::AdaptiveStrategy)) record; a strategy of one's own records
//!   nothing unless it does.
//!
//! ```
//! # fn main() {
//! // A recorder is installed first (e.g. `metrics_exporter_prometheus::PrometheusBuilder::new()
//! //     .with_recommended_naming(true).install()`), then the scopes record into it.
//! use retry_core::metrics;
//! assert_eq!(metrics::CALLS, "retry.calls");
//! assert_eq!(metrics::OUTCOME, "outcome");
//! # }
//! ```

pub(crate) mod describe;
pub(crate) mod names;

pub use names::{
    ATTEMPTS, ATTEMPTS_PER_CALL, BACKOFF_DELAY, CALLS, FLEET_GARBAGE, FLEET_LEASE_TOKENS,
    FLEET_PROCESSES, FLEET_RATE, FLEET_SHARE, FLEET_STATUS, FLEET_SYNCS, LIMITER_RATE,
    LIMITER_WAIT, OUTCOME, QUOTA_CAPACITY, QUOTA_LEVEL, REASON, RESULT, RETRIES, SCOPE, STATUS,
};
pub use names::{HEDGES_CANCELLED, HEDGES_REFUSED, HEDGES_SENT, HEDGES_WON, REFUSAL};
