//! A newcomer's first program (issue 24), through the guide's reqwest pattern (`check_status()?`
//! in a `#[retryable]` function whose error derives `RetryInfo`, a `reqwest::Client` with a 3 s
//! timeout): 20 tokio workers each `PUT` one object (`max_attempts = 3`), then share 200
//! `GET`s (`max_attempts = 5`) of a flaky object store on loopback (`examples::store_demo`: 190
//! known keys, each answered 503 twice before it is served, every 8th would-be success a 429
//! with `Retry-After: 1`; 10 unknown keys, 404; every 3rd `PUT` reset after it was stored, every
//! 7th before). Three configurations: a bare attribute, `preset = "aws-2026"` and
//! `mode = "adaptive"`.
//!
//! On a real clock, as users run it: a multi-threaded runtime (what `#[tokio::main]` builds),
//! the store on a runtime of its own, the three configurations at once. The assertions are on
//! counts (keys served, retries the quota refused, requests the store received); the durations
//! are printed and bounded generously, and adaptive mode's is compared with the bare
//! attribute's measured in the same test. The store's `Retry-After` is the 1 s, not
//! scaled (its smallest value in delta-seconds): a run takes 6 to 12 s, most of it the
//! throttling backoff of a 429 that comes after two 503s (retry 3: up to 4 s).
//!
//! In virtual time too (tokio's clock paused, the store in the same current-thread runtime, the
//! jitter seeded): the same program, every run the same.
//!
//! Each test has its own `#[retryable]` functions (their scopes are process-wide).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use examples::store_demo::{FlakyStore, StoreLayout};
use retry_core::http::{CheckStatus, HttpStatusError};
use retry_core::{RetryInfo, Scope};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// What the program's calls fail with: reqwest's errors and error statuses, each describing
/// its retryability (the guide's reqwest pattern).
#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    #[error(transparent)]
    #[retry(transparent)]
    Http(#[from] reqwest::Error),
    #[error(transparent)]
    #[retry(transparent)]
    Status(#[from] HttpStatusError),
}

/// One `GET` attempt: the body of a successful response.
async fn get_once(client: &reqwest::Client, url: &str) -> Result<String, StoreError> {
    Ok(client.get(url).send().await?.check_status()?.text().await?)
}

/// One `PUT` attempt.
async fn put_once(client: &reqwest::Client, url: &str) -> Result<(), StoreError> {
    client
        .put(url)
        .body("new value")
        .send()
        .await?
        .check_status()?;
    Ok(())
}

/// The configurations compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Configuration {
    /// `#[retryable(max_attempts = 5)]` (3 for the `PUT`).
    Bare,
    /// `#[retryable(max_attempts = 5, preset = "aws-2026")]`.
    Aws2026,
    /// `#[retryable(max_attempts = 5, mode = "adaptive")]`.
    Adaptive,
}

/// The program's `#[retryable]` functions, one `GET` and one `PUT` per configuration, in a
/// module of their own (so in scopes of their own).
macro_rules! program {
    ($module:ident) => {
        mod $module {
            use super::{Configuration, StoreError, get_once, put_once};
            use retry_core::retryable;

            #[retryable(max_attempts = 5)]
            async fn get_bare(client: &reqwest::Client, url: &str) -> Result<String, StoreError> {
                get_once(client, url).await
            }

            #[retryable(max_attempts = 5, preset = "aws-2026")]
            async fn get_aws(client: &reqwest::Client, url: &str) -> Result<String, StoreError> {
                get_once(client, url).await
            }

            #[retryable(max_attempts = 5, mode = "adaptive")]
            async fn get_adaptive(
                client: &reqwest::Client,
                url: &str,
            ) -> Result<String, StoreError> {
                get_once(client, url).await
            }

            #[retryable(max_attempts = 3)]
            async fn put_bare(client: &reqwest::Client, url: &str) -> Result<(), StoreError> {
                put_once(client, url).await
            }

            #[retryable(max_attempts = 3, preset = "aws-2026")]
            async fn put_aws(client: &reqwest::Client, url: &str) -> Result<(), StoreError> {
                put_once(client, url).await
            }

            #[retryable(max_attempts = 3, mode = "adaptive")]
            async fn put_adaptive(client: &reqwest::Client, url: &str) -> Result<(), StoreError> {
                put_once(client, url).await
            }

            /// The program's calls.
            pub(super) const CALLS: super::Calls = super::Calls {
                get,
                put,
                get_scope,
            };

            /// The `GET` of `configuration`.
            fn get(
                configuration: Configuration,
                client: reqwest::Client,
                url: String,
            ) -> super::Call<String> {
                Box::pin(async move {
                    match configuration {
                        Configuration::Bare => get_bare(&client, &url).await,
                        Configuration::Aws2026 => get_aws(&client, &url).await,
                        Configuration::Adaptive => get_adaptive(&client, &url).await,
                    }
                })
            }

            /// The `PUT` of `configuration`.
            fn put(
                configuration: Configuration,
                client: reqwest::Client,
                url: String,
            ) -> super::Call<()> {
                Box::pin(async move {
                    match configuration {
                        Configuration::Bare => put_bare(&client, &url).await,
                        Configuration::Aws2026 => put_aws(&client, &url).await,
                        Configuration::Adaptive => put_adaptive(&client, &url).await,
                    }
                })
            }

            /// The name of the scope of `configuration`'s `GET` (the attribute's default: the
            /// function's path).
            fn get_scope(configuration: Configuration) -> &'static str {
                match configuration {
                    Configuration::Bare => concat!(module_path!(), "::get_bare"),
                    Configuration::Aws2026 => concat!(module_path!(), "::get_aws"),
                    Configuration::Adaptive => concat!(module_path!(), "::get_adaptive"),
                }
            }
        }
    };
}

