//! The crate's layout, kept: modules import from where a thing is defined, never through a
//! re-export of the crate root (`use crate::RetryConfig`), and no file imports, directly or
//! through others, a file that imports it back (no import cycle between files).
//!
//! The source is read as text: the module tree from the `mod` declarations (a `#[path]`
//! honoured), each file's `use` declarations (re-exports set apart) and the `crate::` paths of
//! its code. A path is followed through the re-exports of the modules it names to the file that
//! defines its item, so a module's facade (`mod.rs` re-exporting its files) hides no cycle.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// One source file: its module path (empty for the crate root) and its lines.
struct File {
    path: PathBuf,
    module: Vec<String>,
    lines: Vec<String>,
}

/// A `use` declaration, its braces expanded: the module it was written in (an inline module
/// included), whether it re-exports (`pub`, `pub(crate)`, `pub(super)`), and each path.
struct Use {
    file: usize,
    scope: Vec<String>,
    reexport: bool,
    /// Each path and the name it binds.
    paths: Vec<(Vec<String>, String)>,
}

struct Crate {
    files: Vec<File>,
    /// Module path -> the file that is that module.
    modules: BTreeMap<Vec<String>, usize>,
    uses: Vec<Use>,
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `line` without a trailing `//` comment (outside string literals, roughly: the crate's code is
/// formatted, and no `use` line holds a string).
fn code(line: &str) -> &str {
    let trimmed = line.trim_start();
    if trimmed.starts_with("//") {
        return "";
    }
    match line.find("//") {
        Some(at) if !line[..at].contains('"') => &line[..at],
        _ => line,
    }
}

/// The `mod name;` declarations of a file, with their `#[path = "..."]` if any.
fn declared_modules(lines: &[String]) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut path_attr = None;
    for line in lines {
        let line = code(line).trim();
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            path_attr = rest.strip_suffix("\"]").map(str::to_owned);
            continue;
        }
        if line.starts_with("#[") {
            continue;
        }
        let decl = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub(super) "))
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')) {
            found.push((name.trim().to_owned(), path_attr.take()));
        }
        path_attr = None;
    }
    found
}

/// Splits `a::{b, c::{d as e, f}}` into its paths, each a list of segments and the name it
/// binds (its last segment, or its alias).
fn expand(body: &str) -> Vec<(Vec<String>, String)> {
    let mut flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    for token in ["::", "{", "}", ","] {
        flat = flat
            .replace(&format!(" {token}"), token)
            .replace(&format!("{token} "), token);
    }
    expand_flat(&flat)
}

