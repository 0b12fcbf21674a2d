//! Heap allocations per call, counted by a global allocator: the success path of
//! `retry_core::retry`, of a `#[retryable]` fn and of a service under `RetryLayer` in standard
//! mode allocates nothing (nor does tower's own `Retry`).
//!
//! The counting allocator (`stats_alloc`) counts process-wide, so this file is a program of its
//! own (`harness = false`): no test harness thread allocates while it measures. Every call is
//! driven by `block_on` on one current-thread runtime built before measuring; the program
//! first checks that `block_on` itself allocates nothing per call, and that the counter does see
//! a deliberate allocation (so a zero cannot pass vacuously). The retry path's allocations are
//! printed, for information only (`cargo test -p retry-bench --test alloc`). Built with
//! `--features metrics`, the same runs with retry-core's `metrics` feature on and no recorder,
//! then the success paths once more under a recorder.

use std::alloc::System;
use std::cell::Cell;
use std::hint::black_box;
use std::time::Duration;

use retry_bench::{
    BenchError, adaptive, classic_success_config, current_thread_runtime,
    default_zero_backoff_config, flaky, fleet_standard, op, prepare_retryable_scopes, standard,
    success_config, zero_backoff_config,
};
use retry_core::backoff::Jitter;
use retry_core::hedge::Hedging;
use retry_core::tower::RetryLayer;
use retry_core::{Retry, RetryStrategy, retry, retryable};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tower::{Layer, Service, ServiceExt};

retry_bench::retryable_ops!();

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Calls per measurement.
const CALLS: u64 = 1_000;

/// Calls of the measurement that sleeps.
const SLEEPING_CALLS: u64 = 20;

/// The allocations (and reallocations) `f` makes.
fn allocations(f: impl FnOnce()) -> usize {
    let region = Region::new(GLOBAL);
    f();
    let change = region.change();
    change.allocations + change.reallocations
}

/// The fewest allocations `f` makes in three runs. The counter is process-wide: on a loaded
/// machine, the test harness's own thread has been seen to allocate a few times while a
/// measurement ran (4 in 1000 calls, once). An allocation on the measured path recurs in every
/// run; that noise does not.
fn fewest_allocations(mut f: impl FnMut()) -> usize {
    (0..3).map(|_| allocations(&mut f)).min().unwrap_or(0)
}

/// An operation that allocates on every call: the counter must see it through the wrapper.
async fn allocating_op(x: u64) -> Result<Vec<u64>, BenchError> {
    Ok(black_box(vec![x; 4]))
}

/// A `#[retryable]` fn that nothing else calls: its first call builds its static strategy.
#[retryable(max_attempts = 3, scope = "alloc-test-fresh")]
async fn fresh_retryable(x: u64) -> Result<u64, BenchError> {
    op(x).await
}

/// A hedged `#[retryable]` fn: its first attempt answers at once, long before the hedge delay.
#[retryable(max_attempts = 3, hedge_after = "1s", scope = "alloc-test-hedged")]
async fn hedged_retryable(x: u64) -> Result<u64, BenchError> {
    op(x).await
}

/// tower's `Retry` policy at its simplest: a retry count, no backoff.
#[derive(Clone)]
struct Attempts(u32);

impl tower::retry::Policy<u64, u64, BenchError> for Attempts {
    type Future = std::future::Ready<()>;

    fn retry(&mut self, _: &mut u64, result: &mut Result<u64, BenchError>) -> Option<Self::Future> {
        match result {
            Err(error) if error.is_retryable() && self.0 > 1 => {
                self.0 -= 1;
                Some(std::future::ready(()))
            }
            _ => None,
        }
    }

    fn clone_request(&mut self, request: &u64) -> Option<u64> {
        Some(*request)
    }
}

/// Calls a tower service once it is ready.
async fn call_ready<S: Service<u64>>(
    service: &mut S,
    request: u64,
) -> Result<S::Response, S::Error> {
    service.ready().await?.call(request).await
}

