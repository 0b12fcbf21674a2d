//! What the store keeps for one fleet scope: the fleet's state (the scope's `state` hash), one
//! record per live process (the `procs` hash) and when each was last seen (the `seen` sorted
//! set). Every number is an integer below 2^53, in the unit its name gives.

use std::collections::{BTreeMap, BTreeSet};

use super::protocol::{
    MAX_COUNT, MAX_RATE, MAX_TIME_MS, MAX_TOKENS, MAX_WINDOW_MS, ProcessId, Settings,
};

/// How long a store that lost its state re-learns, in sync intervals: long enough for every
/// process, syncing once per interval with a ±10 % jitter, to report. A state's
/// [`relearn_until_ms`](FleetState::relearn_until_ms) is at most this long after its clock.
pub const RELEARN_INTERVALS: i64 = 2;

/// The most reports a measurement tick counts (`tick_reports`), a billion: times the longest
/// sync interval ([`MAX_WINDOW_MS`]) it stays below 2^53, exact in the script.
pub const MOST_TICK_REPORTS: i64 = 1_000_000_000;

/// The most a measurement tick sums of its reports' spans (`tick_span`), milliseconds: each
/// counts at most two sync intervals, so [`MOST_TICK_REPORTS`] reports of the longest interval
/// ([`MAX_WINDOW_MS`]); below 2^53, exact in the script.
pub const MOST_TICK_SPAN_MS: i64 = 2 * MOST_TICK_REPORTS * MAX_WINDOW_MS as i64;

/// The longest time from a cut to the fleet limiter's curve's return to its target, in
/// milliseconds: at the smallest `beta` the protocol accepts (1 ppm),
/// `cbrt(CUBIC_MS3_PER_PPM × 999,999)`
/// ([`CUBIC_MS3_PER_PPM`](super::store_model::CUBIC_MS3_PER_PPM)). A step down counts it as past
/// (the curve's pause at minus it): a stored pause below it is garbage
/// ([`FleetState::in_bounds`]).
pub const MOST_REGAIN_MS: i64 = 2_924;

/// The store's state for one fleet scope, as [`store_model::step`](super::store_model::step)
/// and the script keep it.
///
/// ```
/// use retry_core::fleet::store_state::StoreState;
/// let state = StoreState::default();
/// assert!(state.fleet().is_none());
/// assert!(state.processes().is_empty());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreState {
    fleet: Option<FleetState>,
    processes: BTreeMap<ProcessId, ProcessRecord>,
    /// The processes by when they were last seen, then by id: the `seen` sorted set's order
    /// (score, then member; the ids' hexadecimal text sorts as the numbers do).
    by_seen: BTreeSet<(i64, ProcessId)>,
}

