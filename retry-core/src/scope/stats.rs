//! The counters of one scope, readable at run time as [`ScopeStats`].

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering as StdOrdering};

use crate::adaptive::LimiterStats;
use crate::sync::{AtomicU64, Ordering};

/// Counters of one scope, updated with relaxed atomics (they are statistics, not
/// synchronization). Successes, counted on every call's success path, are striped by thread.
#[derive(Debug, Default)]
pub(crate) struct ScopeCounters {
    /// Attempts sent by the calls that ended, but the first attempt of each successful call
    /// (`successes` counts those, so that a first-try success updates one counter).
    attempts: AtomicU64,
    retries: AtomicU64,
    successes: StripedCounter,
    failures: AtomicU64,
    quota_exhausted: AtomicU64,
    throttles: AtomicU64,
    rate_limited: AtomicU64,
    /// Successful calls that needed retries (so that first-try successes are `successes` less
    /// these: counted on the retry path, never on the success path). Read by fleet mode.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    retried_successes: AtomicU64,
    /// Tokens retries asked the quota for, paid or not. Read by fleet mode.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    tokens_asked: AtomicU64,
    /// Tokens the quota granted to retries. Read by fleet mode.
    #[cfg_attr(not(feature = "fleet"), allow(dead_code))]
    tokens_paid: AtomicU64,
}

/// The running totals a fleet's report is made of (differences of two are what happened in
/// between).
#[cfg(feature = "fleet")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ScopeTotals {
    /// Calls ended, in success or failure.
    pub(crate) calls: u64,
    /// Calls that succeeded.
    pub(crate) successes: u64,
    /// Calls that succeeded after retries (read after `successes`: the first-try successes
    /// between two totals are the difference of the differences).
    pub(crate) retried_successes: u64,
    /// Tokens retries asked for, paid or not.
    pub(crate) tokens_asked: u64,
    /// Tokens the quota granted to retries.
    pub(crate) tokens_paid: u64,
    /// Attempts sent by the calls that ended.
    pub(crate) attempts: u64,
    /// Throttling responses seen.
    pub(crate) throttles: u64,
    /// Retries refused because the rate limiter's wait was too long.
    pub(crate) rate_limited: u64,
}

/// One counter of [`ScopeCounters`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Counter {
    Retry,
    Success,
    Failure,
    QuotaExhausted,
    Throttle,
    RateLimited,
}

impl ScopeCounters {
    #[inline]
    pub(crate) fn add(&self, counter: Counter) {
        let cell = match counter {
            // The success path's counter: striped, no locked instruction.
            Counter::Success => return self.successes.increment(),
            Counter::Retry => &self.retries,
            Counter::Failure => &self.failures,
            Counter::QuotaExhausted => &self.quota_exhausted,
            Counter::Throttle => &self.throttles,
            Counter::RateLimited => &self.rate_limited,
        };
        cell.fetch_add(1, Ordering::Relaxed);
    }

    /// The calls that ended, in success or failure (summing the striped stripes: off the
    /// success path).
    pub(crate) fn calls(&self) -> u64 {
        self.successes() + self.failures.load(Ordering::Relaxed)
    }

    /// The calls that succeeded (summing the stripes: off the success path).
    pub(crate) fn successes(&self) -> u64 {
        self.successes.sum()
    }

