//! A Redis Cluster of a test's own: six `redis-server` processes on free ports of 127.0.0.1
//! (each with its cluster bus on a second free port), joined by `redis-cli --cluster create
//! ... --cluster-replicas 1 --cluster-yes` into 3 masters with a replica each, and every
//! process killed by its PID when the guard drops. The faults a fleet must survive: a master
//! killed (its replica promoted by the cluster) and a slot migrated to another master
//! (resharding), by the steps of the Redis Cluster specification.
//!
//! Without `redis-server` or `redis-cli` on `PATH`, [`RedisCluster::start`] returns `None`
//! and prints one line (once per test binary) saying that the tests were skipped; with
//! `RETRY_REQUIRE_REDIS=1` (as CI sets it) a missing program fails the test instead.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};

use crate::redis_server::{
    REQUIRE_REDIS, RedisServer, Resp, available, free_port, try_command_at, with_free_ports,
};

/// Nodes of a cluster: 3 masters, each with one replica.
pub const NODES: usize = 6;

/// How long the cluster may take to agree on its slots after `--cluster create`, or on a new
/// master after a failover (a few node timeouts, far above them).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a node may take to declare a silent master failed: short, so that a test's
/// failover takes about a second (Redis's default is 15 s).
pub const NODE_TIMEOUT: Duration = Duration::from_millis(500);

/// A running cluster, every node killed (and waited for) on drop.
#[derive(Debug)]
pub struct RedisCluster {
    nodes: Vec<RedisServer>,
}

/// One node as `CLUSTER NODES` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterNode {
    /// The node's id.
    pub id: String,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Whether it is a master (else a replica).
    pub master: bool,
    /// A replica's master's id.
    pub replica_of: Option<String>,
    /// Whether the cluster holds it failed (`fail` or `fail?` among its flags).
    pub failed: bool,
    /// The slot ranges it serves (a master's), inclusive.
    pub slots: Vec<(u16, u16)>,
}

impl ClusterNode {
    /// Whether it serves `slot`.
    pub fn serves(&self, slot: u16) -> bool {
        self.slots
            .iter()
            .any(|&(first, last)| (first..=last).contains(&slot))
    }
}

impl RedisCluster {
    /// Starts a cluster whose nodes run with `args` added to the cluster's own; `None` (after
    /// one line saying so, once per test binary) if `redis-server` or `redis-cli` is not on
    /// `PATH` and `RETRY_REQUIRE_REDIS` is not `1`.
    pub fn start(suite: &str, args: &[&str]) -> Option<Self> {
        if !available(suite) || !redis_cli_available(suite) {
            return None;
        }
        Some(Self::try_start(args).unwrap_or_else(|error| panic!("{error}")))
    }

    /// Starts a cluster whose nodes run with `args` added to the cluster's own (and taking
    /// precedence over them: `--cluster-node-timeout 5000`): an error saying what failed (a
    /// node that would not start, `redis-cli` refusing to create it, a cluster that did not
    /// settle).
    pub fn try_start(args: &[&str]) -> Result<Self, String> {
        let timeout_ms = NODE_TIMEOUT.as_millis().to_string();
        let mut nodes = Vec::with_capacity(NODES);
        for _ in 0..NODES {
            // The node's port and its cluster bus port, both found free: started again on
            // others if either was taken before the node bound it.
            let node = with_free_ports(|| {
                let bus = free_port().to_string();
                let mut node_args = vec![
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-port",
                    &bus,
                    "--cluster-node-timeout",
                    &timeout_ms,
                    // A replica takes over however long its link was down: a test's failover
                    // never waits on the replica's data age.
                    "--cluster-replica-validity-factor",
                    "0",
                ];
                node_args.extend_from_slice(args);
                RedisServer::try_start_on(free_port(), &node_args)
            })?;
            nodes.push(node);
        }
        let cluster = Self { nodes };
        cluster.create()?;
        cluster.wait_settled(|nodes| {
            let masters = nodes.iter().filter(|node| node.master).count();
            masters == NODES / 2 && covers_every_slot(nodes)
        })?;
        Ok(cluster)
    }

