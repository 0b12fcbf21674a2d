//! When each request reached a demo server, on tokio's clock: under a paused clock (a test with
//! `start_paused = true`) the gaps between arrivals are the client's waits in virtual time.

use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

/// The arrival time of every request, in order.
#[derive(Debug, Default)]
pub(crate) struct Arrivals(Mutex<Vec<Instant>>);

impl Arrivals {
    /// Notes a request arriving now.
    pub(crate) fn record(&self) {
        self.times().push(Instant::now());
    }

    /// How many requests arrived.
    pub(crate) fn count(&self) -> usize {
        self.times().len()
    }

    /// The time between consecutive arrivals.
    pub(crate) fn gaps(&self) -> Vec<Duration> {
        let times = self.times();
        times.windows(2).map(|pair| pair[1] - pair[0]).collect()
    }

    /// The times; a panic elsewhere while the lock was held leaves them whole.
    fn times(&self) -> MutexGuard<'_, Vec<Instant>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
