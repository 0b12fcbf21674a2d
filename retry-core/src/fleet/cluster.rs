//! The store on a Redis Cluster, through redis-rs' cluster client: the client routes every
//! command to the master of its slot and follows `MOVED` / `ASK` redirections and topology
//! changes (a failover, a slot migrated) itself. This module only chooses which scopes of a sync
//! share a pipeline: those whose slots one master serves, by the slot map `CLUSTER SLOTS` gives
//! ([`SlotMap`]), so that a process's sync is one round trip per master whatever its number of
//! scopes.
//!
//! Two clients, alike but for their retries. Pipelines go through one that never sends a
//! command again: a pipeline that met a redirection ran part of its scripts, and redis-rs would
//! send it whole again, running those twice. A pipeline refused whole (a slot moved or
//! migrating, a master failing over) is a sync in doubt for its scopes, as a lost reply is; the
//! map is read again before the next sync, and the refused pipeline's scopes are synced alone
//! for the next [`ALONE_SYNCS`] syncs. A scope alone goes through the same client first (so that
//! it learns a moved slot from the redirection), and, if the cluster did not run it, through
//! the other client, which follows redirections.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::future::join_all;
use redis::aio::ConnectionLike as _;
use redis::cluster::{ClusterClient, ClusterClientBuilder};
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::{Route, RoutingInfo, SingleNodeRoutingInfo, SlotAddr};
use redis::{Cmd, ErrorKind, RedisError, RedisResult, ServerErrorKind, Value};

use super::slot_map::SlotMap;
use super::store_options::StoreOptions;
use super::tls::StoreTls;

/// How many syncs a scope whose pipeline was refused goes alone (through the client's
/// redirections) before it shares a pipeline again: a migration or failover in progress
/// costs its pipeline one sync, not one in two.
pub(crate) const ALONE_SYNCS: u32 = 3;

/// How many times the client sends a single command again (a redirection: `MOVED`, then
/// `ASK` at most; a master failing over; a connection lost): the command timeout bounds them
/// all. Each retry after a failure makes redis-rs read the slots again and `PING` every master.
const ROUTED_RETRIES: u32 = 2;

/// The fraction of the command timeout a retry waits at least (a master failing over, the
/// cluster asking to wait with `TRYAGAIN` or `CLUSTERDOWN`): redis-rs' default, 1.28 s, is
/// longer than a sync's timeout, and a few milliseconds would have every process of a fleet
/// read the slots and `PING` every master in a tight loop while a master is down (about 45
/// times a second per process on loopback, where a dead node's port refuses at once).
const MIN_RETRY_WAIT_FRACTION: u32 = 5;

/// The cluster's clients.
#[derive(Debug, Clone)]
pub(crate) struct ClusterClients {
    /// For pipelines: never sends a command again.
    pipelined: ClusterClient,
    /// For single commands: follows redirections.
    routed: ClusterClient,
}

/// A connection of each client: each holds a connection to every master.
#[derive(Clone)]
pub(crate) struct ClusterConnections {
    pipelined: ClusterConnection,
    routed: ClusterConnection,
}

impl std::fmt::Debug for ClusterConnections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterConnections")
    }
}

/// What became of one command of a sync.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The server's answer (its error for this command among them).
    Answered(RedisResult<Value>),
    /// The server's answer to a command sent alone that the cluster redirected first (its slot
    /// moved or migrating): answered through the client that follows redirections.
    Redirected(RedisResult<Value>),
    /// The pipeline it was part of was refused as a whole: the error, and whether the
    /// commands may have run.
    Refused(RedisError),
    /// No answer within the command timeout.
    TimedOut,
}

/// How a sync's scopes are grouped: the slot map, whether it must be read again, and the
/// slots synced alone for a few more syncs.
#[derive(Debug, Default)]
pub(crate) struct Grouping {
    map: SlotMap,
    stale: bool,
    alone: HashMap<u16, u32>,
}

impl Grouping {
    /// Whether the map must be read before the next sync (none yet, or a pipeline failed).
    pub(crate) fn needs_map(&self) -> bool {
        self.stale || self.map == SlotMap::default()
    }

    /// Takes a map just read.
    pub(crate) fn set_map(&mut self, map: SlotMap) {
        self.map = map;
        self.stale = false;
    }

