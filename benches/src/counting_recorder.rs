//! A `metrics` recorder that counts what it is given in atomics and allocates nothing per record
//! (feature `metrics`): the allocation test's recorder, which sees the success path's metrics
//! without adding allocations of its own (a real recorder's histograms allocate storage blocks
//! as they fill, which would hide the library's count).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use metrics::{
    Counter, CounterFn, Gauge, GaugeFn, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder,
    SharedString, Unit,
};

/// What every handle of a [`CountingRecorder`] adds to.
#[derive(Debug, Default)]
struct Tally {
    /// Counter increments, summed.
    counted: AtomicU64,
    /// Histogram samples.
    sampled: AtomicU64,
    /// Gauge updates.
    gauged: AtomicU64,
}

impl CounterFn for Tally {
    fn increment(&self, value: u64) {
        self.counted.fetch_add(value, Ordering::Relaxed);
    }

    fn absolute(&self, value: u64) {
        self.counted.fetch_max(value, Ordering::Relaxed);
    }
}

impl GaugeFn for Tally {
    fn increment(&self, _: f64) {
        self.gauged.fetch_add(1, Ordering::Relaxed);
    }

    fn decrement(&self, _: f64) {
        self.gauged.fetch_add(1, Ordering::Relaxed);
    }

    fn set(&self, _: f64) {
        self.gauged.fetch_add(1, Ordering::Relaxed);
    }
}

impl HistogramFn for Tally {
    fn record(&self, _: f64) {
        self.sampled.fetch_add(1, Ordering::Relaxed);
    }
}

/// A recorder whose every metric adds to one tally of atomics; clones share it.
#[derive(Debug, Clone, Default)]
pub struct CountingRecorder(Arc<Tally>);

impl CountingRecorder {
    /// Counter increments so far, summed over every counter.
    pub fn counted(&self) -> u64 {
        self.0.counted.load(Ordering::Relaxed)
    }

    /// Histogram samples so far, over every histogram.
    pub fn sampled(&self) -> u64 {
        self.0.sampled.load(Ordering::Relaxed)
    }
}

impl Recorder for CountingRecorder {
    fn describe_counter(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_gauge(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn describe_histogram(&self, _: KeyName, _: Option<Unit>, _: SharedString) {}

    fn register_counter(&self, _: &Key, _: &Metadata<'_>) -> Counter {
        Counter::from_arc(Arc::clone(&self.0))
    }

    fn register_gauge(&self, _: &Key, _: &Metadata<'_>) -> Gauge {
        Gauge::from_arc(Arc::clone(&self.0))
    }

    fn register_histogram(&self, _: &Key, _: &Metadata<'_>) -> Histogram {
        Histogram::from_arc(Arc::clone(&self.0))
    }
}
