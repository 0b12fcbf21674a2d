//! What goes wrong with the fleet's store, and when: the faults the issue names (down, paused,
//! slow, flushed, restarted empty), each on the run's timeline.

use crate::rng::mix;
use crate::time::{Nanos, secs};

/// One kind of store fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreFaultKind {
    /// The store is unreachable (a crashed host, a cut link): a command sent meanwhile is never
    /// executed and its sender gives up at its command timeout.
    Down,
    /// The store is stopped (`SIGSTOP`, a long fork or swap): commands wait in its socket
    /// buffers and are executed, in the order they arrived, when it resumes, even those whose
    /// senders gave up meanwhile.
    Paused,
    /// Every round trip takes `rtt` instead of the configured one.
    Slow {
        /// The round trip during the fault.
        rtt: Nanos,
    },
    /// At the fault's start the store loses every key and its script cache (`FLUSHALL`,
    /// `SCRIPT FLUSH`); it stays up. The fault has no length.
    Flushed,
    /// The store is down for the fault's length, then comes back empty: no keys, no script.
    RestartedEmpty,
    /// Writes fail for part of the fleet (Redis at `maxmemory` with `noeviction`: a script
    /// fails with `OOM` at its first write, having written nothing, and whether a command
    /// finds the memory over the limit depends on how much it would add): `share` of the
    /// processes (a fixed subset, by their ids) see every sync fail, or, `per_command`, every
    /// command fails with probability `share`. The rest are applied as usual.
    PartialWrites {
        /// The share of the processes (or of the commands) whose writes fail, in parts per
        /// million.
        share_ppm: u32,
        /// Whether each command is drawn, rather than each process.
        per_command: bool,
    },
}

impl StoreFaultKind {
    /// A short name for tables.
    ///
    /// ```
    /// use retry_sim::fleet::store_fault::StoreFaultKind;
    /// assert_eq!(StoreFaultKind::RestartedEmpty.name(), "restarted empty");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Self::Down => "down",
            Self::Paused => "paused",
            Self::Slow { .. } => "slow",
            Self::Flushed => "flushed",
            Self::RestartedEmpty => "restarted empty",
            Self::PartialWrites { .. } => "partial writes",
        }
    }

    /// Whether the store loses its state (keys and script) at some point of the fault.
    pub fn loses_state(&self) -> bool {
        matches!(self, Self::Flushed | Self::RestartedEmpty)
    }
}

/// A store fault over `[start, end)` (`end == start` for a flush).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreFault {
    /// What goes wrong.
    pub kind: StoreFaultKind,
    /// When it starts.
    pub start: Nanos,
    /// When it ends: the store answers normally again (and, restarted, is empty).
    pub end: Nanos,
}

impl StoreFault {
    /// A fault of `kind` from `start_s` for `length_s` seconds (a flush has no length).
    ///
    /// ```
    /// use retry_sim::fleet::store_fault::{StoreFault, StoreFaultKind};
    /// use retry_sim::time::SECOND;
    /// let pause = StoreFault::at(StoreFaultKind::Paused, 160.0, 10.0);
    /// assert_eq!((pause.start, pause.end), (160 * SECOND, 170 * SECOND));
    /// let flush = StoreFault::at(StoreFaultKind::Flushed, 160.0, 10.0);
    /// assert_eq!(flush.end, flush.start);
    /// ```
    pub fn at(kind: StoreFaultKind, start_s: f64, length_s: f64) -> Self {
        let start = secs(start_s);
        let length = if kind == StoreFaultKind::Flushed {
            0
        } else {
            secs(length_s)
        };
        Self {
            kind,
            start,
            end: start.saturating_add(length),
        }
    }

    /// When the store is back to normal: the end of the fault.
    pub fn recovery(&self) -> Nanos {
        self.end
    }

    /// When the store loses its state, if it does: at a flush, or when a restart completes.
    pub fn state_lost_at(&self) -> Option<Nanos> {
        match self.kind {
            StoreFaultKind::Flushed => Some(self.start),
            StoreFaultKind::RestartedEmpty => Some(self.end),
            _ => None,
        }
    }

    fn covers(&self, at: Nanos) -> bool {
        self.start <= at && at < self.end
    }
}

