//! What a run measures: counters in 100 ms bins, a latency histogram, per-client tallies, and
//! the metrics derived from them.

use crate::fault::FaultSchedule;
use crate::fleet::store_trace::StoreStep;
use crate::log_histogram::LogHistogram;
use crate::time::{MILLI, Nanos, SECOND};

/// Width of a time bin: 100 ms.
pub const BIN: Nanos = 100 * MILLI;

/// Bins per second.
pub const BINS_PER_SECOND: usize = (SECOND / BIN) as usize;

/// The time windows a run's metrics are computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Windows {
    /// The fault window (the whole run after a warm-up when there is no timed fault).
    pub window: (Nanos, Nanos),
    /// The fault window from 10 s after its start.
    pub late: (Nanos, Nanos),
    /// The healthy reference before the fault (60 s), for R95.
    pub baseline: (Nanos, Nanos),
    /// When the fault ends, if it ends before the horizon: R95 is measured from there.
    pub recovery_from: Option<Nanos>,
    /// End of arrivals.
    pub horizon: Nanos,
}

impl Windows {
    /// The windows of a run with these faults and horizon.
    ///
    /// ```
    /// use retry_sim::{fault::*, metrics::Windows, time::SECOND};
    /// let faults = FaultSchedule::new(vec![Fault::at(FaultKind::Outage, 120.0, 60.0)]);
    /// let w = Windows::new(&faults, 600 * SECOND);
    /// assert_eq!(w.late, (130 * SECOND, 180 * SECOND));
    /// assert_eq!(w.baseline, (60 * SECOND, 120 * SECOND));
    /// ```
    pub fn new(faults: &FaultSchedule, horizon: Nanos) -> Self {
        match faults.window() {
            Some((start, end)) => {
                let end = end.min(horizon);
                Self {
                    window: (start, end),
                    late: ((start + 10 * SECOND).min(end), end),
                    baseline: (start.saturating_sub(60 * SECOND), start),
                    recovery_from: (end < horizon).then_some(end),
                    horizon,
                }
            }
            None => {
                let warmup = (10 * SECOND).min(horizon / 10);
                Self {
                    window: (warmup, horizon),
                    late: (warmup, horizon),
                    baseline: (warmup, horizon),
                    recovery_from: None,
                    horizon,
                }
            }
        }
    }
}

/// Latency histogram: 1 ms bins to 2 s, then 10 ms bins to 62 s (the last bin holds the rest).
#[derive(Debug, Clone)]
struct Histogram {
    counts: Vec<u32>,
    total: u64,
}

const FINE_BINS: usize = 2000;
const COARSE_BINS: usize = 6000;

impl Histogram {
    fn new() -> Self {
        Self {
            counts: vec![0; FINE_BINS + COARSE_BINS],
            total: 0,
        }
    }

    fn record(&mut self, latency: Nanos) {
        let ms = (latency / MILLI) as usize;
        let bin = if ms < FINE_BINS {
            ms
        } else {
            (FINE_BINS + (ms - FINE_BINS) / 10).min(FINE_BINS + COARSE_BINS - 1)
        };
        self.counts[bin] += 1;
        self.total += 1;
    }

