//! A fault's episode: from the fault to the store's recovery (`stop` to `cont`, `kill` to
//! `restart-empty`, `writes-fail` to `writes-resume`; a Redis Cluster's `failover` to the
//! promotion of the replica, `migrate` to the slot given to the target; `flushall` and a lone
//! `restart-empty` are instants), with the phase's figures during it and in the two sync
//! intervals after it, and when every process held a live fleet lease again.

use std::time::Duration;

use serde::Serialize;

use crate::fault::{Fault, FaultAction};
use crate::report::{FaultEvent, Row};
use crate::summary::{Summary, SummaryContext};

/// One fault's episode.
#[derive(Debug, Clone, Serialize)]
pub struct Episode {
    /// `stop→cont`, `kill→restart-empty`, `writes-fail→writes-resume`, `flushall`,
    /// `restart-empty`.
    pub name: String,
    /// The second the fault struck in.
    pub start_s: u64,
    /// The second the store recovered in (the fault's own for an instant).
    pub end_s: u64,
    /// The figures from the fault's second to the recovery's, both included.
    pub during: Summary,
    /// The figures of the whole seconds within two sync intervals after the recovery's
    /// second.
    pub after: Summary,
    /// `during.p99_ms` less the fault-free phase's p99 (when the run has one).
    pub p99_delta_ms: Option<f64>,
    /// Seconds after the recovery's second until every process reported a live lease (0:
    /// by the end of that second; `None`: not before the phase ended).
    pub leases_live_after_s: Option<u64>,
    /// Milliseconds after the recovery (a cluster's: when the harness saw it settled) the last
    /// process's leases all became live again (0: by then).
    pub leases_live_after_ms: Option<u64>,
    /// Whether a process's lease lapsed in the episode (else every process's leases were live
    /// since before the fault).
    pub leases_lapsed: bool,
}

/// The episodes of a phase's timeline, with their figures from `rows`; `applied` says when a
/// cluster's fault ended (the cluster settled).
pub fn episodes(
    faults: &[Fault],
    applied: &[FaultEvent],
    rows: &[Row],
    context: SummaryContext,
) -> Vec<Episode> {
    let mut episodes = Vec::new();
    let mut open: Option<Fault> = None;
    for fault in faults {
        if fault.action.is_cluster() {
            let settled = applied
                .iter()
                .find(|event| event.fault == *fault)
                .map_or(fault.at, |event| Duration::from_millis(event.settled_at_ms));
            let end = Fault {
                at: settled,
                action: fault.action,
            };
            let mut episode = episode(*fault, end, rows, context);
            episode.name = fault.action.name().to_owned();
            episodes.push(episode);
            continue;
        }
        match (fault.action, open) {
            (FaultAction::Stop | FaultAction::Kill | FaultAction::WritesFail, None) => {
                open = Some(*fault);
            }
            (FaultAction::Kill, Some(_)) => {}
            (action, Some(start)) if action.recovers() => {
                episodes.push(episode(start, *fault, rows, context));
                open = None;
            }
            _ => episodes.push(episode(*fault, *fault, rows, context)),
        }
    }
    if let (Some(start), Some(last)) = (open, rows.last()) {
        let mut episode = episode(start, start, rows, context);
        episode.name = format!("{} (no recovery)", start.action.name());
        episode.end_s = last.second;
        episode.during = Summary::of(span(rows, episode.start_s, last.second + 1), context);
        episode.after = Summary::default();
        episode.leases_live_after_s = None;
        episode.leases_live_after_ms = None;
        episodes.push(episode);
    }
    episodes
}

