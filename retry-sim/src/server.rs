//! The service: `c` workers, a service time distribution, a bounded FIFO queue, cheap
//! rejections when the queue is full, and the faults of the current phase.

use std::collections::VecDeque;

use crate::fault::Phase;
use crate::latency::{ReplicaPhases, TailLatency};
use crate::rng::Rng;
use crate::time::{MILLI, Nanos, SECOND};

/// How long a worker spends on one attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ServiceTime {
    /// Exponentially distributed with this mean.
    Exponential {
        /// Mean service time.
        mean: Nanos,
    },
    /// Always this long.
    Constant {
        /// The service time.
        value: Nanos,
    },
    /// Log-normal with this median and shape `sigma` (a heavy tail).
    LogNormal {
        /// Median service time.
        median: Nanos,
        /// Standard deviation of the logarithm.
        sigma: f64,
    },
    /// A long tail: most answers fast, a few slow, optionally slow replicas
    /// ([`TailLatency`]).
    Tail(TailLatency),
}

impl ServiceTime {
    /// The mean service time, in seconds.
    ///
    /// ```
    /// use retry_sim::server::ServiceTime;
    /// assert_eq!(ServiceTime::Constant { value: 50_000_000 }.mean_secs(), 0.05);
    /// ```
    pub fn mean_secs(&self) -> f64 {
        let secs = |n: Nanos| n as f64 / SECOND as f64;
        match *self {
            ServiceTime::Exponential { mean } => secs(mean),
            ServiceTime::Constant { value } => secs(value),
            ServiceTime::LogNormal { median, sigma } => secs(median) * (sigma * sigma / 2.0).exp(),
            ServiceTime::Tail(shape) => shape.mean_secs(),
        }
    }

    fn sample(&self, rng: &mut Rng) -> Nanos {
        match *self {
            ServiceTime::Exponential { mean } => rng.exp(mean as f64),
            ServiceTime::Constant { value } => value,
            ServiceTime::LogNormal { median, sigma } => {
                let value = median as f64 * (sigma * rng.normal()).exp();
                value.min(3600.0 * SECOND as f64) as Nanos
            }
            ServiceTime::Tail(shape) => shape.sample(rng),
        }
    }
}

/// The random stream of a tail's slow replicas, forked from the service times' seed.
const REPLICA_STREAM: u64 = 1;

/// The service's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServerConfig {
    /// Workers (concurrent attempts in service).
    pub workers: u32,
    /// Service time of one attempt.
    pub service: ServiceTime,
    /// Queue length; an attempt finding it full is rejected at once with 503.
    pub queue: u32,
}

impl Default for ServerConfig {
    /// 50 workers, 50 ms exponential service (1000 attempts/s), a queue of 500.
    fn default() -> Self {
        Self {
            workers: 50,
            service: ServiceTime::Exponential { mean: 50 * MILLI },
            queue: 500,
        }
    }
}

impl ServerConfig {
    /// Attempts per second the service completes when saturated.
    ///
    /// ```
    /// assert_eq!(retry_sim::server::ServerConfig::default().capacity(), 1000.0);
    /// ```
    pub fn capacity(&self) -> f64 {
        f64::from(self.workers) / self.service.mean_secs()
    }
}

/// One attempt at the server: which call sent it, and the call's epoch when it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// The call's slot.
    pub call: u32,
    /// The call's epoch when the attempt was sent.
    pub epoch: u32,
}

/// What the server did with an arriving attempt.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Admission {
    /// A worker took it; it completes at `done_at` and fails (500) if `fail`.
    Started {
        /// Completion time.
        done_at: Nanos,
        /// Whether it fails.
        fail: bool,
    },
    /// It waits in the queue.
    Queued,
    /// Answered at once with 503 (outage or full queue).
    Unavailable,
    /// Answered at once with 429 and this `Retry-After`.
    Throttled(Nanos),
    /// Lost: no answer will come (blackhole).
    Dropped,
}

/// The server's state during a run.
#[derive(Debug)]
pub struct Server {
    config: ServerConfig,
    phase: Phase,
    /// Workers allowed to serve in the current phase.
    limit: u32,
    busy: u32,
    queue: VecDeque<Job>,
    tokens: f64,
    last_refill: Nanos,
    service_rng: Rng,
    fail_rng: Rng,
    /// The slow periods of a [`ServiceTime::Tail`] with slow replicas.
    replicas: Option<ReplicaPhases>,
}

