//! Every hand-written seed in `corpus/<target>/` passes its target's checks, on stable: a change
//! to a parser that breaks a property on a seed fails `cargo test` here, without nightly. (Unit
//! tests: an integration test would make cargo link the `no_main` targets.)

use std::fs;
use std::path::Path;

/// The seeds of `target`, as (file name, bytes); at least one.
fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    let mut seeds: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| {
            let path = entry.expect("a readable corpus entry").path();
            let bytes = fs::read(&path).expect("a readable seed");
            (path.display().to_string(), bytes)
        })
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    seeds
}

/// Runs `check` on every seed of `target`, naming the seed if it panics.
fn check_each(target: &str, check: impl Fn(&[u8])) {
    for (name, bytes) in seeds(target) {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&bytes)));
        assert!(outcome.is_ok(), "seed {name} fails its check");
    }
}

#[test]
fn parse_duration_seeds() {
    check_each("parse_duration", |bytes| {
        if let Ok(input) = std::str::from_utf8(bytes) {
            crate::duration::check(input);
        }
    });
}

#[test]
fn retry_after_seeds() {
    check_each("retry_after", |bytes| {
        assert!(
            crate::retry_after::check(bytes).is_some(),
            "a seed the check rejects"
        );
    });
}

#[test]
fn http_classifier_seeds() {
    check_each("http_classifier", |bytes| {
        assert!(
            crate::classifier::check(bytes).is_some(),
            "a seed the check rejects"
        );
    });
}

#[test]
fn env_config_seeds() {
    check_each("env_config", crate::env_config::check);
}

#[test]
fn names_seeds() {
    check_each("names", |bytes| {
        if let Ok(input) = std::str::from_utf8(bytes) {
            crate::names::check(input);
        }
    });
}
