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
//! At start-up, connect the process to the fleet's store and attach the scopes its calls use,
//! by name. A fleet scope is a scope: its settings are those of its declaration
//! (`#[retryable(scope = "inventory")]`, [`strategy_for`](crate::strategy_for)`(config,
//! "inventory")` and `RetryLayer` on it, [`Scope::named`](crate::Scope::named)), written once
//! there; attaching never asks for them again, and works before or after the declaration (a
//! scope calls already used is upgraded in place).
//!
//! ```no_run
//! use retry_core::fleet::Fleet;
//! use std::time::Duration;
//!
//! # async fn start() -> Result<(), retry_core::fleet::FleetError> {
//! let fleet = Fleet::connect("redis://app:secret@redis.internal:6379/0")? // rediss://, redis-cluster://
//!     .prefix("shop:")                          // every key under it (default "retry:")
//!     .sync_interval(Duration::from_secs(1))    // the default
//!     .start()
//!     .await?;
//! fleet.attach("inventory")?; // `#[retryable(scope = "inventory", ...)]` declares it
//! // ... keep `fleet` for the process's lifetime: dropping it stops the syncs.
//! # Ok(()) }
//! ```
//!
//! Two declarations of one scope name must agree on its settings
//! ([`SCOPE_SETTINGS`](crate::scope::SCOPE_SETTINGS)): the second is a
//! [`ScopeConflict`](crate::scope::ScopeConflict), logged as an ERROR event naming both (or
//! returned, by [`Scope::declare`](crate::Scope::declare)), and the scope keeps the first's.
//!
//! The fleet syncs the scopes that are attached and live: a scope that only the fleet holds
//! (no strategy, layer or handle of the program's) for its `quota_window` is forgotten and
//! detached, so a process that names scopes at run time syncs those in use, not every name it
//! ever made ([`Fleet::scopes`] lists them). The name stays attached: declared again, the
//! scope is a new young one, linked at the next sync.
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
//! # Redis Cluster
//! A fleet's store may be a Redis Cluster (self-run, or a managed service in cluster mode):
//! give its seed nodes as one URL, `redis-cluster://[user[:password]@]host:port?node=host:port
//! &node=host:port` (`rediss-cluster://` over TLS; the spelling of fred, the other async Redis
//! client of the Rust ecosystem), or as a list with
//! [`Fleet::connect_cluster`]`(["redis://host:port/", ...])`. One node is enough; redis-rs'
//! cluster client finds the others, routes every command to the master of its slot and follows
//! `MOVED` and `ASK` redirections and topology changes itself. A scope's three keys share one
//! hash tag (its name), so each scope lives on one master and its step is one script there;
//! the scopes of a fleet spread over the masters.
//!
//! ```no_run
//! use retry_core::fleet::Fleet;
//!
//! # async fn start() -> Result<(), retry_core::fleet::FleetError> {
//! let fleet = Fleet::connect("redis-cluster://app:secret@10.0.0.1:7000?node=10.0.0.2:7000")?
//!     .start()
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! A process's sync stays one round trip per master whatever its number of scopes: its scopes
//! are grouped by the master of their slot (the slot map `CLUSTER SLOTS` gives) into one
//! pipeline per master, sent at once. A pipeline the cluster refuses (a slot moved or
//! migrating: redis-rs would send it whole again, running its other scripts twice) is a sync in
//! doubt for its scopes, as a lost reply is; the map is read again, and those scopes sync one
//! by one, through the client's redirections, for the next three syncs. A pipeline that only
//! timed out (a slow master) changes nothing: sending its scopes one by one would only add to
//! the master's load.
//!
//! **A master killed, its replica promoted** (or a slot migrated, resharding) is survived as a
//! flushed or restarted store is: no call waits (each decides from local state); the scopes on
//! that master miss the syncs of the failover (about two node timeouts), their leases hold
//! three intervals and then fall back to the safe share; the first sync after the promotion
//! makes them live again, and a new master that had not replicated the scope's state re-learns
//! it from the reports without a burst. Redis replicates asynchronously: a report acknowledged
//! by a master that died before its replica got it is lost (an undercount, which errs toward
//! fewer tokens); one the cluster client sent again after its connection broke may count twice.
//!
//! Measured on a local cluster (6 `redis-server` processes, node timeout 500 ms, 8 processes,
//! a loaded 2-core machine; the repository's `docs/fleet-cluster.md` has every figure):
//!
//! * A failover (1.7-2.0 s from the kill to every slot served) and a migration, not throttled,
//!   250 ms interval, two runs: call p99 4.0-4.6 ms before, 5.7-12.0 ms during the failover and
//!   6.7-7.4 ms during the migration (a call waiting on a sync would take the 62 ms command
//!   timeout); the leases lapsed in the failover and were all live again 173 and 234 ms after
//!   the promotion (`cargo run -p fleet-harness --release -- run --redis-cluster --phases
//!   fleet,fleet+faults --limit 5000 --sync-interval 250ms --fault 10s:failover --fault
//!   25s:migrate --duration 40s --warmup 5s`).
//! * The same faults under a 500/s limit, 1 s interval: at most 0.948x (failover) and 0.938x
//!   (migration) of the limit admitted in any second, no 429, no lease lapsed (`... run
//!   --redis-cluster --phases fleet+faults --enforce-after 10s --fault 25s:failover --fault
//!   40s:migrate --duration 55s --warmup 20s`).
//! * 100 scopes × 50 processes, 5 s interval: 984 and 988 script runs a second at 2 and 20
//!   calls per process per second (flat in the request rate), about one round trip per
//!   process per master per interval (1.07-1.39), 158-183 µs of a master's CPU per scope-sync:
//!   a master at half a core carries about 3,000 scope-syncs a second (`... run
//!   --redis-cluster --processes 50 --scopes 100 --phases fleet@2,fleet@20 --limit 5000
//!   --sync-interval 5s --duration 40s --warmup 15s --cluster-node-timeout 5s`).
//!
//! # What the store's user needs (managed Redis)
//! Nothing in fleet mode needs a command managed services refuse (`CONFIG`, `DEBUG`, `KEYS`,
//! `SCRIPT` but `LOAD`, `TIME` in a script): the processes send `PING`, `SCRIPT LOAD`,
//! `EVALSHA` and `EVAL` (and `AUTH`/`HELLO` when connecting; redis-rs also sends `CLIENT
//! SETINFO`, whose refusal it ignores), and the store script runs `HGET`, `HGETALL`, `HSET`,
//! `HDEL`, `DEL`, `ZADD`, `ZCARD`, `ZRANGEBYSCORE`, `ZREM`, `PEXPIRE` and `TYPE` on the prefix's keys,
//! which Redis's ACL checks too. On a cluster, the cluster client reads the slots with `CLUSTER
//! SLOTS`. A least-privileged user:
//!
//! ```text
//! ACL SETUSER fleet on >secret ~retry:* resetchannels -@all +ping +auth +hello +script|load
//!     +evalsha +eval +hget +hgetall +hset +hdel +del +zadd +zcard +zrangebyscore +zrem +pexpire
//!     +type +cluster|slots
//! ```
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
//! rate:
//! * the process's first throttle under a lease (of an attempt sent since the lease) steps its
//!   rate down once, to 0.7 times it (the AWS SDKs' `BETA`), until the next lease sets the
//!   fleet's rate again; its other responses move no rate. The fleet hears of its overshoot a
//!   sync interval or two late, and a small fleet with a long sync sent more over the limit
//!   than its processes in local mode: on a real clock (fleet-harness, 8 processes against
//!   98/s with a 4.9 s sync, the limit falling under them; one run each) 1.80x the limit in
//!   its busiest second, 1.13x with the step, for the same calls served
//!   (`docs/fleet-harness.md`, section N, and `docs/sim/fleet.md`);
//! * a share is honoured as it is, below the AWS SDKs' floor of 0.5/s too (1000 processes
//!   sharing 500/s have about 0.5/s each: floored, they sent ~590/s into the 500/s limit in
//!   the simulator);
//! * a process with no share sends at that floor, or at the fleet's rate over its live
//!   processes if less: never blocked, and 10,000 floors stay within the fleet's rate;
//! * the bucket starts with one permit when the fleet limiter engages (empty, every process
//!   would wait a whole period for its first send, and the fleet go quiet just after its first
//!   throttle), and holds a tenth of a second of the share, at least one permit, not the AWS
//!   SDKs' second: a process back from an idle spell would send a second of its share at once,
//!   which a server's bucket smaller than that throttles (fleet-harness on a real clock, 2
//!   on/off processes against 151/s and a bucket of 8, three runs: a 16-27 % 429 share, under
//!   1 % with a tenth);
//! * one lease raises the process's rate at most 1.25x the last one's, and its share of the
//!   fleet's rate at most 1.1x, and only after three leases in a row counted about as many
//!   live processes (within a twentieth of the last count); or to the fleet's rate over its
//!   live processes if that is more, unless the lease counts under half the live processes of
//!   the last one (a store that lost its state hands its first reporters the shares of all,
//!   and shares by moving demands for a few reports after; a corrupt one cannot make a process
//!   burst).
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
//!   its live processes if the last lease found the fleet failing, but never under a young
//!   scope's tokens while the scope is younger than its window; the local quota if it found
//!   it healthy, as a live lease keeps what local mode would grant; the limiter held at its
//!   last share of the fleet's rate: a thousand processes each growing their own rate again
//!   would send the limit many times over); the
//!   backend reconnects with jittered backoff, and the next successful sync makes the lease
//!   live again. Only a detached scope (its `Fleet` dropped) goes back to the local rules, from
//!   that share.
//! * **Writes failing for part of the fleet** (Redis at `maxmemory` with `noeviction`, an ACL
//!   refusing some processes' user, a process cut off from Redis alone): the store hears the
//!   others and expires the silent ones after their lease, while those may still be sending at
//!   their last share (the fallback above). So an expired process's send demand is not handed
//!   on at once: it stays in the sum the shares are taken of, released over about a lease
//!   (`1 - 1/e` of it per lease, all of it within a few), and the others' shares grow as it
//!   goes; the fleet limiter's cuts, measured on the heard processes' throttles, meet the silent
//!   ones' traffic before the others have taken their share. The cost: a crashed process's
//!   share stays idle for that time. In the simulator (8 processes, 500/s, 1 s sync,
//!   `cargo test -p retry-sim --release --test fleet_partial_writes`): writes failing for 3 of
//!   8, busiest second 1.204x the limit -> 1.078x; 3 of 8 crashed, the live ones back at 0.95
//!   of their demand after 4 s -> 7 s. The cuts made while some processes were unheard
//!   measured the others alone: when one of those processes reports again (it knew the
//!   fleet, so it was alive), the fleet's limit returns to the one its rate had before them,
//!   instead of holding the fault's low measure for the rest of the run.
//! * **A process that shuts down cleanly** ([`Fleet::shutdown`], or its last `Fleet` clone
//!   dropped on a tokio runtime) tells the store it leaves: its record goes and its share of
//!   the fleet's rate goes to the others at their next sync, not over a lease as a crashed
//!   (silent) process's does. If the store cannot be told, its share is handed on as a crashed
//!   one's (a warning, `fleet leave failed`).
//! * **Redis flushed, restarted empty or failed over**: the script is sent again (`NOSCRIPT`,
//!   then `EVAL`) and the store re-learns from what the processes hold and the rate they knew:
//!   nothing is granted that no process accounts for, and no lease raises a process's rate
//!   more than the rule above allows, so no burst follows.
//! * **Unreachable at start-up**: [`FleetBuilder::start`] logs a warning and starts anyway: the
//!   scopes run on their local limits until the store answers. What needs fixing is an error
//!   there instead, naming the fix: a wrong URL; a refused password, or a store asking for one
//!   the URL does not give; `rediss://` to a port that speaks plain text, or `redis://` to one
//!   that expects TLS (told from an unreachable store by one more connection); a user without
//!   scripting, or without the prefix's keys or the script's commands on them.
//!   [`FleetStats::last_error`] keeps the kind of the last error a scope's sync met, and
//!   [`Fleet::last_error`] the whole error.
//! * **A Redis Cluster's master failing over, a slot migrating**: see [Redis
//!   Cluster](#redis-cluster).
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
//!   protocol's bounds ([`store_state::ProcessRecord::in_bounds`]: another client wrote it),
//!   a fleet state out of the bounds the script writes
//!   ([`store_state::FleetState::in_bounds`]: a birth or a cut after the store's clock, a
//!   rate over a million a second, a negative sum, the curve held longer than since its cut,
//!   settings no process could send), sums of the leases and demands that disagree with the
//!   records (counted again once a lease), a process seen after the store's clock, or a key of another type than the script writes is a lost
//!   state: dropped and re-learned
//!   (the rate the processes knew adopted, the fleet's age kept). The reply of the sync that
//!   dropped it says so ([`protocol::Lease::dropped`]): the process warns (`fleet store dropped
//!   garbage`, naming the scope and what, once per run of such syncs), counts it
//!   ([`FleetStats::garbage_dropped`], the `retry.fleet.garbage` counter) and goes on serving
//!   on its lease.
//!
//! # The protocol, in a few lines
//! * A [`Report`](protocol::Report) (per process and scope, since its last sync): calls ended,
//!   first-try successes, tokens held now, tokens its retries wanted, were granted and gave
//!   back, attempts sent and throttled, its send demand, the fleet rate and store birth it last
//!   knew; with the scope's [`Settings`](protocol::Settings) (the window, the quota's sizes,
//!   the interval, the lease, the limiter's beta, a hash of the rest).
//! * The store's step ([`store_model::step`], and the same step as a Lua script run by `EVALSHA`):
//!   the fleet's cap is its calls per second times the window (the AWS SDKs' 500 at least while the
//!   fleet is younger than its window); tokens go to processes by their share of the retry demand
//!   (one retry's cost at least), to a new process its fair share, never a private budget; over the
//!   cap, leases are trimmed by negative grants. A throttle measures the limit as the rate the
//!   server admitted over the last tick (the admissions its reports tell about, scaled up by the
//!   share of the fleet's send demand those reports carry, each weighed by its span: the time
//!   since its process's last report or, later, its scope's first response; a report before a
//!   scope's first traffic spans nothing and weighs nothing; for a cold fleet's first cut, at
//!   least the admitted traffic over its reports' spans so far times the processes: most of its
//!   first traffic is still to be reported; while it climbs from an estimate, at least the
//!   current tick's so far, as the last tick lags the climb; before a re-learned fleet's first
//!   whole tick, at least its own rate) and cuts the fleet's rate, once per sync interval (the
//!   fleet's round trip), to beta times its target, 3 % under that limit. A fleet not yet cut waits
//!   for its first until it has a whole tick, 10 admitted attempts in the current one, or a sync
//!   interval of age (a report of a process's first milliseconds measures next to nothing). A cut
//!   under beta times a limit the fleet held, with at most 5 % of the tick throttled, measured the
//!   fleet's own fall after its last cut, not the server: the limit is then beta times the held
//!   one, one step down. A throttle on a fleet held at a limit it measured (not probing past it)
//!   that would cut under that limit but not under beta times it, with at most 0.5 % of the last
//!   two ticks' attempts throttled, is the server's bucket's edge (a few requests arriving
//!   together), not a lower limit: no cut.
//!   Between cuts the rate regains the target along the library's CUBIC curve, holds it for 30 s,
//!   probes past it linearly (0.25 % a second for 60 s), then grows along CUBIC again (at once
//!   after an estimate: a cold fleet's first cut, or a cut more than 10 % over an estimate, which
//!   measured the climb from it, or at or over one within two sync intervals of it, which measured
//!   ticks from before it took effect); a tick in which the fleet sent under half the rate its
//!   processes were given, and wanted less than it, does not move the curve on past the target, so
//!   a fleet that does not use its rate keeps it where it is instead of growing it unused; a store
//!   that lost its state adopts the lowest rate its processes knew as the target (each process's
//!   first report after the loss tells it; later ones tell the re-learning store's own rate), and
//!   judges a throttle against it at once. Below the limit, because a fleet of many small senders
//!   varies by a few percent from one second to the next: at the limit, its busiest seconds are
//!   7-10 % over it. Each process sends at its share of the fleet's send demand (smoothed over
//!   four reports; an expired process's demand counted while it is released, over about a
//!   lease).
//! * A [`Reply`](protocol::Reply): the grant (tokens to add or give back), the fleet's cap, the
//!   live processes, whether the fleet limiter is engaged, the fleet's rate and the process's
//!   share of it, the fleet's tokens (below half the cap, the fleet counts as failing; none
//!   while fewer than half the fleet's calls are first-try successes), and the
//!   garbage the step dropped; or a conflict with the stored settings. A negative grant never
//!   takes what the process's local rules would let its retries find for its own traffic
//!   (the young scope's 500 while young) unless the fleet is failing, and never a young
//!   scope's 500: fleet mode refuses no retry local mode would grant while the fleet's calls
//!   mostly succeed ([`lease::LeaseHolder`]). Every value is checked against its
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
//! A larger lead stops the store's time for the others: once a host whose clock runs ahead
//! stops reporting (or after another client wrote the state's `now`), no tick ends, no
//! throttle cuts the fleet and no silent process expires until their clocks reach it. So a
//! process refuses a reply whose clock leads its own when the reply came by more than
//! [`protocol::MOST_STORE_CLOCK_LEAD_MS`] (10 s): a sync refused (`result="refused"` in
//! `retry.fleet.syncs`, the "fleet reply refused" warning naming both clocks, the
//! [`FleetErrorKind::Protocol`] last error), its lease expires into local limits, and it takes
//! leases again once the clocks agree.
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
//! out or broke (a cluster's client reconnects to its nodes by itself), and reconnects with
//! jittered exponential backoff capped at one sync interval. It sends `AUTH` (with the
//! connection's set-up), then `PING`, before the 31 KB script: Redis closes an
//! unauthenticated connection that sends a long argument.
//! A server that lost the script (`NOSCRIPT`: flushed, restarted empty, failed over) is sent it
//! again by `EVAL`; a store that lost the scope's state re-learns it from the reports: its pool
//! starts at 0 and it adopts the lowest fleet rate the processes knew, so no burst follows.

mod address;
mod cluster;
mod connect;
mod connection;
mod diagnose;
mod error;
mod events;
#[doc(hidden)]
pub mod keys;
pub mod lease;
pub(crate) mod link;
mod meter;
mod options;
pub mod protocol;
mod reconnect;
#[doc(hidden)]
pub mod redis;
mod scope_settings;
mod slot_map;
mod state_codec;
mod status;
pub mod store_model;
mod store_options;
pub mod store_state;
mod sync;
mod tls;

pub use connect::{Fleet, FleetBuilder};
pub use error::{FleetError, FleetErrorKind, ProtocolError};
pub use options::{DEFAULT_BETA, DEFAULT_LEASE_INTERVALS, DEFAULT_SYNC_INTERVAL, FleetOptions};
pub use scope_settings::FINGERPRINTED;
pub use status::{FleetStats, FleetStatus};
