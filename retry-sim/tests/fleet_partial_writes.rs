//! Fleet mode when the store's writes fail for part of the fleet (Redis at `maxmemory` with
//! `noeviction`, an ACL that refuses some processes' user): the store no longer hears those
//! processes, expires them and shares the fleet's rate among the others, while the unheard ones
//! go on sending. The fleet must stay within 1.10x the limit in every second, and a fleet whose
//! processes really crash must still hand their shares to the live ones.

use retry_sim::fleet::process::{Ending, ProcessArrivals, ProcessSpec};
use retry_sim::fleet::shape::{Churn, Shape, Skew, Start};
use retry_sim::fleet::store_fault::{StoreFault, StoreFaultKind};
use retry_sim::metrics::{BINS_PER_SECOND, RunOutput};
use retry_sim::sim::run;
use retry_sim::time::SECOND;

/// The server's limit, requests per second.
const LIMIT: f64 = 500.0;

/// The fleet's processes: eight of equal demand.
const PROCESSES: usize = 8;

/// How many of them the store stops hearing (or that crash): three of eight, the third.
const UNHEARD: usize = 3;

/// When the store's writes start failing for them (or they crash): 30 s into the limit.
const FAULT_AT_S: u64 = 60;

/// The lease: three sync intervals of 1 s.
const LEASE_S: u64 = 3;

/// How long the writes fail: 60 s, twenty leases of the 1 s sync.
const FAULT_FOR_S: u64 = 60;

/// Eight Poisson processes offering 1.4x a 500/s limit (a bucket of 50), syncing every second,
/// steady start, no 5xx: F3's fleet in eight processes, with `fault` and `processes` changed.
fn shape(fault: Option<StoreFault>, processes: Vec<ProcessSpec>) -> Shape {
    Shape {
        seed: 25,
        limit: LIMIT,
        burst: 50.0,
        load: 1.4,
        errors: 0.0,
        max_attempts: 3,
        sync_interval: SECOND,
        start: Start::Steady,
        skew: Skew::Spread(1.0),
        arrivals: Some(ProcessArrivals::Poisson),
        churn: Churn::None,
        store_fault: fault,
        processes,
        max_wait: None,
    }
}

fn even_processes() -> Vec<ProcessSpec> {
    (0..PROCESSES)
        .map(|_| ProcessSpec {
            rate: 1.4 * LIMIT / PROCESSES as f64,
            arrivals: ProcessArrivals::Poisson,
            joins: 0,
            starting: 0,
            ends: None,
        })
        .collect()
}

/// The fleet arm's run of `shape`.
fn fleet_run(shape: &Shape) -> RunOutput {
    let strategies = shape.strategies().expect("built-in strategies");
    run(&shape.config(), &strategies[1], shape.seed).expect("runs")
}

/// The attempts sent in each second of `output`.
fn sent_per_second(output: &RunOutput) -> Vec<u64> {
    output
        .attempts
        .chunks(BINS_PER_SECOND)
        .map(|second| second.iter().map(|&v| u64::from(v)).sum())
        .collect()
}

/// The second of `seconds` (from `from` on) where the most were sent, and how many.
fn busiest(sent: &[u64], seconds: std::ops::Range<u64>) -> (u64, u64) {
    seconds
        .map(|s| (s, sent[s as usize]))
        .max_by_key(|&(_, n)| n)
        .expect("a second")
}

#[test]
fn writes_failing_for_a_third_of_the_processes_keep_the_fleet_within_1_10_of_the_limit() {
    let start = FAULT_AT_S * SECOND;
    let fault = StoreFault {
        kind: StoreFaultKind::PartialWrites {
            share_ppm: 0,
            per_command: false,
        },
        start,
        end: start + FAULT_FOR_S * SECOND,
    };
    // Which processes fail is drawn by their ids: find the share that fails three of eight.
    let share_ppm = (1..=1_000)
        .map(|k| k * 1_000)
        .find(|&share_ppm| {
            let faults = retry_sim::fleet::store_fault::StoreFaults::new(vec![StoreFault {
                kind: StoreFaultKind::PartialWrites {
                    share_ppm,
                    per_command: false,
                },
                ..fault
            }]);
            (1..=PROCESSES as u64)
                .filter(|&p| {
                    faults.write_failure(start, p)
                        == retry_sim::fleet::store_fault::WriteFailure::Fails
                })
                .count()
                == UNHEARD
        })
        .expect("a share that fails three of eight");
    let shape = shape(
        Some(StoreFault {
            kind: StoreFaultKind::PartialWrites {
                share_ppm,
                per_command: false,
            },
            ..fault
        }),
        even_processes(),
    );
    let sent = sent_per_second(&fleet_run(&shape));
    let (second, most) = busiest(&sent, FAULT_AT_S..FAULT_AT_S + FAULT_FOR_S + 5);
    let over = most as f64 / LIMIT;
    let during = &sent[FAULT_AT_S as usize..(FAULT_AT_S + FAULT_FOR_S) as usize];
    eprintln!(
        "writes failing for {UNHEARD} of {PROCESSES}: busiest second {over:.3}x the limit; sent {during:?}"
    );
    assert!(
        over <= 1.10,
        "second {second}: {most} sent, {over:.3}x the limit"
    );
}

#[test]
fn processes_that_crash_hand_their_share_to_the_live_ones_within_ten_seconds() {
    let crash_at = FAULT_AT_S * SECOND;
    let mut processes = even_processes();
    for process in processes.iter_mut().take(UNHEARD) {
        process.ends = Some((crash_at, Ending::Crashes));
    }
    let shape = shape(None, processes);
    let sent = sent_per_second(&fleet_run(&shape));
    // The live five offer 437.5/s, under the limit: back when three seconds in a row send 0.95
    // of that.
    let offered = 1.4 * LIMIT * (PROCESSES - UNHEARD) as f64 / PROCESSES as f64;
    let back = (FAULT_AT_S..FAULT_AT_S + 60)
        .find(|&s| (s..s + 3).all(|t| sent[t as usize] as f64 >= 0.95 * offered))
        .map(|s| s - FAULT_AT_S);
    let after = &sent[FAULT_AT_S as usize..FAULT_AT_S as usize + 20];
    eprintln!(
        "{UNHEARD} of {PROCESSES} crashed: the live ones back after {back:?} s; sent {after:?}"
    );
    // Three leases (the store's expiry, then most of the departed demand released) and a sync.
    assert!(
        back.is_some_and(|s| s <= 3 * LEASE_S + 1),
        "the crashed processes' share not handed on within 10 s: {back:?} s"
    );
}
