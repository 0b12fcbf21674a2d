//! Many tasks on a multi-thread runtime: 64 tasks × 1000 calls each on 2 worker threads, every
//! call wrapped in `retry_core::retry` with one strategy (one scope: one quota, one set of
//! counters) shared by all tasks, against the same calls with no wrapper.
//!
//! Rows: `no_wrapper`; `retry_core_shared_scope` (one `Arc<StandardStrategy>` over one
//! `Scope::new`); `retry_core_scope_per_task` (a scope per task: no shared cache lines, for
//! comparison); `retryable` (a `#[retryable]` fn: its process-wide scope is shared); `backon` (a peer with no shared state). One iteration is the whole batch
//! (spawn, run, join); divide by 64 000 for the time per call. Timed in the process's CPU time
//! (both workers), so that other processes on a shared machine do not inflate the numbers.

use std::future::Future;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};
use cpu_time::ProcessTime;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retry_bench::{
    BenchError, INITIAL_BACKOFF, MAX_ATTEMPTS, MAX_BACKOFF, multi_thread_runtime, op,
    success_config,
};
use retry_core::{Scope, StandardStrategy, retry};

retry_bench::retryable_ops!();

const TASKS: u64 = 64;
const CALLS_PER_TASK: u64 = 1000;
const WORKERS: usize = 2;

/// Spawns [`TASKS`] tasks, each running `task(n)`, and waits for all of them.
async fn run_tasks<F, Fut>(task: F)
where
    F: Fn(u64) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let handles: Vec<_> = (0..TASKS).map(|n| tokio::spawn(task(n))).collect();
    for handle in handles {
        if let Err(error) = handle.await {
            panic!("benchmark task failed: {error}");
        }
    }
}

/// Runs `batch` `iters` times and returns the CPU time the whole process spent on it: both
/// workers' time, contention included, but not the time other processes on a shared machine
/// take from them (the wall time would count that).
fn timed(iters: u64, mut batch: impl FnMut()) -> Duration {
    let start = ProcessTime::now();
    for _ in 0..iters {
        batch();
    }
    start.elapsed()
}

fn many_tasks(c: &mut Criterion) {
    let runtime = multi_thread_runtime(WORKERS);
    let config = success_config();
    let shared = Arc::new(
        StandardStrategy::builder(config.clone())
            .scope(Scope::new("bench-shared", &config))
            .build(),
    );
    let backon = ExponentialBuilder::default()
        .with_min_delay(INITIAL_BACKOFF)
        .with_max_delay(MAX_BACKOFF)
        .with_max_times(MAX_ATTEMPTS as usize - 1)
        .with_jitter();

    let mut group = c.benchmark_group("many_tasks");
    group
        .throughput(Throughput::Elements(TASKS * CALLS_PER_TASK))
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    group.bench_function("no_wrapper", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                runtime.block_on(run_tasks(|_| async {
                    for i in 0..CALLS_PER_TASK {
                        let _ = black_box(op(i).await);
                    }
                }))
            })
        })
    });
    group.bench_function("retry_core_shared_scope", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                runtime.block_on(run_tasks(|_| {
                    let strategy = Arc::clone(&shared);
                    async move {
                        for i in 0..CALLS_PER_TASK {
                            let _ = black_box(retry(&*strategy, || op(i)).await);
                        }
                    }
                }))
            })
        })
    });
    let per_task: Vec<Arc<StandardStrategy>> = (0..TASKS)
        .map(|n| {
            let scope = Scope::new(&format!("bench-task-{n}"), &config);
            Arc::new(
                StandardStrategy::builder(config.clone())
                    .scope(scope)
                    .build(),
            )
        })
        .collect();
    group.bench_function("retry_core_scope_per_task", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                runtime.block_on(run_tasks(|n| {
                    let strategy = Arc::clone(&per_task[n as usize]);
                    async move {
                        for i in 0..CALLS_PER_TASK {
                            let _ = black_box(retry(&*strategy, || op(i)).await);
                        }
                    }
                }))
            })
        })
    });
    group.bench_function("retryable", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                runtime.block_on(run_tasks(|_| async move {
                    for i in 0..CALLS_PER_TASK {
                        let _ = black_box(op_retryable(i).await);
                    }
                }))
            })
        })
    });
    group.bench_function("backon", |b| {
        b.iter_custom(|iters| {
            timed(iters, || {
                runtime.block_on(run_tasks(|_| async move {
                    for i in 0..CALLS_PER_TASK {
                        let _ = black_box(
                            (|| op(i))
                                .retry(backon)
                                .when(BenchError::is_retryable)
                                .await,
                        );
                    }
                }))
            })
        })
    });
    group.finish();
    black_box(shared.scope().stats());
}

criterion_group!(benches, many_tasks);
criterion_main!(benches);