/// The fleet's state: the `state` hash's fields, one per field here (the settings as
/// [`Settings::encode`] writes them, flags as 0 or 1, an unknown rate as -1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetState {
    /// The settings of the first process that attached the scope (`settings`).
    pub settings: Settings,
    /// When the state was born, Unix ms (`born`): the fleet is young for a window after.
    pub born_ms: i64,
    /// The latest time any process reported, Unix ms (`now`).
    pub now_ms: i64,
    /// Until when a store that lost its state re-learns from reports, Unix ms; 0 for a new
    /// fleet (`relearn_until`).
    pub relearn_until_ms: i64,
    /// Tokens not leased to any process (`pool`).
    pub pool: i64,
    /// Tokens the processes hold, as their records count them (`leased`): the sum of their
    /// leases.
    pub leased: i64,
    /// The sum of the processes' retry demands (`retry_demand`).
    pub retry_demand: i64,
    /// The sum of the processes' send demands, thousandths of a request per second
    /// (`send_demand`).
    pub send_demand: i64,
    /// The send demand of processes that expired and is not yet handed on to the others,
    /// thousandths of a request per second, at most [`MAX_RATE`] (`departed_demand`; missing
    /// in a state an earlier script wrote: 0). It counts in the shares' sum and is released
    /// over about a lease (see [`store_model`](super::store_model)'s step 2).
    pub departed_demand: i64,
    /// When the current measurement tick started, Unix ms (`tick_start`).
    pub tick_start_ms: i64,
    /// Calls reported in the current tick (`tick_calls`).
    pub tick_calls: i64,
    /// Sends reported in the current tick (`tick_sends`).
    pub tick_sends: i64,
    /// Throttles reported in the current tick (`tick_throttles`).
    pub tick_throttles: i64,
    /// First-try successes reported in the current tick (`tick_successes`; missing in a state
    /// an earlier script wrote: 0).
    pub tick_successes: i64,
    /// Reports in the current tick from processes the store already knew (`tick_reports`):
    /// each tells about its process's traffic over its span ([`tick_span`](Self::tick_span)).
    pub tick_reports: i64,
    /// The summed send demand of the current tick's reports counted in
    /// [`tick_reports`](Self::tick_reports), each its process's smoothed demand times its
    /// report's span in sync intervals (as `tick_span` clamps it), thousandths of a request
    /// per second, at most [`MOST_TICK_DEMAND`](super::store_model::MOST_TICK_DEMAND)
    /// (`tick_demand`; missing in a state an earlier script wrote: 0): the share of the
    /// fleet's traffic the tick's reports tell about.
    pub tick_demand: i64,
    /// The spans of the current tick's reports counted in `tick_reports`, milliseconds, each
    /// clamped to a quarter of a sync interval to two ([`MOST_TICK_SPAN_MS`] at most;
    /// `tick_span`; missing in a state an earlier script wrote: 0).
    pub tick_span: i64,
    /// Sends reported in the last tick, if it was a whole one (at most
    /// [`LONGEST_TICK_INTERVALS`](super::store_model::LONGEST_TICK_INTERVALS)), else 0
    /// (`last_sends`; missing in a state an earlier script wrote: 0).
    pub last_tick_sends: i64,
    /// Throttles reported in the last tick, if it was a whole one, else 0 (`last_throttles`;
    /// missing in a state an earlier script wrote: 0).
    pub last_tick_throttles: i64,
    /// The fleet's calls per second, thousandths, averaged over about a window; `None` until
    /// the first tick ends (`calls_rate`).
    pub calls_rate: Option<i64>,
    /// The fleet's sends per second, thousandths (`send_rate`): the last tick's, averaged
    /// over the time an even share takes to earn a permit once the fleet is engaged
    /// (`store_model`'s step 6).
    pub send_rate: Option<i64>,
    /// What the server admitted per second in the last tick (sends less throttles),
    /// thousandths (`admitted_rate`).
    pub admitted_rate: Option<i64>,
    /// Whether the last tick's calls said the upstream is failing (`calls_failing`; missing in
    /// a state an earlier script wrote: 0): at least
    /// [`FAILING_MIN_CALLS`](super::store_model::FAILING_MIN_CALLS) calls answered, fewer than
    /// [`FAILING_SUCCESS_BELOW_PPM`](super::store_model::FAILING_SUCCESS_BELOW_PPM) of them
    /// first-try successes.
    pub calls_failing: bool,
    /// Whether the fleet limiter is engaged (`engaged`).
    pub engaged: bool,
    /// Whether the store still adopts the lowest fleet rate processes report (re-learning, no
    /// cut of its own yet) (`adopting`).
    pub adopting: bool,
    /// The limit the fleet measured, thousandths of a request per second: the rate the server
    /// admitted at the last cut (or the one whose target a re-learning store adopted, or where
    /// the curve got at its horizon without a cut); the curve returns to its target,
    /// [`TARGET_MARGIN_PPM`](super::store_model::TARGET_MARGIN_PPM) below it (`w_max`).
    pub w_max: i64,
    /// Whether the last cut was an estimate (`cold_cut`): a cold fleet's first, measured from
    /// ticks that hold little of the traffic that met the limit, or a cut after an estimate
    /// that measured more than [`ESTIMATE_AGREES_PPM`](super::store_model::ESTIMATE_AGREES_PPM)
    /// over it (the tick it measured was the climb from it), or at or over it within
    /// [`ESTIMATE_CONFIRM_INTERVALS`](super::store_model::ESTIMATE_CONFIRM_INTERVALS) of it
    /// (its ticks began before the estimate took effect). The curve grows from an estimate at
    /// once, without the hold and the linear probe.
    pub cold_cut: bool,
    /// When the last cut happened, Unix ms (`cut_at`).
    pub cut_at_ms: i64,
    /// How long the curve has been held since the last cut (or since it started growing again
    /// at its horizon), in milliseconds (`curve_paused`; missing in a state an earlier script
    /// wrote: 0): the ticks in which the fleet sent under half the rate its processes were
    /// given and wanted less than it, past the curve's return to the target, do not move it on;
    /// after a held limit stepped down by its throttled share, less the time to regain the
    /// target (negative: the curve is at its target at once) ([`store_model`](super::store_model)'s
    /// step 7).
    pub curve_paused_ms: i64,
    /// The fleet's send rate at the last report, thousandths of a request per second
    /// (`fleet_rate`).
    pub fleet_rate: i64,
    /// When the store last expired a process, Unix ms; 0 if none since the last undone cut
    /// (`expired_at`; missing in a state an earlier script wrote: 0).
    pub expired_at_ms: i64,
    /// The fleet's rate before the first of the cuts since the store last expired a process
    /// (or the last cut in the lease before it), thousandths of a request per second; 0 for
    /// none (`rate_before_cuts`; missing in a state an earlier script wrote: 0): what the
    /// fleet returns to if a process it expired reports again, its cuts measured without it
    /// ([`store_model`](super::store_model)'s step 7).
    pub rate_before_cuts: i64,
    /// When the store last counted the sums of the leases and demands again from the live
    /// processes' records, Unix ms (`recounted_at`; missing in a state an earlier script wrote:
    /// 0, a recount due at once): once a lease it does, and sums that disagree with the
    /// records are garbage ([`store_model`](super::store_model)'s step 2).
    pub recounted_at_ms: i64,
}