/// The success path allocates nothing (a failed assertion fails `cargo test`).
fn main() {
    let runtime = current_thread_runtime();

    // The counter counts: one Vec is one allocation.
    assert_eq!(allocations(|| drop(black_box(vec![0_u8; 16]))), 1);

    // block_on itself allocates nothing per call (after its first use).
    runtime.block_on(async {});
    let block_on = fewest_allocations(|| {
        for i in 0..CALLS {
            black_box(runtime.block_on(async move { black_box(i) }));
        }
    });
    assert_eq!(
        block_on, 0,
        "block_on allocates: measure inside the future instead"
    );

    // retry_core::retry in standard mode, on the default configuration (a traffic-sized quota).
    let strategy = standard(success_config());
    let call = |i| runtime.block_on(retry(&strategy, || op(i)));
    assert_eq!(call(0), Ok(0)); // warm-up
    let plain_api = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(call(i), Ok(i));
        }
    });
    assert_eq!(
        plain_api, 0,
        "retry_core::retry: {plain_api} allocations in {CALLS} calls"
    );

    // The same on a fleet scope whose lease is live (fleet mode's success path).
    let (fleet, _holder) = fleet_standard(success_config());
    assert_eq!(runtime.block_on(retry(&fleet, || op(0))), Ok(0));
    let fleet_api = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(retry(&fleet, || op(i))), Ok(i));
        }
    });
    assert_eq!(
        fleet_api, 0,
        "retry_core::retry on a fleet scope: {fleet_api} allocations in {CALLS} calls"
    );

    // The same on the AWS classic preset (a fixed quota).
    let classic = standard(classic_success_config());
    assert_eq!(runtime.block_on(retry(&classic, || op(0))), Ok(0));
    let classic_api = allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(retry(&classic, || op(i))), Ok(i));
        }
    });
    assert_eq!(classic_api, 0, "retry_core::retry, classic preset");

    // The same through a `Box<dyn RetryStrategy>`, as `#[retryable(strategy = ...)]` holds one.
    let boxed: Box<dyn RetryStrategy> = Box::new(standard(success_config()));
    assert_eq!(runtime.block_on(retry(&boxed, || op(0))), Ok(0));
    let dyn_api = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(retry(&boxed, || op(i))), Ok(i));
        }
    });
    assert_eq!(dyn_api, 0, "retry_core::retry over Box<dyn RetryStrategy>");

    // #[retryable]: the first call builds the function's static strategy (and its named
    // scope) and allocates; after that, nothing.
    let first = allocations(|| assert_eq!(runtime.block_on(fresh_retryable(7)), Ok(7)));
    assert!(
        first > 0,
        "the first call of a #[retryable] fn builds its strategy"
    );
    let macro_default = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(fresh_retryable(i)), Ok(i));
        }
    });
    assert_eq!(
        macro_default, 0,
        "#[retryable]: {macro_default} allocations in {CALLS} calls"
    );
    assert_eq!(runtime.block_on(op_retryable(0)), Ok(0));
    assert_eq!(runtime.block_on(op_retryable_static(0)), Ok(0));
    let macro_args = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(op_retryable(i)), Ok(i));
            assert_eq!(runtime.block_on(op_retryable_static(i)), Ok(i));
        }
    });
    assert_eq!(
        macro_args, 0,
        "#[retryable] with arguments / with strategy = ...: {macro_args} allocations"
    );

    // A service under RetryLayer, and tower's own Retry beside it.
    let mut layered = RetryLayer::new(standard(success_config())).layer(tower::service_fn(op));
    assert_eq!(runtime.block_on(call_ready(&mut layered, 0)), Ok(0));
    let retry_layer = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(call_ready(&mut layered, i)), Ok(i));
        }
    });
    assert_eq!(
        retry_layer, 0,
        "RetryLayer: {retry_layer} allocations in {CALLS} calls"
    );
    let mut tower_retry = tower::retry::Retry::new(Attempts(3), tower::service_fn(op));
    assert_eq!(runtime.block_on(call_ready(&mut tower_retry, 0)), Ok(0));
    let tower_path = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(call_ready(&mut tower_retry, i)), Ok(i));
        }
    });
    assert_eq!(tower_path, 0, "tower's Retry needs none either");
    let mut layered_adaptive =
        RetryLayer::new(adaptive("alloc-test-layer-adaptive")).layer(tower::service_fn(op));
    assert_eq!(
        runtime.block_on(call_ready(&mut layered_adaptive, 0)),
        Ok(0)
    );
    let retry_layer_adaptive = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(
                runtime.block_on(call_ready(&mut layered_adaptive, i)),
                Ok(i)
            );
        }
    });
    assert_eq!(retry_layer_adaptive, 0, "RetryLayer, adaptive mode");

    // Hedging on, the first attempt answering before the delay (the common case of a hedged
    // call): Retry::hedge, a #[retryable(hedge_after = ...)] fn and the hedged RetryLayer. The
    // scope's hedging state is made on its first hedged call (the warm-up).
    let hedging = Hedging::after(Duration::from_secs(1)).unwrap_or_else(|error| panic!("{error}"));
    let hedged_strategy = standard(success_config());
    let hedged_call = |i| {
        runtime.block_on(async {
            match Retry::new(&hedged_strategy).hedge(hedging) {
                Ok(hedged) => hedged.run(|| op(i)).await,
                Err(error) => panic!("{error}"),
            }
        })
    };
    assert_eq!(hedged_call(0), Ok(0));
    let hedged_api = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(hedged_call(i), Ok(i));
        }
    });
    assert_eq!(
        hedged_api, 0,
        "Retry::hedge answered before the delay: {hedged_api} allocations in {CALLS} calls"
    );
    assert_eq!(runtime.block_on(hedged_retryable(0)), Ok(0));
    let hedged_macro = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(hedged_retryable(i)), Ok(i));
        }
    });
    assert_eq!(
        hedged_macro, 0,
        "#[retryable(hedge_after)]: {hedged_macro} allocations in {CALLS} calls"
    );
    let mut hedged_layer = RetryLayer::new(standard(success_config()))
        .idempotent(true)
        .hedge(hedging)
        .layer(tower::service_fn(op));
    assert_eq!(runtime.block_on(call_ready(&mut hedged_layer, 0)), Ok(0));
    let hedged_layer_path = allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(call_ready(&mut hedged_layer, i)), Ok(i));
        }
    });
    // The hedged call's state is boxed (one allocation per call), for information.
    println!(
        "hedged RetryLayer, answered before the delay: {hedged_layer_path} allocations in {CALLS} calls"
    );

    // The counter sees allocations made inside the wrapped operation: one per call.
    let inside = allocations(|| {
        for i in 0..CALLS {
            assert!(
                runtime
                    .block_on(retry(&strategy, || allocating_op(i)))
                    .is_ok()
            );
        }
    });
    assert_eq!(
        inside as u64, CALLS,
        "one Vec per call, counted through the wrapper"
    );

    // For information: the retry path (2 retries, zero backoff) and adaptive mode.
    let _zero_backoff_scope = prepare_retryable_scopes();
    let zero = standard(zero_backoff_config());
    let calls = Cell::new(0);
    let retry_call = || {
        calls.set(0);
        runtime.block_on(retry(&zero, || flaky(&calls, 3, 1)))
    };
    assert_eq!(retry_call(), Ok(1));
    let retry_path = allocations(|| {
        for _ in 0..CALLS {
            assert_eq!(retry_call(), Ok(1));
        }
    });
    // The default configuration's retry path: the quota sized by the traffic on each retry.
    let default_zero = standard(default_zero_backoff_config());
    let default_retry_call = || {
        calls.set(0);
        runtime.block_on(retry(&default_zero, || flaky(&calls, 3, 1)))
    };
    assert_eq!(default_retry_call(), Ok(1));
    let default_retry_path = allocations(|| {
        for _ in 0..CALLS {
            assert_eq!(default_retry_call(), Ok(1));
        }
    });
    // The same on a fleet scope whose lease is live.
    let (fleet_zero, _zero_holder) = fleet_standard(default_zero_backoff_config());
    let fleet_retry_call = || {
        calls.set(0);
        runtime.block_on(retry(&fleet_zero, || flaky(&calls, 3, 1)))
    };
    assert_eq!(fleet_retry_call(), Ok(1));
    let fleet_retry_path = allocations(|| {
        for _ in 0..CALLS {
            assert_eq!(fleet_retry_call(), Ok(1));
        }
    });
    let macro_retry_call = || {
        calls.set(0);
        runtime.block_on(flaky_retryable(&calls, 3, 1))
    };
    assert_eq!(macro_retry_call(), Ok(1));
    let macro_retry_path = allocations(|| {
        for _ in 0..CALLS {
            assert_eq!(macro_retry_call(), Ok(1));
        }
    });
    let adaptive = adaptive("alloc-test-adaptive");
    assert_eq!(runtime.block_on(retry(&adaptive, || op(0))), Ok(0));
    let adaptive_path = allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(retry(&adaptive, || op(i))), Ok(i));
        }
    });
    // A retry that sleeps 1 ms on tokio's timer (fewer calls: each takes about 2 ms).
    let sleeping = standard(
        zero_backoff_config()
            .to_builder()
            .initial_backoff(Duration::from_millis(1))
            .jitter(Jitter::None)
            .build()
            .unwrap_or_else(|error| panic!("{error}")),
    );
    let sleeping_call = || {
        calls.set(0);
        runtime.block_on(retry(&sleeping, || flaky(&calls, 2, 1)))
    };
    assert_eq!(sleeping_call(), Ok(1));
    let sleeping_path = allocations(|| {
        for _ in 0..SLEEPING_CALLS {
            assert_eq!(sleeping_call(), Ok(1));
        }
    });
    // RetryLayer's retry path: 2 retries with zero backoff, and 1 retry after a 1 ms sleep.
    let layer_calls = Cell::new(0);
    let mut layered_zero =
        RetryLayer::new(zero.clone()).layer(tower::service_fn(|x| flaky(&layer_calls, 3, x)));
    let mut layer_retry_call = || {
        layer_calls.set(0);
        runtime.block_on(call_ready(&mut layered_zero, 1))
    };
    assert_eq!(layer_retry_call(), Ok(1));
    let layer_retry_path = fewest_allocations(|| {
        for _ in 0..CALLS {
            assert_eq!(layer_retry_call(), Ok(1));
        }
    });
    assert_eq!(
        layer_retry_path, 0,
        "RetryLayer's retries without a wait allocate nothing"
    );
    let mut layered_sleeping =
        RetryLayer::new(sleeping.clone()).layer(tower::service_fn(|x| flaky(&layer_calls, 2, x)));
    let mut layer_sleeping_call = || {
        layer_calls.set(0);
        runtime.block_on(call_ready(&mut layered_sleeping, 1))
    };
    assert_eq!(layer_sleeping_call(), Ok(1));
    let layer_sleeping_path = allocations(|| {
        for _ in 0..SLEEPING_CALLS {
            assert_eq!(layer_sleeping_call(), Ok(1));
        }
    });
    let per_call = |n: usize| n as f64 / CALLS as f64;
    let rows = [
        ("block_on(async {})", per_call(block_on)),
        ("retry_core::retry, success", per_call(plain_api)),
        (
            "retry_core::retry, success, fleet lease",
            per_call(fleet_api),
        ),
        (
            "retry_core::retry, success, classic preset",
            per_call(classic_api),
        ),
        (
            "retry_core::retry over Box<dyn>, success",
            per_call(dyn_api),
        ),
        ("#[retryable], success", per_call(macro_default)),
        ("#[retryable] (2 more fns), success", per_call(macro_args)),
        (
            "retry_core::retry, 2 retries, zero backoff",
            per_call(retry_path),
        ),
        (
            "retry_core::retry, 2 retries, default quota",
            per_call(default_retry_path),
        ),
        (
            "retry_core::retry, 2 retries, fleet lease",
            per_call(fleet_retry_path),
        ),
        (
            "#[retryable], 2 retries, zero backoff",
            per_call(macro_retry_path),
        ),
        (
            "retry_core::retry, adaptive mode, success",
            per_call(adaptive_path),
        ),
        (
            "retry_core::retry, 1 retry after a 1 ms sleep",
            sleeping_path as f64 / SLEEPING_CALLS as f64,
        ),
        ("first call of a #[retryable] fn (one-off)", first as f64),
        ("RetryLayer, success", per_call(retry_layer)),
        ("tower's Retry, success", per_call(tower_path)),
        (
            "RetryLayer, adaptive mode, success",
            per_call(retry_layer_adaptive),
        ),
        (
            "RetryLayer, 2 retries, zero backoff",
            per_call(layer_retry_path),
        ),
        (
            "RetryLayer, 1 retry after a 1 ms sleep",
            layer_sleeping_path as f64 / SLEEPING_CALLS as f64,
        ),
    ];
    println!("allocations per call:");
    for (what, per_call) in rows {
        println!("  {what:<48}{per_call}");
    }
    // Built with `--features metrics`, every measurement above ran with the feature on and no
    // recorder; now with one.
    #[cfg(feature = "metrics")]
    success_paths_under_a_recorder(&runtime);
}

