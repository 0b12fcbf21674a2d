//! Calls for an instruction count under callgrind, which other processes on the machine do not
//! disturb (criterion's times do move with them):
//!
//! ```text
//! cargo build --release -p retry-bench --example instructions
//! valgrind --tool=callgrind target/release/examples/instructions adaptive 10000
//! valgrind --tool=callgrind target/release/examples/instructions adaptive 20000
//! ```
//!
//! The difference of the two totals over 10,000 is the instructions per call of that path, the
//! program's start-up cancelled out: the success path (`plain`, `standard`, `adaptive`,
//! `layer`: a service under `RetryLayer` with the standard strategy, or `retryable`: a
//! `#[retryable]` fn, its static strategy in the process-wide scope the attribute declares), or
//! a call that fails 7 times and then succeeds, backoff zero (`retries-classic`: the classic
//! preset with a quota that never runs out; `retries-default`: the default configuration, as
//! in the `zero_backoff_retry` benchmark group).

use std::process::ExitCode;

use std::cell::Cell;

use retry_bench::{
    RETRY_MAX_ATTEMPTS, adaptive, current_thread_runtime, default_zero_backoff_config, flaky, op,
    standard, success_config, zero_backoff_config,
};
use retry_core::retry;
use retry_core::tower::RetryLayer;
use tower::{Layer, Service, ServiceExt};

retry_bench::retryable_ops!();

/// The paths this program can run.
const PATHS: [&str; 8] = [
    "plain",
    "tokio-retry",
    "standard",
    "adaptive",
    "layer",
    "retryable",
    "retries-classic",
    "retries-default",
];

/// tokio-retry's strategy as the `success_path` benchmark group builds it: exponential backoff
/// from `INITIAL_BACKOFF`, capped, jittered, `MAX_ATTEMPTS - 1` retries.
fn tokio_retry_strategy() -> impl Iterator<Item = std::time::Duration> {
    tokio_retry::strategy::ExponentialBackoff::from_millis(2)
        .factor(retry_bench::INITIAL_BACKOFF.as_millis() as u64 / 2)
        .max_delay(retry_bench::MAX_BACKOFF)
        .map(tokio_retry::strategy::jitter)
        .take(retry_bench::MAX_ATTEMPTS as usize - 1)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(Ok(calls))) = (args.get(1), args.get(2).map(|n| n.parse::<u64>())) else {
        eprintln!("usage: instructions {} CALLS", PATHS.join("|"));
        return ExitCode::FAILURE;
    };
    if !PATHS.contains(&path.as_str()) {
        eprintln!(
            "unknown path `{path}`: expected one of {}",
            PATHS.join(", ")
        );
        return ExitCode::FAILURE;
    }
    let runtime = current_thread_runtime();
    let standard = standard(success_config());
    let adaptive = adaptive("instructions-adaptive");
    let classic_retries = retry_bench::standard(zero_backoff_config());
    let default_retries = retry_bench::standard(default_zero_backoff_config());
    let mut layer =
        RetryLayer::new(retry_bench::standard(success_config())).layer(tower::service_fn(op));
    let attempts = Cell::new(0);
    runtime.block_on(async {
        for i in 0..calls {
            attempts.set(0);
            let outcome = match path.as_str() {
                "standard" => retry(&standard, || op(i)).await,
                "adaptive" => retry(&adaptive, || op(i)).await,
                "retryable" => op_retryable(i).await,
                "tokio-retry" => {
                    tokio_retry::RetryIf::start(
                        tokio_retry_strategy(),
                        || op(i),
                        retry_bench::BenchError::is_retryable,
                    )
                    .await
                }
                "layer" => match layer.ready().await {
                    Ok(service) => service.call(i).await,
                    Err(error) => Err(error),
                },
                "retries-classic" => {
                    retry(&classic_retries, || flaky(&attempts, RETRY_MAX_ATTEMPTS, i)).await
                }
                "retries-default" => {
                    retry(&default_retries, || flaky(&attempts, RETRY_MAX_ATTEMPTS, i)).await
                }
                _ => op(i).await, // "plain", checked above
            };
            std::hint::black_box(outcome).ok();
        }
    });
    ExitCode::SUCCESS
}