    /// The groups of a sync of scopes in `slots`: one per master of the map, and one per slot
    /// synced alone (or not in the map).
    pub(crate) fn plan(&self, slots: &[u16]) -> Vec<Vec<usize>> {
        let (alone, shared): (Vec<usize>, Vec<usize>) =
            (0..slots.len()).partition(|index| self.alone.contains_key(&slots[*index]));
        let shared_slots: Vec<u16> = shared.iter().map(|&index| slots[index]).collect();
        let mut groups: Vec<Vec<usize>> = self
            .map
            .group(&shared_slots)
            .into_iter()
            .map(|group| group.into_iter().map(|at| shared[at]).collect())
            .collect();
        groups.extend(alone.into_iter().map(|index| vec![index]));
        groups
    }

    /// Notes what became of a sync planned as `groups` over `slots`. The cluster moving a slot
    /// (a pipeline refused with a redirection, a command alone redirected) makes the map stale
    /// and the group's slots go alone for [`ALONE_SYNCS`] syncs; a pipeline refused otherwise
    /// (its master gone: the client reads the slots again by itself) makes the map stale; a
    /// timeout changes nothing (a slow master is no moved slot, and scopes alone would send it
    /// one command each). A slot that synced alone without a redirection counts down to
    /// sharing a pipeline again.
    pub(crate) fn note(&mut self, slots: &[u16], groups: &[Vec<usize>], outcomes: &[Outcome]) {
        for group in groups {
            let outcome = |index: &usize| &outcomes[*index];
            let moved = group.iter().any(|index| match outcome(index) {
                Outcome::Redirected(_) => true,
                Outcome::Refused(error) => is_topology_change(error),
                Outcome::Answered(_) | Outcome::TimedOut => false,
            });
            if moved {
                self.stale = true;
                for &index in group {
                    self.alone.insert(slots[index], ALONE_SYNCS);
                }
                continue;
            }
            if group
                .iter()
                .any(|index| matches!(outcome(index), Outcome::Refused(_)))
            {
                self.stale = true;
            }
            if let [index] = group[..]
                && matches!(outcome(&index), Outcome::Answered(_))
                && let Some(left) = self.alone.get_mut(&slots[index])
            {
                *left -= 1;
                if *left == 0 {
                    self.alone.remove(&slots[index]);
                }
            }
        }
    }
}

impl ClusterClients {
    /// The clients for the cluster of `seeds` (node URLs), with the TLS material given and
    /// `options`' timeouts; connects nothing.
    pub(crate) fn open(
        seeds: &[String],
        tls: &StoreTls,
        options: &StoreOptions,
    ) -> RedisResult<Self> {
        let min_wait = millis(options.command_timeout / MIN_RETRY_WAIT_FRACTION).max(1);
        let builder = |retries: u32| -> RedisResult<ClusterClient> {
            let builder = ClusterClientBuilder::new(seeds.iter().map(String::as_str))
                .retries(retries)
                .min_retry_wait(min_wait)
                .max_retry_wait(millis(options.command_timeout / 2).max(min_wait + 1))
                .connection_timeout(options.connect_timeout)
                .response_timeout(response_timeout(options));
            tls.apply_to_cluster(builder).build()
        };
        Ok(Self {
            pipelined: builder(0)?,
            routed: builder(ROUTED_RETRIES)?,
        })
    }

    /// Connects both clients to the cluster (each reads the slots and connects to every
    /// master).
    pub(crate) async fn connect(&self) -> RedisResult<ClusterConnections> {
        let (pipelined, routed) = futures_util::future::try_join(
            self.pipelined.get_async_connection(),
            self.routed.get_async_connection(),
        )
        .await?;
        Ok(ClusterConnections { pipelined, routed })
    }
}

impl ClusterConnections {
    /// Runs one command where the client routes it (following redirections).
    pub(crate) async fn query(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        cmd.query_async(&mut self.routed).await
    }