/// How the store is doing at one instant, as a command arriving then finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreCondition {
    /// It executes the command at once.
    Up,
    /// It never executes the command.
    Unreachable,
    /// It executes the command at this time (when it resumes).
    PausedUntil(Nanos),
}

/// Whether a command's write fails.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum WriteFailure {
    /// It is applied.
    None,
    /// It fails (`OOM`): it is one of the failing processes'.
    Fails,
    /// It fails with this probability.
    FailsWithChance(f64),
}

/// The store's faults during one run.
///
/// ```
/// use retry_sim::fleet::store_fault::{StoreCondition, StoreFault, StoreFaultKind, StoreFaults};
/// use retry_sim::time::SECOND;
/// let faults = StoreFaults::new(vec![StoreFault::at(StoreFaultKind::Paused, 10.0, 5.0)]);
/// assert_eq!(faults.condition(12 * SECOND), StoreCondition::PausedUntil(15 * SECOND));
/// assert_eq!(faults.condition(15 * SECOND), StoreCondition::Up);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreFaults {
    faults: Vec<StoreFault>,
}

impl StoreFaults {
    /// A schedule of `faults`.
    pub fn new(faults: Vec<StoreFault>) -> Self {
        Self { faults }
    }

    /// The faults.
    pub fn faults(&self) -> &[StoreFault] {
        &self.faults
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.faults.is_empty()
    }

    /// What a command arriving at `at` finds. An unreachable store wins over a paused one
    /// when faults overlap.
    pub fn condition(&self, at: Nanos) -> StoreCondition {
        let active = || self.faults.iter().filter(move |f| f.covers(at));
        if active().any(|f| {
            matches!(
                f.kind,
                StoreFaultKind::Down | StoreFaultKind::RestartedEmpty
            )
        }) {
            return StoreCondition::Unreachable;
        }
        match active()
            .filter(|f| f.kind == StoreFaultKind::Paused)
            .map(|f| f.end)
            .max()
        {
            Some(resume) => StoreCondition::PausedUntil(resume),
            None => StoreCondition::Up,
        }
    }

    /// Whether a command of `process` executed at `at` fails to write (a partial write
    /// failure: for a fixed subset of the processes, by a hash of their id, or per command).
    ///
    /// ```
    /// use retry_sim::fleet::store_fault::*;
    /// let kind = StoreFaultKind::PartialWrites { share_ppm: 500_000, per_command: false };
    /// let faults = StoreFaults::new(vec![StoreFault::at(kind, 10.0, 5.0)]);
    /// let failing = (1..=100).filter(|&p| faults.write_failure(11_000_000_000, p) == WriteFailure::Fails);
    /// assert!((35..=65).contains(&failing.count()));
    /// assert_eq!(faults.write_failure(16_000_000_000, 1), WriteFailure::None);
    /// ```
    pub fn write_failure(&self, at: Nanos, process: u64) -> WriteFailure {
        for fault in self.faults.iter().filter(|f| f.covers(at)) {
            if let StoreFaultKind::PartialWrites {
                share_ppm,
                per_command,
            } = fault.kind
            {
                let share = f64::from(share_ppm) / 1e6;
                if per_command {
                    return WriteFailure::FailsWithChance(share);
                }
                let drawn = (mix(process ^ fault.start) >> 11) as f64 / (1u64 << 53) as f64;
                if drawn < share {
                    return WriteFailure::Fails;
                }
            }
        }
        WriteFailure::None
    }

    /// The round trip at `at`: a slow fault's, or `normal`.
    pub fn rtt(&self, at: Nanos, normal: Nanos) -> Nanos {
        self.faults
            .iter()
            .filter(|f| f.covers(at))
            .filter_map(|f| match f.kind {
                StoreFaultKind::Slow { rtt } => Some(rtt),
                _ => None,
            })
            .max()
            .unwrap_or(normal)
    }

    /// When the store loses its state, in time order.
    pub fn state_losses(&self) -> Vec<Nanos> {
        let mut at: Vec<Nanos> = self
            .faults
            .iter()
            .filter_map(StoreFault::state_lost_at)
            .collect();
        at.sort_unstable();
        at
    }

    /// The first fault's start and the last fault's recovery, if any.
    pub fn window(&self) -> Option<(Nanos, Nanos)> {
        let start = self.faults.iter().map(|f| f.start).min()?;
        let end = self.faults.iter().map(StoreFault::recovery).max()?;
        Some((start, end))
    }
}