fn expand_flat(body: &str) -> Vec<(Vec<String>, String)> {
    let Some(open) = body.find('{') else {
        let (path, alias) = match body.split_once(" as ") {
            Some((path, alias)) => (path, Some(alias)),
            None => (body, None),
        };
        let segments: Vec<String> = path.split("::").map(str::to_owned).collect();
        let name = alias.map_or_else(
            || segments.last().cloned().unwrap_or_default(),
            str::to_owned,
        );
        return vec![(segments, name)];
    };
    let prefix: Vec<String> = body[..open]
        .split("::")
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let inner = &body[open + 1..body.rfind('}').expect("a closing brace")];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (at, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut paths = Vec::new();
    for part in parts.into_iter().filter(|p| !p.is_empty()) {
        for (rest, name) in expand_flat(part) {
            let mut path = prefix.clone();
            path.extend(rest);
            // `a::{self}` binds `a`.
            if path.last().is_some_and(|s| s == "self") {
                path.pop();
            }
            let name = if name == "self" {
                path.last().cloned().unwrap_or_default()
            } else {
                name
            };
            paths.push((path, name));
        }
    }
    paths
}

impl Crate {
    fn read() -> Crate {
        let mut krate = Crate {
            files: Vec::new(),
            modules: BTreeMap::new(),
            uses: Vec::new(),
        };
        krate.add(src().join("lib.rs"), Vec::new());
        for index in 0..krate.files.len() {
            krate.read_uses(index);
        }
        krate
    }

    /// Adds the file of `module` and, recursively, the files of the modules it declares.
    fn add(&mut self, path: PathBuf, module: Vec<String>) {
        let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        let declared = declared_modules(&lines);
        let index = self.files.len();
        self.modules.insert(module.clone(), index);
        self.files.push(File {
            path: path.clone(),
            module: module.clone(),
            lines,
        });
        let is_dir_owner = module.is_empty() || path.ends_with("mod.rs");
        let dir = if is_dir_owner {
            path.parent().expect("a directory").to_path_buf()
        } else {
            path.with_extension("")
        };
        for (name, path_attr) in declared {
            let child = match path_attr {
                Some(file) => path.parent().expect("a directory").join(file),
                None if dir.join(format!("{name}.rs")).exists() => dir.join(format!("{name}.rs")),
                None => dir.join(&name).join("mod.rs"),
            };
            let mut child_module = module.clone();
            child_module.push(name);
            self.add(child, child_module);
        }
    }

    /// The `use` declarations of a file, each in the module it is written in (inline modules
    /// such as `mod tests { ... }` found by their formatted closing brace).
    fn read_uses(&mut self, index: usize) {
        let file = &self.files[index];
        let mut scopes: Vec<(usize, Vec<String>)> = vec![(usize::MAX, file.module.clone())];
        let mut pending: Option<(bool, String)> = None;
        let mut uses = Vec::new();
        for line in &file.lines {
            let indent = line.len() - line.trim_start().len();
            let text = code(line).trim();
            if let Some((reexport, mut body)) = pending.take() {
                body.push_str(text);
                match body.strip_suffix(';') {
                    Some(done) => uses.push((
                        scopes.last().expect("a scope").1.clone(),
                        reexport,
                        done.to_owned(),
                    )),
                    None => pending = Some((reexport, body)),
                }
                continue;
            }
            if text == "}" && scopes.last().is_some_and(|(at, _)| *at == indent) {
                scopes.pop();
                continue;
            }
            let decl = text
                .strip_prefix("pub(crate) ")
                .or_else(|| text.strip_prefix("pub(super) "))
                .or_else(|| text.strip_prefix("pub "));
            let reexport = decl.is_some();
            let decl = decl.unwrap_or(text);
            if let Some(name) = decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(" {")) {
                let mut module = scopes.last().expect("a scope").1.clone();
                module.push(name.to_owned());
                scopes.push((indent, module));
                continue;
            }
            if let Some(body) = decl.strip_prefix("use ") {
                match body.strip_suffix(';') {
                    Some(done) => uses.push((
                        scopes.last().expect("a scope").1.clone(),
                        reexport,
                        done.to_owned(),
                    )),
                    None => pending = Some((reexport, body.to_owned())),
                }
            }
        }
        for (scope, reexport, body) in uses {
            let paths = expand(&body);
            self.uses.push(Use {
                file: index,
                scope,
                reexport,
                paths,
            });
        }
    }

    /// `path` as written in `scope`, made absolute (crate-relative), or `None` for a path into
    /// another crate.
    fn absolute(&self, scope: &[String], path: &[String]) -> Option<Vec<String>> {
        let (first, rest) = path.split_first()?;
        match first.as_str() {
            "crate" => Some(rest.to_vec()),
            "self" => Some(scope.iter().chain(rest).cloned().collect()),
            "super" => {
                let mut base = scope.to_vec();
                base.pop();
                let mut rest = rest;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                Some(base.into_iter().chain(rest.iter().cloned()).collect())
            }
            _ => {
                // A child module of the scope (`use quota::Quota` in `config/mod.rs`).
                let mut child = scope.to_vec();
                child.push(first.clone());
                self.modules
                    .contains_key(&child)
                    .then(|| child.into_iter().chain(rest.iter().cloned()).collect())
            }
        }
    }

    /// The re-exports of `module`'s file (its own scope only): name -> absolute path.
    fn reexports(&self, module: &[String]) -> BTreeMap<String, Vec<String>> {
        let mut found = BTreeMap::new();
        let Some(&file) = self.modules.get(module) else {
            return found;
        };
        for u in self
            .uses
            .iter()
            .filter(|u| u.file == file && u.reexport && u.scope == module)
        {
            for (path, name) in &u.paths {
                if let Some(absolute) = self.absolute(module, path) {
                    found.insert(name.clone(), absolute);
                }
            }
        }
        found
    }

    /// The file that defines the item at `path` (absolute), following re-exports; the file of
    /// the longest module prefix when the item is not re-exported there.
    fn defining_file(&self, path: &[String], depth: usize) -> Option<usize> {
        let split = (0..=path.len())
            .rev()
            .find(|&n| self.modules.contains_key(&path[..n]))?;
        let (module, rest) = path.split_at(split);
        let file = self.modules[module];
        let Some(name) = rest.first() else {
            return Some(file);
        };
        if depth < 8
            && let Some(target) = self.reexports(module).get(name)
            && target != path
        {
            return self.defining_file(target, depth + 1).or(Some(file));
        }
        Some(file)
    }

    fn name(&self, file: usize) -> String {
        self.files[file]
            .path
            .strip_prefix(src())
            .expect("under src")
            .display()
            .to_string()
    }
}