impl Server {
    /// A healthy, idle server; randomness from the two given streams.
    ///
    /// ```
    /// use retry_sim::{rng::Rng, server::{Server, ServerConfig}};
    /// let server = Server::new(ServerConfig::default(), Rng::new(1), Rng::new(2));
    /// assert_eq!(server.busy(), 0);
    /// ```
    pub fn new(config: ServerConfig, service_rng: Rng, fail_rng: Rng) -> Self {
        let phase = crate::fault::FaultSchedule::default().phases()[0];
        // A stream of its own for the replicas, forked without drawing from the service's.
        let replicas = match config.service {
            ServiceTime::Tail(TailLatency {
                slow_periods: Some(periods),
                ..
            }) => Some(ReplicaPhases::new(
                periods,
                Rng::stream(service_rng.clone().next_u64(), REPLICA_STREAM),
            )),
            _ => None,
        };
        Self {
            config,
            phase,
            limit: config.workers,
            busy: 0,
            queue: VecDeque::with_capacity(config.queue as usize),
            tokens: 0.0,
            last_refill: 0,
            service_rng,
            fail_rng,
            replicas,
        }
    }

    /// Workers in service.
    ///
    /// ```
    /// # use retry_sim::{rng::Rng, server::{Server, ServerConfig}};
    /// # let server = Server::new(ServerConfig::default(), Rng::new(1), Rng::new(2));
    /// assert_eq!(server.busy(), 0);
    /// ```
    pub fn busy(&self) -> u32 {
        self.busy
    }

    /// Enters `phase` at `now`. A throttling phase starts with a full bucket. Returns whether
    /// workers were added (queued attempts may start).
    pub fn enter_phase(&mut self, phase: Phase, now: Nanos) -> bool {
        if phase.throttle.is_some() && self.phase.throttle != phase.throttle {
            self.tokens = phase.throttle.map_or(0.0, |(_, burst, _)| burst);
            self.last_refill = now;
        }
        self.phase = phase;
        let limit = ((f64::from(self.config.workers) * phase.capacity).round() as u32).max(
            // A brownout never removes the last worker unless it asks for zero capacity.
            u32::from(phase.capacity > 0.0),
        );
        let grew = limit > self.limit;
        self.limit = limit;
        grew
    }

    /// An attempt arrives at `now`.
    pub fn arrive(&mut self, job: Job, now: Nanos) -> Admission {
        if self.phase.blackhole {
            return Admission::Dropped;
        }
        if self.phase.outage {
            return Admission::Unavailable;
        }
        if let Some((rate, burst, retry_after)) = self.phase.throttle {
            let elapsed = now.saturating_sub(self.last_refill) as f64 / SECOND as f64;
            self.tokens = (self.tokens + elapsed * rate).min(burst);
            self.last_refill = now;
            if self.tokens < 1.0 {
                return Admission::Throttled(retry_after);
            }
            self.tokens -= 1.0;
        }
        if let Some((share, retry_after)) = self.phase.hot_key
            && self.fail_rng.chance(share)
        {
            return Admission::Throttled(retry_after);
        }
        if self.busy < self.limit {
            return self.start(now);
        }
        if self.queue.len() < self.config.queue as usize {
            self.queue.push_back(job);
            return Admission::Queued;
        }
        Admission::Unavailable
    }

    /// A worker finished an attempt at `now`. Returns the next queued attempt it starts, if
    /// any, with its admission.
    pub fn complete(&mut self, now: Nanos) -> Option<(Job, Admission)> {
        self.busy = self.busy.saturating_sub(1);
        self.next_queued(now)
    }

    /// Starts a queued attempt if a worker is free (after a capacity increase).
    pub fn next_queued(&mut self, now: Nanos) -> Option<(Job, Admission)> {
        if self.busy >= self.limit {
            return None;
        }
        let job = self.queue.pop_front()?;
        Some((job, self.start(now)))
    }

    fn start(&mut self, now: Nanos) -> Admission {
        self.busy += 1;
        let mut service = self.config.service.sample(&mut self.service_rng);
        if let Some(replicas) = self.replicas.as_mut() {
            service = replicas.stretch(service, now);
        }
        let fail = self.fail_rng.chance(self.phase.fail_probability);
        Admission::Started {
            done_at: now.saturating_add(service),
            fail,
        }
    }
}