impl FleetState {
    /// Whether every value is within what the script writes: the settings within
    /// [`Settings::check`]'s bounds; the store's clock within `0..=`[`MAX_TIME_MS`], and every
    /// time set from it at or before it (the birth, the tick's start, the last expiry and
    /// recount, the cut:
    /// the curve's rebase may move a cut back before the first reports, down to
    /// `-MAX_TIME_MS`), the end of re-learning at most [`RELEARN_INTERVALS`] sync intervals
    /// after it; the pool within `0..=`[`MAX_TOKENS`] (it is at most the cap), the sums of the
    /// records' leases and demands not negative, the tick's counts within `0..=`[`MAX_COUNT`]
    /// (their sums stop there; its reports within `0..=`[`MOST_TICK_REPORTS`]), rates within
    /// `0..=`[`MAX_RATE`], and the curve's time held unused from `-`[`MOST_REGAIN_MS`] (a step
    /// down counts the time to regain the target as past) to the time since the cut (the curve
    /// is held only for time it ran past the target). A state out of them is garbage, not data
    /// (no report could have led to it: another client wrote it); the store drops it and
    /// re-learns, as after a lost state. The departed demand and the tick's demand are clamped
    /// where they are used: those only need to be stored integers.
    ///
    /// Within these bounds every product the step forms stays below 2^53, where the script's
    /// numbers (doubles) stop being exact integers, and the model's `i64` does not overflow
    /// (the step's count of live processes aside: a product with it passes 2^53 only past
    /// 9 billion processes).
    ///
    /// ```
    /// use retry_core::fleet::protocol::{Report, ProcessId, Reply, Settings};
    /// use retry_core::fleet::store_model::step;
    /// use retry_core::fleet::store_state::{FleetState, StoreState};
    ///
    /// let mut state = StoreState::default();
    /// let report = Report { process: ProcessId(1), now_ms: 1_000, ..Report::default() };
    /// step(&mut state, &Settings::example(), &report).unwrap();
    /// let fleet = *state.fleet().unwrap();
    /// assert!(fleet.in_bounds());
    /// assert!(!FleetState { w_max: 1 << 53, ..fleet }.in_bounds());
    /// ```
    pub fn in_bounds(&self) -> bool {
        let within = |value: i64, least: i64, most: u64| {
            value >= least && u64::try_from(value).map_or(true, |value| value <= most)
        };
        let time = |value: i64| within(value, 0, MAX_TIME_MS);
        let count = |value: i64| within(value, 0, MAX_COUNT);
        let rate = |value: i64| within(value, 0, MAX_RATE);
        let earliest_cut = -i64::try_from(MAX_TIME_MS).unwrap_or(i64::MAX);
        self.settings.check().is_ok()
            && time(self.now_ms)
            && [
                self.born_ms,
                self.tick_start_ms,
                self.expired_at_ms,
                self.recounted_at_ms,
            ]
            .into_iter()
            .all(|at| within(at, 0, self.now_ms.unsigned_abs()))
            && within(self.cut_at_ms, earliest_cut, self.now_ms.unsigned_abs())
            && within(self.relearn_until_ms, 0, self.latest_relearn_end())
            && within(self.pool, 0, MAX_TOKENS)
            && [self.leased, self.retry_demand, self.send_demand]
                .iter()
                .all(|sum| *sum >= 0)
            && within(self.tick_reports, 0, MOST_TICK_REPORTS.unsigned_abs())
            && within(self.tick_span, 0, MOST_TICK_SPAN_MS.unsigned_abs())
            && [
                self.tick_calls,
                self.tick_sends,
                self.tick_throttles,
                self.tick_successes,
                self.last_tick_sends,
                self.last_tick_throttles,
            ]
            .into_iter()
            .all(count)
            && [self.calls_rate, self.send_rate, self.admitted_rate]
                .into_iter()
                .all(|known| known.is_none_or(rate))
            && rate(self.w_max)
            && rate(self.fleet_rate)
            && rate(self.rate_before_cuts)
            && within(
                self.curve_paused_ms,
                -MOST_REGAIN_MS,
                (self.now_ms - self.cut_at_ms).unsigned_abs(),
            )
    }