    /// Counts a successful call that retried (its attempts are counted as they failed, and its
    /// last one as a success).
    pub(crate) fn add_retried_success(&self) {
        self.retried_successes.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts `cost` tokens a retry asked for, and whether the quota paid them.
    pub(crate) fn add_tokens(&self, cost: u32, paid: bool) {
        let cost = u64::from(cost);
        self.tokens_asked.fetch_add(cost, Ordering::Relaxed);
        if paid {
            self.tokens_paid.fetch_add(cost, Ordering::Relaxed);
        }
    }

    /// The running totals a fleet's report is made of.
    #[cfg(feature = "fleet")]
    pub(crate) fn totals(&self) -> ScopeTotals {
        let read = |cell: &AtomicU64| cell.load(Ordering::Relaxed);
        let successes = self.successes.sum();
        let failures = read(&self.failures);
        ScopeTotals {
            calls: successes + failures,
            successes,
            retried_successes: read(&self.retried_successes),
            tokens_asked: read(&self.tokens_asked),
            tokens_paid: read(&self.tokens_paid),
            attempts: successes + read(&self.attempts),
            throttles: read(&self.throttles),
            rate_limited: read(&self.rate_limited),
        }
    }

    /// Counts an attempt sent, other than a success's last (the success counts that one).
    pub(crate) fn add_attempt(&self) {
        self.attempts.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(
        &self,
        quota_level: u32,
        quota_capacity: u32,
        limiter: LimiterStats,
    ) -> ScopeStats {
        let read = |cell: &AtomicU64| cell.load(Ordering::Relaxed);
        let (retries, successes, failures) = (
            read(&self.retries),
            self.successes.sum(),
            read(&self.failures),
        );
        ScopeStats {
            attempts: successes + read(&self.attempts),
            retries,
            successes,
            failures,
            quota_exhausted: read(&self.quota_exhausted),
            throttles: read(&self.throttles),
            rate_limited: read(&self.rate_limited),
            quota_level,
            quota_capacity,
            limiter,
            #[cfg(feature = "fleet")]
            fleet: None,
        }
    }
}

/// A snapshot of one scope: what its calls did and where its shared state stands.
///
/// ```
/// use retry_core::{RetryConfig, Scope};
/// let scope = Scope::new("docs-stats", &RetryConfig::default());
/// let stats = scope.stats();
/// assert_eq!(stats.attempts, 0);
/// // A new scope's quota holds the AWS SDKs' 500 tokens until it has seen a window of traffic.
/// assert_eq!(stats.quota_level, 500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ScopeStats {
    /// Attempts sent: an attempt that failed is counted when its answer came (as a throttle is,
    /// so that a fleet's reports hold both), a call's last attempt when the call ends. A retry
    /// granted but never sent (the call was cancelled while it waited) is not an attempt.
    pub attempts: u64,
    /// Retries granted (those of calls still running included, and those never sent).
    pub retries: u64,
    /// Calls that ended in success.
    pub successes: u64,
    /// Calls that ended in failure.
    pub failures: u64,
    /// Retries refused because the quota could not pay for them.
    pub quota_exhausted: u64,
    /// Throttling responses seen.
    pub throttles: u64,
    /// Retries refused because the rate limiter's expected wait exceeded `max_wait`.
    pub rate_limited: u64,
    /// Retry tokens a retry would find in the quota now.
    pub quota_level: u32,
    /// The most a retry may find in the quota now: its capacity, or with a `quota_window` the
    /// cap in force (sized by the scope's traffic and age), which is usually lower.
    pub quota_capacity: u32,
    /// The adaptive rate limiter.
    pub limiter: LimiterStats,
    /// Fleet mode: whether the scope's fleet lease is live, and its figures; `None` for a
    /// scope attached to no fleet.
    #[cfg(feature = "fleet")]
    #[cfg_attr(docsrs, doc(cfg(feature = "fleet")))]
    pub fleet: Option<crate::fleet::FleetStats>,
}

/// Threads that get a stripe of their own; later threads share the last one.
const STRIPES: usize = 16;

/// The next stripe to hand to a thread that counts for the first time.
/// (A std atomic even under loom: it only hands out numbers, and a `static` needs `const`.)
static NEXT_STRIPE: StdAtomicUsize = StdAtomicUsize::new(0);

/// The stripe shared by the threads after the first `STRIPES - 1`, updated atomically.
const SHARED_STRIPE: usize = STRIPES - 1;

/// [`THREAD_STRIPE`] of a thread that has not counted yet.
const NO_STRIPE_YET: usize = usize::MAX;

std::thread_local! {
    /// This thread's stripe in every [`StripedCounter`]: [`NO_STRIPE_YET`] until it first
    /// counts. A constant initializer, so that reading it is a plain load, without the check a
    /// lazily initialized thread-local makes on every access (callgrind: 4 instructions a call).
    static THREAD_STRIPE: Cell<usize> = const { Cell::new(NO_STRIPE_YET) };
}

/// A stripe on a cache line of its own, so that threads do not contend for it.
#[derive(Debug, Default)]
#[repr(align(64))]
struct Stripe(AtomicU64);

/// A counter incremented without a locked instruction: each of the first `STRIPES - 1` threads
/// that count owns a stripe and is its only writer, so a plain load and store suffice; the
/// threads after them share the last stripe with an atomic add. Reading sums the stripes.
#[derive(Debug, Default)]
struct StripedCounter {
    stripes: [Stripe; STRIPES],
}

impl StripedCounter {
    /// Adds one. A thread with a stripe of its own adds with a plain load and store (inlined);
    /// the first count of a thread, and every count of a thread that shares the last stripe,
    /// goes out of line.
    #[inline]
    fn increment(&self) {
        let stripe = THREAD_STRIPE.with(Cell::get);
        if stripe < SHARED_STRIPE {
            let cell = &self.stripes[stripe].0;
            cell.store(cell.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        } else {
            self.increment_shared_or_first(stripe);
        }
    }

    /// [`increment`](Self::increment) on the shared stripe, or by a thread that has not
    /// counted yet (which is handed its stripe first).
    #[cold]
    #[inline(never)]
    fn increment_shared_or_first(&self, stripe: usize) {
        let stripe = match stripe {
            NO_STRIPE_YET => {
                let given = NEXT_STRIPE
                    .fetch_add(1, StdOrdering::Relaxed)
                    .min(SHARED_STRIPE);
                THREAD_STRIPE.with(|stripe| stripe.set(given));
                given
            }
            stripe => stripe,
        };
        let cell = &self.stripes[stripe].0;
        if stripe < SHARED_STRIPE {
            cell.store(cell.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        } else {
            cell.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn sum(&self) -> u64 {
        self.stripes
            .iter()
            .map(|stripe| stripe.0.load(Ordering::Relaxed))
            .sum()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{STRIPES, StripedCounter};

    /// Every count is kept, by threads with a stripe of their own (their first count hands it
    /// out) and by the threads past them, which share the last stripe.
    #[test]
    fn counts_from_more_threads_than_stripes_all_add_up() {
        let counter = StripedCounter::default();
        let threads = 2 * STRIPES + 3;
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    for _ in 0..1000 {
                        counter.increment();
                    }
                });
            }
        });
        assert_eq!(counter.sum(), 1000 * threads as u64);
    }
}
