//! README's integration snippets are the code of compiled examples and tests: each
//! `<!-- snippet: path#name -->` marker in README.md is followed by a fenced block that must be
//! identical to the lines between `// ANCHOR: name` and `// ANCHOR_END: name` of that file (the
//! examples are built by `cargo test`, the tests run). Also holds the `rand` snippet.

use std::path::{Path, PathBuf};

// ANCHOR: readme-rand
use std::sync::Arc;

use rand::{SeedableRng, rngs::StdRng};
use retry_core::backoff::RngRandom;
use retry_core::{RetryConfig, StandardStrategy};

/// A strategy whose jitter comes from the program's own seeded generator: the same seed, the
/// same delays.
fn seeded_strategy(config: RetryConfig, seed: u64) -> StandardStrategy {
    StandardStrategy::builder(config)
        .random(Arc::new(RngRandom::new(StdRng::seed_from_u64(seed))))
        .build()
}
// ANCHOR_END: readme-rand

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

/// The lines between `// ANCHOR: name` and `// ANCHOR_END: name` of `file`.
fn anchored(file: &str, name: &str) -> String {
    let text = std::fs::read_to_string(root().join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
    let start = format!("// ANCHOR: {name}\n");
    let end = format!("// ANCHOR_END: {name}\n");
    let from = text
        .find(&start)
        .unwrap_or_else(|| panic!("{file}: no `{start}`"))
        + start.len();
    let to = text[from..]
        .find(&end)
        .unwrap_or_else(|| panic!("{file}: no `{end}`"))
        + from;
    text[from..to].to_owned()
}

/// Every `(path, name, block)` of README.md: the marker and the fenced block after it.
fn snippets(readme: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(target) = line
            .strip_prefix("<!-- snippet: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let (path, name) = target.split_once('#').expect("marker is `path#name`");
        let fence = lines.next().expect("a fenced block follows the marker");
        assert_eq!(fence, "```rust,ignore", "after the marker for {target}");
        let mut block = String::new();
        for line in lines.by_ref().take_while(|line| *line != "```") {
            block.push_str(line);
            block.push('\n');
        }
        found.push((path.to_owned(), name.to_owned(), block));
    }
    found
}

#[test]
fn readme_snippets_are_the_compiled_code() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let snippets = snippets(&readme);
    let files: Vec<&str> = snippets.iter().map(|(path, _, _)| path.as_str()).collect();
    for expected in [
        "examples/examples/reqwest_client.rs",
        "examples/examples/tower_hyper.rs",
        "examples/examples/tonic_client.rs",
        "tests/tests/tonic.rs",
        "tests/tests/readme_snippets.rs",
        "tests/tests/layers.rs",
    ] {
        assert!(
            files.contains(&expected),
            "README has no snippet of {expected}"
        );
    }
    for (path, name, block) in &snippets {
        assert_eq!(
            block,
            &anchored(path, name),
            "README's snippet of {path}#{name} differs from the file: copy the file's region"
        );
    }
}

#[test]
fn the_snippet_parser_sees_a_difference() {
    let readme = "<!-- snippet: x.rs#a -->\n```rust,ignore\nfn a() {}\n```\n";
    assert_eq!(
        snippets(readme),
        [("x.rs".to_owned(), "a".to_owned(), "fn a() {}\n".to_owned())]
    );
}

#[test]
fn the_rand_snippet_makes_jitter_reproducible() {
    use retry_core::{ErrorKind, RetryReason, RetryStrategy};
    let first_delay = |seed| {
        let strategy = seeded_strategy(RetryConfig::default(), seed);
        let token = strategy.acquire_initial_token();
        let token = strategy
            .refresh_retry_token(token, &RetryReason::error(ErrorKind::Server))
            .expect("a retry");
        let delay = token.delay();
        strategy.record_failure(token);
        delay
    };
    assert_eq!(first_delay(9), first_delay(9));
    assert_ne!(first_delay(9), first_delay(10));
}