    /// The `q` quantile in milliseconds (the middle of its bin), NaN when empty.
    fn quantile_ms(&self, q: f64) -> f64 {
        if self.total == 0 {
            return f64::NAN;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0u64;
        for (bin, &count) in self.counts.iter().enumerate() {
            seen += u64::from(count);
            if seen >= rank {
                return if bin < FINE_BINS {
                    bin as f64 + 0.5
                } else {
                    (FINE_BINS + (bin - FINE_BINS) * 10) as f64 + 5.0
                };
            }
        }
        f64::NAN
    }
}

/// Hedges in a run's window.
#[derive(Debug, Clone, Copy, Default)]
struct HedgeCounts {
    sent: u64,
    refused: u64,
    won: u64,
}

/// Counters of one run, filled by the event loop.
#[derive(Debug, Clone)]
pub struct Recorder {
    windows: Windows,
    /// Requests arriving (top layer), per bin of arrival.
    arrivals: Vec<u32>,
    /// Attempts reaching the server, per bin of sending.
    attempts: Vec<u32>,
    /// 429 answers, per bin.
    throttled: Vec<u32>,
    /// Commands sent to the fleet's store, per bin.
    store_commands: Vec<u32>,
    /// The fleet's rate in the store's last step of each bin, thousandths of a request per
    /// second (0: not engaged, or no step in the bin).
    fleet_rate: Vec<u32>,
    /// Successful requests, per bin of their arrival.
    ok_by_arrival: Vec<u32>,
    /// Successful requests, per bin of their completion.
    ok_by_completion: Vec<u32>,
    /// Worker time on attempts whose success was delivered, per bin of completion.
    useful_busy: Vec<u64>,
    /// Worker time on the other attempts.
    wasted_busy: Vec<u64>,
    latency: Histogram,
    /// The same latencies in 1 % bins, for the hedging tables' percentiles.
    fine_latency: LogHistogram,
    /// Hedges sent, refused, and successful requests a hedge answered, in the window.
    hedges: HedgeCounts,
    client_requests: Vec<u32>,
    client_successes: Vec<u32>,
    /// Retries sent sooner than the `Retry-After` of the 429 they follow.
    pub retry_after_violations: u64,
    /// Attempts a client rejected locally (SRE throttling) or retries it refused (`max_wait`).
    pub local_rejections: u64,
    /// Calls the caller's deadline cancelled.
    pub deadline_cancels: u64,
}

impl Recorder {
    /// A recorder for a run with these windows, `clients` top-layer clients, and events up to
    /// `end`.
    pub fn new(windows: Windows, clients: u32, end: Nanos) -> Self {
        let bins = (end / BIN) as usize + 2;
        Self {
            windows,
            arrivals: vec![0; bins],
            attempts: vec![0; bins],
            throttled: vec![0; bins],
            store_commands: vec![0; bins],
            fleet_rate: vec![0; bins],
            ok_by_arrival: vec![0; bins],
            ok_by_completion: vec![0; bins],
            useful_busy: vec![0; bins],
            wasted_busy: vec![0; bins],
            latency: Histogram::new(),
            fine_latency: LogHistogram::new(),
            hedges: HedgeCounts::default(),
            client_requests: vec![0; clients as usize],
            client_successes: vec![0; clients as usize],
            retry_after_violations: 0,
            local_rejections: 0,
            deadline_cancels: 0,
        }
    }

    fn bin(&self, at: Nanos) -> usize {
        ((at / BIN) as usize).min(self.arrivals.len() - 1)
    }

    fn in_window(&self, at: Nanos) -> bool {
        self.windows.window.0 <= at && at < self.windows.window.1
    }

    /// A top-layer request arrives.
    pub fn request(&mut self, at: Nanos, client: u32) {
        let bin = self.bin(at);
        self.arrivals[bin] += 1;
        if self.in_window(at) {
            self.client_requests[client as usize] += 1;
        }
    }

    /// A top-layer request ended.
    pub fn request_done(&mut self, started: Nanos, at: Nanos, client: u32, success: bool) {
        if !success {
            return;
        }
        let bin = self.bin(started);
        self.ok_by_arrival[bin] += 1;
        let bin = self.bin(at);
        self.ok_by_completion[bin] += 1;
        if self.in_window(started) {
            self.client_successes[client as usize] += 1;
            self.latency.record(at - started);
            self.fine_latency.record(at - started);
        }
    }

    /// A hedge (a copy of an attempt in flight) was sent at `at`, or refused by the client's
    /// budget when `sent` is false.
    pub fn hedge(&mut self, at: Nanos, sent: bool) {
        if self.in_window(at) {
            if sent {
                self.hedges.sent += 1;
            } else {
                self.hedges.refused += 1;
            }
        }
    }

    /// A hedge answered the successful request that started at `started`.
    pub fn hedge_won(&mut self, started: Nanos) {
        if self.in_window(started) {
            self.hedges.won += 1;
        }
    }

    /// An attempt reaches the server.
    pub fn attempt(&mut self, at: Nanos) {
        let bin = self.bin(at);
        self.attempts[bin] += 1;
    }

    /// A command is sent to the fleet's store.
    pub fn store_command(&mut self, at: Nanos) {
        let bin = self.bin(at);
        self.store_commands[bin] += 1;
    }

    /// The store's step left the fleet's rate at `rate` (thousandths of a request per second).
    pub fn fleet_rate(&mut self, at: Nanos, rate: u64) {
        let bin = self.bin(at);
        self.fleet_rate[bin] = u32::try_from(rate).unwrap_or(u32::MAX);
    }

    /// The server answered 429.
    pub fn throttled(&mut self, at: Nanos) {
        let bin = self.bin(at);
        self.throttled[bin] += 1;
    }

    /// A worker spent `busy` on an attempt ending at `at`; `useful` when its success was
    /// delivered to a waiting caller.
    pub fn busy(&mut self, at: Nanos, busy: Nanos, useful: bool) {
        let bin = self.bin(at);
        if useful {
            self.useful_busy[bin] += busy;
        } else {
            self.wasted_busy[bin] += busy;
        }
    }

