//! The crate root's public names, listed: the everyday names and the modules that hold the rest.
//! A name added to the root fails here until it is added to [`ROOT`], so that growing the root
//! is a decision. And `lib.rs` is the crate's face, not a hub: it only declares modules and
//! re-exports (besides its documentation and the README's doc tests).
//!
//! `lib.rs` is read as text, every feature's names included.

use std::path::Path;

/// The root's public names: the attribute and the derive, the error's description, the drivers,
/// the configuration, the strategies, the classification vocabulary, the scope and the refusal.
const ROOT: [&str; 24] = [
    "AdaptiveStrategy",
    "ClassifyRetry",
    "ConfigError",
    "ErrorKind",
    "Fault",
    "LoadShed",
    "Quota",
    "Retry",
    "RetryAction",
    "RetryConfig",
    "RetryError",
    "RetryEvent",
    "RetryInfo",
    "RetryMode",
    "RetryPreset",
    "RetryReason",
    "RetrySafety",
    "RetryStrategy",
    "Scope",
    "StandardStrategy",
    "retry",
    "retry_blocking",
    "retryable",
    "strategy_for",
];

/// The public modules, one per concept.
const MODULES: [&str; 17] = [
    "adaptive", "attempt", "backoff", "classify", "clock", "config", "driver", "fleet", "guide",
    "hedge", "http", "metrics", "quota", "scope", "strategy", "tonic", "tower",
];

fn lib_rs() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    std::fs::read_to_string(path).expect("src/lib.rs")
}

/// The statements of `lib.rs` outside comments, each joined onto one line, with whether the
/// item before it was `#[doc(hidden)]`.
fn statements(text: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    let mut current = String::new();
    let mut hidden = false;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("//") {
            continue;
        }
        if line.starts_with("#![") {
            continue;
        }
        if line.starts_with("#[") && current.is_empty() {
            hidden |= line == "#[doc(hidden)]";
            continue;
        }
        current.push_str(line);
        current.push(' ');
        if line.ends_with(';') || line.ends_with('}') {
            found.push((current.trim().to_owned(), hidden));
            current.clear();
            hidden = false;
        }
    }
    found
}

/// The names a `pub use` statement binds (`pub use a::{B, c::D as E};` binds `B` and `E`).
fn bound_names(statement: &str) -> Vec<String> {
    let body = statement
        .trim_start_matches("pub use ")
        .trim_end_matches(';')
        .trim();
    let inner = match (body.find('{'), body.rfind('}')) {
        (Some(open), Some(close)) => &body[open + 1..close],
        _ => body,
    };
    inner
        .split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once(" as ") {
            Some((_, alias)) => alias.trim().to_owned(),
            None => part.rsplit("::").next().unwrap_or(part).trim().to_owned(),
        })
        .collect()
}

#[test]
fn the_roots_names_are_the_listed_ones() {
    let mut names = Vec::new();
    let mut modules = Vec::new();
    for (statement, hidden) in statements(&lib_rs()) {
        if hidden {
            continue;
        }
        if let Some(rest) = statement.strip_prefix("pub use ") {
            names.extend(bound_names(&format!("pub use {rest}")));
        } else if let Some(name) = statement
            .strip_prefix("pub mod ")
            .and_then(|rest| rest.strip_suffix(';'))
        {
            modules.push(name.to_owned());
        }
    }
    names.sort();
    names.dedup(); // `RetryInfo`: the trait and the derive
    modules.sort();
    let mut root = ROOT.map(str::to_owned).to_vec();
    root.sort();
    assert_eq!(
        names, root,
        "the crate root's names changed: a new name belongs in the module of its concept; if it \
         is an everyday name, add it to ROOT in retry-core/tests/surface.rs (and to the \
         CHANGELOG)"
    );
    assert_eq!(modules, MODULES, "the public modules changed");
}

#[test]
fn lib_rs_only_declares_modules_and_re_exports() {
    let allowed = |statement: &str| {
        ["mod ", "pub mod ", "pub use ", "pub(crate) use "]
            .iter()
            .any(|start| statement.starts_with(start))
            // The README's examples, compiled as doc tests.
            || statement == "pub struct ReadmeDoctests;"
    };
    let others: Vec<String> = statements(&lib_rs())
        .into_iter()
        .map(|(statement, _)| statement)
        .filter(|statement| !allowed(statement))
        .collect();
    assert!(
        others.is_empty(),
        "lib.rs declares modules and re-exports only; move these to the module of their \
         concept:\n  {}",
        others.join("\n  ")
    );
}

/// The reader itself, on a small `lib.rs`.
#[test]
fn the_reader_sees_names_aliases_and_hidden_items() {
    let text = "//! Docs.\n#![forbid(unsafe_code)]\npub mod a;\n#[doc(hidden)]\npub mod b;\n\
                pub use a::{C, d::E as F};\npub use a::g;\n";
    let statements = statements(text);
    assert_eq!(
        statements,
        [
            ("pub mod a;".to_owned(), false),
            ("pub mod b;".to_owned(), true),
            ("pub use a::{C, d::E as F};".to_owned(), false),
            ("pub use a::g;".to_owned(), false),
        ]
    );
    assert_eq!(bound_names("pub use a::{C, d::E as F};"), ["C", "F"]);
}
