//! The resident memory of a program that names scopes at run time (issue 28's table): `N`
//! distinct names, each made once and dropped, then the process's resident memory
//! (`VmRSS` of `/proc/self/status`, Linux) and the names the registry still holds.
//!
//! ```text
//! cargo build --release -p retry-core --example scope_rss
//! target/release/examples/scope_rss named 1000000
//! target/release/examples/scope_rss strategy-for 1000000
//! ```
//!
//! * `named`: `Scope::named(name, &RetryConfig::default())`, dropped at once;
//! * `strategy-for`: `strategy_for(RetryConfig::default(), name)`, one call through `retry` that
//!   succeeds at its first attempt, then the strategy dropped.
//!
//! Built with retry-core's default features (those of `-p retry-core`), in release, as the
//! issue measured. It uses only what retry-core had before scopes were forgotten, so the same
//! file builds on older commits for the figures before.

use std::process::ExitCode;

use retry_core::{RetryConfig, Scope, retry, strategy_for};

/// The process's resident memory, in KiB (`VmRSS`).
fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The error of the calls, which never fail.
#[derive(Debug)]
struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}

impl std::error::Error for Never {}

impl retry_core::RetryInfo for Never {}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let (Some(mode), Some(Ok(names))) = (args.get(1), args.get(2).map(|n| n.parse::<usize>()))
    else {
        eprintln!("usage: scope_rss named|strategy-for NAMES");
        return ExitCode::FAILURE;
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("no tokio runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let config = RetryConfig::default();
    let start = resident_kib();
    match mode.as_str() {
        "named" => {
            for index in 0..names {
                drop(Scope::named(&format!("tenant-{index}"), &config));
            }
        }
        "strategy-for" => runtime.block_on(async {
            for index in 0..names {
                let strategy = strategy_for(config.clone(), &format!("tenant-{index}"));
                let outcome = retry(&strategy, || async { Ok::<_, Never>(index) }).await;
                std::hint::black_box(outcome).ok();
            }
        }),
        other => {
            eprintln!("unknown mode `{other}`: expected named or strategy-for");
            return ExitCode::FAILURE;
        }
    }
    let end = resident_kib();
    println!(
        "{mode} {names} names: resident {end} KiB ({} MiB) at the end, +{} KiB over the \
         start ({start} KiB); {} names registered",
        end / 1024,
        end.saturating_sub(start),
        Scope::registered().len()
    );
    ExitCode::SUCCESS
}