    fn sum32(series: &[u32], range: (Nanos, Nanos)) -> u64 {
        let (a, b) = ((range.0 / BIN) as usize, (range.1 / BIN) as usize);
        series[a.min(series.len())..b.min(series.len())]
            .iter()
            .map(|&v| u64::from(v))
            .sum()
    }

    fn sum64(series: &[u64], range: (Nanos, Nanos)) -> u64 {
        let (a, b) = ((range.0 / BIN) as usize, (range.1 / BIN) as usize);
        series[a.min(series.len())..b.min(series.len())]
            .iter()
            .sum()
    }

    /// The metrics of the run. `capacity` is what the service can usefully deliver per second
    /// during the window (for normalized goodput).
    pub fn finish(&self, capacity: f64) -> RunOutput {
        let w = self.windows;
        let ratio = |a: u64, b: u64| {
            if b == 0 {
                f64::NAN
            } else {
                a as f64 / b as f64
            }
        };
        let span = (w.window.1 - w.window.0) as f64 / SECOND as f64;
        let requests = Self::sum32(&self.arrivals, w.window);
        let offered = requests as f64 / span;
        let goodput = Self::sum32(&self.ok_by_completion, w.window) as f64 / span;
        let deliverable = if capacity > 0.0 {
            offered.min(capacity)
        } else {
            offered
        };
        let useful = Self::sum64(&self.useful_busy, w.window);
        let wasted = Self::sum64(&self.wasted_busy, w.window);
        let horizon = (0, w.horizon);
        let run_bins = &self.attempts[..((w.horizon / BIN) as usize).min(self.attempts.len())];
        let peak = run_bins.iter().copied().max().unwrap_or(0);
        let mean =
            run_bins.iter().map(|&v| f64::from(v)).sum::<f64>() / run_bins.len().max(1) as f64;
        let r95 = self.r95();
        let t90 = self.t90();
        let metrics = RunMetrics {
            amplification: ratio(Self::sum32(&self.attempts, w.window), requests),
            amplification_late: ratio(
                Self::sum32(&self.attempts, w.late),
                Self::sum32(&self.arrivals, w.late),
            ),
            amplification_run: ratio(
                Self::sum32(&self.attempts, horizon),
                Self::sum32(&self.arrivals, horizon),
            ),
            goodput,
            goodput_normalized: goodput / deliverable,
            success_rate: ratio(Self::sum32(&self.ok_by_arrival, w.window), requests),
            success_rate_run: ratio(
                Self::sum32(&self.ok_by_arrival, horizon),
                Self::sum32(&self.arrivals, horizon),
            ),
            wasted_work: ratio(wasted, useful + wasted),
            r95: r95.0,
            r95_censored: r95.1,
            t90: t90.0,
            t90_censored: t90.1,
            p99_latency_ms: self.latency.quantile_ms(0.99),
            p50_ms: self.fine_latency.quantile_ms(0.5),
            p99_ms: self.fine_latency.quantile_ms(0.99),
            p999_ms: self.fine_latency.quantile_ms(0.999),
            hedges: ratio(self.hedges.sent, requests),
            hedges_refused: ratio(self.hedges.refused, requests),
            hedges_won: ratio(self.hedges.won, Self::sum32(&self.ok_by_arrival, w.window)),
            retry_after_violations: self.retry_after_violations as f64,
            share_429: ratio(
                Self::sum32(&self.throttled, w.window),
                Self::sum32(&self.attempts, w.window),
            ),
            admitted_1s: self.admitted_peak(SECOND, capacity),
            admitted_10s: self.admitted_peak(10 * SECOND, capacity),
            store_commands: Self::sum32(&self.store_commands, w.window) as f64 / span,
            fleet_recovery: f64::NAN,
            peak_to_mean: if mean > 0.0 {
                f64::from(peak) / mean
            } else {
                f64::NAN
            },
            jain: self.jain(),
            local_rejections: self.local_rejections as f64,
            deadline_cancels: self.deadline_cancels as f64,
        };
        RunOutput {
            metrics,
            arrivals: self.arrivals.clone(),
            ok_by_arrival: self.ok_by_arrival.clone(),
            store_commands: self.store_commands.clone(),
            fleet_rate: self.fleet_rate.clone(),
            throttled: self.throttled.clone(),
            attempts: self.attempts.clone(),
            successes: self.ok_by_completion.clone(),
            store_steps: Vec::new(),
        }
    }

