//! The harness's Redis Cluster (`--redis-cluster`): six `redis-server` processes on free ports
//! of 127.0.0.1 joined by `redis-cli --cluster create` into 3 masters with a replica each (the
//! tests' fixture, `retry_tests::redis_cluster`), every process killed by its PID when dropped;
//! and its faults: `failover` (the master of the harness scope's slot killed, the cluster
//! promotes its replica) and `migrate` (the scope's slot migrated to another master).

use std::time::Duration;

use retry_tests::redis_cluster::{ClusterNode, RedisCluster, parse_nodes};

use crate::redis_process::COMMAND_TIMEOUT;
use crate::resp::{self, Reply};

/// How long a migration holds the slot `MIGRATING` with its keys on the source, and again with
/// them on the target (the source answering `ASK`), before the slot is given to the target:
/// a few sync intervals of each state.
pub const MIGRATION_HOLD: Duration = Duration::from_secs(3);

/// The cluster and the slot of the scope the faults strike.
#[derive(Debug)]
pub struct ClusterStore {
    cluster: RedisCluster,
    slot: u16,
}

impl ClusterStore {
    /// Starts the cluster (`redis-server` and `redis-cli` on `PATH`), its nodes declaring a
    /// silent master failed after `node_timeout`; `scope_key` is a key of the scope the faults
    /// strike.
    pub fn start(scope_key: &str, node_timeout: Duration) -> Result<Self, String> {
        let timeout_ms = node_timeout.as_millis().to_string();
        let args = ["--cluster-node-timeout", timeout_ms.as_str()];
        let cluster = RedisCluster::try_start(&args).map_err(|error| {
            format!(
                "the Redis Cluster cannot start: {error} (install redis-server and redis-tools, \
                 or run without --redis-cluster)"
            )
        })?;
        let slot = cluster.slot_of(scope_key);
        Ok(Self { cluster, slot })
    }

    /// The cluster's URL (`redis-cluster://127.0.0.1:<port>?node=...`).
    pub fn url(&self) -> String {
        self.cluster.url()
    }

    /// Every node's port.
    pub fn ports(&self) -> Vec<u16> {
        self.cluster.ports()
    }

    /// The slot the faults strike.
    pub fn slot(&self) -> u16 {
        self.slot
    }

    /// Readies the cluster for a phase: every node running (a node a failover killed starts
    /// again and rejoins as a replica), every master empty, every node's command counts at
    /// zero.
    pub fn prepare_phase(&mut self) -> Result<(), String> {
        for index in 0..self.cluster.ports().len() {
            if self.cluster.pid(index).is_none() {
                self.cluster.restart(index);
            }
        }
        for reply in self.cluster.on_every_node(&["CONFIG", "RESETSTAT"]) {
            expect_ok(&reply, "CONFIG RESETSTAT")?;
        }
        for index in self.cluster.masters() {
            expect_ok(&self.cluster.command(index, &["FLUSHALL"]), "FLUSHALL")?;
        }
        Ok(())
    }

    /// Kills the master of the slot; returns once the cluster promoted its replica and
    /// serves every slot again.
    pub fn fail_over(&mut self) {
        self.cluster.fail_over(self.slot);
    }

    /// Migrates the slot to another master, holding each migrating state for
    /// [`MIGRATION_HOLD`]; returns once every master serves it from the target.
    pub fn migrate(&mut self) -> Result<(), String> {
        let source = self.cluster.master_of(self.slot);
        let target = self
            .cluster
            .masters()
            .into_iter()
            .find(|&index| index != source)
            .ok_or("no other master to migrate the slot to")?;
        self.cluster
            .migrate_slot(self.slot, target, || std::thread::sleep(MIGRATION_HOLD));
        Ok(())
    }
}

/// The nodes as the first of `ports` that answers `CLUSTER NODES` sees them, and that node's
/// port; `None` when none answers. A function of the ports alone, so that reading never waits
/// for a fault being applied.
pub fn topology(ports: &[u16]) -> Option<(u16, Vec<ClusterNode>)> {
    ports.iter().find_map(|&port| {
        match resp::command(port, &["CLUSTER", "NODES"], COMMAND_TIMEOUT) {
            Ok(Reply::Bulk(Some(text))) => Some((port, parse_nodes(&text))),
            _ => None,
        }
    })
}

fn expect_ok(reply: &retry_tests::redis_server::Resp, what: &str) -> Result<(), String> {
    match reply {
        retry_tests::redis_server::Resp::Status(status) if status == "OK" => Ok(()),
        other => Err(format!("{what} answered {other:?}")),
    }
}
