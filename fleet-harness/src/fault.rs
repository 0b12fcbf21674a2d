//! Store faults on a timeline: `--fault 20s:stop --fault 25s:cont --fault 40s:kill
//! --fault 45s:restart-empty --fault 60s:flushall --fault 70s:writes-fail --fault
//! 85s:writes-resume` for one `redis-server`, `--fault
//! 20s:failover --fault 40s:migrate` for a Redis Cluster, each at its time from the start of a
//! phase, checked as a whole before anything starts.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

use crate::duration_arg::parse_duration;

/// What a fault does to the phase's `redis-server`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FaultAction {
    /// `SIGSTOP`: the server keeps its connections and answers nothing (a paused store).
    Stop,
    /// `SIGCONT`: a stopped server carries on.
    Cont,
    /// `SIGKILL`: the server is gone; its port refuses connections.
    Kill,
    /// A new, empty server on the same port (killing the old one if it still runs): the
    /// store lost its state and its scripts.
    RestartEmpty,
    /// `FLUSHALL`: the store lost its state (every key; the script cache stays), the server
    /// runs on.
    Flushall,
    /// Partial write failure: the later half of the clients (by index) lose their ACL user's
    /// access to the keys, so their syncs are refused while the others' succeed, as a server
    /// at `maxmemory` with `noeviction` refuses some scripts and runs others.
    WritesFail,
    /// The clients of `writes-fail` get their keys back.
    WritesResume,
    /// A Redis Cluster's master of the harness scope's slot killed (`SIGKILL`): the cluster
    /// promotes its replica (the fault ends when the cluster serves every slot again).
    Failover,
    /// A Redis Cluster's slot of the harness scope migrated to another master (`MIGRATING`
    /// with its keys on the source, then on the target, then given to the target: the fault
    /// ends then).
    Migrate,
}

impl FaultAction {
    const NAMES: [(&'static str, FaultAction); 9] = [
        ("stop", FaultAction::Stop),
        ("cont", FaultAction::Cont),
        ("kill", FaultAction::Kill),
        ("restart-empty", FaultAction::RestartEmpty),
        ("flushall", FaultAction::Flushall),
        ("writes-fail", FaultAction::WritesFail),
        ("writes-resume", FaultAction::WritesResume),
        ("failover", FaultAction::Failover),
        ("migrate", FaultAction::Migrate),
    ];

    /// The action's name on the command line.
    pub fn name(self) -> &'static str {
        Self::NAMES
            .iter()
            .find(|(_, action)| *action == self)
            .map_or("?", |(name, _)| name)
    }

    /// Whether the store is answering again after this action (the end of a fault).
    pub fn recovers(self) -> bool {
        matches!(
            self,
            FaultAction::Cont | FaultAction::RestartEmpty | FaultAction::WritesResume
        )
    }

    /// Whether the action is a Redis Cluster's (else one `redis-server`'s).
    pub fn is_cluster(self) -> bool {
        matches!(self, FaultAction::Failover | FaultAction::Migrate)
    }
}

/// One fault: an action at a time from the start of the phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Fault {
    /// When, from the start of the phase.
    #[serde(rename = "at_ms", serialize_with = "crate::report::millis")]
    pub at: Duration,
    /// What.
    pub action: FaultAction,
}

impl FromStr for Fault {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (at, action) = text.split_once(':').ok_or_else(|| {
            format!("`{text}`: write a fault as `<time>:<action>`, e.g. `20s:stop`")
        })?;
        let action = FaultAction::NAMES
            .iter()
            .find(|(name, _)| *name == action)
            .map(|(_, action)| *action)
            .ok_or_else(|| {
                format!(
                    "`{text}`: unknown action `{action}` (one of stop, cont, kill, restart-empty, \
                     flushall, writes-fail, writes-resume; failover, migrate with \
                     --redis-cluster)"
                )
            })?;
        Ok(Fault {
            at: parse_duration(at)?,
            action,
        })
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}s:{}", self.at.as_secs_f64(), self.action.name())
    }
}

/// The store's state as the timeline drives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreState {
    Running,
    Stopped,
    Down,
    WritesFailing,
}

