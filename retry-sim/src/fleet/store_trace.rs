//! The store's steps, one line each: what a report said, what the store's state was after it,
//! and what the lease gave the process. Asked for with [`StoreConfig::trace_steps`]
//! (`retry-sim -s shapes --shape-seeds N --trace` writes them to `trace-N-store.csv`): the
//! rules of the fleet's rate and of its shares are read there, not rebuilt with prints.
//!
//! [`StoreConfig::trace_steps`]: super::store::StoreConfig::trace_steps

use std::fmt::Write as _;

use retry_core::fleet::protocol::{Lease, Report};
use retry_core::fleet::store_state::FleetState;

use crate::time::{MILLI, Nanos};

/// One step of the store that replied with a lease. Rates are in thousandths of a request per
/// second, as the protocol carries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreStep {
    /// When the store executed the command, milliseconds of the run.
    pub at_ms: u64,
    /// The reporting process.
    pub process: u64,
    /// Its attempts sent since its last report.
    pub sends: u64,
    /// Its attempts throttled since its last report.
    pub throttles: u64,
    /// The send demand it reported.
    pub send_demand: u64,
    /// The live processes the lease counted.
    pub live: u64,
    /// The process's share of the fleet's rate, parts per million.
    pub share_ppm: u64,
    /// The process's send rate: its share of the fleet's rate.
    pub send_rate: u64,
    /// Whether the fleet's limiter is engaged after the step.
    pub engaged: bool,
    /// The fleet's rate after the step.
    pub fleet_rate: i64,
    /// The fleet's send rate that caps its rate (twice it), as its last tick left it (-1:
    /// none yet).
    pub fleet_send_rate: i64,
    /// What the server admitted per second in the last tick (-1: none yet).
    pub admitted_rate: i64,
    /// The limit the fleet measured (`w_max`).
    pub w_max: i64,
    /// Whether the last cut was an estimate (a cold fleet's first, or a cut after an estimate
    /// that did not confirm it: `FleetState::cold_cut`).
    pub cold_cut: bool,
    /// The live processes' send demands, summed: what the shares are taken of, with
    /// `departed_demand`.
    pub demand_sum: i64,
    /// The send demand of expired processes not yet released.
    pub departed_demand: i64,
    /// The send demand the current tick's reports carry, summed: what the tick's admitted rate
    /// is weighed by, over `demand_sum` (`FleetState::tick_demand`).
    pub tick_demand: i64,
    /// How long the curve has been held unused since the last cut, milliseconds
    /// (`FleetState::curve_paused_ms`).
    pub curve_paused_ms: i64,
}

impl StoreStep {
    /// The step executed `at` for `report`, which left `fleet` and replied `lease`.
    pub fn new(at: Nanos, report: &Report, lease: &Lease, fleet: &FleetState) -> Self {
        Self {
            at_ms: at / MILLI,
            process: report.process.0,
            sends: report.sends,
            throttles: report.throttles,
            send_demand: report.send_demand,
            live: lease.live,
            share_ppm: lease.share_ppm,
            send_rate: lease.send_rate,
            engaged: fleet.engaged,
            fleet_rate: fleet.fleet_rate,
            fleet_send_rate: fleet.send_rate.unwrap_or(-1),
            admitted_rate: fleet.admitted_rate.unwrap_or(-1),
            w_max: fleet.w_max,
            cold_cut: fleet.cold_cut,
            demand_sum: fleet.send_demand,
            departed_demand: fleet.departed_demand,
            tick_demand: fleet.tick_demand,
            curve_paused_ms: fleet.curve_paused_ms,
        }
    }
}

/// `steps` as CSV, with a header naming each field.
///
/// ```
/// let csv = retry_sim::fleet::store_trace::csv(&[]);
/// assert!(csv.starts_with("at_ms,process,sends,throttles,send_demand,"));
/// assert_eq!(csv.lines().count(), 1);
/// ```
pub fn csv(steps: &[StoreStep]) -> String {
    let mut out = String::from(
        "at_ms,process,sends,throttles,send_demand,live,share_ppm,send_rate,engaged,fleet_rate,\
         fleet_send_rate,admitted_rate,w_max,cold_cut,demand_sum,departed_demand,tick_demand,\
         curve_paused_ms\n",
    );
    for s in steps {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            s.at_ms,
            s.process,
            s.sends,
            s.throttles,
            s.send_demand,
            s.live,
            s.share_ppm,
            s.send_rate,
            u8::from(s.engaged),
            s.fleet_rate,
            s.fleet_send_rate,
            s.admitted_rate,
            s.w_max,
            u8::from(s.cold_cut),
            s.demand_sum,
            s.departed_demand,
            s.tick_demand,
            s.curve_paused_ms
        );
    }
    out
}