    /// `redis-cli --cluster create <every node> --cluster-replicas 1 --cluster-yes`.
    fn create(&self) -> Result<(), String> {
        let output = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(
                self.nodes
                    .iter()
                    .map(|node| format!("127.0.0.1:{}", node.port())),
            )
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdin(Stdio::null())
            .output()
            .map_err(|error| format!("redis-cli does not run: {error}"))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(format!(
                "redis-cli --cluster create failed ({}):\n{}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ))
        }
    }

    /// Waits until every running node says `cluster_state:ok` and agrees with the others on
    /// the nodes, and `settled` holds for them.
    fn wait_settled(&self, settled: impl Fn(&[ClusterNode]) -> bool) -> Result<(), String> {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            let views: Vec<Option<Vec<ClusterNode>>> = self
                .running()
                .map(|index| {
                    let ok = matches!(
                        try_command_at(self.nodes[index].port(), &["CLUSTER", "INFO"]),
                        Ok(Resp::Bulk(Some(info))) if info.contains("cluster_state:ok")
                    );
                    ok.then(|| self.nodes_seen_by(index)).flatten()
                })
                .collect();
            let agreed = views.first().cloned().flatten().filter(|first| {
                views
                    .iter()
                    .all(|view| view.as_ref().is_some_and(|view| same_roles(view, first)))
            });
            if agreed.as_deref().is_some_and(&settled) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the cluster did not settle within {SETTLE_TIMEOUT:?}: {views:?}"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The nodes as node `index` sees them (`None` if it does not answer).
    fn nodes_seen_by(&self, index: usize) -> Option<Vec<ClusterNode>> {
        let port = self.nodes.get(index)?.port();
        match try_command_at(port, &["CLUSTER", "NODES"]) {
            Ok(Resp::Bulk(Some(text))) => Some(parse_nodes(&text)),
            _ => None,
        }
    }

    /// The nodes as the first running node sees them.
    pub fn topology(&self) -> Vec<ClusterNode> {
        self.running()
            .find_map(|index| self.nodes_seen_by(index))
            .expect("a running node answers CLUSTER NODES")
    }

    /// The indices of the nodes that run.
    fn running(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nodes.len()).filter(|&index| self.nodes[index].pid().is_some())
    }

    /// Seed URLs: `redis://127.0.0.1:<port>/` of every node.
    pub fn seed_urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// The cluster as one URL, the form other Rust clients (fred) read:
    /// `redis-cluster://127.0.0.1:<first>?node=127.0.0.1:<second>&node=...`.
    pub fn url(&self) -> String {
        let mut ports = self.nodes.iter().map(RedisServer::port);
        let first = ports.next().expect("six nodes");
        let others: Vec<String> = ports.map(|port| format!("node=127.0.0.1:{port}")).collect();
        format!("redis-cluster://127.0.0.1:{first}?{}", others.join("&"))
    }

    /// The ports of the nodes, by index.
    pub fn ports(&self) -> Vec<u16> {
        self.nodes.iter().map(RedisServer::port).collect()
    }

    /// The index of the node on `port`.
    pub fn index_of(&self, port: u16) -> usize {
        self.nodes
            .iter()
            .position(|node| node.port() == port)
            .expect("a node of this cluster")
    }

    /// The slot of `key` (`CLUSTER KEYSLOT`).
    pub fn slot_of(&self, key: &str) -> u16 {
        let index = self.running().next().expect("a running node");
        match self.command(index, &["CLUSTER", "KEYSLOT", key]) {
            Resp::Int(slot) => u16::try_from(slot).expect("a slot"),
            other => panic!("CLUSTER KEYSLOT answered {other:?}"),
        }
    }

    /// The index of the master serving `slot`.
    pub fn master_of(&self, slot: u16) -> usize {
        let node = self
            .topology()
            .into_iter()
            .find(|node| node.master && !node.failed && node.serves(slot))
            .expect("a master serves every slot");
        self.index_of(node.port)
    }

    /// The indices of the masters that are not failed.
    pub fn masters(&self) -> Vec<usize> {
        let mut masters: Vec<usize> = self
            .topology()
            .iter()
            .filter(|node| node.master && !node.failed)
            .map(|node| self.index_of(node.port))
            .collect();
        masters.sort_unstable();
        masters
    }

    /// Sends a command to node `index` (as the default user) and reads its reply.
    pub fn command(&self, index: usize, args: &[&str]) -> Resp {
        self.nodes[index].command(args)
    }

    /// Sends a command to every running node and returns their replies.
    pub fn on_every_node(&self, args: &[&str]) -> Vec<Resp> {
        self.running()
            .map(|index| self.command(index, args))
            .collect()
    }

    /// Waits until every replica of master `index` has all it was sent (`INFO replication`:
    /// each replica's offset at the master's): what a failover then keeps.
    pub fn wait_replicated(&self, index: usize) {
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        loop {
            let Resp::Bulk(Some(info)) = self.command(index, &["INFO", "replication"]) else {
                panic!("INFO replication on node {index}");
            };
            let master: Option<u64> = info.lines().find_map(|line| {
                line.strip_prefix("master_repl_offset:")
                    .and_then(|offset| offset.trim().parse().ok())
            });
            // `slave0:ip=127.0.0.1,port=7003,state=online,offset=1234,lag=0`
            let replicas: Vec<Option<u64>> = info
                .lines()
                .filter(|line| line.starts_with("slave"))
                .map(|line| {
                    line.split(',')
                        .find_map(|part| part.strip_prefix("offset="))
                        .and_then(|offset| offset.trim().parse().ok())
                })
                .collect();
            let caught_up = !replicas.is_empty()
                && master.is_some()
                && replicas.iter().all(|offset| *offset == master);
            if caught_up {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the replicas of node {index} did not catch up: {info}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The process id of node `index` (`None` once killed).
    pub fn pid(&self, index: usize) -> Option<u32> {
        self.nodes[index].pid()
    }

    /// Kills node `index` (SIGKILL) and waits for it.
    pub fn kill(&mut self, index: usize) {
        self.nodes[index].kill();
    }

    /// Starts node `index` again (after it was killed) on its port, with its arguments and
    /// cluster configuration: it rejoins the cluster, as a replica of the master that took its
    /// slots. Waits until every node is known and none is failed.
    pub fn restart(&mut self, index: usize) {
        self.nodes[index].restart_empty();
        self.wait_settled(|nodes| {
            nodes.len() == NODES
                && nodes.iter().all(|node| !node.failed)
                && covers_every_slot(nodes)
        })
        .unwrap_or_else(|error| panic!("node {index} did not rejoin: {error}"));
    }

    /// Kills the master serving `slot` and waits until the cluster promoted its replica and
    /// serves every slot again; returns the new master's index.
    pub fn fail_over(&mut self, slot: u16) -> usize {
        let old = self.master_of(slot);
        self.kill(old);
        let old_port = self.nodes[old].port();
        self.wait_settled(|nodes| {
            let old_failed = nodes
                .iter()
                .any(|node| node.port == old_port && node.failed);
            old_failed && covers_every_slot(nodes)
        })
        .unwrap_or_else(|error| panic!("no failover: {error}"));
        self.master_of(slot)
    }

    /// Migrates `slot` (with its keys) from its master to the master `to`, by the Redis
    /// Cluster specification's steps: the target `IMPORTING`, the source `MIGRATING`, the
    /// keys moved by `MIGRATE`, then every master told the slot's new node. `between` runs
    /// while the slot is migrating with its keys still on the source (the source answers
    /// `ASK` for keys it does not have) and again once they moved (every key of the slot
    /// `ASK`ed to the target).
    pub fn migrate_slot(&self, slot: u16, to: usize, mut between: impl FnMut()) {
        let topology = self.topology();
        let from = self.master_of(slot);
        assert_ne!(from, to, "the slot is already on the target");
        let id = |index: usize| {
            let port = self.nodes[index].port();
            topology
                .iter()
                .find(|node| node.port == port)
                .map(|node| node.id.clone())
                .expect("a node of the topology")
        };
        let (source, target) = (id(from), id(to));
        let slot_text = slot.to_string();
        let ok = |index: usize, args: &[&str]| {
            let reply = self.command(index, args);
            assert_eq!(reply, Resp::Status("OK".into()), "{args:?} on node {index}");
        };
        ok(
            to,
            &["CLUSTER", "SETSLOT", &slot_text, "IMPORTING", &source],
        );
        ok(
            from,
            &["CLUSTER", "SETSLOT", &slot_text, "MIGRATING", &target],
        );
        between();
        let keys = match self.command(from, &["CLUSTER", "GETKEYSINSLOT", &slot_text, "100"]) {
            Resp::Array(keys) => keys
                .into_iter()
                .map(|key| match key {
                    Resp::Bulk(Some(key)) => key,
                    other => panic!("a key, not {other:?}"),
                })
                .collect::<Vec<_>>(),
            other => panic!("GETKEYSINSLOT answered {other:?}"),
        };
        if !keys.is_empty() {
            let port = self.nodes[to].port().to_string();
            let mut migrate = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
            migrate.extend(keys.iter().map(String::as_str));
            let reply = self.command(from, &migrate);
            assert_eq!(reply, Resp::Status("OK".into()), "MIGRATE");
        }
        between();
        ok(to, &["CLUSTER", "SETSLOT", &slot_text, "NODE", &target]);
        ok(from, &["CLUSTER", "SETSLOT", &slot_text, "NODE", &target]);
        for node in topology.iter().filter(|node| node.master && !node.failed) {
            let index = self.index_of(node.port);
            if index != from && index != to {
                ok(index, &["CLUSTER", "SETSLOT", &slot_text, "NODE", &target]);
            }
        }
        self.wait_settled(|nodes| {
            nodes
                .iter()
                .any(|node| node.id == target && node.serves(slot))
        })
        .unwrap_or_else(|error| panic!("the migration did not settle: {error}"));
    }
}

/// Whether the masters that are not failed serve all 16384 slots.
fn covers_every_slot(nodes: &[ClusterNode]) -> bool {
    let mut ranges: Vec<(u16, u16)> = nodes
        .iter()
        .filter(|node| node.master && !node.failed)
        .flat_map(|node| node.slots.iter().copied())
        .collect();
    ranges.sort_unstable();
    let mut next = 0_u32;
    for (first, last) in ranges {
        if u32::from(first) != next {
            return false;
        }
        next = u32::from(last) + 1;
    }
    next == 16_384
}

/// Whether two views agree on every node's role, failure and slots.
fn same_roles(one: &[ClusterNode], other: &[ClusterNode]) -> bool {
    let sorted = |nodes: &[ClusterNode]| {
        let mut nodes = nodes.to_vec();
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        nodes
    };
    sorted(one) == sorted(other)
}

/// Parses `CLUSTER NODES`: `<id> <ip:port@bus> <flags> <master|-> <ping> <pong> <epoch>
/// <link> <slot>...` per line (slots being migrated, `[..]`, left out).
pub fn parse_nodes(text: &str) -> Vec<ClusterNode> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() < 8 {
                return None;
            }
            let address = fields[1].split(['@', ',']).next()?;
            let port = address.rsplit(':').next()?.parse().ok()?;
            let flags: Vec<&str> = fields[2].split(',').collect();
            let slots = fields[8..]
                .iter()
                .filter(|slot| !slot.starts_with('['))
                .filter_map(|slot| match slot.split_once('-') {
                    Some((first, last)) => Some((first.parse().ok()?, last.parse().ok()?)),
                    None => {
                        let slot = slot.parse().ok()?;
                        Some((slot, slot))
                    }
                })
                .collect();
            Some(ClusterNode {
                id: fields[0].to_owned(),
                port,
                master: flags.contains(&"master"),
                replica_of: (fields[3] != "-").then(|| fields[3].to_owned()),
                failed: flags.iter().any(|flag| flag.starts_with("fail")),
                slots,
            })
        })
        .collect()
}

/// Whether `redis-cli` can be run; a failure when it cannot and `RETRY_REQUIRE_REDIS=1`.
fn redis_cli_available(suite: &str) -> bool {
    let found = Command::new("redis-cli")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        if std::env::var(REQUIRE_REDIS).as_deref() == Ok("1") {
            panic!(
                "{REQUIRE_REDIS}=1 but redis-cli is not on PATH: install it (apt-get install \
                 redis-tools)"
            );
        }
        static ONCE: Once = Once::new();
        ONCE.call_once(|| {
            let line = format!(
                "note: skipped the Redis Cluster tests of {suite}: redis-cli is not on PATH \
                 (install it with `apt-get install redis-tools`; {REQUIRE_REDIS}=1 makes this a \
                 failure)\n"
            );
            let _ = std::io::stderr().write_all(line.as_bytes());
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_nodes_lines_are_read_with_roles_failures_and_slots() {
        let text = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460 [5461->-b2]
b2 127.0.0.1:7001@17001,host master - 0 0 2 connected 5461-10922 16000
c3 127.0.0.1:7002@17002 slave,fail a1 0 0 1 disconnected
";
        let nodes = parse_nodes(text);
        assert_eq!(nodes.len(), 3);
        assert_eq!(nodes[0].slots, [(0, 5460)]);
        assert!(nodes[0].master && !nodes[0].failed);
        assert_eq!(nodes[1].port, 7001);
        assert!(nodes[1].serves(16_000) && !nodes[1].serves(16_001));
        assert_eq!(nodes[2].replica_of.as_deref(), Some("a1"));
        assert!(nodes[2].failed && !nodes[2].master);
        assert!(!covers_every_slot(&nodes));
    }
}