fn episode(start: Fault, end: Fault, rows: &[Row], context: SummaryContext) -> Episode {
    let (start_s, end_s) = (start.at.as_secs(), end.at.as_secs());
    let name = if start == end {
        start.action.name().to_owned()
    } else {
        format!("{}→{}", start.action.name(), end.action.name())
    };
    let after_s = (2.0 * context.sync_interval.as_secs_f64()).ceil().max(1.0) as u64;
    let live_again = rows
        .iter()
        .filter(|row| row.second >= end_s)
        .find(|row| row.leases_live == Some(context.processes));
    let leases_live_after_s = live_again.map(|row| row.second - end_s);
    let millis = |at: Duration| u64::try_from(at.as_millis()).unwrap_or(u64::MAX);
    let live_since = live_again.and_then(|row| row.leases_live_since_ms);
    let leases_live_after_ms = live_since.map(|since| since.saturating_sub(millis(end.at)));
    let leases_lapsed = live_since.is_none_or(|since| since >= millis(start.at))
        || span(rows, start_s, end_s + 1)
            .iter()
            .any(|row| row.leases_live != Some(context.processes));
    Episode {
        name,
        start_s,
        end_s,
        during: Summary::of(span(rows, start_s, end_s + 1), context),
        after: Summary::of(span(rows, end_s + 1, end_s + 1 + after_s), context),
        p99_delta_ms: None,
        leases_live_after_s,
        leases_live_after_ms,
        leases_lapsed,
    }
}

/// The rows of seconds `[from, to)`.
fn span(rows: &[Row], from: u64, to: u64) -> &[Row] {
    let start = rows.partition_point(|row| row.second < from);
    let end = rows.partition_point(|row| row.second < to);
    &rows[start..end.max(start)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn faults(texts: &[&str]) -> Vec<Fault> {
        texts
            .iter()
            .map(|text| text.parse().expect("valid"))
            .collect()
    }

    fn rows(live_from: u64) -> Vec<Row> {
        (0..30)
            .map(|second| Row {
                second,
                admitted: 500 + second,
                leases_live: Some(if second >= live_from { 4 } else { 0 }),
                ..Row::default()
            })
            .collect()
    }

    fn context() -> SummaryContext {
        SummaryContext {
            limit: 500.0,
            processes: 4,
            sync_interval: Duration::from_millis(500),
            fleet: true,
        }
    }

    #[test]
    fn faults_pair_into_episodes_with_their_spans() {
        let timeline = faults(&[
            "5s:stop",
            "8s:cont",
            "12s:kill",
            "15s:restart-empty",
            "20s:flushall",
        ]);
        let found = episodes(&timeline, &[], &rows(17), context());
        let names: Vec<_> = found.iter().map(|episode| episode.name.as_str()).collect();
        assert_eq!(names, ["stop→cont", "kill→restart-empty", "flushall"]);
        let stop = &found[0];
        assert_eq!(
            (
                stop.start_s,
                stop.end_s,
                stop.during.from_s,
                stop.during.to_s
            ),
            (5, 8, 5, 9)
        );
        // Two intervals of 500 ms: the one whole second after the recovery's.
        assert_eq!((stop.after.from_s, stop.after.to_s), (9, 10));
        assert_eq!(found[1].leases_live_after_s, Some(2));
        assert_eq!(found[2].leases_live_after_s, Some(0));
    }

    #[test]
    fn a_fault_never_recovered_runs_to_the_end_of_the_phase() {
        let found = episodes(&faults(&["25s:kill"]), &[], &rows(0), context());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "kill (no recovery)");
        assert_eq!((found[0].during.from_s, found[0].during.to_s), (25, 30));
    }

    #[test]
    fn a_failover_ends_when_the_cluster_settled() {
        let timeline = faults(&["10s:failover"]);
        let applied = [FaultEvent {
            fault: timeline[0],
            applied_at_ms: 10_002,
            settled_at_ms: 12_400,
        }];
        let found = episodes(&timeline, &applied, &rows(13), context());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].name, "failover");
        assert_eq!((found[0].start_s, found[0].end_s), (10, 12));
        assert_eq!(found[0].leases_live_after_s, Some(1));
    }
}