    /// The latest end of re-learning a state at this clock may hold: [`RELEARN_INTERVALS`] sync
    /// intervals after it (settings within their bounds, the clock within `0..=MAX_TIME_MS`).
    fn latest_relearn_end(&self) -> u64 {
        let interval = self.settings.sync_interval_ms.min(MAX_WINDOW_MS);
        self.now_ms.unsigned_abs() + RELEARN_INTERVALS.unsigned_abs() * interval
    }
}

/// One live process's record: the `procs` hash's value for its id, `lease:owed:retry_demand:
/// send_demand`, and its score in the `seen` sorted set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessRecord {
    /// Tokens the store counts the process as holding: what it held at its last report, as far
    /// as the store could account for it, plus what it was granted then.
    pub lease: i64,
    /// Tokens the last reply asked it to give back, of those the store counts.
    pub owed: i64,
    /// Tokens its retries asked for in its last report.
    pub retry_demand: i64,
    /// Its send demand at its last report, thousandths of a request per second.
    pub send_demand: i64,
    /// When it last reported, on the store's clock, Unix ms (the `seen` score).
    pub seen_ms: i64,
}

impl ProcessRecord {
    /// Whether every value is within the bounds the protocol puts on what a process reports
    /// (tokens at most [`MAX_TOKENS`], tokens asked for at most [`MAX_COUNT`], a send demand at
    /// most [`MAX_RATE`], none negative): a record out of them is garbage, not data (no report
    /// could have led to it: another client wrote it).
    ///
    /// ```
    /// use retry_core::fleet::store_state::ProcessRecord;
    /// let record = ProcessRecord { lease: 5, owed: 0, retry_demand: 1, send_demand: 60_000, seen_ms: 0 };
    /// assert!(record.in_bounds());
    /// assert!(!ProcessRecord { send_demand: 1 << 40, ..record }.in_bounds());
    /// ```
    pub fn in_bounds(&self) -> bool {
        let within = |value: i64, most: u64| u64::try_from(value).is_ok_and(|value| value <= most);
        within(self.lease, MAX_TOKENS)
            && within(self.owed, MAX_TOKENS)
            && within(self.retry_demand, MAX_COUNT)
            && within(self.send_demand, MAX_RATE)
    }
}

impl StoreState {
    /// A state made of its parts (as read back from a store).
    pub fn from_parts(
        fleet: Option<FleetState>,
        processes: BTreeMap<ProcessId, ProcessRecord>,
    ) -> Self {
        let by_seen = processes
            .iter()
            .map(|(id, record)| (record.seen_ms, *id))
            .collect();
        Self {
            fleet,
            processes,
            by_seen,
        }
    }

    /// The fleet's state; `None` before the first report (or after the store lost it).
    pub fn fleet(&self) -> Option<&FleetState> {
        self.fleet.as_ref()
    }

    /// The live processes' records.
    pub fn processes(&self) -> &BTreeMap<ProcessId, ProcessRecord> {
        &self.processes
    }

    /// Forgets everything, as a flushed or restarted-empty store does.
    pub fn clear(&mut self) {
        *self = Self::default();
    }

    pub(crate) fn take_fleet(&mut self) -> Option<FleetState> {
        self.fleet.take()
    }

    pub(crate) fn set_fleet(&mut self, fleet: Option<FleetState>) {
        self.fleet = fleet;
    }

    pub(crate) fn record(&self, id: ProcessId) -> Option<ProcessRecord> {
        self.processes.get(&id).copied()
    }

    pub(crate) fn put_record(&mut self, id: ProcessId, record: ProcessRecord) {
        if let Some(old) = self.processes.insert(id, record) {
            self.by_seen.remove(&(old.seen_ms, id));
        }
        self.by_seen.insert((record.seen_ms, id));
    }

    pub(crate) fn remove_record(&mut self, id: ProcessId) -> Option<ProcessRecord> {
        let record = self.processes.remove(&id)?;
        self.by_seen.remove(&(record.seen_ms, id));
        Some(record)
    }

    /// Whether a process was last seen after `now`, the store's clock: no step marks one so (it
    /// marks the reporting process seen at its clock), another client did.
    pub(crate) fn seen_after(&self, now: i64) -> bool {
        self.by_seen.last().is_some_and(|(seen, _)| *seen > now)
    }

    /// Up to `limit` processes last seen before `cutoff`, the longest silent first.
    pub(crate) fn silent_before(&self, cutoff: i64, limit: usize) -> Vec<ProcessId> {
        self.by_seen
            .range(..(cutoff, ProcessId(0)))
            .take(limit)
            .map(|(_, id)| *id)
            .collect()
    }
}
