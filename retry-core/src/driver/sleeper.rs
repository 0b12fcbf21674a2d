//! How a blocking call waits: a [`Sleeper`], replaceable per thread so that tests of blocking
//! code run in virtual time.

use std::cell::RefCell;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::ManualClock;

/// Blocks the current thread for a backoff or a wait for a send permit: the blocking drivers
/// ([`retry_blocking`](crate::retry_blocking), [`Retry::run_blocking`](crate::Retry::run_blocking)
/// and `#[retryable]` on a plain `fn`) sleep through the thread's sleeper, [`ThreadSleeper`]
/// unless [`with_sleeper`] replaced it.
///
/// ```
/// use retry_core::driver::Sleeper;
/// use std::sync::Mutex;
/// use std::time::Duration;
///
/// /// Records each sleep instead of sleeping.
/// #[derive(Debug, Default)]
/// struct Recorder(Mutex<Vec<Duration>>);
///
/// impl Sleeper for Recorder {
///     fn sleep(&self, duration: Duration) {
///         self.0.lock().unwrap().push(duration);
///     }
/// }
/// ```
pub trait Sleeper: Send + Sync + fmt::Debug {
    /// Blocks for `duration` (or pretends to).
    fn sleep(&self, duration: Duration);
}

/// Sleeps for real: [`std::thread::sleep`].
///
/// ```
/// use retry_core::driver::{Sleeper, ThreadSleeper};
/// ThreadSleeper.sleep(std::time::Duration::from_millis(1));
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ThreadSleeper;

impl Sleeper for ThreadSleeper {
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }
}

/// Virtual time: sleeping moves the clock forward by the duration, at once. Give the same clock
/// to the strategy's scope, and a blocking call's backoffs, deadline and adaptive waits all run
/// on it.
///
/// ```
/// use retry_core::clock::{Clock, ManualClock};
/// use retry_core::driver::Sleeper;
/// let clock = ManualClock::new();
/// clock.sleep(std::time::Duration::from_secs(3));
/// assert_eq!(clock.now(), std::time::Duration::from_secs(3));
/// ```
impl Sleeper for ManualClock {
    fn sleep(&self, duration: Duration) {
        self.advance(duration);
    }
}

impl<S: Sleeper + ?Sized> Sleeper for &S {
    fn sleep(&self, duration: Duration) {
        (**self).sleep(duration);
    }
}

impl<S: Sleeper + ?Sized> Sleeper for Arc<S> {
    fn sleep(&self, duration: Duration) {
        (**self).sleep(duration);
    }
}

thread_local! {
    /// The sleeper [`with_sleeper`] installed on this thread, if any.
    static SLEEPER: RefCell<Option<Arc<dyn Sleeper>>> = const { RefCell::new(None) };
}

/// Runs `f` with `sleeper` as this thread's sleeper: every blocking retry `f` makes on this
/// thread waits through it instead of [`ThreadSleeper`]. The previous sleeper is restored when
/// `f` returns or panics. Meant for tests: pass a [`ManualClock`] (shared with the strategy's
/// scope) or a recorder, and no test sleeps for real.
///
/// ```
/// use retry_core::{RetryConfig, StandardStrategy, retry_blocking};
/// use retry_core::driver::with_sleeper;
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
///
/// #[derive(Debug, Default)]
/// struct Recorder(Mutex<Vec<Duration>>);
/// impl retry_core::driver::Sleeper for Recorder {
///     fn sleep(&self, duration: Duration) {
///         self.0.lock().unwrap().push(duration);
///     }
/// }
///
/// let strategy = StandardStrategy::new(RetryConfig::builder().max_attempts(3).build().unwrap());
/// let recorder = Arc::new(Recorder::default());
/// let outcome = with_sleeper(recorder.clone(), || {
///     retry_blocking(&strategy, || Err::<(), _>(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)))
/// });
/// assert!(outcome.is_err());
/// assert_eq!(recorder.0.lock().unwrap().len(), 2, "one backoff before each retry");
/// ```
pub fn with_sleeper<R>(sleeper: impl Sleeper + 'static, f: impl FnOnce() -> R) -> R {
    /// Puts the previous sleeper back, also when `f` panics.
    struct Restore(Option<Arc<dyn Sleeper>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            SLEEPER.with(|slot| *slot.borrow_mut() = previous);
        }
    }
    let installed: Arc<dyn Sleeper> = Arc::new(sleeper);
    let previous = SLEEPER.with(|slot| slot.borrow_mut().replace(installed));
    let _restore = Restore(previous);
    f()
}

/// Sleeps `duration` through this thread's sleeper.
pub(super) fn sleep_blocking(duration: Duration) {
    // Cloned out of the slot: the sleeper may itself run code that installs a sleeper.
    match SLEEPER.with(|slot| slot.borrow().clone()) {
        Some(sleeper) => sleeper.sleep(duration),
        None => ThreadSleeper.sleep(duration),
    }
}
