//! The repository's Markdown documents, checked as text: every relative link (inline or by
//! reference) points at a file that exists, and its `#fragment` at a heading of that file;
//! README's Rust blocks are all doc tests (`ReadmeDoctests` compiles and runs them); and README
//! holds no table, since each table lives once, in the rustdoc or docs/ where a test checks it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ is in the workspace")
        .to_path_buf()
}

/// Directories that hold no document of ours: build output, version control, fuzzing data.
const SKIPPED_DIRS: [&str; 5] = ["target", ".git", "corpus", "artifacts", "node_modules"];

/// Every `.md` file under `dir`, build and fuzzing output and symbolic links left out.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if path.is_dir() {
            if !name.is_some_and(|n| SKIPPED_DIRS.contains(&n.as_str())) {
                found.extend(markdown_files(&path));
            }
        } else if path.extension().is_some_and(|ext| ext == "md") && !path.is_symlink() {
            // A link (`retry-core/README.md`, for its package) is its target's copy.
            found.push(path);
        }
    }
    found
}

/// The lines of `text` outside fenced code blocks, with inline code spans blanked out.
fn prose_lines(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let mut prose = String::new();
        for (i, part) in line.split('`').enumerate() {
            // Odd parts are inside a code span.
            if i % 2 == 0 {
                prose.push_str(part);
            } else {
                prose.push_str(&" ".repeat(part.len() + 2));
            }
        }
        lines.push(prose);
    }
    lines
}

/// The link targets of `text`: inline `[text](target)` and reference definitions
/// `[name]: target`, outside code.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        if let Some(rest) = line.trim_start().strip_prefix('[')
            && let Some((_, target)) = rest.split_once("]: ")
        {
            targets.push(target.trim().to_owned());
        }
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            targets.push(after[..end].trim().to_owned());
            rest = &after[end..];
        }
    }
    targets
}

/// A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces as `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of `text`'s headings.
fn anchors(text: &str) -> BTreeSet<String> {
    prose_lines(&text.replace('`', ""))
        .iter()
        .filter_map(|line| line.strip_prefix('#'))
        .map(|heading| slug(heading.trim_start_matches('#')))
        .collect()
}

/// What is wrong with the link `target` of the document `file`, if anything. Web addresses and
/// rustdoc's intra-doc links (`crate::Retry`, `super::adaptive`) are not files.
fn broken(file: &Path, target: &str) -> Option<String> {
    let is_web = ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| target.starts_with(scheme));
    if is_web || target.contains("::") || target.is_empty() {
        return None;
    }
    let (path, fragment) = match target.split_once('#') {
        Some((path, fragment)) => (path, Some(fragment)),
        None => (target, None),
    };
    let resolved = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().expect("a directory").join(path)
    };
    if !resolved.exists() {
        return Some(format!("`{target}`: no file {}", resolved.display()));
    }
    let fragment = fragment?;
    if resolved.extension().is_none_or(|ext| ext != "md") {
        return None;
    }
    let text = std::fs::read_to_string(&resolved).expect("a document");
    (!anchors(&text).contains(fragment)).then(|| format!("`{target}`: no heading `#{fragment}`"))
}

#[test]
fn relative_links_point_at_files_and_headings_that_exist() {
    let root = root();
    let files = markdown_files(&root);
    assert!(files.len() >= 20, "found {} documents", files.len());
    let mut problems = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a document");
        for target in link_targets(&text) {
            if let Some(problem) = broken(file, &target) {
                let name = file.strip_prefix(&root).unwrap_or(file).display();
                problems.push(format!("{name}: {problem}"));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_link_reader_finds_links_and_their_faults() {
    let text = "# A `code` heading\n\nSee [x](a.md#b), [y](#a-code-heading), `[z](in-code)`,\n\
                [w](https://example.com) and [v](crate::Retry).\n\n```text\n[u](fenced)\n```\n\
                [t]: docs/t.md\n";
    assert_eq!(
        link_targets(text),
        [
            "a.md#b",
            "#a-code-heading",
            "https://example.com",
            "crate::Retry",
            "docs/t.md"
        ]
    );
    assert!(anchors(text).contains("a-code-heading"));
    let readme = root().join("README.md");
    assert_eq!(broken(&readme, "https://example.com"), None);
    assert_eq!(broken(&readme, "crate::Retry"), None);
    assert_eq!(broken(&readme, "CHANGELOG.md"), None);
    assert!(broken(&readme, "NO-SUCH-FILE.md").is_some());
    assert!(broken(&readme, "CHANGELOG.md#no-such-heading").is_some());
}

/// The info string of every fenced block of `text` that opens a block.
fn fences(text: &str) -> Vec<String> {
    let mut open = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            if !open {
                found.push(info.trim().to_owned());
            }
            open = !open;
        }
    }
    found
}

#[test]
fn readmes_rust_blocks_are_all_doc_tests() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let rust: Vec<String> = fences(&readme)
        .into_iter()
        .filter(|info| info.is_empty() || info.starts_with("rust"))
        .collect();
    assert!(!rust.is_empty(), "README has its Quick start");
    for info in rust {
        assert!(
            !info.contains("ignore"),
            "README's Rust block `{info}` is not compiled: write it as a doc test (or move it \
             to the guide, with a snippet marker if its code lives in an example)"
        );
    }
}

#[test]
fn readme_holds_no_table() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let table = prose_lines(&readme)
        .iter()
        .any(|line| line.trim_start().starts_with('|'));
    assert!(
        !table,
        "README has a table: each table lives once, in the rustdoc (the attribute's arguments, \
         the derive's keys, the HTTP statuses) or in docs/, where a test checks it; link to it"
    );
}