    /// Seconds from the fault's end until the success ratio of arriving requests, over every
    /// 1 s window of the next 5 s, is at least 95 % of its healthy value. NaN without a fault
    /// end; the time to the horizon, flagged as censored, when it never recovers.
    fn r95(&self) -> (f64, bool) {
        let Some(from) = self.windows.recovery_from else {
            return (f64::NAN, false);
        };
        let healthy = {
            let requests = Self::sum32(&self.arrivals, self.windows.baseline);
            let ok = Self::sum32(&self.ok_by_arrival, self.windows.baseline);
            if requests == 0 {
                1.0
            } else {
                ok as f64 / requests as f64
            }
        };
        let threshold = 0.95 * healthy;
        let first = (from / BIN) as usize;
        let last = ((self.windows.horizon / BIN) as usize).min(self.arrivals.len());
        let window_ok = |start: usize| -> bool {
            let end = (start + BINS_PER_SECOND).min(last);
            let requests: u64 = self.arrivals[start..end]
                .iter()
                .map(|&v| u64::from(v))
                .sum();
            let ok: u64 = self.ok_by_arrival[start..end]
                .iter()
                .map(|&v| u64::from(v))
                .sum();
            requests == 0 || ok as f64 >= threshold * requests as f64
        };
        let hold = 5 * BINS_PER_SECOND;
        let mut candidate = first;
        let mut bin = first;
        while bin < last {
            if window_ok(bin) {
                if bin + 1 - candidate > hold || bin + BINS_PER_SECOND >= last {
                    return (
                        (candidate - first) as f64 * BIN as f64 / SECOND as f64,
                        false,
                    );
                }
            } else {
                candidate = bin + 1;
            }
            bin += 1;
        }
        (
            (last.saturating_sub(first)) as f64 * BIN as f64 / SECOND as f64,
            true,
        )
    }

    /// Seconds from the fault's end until the successes of a 1 s window (by completion) are
    /// at least 90 % of the healthy successes per second (the baseline window before the
    /// fault): how soon the client's rate regains the service's raised limit. NaN without a
    /// fault end; the time to the horizon, flagged as censored, when it never gets there.
    fn t90(&self) -> (f64, bool) {
        let Some(from) = self.windows.recovery_from else {
            return (f64::NAN, false);
        };
        let (a, b) = self.windows.baseline;
        let seconds = (b - a) as f64 / SECOND as f64;
        let healthy = Self::sum32(&self.ok_by_completion, self.windows.baseline) as f64 / seconds;
        let first = (from / BIN) as usize;
        let last = ((self.windows.horizon / BIN) as usize).min(self.ok_by_completion.len());
        let reached = (first..last.saturating_sub(BINS_PER_SECOND - 1)).find(|&start| {
            let ok: u64 = self.ok_by_completion[start..start + BINS_PER_SECOND]
                .iter()
                .map(|&v| u64::from(v))
                .sum();
            ok as f64 >= 0.9 * healthy
        });
        let secs = |bins: usize| bins as f64 * BIN as f64 / SECOND as f64;
        match reached {
            // The window ending at `start + 1 s` is the first at 90 %: its end is the time.
            Some(start) => (secs(start + BINS_PER_SECOND - first), false),
            None => (secs(last.saturating_sub(first)), true),
        }
    }

    /// The most attempts reaching the server in one of the consecutive windows of `length`
    /// that tile the window from 10 s after the fault's start (as a per-second or per-10 s
    /// report shows them), per second, over the window's `capacity` (the throttle's limit); NaN
    /// without a capacity or a window that long.
    fn admitted_peak(&self, length: Nanos, capacity: f64) -> f64 {
        let (start, end) = self.windows.late;
        let bins = (length / BIN) as usize;
        let first = (start / BIN) as usize;
        let last = ((end / BIN) as usize).min(self.attempts.len());
        if capacity <= 0.0 || bins == 0 || last < first + bins {
            return f64::NAN;
        }
        let most = self.attempts[first..last]
            .chunks_exact(bins)
            .map(|window| window.iter().map(|&v| u64::from(v)).sum::<u64>())
            .max()
            .unwrap_or(0);
        most as f64 / (length as f64 / SECOND as f64) / capacity
    }

