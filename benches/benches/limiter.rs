//! The adaptive rate limiter's `try_acquire(None, now)`, the call every attempt of an adaptive
//! strategy makes: disabled (before any throttling, the common case), enabled with a permit in
//! the bucket, and enabled with an empty bucket (the caller is told to wait and handed a
//! reservation, dropped here at once). Timed in the thread's CPU time, like `wrappers`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use retry_bench::cpu_time_iters;
use retry_core::adaptive::ClientRateLimiter;

fn limiter(c: &mut Criterion) {
    let mut group = c.benchmark_group("adaptive_limiter");
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1500));

    let disabled = ClientRateLimiter::new(Duration::ZERO);
    let now = Duration::from_secs(1);
    group.bench_function("try_acquire_disabled", |b| {
        b.iter_custom(|iters| cpu_time_iters(iters, || disabled.try_acquire(None, black_box(now))))
    });

    // A throttle switches the bucket on (0.5 permits/s, capacity 1). Each call moves the clock 10 s
    // on, so the bucket is refilled to its one permit and the permit is granted.
    let with_permits = ClientRateLimiter::new(Duration::ZERO);
    with_permits.record_response(true, Duration::ZERO, Duration::ZERO);
    assert!(with_permits.is_enabled());
    let mut now = Duration::ZERO;
    group.bench_function("try_acquire_enabled_granted", |b| {
        b.iter_custom(|iters| {
            cpu_time_iters(iters, || {
                now += Duration::from_secs(10);
                with_permits.try_acquire(None, black_box(now))
            })
        })
    });

    // The same bucket with the clock standing still: empty, so every caller is told to wait.
    let empty = ClientRateLimiter::new(Duration::ZERO);
    empty.record_response(true, Duration::ZERO, Duration::ZERO);
    group.bench_function("try_acquire_enabled_wait", |b| {
        b.iter_custom(|iters| {
            cpu_time_iters(iters, || empty.try_acquire(None, black_box(Duration::ZERO)))
        })
    });
    group.finish();
}

criterion_group!(benches, limiter);
criterion_main!(benches);