/// Checks a timeline against a phase of `duration` on a store that is a Redis Cluster or not
/// (`cluster`), and returns it in time order: every fault inside the phase and for that store,
/// no two at the same time, and each action possible in the state the earlier ones leave
/// (`cont` after `stop`; `flushall`, `stop` and `writes-fail` on a running server; `kill` on
/// one that is not down already; `writes-resume` after `writes-fail`, with nothing between).
pub fn check_timeline(
    mut faults: Vec<Fault>,
    duration: Duration,
    cluster: bool,
) -> Result<Vec<Fault>, String> {
    if let Some(fault) = faults
        .iter()
        .find(|fault| fault.action.is_cluster() != cluster)
    {
        return Err(if cluster {
            format!("fault {fault}: a Redis Cluster's faults are `failover` and `migrate`")
        } else {
            format!("fault {fault}: needs --redis-cluster (one redis-server has no replica)")
        });
    }
    faults.sort_by_key(|fault| fault.at);
    for pair in faults.windows(2) {
        if pair[0].at == pair[1].at {
            return Err(format!(
                "faults {} and {} are at the same time",
                pair[0], pair[1]
            ));
        }
    }
    let mut state = StoreState::Running;
    for fault in &faults {
        if fault.at >= duration {
            return Err(format!(
                "fault {fault} is not inside the phase ({}s long)",
                duration.as_secs_f64()
            ));
        }
        state = match (fault.action, state) {
            (FaultAction::Stop, StoreState::Running) => StoreState::Stopped,
            (FaultAction::Cont, StoreState::Stopped) => StoreState::Running,
            (FaultAction::Kill, StoreState::Running | StoreState::Stopped) => StoreState::Down,
            (FaultAction::RestartEmpty, _) => StoreState::Running,
            (FaultAction::Flushall, StoreState::Running) => StoreState::Running,
            (FaultAction::WritesFail, StoreState::Running) => StoreState::WritesFailing,
            (FaultAction::WritesResume, StoreState::WritesFailing) => StoreState::Running,
            // The cluster recovers by itself: the fault returns once it did.
            (FaultAction::Failover | FaultAction::Migrate, _) => StoreState::Running,
            (action, state) => {
                return Err(format!(
                    "fault {fault}: `{}` on a store that is {} (write {})",
                    action.name(),
                    match state {
                        StoreState::Running => "running",
                        StoreState::Stopped => "stopped",
                        StoreState::Down => "down",
                        StoreState::WritesFailing => "failing writes",
                    },
                    match (action, state) {
                        (FaultAction::WritesResume, _) => "`writes-fail` before it",
                        (_, StoreState::Running) => "`stop` before `cont`",
                        (_, StoreState::Stopped) => "`cont` before it",
                        (_, StoreState::Down) => "`restart-empty` before it",
                        (_, StoreState::WritesFailing) => "`writes-resume` before it",
                    }
                ));
            }
        };
    }
    Ok(faults)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(texts: &[&str]) -> Vec<Fault> {
        texts
            .iter()
            .map(|text| text.parse().expect("a valid fault"))
            .collect()
    }

    #[test]
    fn a_fault_is_a_time_and_an_action() {
        let fault: Fault = "45s:restart-empty".parse().expect("valid");
        assert_eq!(fault.at, Duration::from_secs(45));
        assert_eq!(fault.action, FaultAction::RestartEmpty);
        assert_eq!(fault.to_string(), "45s:restart-empty");
    }

    #[test]
    fn a_malformed_fault_says_what_to_write() {
        let missing = "20s".parse::<Fault>().unwrap_err();
        assert!(missing.contains("`<time>:<action>`"), "{missing}");
        let unknown = "20s:pause".parse::<Fault>().unwrap_err();
        assert!(unknown.contains("unknown action `pause`"), "{unknown}");
        assert!("20:stop".parse::<Fault>().unwrap_err().contains("no unit"));
    }

    #[test]
    fn partial_write_failure_is_a_fault_with_its_end() {
        let timeline = faults(&["40s:writes-resume", "20s:writes-fail"]);
        let checked = check_timeline(timeline, Duration::from_secs(60), false).expect("valid");
        assert_eq!(checked[0].action, FaultAction::WritesFail);
        assert!(checked[1].action.recovers());
        let on_a_cluster = check_timeline(checked, Duration::from_secs(60), true).unwrap_err();
        assert!(
            on_a_cluster.contains("`failover` and `migrate`"),
            "{on_a_cluster}"
        );
    }

    #[test]
    fn the_issue_timeline_is_accepted_in_time_order() {
        let timeline = faults(&[
            "60s:flushall",
            "20s:stop",
            "25s:cont",
            "40s:kill",
            "45s:restart-empty",
        ]);
        let checked = check_timeline(timeline, Duration::from_secs(70), false).expect("valid");
        let actions: Vec<_> = checked.iter().map(|fault| fault.action.name()).collect();
        assert_eq!(
            actions,
            ["stop", "cont", "kill", "restart-empty", "flushall"]
        );
    }

    #[test]
    fn impossible_sequences_are_refused_naming_the_fault() {
        let cases = [
            (vec!["5s:cont"], "`cont` on a store that is running"),
            (
                vec!["5s:stop", "6s:flushall"],
                "`flushall` on a store that is stopped",
            ),
            (vec!["5s:kill", "6s:kill"], "`kill` on a store that is down"),
            (vec!["5s:stop", "5s:cont"], "at the same time"),
            (vec!["30s:stop"], "not inside the phase"),
            (vec!["5s:writes-resume"], "`writes-fail` before it"),
            (
                vec!["5s:writes-fail", "6s:stop"],
                "`stop` on a store that is failing writes (write `writes-resume` before it)",
            ),
        ];
        for (texts, expected) in cases {
            let error = check_timeline(faults(&texts), Duration::from_secs(30), false).unwrap_err();
            assert!(error.contains(expected), "{texts:?}: {error}");
        }
    }

    #[test]
    fn a_clusters_faults_and_a_nodes_are_not_mixed() {
        let cluster = faults(&["20s:failover", "40s:migrate"]);
        let checked = check_timeline(cluster.clone(), Duration::from_secs(60), true);
        assert_eq!(checked.expect("valid").len(), 2);
        let on_a_node = check_timeline(cluster, Duration::from_secs(60), false).unwrap_err();
        assert!(on_a_node.contains("--redis-cluster"), "{on_a_node}");
        let stop = check_timeline(faults(&["5s:stop"]), Duration::from_secs(60), true);
        assert!(stop.unwrap_err().contains("`failover` and `migrate`"));
    }
}
