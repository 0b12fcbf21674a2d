//! The fleet's store for fleet phases: one `redis-server` ([`RedisProcess`]) or a Redis Cluster
//! ([`ClusterStore`], `--redis-cluster`): readied for each phase, its URL, the ports the
//! harness reads each second, and the faults of the timeline.

use crate::cluster_store::ClusterStore;
use crate::fault::FaultAction;
use crate::redis_process::RedisProcess;

/// The store.
#[derive(Debug)]
pub enum Store {
    /// One node.
    Node(RedisProcess),
    /// A cluster.
    Cluster(ClusterStore),
}

/// What the harness reads each second: every node's port, and the slot of the harness scope
/// (a cluster's: its state is read from the master serving it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Every node's port.
    pub ports: Vec<u16>,
    /// The harness scope's slot, in a cluster.
    pub slot: Option<u16>,
}

impl Store {
    /// Readies the store for a phase: running, empty, its command counts at zero.
    pub fn prepare_phase(&mut self) -> Result<(), String> {
        match self {
            Store::Node(node) => node.prepare_phase().map_err(|error| error.to_string()),
            Store::Cluster(cluster) => cluster.prepare_phase(),
        }
    }

    /// The URL the clients connect to.
    pub fn url(&self) -> String {
        match self {
            Store::Node(node) => node.url(),
            Store::Cluster(cluster) => cluster.url(),
        }
    }

    /// The URL of the clients whose syncs `writes-fail` refuses (one `redis-server` only).
    pub fn unheard_url(&self) -> Option<String> {
        match self {
            Store::Node(node) => Some(node.unheard_url()),
            Store::Cluster(_) => None,
        }
    }

    /// What the harness reads each second.
    pub fn layout(&self) -> Layout {
        match self {
            Store::Node(node) => Layout {
                ports: vec![node.port()],
                slot: None,
            },
            Store::Cluster(cluster) => Layout {
                ports: cluster.ports(),
                slot: Some(cluster.slot()),
            },
        }
    }

    /// Applies a fault (the timeline was checked for this store's kind).
    pub fn apply(&mut self, action: FaultAction) -> Result<(), String> {
        match (self, action) {
            (Store::Node(node), FaultAction::Stop) => node.pause(),
            (Store::Node(node), FaultAction::Cont) => node.resume(),
            (Store::Node(node), FaultAction::Kill) => node.kill(),
            (Store::Node(node), FaultAction::RestartEmpty) => node.restart_empty(),
            (Store::Node(node), FaultAction::Flushall) => node.flushall(),
            (Store::Node(node), FaultAction::WritesFail) => node.fail_unheard_writes(),
            (Store::Node(node), FaultAction::WritesResume) => node.resume_unheard_writes(),
            (Store::Cluster(cluster), FaultAction::Failover) => {
                cluster.fail_over();
                Ok(())
            }
            (Store::Cluster(cluster), FaultAction::Migrate) => return cluster.migrate(),
            (store, action) => {
                let kind = match store {
                    Store::Node(_) => "one redis-server",
                    Store::Cluster(_) => "a Redis Cluster",
                };
                return Err(format!("`{}` does not apply to {kind}", action.name()));
            }
        }
        .map_err(|error| error.to_string())
    }
}
