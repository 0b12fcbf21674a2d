//! The process-wide registry of named scopes stays bounded whatever names a program makes
//! (issue 28's soak test; bounded in count, not timed).
//!
//! 1. 1,000,000 distinct names, each made through `strategy_for`, called once (a success) and
//!    dropped: the process's resident memory stays within 20 MB of where it started, and the
//!    heap's live bytes (a counting allocator) within 1 MB.
//! 2. 10,000 scopes whose calls retried, dropped: remembered while their window lasts, freed once
//!    they have been idle past it (virtual time: tokio's paused clock, which the scopes read).
//! 3. 10,000 scopes whose calls retried, held: never forgotten, their stats and quota unchanged by
//!    the sweep that freed the others.
//!
//! Resident memory is read from `/proc/self/status` (`VmRSS`); freed memory goes back to the
//! allocator, which may keep it, so the resident figure can only show growth that is really
//! kept. The counting allocator (`stats_alloc`) sees every byte allocated and freed: the honest
//! measure of what the library keeps. Both are printed at each checkpoint. A program of its own
//! (`harness = false`): the allocation counter is process-wide, and the resident memory is the
//! whole process's.

use std::alloc::System;
use std::time::Duration;

use retry_core::scope::ScopeStats;
use retry_core::{RetryConfig, RetryInfo, Scope, retry, strategy_for};
use stats_alloc::{INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Distinct names made, called once and dropped.
const TRANSIENT_NAMES: usize = 1_000_000;
/// Resident and live memory are checked every this many names.
const CHECKPOINT: usize = 100_000;
/// The most resident memory may grow over the run of transient names.
const RSS_SLACK: u64 = 20 * 1024 * 1024;
/// The most the heap's live bytes may grow over it.
const LIVE_SLACK: i64 = 1024 * 1024;
/// Scopes that retried, dropped; and scopes that retried, held.
const RETRIED_SCOPES: usize = 10_000;

#[derive(Debug, thiserror::Error, RetryInfo)]
#[error("transient")]
#[retry(transient)]
struct Transient;

/// The default configuration without backoff: a retry does not move the paused clock.
fn config() -> RetryConfig {
    RetryConfig::builder()
        .initial_backoff(Duration::ZERO)
        .throttling_backoff(Duration::ZERO)
        .build()
        .expect("a valid configuration")
}

/// The process's resident memory, in bytes (`VmRSS` of `/proc/self/status`).
fn resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kilobytes = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<u64>()
                .ok()
        })
        .expect("a VmRSS line");
    kilobytes * 1024
}

/// The heap's live bytes: allocated less freed, as the counting allocator saw them.
fn live() -> i64 {
    let stats = GLOBAL.stats();
    let allocated = i64::try_from(stats.bytes_allocated).expect("fits");
    let freed = i64::try_from(stats.bytes_deallocated).expect("fits");
    allocated - freed + i64::try_from(stats.bytes_reallocated).expect("fits")
}

/// One call of `name`'s scope's strategy that succeeds at once, the strategy then dropped.
async fn call_once(name: &str) {
    let strategy = strategy_for(config(), name);
    retry(&strategy, || async { Ok::<_, Transient>(()) })
        .await
        .expect("a success");
}

/// One call that fails once, is retried and succeeds: the scope's quota was touched.
async fn call_retried(strategy: &impl retry_core::RetryStrategy) {
    let mut failed = false;
    retry(strategy, || {
        let first = !std::mem::replace(&mut failed, true);
        async move { if first { Err(Transient) } else { Ok(()) } }
    })
    .await
    .expect("a success after one retry");
}

fn registered_with_prefix(prefix: &str) -> usize {
    Scope::registered()
        .iter()
        .filter(|name| name.starts_with(prefix))
        .count()
}

