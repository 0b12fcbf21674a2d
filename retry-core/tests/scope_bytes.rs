//! Bytes per scope, counted by a global allocator (`stats_alloc`): what 10,000 named scopes
//! keep on the heap while held (the scope's state, its name, the registry's entry; with the
//! `metrics` feature its metric handles, without a recorder; with `fleet`, attached to a fleet
//! or not), and what they keep once dropped (nothing). Printed, and held to bounds so that a
//! change that grows a scope is seen. Run for each feature set:
//!
//! ```sh
//! cargo test -p retry-core --no-default-features --features macros --test scope_bytes
//! cargo test -p retry-core --no-default-features --features metrics --test scope_bytes
//! cargo test -p retry-core --no-default-features --features fleet --test scope_bytes
//! ```
//!
//! A program of its own (`harness = false`): the counter is process-wide.

use std::alloc::System;

use retry_core::{RetryConfig, Scope};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Scopes per measurement.
const SCOPES: usize = 10_000;

/// The most a held named scope may keep, bytes (measured: 2341; 2405 with `fleet`, the link's
/// empty cell beside hedging's; 2805 with `metrics` and `fleet`, its 21 metric handles, their
/// labels and the late-registered limiter gauge's label; 2373, 2453 and 2853 at stop 69, whose
/// counted rate keeps the responses its count started with, 8 bytes).
const HELD_BOUND: i64 = if cfg!(feature = "metrics") {
    2_900
} else {
    2_500
};

/// The most a fleet's attachment may add to a scope, bytes (measured: 2653, the lease's
/// holder, the store's keys with their prefix and the link with its last error; 3334 with
/// `metrics`, the fleet's handles; 2713 and 3447 before, 2766 and 3500 since the holder keeps
/// when its last report was made, where the next report's span starts).
#[cfg(feature = "fleet")]
const ATTACHED_BOUND: i64 = if cfg!(feature = "metrics") {
    3_550
} else {
    2_850
};

/// The heap's live bytes.
fn live() -> i64 {
    let stats = GLOBAL.stats();
    let signed = |bytes: usize| i64::try_from(bytes).expect("fits");
    signed(stats.bytes_allocated) - signed(stats.bytes_deallocated)
        + i64::try_from(stats.bytes_reallocated).expect("fits")
}

/// The names: 16 bytes each.
fn name(index: usize) -> String {
    format!("scope-bytes-{index:04}")
}

/// Bytes per scope that `make` keeps, and the bytes left once they are dropped.
fn measure<T>(make: impl Fn(usize) -> T) -> (i64, i64) {
    // The registry's room for names made first, so that it is not counted per scope.
    drop((0..SCOPES).map(&make).collect::<Vec<_>>());
    let names: Vec<String> = (0..SCOPES).map(name).collect();
    let before = live();
    let held: Vec<T> = (0..SCOPES).map(&make).collect();
    let per_scope = (live() - before) / i64::try_from(SCOPES).expect("fits");
    drop(held);
    let left = live() - before;
    drop(names);
    (per_scope, left)
}

fn features() -> &'static str {
    match (cfg!(feature = "metrics"), cfg!(feature = "fleet")) {
        (true, true) => "metrics, fleet",
        (true, false) => "metrics",
        (false, true) => "fleet",
        (false, false) => "default",
    }
}

fn main() {
    let config = RetryConfig::default();
    let mut failed = Vec::new();
    let check = |what: &str, (bytes, left): (i64, i64), bound: i64| {
        println!(
            "{what} ({}): {bytes} bytes a scope, {left} bytes left after",
            features()
        );
        (bytes > bound || left > 0)
            .then(|| format!("{what}: {bytes} bytes a scope (at most {bound}), {left} left"))
    };
    failed.extend(check(
        "a named scope, held",
        measure(|index| Scope::named(&name(index), &config)),
        HELD_BOUND,
    ));
    failed.extend(check(
        "a private scope",
        measure(|index| Scope::new(&name(index), &config)),
        HELD_BOUND,
    ));
    #[cfg(feature = "fleet")]
    {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        // A store that does not answer (a port nothing listens on): the fleet starts anyway,
        // and its scopes are attached as with a live one.
        let fleet = runtime.block_on(async {
            retry_core::fleet::Fleet::connect("redis://127.0.0.1:9/")
                .expect("a URL")
                .start()
                .await
                .expect("starts without its store")
        });
        let names: Vec<String> = (0..SCOPES)
            .map(|index| format!("fleet-{index:04}"))
            .collect();
        let held: Vec<Scope> = names
            .iter()
            .map(|name| Scope::named(name, &config))
            .collect();
        let before = live();
        for name in &names {
            fleet.attach(name).expect("attaches");
        }
        let attached = (live() - before) / i64::try_from(SCOPES).expect("fits");
        println!(
            "attached to a fleet ({}): {attached} bytes more a scope",
            features()
        );
        if attached > ATTACHED_BOUND {
            failed.push(format!(
                "attached: {attached} bytes more a scope (at most {ATTACHED_BOUND})"
            ));
        }
        drop((held, fleet, runtime));
    }
    let passed = usize::from(failed.is_empty());
    for failure in &failed {
        println!("FAILED: {failure}");
    }
    println!(
        "scope_bytes: {passed} passed, {} failed",
        usize::from(!failed.is_empty())
    );
    if !failed.is_empty() {
        std::process::exit(1);
    }
}
