//! The guide's observability recipes print what the guide says they print. Each recipe runs as
//! written (its code is the guide's snippet: `tests/tests/guide_snippets.rs` holds them equal) in
//! a process of its own, this program run again with the recipe's name, since each installs a
//! process-wide subscriber or recorder; its standard output, as a terminal would show it
//! (escapes and timestamps aside), is compared with the page's `text` block.
//!
//! * `spans` (`retry-core/src/guide/spans.md`): every line the page shows, and no other; under
//!   `tracing_subscriber::fmt::init()` instead (`default`), nothing at all, as the page says.
//! * `prometheus` (`retry-core/src/guide/prometheus.md`): every line the page shows is in the
//!   scrape (the page shows an excerpt).
//!
//! Without libtest's harness (`harness = false`): the children's output is the recipe's alone.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicU32, Ordering};

use retry_core::{RetryInfo, retryable};

/// What the recipes' store answers.
#[derive(Debug, thiserror::Error, RetryInfo)]
enum StoreError {
    #[error("slow down")]
    #[retry(throttling)]
    Throttled,
}

/// Throttled while `throttles` lasts, then served: the recipes' one call. Its backoffs are
/// real sleeps of 200 ms (no jitter, the throttling backoff capped): the output is the same on
/// every run.
#[retryable(
    max_attempts = 3,
    jitter = "none",
    max_backoff = "200ms",
    scope = "store"
)]
async fn get(throttles: &AtomicU32) -> Result<u32, StoreError> {
    match throttles.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
        left.checked_sub(1)
    }) {
        Ok(_) => Err(StoreError::Throttled),
        Err(_) => Ok(42),
    }
}

// ANCHOR: spans
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::format::FmtSpan;

/// Logs to standard output: warnings, and retry_core's spans (INFO) as each opens.
fn init_tracing() {
    tracing_subscriber::fmt()
        // RUST_LOG when it is set; else warnings, and retry_core's spans.
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("warn,retry_core=info")),
        )
        // A line when each span opens: fmt shows a span otherwise only around an event in it.
        .with_span_events(FmtSpan::NEW)
        .init();
}
// ANCHOR_END: spans

/// What the spans recipe is for: the same call under a default `fmt` subscriber shows nothing.
async fn default_subscriber() {
    tracing_subscriber::fmt::init();
    let throttles = AtomicU32::new(3);
    let _ = get(&throttles).await;
}

/// The spans recipe: a call retried twice that gives up.
async fn spans() {
    init_tracing();
    let throttles = AtomicU32::new(3);
    let _ = get(&throttles).await;
}

// ANCHOR: prometheus
use metrics_exporter_prometheus::{BuildError, Matcher, PrometheusBuilder, PrometheusHandle};
use retry_core::metrics::{ATTEMPTS_PER_CALL, BACKOFF_DELAY, LIMITER_WAIT};

/// Installs Prometheus's recorder. Call it before the first call that may retry: a scope's
/// metrics go to the recorder installed when the scope is made.
fn install_prometheus() -> Result<PrometheusHandle, BuildError> {
    PrometheusBuilder::new()
        // `retry.calls` as `retry_calls_total`, `retry.backoff.delay` as
        // `retry_backoff_delay_seconds` (else `retry_calls`, `retry_backoff_delay`).
        .with_recommended_naming(true)
        // Histograms with buckets, else summaries: the backoffs (10 ms to the default cap of
        // 20 s), the waits for a send permit (adaptive mode), the attempts per call.
        .set_buckets_for_metric(
            Matcher::Full(BACKOFF_DELAY.to_owned()),
            &[0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0],
        )?
        .set_buckets_for_metric(
            Matcher::Full(LIMITER_WAIT.to_owned()),
            &[0.001, 0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0],
        )?
        .set_buckets_for_metric(
            Matcher::Full(ATTEMPTS_PER_CALL.to_owned()),
            &[1.0, 2.0, 3.0, 4.0, 5.0],
        )?
        // Serve `handle.render()` at your `/metrics`; or `.install()`: the exporter serves it
        // (its feature `http-listener`).
        .install_recorder()
}
// ANCHOR_END: prometheus

/// The Prometheus recipe: a call retried once, then the scrape.
async fn prometheus() -> Result<(), Box<dyn std::error::Error>> {
    let handle = install_prometheus()?;
    let throttles = AtomicU32::new(1);
    get(&throttles).await?;
    // What a scrape of the program's `/metrics` shows.
    print!("{}", handle.render());
    Ok(())
}

/// Runs the recipe `name` in this process.
fn run_recipe(name: &str) -> ExitCode {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    match name {
        "default" => runtime.block_on(default_subscriber()),
        "spans" => runtime.block_on(spans()),
        "prometheus" => {
            if let Err(error) = runtime.block_on(prometheus()) {
                eprintln!("{error}");
                return ExitCode::FAILURE;
            }
        }
        other => {
            eprintln!("no recipe `{other}`");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

/// The lines of the first `text` block of the guide's page `page`.
fn shown(page: &str) -> Vec<String> {
    let path = root().join("retry-core/src/guide").join(page);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{page}: {e}"));
    let block: Vec<String> = text
        .lines()
        .skip_while(|line| *line != "```text")
        .skip(1)
        .take_while(|line| *line != "```")
        .map(normalized)
        .collect();
    assert!(!block.is_empty(), "{page}: no `text` block");
    block
}

/// `line` as compared: terminal escapes removed, a leading RFC 3339 timestamp replaced by
/// `<time>`, trailing spaces trimmed.
fn normalized(line: &str) -> String {
    let mut plain = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // `ESC [ ... letter`: a colour or a style.
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    let stamped = plain
        .split_once(' ')
        .filter(|(first, _)| first.len() > 20 && first.ends_with('Z') && first.contains('T'));
    match stamped {
        Some((_, rest)) => format!("<time> {}", rest.trim_end()),
        None => plain.trim_end().to_owned(),
    }
}

/// The standard output of the recipe `name`, run in a process of its own.
fn output_of(name: &str) -> Vec<String> {
    let output = Command::new(std::env::current_exe().expect("this program"))
        .arg(name)
        .env_remove("RUST_LOG")
        .output()
        .expect("the recipe runs");
    assert!(
        output.status.success(),
        "recipe {name}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("text")
        .lines()
        .map(normalized)
        .collect()
}

fn main() -> ExitCode {
    if let Some(name) = std::env::args().nth(1).filter(|arg| !arg.starts_with('-')) {
        return run_recipe(&name);
    }
    assert_eq!(
        output_of("default"),
        Vec::<String>::new(),
        "the guide says a default fmt subscriber shows nothing of a call that gives up"
    );
    let spans = output_of("spans");
    assert_eq!(
        spans,
        shown("spans.md"),
        "the spans recipe prints (left) other lines than the guide shows (right)"
    );
    let scrape = output_of("prometheus");
    for line in shown("prometheus.md") {
        assert!(
            scrape.contains(&line),
            "the guide shows `{line}`, the scrape has not:\n{}",
            scrape.join("\n")
        );
    }
    println!("recipes: spans and prometheus print what the guide shows");
    ExitCode::SUCCESS
}
