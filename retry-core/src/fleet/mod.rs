//! Fleet mode: processes that name the same scope share one retry budget and one adaptive
//! limiter through Redis (or Valkey), while every call still decides locally.
//!
//! Every protection of a retry library stops at the process boundary: each process holds its
//! own retry quota (the AWS SDKs' retry quota, gRPC's retry throttling, Finagle's and Linkerd's
//! retry budgets) and learns a server's limit alone from its own throttles (the AWS SDKs'
//! adaptive mode). A fleet of a thousand small processes then has a thousand budgets in an
//! outage and a thousand limiters that each see too few throttles to learn anything. Asking a
//! shared store on every request instead (as Envoy's global rate limiting asks its rate-limit
//! service) puts a round trip on every call and makes the store's load follow the request
//! rate.
//!
//! In fleet mode no call waits on the store. Each process syncs in the background, once per
//! sync interval for all its fleet scopes: it reports what it saw since its last sync and
//! receives its lease, a share of the fleet's retry tokens and of the fleet's send rate. The
//! store's load follows the number of processes and the interval, never the request rate.
//!
//! # Attaching scopes
//! At start-up, connect the process to the fleet's store and attach the scopes its calls use.
//! A fleet scope is a scope: `#[retryable(scope = "inventory")]`,
//! [`strategy_for`](crate::strategy_for)`(config, "inventory")` (and `RetryLayer` on it) and
//! [`Scope::named`](crate::Scope::named) use it unchanged, and a scope calls already used is
//! upgraded in place.
//!
//! ```no_run
//! use retry_core::RetryConfig;
//! use retry_core::fleet::Fleet;
//! use std::time::Duration;
//!
//! # async fn start() -> Result<(), retry_core::fleet::FleetError> {
//! let fleet = Fleet::connect("redis://app:secret@redis.internal:6379/0")? // or rediss://
//!     .prefix("shop:")                          // every key under it (default "retry:")
//!     .sync_interval(Duration::from_secs(1))    // the default
//!     .start()
//!     .await?;
//! let inventory = fleet.attach("inventory", &RetryConfig::default())?;
//! // ... keep `fleet` for the process's lifetime: dropping it stops the syncs.
//! # Ok(()) }
//! ```
//!
//! # TLS, passwords and ACL users
//! The URL carries the user and password (`redis://user:password@host:port/db`: `AUTH` with
//! an ACL user, or the password alone for the default user). `rediss://` URLs (feature
//! `fleet-tls`, rustls) check the server's certificate against the system's root certificates,
//! or against a private CA given with
//! [`tls_root_certificates`](FleetBuilder::tls_root_certificates);
//! [`tls_client_certificate`](FleetBuilder::tls_client_certificate) presents a client
//! certificate to a server that asks for one. Bad PEM, an untrusted server certificate, a
//! refused client certificate and a refused password are errors at
//! [`start`](FleetBuilder::start).
//! `fleet-tls` brings rustls with its `ring` provider; a program whose other dependencies
//! enable a second rustls provider (`aws-lc-rs`, as some TLS stacks do by default) must install
//! one as the process default (`CryptoProvider::install_default`) before `start`, as rustls
//! requires of every program with two providers.
//!
//! Every process attaching a scope must use the same configuration and options: the store
//! keeps the first one's ([`protocol::Settings`]: the quota's sizes, the interval, the lease,
//! the beta, and a fingerprint of [`FINGERPRINTED`]); a process with others gets a conflict,
//! logs one warning naming the setting, and runs on its local limits.
//!
//! # What the stats say
//! [`ScopeStats::fleet`](crate::scope::ScopeStats::fleet) ([`FleetStats`]): the status
//! ([`FleetStatus`]: `Connecting` before the first lease, `Live`, `Fallback` after the lease
//! expired, `Conflict`, `Detached` once the `Fleet` is dropped), the tokens the last lease left
//! the process, the fleet's cap and live processes, the fleet's rate and this process's share
//! of it (while the fleet limiter is engaged), and how long ago the last successful sync began.
//!
//! While the lease is live, the scope's quota holds the lease (the local rules that size a
//! quota by its own traffic are off: the fleet's cap follows the fleet's traffic) and, once a
//! throttle engaged the fleet limiter, the limiter sends at the process's share of the fleet's
//! rate and its own responses move no rate:
//! * a share is honoured as it is, below the AWS SDKs' floor of 0.5/s too (1000 processes
//!   sharing 500/s have about 0.5/s each: floored, they sent ~590/s into the 500/s limit in
//!   the simulator);
//! * a process with no share sends at that floor, or at the fleet's rate over its live
//!   processes if less: never blocked, and 10,000 floors stay within the fleet's rate;
//! * the bucket starts with one permit when the fleet limiter engages (empty, every process
//!   would wait a whole period for its first send, and the fleet go quiet just after its first
//!   throttle);
//! * one lease raises the process's rate at most 1.25x the last one's, and its share of the
//!   fleet's rate at most 1.1x, and only after three leases in a row counted the same live
//!   processes; or to the fleet's rate over its live processes if that is more (a store that
//!   lost its state hands its first reporters the shares of all, and shares by moving demands
//!   for a few reports after; a corrupt one cannot make a process burst).
//!
//! The process side is [`lease::LeaseHolder`],
//! plain logic on explicit times: a simulator drives it in virtual time against
//! [`store_model::step`].
//!
//! # Faults
//! * **Redis down, paused or slow**: a sync fails at its command timeout (a quarter of the
//!   interval by default); calls carry on from local state, none waits; the lease holds until
//!   `last successful sync + lease` (3 intervals by default), then the scope falls back to local
//!   limits at a safe share of the last fleet figures (the quota capped at the fleet's cap over
//!   its live processes, the limiter held at its last share of the fleet's rate: a thousand
//!   processes each growing their own rate again would send the limit many times over); the
//!   backend reconnects with jittered backoff, and the next successful sync makes the lease
//!   live again. Only a detached scope (its `Fleet` dropped) goes back to the local rules, from
//!   that share.
//! * **Redis flushed, restarted empty or failed over**: the script is sent again (`NOSCRIPT`,
//!   then `EVAL`) and the store re-learns from what the processes hold and the rate they knew:
//!   nothing is granted that no process accounts for, and no lease raises a process's rate
//!   more than the rule above allows, so no burst follows.
//! * **Unreachable at start-up**: [`FleetBuilder::start`] logs a warning and starts anyway: the
//!   scopes run on their local limits until the store answers. A wrong URL, a refused password
//!   or a user without scripting is an error there instead.
//! * **Reports in doubt**: a report whose reply was lost may have been applied: its counts are
//!   not sent again (counted at most once: a lost interval makes the store undercount, which
//!   errs toward fewer tokens and a lower rate). A report that never left the process passes
//!   its calls and tokens to the next, but not its attempts sent and throttled: the store
//!   measures rates per interval, and an outage's sends told at once would read as a rate many
//!   times the fleet's. What a process holds is reported as a level, so tokens reconcile at
//!   the next sync.
//! * **A hostile or corrupt store**: every value of a reply is checked against its bounds and
//!   the report it answers ([`protocol::Reply::decode`]); a reply out of bounds is refused (a
//!   warning; the lease stays as it was). In the store, a process's record out of the
//!   protocol's bounds ([`store_state::ProcessRecord::in_bounds`]: another client wrote it)
//!   or a key of another type than the script writes is a lost state: dropped and re-learned
//!   (the rate the processes knew adopted, the fleet's age kept).
//!
//! # The protocol, in a few lines
//! * A [`Report`](protocol::Report) (per process and scope, since its last sync): calls ended,
//!   first-try successes, tokens held now, tokens its retries wanted, were granted and gave
//!   back, attempts sent and throttled, its send demand, the fleet rate and store birth it last
//!   knew; with the scope's [`Settings`](protocol::Settings) (the window, the quota's sizes,
//!   the interval, the lease, the limiter's beta, a hash of the rest).
//! * The store's step ([`store_model::step`], and the same step as a Lua script run by
//!   `EVALSHA`): the fleet's cap is its calls per second times the window (the AWS SDKs' 500
//!   at least while the fleet is younger than its window); tokens go to processes by their
//!   share of the retry demand (one retry's cost at least), to a new process its fair share,
//!   never a private budget; over the cap, leases are trimmed by negative grants. A throttle
//!   measures the limit as the rate the server admitted over the last tick (for a cold fleet's
//!   first cut, at least the admitted traffic per report so far times the processes: most of
//!   its first traffic is still to be reported) and cuts the fleet's rate, once per sync
//!   interval (the fleet's round trip), to beta times its target, 3 % under that limit;
//!   between cuts the rate regains the target along the library's CUBIC curve, holds it for
//!   30 s, probes past it linearly (0.25 % a second for 60 s), then grows along CUBIC again
//!   (at once after a cold fleet's first cut, an estimate); a store that lost its state adopts
//!   the lowest rate its processes knew as the target. Below the limit, because a fleet of many
//!   small senders varies by a few percent from one second to the next: at the limit, its
//!   busiest seconds are 7-10 % over it. Each process sends at its share of the fleet's send
//!   demand (smoothed over four reports).
//! * A [`Reply`](protocol::Reply): the grant (tokens to add or give back), the fleet's cap, the
//!   live processes, whether the fleet limiter is engaged, the fleet's rate and the process's
//!   share of it; or a conflict with the stored settings. Every value is checked against its
//!   bounds when decoded: a corrupt or hostile store cannot grant more than the cap or a
//!   negative share.
//!
//! All of it is integers below 2^53 (tokens, thousandths of a request per second, parts per
//! million, milliseconds), so that the script (Lua's numbers are doubles) and the model give
//! bit-identical results; a differential test runs one sequence through both.
//!
//! # Time: the processes' clocks, not Redis `TIME`
//! Each report carries its process's clock (Unix milliseconds) and the store keeps the latest
//! it has seen (`now = max(stored, reported)`: a process whose clock lags cannot move the
//! store's time back). Redis before 5.0 refuses writes after a non-deterministic command such
//! as `TIME` in a script unless the script calls `redis.replicate_commands()`, and managed
//! offerings may not allow it (Redis docs, "Scripting with Lua", script replication): passing
//! the time keeps the script deterministic everywhere and lets the model take the very same
//! input. Skew between processes (NTP keeps it to milliseconds) shifts expiries by as much.
//!
//! # Keys
//! Per scope, under a configurable prefix (default `retry:`), the protocol's version in every
//! key so that a later version keeps its state apart:
//! * `retry:{<scope>}:v1:state`: a hash, the fleet's state ([`store_state::FleetState`]);
//! * `retry:{<scope>}:v1:procs`: a hash, process id to `lease:owed:retry_demand:send_demand`;
//! * `retry:{<scope>}:v1:seen`: a sorted set, process id by when it last reported, so that
//!   silent processes expire in `O(log n)`.
//!
//! The scope's name, percent-encoded, is the keys' Redis Cluster hash tag (the part between
//! `{` and `}`), so one scope's three keys live on one shard and one script can update them
//! atomically (Redis docs, "Redis cluster specification", hash tags; scripts must name every
//! key they touch in `KEYS`).
//!
//! # The backend
//! The Redis backend times out every connection and command, drops a connection that timed
//! out or broke, and reconnects with jittered exponential backoff capped at one sync interval.
//! A server that lost the script (`NOSCRIPT`: flushed, restarted empty, failed over) is sent it
//! again by `EVAL`; a store that lost the scope's state re-learns it from the reports: its pool
//! starts at 0 and it adopts the lowest fleet rate the processes knew, so no burst follows.

mod connect;
mod error;
mod events;
#[doc(hidden)]
pub mod keys;
pub mod lease;
pub(crate) mod link;
mod options;
pub mod protocol;
mod reconnect;
#[doc(hidden)]
pub mod redis;
mod scope_settings;
mod state_codec;
mod status;
pub mod store_model;
pub mod store_state;
mod sync;
mod tls;

pub use connect::{Fleet, FleetBuilder};
pub use error::{FleetError, ProtocolError};
pub use options::{DEFAULT_BETA, DEFAULT_LEASE_INTERVALS, DEFAULT_SYNC_INTERVAL, FleetOptions};
pub use scope_settings::FINGERPRINTED;
pub use status::{FleetStats, FleetStatus};