/// `op` under `#[retryable]` in a scope first made once the recorder is installed.
#[cfg(feature = "metrics")]
#[retryable(max_attempts = 3, scope = "alloc-test-recorded")]
async fn recorded_retryable(x: u64) -> Result<u64, BenchError> {
    op(x).await
}

/// The feature `metrics` with a recorder installed: the success paths still allocate nothing.
/// The recorder is `retry_bench::counting_recorder`, which counts in atomics (a real recorder's
/// histograms allocate storage as they fill); that it saw every call shows the metrics were
/// recorded, so a zero cannot pass because nothing was.
#[cfg(feature = "metrics")]
fn success_paths_under_a_recorder(runtime: &tokio::runtime::Runtime) {
    let recorder = retry_bench::counting_recorder::CountingRecorder::default();
    metrics::set_global_recorder(recorder.clone()).expect("the first recorder");
    // Made now: their scopes' handles are the recorder's.
    let strategy = standard(success_config());
    let mut layered = RetryLayer::new(standard(success_config())).layer(tower::service_fn(op));
    assert_eq!(runtime.block_on(retry(&strategy, || op(0))), Ok(0));
    assert_eq!(runtime.block_on(recorded_retryable(0)), Ok(0));
    assert_eq!(runtime.block_on(call_ready(&mut layered, 0)), Ok(0));
    let sampled = recorder.sampled();
    let recorded = fewest_allocations(|| {
        for i in 0..CALLS {
            assert_eq!(runtime.block_on(retry(&strategy, || op(i))), Ok(i));
            assert_eq!(runtime.block_on(recorded_retryable(i)), Ok(i));
            assert_eq!(runtime.block_on(call_ready(&mut layered, i)), Ok(i));
        }
    });
    assert_eq!(
        recorder.sampled() - sampled,
        3 * 3 * CALLS,
        "each call's attempts recorded (3 runs of 3 calls)"
    );
    assert_eq!(
        recorded, 0,
        "with a recorder: {recorded} allocations in 3 x {CALLS} calls"
    );
    println!(
        "  {:<48}{}",
        "3 success paths under a recorder",
        recorded as f64 / (3 * CALLS) as f64
    );
}