/// The names the crate root re-exports (what `use crate::Name` would go through).
fn root_reexports(krate: &Crate) -> BTreeSet<String> {
    krate.reexports(&[]).into_keys().collect()
}

#[test]
fn no_module_imports_through_the_crate_root() {
    let krate = Crate::read();
    let root = root_reexports(&krate);
    let mut problems = Vec::new();
    for u in krate
        .uses
        .iter()
        .filter(|u| u.file != krate.modules[&Vec::new()])
    {
        for (path, _) in &u.paths {
            if let Some(absolute) = krate.absolute(&u.scope, path)
                && let Some(first) = absolute.first()
                && !krate.modules.contains_key(std::slice::from_ref(first))
                && root.contains(first)
            {
                problems.push(format!("{}: `use {}`", krate.name(u.file), path.join("::")));
            }
        }
    }
    // Paths written in code (`crate::Name::new()`), doc comments left out.
    for (index, file) in krate
        .files
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.module.is_empty())
    {
        for line in &file.lines {
            let text = code(line);
            for (at, _) in text.match_indices("crate::") {
                if text[..at].ends_with('$')
                    || text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_')
                {
                    continue;
                }
                let name: String = text[at + 7..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !krate.modules.contains_key(std::slice::from_ref(&name)) && root.contains(&name)
                {
                    problems.push(format!(
                        "{}: `crate::{name}` in `{}`",
                        krate.name(index),
                        text.trim()
                    ));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "import from the module that defines the item (`use crate::config::RetryConfig`), not \
         through the crate root's re-exports:\n  {}",
        problems.join("\n  ")
    );
}

#[test]
fn no_file_imports_a_file_that_imports_it() {
    let krate = Crate::read();
    let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    for u in krate.uses.iter().filter(|u| !u.reexport) {
        for (path, _) in &u.paths {
            let Some(absolute) = krate.absolute(&u.scope, path) else {
                continue;
            };
            if let Some(target) = krate.defining_file(&absolute, 0)
                && target != u.file
            {
                edges.entry(u.file).or_default().insert(target);
            }
        }
    }
    let mut cycles = Vec::new();
    for (&a, targets) in &edges {
        for &b in targets {
            if a < b && edges.get(&b).is_some_and(|back| back.contains(&a)) {
                cycles.push(format!("{} <-> {}", krate.name(a), krate.name(b)));
            }
        }
    }
    assert!(
        cycles.is_empty(),
        "files that import each other (move the shared item down, or the importing code to \
         where it belongs):\n  {}",
        cycles.join("\n  ")
    );
}

/// The parser itself: braces, `self`, `super` and child modules resolve; a facade's re-export
/// leads to the defining file.
#[test]
fn the_reader_finds_the_crate_and_follows_re_exports() {
    let expanded: Vec<(String, String)> = expand("super::{a, b::{C as E, D}}")
        .into_iter()
        .map(|(path, name)| (path.join("::"), name))
        .collect();
    let pair = |path: &str, name: &str| (path.to_owned(), name.to_owned());
    assert_eq!(
        expanded,
        [
            pair("super::a", "a"),
            pair("super::b::C", "E"),
            pair("super::b::D", "D")
        ]
    );
    let krate = Crate::read();
    assert!(krate.files.len() > 40, "{} files", krate.files.len());
    assert!(krate.modules.contains_key(&vec!["config".to_owned()]));
    let defined = krate
        .defining_file(&["config".into(), "ConfigError".into()], 0)
        .map(|file| krate.name(file));
    assert_eq!(defined.as_deref(), Some("config/error.rs"));
}
