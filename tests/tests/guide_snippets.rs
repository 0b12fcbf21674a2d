//! The guide's recipes that run against real servers elsewhere are their code: each
//! `<!-- snippet: path#name -->` marker in a page of `retry-core/src/guide/` is followed by a
//! fenced block whose visible lines (rustdoc's hidden `# ` lines left out) must be identical to
//! the lines between `// ANCHOR: name` and `// ANCHOR_END: name` of that file. The block is a
//! doc test, so the page's copy compiles; the file's copy runs (an example built by `cargo test`
//! and run by CI, or a test against a server on loopback).

use std::path::{Path, PathBuf};

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

/// Whether rustdoc hides `line` of a doc test (`#` alone, or `# ` and code).
fn hidden(line: &str) -> bool {
    line == "#" || line.starts_with("# ")
}

/// Every `(path, name, visible lines)` of a page: the marker and the fenced block after it.
fn snippets(page: &str) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let Some(target) = line
            .strip_prefix("<!-- snippet: ")
            .and_then(|rest| rest.strip_suffix(" -->"))
        else {
            continue;
        };
        let (path, name) = target.split_once('#').expect("marker is `path#name`");
        let fence = lines.next().expect("a fenced block follows the marker");
        assert!(
            fence.starts_with("```") && !fence.contains("ignore"),
            "after the marker for {target}: a doc test that compiles, not `{fence}`"
        );
        let mut block = String::new();
        for line in lines.by_ref().take_while(|line| *line != "```") {
            if !hidden(line) {
                block.push_str(line);
                block.push('\n');
            }
        }
        found.push((path.to_owned(), name.to_owned(), block));
    }
    found
}

/// The guide's pages: `(file name, text)`.
fn pages() -> Vec<(String, String)> {
    let dir = root().join("retry-core/src/guide");
    let mut pages: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("the guide's directory")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("a page");
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            (name, text)
        })
        .collect();
    pages.sort();
    pages
}

#[test]
fn the_guides_snippets_are_the_running_code() {
    let mut files = Vec::new();
    for (page, text) in pages() {
        for (path, name, block) in snippets(&text) {
            assert_eq!(
                block,
                anchored(&path, &name),
                "the guide's {page}: its snippet of {path}#{name} differs from the file: copy \
                 the file's region"
            );
            files.push(path);
        }
    }
    for expected in [
        "examples/examples/reqwest_client.rs",
        "tests/tests/tonic.rs",
        "tests/tests/layers.rs",
        "tests/tests/recipes.rs",
    ] {
        assert!(
            files.iter().any(|file| file == expected),
            "the guide has no snippet of {expected}"
        );
    }
}

#[test]
fn the_snippet_parser_sees_a_difference_and_skips_hidden_lines() {
    let page = "<!-- snippet: x.rs#a -->\n```no_run\n# use x;\nfn a() {}\n#\n```\n";
    assert_eq!(
        snippets(page),
        [("x.rs".to_owned(), "a".to_owned(), "fn a() {}\n".to_owned())]
    );
    assert_ne!(snippets(page)[0].2, "fn b() {}\n");
}

#[test]
#[should_panic(expected = "a doc test that compiles")]
fn an_ignored_snippet_is_refused() {
    snippets("<!-- snippet: x.rs#a -->\n```rust,ignore\nfn a() {}\n```\n");
}
