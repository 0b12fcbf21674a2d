//! How soon fleet mode is back after a store fault: from the store's recovery until every
//! process holds a live lease again, from a store whose limiter is engaged as it was before the
//! fault (a store that lost its state re-learned it from the processes' reports).

use super::store_fault::StoreFaults;
use crate::time::{Nanos, SECOND};

/// The time from a store's recovery until the fleet is back.
///
/// ```
/// use retry_sim::fleet::recovery::Recovery;
/// use retry_sim::fleet::store_fault::{StoreFault, StoreFaultKind, StoreFaults};
/// use retry_sim::time::{MILLI, SECOND};
/// let faults = StoreFaults::new(vec![StoreFault::at(StoreFaultKind::Down, 10.0, 5.0)]);
/// let mut recovery = Recovery::new(&faults, 2);
/// recovery.synced(9 * SECOND, 0, true); // before the fault: engaged
/// recovery.synced(15 * SECOND + 100 * MILLI, 0, true);
/// assert!(recovery.secs(20 * SECOND) >= 5.0 - 1e-9); // process 1 has not synced: censored
/// recovery.synced(15 * SECOND + 700 * MILLI, 1, true);
/// assert!((recovery.secs(20 * SECOND) - 0.7).abs() < 1e-9);
/// ```
#[derive(Debug, Clone)]
pub struct Recovery {
    /// The last fault's start and recovery, if there is a fault.
    fault: Option<(Nanos, Nanos)>,
    /// Whether the fleet limiter was engaged in the last lease before the fault.
    engaged_before: Option<bool>,
    /// Per process: whether it holds a lease from the recovered store.
    back: Vec<bool>,
    remaining: usize,
    done_at: Option<Nanos>,
}

impl Recovery {
    /// Watches `processes` processes for the recovery from the last of `faults`.
    pub fn new(faults: &StoreFaults, processes: usize) -> Self {
        let fault = faults
            .faults()
            .iter()
            .max_by_key(|fault| fault.recovery())
            .map(|fault| (fault.start, fault.recovery()));
        Self {
            fault,
            engaged_before: None,
            back: vec![false; processes],
            remaining: processes,
            done_at: None,
        }
    }

    /// Process `process` applied a lease at `now`, the fleet limiter `engaged` or not.
    pub fn synced(&mut self, now: Nanos, process: u32, engaged: bool) {
        let Some((start, recovered)) = self.fault else {
            return;
        };
        if now < start {
            self.engaged_before = Some(engaged);
            return;
        }
        let like_before = self.engaged_before.is_none_or(|before| before == engaged);
        let Some(back) = self.back.get_mut(process as usize) else {
            return;
        };
        if now < recovered || *back || !like_before {
            return;
        }
        *back = true;
        self.remaining -= 1;
        if self.remaining == 0 {
            self.done_at = Some(now);
        }
    }

    /// Seconds from the recovery until the last process was back; NaN without a fault; the
    /// time to `end` (censored) if some process never was.
    pub fn secs(&self, end: Nanos) -> f64 {
        let Some((_, recovered)) = self.fault else {
            return f64::NAN;
        };
        let at = self.done_at.unwrap_or(end.max(recovered));
        (at - recovered) as f64 / SECOND as f64
    }
}