    /// Runs a pipeline whose commands share one slot (the client routes it by that slot,
    /// following redirections); one result per command.
    pub(crate) async fn query_pipeline(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> RedisResult<Vec<RedisResult<Value>>> {
        pipe.query_async(&mut self.routed).await
    }

    /// Reads the slot map (`CLUSTER SLOTS`, on a node the client picks).
    pub(crate) async fn slot_map(&mut self) -> RedisResult<SlotMap> {
        let mut cmd = redis::cmd("CLUSTER");
        cmd.arg("SLOTS");
        let value = self
            .routed
            .route_command(cmd, RoutingInfo::SingleNode(SingleNodeRoutingInfo::Random))
            .await?;
        Ok(SlotMap::from_cluster_slots(&value))
    }

    /// Runs `commands` (one per scope, the scope's slot in `slots`) as `groups` plan them, every
    /// group at once, each within `timeout`: a group of several as one pipeline to the master
    /// of its first slot, a group of one through the client's redirections. One outcome per
    /// command, in order.
    pub(crate) async fn run(
        &self,
        commands: &[Cmd],
        slots: &[u16],
        groups: &[Vec<usize>],
        timeout: Duration,
    ) -> Vec<Outcome> {
        let sends = groups.iter().map(|group| {
            let mut connections = self.clone();
            async move {
                let answer =
                    tokio::time::timeout(timeout, connections.send_group(commands, slots, group))
                        .await;
                (group, answer)
            }
        });
        let mut outcomes: Vec<Option<Outcome>> = commands.iter().map(|_| None).collect();
        for (group, answer) in join_all(sends).await {
            match answer {
                Ok(Ok(Sent::Pipeline(values))) => {
                    for (&index, value) in group.iter().zip(values) {
                        outcomes[index] = Some(Outcome::Answered(value.extract_error()));
                    }
                }
                Ok(Ok(Sent::Alone { answer, redirected })) => {
                    let answer = answer.and_then(Value::extract_error);
                    outcomes[group[0]] = Some(if redirected {
                        Outcome::Redirected(answer)
                    } else {
                        Outcome::Answered(answer)
                    });
                }
                Ok(Err(error)) => {
                    for &index in group {
                        outcomes[index] = Some(Outcome::Refused(error.clone()));
                    }
                }
                Err(_) => {
                    for &index in group {
                        outcomes[index] = Some(Outcome::TimedOut);
                    }
                }
            }
        }
        outcomes
            .into_iter()
            .map(|outcome| outcome.unwrap_or(Outcome::TimedOut))
            .collect()
    }

    /// Sends one group: a pipeline, or a command alone.
    async fn send_group(
        &mut self,
        commands: &[Cmd],
        slots: &[u16],
        group: &[usize],
    ) -> RedisResult<Sent> {
        if let [index] = group {
            return Ok(self.send_alone(&commands[*index]).await);
        }
        let mut pipe = redis::pipe();
        for &index in group {
            pipe.add_command(commands[index].clone());
        }
        let route = Route::new(slots[group[0]], SlotAddr::Master);
        let values = self
            .pipelined
            .route_pipeline(
                pipe,
                0,
                group.len(),
                SingleNodeRoutingInfo::SpecificNode(route),
            )
            .await?;
        if values.len() == group.len() {
            Ok(Sent::Pipeline(values))
        } else {
            Err(RedisError::from((
                ErrorKind::Parse,
                "the pipeline returned another number of replies than commands",
            )))
        }
    }
}

impl ClusterConnections {
    /// Sends one command through the client that never sends again; if the cluster did not run
    /// it (a redirection, a master failing over, no connection to the slot's master), sends
    /// it again through the client that follows redirections. The first client learns the
    /// moved slots from the redirection, so that the command's scope shares a pipeline again
    /// with a map that is right.
    async fn send_alone(&mut self, cmd: &Cmd) -> Sent {
        match self.pipelined.req_packed_command(cmd).await {
            Err(error) if did_not_run(&error) => Sent::Alone {
                answer: self.routed.req_packed_command(cmd).await,
                redirected: true,
            },
            answer => Sent::Alone {
                answer,
                redirected: false,
            },
        }
    }
}

/// What a group's send got back.
enum Sent {
    /// A pipeline's answers, one per command.
    Pipeline(Vec<Value>),
    /// A command alone's answer, and whether the cluster redirected it first.
    Alone {
        answer: RedisResult<Value>,
        redirected: bool,
    },
}

/// Whether a command that failed with `error` certainly did not run: the cluster redirected
/// it or asked to wait, or the client had no connection to send it on.
fn did_not_run(error: &RedisError) -> bool {
    is_topology_change(error) || error.kind() == ErrorKind::ClusterConnectionNotFound
}

/// Whether `error` says the cluster is moving the command's slot or changing masters (the
/// command did not run; its pipeline's other commands may have).
pub(crate) fn is_topology_change(error: &RedisError) -> bool {
    matches!(
        error.kind(),
        ErrorKind::Server(
            ServerErrorKind::Moved
                | ServerErrorKind::Ask
                | ServerErrorKind::TryAgain
                | ServerErrorKind::ClusterDown
                | ServerErrorKind::MasterDown
                | ServerErrorKind::ReadOnly
        )
    )
}

/// How long redis-rs waits for a node's answer: longer than the command timeout, so that a
/// sync's own timeout ends the wait first ([`Outcome::TimedOut`]: nothing changes). redis-rs'
/// timeout would end it as an I/O error instead: a refused pipeline (the slot map read again
/// before every sync, on the slow master too) and, on the client that follows redirections, a
/// command sent again at once (a report that may count twice). On a master that was only slow
/// (50 processes x 100 scopes on a loaded 2-core machine), that fed the overload. A dead
/// master's connections are refused or reset, which needs no timeout to find out.
fn response_timeout(options: &StoreOptions) -> Duration {
    options
        .reconnect_max
        .max(options.command_timeout.saturating_mul(2))
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered() -> Outcome {
        Outcome::Answered(Ok(Value::Nil))
    }

    #[test]
    fn a_pipeline_refused_for_a_moved_slot_sends_its_scopes_alone_for_a_few_syncs() {
        let mut grouping = Grouping::default();
        assert!(grouping.needs_map(), "no map yet");
        // No map: every scope alone (one group each).
        let slots = [1, 2, 3];
        assert_eq!(grouping.plan(&slots), [vec![0], vec![1], vec![2]]);
        // A pipeline of two refused with MOVED, the third answered.
        let groups = vec![vec![0, 1], vec![2]];
        let moved = RedisError::from((ErrorKind::Server(ServerErrorKind::Moved), "MOVED"));
        grouping.note(
            &slots,
            &groups,
            &[
                Outcome::Refused(moved.clone()),
                Outcome::Refused(moved),
                answered(),
            ],
        );
        assert!(grouping.stale);
        assert_eq!(grouping.alone.get(&1), Some(&ALONE_SYNCS));
        assert_eq!(grouping.alone.get(&3), None);
        // Alone, answered: counts down, then shares again.
        for left in (0..ALONE_SYNCS).rev() {
            let groups = vec![vec![0], vec![1]];
            grouping.note(&slots[..2], &groups, &[answered(), answered()]);
            assert_eq!(grouping.alone.get(&1).copied(), (left > 0).then_some(left));
        }
        // Redirected alone (a slot migrating): alone for ALONE_SYNCS syncs again, and the map
        // read again; so is a scope alone on its master.
        grouping.stale = false;
        grouping.alone.insert(1, 1);
        let redirected = || Outcome::Redirected(Ok(Value::Nil));
        grouping.note(
            &slots[..2],
            &[vec![0], vec![1]],
            &[redirected(), redirected()],
        );
        assert_eq!(grouping.alone.get(&1), Some(&ALONE_SYNCS));
        assert_eq!(grouping.alone.get(&2), Some(&ALONE_SYNCS));
        assert!(grouping.stale);
    }

    #[test]
    fn a_slow_or_lost_master_sends_no_scope_alone() {
        let mut grouping = Grouping::default();
        let slots = [1, 2, 3, 4];
        let groups = vec![vec![0, 1], vec![2, 3]];
        // Timed out: nothing changes (no map read, nobody alone).
        grouping.note(
            &slots,
            &groups,
            &[Outcome::TimedOut, Outcome::TimedOut, answered(), answered()],
        );
        assert!(!grouping.stale && grouping.alone.is_empty());
        // Refused for a lost connection: the map is read again, nobody goes alone.
        let lost = RedisError::from(std::io::Error::from(std::io::ErrorKind::ConnectionReset));
        let refused = || Outcome::Refused(lost.clone());
        grouping.note(
            &slots,
            &groups,
            &[refused(), refused(), answered(), answered()],
        );
        assert!(grouping.stale && grouping.alone.is_empty());
    }

    #[test]
    fn a_sync_times_out_before_the_cluster_client_does() {
        let mut options = StoreOptions::for_interval(Duration::from_secs(1));
        assert!(response_timeout(&options) > options.command_timeout);
        // A command timeout as long as the interval (the backoff's cap): still outlasted.
        options.command_timeout = options.reconnect_max;
        assert!(response_timeout(&options) > options.command_timeout);
    }

    #[test]
    fn only_cluster_moves_are_topology_changes() {
        let moved = RedisError::from((ErrorKind::Server(ServerErrorKind::Moved), "MOVED"));
        assert!(is_topology_change(&moved));
        let noscript = RedisError::from((ErrorKind::Server(ServerErrorKind::NoScript), "x"));
        assert!(!is_topology_change(&noscript));
    }
}