/// A call of the program, boxed so that each test's functions can be handed to [`program`].
type Call<T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send>>;

/// A program's `#[retryable]` functions.
#[derive(Clone, Copy)]
struct Calls {
    get: fn(Configuration, reqwest::Client, String) -> Call<String>,
    put: fn(Configuration, reqwest::Client, String) -> Call<()>,
    get_scope: fn(Configuration) -> &'static str,
}

program!(real_clock);
program!(paused_clock);

/// Concurrent workers, as in the newcomer's program.
const WORKERS: u32 = 20;

/// The `GET`'s `max_attempts`, as its attributes say.
const GET_ATTEMPTS: u32 = 5;

/// The client's timeout.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(3);

/// The seed of the jitter of the runs in virtual time.
const JITTER_SEED: u64 = 3;

/// What one run of the program did.
struct Figures {
    configuration: Configuration,
    /// Keys fetched.
    served: u32,
    /// Retries of the `GET`s the quota refused.
    refused: u64,
    /// Known keys the store answered with an error to each of the `GET`'s attempts (after the
    /// two 503s, three 429s in a row): failures of the store's, not of the retries.
    denied: u32,
    /// How long the program took (its `PUT`s and `GET`s), on tokio's clock.
    elapsed: Duration,
    /// The store, to read what it received.
    store: FlakyStore,
}

impl Figures {
    /// Prints the run's figures, one line.
    fn print(&self, clock: &str) {
        let book = self.store.book();

        eprintln!(
            "{clock} {:?}: {} of {} keys served, {} refused by the quota, {} denied by the store, \
             {} GETs + {} PUTs received, {} objects stored, {:.3} s",
            self.configuration,
            self.served,
            book.layout().served_keys(),
            self.refused,
            self.denied,
            book.get_requests(),
            book.put_requests(),
            (0..book.layout().objects)
                .map(|w| book.puts_stored(w))
                .sum::<u32>(),
            self.elapsed.as_secs_f64()
        );
    }
}

/// The newcomer's program in `configuration`, with `calls`, against `store`.
async fn program(configuration: Configuration, calls: Calls, store: FlakyStore) -> Figures {
    let layout = store.book().layout();
    let client = reqwest::Client::builder()
        .timeout(CLIENT_TIMEOUT)
        .build()
        .expect("a client");
    let next_key = Arc::new(AtomicU32::new(0));
    let started = Instant::now();
    let mut workers = JoinSet::new();
    for w in 0..WORKERS {
        let (store, client, next_key) = (store.clone(), client.clone(), Arc::clone(&next_key));
        workers.spawn(async move {
            // The PUT's outcome does not matter to the GETs: a reset one is not retried.
            let _ = (calls.put)(configuration, client.clone(), store.object_url(w)).await;
            let mut served = 0;
            loop {
                let n = next_key.fetch_add(1, Ordering::SeqCst);
                if n >= layout.keys {
                    return served;
                }
                let got = (calls.get)(configuration, client.clone(), store.key_url(n)).await;
                served += u32::from(got.is_ok());
            }
        });
    }
    let served = workers.join_all().await.into_iter().sum();
    let elapsed = started.elapsed();
    let refused = Scope::lookup((calls.get_scope)(configuration))
        .expect("the GET's scope")
        .stats()
        .quota_exhausted;
    let book = store.book();
    let denied = (0..layout.keys)
        .filter(|&n| !layout.is_missing(n) && book.gets(n) >= GET_ATTEMPTS && book.served(n) == 0)
        .count() as u32;
    Figures {
        configuration,
        served,
        refused,
        denied,
        elapsed,
        store,
    }
}

/// Runs the program in `configuration` on a real clock: the program on a multi-threaded runtime
/// (as `#[tokio::main]` builds it), the store on a runtime of its own.
fn on_real_clock(configuration: Configuration) -> Figures {
    let store_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("the store's runtime");
    let store = store_runtime
        .block_on(FlakyStore::serve(StoreLayout::NEWCOMER))
        .expect("the store starts");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let figures = runtime.block_on(program(configuration, real_clock::CALLS, store));
    figures.print("real clock");
    figures
}