    /// Jain's fairness index of the clients' success ratios over the window.
    fn jain(&self) -> f64 {
        let (mut sum, mut squares, mut n) = (0.0, 0.0, 0.0);
        for (&requests, &ok) in self.client_requests.iter().zip(&self.client_successes) {
            if requests > 0 {
                let x = f64::from(ok) / f64::from(requests);
                sum += x;
                squares += x * x;
                n += 1.0;
            }
        }
        if squares == 0.0 {
            f64::NAN
        } else {
            sum * sum / (n * squares)
        }
    }
}

/// The scalar metrics of one run (NaN when undefined).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RunMetrics {
    /// Attempts at the server per request, over the fault window.
    pub amplification: f64,
    /// The same from 10 s after the fault's start.
    pub amplification_late: f64,
    /// The same over the whole run.
    pub amplification_run: f64,
    /// Successful requests per second over the window.
    pub goodput: f64,
    /// Goodput over what the service could deliver in the window: `min(offered, capacity)`
    /// (the offered load when the capacity is zero).
    pub goodput_normalized: f64,
    /// Share of the window's requests that succeeded.
    pub success_rate: f64,
    /// Share of all requests that succeeded.
    pub success_rate_run: f64,
    /// Share of worker time in the window spent on attempts whose success nobody received.
    pub wasted_work: f64,
    /// Recovery time after the fault, seconds.
    pub r95: f64,
    /// Whether R95 is censored: no recovery before the horizon (R95 is then the time left).
    pub r95_censored: bool,
    /// Seconds from the fault's end (a limit raised or lifted, capacity back) until the
    /// successful requests per second, over a 1 s window, reach 90 % of their healthy rate
    /// before the fault. NaN without a fault end.
    pub t90: f64,
    /// Whether T90 is censored: never reached before the horizon (T90 is then the time left).
    pub t90_censored: bool,
    /// p99 latency of the window's successful requests, ms.
    pub p99_latency_ms: f64,
    /// p50 latency of the window's successful requests, ms, from 1 % bins.
    pub p50_ms: f64,
    /// p99 latency of the window's successful requests, ms, from 1 % bins.
    pub p99_ms: f64,
    /// p99.9 latency of the window's successful requests, ms, from 1 % bins.
    pub p999_ms: f64,
    /// Hedges sent per request, over the window (0 without hedging).
    pub hedges: f64,
    /// Hedges the client's budget refused per request, over the window.
    pub hedges_refused: f64,
    /// Share of the window's successful requests a hedge answered.
    pub hedges_won: f64,
    /// Retries sent before the `Retry-After` they were given.
    pub retry_after_violations: f64,
    /// Share of the window's attempts answered 429.
    pub share_429: f64,
    /// Admitted, the peak second: the attempts the clients let through to the server (counted
    /// as they reach it, whatever it answers) in each second of the window from 10 s after the
    /// fault's start, the most of them, over the window's capacity (the throttle's limit). NaN
    /// without a capacity (an outage).
    pub admitted_1s: f64,
    /// The same over consecutive 10 s windows: their most attempts per second over the limit.
    pub admitted_10s: f64,
    /// Commands sent to the fleet's store per second over the window (0 for the arms without
    /// a store).
    pub store_commands: f64,
    /// Seconds from the store's recovery after its fault until every process holds a live
    /// lease again, the fleet limiter engaged as before the fault (fleet mode; NaN otherwise).
    pub fleet_recovery: f64,
    /// Highest 100 ms attempt count over the mean, whole run.
    pub peak_to_mean: f64,
    /// Jain's fairness index of the clients' success ratios in the window.
    pub jain: f64,
    /// Attempts rejected locally, or retries refused for `max_wait`.
    pub local_rejections: f64,
    /// Calls cancelled by the caller's deadline.
    pub deadline_cancels: f64,
}

/// What one run produces: its metrics and its time series (100 ms bins).
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutput {
    /// The scalar metrics.
    pub metrics: RunMetrics,
    /// Attempts at the server per 100 ms bin.
    pub attempts: Vec<u32>,
    /// Successful requests per 100 ms bin of completion.
    pub successes: Vec<u32>,
    /// Requests arriving per 100 ms bin.
    pub arrivals: Vec<u32>,
    /// Successful requests per 100 ms bin of their arrival.
    pub ok_by_arrival: Vec<u32>,
    /// Commands sent to the fleet's store per 100 ms bin.
    pub store_commands: Vec<u32>,
    /// 429 answers per 100 ms bin.
    pub throttled: Vec<u32>,
    /// The fleet's rate after the store's last step in each 100 ms bin, thousandths of a
    /// request per second (0: not engaged, or no step).
    pub fleet_rate: Vec<u32>,
    /// The fleet store's steps, if its configuration asked to keep them
    /// ([`StoreConfig::trace_steps`](crate::fleet::store::StoreConfig::trace_steps)).
    pub store_steps: Vec<StoreStep>,
}