/// Phase 1: a million names made, called once and dropped.
async fn transient_names_are_forgotten() -> Result<(), String> {
    // Warm up: the runtime, the tracing and metrics statics, the registry's first entries.
    for index in 0..1_000 {
        call_once(&format!("warm-up-{index}")).await;
    }
    let (rss_start, live_start) = (resident(), live());
    println!(
        "start: resident {} KB, live {} KB",
        rss_start / 1024,
        live_start / 1024
    );
    for index in 0..TRANSIENT_NAMES {
        call_once(&format!("tenant-{index}")).await;
        if (index + 1) % CHECKPOINT == 0 {
            let (rss, bytes) = (resident(), live());
            let grown = rss.saturating_sub(rss_start);
            println!(
                "{} names: resident +{} KB, live +{} KB, {} registered",
                index + 1,
                grown / 1024,
                (bytes - live_start) / 1024,
                registered_with_prefix("tenant-")
            );
            if grown > RSS_SLACK || bytes - live_start > LIVE_SLACK {
                return Err(format!(
                    "after {} names the process kept +{} KB resident, +{} KB live \
                     (at most {} KB and {} KB)",
                    index + 1,
                    grown / 1024,
                    (bytes - live_start) / 1024,
                    RSS_SLACK / 1024,
                    LIVE_SLACK / 1024
                ));
            }
        }
    }
    Ok(())
}

/// Phases 2 and 3: retried scopes, dropped or held, across their window.
async fn idle_scopes_are_forgotten_held_ones_kept() -> Result<(), String> {
    let held: Vec<_> = (0..RETRIED_SCOPES)
        .map(|index| strategy_for(config(), &format!("held-{index}")))
        .collect();
    for strategy in &held {
        call_retried(strategy).await;
    }
    // The held scopes' stats before the sweep, and the registry's room for the resting scopes'
    // names (it keeps its room until it holds far fewer names), measured with the held scopes.
    let mut before: Vec<ScopeStats> = Vec::with_capacity(RETRIED_SCOPES);
    let live_held = live();
    for index in 0..RETRIED_SCOPES {
        let strategy = strategy_for(config(), &format!("resting-{index}"));
        call_retried(&strategy).await;
    }
    let live_resting = live();
    println!(
        "{RETRIED_SCOPES} retried scopes dropped: live +{} KB, {} registered",
        (live_resting - live_held) / 1024,
        registered_with_prefix("resting-")
    );
    if registered_with_prefix("resting-") != RETRIED_SCOPES {
        return Err("a scope that retried was forgotten within its window".into());
    }
    // Past the window (the default's 60 s): the dropped scopes are idle enough to forget.
    tokio::time::advance(Duration::from_secs(61)).await;
    before.extend(held.iter().map(|s| s.scope().stats()));
    // New names: the registry sweeps as names are made.
    for index in 0..4 * RETRIED_SCOPES {
        call_once(&format!("sweeper-{index}")).await;
    }
    let live_swept = live();
    println!(
        "after the window and {} new names: live +{} KB over the held scopes, {} resting and {} \
         held registered",
        4 * RETRIED_SCOPES,
        (live_swept - live_held) / 1024,
        registered_with_prefix("resting-"),
        registered_with_prefix("held-")
    );
    // What is left of the resting scopes' memory is the registry's room for names, which it
    // keeps until it holds a quarter of what it has room for (about 100 bytes a name): at
    // most a fifth of what the scopes held.
    let left = live_swept - live_held;
    if registered_with_prefix("resting-") != 0 || left > (live_resting - live_held) / 5 {
        return Err("scopes idle past their window were not forgotten".into());
    }
    if registered_with_prefix("held-") != RETRIED_SCOPES {
        return Err("a held scope was forgotten".into());
    }
    let after: Vec<ScopeStats> = held.iter().map(|s| s.scope().stats()).collect();
    if before != after {
        return Err("the sweep changed a held scope's stats".into());
    }
    for (strategy, index) in held.iter().zip(0..) {
        let again = strategy_for(config(), &format!("held-{index}"));
        if !again.scope().same_as(strategy.scope()) || again.scope().stats().retries != 1 {
            return Err(format!("held-{index} came back as another scope"));
        }
    }
    Ok(())
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime");
    let results = [
        (
            "transient_names_are_forgotten",
            runtime.block_on(transient_names_are_forgotten()),
        ),
        (
            "idle_scopes_are_forgotten_held_ones_kept",
            runtime.block_on(idle_scopes_are_forgotten_held_ones_kept()),
        ),
    ];
    let mut failed = 0;
    for (name, result) in &results {
        match result {
            Ok(()) => println!("test {name} ... ok"),
            Err(error) => {
                failed += 1;
                println!("test {name} ... FAILED: {error}");
            }
        }
    }
    println!(
        "scope_memory: {} passed, {failed} failed",
        results.len() - failed
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