/// Runs the program in `configuration` in virtual time: one current-thread runtime, its clock
/// paused from the start, for the program and the store; the jitter drawn from
/// [`JITTER_SEED`].
fn on_paused_clock(configuration: Configuration) -> Figures {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime");
    // The runtime runs every task on this thread: its generator draws every jitter (and
    // adaptive mode's idle samples).
    retry_core::adaptive::reseed_idle_sampling(JITTER_SEED);
    let figures = runtime.block_on(async {
        let store = FlakyStore::serve(StoreLayout::NEWCOMER)
            .await
            .expect("the store starts");
        program(configuration, paused_clock::CALLS, store).await
    });
    figures.print("paused clock");
    figures
}

/// Each unknown key was asked once (a 404 is not retried), and no object was stored twice
/// (a `PUT` reset after it was sent is not retried blindly); every `PUT` reached the store.
fn nothing_was_sent_twice(figures: &Figures) {
    let book = figures.store.book();
    let layout = book.layout();
    let unknown_asked: Vec<u32> = (0..layout.keys)
        .filter(|&n| layout.is_missing(n))
        .map(|n| book.gets(n))
        .collect();
    assert_eq!(
        unknown_asked, [1; 10],
        "{:?}: GETs of each unknown key",
        figures.configuration
    );
    let stored: Vec<u32> = (0..layout.objects).map(|w| book.puts_stored(w)).collect();
    assert!(
        stored.iter().all(|&times| times <= 1),
        "{:?}: times each object was stored: {stored:?}",
        figures.configuration
    );
    let received: Vec<u32> = (0..layout.objects).map(|w| book.puts_received(w)).collect();
    assert!(
        received.iter().all(|&times| times >= 1),
        "{:?}: PUTs each object received: {received:?}",
        figures.configuration
    );
}

/// The bare attribute serves at least 90 % of the keys (171 of 190), adaptive mode at least as
/// many (but the keys the store itself denied each of their attempts: about one run in three
/// deals a key three 429s in a row, whatever the configuration), and nothing is sent twice that
/// must not be. In virtual time (`timed`) adaptive mode also takes at most twice the bare
/// attribute's time; on a real clock that ratio is printed, not held: a shared machine's timing
/// is no pass/fail (it failed once at 2.06x: 11.98 s against 5.81 s, while 1.0x-2.0x passed).
fn the_default_serves_the_newcomer(bare: &Figures, aws: &Figures, adaptive: &Figures, timed: bool) {
    let keys = StoreLayout::NEWCOMER.served_keys();
    assert!(
        bare.served * 10 >= keys * 9,
        "bare {} of {keys} ({} refused)",
        bare.served,
        bare.refused
    );
    assert!(
        bare.served >= aws.served,
        "bare {} against aws-2026's {}",
        bare.served,
        aws.served
    );
    assert!(
        adaptive.served + adaptive.denied >= bare.served
            && (!timed || adaptive.elapsed <= bare.elapsed * 2),
        "adaptive {} of {keys} ({} denied by the store) in {:?} against the bare attribute's {} \
         in {:?}",
        adaptive.served,
        adaptive.denied,
        adaptive.elapsed,
        bare.served,
        bare.elapsed
    );
    for figures in [bare, aws, adaptive] {
        nothing_was_sent_twice(figures);
    }
}

/// The most a run may take on a real clock: a few seconds of `Retry-After` and backoff, on a
/// loaded machine.
const REAL_CLOCK_BOUND: Duration = Duration::from_secs(30);

#[test]
fn on_a_real_clock_the_default_serves_the_newcomers_program() {
    // The three runs at once, each with its own store and scopes: their time is mostly spent
    // waiting, and together they take as long as the slowest.
    let configurations = [
        Configuration::Bare,
        Configuration::Aws2026,
        Configuration::Adaptive,
    ];
    let [bare, aws, adaptive] = std::thread::scope(|threads| {
        configurations
            .map(|configuration| threads.spawn(move || on_real_clock(configuration)))
            .map(|run| run.join().expect("the run ends"))
    });
    for figures in [&bare, &aws, &adaptive] {
        assert!(
            figures.elapsed < REAL_CLOCK_BOUND,
            "{:?} took {:?}",
            figures.configuration,
            figures.elapsed
        );
    }
    println!(
        "real clock: adaptive took {:.2}x the bare attribute's time",
        adaptive.elapsed.as_secs_f64() / bare.elapsed.as_secs_f64()
    );
    the_default_serves_the_newcomer(&bare, &aws, &adaptive, false);
}

#[test]
fn in_virtual_time_the_default_serves_the_newcomers_program() {
    let bare = on_paused_clock(Configuration::Bare);
    let aws = on_paused_clock(Configuration::Aws2026);
    let adaptive = on_paused_clock(Configuration::Adaptive);
    the_default_serves_the_newcomer(&bare, &aws, &adaptive, true);
}
