//! The oracle's static split ([`Arm::StaticSplit`](super::arm::Arm::StaticSplit)): each process
//! sends through a bucket of its own at the server's limit times its share of the fleet's mean
//! demand among the processes alive, as a per-process `governor` (GCRA) sized by hand would,
//! with what only an oracle knows (the limit and every process's mean rate).

use super::process::ProcessSpec;
use crate::time::{Nanos, SECOND};

/// One process's bucket, as GCRA keeps it: a theoretical arrival time.
#[derive(Debug, Clone, Copy, Default)]
struct Gate {
    /// Nanoseconds between two sends at the process's share (infinite: no share).
    interval: f64,
    /// How far ahead of its pace a send may go (its burst), nanoseconds.
    tolerance: f64,
    /// When the next send is due at the process's pace.
    due: f64,
}

/// The static split of one run.
///
/// ```
/// use retry_sim::fleet::process::ProcessSpec;
/// use retry_sim::fleet::static_split::StaticSplit;
/// use retry_sim::time::SECOND;
/// // 100/s split over a process of 3/s and one of 1/s: 75/s and 25/s.
/// let processes = [ProcessSpec::steady(3.0), ProcessSpec::steady(1.0)];
/// let mut split = StaticSplit::new(100.0, 0.0, &processes, 0);
/// assert_eq!(split.turn(1, 0, SECOND), Some(0));
/// assert_eq!(split.turn(1, 0, SECOND), Some(SECOND / 25));
/// ```
#[derive(Debug, Clone)]
pub struct StaticSplit {
    limit: f64,
    burst: f64,
    rates: Vec<f64>,
    gates: Vec<Gate>,
}

impl StaticSplit {
    /// The split of `limit` requests per second (a server bucket of `burst`) over
    /// `processes`, for those alive at `now`.
    pub fn new(limit: f64, burst: f64, processes: &[ProcessSpec], now: Nanos) -> Self {
        let mut split = Self {
            limit,
            burst,
            rates: processes.iter().map(|p| p.rate).collect(),
            gates: vec![Gate::default(); processes.len()],
        };
        split.resize(processes, now);
        split
    }

    /// Shares the limit again over the processes alive at `now` (one joined or ended).
    pub fn resize(&mut self, processes: &[ProcessSpec], now: Nanos) {
        let alive: f64 = processes
            .iter()
            .filter(|p| p.alive_at(now))
            .map(|p| p.rate)
            .sum();
        for ((gate, process), rate) in self.gates.iter_mut().zip(processes).zip(&self.rates) {
            if !process.alive_at(now) || alive <= 0.0 {
                gate.interval = f64::INFINITY;
                continue;
            }
            let share = rate / alive;
            let pace = self.limit * share;
            gate.interval = SECOND as f64 / pace;
            // Its part of the server's burst, beyond the one send every bucket allows.
            gate.tolerance = (self.burst * share - 1.0).max(0.0) * gate.interval;
        }
    }

    /// Takes process `process`'s next turn to send, asked at `now`: when it comes, or `None`
    /// (nothing taken) if it would come after `latest`.
    pub fn turn(&mut self, process: usize, now: Nanos, latest: Nanos) -> Option<Nanos> {
        let gate = self.gates.get_mut(process)?;
        if !gate.interval.is_finite() {
            return None;
        }
        let due = gate.due.max(now as f64);
        let at = (due - gate.tolerance).max(now as f64);
        if at > latest as f64 {
            return None;
        }
        gate.due = due + gate.interval;
        Some(at.ceil() as Nanos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_add_up_to_the_limit() {
        let processes = [
            ProcessSpec::steady(10.0),
            ProcessSpec::steady(30.0),
            ProcessSpec::steady(60.0),
        ];
        let mut split = StaticSplit::new(50.0, 0.0, &processes, 0);
        let mut sent = 0;
        for process in 0..3 {
            while split
                .turn(process, 0, 10 * SECOND - 1)
                .is_some_and(|at| at < 10 * SECOND)
            {
                sent += 1;
            }
        }
        assert!((498..=503).contains(&sent), "{sent} in 10 s");
    }

    #[test]
    fn an_ended_process_gives_its_share_to_the_others() {
        let mut processes = [ProcessSpec::steady(1.0), ProcessSpec::steady(1.0)];
        processes[1].ends = Some((SECOND, super::super::process::Ending::Leaves));
        let mut split = StaticSplit::new(10.0, 0.0, &processes, 0);
        assert_eq!(split.turn(0, 0, SECOND), Some(0));
        assert_eq!(split.turn(0, 0, SECOND), Some(SECOND / 5));
        split.resize(&processes, SECOND);
        assert_eq!(split.turn(1, SECOND, 2 * SECOND), None);
        assert_eq!(split.turn(0, SECOND, 2 * SECOND), Some(SECOND));
        assert_eq!(
            split.turn(0, SECOND, 2 * SECOND),
            Some(SECOND + SECOND / 10)
        );
    }
}
